"""``validate_job_flow``: every rule a JobFlow must satisfy before its flows can run.

Shared by the admission webhook (which denies the request) and the controller (which records a
Warning event instead of letting the flow hang). It reads the JobFlow's JSON dict as the API server
stores it and never mutates it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.validation.dag import Graph, dag_problems
from jobflow_controller.validation.names import (
    flow_label_problems,
    job_flow_label_problems,
    job_name_problems,
)

__all__ = ["flow_graph", "validate_job_flow", "validation_message"]


def flow_graph(job_flow: Mapping[str, Any]) -> Graph:
    """The JobFlow's ``spec.flows`` as ``(name, targets)`` pairs in spec order.

    A flow without ``dependsOn`` or ``targets`` has no targets, as upstream's ``graphMap`` has it.
    Absent or null parts of the spec are read as empty.
    """
    spec = _mapping(job_flow.get("spec"))
    graph: list[tuple[str, Sequence[str]]] = []
    for flow in _sequence(spec.get("flows")):
        flow_map = _mapping(flow)
        depends_on = _mapping(flow_map.get("dependsOn"))
        targets = [_string(target) for target in _sequence(depends_on.get("targets"))]
        graph.append((_string(flow_map.get("name")), targets))
    return graph


def validate_job_flow(job_flow: Mapping[str, Any]) -> list[str]:
    """Every problem with ``job_flow``, as messages in a fixed order; empty when it is valid.

    The order, each part in spec order (flows, then each flow's targets):

    1. ``jobflow Flow names must be unique: "<name>"`` for each repeated name (upstream accepts them);
    2. ``jobflow Flow is not DAG: vertex is not defined: <target>`` for each undefined target;
    3. ``jobflow Flow is not DAG`` once if the flows have a cycle (a self-dependency included);
    4. the name rules: ``<namespace>.<jobflow>`` must be a valid label value, and for each flow
       ``<jobflow>-<flow>`` a valid Job name and ``<namespace>.<flow>`` a valid label value (see
       ``names``). Rules needing the JobFlow's name or namespace are skipped while it has none.

    Messages 2 and 3 are upstream's exactly, so for a JobFlow without duplicate names that upstream
    denies, ``problems[0]`` is the message upstream gives (with several undefined targets upstream
    names one at random; this names the first in spec order).
    """
    graph = flow_graph(job_flow)
    problems = dag_problems(graph)

    metadata = _mapping(job_flow.get("metadata"))
    name = _string(metadata.get("name"))
    namespace = _string(metadata.get("namespace"))
    if name and namespace:
        problems.extend(job_flow_label_problems(namespace, name))
    checked: set[str] = set()
    for flow, _targets in graph:
        if flow in checked:
            continue
        checked.add(flow)
        if name:
            problems.extend(job_name_problems(name, flow))
        if namespace:
            problems.extend(flow_label_problems(namespace, flow))
    return problems


def validation_message(job_flow: Mapping[str, Any]) -> str | None:
    """All of ``validate_job_flow``'s messages joined with ``"; "``, or None when the JobFlow is valid.

    With a single problem this is exactly that problem's message (upstream's, for a DAG problem).
    """
    problems = validate_job_flow(job_flow)
    return "; ".join(problems) if problems else None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return value
    return ()


def _string(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
