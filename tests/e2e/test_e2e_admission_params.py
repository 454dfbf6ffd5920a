"""Admission of `params`, `when` and `matrix` (docs/params.md) by a real kube-apiserver: schema, CEL rules, webhook.

* The webhook (a control plane of test_e2e_admission.py's with `manifests/crds`, no CEL rules): what
  needs the whole JobFlow (names unique and of their shape, 256 combinations, 500 Jobs counting every
  index, the last matrix Job's name, a matrix Job that is another flow's, a probe on a matrix flow).
* Our CRD's schema, before any webhook: the operator's enum, `maxParallel` at least 1, empty lists,
  and the bounds of issue 42 (a param value, a `when` input of at most 4096 characters, at most 16
  `when` expressions of at most 64 values).
* The CEL Component alone (the session's control plane): names unique and of their shape, and a
  matrix's product of list sizes at most 256 (issue 42: a 17 x 16 matrix refused, 16 x 16 taken).

The webhook set-ups are test_e2e_admission.py's, imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_e2e_admission import (  # noqa: F401 - fixtures used by name
    Cluster,
    case_id,
    crd_rule_refusal,
    created,
    flow,
    job_flow,
    labelled_namespace,
    session_registration,
    upstream_crd_cluster,
    upstream_crd_registration,
    webhook,
    webhook_namespace,
    webhook_refusal,
)

from informers.errors import ApiStatusError
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.controlplane import ControlPlane

Flows = list[dict[str, Any]]


def with_params(name: str, namespace: str, flows: Flows, params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    obj = job_flow(name, namespace, flows)
    if params is not None:
        obj["spec"]["params"] = params
    return obj


def webhook_set_up(request: pytest.FixtureRequest) -> tuple[Cluster, str]:
    """test_e2e_admission.py's control plane with `manifests/crds` and the webhook, and a namespace it serves."""
    cluster: Cluster = request.getfixturevalue("upstream_crd_cluster")
    return cluster, str(request.getfixturevalue("webhook_namespace"))


def matrix(*lists: tuple[str, list[str]], **extra: Any) -> dict[str, Any]:
    return {"params": [{"name": n, "values": v} for n, v in lists], **extra}


def values(n: int) -> list[str]:
    return [str(i) for i in range(n)]


ISSUE_EXAMPLE: Flows = [
    {"name": "prepare", "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full", "incremental"]}]},
    {
        "name": "train",
        "dependsOn": {"targets": ["prepare"]},
        "matrix": matrix(("lr", ["0.1", "0.01"]), ("seed", ["1", "2", "3"]), maxParallel=2),
    },
    {"name": "report", "dependsOn": {"targets": ["train"]}},
]
ISSUE_PARAMS = [{"name": "dataset", "value": "s3://bucket/2026-12-05"}, {"name": "mode", "value": "full"}]

WEBHOOK_REFUSED: dict[str, tuple[Flows, list[dict[str, Any]] | None, str]] = {
    "repeated param names": (
        [flow("a")],
        [{"name": "mode", "value": "a"}, {"name": "mode", "value": "b"}],
        'jobflow params[1].name: "mode" is already used by params[0]',
    ),
    "a param name of the wrong shape": (
        [flow("a")],
        [{"name": "my.mode", "value": "a"}],
        'jobflow params[0].name: must match [A-Za-z_][A-Za-z0-9_-]*, got "my.mode"',
    ),
    "repeated matrix names": (
        [{"name": "a", "matrix": matrix(("x", ["1"]), ("x", ["2"]))}],
        None,
        'jobflow Flow "a": matrix.params[1].name: "x" is already used by matrix.params[0]',
    ),
    "272 combinations": (
        [{"name": "a", "matrix": matrix(("rows", values(16)), ("cols", values(17)))}],
        None,
        'jobflow Flow "a": matrix: has 272 combinations, more than the 256 allowed',
    ),
    "600 Jobs counting every index": (
        [{"name": f"f{i}", "matrix": matrix(("x", values(200)))} for i in range(3)],
        None,
        "jobflow has 600 Jobs counting every matrix index, more than the 500 allowed",
    ),
    "a matrix Job that is another flow's": (
        [{"name": "a", "matrix": matrix(("x", ["1", "2"]))}, flow("a-1")],
        None,
        'jobflow Flow "a": matrix: its Job "<jobflow>-a-1" would be the Job of the flow or finally entry "a-1"',
    ),
}


@pytest.mark.parametrize(
    ("flows", "params", "message"), list(WEBHOOK_REFUSED.values()), ids=[case_id(n) for n in WEBHOOK_REFUSED]
)
def test_webhook_refuses_a_bad_parameter_field_with_its_message(
    request: pytest.FixtureRequest, tmp_path: Path, flows: Flows, params: list[dict[str, Any]] | None, message: str
) -> None:
    cluster, namespace = webhook_set_up(request)
    applied = cluster.apply(with_params("jobflow", namespace, flows, params), tmp_path)
    assert applied.returncode == 1
    assert applied.stderr == webhook_refusal(applied, message)


