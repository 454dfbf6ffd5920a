"""A chart value can never add a line to a manifest (issue 42, item 8).

Two defences, each tested alone: values.schema.json refuses a value that becomes a name or a
namespace unless it is a DNS-1123 name, and the templates quote every string they insert, so even
with the schema skipped (`--skip-schema-validation`) a line break stays inside its one string. A
newline in `serviceAccount.name` once rewrote the ClusterRoleBinding's subjects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from chart_render import CHART, NAMESPACE, RELEASE, documents, helm, value_args

#: Inserted where a name is expected: unquoted, it ends the line and adds a subject (or a key).
PAYLOAD = "h\n  - kind: User\n    name: admin"
CIDRS = "/webhook/networkPolicy/apiServerCIDRs/0"
WEBHOOK = {"webhook": {"enabled": True}}
CERT_MANAGER = {"webhook": {"enabled": True, "certificate": {"source": "certManager"}}}
GRAFANA = {"metrics": {"grafanaDashboard": {"enabled": True}}}
SERVICE_MONITOR = {"metrics": {"serviceMonitor": {"enabled": True}}}
NETWORK_POLICY = {"webhook": {"enabled": True, "networkPolicy": {"enabled": True}}}


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _at(path: str, value: Any, *extras: dict[str, Any]) -> dict[str, Any]:
    """The values holding `value` at the schema path `path` (`/a/b`, `/a/0/b` for a list's first item)."""
    node: Any = value
    for part in reversed(path.strip("/").split("/")):
        node = [node] if part == "0" else {part: node}
    for extra in extras:
        node = _merged(node, extra)
    return dict(node)


#: (the schema path helm names when it refuses the values, the values holding a line break there).
HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("/serviceAccount/name", _at("/serviceAccount/name", PAYLOAD)),
    ("/serviceAccount/name", _at("/serviceAccount/name", PAYLOAD, {"serviceAccount": {"create": False}})),
    ("/priorityClass/name", _at("/priorityClass/name", PAYLOAD)),
    ("/priorityClass/name", _at("/priorityClass/name", PAYLOAD, {"priorityClass": {"create": False}})),
    ("/webhook/certificate/secretName", _at("/webhook/certificate/secretName", PAYLOAD, WEBHOOK)),
    ("/webhook/certificate/secretName", _at("/webhook/certificate/secretName", PAYLOAD, CERT_MANAGER)),
    ("/metrics/grafanaDashboard/namespace", _at("/metrics/grafanaDashboard/namespace", PAYLOAD, GRAFANA)),
    ("/leaderElection/resourceNamespace", _at("/leaderElection/resourceNamespace", PAYLOAD)),
    ("/leaderElection/resourceName", _at("/leaderElection/resourceName", PAYLOAD, {"sharding": {"enabled": True}})),
    ("/nameOverride", _at("/nameOverride", PAYLOAD)),
    ("/fullnameOverride", _at("/fullnameOverride", PAYLOAD, CERT_MANAGER)),
    ("/imagePullSecrets/0/name", _at("/imagePullSecrets/0/name", PAYLOAD)),
    ("/image/repository", _at("/image/repository", PAYLOAD)),
    ("/image/tag", _at("/image/tag", PAYLOAD)),
    ("/metrics/serviceMonitor/interval", _at("/metrics/serviceMonitor/interval", "30s\n" + PAYLOAD, SERVICE_MONITOR)),
    ("/webhook/certificate/caBundle", _at("/webhook/certificate/caBundle", "QQ==\n" + PAYLOAD, WEBHOOK)),
    (CIDRS, _at(CIDRS, "1.0.0.0/8\n" + PAYLOAD, NETWORK_POLICY)),
    ("/podDisruptionBudget/maxUnavailable", _at("/podDisruptionBudget/maxUnavailable", "50%\n" + PAYLOAD)),
]  # fmt: skip
IDS = [path for path, _ in HOSTILE]


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def _injected(node: Any) -> bool:
    """Whether the payload's second line became an object of its own (`kind: User`)."""
    if isinstance(node, dict):
        return node.get("kind") == "User" or any(_injected(v) for v in node.values())
    return isinstance(node, list) and any(_injected(item) for item in node)


