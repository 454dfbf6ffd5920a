"""``validate_job_flow``: every rule a JobFlow must satisfy before its flows can run.

Shared by the admission webhook (which denies the request) and the controller (which records a
Warning event instead of letting the flow hang). It reads the JobFlow's JSON dict as the API server
stores it and never mutates it.

``validate_job_flow_update`` is the webhook's ratchet for an UPDATE: the rules upstream lacks
(the size caps, repeated names, the name and label rules) apply only when the update changes
``spec.flows``, so a JobFlow stored before they were enforced can still be labelled, annotated or
given another ``jobRetainPolicy``; upstream's own checks (undefined targets, cycles) apply to every UPDATE, as
upstream's webhook, which validates an UPDATE exactly like a CREATE, applies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.apis.retry import retry_annotation_changed, retry_problems
from jobflow_controller.validation.dag import Graph, dag_problems, upstream_dag_problems
from jobflow_controller.validation.jobflowtemplate_ref import template_ref_problems
from jobflow_controller.validation.limits import size_problems
from jobflow_controller.validation.names import entry_name_problems, job_flow_label_problems
from jobflow_controller.validation.params import params_problems, params_spec
from jobflow_controller.validation.patch import flow_patch_problems
from jobflow_controller.validation.probe import flow_probe_problems
from jobflow_controller.validation.results import results_problems
from jobflow_controller.validation.rules import failure_aware_problems, failure_aware_spec

__all__ = [
    "flow_graph",
    "flows_changed",
    "validate_job_flow",
    "validate_job_flow_update",
    "validation_message",
]


def flow_graph(job_flow: Mapping[str, Any]) -> Graph:
    """The JobFlow's ``spec.flows`` as ``(name, targets)`` pairs in spec order.

    A flow without ``dependsOn`` or ``targets`` has no targets, as upstream's ``graphMap`` has it.
    Absent or null parts of the spec are read as empty.
    """
    spec = _mapping(_mapping(job_flow).get("spec"))
    graph: list[tuple[str, Sequence[str]]] = []
    for flow in _sequence(spec.get("flows")):
        flow_map = _mapping(flow)
        depends_on = _mapping(flow_map.get("dependsOn"))
        targets = [_string(target) for target in _sequence(depends_on.get("targets"))]
        graph.append((_string(flow_map.get("name")), targets))
    return graph


def validate_job_flow(job_flow: Mapping[str, Any], *, patches: bool = True, retries: bool = True) -> list[str]:
    """Every problem with ``job_flow``, as messages in a fixed order; empty when it is valid.

    The order, each part in spec order (flows, then each flow's targets):

    0. the size caps (``limits``; upstream has none): ``jobflow has 501 flows, more than the 500
       allowed``, then ``jobflow Flow "<flow>": dependsOn.targets: has 101 targets, more than the
       100 allowed`` for each flow over the targets cap;
    1. ``jobflow Flow names must be unique: "<name>"`` for each repeated name (upstream accepts them);
    2. ``jobflow Flow is not DAG: vertex is not defined: <target>`` for each undefined target;
    3. ``jobflow Flow is not DAG`` once if the flows have a cycle (a self-dependency included);
    4. the name rules: ``<namespace>.<jobflow>`` must be a valid label value, and for each flow
       ``<jobflow>-<flow>`` a valid Job name and ``<namespace>.<flow>`` a valid label value (see
       ``names``). Rules needing the JobFlow's name or namespace are skipped while it has none;
    4b. the failure-aware fields (``rules``, docs/rules.md): each flow's ``dependsOn.rule`` and
       ``continueOnFailure`` (``jobflow Flow "<flow>": dependsOn.rule: must be one of ...``), then
       ``failurePolicy``, then ``finally`` (its cap, each entry's name);
    4c. ``spec.params``, each flow's ``when`` and ``matrix``, the Jobs counting every matrix index
       (``params``, docs/params.md); each flow's ``results`` (``results``, docs/results.md);
    5. with ``patches`` (admission), each flow's ``patch`` problems that need no template
       (``jobflow Flow "<flow>": patch.jobSpec.tasks[1]: has no name (...)``, see ``patch``), and each
       finally entry's (``jobflow Finally "<name>": patch...``), then
       each flow's ``dependsOn.probe`` problems that need no Job (``jobflow Flow "<flow>":
       dependsOn.probe.tcpSocketList[0].port: must be between 1 and 65535, not 0``, see ``probe``).
       The controller passes ``patches=False``: a bad patch or probe stops only its own flow there;
    6. with ``retries`` (admission), the problems of each flow's ``retry`` field
       (``jobflow Flow "<flow>": retry.maxRetries: must not be negative, got -1``), then those of the
       ``flow.volcano.sh/retry`` annotation (``annotation flow.volcano.sh/retry["<flow>"].backoff:
       ...``), see ``apis.retry`` and docs/retry.md. The controller passes ``retries=False``: a
       malformed policy there means a Warning and no retries for that flow only.

    Messages 2 and 3 are upstream's exactly, so for a JobFlow within the caps and without duplicate
    names that upstream denies, ``problems[0]`` is the message upstream gives (with several undefined targets upstream
    names one at random; this names the first in spec order).
    """
    graph = flow_graph(job_flow)
    problems = size_problems(graph)
    problems.extend(dag_problems(graph))

    metadata = _mapping(_mapping(job_flow).get("metadata"))
    name = _string(metadata.get("name"))
    namespace = _string(metadata.get("namespace"))
    if name and namespace:
        problems.extend(job_flow_label_problems(namespace, name))
    for flow in dict.fromkeys(flow for flow, _targets in graph):
        problems.extend(entry_name_problems(name, namespace, flow))
    problems.extend(failure_aware_problems(job_flow))
    problems.extend(params_problems(job_flow))
    problems.extend(results_problems(job_flow))
    problems.extend(template_ref_problems(job_flow))  # docs/templates.md
    if patches:
        problems.extend(flow_patch_problems(job_flow))
        problems.extend(flow_probe_problems(job_flow))
    if retries:
        problems.extend(retry_problems(job_flow))
    return problems


def flows_changed(job_flow: Mapping[str, Any], old_job_flow: Mapping[str, Any]) -> bool:
    """Whether ``spec.flows`` differs between the two (absent, null and ``[]`` are all no flows), or
    ``spec.finally`` or ``spec.failurePolicy`` (``rules.failure_aware_spec``), which the flows' rules read,
    or ``spec.params`` (``params.params_spec``), which the flows' Jobs and conditions read."""
    new = (_flows(job_flow), failure_aware_spec(job_flow), params_spec(job_flow))
    return new != (_flows(old_job_flow), failure_aware_spec(old_job_flow), params_spec(old_job_flow))


def validate_job_flow_update(
    job_flow: Mapping[str, Any], old_job_flow: Mapping[str, Any], *, patches: bool = True, retries: bool = True
) -> list[str]:
    """The problems that refuse an UPDATE from ``old_job_flow`` to ``job_flow``; empty when it may go on.

    If ``spec.flows`` changed (or ``spec.finally`` or ``spec.failurePolicy``, see ``flows_changed``):
    everything ``validate_job_flow`` reports, as for a CREATE. If not
    (metadata, ``jobRetainPolicy``): only upstream's checks on upstream's graph
    (``upstream_dag_problems``), so what was stored while the stricter rules (the size caps and the
    patch rules included: a patch is part of ``spec.flows``) were not enforced is never refused for them,
    while a cycle or an undefined target is refused as upstream refuses it.
    (The name and label rules depend only on the flows and on the name and namespace, which an
    UPDATE cannot change.) The ``retry`` fields are part of ``spec.flows``: checked when the flows
    changed, with everything else. The ``flow.volcano.sh/retry`` annotation is checked then too, or
    when the annotation itself changed (alone, with upstream's checks).
    """
    if flows_changed(job_flow, old_job_flow):
        return validate_job_flow(job_flow, patches=patches, retries=retries)
    problems = upstream_dag_problems(flow_graph(job_flow))
    if retries and retry_annotation_changed(job_flow, old_job_flow):
        problems.extend(retry_problems(job_flow))
    return problems


def validation_message(
    job_flow: Mapping[str, Any],
    old_job_flow: Mapping[str, Any] | None = None,
    *,
    patches: bool = True,
    retries: bool = True,
) -> str | None:
    """The problems joined with ``"; "``, or None when the JobFlow is valid.

    Without ``old_job_flow`` (a CREATE, the controller) those of ``validate_job_flow``; with it (an
    UPDATE) those of ``validate_job_flow_update``. With a single problem this is exactly that
    problem's message (upstream's, for a DAG problem). ``patches=False`` leaves out the patch and probe
    problems (the controller reports those per flow); ``retries=False`` the retry policies'.
    """
    problems = (
        validate_job_flow(job_flow, patches=patches, retries=retries)
        if old_job_flow is None
        else validate_job_flow_update(job_flow, old_job_flow, patches=patches, retries=retries)
    )
    return "; ".join(problems) if problems else None


def _flows(job_flow: Mapping[str, Any]) -> list[Any]:
    return list(_sequence(_mapping(_mapping(job_flow).get("spec")).get("flows")))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def _sequence(value: object) -> Sequence[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return value
    return ()


def _string(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
