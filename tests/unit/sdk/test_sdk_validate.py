"""Local validation is the webhook's: the same functions, so the same messages.

Each case is sent two ways: through the SDK (`jobflow_sdk.validate`) and through the webhook's
admission function (`admit_job_flows`, what the HTTPS server answers). The denial message is the
SDK's messages joined with "; ". The cases are the webhook tests' DAG table, the failure-aware and
lifecycle cases, and the params/matrix table of tests/unit/validation (read from that module, so a
case added there is checked here too).
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any

import pytest

from jobflow_controller.webhook.admission import admit_job_flows
from jobflow_sdk import JobFlow
from jobflow_sdk.validate import admission_problems, job_flow_problems


def _params_table() -> list[tuple[str, dict[str, Any], str]]:
    path = Path(__file__).resolve().parents[1] / "validation" / "test_validation_params.py"
    spec = importlib.util.spec_from_file_location("validation_params_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: list[tuple[str, dict[str, Any], str]] = module.REFUSED
    return table


def obj(*flows: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "jobflow", "namespace": "default"},
        "spec": {"jobRetainPolicy": "retain", "flows": list(flows), **spec},
    }


def flow(name: str, *targets: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **({"dependsOn": {"targets": list(targets)}} if targets else {}), **fields}


def webhook_message(job_flow: dict[str, Any]) -> str | None:
    metadata = job_flow.get("metadata") or {}
    request = {
        "uid": str(uuid.uuid4()),
        "operation": "CREATE",
        "resource": {"group": "flow.volcano.sh", "version": "v1alpha1", "resource": "jobflows"},
        "name": metadata.get("name", ""),
        "namespace": metadata.get("namespace", "default"),
        "object": job_flow,
    }
    response = admit_job_flows(request)
    return None if response["allowed"] else str(response["status"]["message"])


CASES = [
    pytest.param(obj(flow("a"), flow("b", "a"), flow("c", "a", "b")), id="valid-dag"),
    pytest.param(obj(flow("a"), flow("a")), id="duplicate-name"),
    pytest.param(obj(flow("b", "c")), id="unknown-target"),
    pytest.param(obj(flow("a", "b"), flow("b", "a")), id="cycle"),
    pytest.param(obj(flow("a", "b"), flow("b", "a"), flow("c", "x")), id="cycle-and-unknown"),
    pytest.param(obj(flow("a"), flow("b", "a", dependsOn={"targets": ["a"], "rule": "AnyFailed"})), id="rule"),
    pytest.param(obj(flow("a"), failurePolicy="RunToCompletion", **{"finally": [{"name": "a"}]}), id="finally-repeat"),
    pytest.param(obj(flow("Not_A_Name")), id="flow-name"),
    pytest.param(obj(flow("a", retry={"maxRetries": 3, "backoff": "soon"})), id="retry-backoff"),
    pytest.param(obj(flow("a"), activeDeadlineSeconds=-1), id="deadline"),
    pytest.param(obj(*[flow(f"f{i}") for i in range(501)]), id="too-many-flows"),
    pytest.param(obj(flow("a", "a")), id="self-dependency"),
] + [pytest.param(case, id=f"params-{name}") for name, case, _ in _params_table()]


@pytest.mark.parametrize("job_flow", CASES)
def test_the_sdk_says_what_the_webhook_says(job_flow: dict[str, Any]) -> None:
    problems = admission_problems(job_flow)
    assert ("; ".join(problems) if problems else None) == webhook_message(job_flow)


@pytest.mark.parametrize(("name", "job_flow", "message"), _params_table(), ids=[c[0] for c in _params_table()])
def test_the_params_tables_messages_come_out_of_the_sdk(name: str, job_flow: dict[str, Any], message: str) -> None:
    assert message in admission_problems(job_flow)


def test_a_notebook_user_sees_an_unknown_target_before_submitting() -> None:
    with JobFlow("p") as jf:
        jf.flow("b", after="c")
    assert jf.validate() == ["jobflow Flow is not DAG: vertex is not defined: c"]


def test_a_schema_problem_comes_first_with_its_path() -> None:
    bad = obj(flow("a", matrix={"params": [{"name": "x", "values": ["1"]}], "maxParallel": "2"}))
    assert job_flow_problems(bad) == ['spec.flows[0].matrix.maxParallel: Input should be a valid integer (got "2")']


def test_a_valid_jobflow_has_no_problems() -> None:
    assert job_flow_problems(obj(flow("a"), flow("b", "a"))) == []
