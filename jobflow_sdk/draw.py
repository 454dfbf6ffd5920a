"""The DAG as SVG, for a notebook: the web view's layout (kubectl_jobflow/ui/layout.py), drawn here.

Boxes are coloured by each flow's state when the JobFlow has a status (a submitted one), grey
otherwise; `finally` flows stand in their own column at the right, as in the web view. Only the
layout is shared: the web view draws in the browser, this draws into a string.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from jobflow_sdk.status import flow_names, flow_states

#: Fill colours by flow state (the web view's palette).
COLOURS = {
    "Completed": "#d4edda",
    "Failed": "#f8d7da",
    "Running": "#d1ecf1",
    "Pending": "#fff3cd",
    "Skipped": "#e2e3e5",
    "Terminated": "#f5c6cb",
    "Aborted": "#f5c6cb",
}
DEFAULT_FILL = "#ffffff"


def _targets(job_flow: Mapping[str, Any]) -> dict[str, list[str]]:
    spec = job_flow.get("spec") or {}
    return {
        str(f.get("name")): [str(t) for t in (f.get("dependsOn") or {}).get("targets") or []]
        for f in spec.get("flows") or []
        if isinstance(f, Mapping)
    }


def svg(job_flow: Mapping[str, Any]) -> str:
    """An `<svg>` of the JobFlow's flows and dependencies (states shown once it has a status)."""
    from kubectl_jobflow.ui.layout import Geometry, layout

    geometry = Geometry()
    flows, finally_flows = flow_names(job_flow)
    drawing = layout(flows, _targets(job_flow), finally_flows, geometry)
    states = flow_states(job_flow) if job_flow.get("status") else {}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawing.width:g}" height="{drawing.height:g}" '
        'font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for route in drawing.edges:
        points = " ".join(f"{x:g},{y:g}" for x, y in route.points)
        parts.append(f'<polyline points="{points}" fill="none" stroke="#555" marker-end="url(#arrow)"/>')
    for node in drawing.nodes:
        state = states.get(node.name, "")
        fill = COLOURS.get(state, DEFAULT_FILL)
        label = html.escape(node.name) + (f" · {html.escape(state)}" if state else "")
        dash = ' stroke-dasharray="4 3"' if node.name in finally_flows else ""
        parts.append(
            f'<g><title>{label}</title><rect x="{node.x:g}" y="{node.y:g}" width="{geometry.node_width:g}" '
            f'height="{geometry.node_height:g}" rx="6" fill="{fill}" stroke="#333"{dash}/>'
            f'<text x="{node.x + geometry.node_width / 2:g}" y="{node.y + geometry.node_height / 2 + 4:g}" '
            f'text-anchor="middle">{label}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
