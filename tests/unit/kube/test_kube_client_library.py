"""The kubernetes client library imported lean (kube/client_library.py): what the controller never
calls is not imported, and every path it skipped still works, importing what it needs then."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from jobflow_controller.kube.client_library import deferred

#: Run in a fresh interpreter: nothing may have imported `kubernetes` before.
LEAN_RUN = textwrap.dedent(
    """
    import sys
    import jobflow_controller.manager.server  # everything a default run imports
    from jobflow_controller.kube.client_library import ApiClient, client, config

    never = ("requests", "oauthlib", "requests_oauthlib", "pydantic", "websocket", "kubernetes.dynamic",
             "kubernetes.stream", "kubernetes.client.api_response", "dateutil", "multiprocessing.pool")
    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in never or m in never)
    assert not loaded, loaded

    # The skipped paths still work, importing the real modules when first used.
    import pydantic
    api = ApiClient(client.Configuration())
    assert api.sanitize_for_serialization({"s": pydantic.SecretStr("x")}) == {"s": "x"}

    import datetime
    parsed = api._ApiClient__deserialize_datetime("2024-01-01T00:00:00Z")
    assert parsed == datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    from multiprocessing.pool import ThreadPool
    assert isinstance(api.pool, ThreadPool)
    api.close()

    kube_config = sys.modules["kubernetes.config.kube_config"]
    from oauthlib.oauth2.rfc6749.errors import InvalidClientIdError
    assert kube_config.oauthlib.oauth2.rfc6749.errors.InvalidClientIdError is InvalidClientIdError
    session = kube_config.OAuth2Session(client_id="c")
    from requests_oauthlib import OAuth2Session
    assert isinstance(session, OAuth2Session)

    class Raw:
        status, reason, data = 200, "OK", b'{"a": 1}'
        headers = {"content-type": "application/json"}
        def getheaders(self):
            return self.headers
        def getheader(self, name, default=None):
            return self.headers.get(name, default)
    response = api.response_deserialize(Raw(), {"200": "object"})
    from kubernetes.client.api_response import ApiResponse
    assert isinstance(response, ApiResponse) and response.data == {"a": 1}

    # A module that imports the whole package later gets it.
    import kubernetes.watch, kubernetes.dynamic
    assert config.load_kube_config is sys.modules["kubernetes.config"].load_kube_config
    print("ok")
    """
)


def test_a_default_run_imports_none_of_the_skipped_modules_and_every_skipped_path_still_works() -> None:
    result = subprocess.run([sys.executable, "-c", LEAN_RUN], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


def test_a_deferred_class_answers_isinstance_without_importing_a_module_never_imported() -> None:
    stand_in = deferred("a_module_that_does_not_exist", "Thing")
    assert not isinstance(object(), stand_in)
    assert not issubclass(int, stand_in)
    assert stand_in[int] is stand_in
    with pytest.raises(ModuleNotFoundError):
        stand_in()


@pytest.mark.parametrize(
    ("module", "name", "value", "expected"),
    [
        ("fractions", "Fraction", __import__("fractions").Fraction(1, 2), True),
        ("fractions", "Fraction", 0.5, False),
        ("decimal", "Decimal", __import__("decimal").Decimal("1"), True),
    ],
)
def test_a_deferred_class_forwards_to_the_real_one_once_its_module_is_imported(
    module: str, name: str, value: object, expected: bool
) -> None:
    stand_in = deferred(module, name)
    assert isinstance(value, stand_in) is expected
    real = getattr(__import__(module), name)
    assert type(stand_in("1")) is real
    assert stand_in.__name__ == name
