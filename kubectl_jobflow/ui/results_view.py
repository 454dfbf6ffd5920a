"""Ours (docs/results.md): what the JobFlow page shows of results, from the JobFlow's status alone.

A flow's node gets one more line, its results as `kubectl jobflow tree` writes them
(`accuracy=0.93 model=s3://m/42`, a matrix flow's `loss=[0.1,0.2]`) cut to `NODE_WIDTH`; its panel
lists every Job's values (each Job of a matrix flow); the page lists the JobFlow's own
`status.results`. A value is a container's text: its control characters are escaped here (on one
line, as the plugin prints it), and the page escapes it for HTML and wraps it inside the panel, so a
4 KiB value scrolls in its cell instead of widening the page. Only a JobFlow that declares results
gets the taller boxes (`geometry`): one without results is drawn as it always was. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.results import MAX_RESULT_BYTES, recorded_own_results, recorded_results
from kubectl_jobflow.render import one_line
from kubectl_jobflow.ui.layout import Geometry
from kubectl_jobflow.view import FlowRow

#: Characters of the results line in a node's box: 172 px less the margins, at 11 px (a wide glyph ~6.5 px).
NODE_WIDTH: Final = 24
#: A value in the panel: whole (a value is at most 4096 bytes), escaped, on one line; past it cut.
VALUE_WIDTH: Final = MAX_RESULT_BYTES
#: The boxes of a JobFlow that declares results: room for the third line.
RESULTS_GEOMETRY: Final = Geometry(node_height=56.0)
PLAIN_GEOMETRY: Final = Geometry()


def declares_results(job_flow: Mapping[str, Any]) -> bool:
    """Any of its flows (or `finally` entries) declares `results`, or it sets `spec.results`."""
    spec = jf.spec(job_flow)
    if spec.get("results"):
        return True
    for field in ("flows", "finally"):
        value = spec.get(field)
        for raw in value if isinstance(value, list) else ():
            if isinstance(raw, Mapping) and isinstance(raw.get("results"), Mapping):
                return True
    return False


def geometry(with_results: bool) -> Geometry:
    return RESULTS_GEOMETRY if with_results else PLAIN_GEOMETRY


def node_line(row: FlowRow) -> str:
    """The node's results line: the tree's RESULTS text, escaped and cut to `NODE_WIDTH`."""
    return one_line(row.results, NODE_WIDTH) if row.results else ""


def job_results(job_flow: Mapping[str, Any], job_names: Iterable[str]) -> list[dict[str, Any]]:
    """`[{job, results: [[name, value], ...]}]` of the named Jobs that were read, in the given order."""
    entries: dict[str, Mapping[str, Any]] = {}
    for entry in jf.job_status_list(job_flow):
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            entries.setdefault(entry["name"], entry)
    out: list[dict[str, Any]] = []
    for name in job_names:
        found = recorded_results((entries.get(name) or {}).get("results"))
        if found is not None:
            values = [[one_line(n, 63), one_line(v, VALUE_WIDTH)] for n, v in found.items()]
            out.append({"job": name, "results": values})
    return out


def own_results(job_flow: Mapping[str, Any]) -> list[dict[str, str]]:
    """The JobFlow's `status.results` as the page lists them."""
    found = recorded_own_results(jf.status(job_flow).get("results"))
    return [{"name": one_line(r["name"], 63), "value": one_line(r["value"], VALUE_WIDTH)} for r in found]
