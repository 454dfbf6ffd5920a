"""The CRD schemas, checked in Python: wrong types, unknown and missing fields, each with its path.

The models (jobflow_sdk/models, generated from manifests/crds/) are validated in pydantic's strict
JSON mode, so `"5"` is no integer and `"Alldone"` no rule, as the API server's structural schema has
it. pydantic is the `sdk` extra: it is imported only when a check runs.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_sdk.errors import SchemaError

#: kind -> the generated root model's module and class.
_MODELS = {
    "JobFlow": ("jobflow_sdk.models._jobflow", "JobFlow"),
    "JobTemplate": ("jobflow_sdk.models._jobtemplate", "JobTemplate"),
    "CronJobFlow": ("jobflow_sdk.models._cronjobflow", "CronJobFlow"),
}
INSTALL_HINT = "the SDK's schema checks need pydantic: pip install 'jobflow-controller[sdk]'"


def model_class(kind: str) -> Any:
    """The generated pydantic model of `kind`."""
    module_name, class_name = _MODELS[kind]
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return getattr(module, class_name)


def field_path(loc: Sequence[int | str], document: Any) -> str:
    """pydantic's error location as kubectl prints a field path (`spec.flows[0].name`).

    A union's error location also names the union member tried (`int`, `str`, a model's name):
    only the parts that step into the document are kept (and the last, the field that is missing
    or unknown)."""
    path, current = "", document
    for position, part in enumerate(loc):
        last = position == len(loc) - 1
        if isinstance(part, int) and isinstance(current, list) and 0 <= part < len(current):
            path, current = f"{path}[{part}]", current[part]
        elif isinstance(part, str) and isinstance(current, Mapping) and (part in current or last):
            path, current = (f"{path}.{part}" if path else part), current.get(part)
    return path or "<root>"


def schema_problems(obj: Mapping[str, Any], kind: str) -> list[str]:
    """Every way `obj` misses `kind`'s schema, as `path: message (got value)`; [] when it fits."""
    from pydantic import ValidationError

    document = json.loads(json.dumps(obj))
    try:
        model_class(kind).model_validate_json(json.dumps(document), strict=True)
    except ValidationError as err:
        problems: list[str] = []
        for error in err.errors(include_url=False):
            line = f"{field_path(error['loc'], document)}: {error['msg']}"
            if error["type"] not in ("missing", "extra_forbidden"):
                line += f" (got {json.dumps(error.get('input'))[:80]})"
            if line not in problems:
                problems.append(line)
        return problems
    return []


def require_schema(obj: Mapping[str, Any], kind: str) -> None:
    """Raise `SchemaError` naming every problem, unless `obj` fits `kind`'s schema."""
    problems = schema_problems(obj, kind)
    if problems:
        raise SchemaError(kind, str((obj.get("metadata") or {}).get("name") or ""), problems)
