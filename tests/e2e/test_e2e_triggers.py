"""JobFlowTriggers on the real control plane (docs/triggers.md).

The control plane runs the API server with `--authorization-mode=RBAC`, so the endpoint's
TokenReview and SubjectAccessReview are real: callers are ServiceAccounts with tokens from the
TokenRequest API, one bound to a Role that may create JobFlows in the namespace (202), one not (403).
The endpoint is served over TLS with a certificate from a test CA the client trusts.

The manager runs the trigger controller alone, so a run is checked as the JobFlow object it is (its
name, labels, annotation, controller reference and `spec.jobFlowTemplateRef` + `spec.params`) and
stays active; test_e2e_trigger_runs.py runs every controller and takes triggered runs to Succeed.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for

from jobflow_controller.apis.jobflowtemplate import TEMPLATE_LABEL
from jobflow_controller.apis.jobflowtrigger import TRIGGERED_BY_ANNOTATION
from jobflow_controller.jobflowtrigger import JobFlowTriggerController
from jobflow_controller.jobflowtrigger.bindings import MAX_BODY_BYTES
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.resources import Resource
from jobflow_controller.local.certs import TinyCA, write
from jobflow_controller.local.processes import free_port

pytestmark = pytest.mark.e2e

SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")


@pytest.fixture(scope="module")
def endpoint(kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext, Any]]:
    """A manager running the trigger controller alone, its endpoint on TLS, ConfigMaps watchable."""
    ca = TinyCA()
    pair = ca.issue("trigger", server=True, ips=("127.0.0.1",))
    root = tmp_path_factory.mktemp("trigger-tls")
    cert, key = write(root / "tls.crt", pair.cert_pem), write(root / "tls.key", pair.key_pem, private=True)
    port = free_port()
    running = RunningManager(
        str(kubeconfig),
        controllers=["jobflowtrigger-controller"],
        trigger_address=f"127.0.0.1:{port}",
        trigger_tls_cert_file=str(cert),
        trigger_tls_private_key_file=str(key),
        trigger_watch_kinds=["v1/ConfigMap"],
    )
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    controller = next(c for c in running.manager.controllers if isinstance(c, JobFlowTriggerController))
    wait_for(lambda: controller.server is not None, timeout=60, what="the trigger endpoint")
    yield port, context, controller
    running.stop()


def post(endpoint: tuple[int, ssl.SSLContext, Any], path: str, body: bytes, token: str | None) -> tuple[int, Any]:
    port, context, _ = endpoint
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def service_account_token(clientset: Clientset, namespace: str, name: str, *, may_create: bool) -> str:
    clientset.resource(SERVICE_ACCOUNTS, namespace).create({"metadata": {"name": name}})
    if may_create:
        rule = {"apiGroups": ["flow.volcano.sh"], "resources": ["jobflows"], "verbs": ["create"]}
        clientset.resource(ROLES, namespace).create({"metadata": {"name": name}, "rules": [rule]})
        clientset.resource(ROLE_BINDINGS, namespace).create(
            {
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
            }
        )
    path = SERVICE_ACCOUNTS.path(namespace, name, "token")
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    answer = clientset.rest.request("POST", path, body=request)
    return str(answer["status"]["token"])


def http_trigger(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTrigger",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "jobFlowTemplateRef": {"name": "etl"},
            "params": [{"name": "dataset", "cel": "body.dataset"}, {"name": "mode", "value": "full"}],
            "http": {},
            **spec,
        },
    }


def wait_served(endpoint: Any, namespace: str, name: str) -> None:
    controller = endpoint[2]
    wait_for(lambda: controller._get(namespace, name) is not None, what=f"trigger {name} in the cache")


def runs_of(clientset: Clientset, namespace: str, trigger: str) -> list[dict[str, Any]]:
    flows = clientset.job_flows(namespace).list()
    return [f for f in flows if (f["metadata"].get("annotations") or {}).get(TRIGGERED_BY_ANNOTATION) == trigger]


def test_an_authorised_post_creates_one_run_of_the_template(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    created = clientset.job_flow_triggers(namespace).create(http_trigger("etl-http", namespace))
    wait_served(endpoint, namespace, "etl-http")

    code, body = post(endpoint, f"/triggers/{namespace}/etl-http", b'{"dataset": "daily"}', token)

    assert code == 202, body
    run = clientset.job_flows(namespace).get(body["jobFlow"])
    assert run["metadata"]["name"].startswith("etl-http-") and len(run["metadata"]["name"]) == len("etl-http-") + 5
    assert run["metadata"]["labels"][TEMPLATE_LABEL] == "etl"
    assert run["metadata"]["annotations"][TRIGGERED_BY_ANNOTATION] == "etl-http"
    (owner,) = run["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("JobFlowTrigger", created["metadata"]["uid"], True)
    assert run["spec"]["jobFlowTemplateRef"] == {"name": "etl"}
    assert run["spec"]["params"] == [{"name": "dataset", "value": "daily"}, {"name": "mode", "value": "full"}]
    status = clientset.job_flow_triggers(namespace).get("etl-http")["status"]
    assert status["triggeredCount"] == 1 and status["lastTriggerTime"]
    assert [ref["name"] for ref in status["active"]] == [body["jobFlow"]]
    wait_for(
        lambda: [
            e
            for e in clientset.events(namespace).list()
            if e["reason"] == "Triggered" and body["jobFlow"] in e["message"]
        ],
        what="the Triggered event naming the run",
    )


def test_a_caller_without_a_valid_token_gets_401(endpoint: Any, clientset: Clientset, namespace: str) -> None:
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-401", namespace))
    wait_served(endpoint, namespace, "etl-401")
    assert post(endpoint, f"/triggers/{namespace}/etl-401", b"{}", None)[0] == 401
    assert post(endpoint, f"/triggers/{namespace}/etl-401", b"{}", "not-a-token")[0] == 401
    assert runs_of(clientset, namespace, "etl-401") == []


def test_a_caller_who_may_not_create_jobflows_there_gets_403(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    token = service_account_token(clientset, namespace, "reader", may_create=False)
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-403", namespace))
    wait_served(endpoint, namespace, "etl-403")
    assert post(endpoint, f"/triggers/{namespace}/etl-403", b'{"dataset": "x"}', token)[0] == 403
    assert runs_of(clientset, namespace, "etl-403") == []


def test_a_body_over_64_kib_gets_413_and_a_bad_one_400_and_an_unknown_trigger_404(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-413", namespace))
    wait_served(endpoint, namespace, "etl-413")
    big = b'{"dataset": "' + b"x" * MAX_BODY_BYTES + b'"}'
    assert post(endpoint, f"/triggers/{namespace}/etl-413", big, token)[0] == 413
    assert post(endpoint, f"/triggers/{namespace}/etl-413", b"{nope", token)[0] == 400
    assert post(endpoint, f"/triggers/{namespace}/etl-413", b'{"other": 1}', token)[0] == 400
    assert post(endpoint, f"/triggers/{namespace}/no-such-trigger", b"{}", token)[0] == 404
    assert runs_of(clientset, namespace, "etl-413") == []


def test_posts_beyond_the_triggers_rate_get_429(endpoint: Any, clientset: Clientset, namespace: str) -> None:
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-429", namespace))
    wait_served(endpoint, namespace, "etl-429")
    codes = [post(endpoint, f"/triggers/{namespace}/etl-429", b'{"dataset": "d"}', token)[0] for _ in range(8)]
    assert codes.count(429) >= 2, codes
    assert codes[0] == 202
    assert len(runs_of(clientset, namespace, "etl-429")) == codes.count(202)


def test_a_configmap_change_fires_exactly_one_run_and_existing_ones_none(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    config_maps = clientset.resource(CONFIG_MAPS, namespace)
    labels = {"dataset": "daily"}
    config_maps.create({"metadata": {"name": "before", "labels": labels}, "data": {"v": "0"}})
    trigger = http_trigger("etl-cm", namespace)
    del trigger["spec"]["http"]
    trigger["spec"]["params"] = [{"name": "dataset", "cel": "object.metadata.name + ':' + type"}]
    trigger["spec"]["resource"] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "labelSelector": {"matchLabels": labels},
        "events": ["update"],
    }
    clientset.job_flow_triggers(namespace).create(trigger)
    controller = endpoint[2]
    wait_for(lambda: controller.watches.has_synced("v1/ConfigMap"), timeout=30, what="the ConfigMap watch")
    time.sleep(2.0)
    assert runs_of(clientset, namespace, "etl-cm") == []  # the listed ConfigMap fired nothing

    current = config_maps.get("before")
    config_maps.update({**current, "data": {"v": "1"}})

    (run,) = wait_for(lambda: runs_of(clientset, namespace, "etl-cm"), what="the run of the update")
    assert run["spec"]["params"] == [{"name": "dataset", "value": "before:update"}]
    config_maps.create({"metadata": {"name": "unlabelled"}, "data": {"v": "1"}})  # no match
    time.sleep(2.0)
    assert len(runs_of(clientset, namespace, "etl-cm")) == 1


def test_a_trigger_naming_a_kind_the_controller_may_not_watch_gets_trigger_failed(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    trigger = http_trigger("etl-secret", namespace)
    del trigger["spec"]["http"]
    trigger["spec"]["params"] = []
    trigger["spec"]["resource"] = {"apiVersion": "v1", "kind": "Secret"}
    clientset.job_flow_triggers(namespace).create(trigger)
    (event,) = wait_for(
        lambda: [e for e in clientset.events(namespace).list() if e["reason"] == "TriggerFailed"],
        what="TriggerFailed for v1/Secret",
    )
    assert event["type"] == "Warning" and "may not watch v1/Secret" in event["message"]
    assert "v1/Secret" not in endpoint[2].watches.running()


def test_kubectl_jobflow_triggers_lists_each_trigger_and_what_it_fired(
    endpoint: Any, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    import io

    from kubectl_jobflow.cli import main as plugin_main

    token = service_account_token(clientset, namespace, "caller", may_create=True)
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-list", namespace))
    wait_served(endpoint, namespace, "etl-list")
    code, body = post(endpoint, f"/triggers/{namespace}/etl-list", b'{"dataset": "d"}', token)
    assert code == 202
    wait_for(
        lambda: clientset.job_flow_triggers(namespace).get("etl-list").get("status", {}).get("triggeredCount"),
        what="the trigger's status",
    )
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        assert plugin_main(["--kubeconfig", str(kubeconfig), "-n", namespace, "triggers", "-o", "json"]) == 0
    (row,) = json.loads(out.getvalue())["triggers"]
    assert (row["name"], row["template"], row["source"], row["triggered"]) == ("etl-list", "etl", "http", 1)
    assert [r["name"] for r in row["runs"]] == [body["jobFlow"]]


def test_forbid_refuses_a_second_run_with_409_and_replace_deletes_the_first(
    endpoint: Any, clientset: Clientset, namespace: str
) -> None:
    # The manager runs no JobFlow controller here, so a run stays unfinished: active.
    token = service_account_token(clientset, namespace, "caller", may_create=True)
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-forbid", namespace, concurrencyPolicy="Forbid"))
    clientset.job_flow_triggers(namespace).create(http_trigger("etl-replace", namespace, concurrencyPolicy="Replace"))
    wait_served(endpoint, namespace, "etl-forbid")
    wait_served(endpoint, namespace, "etl-replace")
    body = b'{"dataset": "d"}'

    first, _ = post(endpoint, f"/triggers/{namespace}/etl-forbid", body, token)
    second, refusal = post(endpoint, f"/triggers/{namespace}/etl-forbid", body, token)
    assert (first, second) == (202, 409) and "concurrencyPolicy is Forbid" in refusal["message"]
    assert len(runs_of(clientset, namespace, "etl-forbid")) == 1

    code, one = post(endpoint, f"/triggers/{namespace}/etl-replace", body, token)
    code2, two = post(endpoint, f"/triggers/{namespace}/etl-replace", body, token)
    assert (code, code2) == (202, 202)
    wait_for(
        lambda: [r["metadata"]["name"] for r in runs_of(clientset, namespace, "etl-replace")] == [two["jobFlow"]],
        what="the first run replaced by the second",
    )
    assert one["jobFlow"] != two["jobFlow"]
