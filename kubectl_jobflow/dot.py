"""The Graphviz picture of a `FlowView`: `kubectl jobflow dot NAME | dot -Tsvg > flow.svg`.

One node per flow, filled by phase, and an edge target -> dependent, labelled with the dependent's
`dependsOn.rule` when it is not the default (docs/rules.md). A Skipped flow is drawn dashed; a matrix
flow (docs/params.md) is one node whose label counts its Jobs by phase. The
`finally` JobTemplates sit in a cluster of their own, reached by a dotted edge from every flow that
nothing depends on: they run once no flow can run any more.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubectl_jobflow.render import human_duration
from kubectl_jobflow.view import SKIPPED, FlowRow, FlowView

#: Fill colours of the DOT nodes, by phase (light tints of the terminal colours).
DOT_FILLS: Mapping[str, str] = {
    "Completed": "#c8e6c9",
    "Running": "#b3e5fc",
    "Completing": "#b3e5fc",
    "Pending": "#fff9c4",
    "Restarting": "#fff9c4",
    "Failed": "#ffcdd2",
    "Aborted": "#ffcdd2",
    "Terminated": "#ffcdd2",
    "Aborting": "#e1bee7",
    "Terminating": "#e1bee7",
}
DOT_FILL_DEFAULT = "#eeeeee"
#: The label of the cluster holding the finally nodes.
FINALLY_LABEL = "finally"


def _quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as DOT's \\n."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node(flow: FlowRow, indent: str = "  ") -> str:
    label = f"{flow.name}\n{flow.phase}"
    if flow.duration is not None:
        label += f", {human_duration(flow.duration)}"
    if flow.restarts:
        label += f"\nrestarts: {flow.restarts}"
    if flow.jobs:
        label += f"\n{flow.counts_note}"
    fill = DOT_FILLS.get(flow.phase, DOT_FILL_DEFAULT)
    style = ', style="rounded,filled,dashed"' if flow.phase == SKIPPED else ""
    return f"{indent}{_quote(flow.name)} [label={_quote(label)}, fillcolor={_quote(fill)}{style}];"


def render_dot(view: FlowView) -> str:
    """A `digraph` of the flows (left to right), then the finally cluster if the JobFlow has one."""
    title = f"{view.namespace}/{view.name}" if view.namespace else view.name
    title += f": {view.phase or 'Unknown'}"
    graph = "rankdir=LR, labelloc=t, fontname=Helvetica"
    out = [
        f"digraph {_quote(view.name)} {{",
        f"  graph [{graph}{', compound=true' if view.finally_flows else ''}, label={_quote(title)}];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica];',
        '  edge [color="#555555"];',
    ]
    known = {f.name for f in view.flows}
    out.extend(_node(flow) for flow in view.flows)
    unknown = sorted({t for f in view.flows for t in f.targets if t not in known})
    for name in unknown:
        label = _quote(f"{name}\n(no such flow)")
        out.append(f"  {_quote(name)} [label={label}, style=dashed];")
    for flow in view.flows:
        attributes = f" [label={_quote(flow.rule)}]" if flow.rule else ""
        out.extend(f"  {_quote(target)} -> {_quote(flow.name)}{attributes};" for target in flow.targets)
    out.extend(_finally_cluster(view))
    out.append("}")
    return "\n".join(out) + "\n"


def _finally_cluster(view: FlowView) -> list[str]:
    """The finally nodes in a dashed cluster, each reached by a dotted edge from every sink flow."""
    if not view.finally_flows:
        return []
    out = [
        f"  subgraph {_quote('cluster_' + FINALLY_LABEL)} {{",
        f"    graph [label={_quote(FINALLY_LABEL)}, style=dashed];",
    ]
    out.extend(_node(flow, "    ") for flow in view.finally_flows)
    out.append("  }")
    depended_on = {t for f in view.flows for t in f.targets}
    sinks = [f.name for f in view.flows if f.name not in depended_on]
    for sink in sinks:
        out.extend(f"  {_quote(sink)} -> {_quote(final.name)} [style=dotted];" for final in view.finally_flows)
    return out
