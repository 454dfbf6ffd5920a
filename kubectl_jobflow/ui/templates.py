"""The JobFlowTemplates section of `kubectl jobflow ui` (docs/templates.md): each with its params and
links to its runs.

Templates are few and change rarely, so they are not watched: `TemplateList` lists them at most
every `LIST_TTL` seconds, when a page asks; their runs (the JobFlows labelled
`flow.volcano.sh/jobflowtemplate: <name>`) come from the UI's JobFlow cache. A cluster without the
CRD, or a user who may not list templates, shows an empty section with a note.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset

#: How long one list of templates is shown before the next page load lists them again.
LIST_TTL: Final = 5.0


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
        self._clientset, self._namespace = clientset, namespace
        self._job_flows = job_flows
        self._clock = clock
        self._lock = threading.Lock()
        self._listed: tuple[float, list[Any], str] | None = None

    def _list(self) -> tuple[list[Any], str]:
        with self._lock:
            if self._listed is not None and self._clock() - self._listed[0] < LIST_TTL:
                return self._listed[1], self._listed[2]
        try:
            items, note = self._clientset.job_flow_templates(self._namespace).list(), ""
        except NotFoundError:
            items, note = [], "the JobFlowTemplate CRD is not installed"
        except ApiStatusError as err:
            items, note = [], f"cannot list JobFlowTemplates: {err.message}"
        except (ConnectionError, OSError) as err:
            items, note = [], f"cannot reach the API server: {err}"
        with self._lock:
            self._listed = (self._clock(), items, note)
        return items, note

    def snapshot(self) -> dict[str, Any]:
        items, note = self._list()
        flows = self._job_flows()
        rows = sorted((template_row(t, flows) for t in items), key=lambda r: (r["namespace"], r["name"]))
        return {"rows": rows, "note": note}
