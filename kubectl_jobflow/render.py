"""The terminal picture of a `FlowView`: an indented tree (Graphviz DOT is `dot`'s).

The tree's convention: roots are the flows without `dependsOn` targets, in spec order; under each
flow come the flows that depend on it, in spec order. A flow with several targets sits under each
of them, but only its first appearance (depth first, top down) carries its columns and its own
subtree; every later one is a single dimmed line "<name> (see above)", so no subtree is drawn twice
and a cycle cannot recurse. Flows no root reaches (a target that names no flow, or a cycle, both of
which admission refuses) follow under their own heading, each with the targets it waits for.

The failure-aware fields (docs/rules.md): a flow whose `dependsOn.rule` is not the default carries it
in brackets, ``alert [AnyFailed]``, wherever it is drawn (the rule of every edge into it); a Skipped
flow shows the phase ``Skipped``; the `finally` JobTemplates come last, under a ``finally`` heading,
as one branch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from kubectl_jobflow.view import INVALID, NOT_CREATED, SKIPPED, WAITING, FlowRow, FlowView

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
MAGENTA = "\x1b[35m"
BLUE = "\x1b[34m"
CYAN = "\x1b[36m"

#: Volcano Job phases (and the two the view adds) and JobFlow phases, by colour.
PHASE_COLORS: Mapping[str, str] = {
    "Completed": GREEN,
    "Succeed": GREEN,
    "Running": CYAN,
    "Completing": CYAN,
    "Pending": YELLOW,
    "Restarting": YELLOW,
    "Failed": RED,
    "Aborted": RED,
    "Terminated": RED,
    "Aborting": MAGENTA,
    "Terminating": MAGENTA,
    SKIPPED: BLUE,
    INVALID: RED,
    WAITING: DIM,
    NOT_CREATED: DIM,
    "Unknown": DIM,
}

HEADERS = ("FLOW", "PHASE", "DURATION", "RESTARTS")
#: The column added when a flow has results (docs/results.md), and its widest cell.
RESULTS_HEADER = "RESULTS"
RESULTS_WIDTH = 40
#: Spaces between columns, as kubectl's table printer pads them.
GAP = "   "
SEE_ABOVE = "(see above)"
UNREACHABLE_HEADING = "not reachable from a root (a target names no flow, or the flows form a cycle):"
#: The line above the finally JobTemplates (docs/rules.md), which run once no flow can run any more.
FINALLY_HEADING = "finally"


@dataclass(frozen=True)
class Branches:
    """The connectors drawn left of a flow's name."""

    tee: str
    elbow: str
    pipe: str
    space: str


UNICODE = Branches("├── ", "└── ", "│   ", "    ")
ASCII = Branches("|-- ", "`-- ", "|   ", "    ")


def use_color(stream: TextIO, mode: str = "auto", environ: Mapping[str, str] | None = None) -> bool:
    """`always` and `never` are what they say; `auto` colours a terminal unless `NO_COLOR` is set
    to anything non-empty (no-color.org) or `TERM=dumb`."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def branches_for(stream: TextIO) -> Branches:
    """Box-drawing connectors when the stream can encode them, ASCII otherwise."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "├└│─".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return ASCII
    return UNICODE


def human_duration(seconds: float | None) -> str:
    """apimachinery's `duration.HumanDuration`, the AGE column of `kubectl get`: "45s", "3m20s",
    "25m", "5h10m", "3d4h", "400d"."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m{rem}s" if rem else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rem = minutes % 60
        return f"{hours}h{rem}m" if rem else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rem = hours % 24
        return f"{hours // 24}d{rem}h" if rem else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    years, days = hours // (24 * 365), (hours // 24) % 365
    if hours < 24 * 365 * 8:
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{years}y"


# -- the tree ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TreeLine:
    prefix: str
    name: str
    row: FlowRow | None
    #: A flow already drawn above (a second target of it, or a cycle closing).
    repeat: bool = False
    #: For the roots of the unreachable section: the targets the flow waits for.
    needs: tuple[str, ...] = ()


def tree_lines(view: FlowView, branches: Branches = UNICODE) -> tuple[list[TreeLine], list[TreeLine]]:
    """The reachable tree and the unreachable rest, as lines in drawing order."""
    children: dict[str, list[str]] = {f.name: [] for f in view.flows}
    for flow in view.flows:
        for target in flow.targets:
            if target in children and flow.name not in children[target]:
                children[target].append(flow.name)
    shown: set[str] = set()

    def visit(out: list[TreeLine], name: str, prefix: str, connector: str, below: str, needs: tuple[str, ...]) -> None:
        if name in shown:
            out.append(TreeLine(prefix + connector, name, view.row(name), repeat=True))
            return
        shown.add(name)
        out.append(TreeLine(prefix + connector, name, view.row(name), needs=needs))
        kids = children[name]
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            visit(
                out,
                kid,
                prefix + below,
                branches.elbow if last else branches.tee,
                branches.space if last else branches.pipe,
                (),
            )

    reachable: list[TreeLine] = []
    for flow in view.flows:
        if not flow.targets:
            visit(reachable, flow.name, "", "", "", ())
    rest: list[TreeLine] = []
    for flow in view.flows:
        if flow.name not in shown:
            visit(rest, flow.name, "", "", "", flow.targets)
    return reachable, rest


def finally_lines(view: FlowView, branches: Branches = UNICODE) -> list[TreeLine]:
    """The `finally` branch: each finally JobTemplate's line, in spec order, under the heading."""
    last = len(view.finally_flows) - 1
    return [
        TreeLine(branches.elbow if i == last else branches.tee, row.name, row)
        for i, row in enumerate(view.finally_flows)
    ]


