"""Admission of the lifecycle fields (docs/lifecycle.md) by a real kube-apiserver: schema, CEL rule, webhook.

* Our CRD's schema (every set-up): negative deadlines and TTL, a non-boolean ``suspend`` and an unknown
  ``shutdown`` are refused by the API server itself, before any webhook; the fields are kept, not pruned.
* The Component's transition rule (the session's control plane): ``spec.shutdown`` changed back is
  refused on UPDATE; "" -> Stop -> Terminate goes through.
* The webhook (on the session's control plane, for labelled namespaces): a malformed
  ``flow.volcano.sh/retry-request``, which no schema sees, written with plain ``kubectl annotate``.
* The webhook alone (a control plane of this module's own with ``manifests/crds``, no CEL rules):
  ``spec.shutdown`` changed back is refused with the webhook's message.

The webhook set-ups are test_e2e_admission.py's, imported.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_e2e_admission import (  # noqa: F401 - fixtures used by name
    WEBHOOK_NAME,
    Cluster,
    flow,
    job_flow,
    labelled_namespace,
    session_registration,
    upstream_crd_cluster,
    upstream_crd_registration,
    webhook,
    webhook_namespace,
)

from informers.errors import ApiStatusError
from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.kubectl import kubectl_path

TRANSITION_MESSAGE = (
    'spec.shutdown may only go from "" to Stop or Terminate, or from Stop to Terminate; it cannot be undone'
)


def pipeline(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    obj = job_flow(name, namespace, [flow("prep"), {**flow("train", "prep"), "activeDeadlineSeconds": 60}])
    obj["spec"].update(spec)
    return obj


def refusal(call: Any) -> str:
    with pytest.raises(ApiStatusError) as caught:
        call()
    return caught.value.message


# --- our CRD's schema --------------------------------------------------------------------------------------


def test_the_lifecycle_fields_are_stored_as_given(clientset: Clientset, namespace: str) -> None:
    spec = {"suspend": True, "shutdown": "Stop", "activeDeadlineSeconds": 0, "ttlSecondsAfterFinished": 600}
    clientset.job_flows(namespace).create(pipeline("kept", namespace, **spec))
    stored = clientset.job_flows(namespace).get("kept")["spec"]
    assert {key: stored[key] for key in spec} == spec
    assert stored["flows"][1]["activeDeadlineSeconds"] == 60


@pytest.mark.parametrize(
    ("spec", "flow_deadline", "expected"),
    [
        (
            {"activeDeadlineSeconds": -1},
            60,
            "spec.activeDeadlineSeconds: Invalid value: -1: spec.activeDeadlineSeconds in body should be greater"
            " than or equal to 0",
        ),
        (
            {"ttlSecondsAfterFinished": -5},
            60,
            "spec.ttlSecondsAfterFinished: Invalid value: -5: spec.ttlSecondsAfterFinished in body should be"
            " greater than or equal to 0",
        ),
        (
            {},
            -2,
            "spec.flows[1].activeDeadlineSeconds: Invalid value: -2: spec.flows[1].activeDeadlineSeconds in body"
            " should be greater than or equal to 0",
        ),
        (
            {"shutdown": "Pause"},
            60,
            'spec.shutdown: Unsupported value: "Pause": supported values: "", "Stop", "Terminate"',
        ),
        (
            {"suspend": "yes"},
            60,
            'spec.suspend: Invalid value: "string": spec.suspend in body must be of type boolean: "string"',
        ),
    ],
    ids=["jobflow-deadline", "ttl", "flow-deadline", "shutdown", "suspend"],
)
def test_the_schema_refuses_bad_values_with_the_api_servers_message(
    clientset: Clientset, namespace: str, spec: dict[str, Any], flow_deadline: int, expected: str
) -> None:
    obj = pipeline("bad", namespace, **spec)
    obj["spec"]["flows"][1]["activeDeadlineSeconds"] = flow_deadline
    message = refusal(lambda: clientset.job_flows(namespace).create(obj))
    # With the Component's rules installed the API server adds that it skipped them: the first error is ours.
    assert message.startswith(f'JobFlow.flow.volcano.sh "bad" is invalid: {expected}') or message.startswith(
        f'JobFlow.flow.volcano.sh "bad" is invalid: [{expected}, '
    ), message


# --- the Component's transition rule -----------------------------------------------------------------------


def test_shutdown_goes_from_nothing_to_stop_to_terminate(clientset: Clientset, namespace: str) -> None:
    jobflows = clientset.job_flows(namespace)
    jobflows.create(pipeline("ended", namespace))
    jobflows.patch("ended", {"spec": {"shutdown": "Stop"}})
    jobflows.patch("ended", {"spec": {"shutdown": "Terminate", "suspend": True}})
    assert jobflows.get("ended")["spec"]["shutdown"] == "Terminate"


@pytest.mark.parametrize(
    ("first", "back"),
    [("Stop", ""), ("Terminate", "Stop"), ("Terminate", None)],
    ids=["stop-undone", "terminate-to-stop", "terminate-removed"],
)
def test_the_rule_refuses_shutdown_changed_back(
    clientset: Clientset, namespace: str, first: str, back: str | None
) -> None:
    jobflows = clientset.job_flows(namespace)
    jobflows.create(pipeline("oneway", namespace, shutdown=first))
    message = refusal(lambda: jobflows.patch("oneway", {"spec": {"shutdown": back}}))
    assert message == f'JobFlow.flow.volcano.sh "oneway" is invalid: spec: Invalid value: {TRANSITION_MESSAGE}'
    assert jobflows.get("oneway")["spec"]["shutdown"] == first


@pytest.fixture
def session_webhook_namespace(request: pytest.FixtureRequest) -> str:
    """A namespace of the session's control plane where the webhook applies (test_e2e_admission's)."""
    namespace: str = request.getfixturevalue("labelled_namespace")
    return namespace


# --- the webhook -----------------------------------------------------------------------------------------------


def annotate(kubeconfig: Path, namespace: str, name: str, value: str) -> subprocess.CompletedProcess[str]:
    """Plain ``kubectl annotate --overwrite``, as docs/lifecycle.md shows it."""
    return subprocess.run(
        [
            kubectl_path(),
            f"--kubeconfig={kubeconfig}",
            "annotate",
            "--overwrite",
            "-n",
            namespace,
            f"jobflow/{name}",
            f"{RETRY_REQUEST_ANNOTATION}={value}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("retry", f"annotation {RETRY_REQUEST_ANNOTATION}: not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            '{"flows":["train"]}',
            f"annotation {RETRY_REQUEST_ANNOTATION}.id: required,"
            " a non-empty string that differs from the last request's",
        ),
        (
            '{"id":"r1","flows":["tarin"]}',
            f'annotation {RETRY_REQUEST_ANNOTATION}.flows[0]: no flow of this JobFlow is named "tarin"',
        ),
    ],
    ids=["not-json", "no-id", "unknown-flow"],
)
def test_the_webhook_refuses_a_malformed_retry_request(
    kubeconfig: Path, clientset: Clientset, session_webhook_namespace: str, value: str, message: str
) -> None:
    clientset.job_flows(session_webhook_namespace).create(pipeline("asked", session_webhook_namespace))
    result = annotate(kubeconfig, session_webhook_namespace, "asked", value)
    assert result.returncode == 1
    assert result.stderr == (f'Error from server: admission webhook "{WEBHOOK_NAME}" denied the request: {message}\n')
    assert RETRY_REQUEST_ANNOTATION not in (
        clientset.job_flows(session_webhook_namespace).get("asked")["metadata"].get("annotations") or {}
    )


def test_the_webhook_admits_a_well_formed_retry_request(
    kubeconfig: Path, clientset: Clientset, session_webhook_namespace: str
) -> None:
    clientset.job_flows(session_webhook_namespace).create(pipeline("asked", session_webhook_namespace))
    result = annotate(kubeconfig, session_webhook_namespace, "asked", '{"id":"r1","flows":["train"]}')
    assert (result.returncode, result.stdout) == (0, "jobflow.flow.volcano.sh/asked annotated\n"), result.stderr


def test_the_webhook_alone_refuses_shutdown_changed_back(request: pytest.FixtureRequest) -> None:
    cluster: Cluster = request.getfixturevalue("upstream_crd_cluster")
    namespace: str = request.getfixturevalue("webhook_namespace")
    jobflows = cluster.clientset.job_flows(namespace)
    jobflows.create(pipeline("oneway", namespace, shutdown="Terminate"))
    message = refusal(lambda: jobflows.patch("oneway", {"spec": {"shutdown": "Stop"}}))
    assert message == (
        f'admission webhook "{WEBHOOK_NAME}" denied the request: spec.shutdown: cannot change from "Terminate" to'
        ' "Stop": it may only go from "" to Stop or Terminate, or from Stop to Terminate'
    )
    assert jobflows.get("oneway")["spec"]["shutdown"] == "Terminate"
