"""Talking to the API server: a connection (kubeconfig or in-cluster, as the plugin reads it) and the
few requests a pipeline needs, all through jobflow_controller.kube.

`apply` is a server-side apply under the field manager `jobflow-sdk`, so a notebook cell run twice
updates what it owns and leaves other managers' fields alone. The lifecycle verbs send the merge
patches `kubectl jobflow suspend|resume|stop|terminate|retry` sends (docs/lifecycle.md): the same
fields and annotation, from apis.lifecycle_fields.
"""

from __future__ import annotations

import datetime
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis.constants import CREATED_BY_JOB_FLOW
from jobflow_controller.apis.lifecycle_fields import (
    RETRY_REQUEST_ANNOTATION,
    SHUTDOWN,
    SUSPEND,
    Shutdown,
    retry_request_value,
    shutdown_change_allowed,
)
from jobflow_controller.apis.meta import generate_object_string
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_client_config
from jobflow_controller.kube.resources import EVENTS, JOB_FLOWS, JOBS, Resource
from jobflow_controller.kube.rest import RestClient, default_user_agent

#: The field manager of every server-side apply the SDK sends.
FIELD_MANAGER = "jobflow-sdk"
APPLY_PATCH = "application/apply-patch+yaml"
LIFECYCLE_VERBS = ("suspend", "resume", "stop", "terminate", "retry")


@dataclass
class Connection:
    """A clientset and the namespace objects without one go to (the kubeconfig context's)."""

    clientset: Clientset
    namespace: str

    def close(self) -> None:
        self.clientset.rest.close()


def connect(kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None) -> Connection:
    """kubectl's rules: `kubeconfig`, else `$KUBECONFIG`, else ~/.kube/config, else in-cluster."""
    configuration, default_namespace = build_client_config(kubeconfig, context)
    rest = RestClient(configuration, user_agent=default_user_agent("jobflow-sdk"))
    return Connection(Clientset(rest), namespace or default_namespace)


def in_namespace(obj: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """`obj` with `metadata.namespace` set (kept when it has one)."""
    metadata = dict(obj.get("metadata") or {})
    metadata.setdefault("namespace", namespace)
    return {**obj, "metadata": metadata}


def create(conn: Connection, resource: Resource, obj: Mapping[str, Any]) -> dict[str, Any]:
    sent = in_namespace(obj, conn.namespace)
    created: dict[str, Any] = conn.clientset.resource(resource, sent["metadata"]["namespace"]).create(sent)
    return created


def apply(conn: Connection, resource: Resource, obj: Mapping[str, Any], *, force: bool = True) -> dict[str, Any]:
    """Server-side apply of `obj` (created when missing); `force` takes over fields another manager set."""
    sent = in_namespace(obj, conn.namespace)
    metadata = sent["metadata"]
    path = resource.path(metadata["namespace"], metadata["name"])
    query = {"fieldManager": FIELD_MANAGER, "force": "true" if force else None}
    applied: dict[str, Any] = conn.clientset.rest.request(
        "PATCH", path, query=query, body=sent, content_type=APPLY_PATCH
    )
    return applied


def get(conn: Connection, resource: Resource, name: str, namespace: str) -> dict[str, Any]:
    return conn.clientset.resource(resource, namespace).get(name)


def delete(conn: Connection, resource: Resource, name: str, namespace: str, propagation: str = "Background") -> None:
    conn.clientset.resource(resource, namespace).delete(name, propagation_policy=propagation)


def jobs(conn: Connection, name: str, namespace: str) -> list[dict[str, Any]]:
    """The Volcano Jobs the controller created for the JobFlow (its createdBy label), by name."""
    selector = f"{CREATED_BY_JOB_FLOW}={generate_object_string(namespace, name)}"
    items = conn.clientset.resource(JOBS, namespace).list(label_selector=selector)
    return sorted(items, key=lambda job: str((job.get("metadata") or {}).get("name")))


def events(conn: Connection, name: str, namespace: str) -> list[dict[str, Any]]:
    """The events about the JobFlow and its Jobs (`<name>-...`), oldest first: one LIST."""
    body = conn.clientset.rest.get(EVENTS.path(namespace), None)
    mine = [e for e in body.get("items") or [] if _about(e, name)]
    return sorted(mine, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))


def _about(event: Mapping[str, Any], name: str) -> bool:
    involved = event.get("involvedObject") or {}
    kind, involved_name = involved.get("kind"), str(involved.get("name") or "")
    return (kind == "JobFlow" and involved_name == name) or (kind == "Job" and involved_name.startswith(name + "-"))


def warnings(event_list: Sequence[Mapping[str, Any]]) -> list[str]:
    """`reason: message` of each Warning event, without repeats."""
    lines = [f"{e.get('reason')}: {e.get('message')}" for e in event_list if e.get("type") == "Warning"]
    return list(dict.fromkeys(lines))


def new_request_id(now: datetime.datetime | None = None) -> str:
    """A fresh re-run request id, as the plugin makes them (`20260101T120000Z-3fa9c`)."""
    moment = now or datetime.datetime.now(datetime.UTC)
    return f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)[:5]}"


def lifecycle_patch(verb: str, request_id: str = "", flows: Sequence[str] = ()) -> dict[str, Any]:
    """The merge patch of a lifecycle verb (the plugin's, field for field)."""
    patches: dict[str, dict[str, Any]] = {
        "suspend": {"spec": {SUSPEND: True}},
        "resume": {"spec": {SUSPEND: False}},
        "stop": {"spec": {SHUTDOWN: Shutdown.STOP.value}},
        "terminate": {"spec": {SHUTDOWN: Shutdown.TERMINATE.value}},
    }
    if verb == "retry":
        return {"metadata": {"annotations": {RETRY_REQUEST_ANNOTATION: retry_request_value(request_id, flows)}}}
    if verb not in patches:
        raise ValueError(f"unknown verb {verb!r}: one of {', '.join(LIFECYCLE_VERBS)}")
    return patches[verb]


def lifecycle_problem(verb: str, job_flow: Mapping[str, Any], flows: Sequence[str] = ()) -> str | None:
    """Why the verb must not be sent: a flow `retry` names that the JobFlow lacks; a shutdown that
    would go backwards (Terminate -> Stop), which admission refuses too."""
    spec = job_flow.get("spec") or {}
    name = (job_flow.get("metadata") or {}).get("name")
    if verb == "retry":
        known = [str(f.get("name")) for f in spec.get("flows") or []]
        unknown = [f for f in flows if f not in known]
        if unknown:
            return f"JobFlow {name!r} has no flow {unknown[0]!r} (its flows: {', '.join(known) or 'none'})"
    if verb in ("stop", "terminate"):
        current, wanted = str(spec.get(SHUTDOWN) or ""), lifecycle_patch(verb)["spec"][SHUTDOWN]
        if current and not shutdown_change_allowed(current, wanted):
            return f"JobFlow {name!r} is already shut down with {SHUTDOWN}: {current}, which cannot be undone"
    return None


def send_lifecycle(conn: Connection, name: str, namespace: str, verb: str, flows: Sequence[str] = ()) -> dict[str, Any]:
    """Read the JobFlow, check, send the verb's one merge patch; returns the patched JobFlow."""
    client = conn.clientset.resource(JOB_FLOWS, namespace)
    problem = lifecycle_problem(verb, client.get(name), flows)
    if problem is not None:
        raise ValueError(problem)
    request_id = new_request_id() if verb == "retry" else ""
    return client.patch(name, lifecycle_patch(verb, request_id, flows))