def test_webhook_admits_the_issue_example(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    cluster, namespace = webhook_set_up(request)
    applied = cluster.apply(with_params("tune", namespace, ISSUE_EXAMPLE, ISSUE_PARAMS), tmp_path)
    assert created(applied, "tune"), applied.stderr


SCHEMA_REFUSED: dict[str, tuple[Flows, str]] = {
    "an unknown operator": (
        [{"name": "a", "when": [{"input": "x", "operator": "eq", "values": ["x"]}]}],
        'spec.flows[0].when[0].operator: Unsupported value: "eq": supported values: "in", "notin"',
    ),
    "maxParallel 0": (
        [{"name": "a", "matrix": matrix(("x", ["1"]), maxParallel=0)}],
        "spec.flows[0].matrix.maxParallel: Invalid value: 0: spec.flows[0].matrix.maxParallel in body should be"
        " greater than or equal to 1",
    ),
    "a when input of 4097 characters": (
        [{"name": "a", "when": [{"input": "x" * 4097, "operator": "in", "values": ["x"]}]}],
        "spec.flows[0].when[0].input: Too long: may not be more than 4096 bytes",
    ),
    "17 when expressions": (
        [{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["x"]}] * 17}],
        "spec.flows[0].when: Too many: 17: must have at most 16 items",
    ),
    "65 when values": (
        [{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["x"] * 65}]}],
        "spec.flows[0].when[0].values: Too many: 65: must have at most 64 items",
    ),
    "a matrix value of 4097 characters": (
        [{"name": "a", "matrix": matrix(("x", ["1", "y" * 4097]))}],
        "spec.flows[0].matrix.params[0].values[1]: Too long: may not be more than 4096 bytes",
    ),
}


@pytest.mark.parametrize(("flows", "message"), list(SCHEMA_REFUSED.values()), ids=[case_id(n) for n in SCHEMA_REFUSED])
def test_our_crd_refuses_a_bad_parameter_value_before_the_webhook(
    request: pytest.FixtureRequest, flows: Flows, message: str
) -> None:
    cluster, namespace = webhook_set_up(request)
    with pytest.raises(ApiStatusError) as refused:
        cluster.clientset.job_flows(namespace).create(with_params("bad", namespace, flows), dry_run=True)
    assert refused.value.message == f'JobFlow.flow.volcano.sh "bad" is invalid: {message}'


CEL_REFUSED: dict[str, tuple[Flows, list[dict[str, Any]] | None, str, str]] = {
    "repeated param names": (
        [flow("a")],
        [{"name": "mode", "value": "a"}, {"name": "mode", "value": "b"}],
        "spec.params",
        "jobflow params names must be unique",
    ),
    "a param name of the wrong shape": (
        [flow("a")],
        [{"name": "1mode", "value": "a"}],
        "spec.params[0]",
        "jobflow params name must match [A-Za-z_][A-Za-z0-9_-]*",
    ),
    "repeated matrix names": (
        [{"name": "a", "matrix": matrix(("x", ["1"]), ("x", ["2"]))}],
        None,
        "spec.flows[0].matrix.params",
        "jobflow Flow matrix.params names must be unique",
    ),
    "a 17 x 16 matrix": (
        [flow("a"), {"name": "b", "matrix": matrix(("rows", values(17)), ("cols", values(16)))}],
        None,
        "spec.flows[1].matrix",
        "jobflow Flow matrix has 272 combinations (the product of its params list sizes), more than the 256 allowed",
    ),
    "16 lists of 2 values": (
        [{"name": "a", "matrix": matrix(*((f"p{i}", values(2)) for i in range(16)))}],
        None,
        "spec.flows[0].matrix",
        "jobflow Flow matrix has 65536 combinations (the product of its params list sizes), more than the 256 allowed",
    ),
    "16 lists of 256 values": (
        [{"name": "a", "matrix": matrix(*((f"p{i}", values(256)) for i in range(16)))}],
        None,
        "spec.flows[0].matrix",
        "jobflow Flow matrix has more than 1099511627776 combinations (the product of its params list sizes),"
        " more than the 256 allowed",
    ),
}


@pytest.mark.parametrize(
    ("flows", "params", "field", "message"), list(CEL_REFUSED.values()), ids=[case_id(n) for n in CEL_REFUSED]
)
def test_crd_rule_refuses_a_bad_parameter_name_without_the_webhook(
    control_plane: ControlPlane,
    clientset: Clientset,
    namespace: str,
    tmp_path: Path,
    flows: Flows,
    params: list[dict[str, Any]] | None,
    field: str,
    message: str,
) -> None:
    applied = Cluster(control_plane.kubeconfig_path, clientset).apply(
        with_params("jobflow", namespace, flows, params), tmp_path
    )
    assert applied.returncode == 1
    assert applied.stderr == crd_rule_refusal("jobflow", field, message)


def test_crd_rules_admit_the_issue_example_and_keep_every_field(
    control_plane: ControlPlane, clientset: Clientset, namespace: str, tmp_path: Path
) -> None:
    applied = Cluster(control_plane.kubeconfig_path, clientset).apply(
        with_params("tune", namespace, ISSUE_EXAMPLE, ISSUE_PARAMS), tmp_path
    )
    assert created(applied, "tune"), applied.stderr
    stored = clientset.job_flows(namespace).get("tune")["spec"]
    assert stored["params"] == ISSUE_PARAMS
    assert [f.get("when") for f in stored["flows"]] == [f.get("when") for f in ISSUE_EXAMPLE]
    assert stored["flows"][1]["matrix"] == ISSUE_EXAMPLE[1]["matrix"]


@pytest.mark.parametrize(
    "lists",
    [[("rows", 16), ("cols", 16)], [("one", 256)], [(f"p{i}", 2) for i in range(8)] + [(f"q{i}", 1) for i in range(8)]],
    ids=["16 x 16", "256", "2^8 x 1^8"],
)
def test_crd_rule_admits_a_matrix_of_256_combinations(
    clientset: Clientset, namespace: str, lists: list[tuple[str, int]]
) -> None:
    flows = [{"name": "a", "matrix": matrix(*((name, values(size)) for name, size in lists))}]
    created = clientset.job_flows(namespace).create(with_params("square", namespace, flows), dry_run=True)
    assert created["spec"]["flows"][0]["matrix"] == flows[0]["matrix"]
