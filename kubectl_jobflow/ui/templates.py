"""The JobFlowTemplates section of `kubectl jobflow ui` (docs/templates.md): each with its params and
links to its runs.

Templates are few and change rarely, so they are not watched: `TemplateList` lists them at most
every `LIST_TTL` seconds, when a page asks; their runs (the JobFlows labelled
`flow.volcano.sh/jobflowtemplate: <name>`) come from the UI's JobFlow cache. A cluster without the
CRD, or a user who may not list templates, shows an empty section with a note.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from kubectl_jobflow.ui.listed import TimedList

#: How long one list of templates is shown before the next page load lists them again.


def template_row(template: Mapping[str, Any], job_flows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One template: its params (`name`, `default` or None when required), its flows' count, its runs."""
    namespace, name = meta.namespace(template), meta.name(template)
    runs = sorted(
        (f for f in job_flows if meta.namespace(f) == namespace and meta.labels(f).get(jft.TEMPLATE_LABEL) == name),
        key=lambda f: str(meta.metadata(f).get("creationTimestamp") or ""),
        reverse=True,
    )
    return {
        "key": f"{namespace}/{name}",
        "namespace": namespace,
        "name": name,
        "params": [{"name": d.name, "default": d.default} for d in jft.declarations(template)],
        "flows": len(jf.raw_flow_list({"spec": jft.template_job_flow_spec(template)})),
        "runs": [{"name": meta.name(f), "phase": jf.phase(f) or "Pending"} for f in runs],
    }


class TemplateList:
    """The JobFlowTemplates of the UI's scope, listed through the user's client at most every `LIST_TTL`."""

    def __init__(
        self,
        clientset: Clientset,
        namespace: str | None,
        job_flows: Callable[[], list[Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._job_flows = job_flows
        self._listed = TimedList(lambda: clientset.job_flow_templates(namespace).list(), "JobFlowTemplate", clock)

    def _list(self) -> tuple[list[Any], str]:
        return self._listed.items()

    def snapshot(self) -> dict[str, Any]:
        items, note = self._list()
        flows = self._job_flows()
        rows = sorted((template_row(t, flows) for t in items), key=lambda r: (r["namespace"], r["name"]))
        return {"rows": rows, "note": note}
