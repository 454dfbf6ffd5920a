"""bench/hostile.py's ``trigger_flood`` scenario (issue 46), kept apart so the benchmark's module stays short.

For ``FLOOD_SECONDS``, in namespace ``hostile-triggers``: ``FLOOD_CLIENTS`` threads POST to an http
JobFlowTrigger as fast as they are answered (TLS, the controller's ``--trigger-address``), a third of
them with a forged token, a third with a token that may not create JobFlows, a third with one that
may; meanwhile a ConfigMap watched by a resource trigger is updated ``CONFIGMAP_UPDATES_PER_S`` times
a second. The bystanders of ``bench/hostile.py`` run throughout. Reported: the answers by code, the
slowest answer, the runs each trigger made (at most its burst plus its rate times the window: the
per-trigger bucket held), and the TokenReviews and SubjectAccessReviews the controller sent (its
10 s cache held them to a handful).
"""

from __future__ import annotations

import http.client
import ssl
import threading
import time
from collections import Counter
from typing import Any

from jobflow_controller.jobflowtrigger.ratelimit import BURST, RATE
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.resources import Resource

NAMESPACE = "hostile-triggers"
FLOOD_SECONDS = 15.0
FLOOD_CLIENTS = 6
CONFIGMAP_UPDATES_PER_S = 10.0
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
TRIGGERED_BY = "flow.volcano.sh/triggered-by"


def _token(clientset: Clientset, name: str, *, may_create: bool) -> str:
    clientset.resource(SERVICE_ACCOUNTS, NAMESPACE).create({"metadata": {"name": name}})
    if may_create:
        rule = {"apiGroups": ["flow.volcano.sh"], "resources": ["jobflows"], "verbs": ["create"]}
        clientset.resource(ROLES, NAMESPACE).create({"metadata": {"name": name}, "rules": [rule]})
        clientset.resource(ROLE_BINDINGS, NAMESPACE).create(
            {
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}],
            }
        )
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    answer = clientset.rest.request("POST", SERVICE_ACCOUNTS.path(NAMESPACE, name, "token"), body=request)
    return str(answer["status"]["token"])


def _trigger(name: str, **source: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTrigger",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "jobFlowTemplateRef": {"name": "flood"},
            "params": [{"name": "p", "value": "v"}],
            "successfulJobFlowsHistoryLimit": 1,
            "failedJobFlowsHistoryLimit": 1,
            **source,
        },
    }


def _poster(
    port: int, context: ssl.SSLContext, token: str, until: float, answers: Counter[str], slowest: list[float]
) -> None:
    path = f"/triggers/{NAMESPACE}/flood-http"
    while time.monotonic() < until:
        started = time.monotonic()
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        try:
            conn.request("POST", path, body=b'{"x": 1}', headers={"Authorization": f"Bearer {token}"})
            code = str(conn.getresponse().status)
        except OSError as err:
            code = type(err).__name__
        finally:
            conn.close()
        answers[code] += 1
        slowest[0] = max(slowest[0], time.monotonic() - started)


def _updater(clientset: Clientset, until: float, counter: list[int]) -> None:
    client = clientset.resource(CONFIG_MAPS, NAMESPACE)
    while time.monotonic() < until:
        current = client.get("flood")
        client.update({**current, "data": {"n": str(counter[0])}})
        counter[0] += 1
        time.sleep(1.0 / CONFIGMAP_UPDATES_PER_S)


def _runs(clientset: Clientset) -> Counter[str]:
    return Counter(
        str((f["metadata"].get("annotations") or {}).get(TRIGGERED_BY)) for f in clientset.job_flows(NAMESPACE).list()
    )


def trigger_flood(clientset: Clientset, port: int, ca_pem: bytes, create_namespace: Any) -> dict[str, Any]:
    create_namespace(clientset, NAMESPACE)
    tokens = [
        "forged-token",
        _token(clientset, "reader", may_create=False),
        _token(clientset, "caller", may_create=True),
    ]
    clientset.resource(CONFIG_MAPS, NAMESPACE).create({"metadata": {"name": "flood", "labels": {"flood": "yes"}}})
    clientset.job_flow_triggers(NAMESPACE).create(_trigger("flood-http", http={}))
    resource = {"apiVersion": "v1", "kind": "ConfigMap", "labelSelector": {"matchLabels": {"flood": "yes"}}}
    clientset.job_flow_triggers(NAMESPACE).create(_trigger("flood-cm", resource={**resource, "events": ["update"]}))
    time.sleep(3.0)  # the triggers reach the cache, the ConfigMap watch starts
    context = ssl.create_default_context(cadata=ca_pem.decode())
    answers: Counter[str] = Counter()
    slowest = [0.0]
    updates = [0]
    until = time.monotonic() + FLOOD_SECONDS
    threads = [
        threading.Thread(target=_poster, args=(port, context, tokens[i % 3], until, answers, slowest), daemon=True)
        for i in range(FLOOD_CLIENTS)
    ]
    threads.append(threading.Thread(target=_updater, args=(clientset, until, updates), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(FLOOD_SECONDS + 30)
    time.sleep(2.0)
    status = {t: clientset.job_flow_triggers(NAMESPACE).get(t).get("status", {}) for t in ("flood-http", "flood-cm")}
    return {
        "flood_s": FLOOD_SECONDS,
        "posts_by_code": dict(sorted(answers.items())),
        "slowest_answer_s": round(slowest[0], 3),
        "configmap_updates": updates[0],
        "runs_made": {t: int(s.get("triggeredCount") or 0) for t, s in status.items()},
        "runs_kept_now": dict(_runs(clientset)),
        "rate_per_trigger": {"per_s": RATE, "burst": BURST},
        "runs_allowed_at_most": int(BURST + RATE * (FLOOD_SECONDS + 5.0)),
    }


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    if name != "trigger_flood":
        return {}
    codes = result["posts_by_code"]
    return {
        "every_post_answered": set(codes) <= {"202", "401", "403", "429"},
        "forged_and_unauthorised_refused": codes.get("401", 0) > 0 and codes.get("403", 0) > 0,
        "runs_within_each_triggers_rate": all(
            n <= result["runs_allowed_at_most"] for n in result["runs_made"].values()
        ),
        "each_trigger_fired": all(n > 0 for n in result["runs_made"].values()),
    }
