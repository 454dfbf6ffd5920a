"""Size, DAG, name and patch-shape rules for JobFlows, shared by the admission webhook and the controller.

``validate_job_flow(job_flow) -> list[str]`` returns every problem (empty when valid);
``validate_job_flow_update(job_flow, old_job_flow)`` those that refuse an UPDATE (the stricter
rules only when ``spec.flows`` changed); ``validation_message(job_flow, old_job_flow=None) -> str |
None`` joins them into one admission message. All read the JobFlow's JSON dict. ``MAX_FLOWS`` and
``MAX_TARGETS`` and ``MAX_FINALLY`` (``limits``) are the size caps, the numbers the CRD's ``maxItems``
are generated from; ``RULES`` and ``FAILURE_POLICIES`` (``rules``) the values its enums are.
This package imports nothing else of the project but ``apis.patch``, ``apis.patch_fields``,
``apis.probe`` and ``apis.retry`` (pure functions on JSON dicts, which say what a flow's ``patch``,
``dependsOn.probe`` and ``retry`` may hold).
"""

from jobflow_controller.validation.dag import (
    FLOW_NAMES_NOT_UNIQUE,
    FLOW_NOT_DAG,
    VERTEX_NOT_DEFINED,
    dag_problems,
    duplicate_name_message,
    find_cycle,
    upstream_dag_problems,
    vertex_not_defined_message,
)
from jobflow_controller.validation.jobflow import (
    flow_graph,
    flows_changed,
    validate_job_flow,
    validate_job_flow_update,
    validation_message,
)
from jobflow_controller.validation.limits import MAX_FINALLY, MAX_FLOWS, MAX_TARGETS, size_problems
from jobflow_controller.validation.names import MAX_JOB_NAME_LENGTH, MAX_LABEL_VALUE_LENGTH
from jobflow_controller.validation.patch import flow_patch_field_problems, flow_patch_problems
from jobflow_controller.validation.probe import flow_probe_problems
from jobflow_controller.validation.rules import FAILURE_POLICIES, RULES, failure_aware_problems

__all__ = [
    "FAILURE_POLICIES",
    "FLOW_NAMES_NOT_UNIQUE",
    "FLOW_NOT_DAG",
    "MAX_FINALLY",
    "MAX_FLOWS",
    "MAX_JOB_NAME_LENGTH",
    "MAX_LABEL_VALUE_LENGTH",
    "MAX_TARGETS",
    "RULES",
    "VERTEX_NOT_DEFINED",
    "dag_problems",
    "duplicate_name_message",
    "failure_aware_problems",
    "find_cycle",
    "flow_graph",
    "flow_patch_field_problems",
    "flow_patch_problems",
    "flow_probe_problems",
    "flows_changed",
    "size_problems",
    "upstream_dag_problems",
    "validate_job_flow",
    "validate_job_flow_update",
    "validation_message",
    "vertex_not_defined_message",
]
