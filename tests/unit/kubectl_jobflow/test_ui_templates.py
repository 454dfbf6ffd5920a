"""The JobFlowTemplates section of `kubectl jobflow ui` (kubectl_jobflow/ui/templates.py, docs/templates.md)."""

from __future__ import annotations

from typing import Any

from informers.errors import NotFoundError
from jobflow_controller.apis.jobflowtemplate import TEMPLATE_LABEL
from kubectl_jobflow.ui.templates import TemplateList, template_row

TEMPLATE = {
    "metadata": {"name": "etl", "namespace": "ns"},
    "spec": {
        "params": [{"name": "dataset"}, {"name": "mode", "default": "full"}],
        "jobFlow": {"flows": [{"name": "a"}, {"name": "b"}]},
    },
}


def run(name: str, created: str, template: str = "etl", phase: str = "") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "creationTimestamp": created,
            "labels": {TEMPLATE_LABEL: template},
        },
        "status": {"state": {"phase": phase}} if phase else {},
    }


def test_a_row_has_the_params_the_flows_and_the_runs_newest_first() -> None:
    flows = [
        run("old", "2026-01-01T00:00:00Z", phase="Succeed"),
        run("new", "2026-01-02T00:00:00Z"),
        run("x", "2026-01-03T00:00:00Z", "other"),
    ]
    assert template_row(TEMPLATE, flows) == {
        "key": "ns/etl",
        "namespace": "ns",
        "name": "etl",
        "params": [{"name": "dataset", "default": None}, {"name": "mode", "default": "full"}],
        "flows": 2,
        "runs": [{"name": "new", "phase": "Pending"}, {"name": "old", "phase": "Succeed"}],
    }


class Client:
    def __init__(self, items: list[Any] | None) -> None:
        self.items = items
        self.calls = 0

    def list(self) -> list[Any]:
        self.calls += 1
        if self.items is None:
            raise NotFoundError("the server could not find the requested resource")
        return self.items


class Clientset:
    def __init__(self, client: Client) -> None:
        self.client = client

    def job_flow_templates(self, namespace: str | None) -> Client:
        return self.client


def test_the_list_is_cached_and_a_missing_crd_is_a_note() -> None:
    now = [0.0]
    client = Client([TEMPLATE])
    listing = TemplateList(Clientset(client), None, lambda: [], clock=lambda: now[0])  # type: ignore[arg-type]
    assert listing.snapshot()["rows"][0]["name"] == "etl"
    listing.snapshot()
    assert client.calls == 1
    missing = TemplateList(Clientset(Client(None)), None, lambda: [])  # type: ignore[arg-type]
    assert missing.snapshot() == {"rows": [], "note": "the JobFlowTemplate CRD is not installed"}