def _first_cell(line: TreeLine, known: set[str]) -> str:
    """The FLOW column: connectors, the name, the flow's rule if not the default, and a note."""
    name = line.name + (f" [{line.row.rule}]" if line.row is not None and line.row.rule else "")
    if line.row is not None and line.row.jobs and not line.repeat:
        name += f" ({line.row.counts_note})"
    if line.repeat:
        return f"{line.prefix}{name} {SEE_ABOVE}"
    if line.needs:
        needs = ", ".join(t if t in known else f"{t}?" for t in line.needs)
        return f"{line.prefix}{name} (needs {needs})"
    return line.prefix + name


def _cells(line: TreeLine, known: set[str]) -> list[str]:
    if line.repeat or line.row is None:
        return [_first_cell(line, known), "", "", ""]
    restarts = "-" if line.row.restarts is None else str(line.row.restarts)
    return [_first_cell(line, known), line.row.phase, human_duration(line.row.duration), restarts]


def one_line(value: str, width: int) -> str:
    """`value` on one line: control characters escaped (a value is a tenant's text), cut to `width` with `…`."""
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in value)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _summary(view: FlowView) -> str:
    """The heading's end: ``4 flows   age 10m``, ``3 flows, 1 finally   age 2m``."""
    flows = f"{len(view.flows)} flow" + ("" if len(view.flows) == 1 else "s")
    if view.finally_flows:
        flows += f", {len(view.finally_flows)} finally"
    return f"{flows}   age {human_duration(view.age)}"


def lifecycle_note(view: FlowView, paint: Callable[[str, str | None], str]) -> str:
    """The heading's lifecycle words (docs/lifecycle.md): `suspended 3m` (no time until the controller
    has seen it), `shutdown Stop`."""
    note = ""
    if view.suspended:
        since = f" {human_duration(view.suspended_for)}" if view.suspended_for is not None else ""
        note += "   " + paint(f"suspended{since}", YELLOW)
    if view.shutdown:
        note += "   " + paint(f"shutdown {view.shutdown}", YELLOW)
    return note


def render_tree(view: FlowView, *, color: bool = False, branches: Branches = UNICODE) -> str:
    """The heading line, then FLOW/PHASE/DURATION/RESTARTS with the flows drawn as a tree, then the
    `finally` branch (docs/rules.md) when the JobFlow has one."""

    def paint(text: str, code: str | None) -> str:
        return f"{code}{text}{RESET}" if color and code and text else text

    reachable, rest = tree_lines(view, branches)
    final = finally_lines(view, branches)
    known = {f.name for f in view.flows}
    lines = reachable + rest + final
    cells = [_cells(ln, known) for ln in lines]
    headers = list(HEADERS)
    if any(ln.row is not None and ln.row.results for ln in lines):  # ours: only when a flow reported
        headers.append(RESULTS_HEADER)
        for ln, values in zip(lines, cells, strict=True):
            shown = ln.row is not None and not ln.repeat
            values.append(one_line(ln.row.results, RESULTS_WIDTH) if shown and ln.row is not None else "")
    # A "(see above)" line has no other columns, so it may run past the first one.
    measured = [c for c, ln in zip(cells, lines, strict=True) if not ln.repeat]
    widths = [max([len(h)] + [len(c[i]) for c in measured]) for i, h in enumerate(headers)]

    def row_text(values: list[str], codes: list[str | None]) -> str:
        # Padding goes outside the colour codes, so columns line up whatever the terminal does.
        last = len(values) - 1
        parts = [paint(v, codes[i]) + ("" if i == last else " " * (widths[i] - len(v))) for i, v in enumerate(values)]
        return GAP.join(parts).rstrip()

    title = f"JobFlow {view.namespace}/{view.name}" if view.namespace else f"JobFlow {view.name}"
    if view.template:  # docs/templates.md
        title += f" (from JobFlowTemplate {view.template})"
    phase = view.phase or "Unknown"
    out = [
        f"{paint(title, BOLD)}   {paint(phase, PHASE_COLORS.get(phase))}   {_summary(view)}"
        + lifecycle_note(view, paint)
    ]
    out.append(row_text(headers, [BOLD] * len(headers)))
    headings: dict[int, tuple[str, str]] = {}
    if rest:
        headings[len(reachable)] = (UNREACHABLE_HEADING, YELLOW)
    if final:
        headings[len(reachable) + len(rest)] = (FINALLY_HEADING, BOLD)
    for index, (line, values) in enumerate(zip(lines, cells, strict=True)):
        if index in headings:
            out.append(paint(*headings[index]))
        if line.repeat or line.row is None:
            out.append(line.prefix + paint(values[0][len(line.prefix) :], DIM))
            continue
        restarts_code = YELLOW if line.row.restarts else None
        out.append(row_text(values, [None, PHASE_COLORS.get(line.row.phase), None, restarts_code, None]))
    if not view.flows and not final:
        out.append(paint("(no flows)", DIM))
    return "\n".join(out) + "\n"
