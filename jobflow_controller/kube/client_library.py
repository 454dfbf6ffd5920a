"""The kubernetes client library, imported without what this controller never calls (11 MiB of RSS).

Why: importing `kubernetes.client` runs `kubernetes/__init__.py`, which imports every subpackage
(dynamic, stream and its websocket client, watch, utils, leaderelection, informer); and the two
modules the controller uses import, at their top, what only paths it never takes need:
`config/kube_config.py` imports requests, oauthlib and requests_oauthlib (about 180 modules) for
the OIDC token refresh alone, and `client/api_client.py` imports pydantic for `SecretStr` (an
isinstance check in `sanitize_for_serialization`) and for `ApiResponse` (built only by
`response_deserialize`, which the controller does not call), python-dateutil for deserializing
models' dates and multiprocessing.pool for `async_req` (neither used here). Measured with the
runtime set alone (`make runtime-venv`): importing `jobflow_controller.manager.server` costs 42.1
MiB of RSS and 739 modules with the whole library, 26.9 MiB and 463 modules with this.

What this does, once, before anything else imports `kubernetes`:

* the `kubernetes` package is put in `sys.modules` without running its `__init__`, with its literal
  constants (`__version__`, read by `kubernetes.dynamic`); its submodules import on demand, as
  `from kubernetes import client` does;
* while `kubernetes.client.api_client` and `kubernetes.config` import, `pydantic`,
  `kubernetes.client.api_response`, `requests_oauthlib`, `oauthlib`, `dateutil.parser` and
  `multiprocessing.pool` are stand-ins (where not imported already), removed again
  at once: the names those modules bind are `deferred` classes that import the real class on first
  use (a call, an attribute) and forward to it; a subscript is the stand-in itself (at import time
  it is an annotation); an isinstance check against a class whose module was never imported is
  False without importing it (no instance can exist); the `oauthlib` stand-in imports
  `oauthlib.<name>` on attribute access.

So every path behaves as with the whole library, an OIDC refresh included (it imports requests
then). Whatever imported `kubernetes` first (a test, a tool) wins: then this does nothing.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _DeferredMeta(type):
    """Forwards calls, subscripts, isinstance checks and attributes to the real class."""

    _module: str
    _name: str

    def real(cls) -> Any:
        return getattr(importlib.import_module(cls._module), cls._name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getitem__(cls, item: Any) -> Any:
        # A subscript at import time is an annotation (api_client's `ApiResponse[T]`): no import.
        return cls

    def __instancecheck__(cls, obj: Any) -> bool:
        # No instance of a class whose module was never imported can exist: no import for a no.
        return cls._module in sys.modules and isinstance(obj, cls.real())

    def __subclasscheck__(cls, sub: Any) -> bool:
        return cls._module in sys.modules and issubclass(sub, cls.real())

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real(), name)


def deferred(module: str, name: str) -> type:
    """A stand-in for `module.name`, importing the real one when first used."""
    return _DeferredMeta(name, (), {"_module": module, "_name": name})


class _DeferredPackage(types.ModuleType):
    """A stand-in package whose attribute `x` is the real `package.x` submodule, imported when read."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return importlib.import_module(f"{self.__name__}.{name}")


@contextmanager
def _stand_ins(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """`modules` in sys.modules for the block only, where no real one is imported already."""
    placed = [name for name in modules if name not in sys.modules]
    for name in placed:
        sys.modules[name] = modules[name]
    try:
        yield
    finally:
        for name in placed:
            if sys.modules.get(name) is modules[name]:
                del sys.modules[name]


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def _constants(path: str | None) -> dict[str, Any]:
    """The literal assignments of a module's top (the package's `__version__`, `__project__`)."""
    if path is None:
        return {}
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def import_lean() -> None:
    """Import `kubernetes.client` and `kubernetes.config` the lean way, unless `kubernetes` is in."""
    if "kubernetes" in sys.modules:
        return
    spec = importlib.util.find_spec("kubernetes")
    if spec is None:
        return  # the import below says what is missing
    package = importlib.util.module_from_spec(spec)  # __path__ set, __init__ not run
    package.__dict__.update(_constants(spec.origin))
    sys.modules["kubernetes"] = package
    response = "kubernetes.client.api_response"
    stand_ins = {
        "pydantic": _module("pydantic", SecretStr=deferred("pydantic", "SecretStr")),
        response: _module(response, ApiResponse=deferred(response, "ApiResponse"), T=Any),
        "requests_oauthlib": _module("requests_oauthlib", OAuth2Session=deferred("requests_oauthlib", "OAuth2Session")),
        "oauthlib": _DeferredPackage("oauthlib"),
        "oauthlib.oauth2": _module("oauthlib.oauth2"),
        # api_client's date parsing (model deserialization) and its async_req thread pool.
        "dateutil": _module("dateutil", __path__=[]),
        "dateutil.parser": _module("dateutil.parser", parse=deferred("dateutil.parser", "parse")),
        "multiprocessing.pool": _module(
            "multiprocessing.pool", ThreadPool=deferred("multiprocessing.pool", "ThreadPool")
        ),
    }
    try:
        with _stand_ins(stand_ins):
            importlib.import_module("kubernetes.client.api_client")
            importlib.import_module("kubernetes.config")
    except BaseException:
        for name in [m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes.")]:
            del sys.modules[name]
        raise


import_lean()

from kubernetes import client, config  # noqa: E402 - after the lean import above
from kubernetes.client.api_client import ApiClient  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402
from kubernetes.config.config_exception import ConfigException  # noqa: E402

__all__ = ["ApiClient", "ApiException", "ConfigException", "client", "config", "deferred", "import_lean"]
