"""The dependency graph of a JobFlow's flows: duplicate names, undefined targets and cycles.

Upstream (``pkg/webhooks/admission/jobflows/validate/util.go``) builds a map from flow name to
targets, so a later duplicate silently replaces an earlier one, reports whichever undefined target
Go's map iteration happens to reach first, and looks for cycles with a depth-first search that
enumerates every path (exponential on wide DAGs). Here every check is linear in flows plus edges and
walks the flows and their targets in spec order, so the same spec always yields the same messages
in the same order.

A graph is given as ``(name, targets)`` pairs in spec order. Vertices are flow names; a flow's
targets are the flows it waits for. Only the order of the pairs and of each flow's targets affects
which problem is reported first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = [
    "FLOW_NAMES_NOT_UNIQUE",
    "FLOW_NOT_DAG",
    "VERTEX_NOT_DEFINED",
    "Graph",
    "dag_problems",
    "duplicate_name_message",
    "duplicate_names",
    "find_cycle",
    "undefined_targets",
    "upstream_dag_problems",
    "upstream_graph",
    "vertex_not_defined_message",
]

#: Upstream's ``FlowNotDAGError``, the whole message for a cycle (self-dependency included).
FLOW_NOT_DAG = "jobflow Flow is not DAG"
#: Upstream's ``VertexNotDefinedError``; the message is ``FLOW_NOT_DAG: VERTEX_NOT_DEFINED: <target>``.
VERTEX_NOT_DEFINED = "vertex is not defined"
#: The prefix of the duplicate-name message, as in upstream PR #5876 (upstream HEAD accepts duplicates).
FLOW_NAMES_NOT_UNIQUE = "jobflow Flow names must be unique"

Graph = Sequence[tuple[str, Sequence[str]]]

# Colours of the depth-first search.
_WHITE = 0  # not reached yet
_GREY = 1  # on the current path
_BLACK = 2  # finished: it and everything it reaches are free of cycles


def vertex_not_defined_message(target: str) -> str:
    """``jobflow Flow is not DAG: vertex is not defined: <target>``, exactly as upstream."""
    return f"{FLOW_NOT_DAG}: {VERTEX_NOT_DEFINED}: {target}"


def duplicate_name_message(name: str) -> str:
    """``jobflow Flow names must be unique: "<name>"`` (the name quoted like Go's ``%q``)."""
    return f"{FLOW_NAMES_NOT_UNIQUE}: {_quote(name)}"


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def duplicate_names(graph: Graph) -> list[str]:
    """Every name given to more than one flow, once each, in the order their first repeat appears."""
    seen: set[str] = set()
    reported: set[str] = set()
    duplicates: list[str] = []
    for name, _targets in graph:
        if name in seen:
            if name not in reported:
                reported.add(name)
                duplicates.append(name)
        else:
            seen.add(name)
    return duplicates


def undefined_targets(graph: Graph) -> list[str]:
    """Every target that names no flow, once each, in spec order (flows, then each flow's targets)."""
    defined = {name for name, _targets in graph}
    reported: set[str] = set()
    missing: list[str] = []
    for _name, targets in graph:
        for target in targets:
            if target not in defined and target not in reported:
                reported.add(target)
                missing.append(target)
    return missing


def find_cycle(graph: Graph) -> list[str] | None:
    """The first cycle found, as the list of its vertices (``[a]`` for ``a -> a``), or None for a DAG.

    An iterative three-colour depth-first search, started from the flows in spec order and following
    targets in spec order, so each vertex and each edge is handled once and deep chains cannot hit
    Python's recursion limit. Targets that name no flow are ignored here (``undefined_targets``
    reports them). Flows sharing a name are one vertex with the union of their targets.
    """
    adjacency: dict[str, list[str]] = {}
    for name, targets in graph:
        adjacency.setdefault(name, []).extend(targets)

    colour = dict.fromkeys(adjacency, _WHITE)
    for root in adjacency:
        if colour[root] != _WHITE:
            continue
        # The current path, each entry a vertex and the index of the next target to follow.
        path: list[str] = [root]
        next_edge: list[int] = [0]
        colour[root] = _GREY
        while path:
            vertex = path[-1]
            edges = adjacency[vertex]
            index = next_edge[-1]
            if index == len(edges):
                colour[vertex] = _BLACK
                path.pop()
                next_edge.pop()
                continue
            next_edge[-1] = index + 1
            target = edges[index]
            state = colour.get(target)
            if state is None or state == _BLACK:
                continue
            if state == _GREY:
                return path[path.index(target) :]
            colour[target] = _GREY
            path.append(target)
            next_edge.append(0)
    return None


def dag_problems(graph: Graph) -> list[str]:
    """The messages for every graph problem, in a fixed order: duplicates, undefined targets, a cycle.

    Upstream reports only the undefined target or the cycle (and accepts duplicates). The cycle
    message is given once, whatever the number of cycles, exactly as upstream words it.
    """
    problems = [duplicate_name_message(name) for name in duplicate_names(graph)]
    problems.extend(vertex_not_defined_message(target) for target in undefined_targets(graph))
    if find_cycle(graph) is not None:
        problems.append(FLOW_NOT_DAG)
    return problems


def upstream_graph(graph: Graph) -> Graph:
    """``graph`` as upstream's ``graphMap`` holds it: one vertex per name, the last flow of a name winning.

    Upstream assigns ``graphMap[flow.Name] = targets`` flow after flow, so a later flow of a repeated
    name replaces the earlier one's targets. Each name keeps the place of its first flow (only the
    order of the messages depends on it). Without repeated names this is ``graph`` itself.
    """
    merged: dict[str, Sequence[str]] = {}
    for name, targets in graph:
        merged[name] = targets
    return list(merged.items())


def upstream_dag_problems(graph: Graph) -> list[str]:
    """Only the checks upstream's webhook makes, on the graph it makes: undefined targets, then a cycle.

    What an UPDATE that leaves ``spec.flows`` alone is held to (the webhook's ratchet): a JobFlow
    stored with a repeated name is judged as upstream judges it, the repeat itself not being an
    error. Without repeated names the same messages as ``dag_problems``.
    """
    merged = upstream_graph(graph)
    problems = [vertex_not_defined_message(target) for target in undefined_targets(merged)]
    if find_cycle(merged) is not None:
        problems.append(FLOW_NOT_DAG)
    return problems