def _render_unchecked(values: dict[str, Any], namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """`helm template` with the schema skipped: what the templates alone make of the values."""
    out = helm(
        "template", RELEASE, str(CHART), "-n", namespace, "--skip-schema-validation", *value_args(values), check=False
    )
    assert out.returncode == 0, f"helm could not render (a value broke the YAML):\n{out.stderr[-2000:]}"
    return documents(out.stdout)


@pytest.mark.parametrize(("path", "values"), HOSTILE, ids=IDS)
def test_the_schema_refuses_a_line_break_in_a_value(path: str, values: dict[str, Any]) -> None:
    out = helm("template", RELEASE, str(CHART), *value_args(values), check=False)
    assert out.returncode != 0, f"rendered: {values}"
    assert "values don't meet the specifications of the schema" in out.stderr
    assert path in out.stderr


@pytest.mark.parametrize(("path", "values"), HOSTILE, ids=IDS)
def test_a_line_break_in_a_value_stays_inside_its_string_without_the_schema(path: str, values: dict[str, Any]) -> None:
    docs = _render_unchecked(values)
    assert not any(_injected(d) for d in docs), f"{path} added an object to the manifests"
    assert any(PAYLOAD in s for d in docs for s in _strings(d)), f"{path}'s value is not one string of the render"


def test_a_line_break_in_the_namespace_stays_inside_its_string() -> None:
    """The release's namespace is no value (helm takes `-n` as given), and is quoted all the same."""
    docs = _render_unchecked({**CERT_MANAGER, **SERVICE_MONITOR}, PAYLOAD)
    assert not any(_injected(d) for d in docs)
    assert any(d["metadata"].get("namespace") == PAYLOAD for d in docs)


#: Names the schema refuses for another reason than a line break: (path, a value there, other values).
NOT_NAMES: list[tuple[str, str, dict[str, Any]]] = [
    ("/serviceAccount/name", "Jobflow", {}),
    ("/serviceAccount/name", "a" * 254, {}),
    ("/priorityClass/name", "-leading-dash", {}),
    ("/webhook/certificate/secretName", "a_b", {}),
    ("/metrics/grafanaDashboard/namespace", "a.b", GRAFANA),
    ("/metrics/grafanaDashboard/namespace", "a" * 64, GRAFANA),
    ("/leaderElection/resourceNamespace", "a.b", {}),
    ("/fullnameOverride", "a" * 64, {}),
    ("/imagePullSecrets/0/name", "Secret", {}),
]


@pytest.mark.parametrize(("path", "value", "extra"), NOT_NAMES, ids=[f"{p}={v[:20]}" for p, v, _ in NOT_NAMES])
def test_the_schema_refuses_what_is_not_a_dns_1123_name(path: str, value: str, extra: dict[str, Any]) -> None:
    values = _at(path, value, extra)
    out = helm("template", RELEASE, str(CHART), *value_args(values), check=False)
    assert out.returncode != 0, f"rendered: {values}"
    assert path in out.stderr


def test_names_that_are_dns_1123_are_rendered_as_given() -> None:
    values = {
        "serviceAccount": {"name": "jobflow.sa-1"},
        "priorityClass": {"name": "jobflow-high"},
        "webhook": {"enabled": True, "certificate": {"source": "certManager", "secretName": "tls.jobflow"}},
        "metrics": {"grafanaDashboard": {"enabled": True, "namespace": "grafana"}},
    }
    out = helm("template", RELEASE, str(CHART), "-n", NAMESPACE, *value_args(values))
    docs = documents(out.stdout)
    binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "jobflow.sa-1", "namespace": NAMESPACE}]
    assert next(d for d in docs if d["kind"] == "PriorityClass")["metadata"]["name"] == "jobflow-high"
    leaf = next(d for d in docs if d["kind"] == "Certificate" and d["metadata"]["name"] == f"{RELEASE}-webhook")
    assert leaf["spec"]["secretName"] == "tls.jobflow"
    assert next(d for d in docs if d["kind"] == "ConfigMap")["metadata"]["namespace"] == "grafana"
