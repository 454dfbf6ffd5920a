"""``jobflowtemplates.flow.volcano.sh`` (ours, docs/templates.md), the JobFlow's run fields, and their CEL rules.

* The JobFlowTemplate CRD: ``spec.params[]`` ``{name, default, description}`` and ``spec.jobFlow``,
  the JobFlow CRD's own ``spec`` schema as we ship it, taken whole (as the CronJobFlow's template),
  so every JobFlow field is accepted in a template exactly as in a JobFlow. Printer columns: the
  params' and the flows' names (a count is no JSONPath), the age.
* On the JobFlow: ``spec.jobFlowTemplateRef`` ``{name}`` (the run's values are ``spec.params``, which
  exists already) and ``status.storedJobFlowTemplateSpec``, the spec a run was fixed to, as JSON text
  (a string of at most ``MAX_STORED_SPEC_BYTES``: the spec's schema again would double the CRD).
* The Component's rules: on a JobFlow's spec, ``flows`` and ``jobFlowTemplateRef`` never together;
  on a template, its name at most 63 characters (the runs' label value), its params' names unique
  and of the params' shape, and the JobFlow Component's rules carried to ``spec.jobFlow``.
"""

from __future__ import annotations

import copy
from typing import Final

from crdgen.params import NAME_SHAPE_RULE, NAMES_UNIQUE_RULE
from crdgen.schema import JSONDict, array, custom_resource_definition, obj, string
from jobflow_controller.apis.jobflowtemplate import (
    MAX_DESCRIPTION_LENGTH,
    MAX_STORED_SPEC_BYTES,
    MAX_TEMPLATE_NAME_LENGTH,
)
from jobflow_controller.apis.params import MAX_PARAM_NAME_LENGTH, MAX_PARAM_VALUE_LENGTH
from jobflow_controller.validation.limits import MAX_PARAMS

_ROOT: Final = "/spec/versions/0/schema/openAPIV3Schema"
_SPEC: Final = f"{_ROOT}/properties/spec"
TEMPLATE_REF_POINTER: Final = f"{_SPEC}/properties/jobFlowTemplateRef"
STORED_SPEC_POINTER: Final = f"{_ROOT}/properties/status/properties/storedJobFlowTemplateSpec"
TEMPLATE_JOB_FLOW_POINTER: Final = f"{_SPEC}/properties/jobFlow"
#: The paths the JobFlow CRD gets for runs from a template.
TEMPLATE_RUN_POINTERS: Final = (TEMPLATE_REF_POINTER, STORED_SPEC_POINTER)

REF_EXCLUSIVE_RULE: Final = "!has(self.jobFlowTemplateRef) || !has(self.flows) || size(self.flows) == 0"
REF_EXCLUSIVE_MESSAGE: Final = (
    "spec.flows and spec.jobFlowTemplateRef are mutually exclusive: a run takes its flows from the template"
)
TEMPLATE_NAME_RULE: Final = f"size(self.metadata.name) <= {MAX_TEMPLATE_NAME_LENGTH}"
TEMPLATE_NAME_MESSAGE: Final = (
    f"metadata.name must be no more than {MAX_TEMPLATE_NAME_LENGTH} characters (it is the runs' label value)"
)
TEMPLATE_NO_REF_RULE: Final = "!has(self.jobFlowTemplateRef) && !has(self.params)"
TEMPLATE_NO_REF_MESSAGE: Final = (
    "spec.jobFlow may set neither jobFlowTemplateRef nor params (declare params in spec.params)"
)
PARAMS_NAMES_UNIQUE_MESSAGE: Final = "jobflowtemplate params names must be unique"
PARAMS_NAME_SHAPE_MESSAGE: Final = "jobflowtemplate params name must match [A-Za-z_][A-Za-z0-9_-]*"


def template_ref_schema() -> JSONDict:
    return obj({"name": string(maxLength=MAX_TEMPLATE_NAME_LENGTH, minLength=1)}, required=["name"])


def template_run_patch() -> list[JSONDict]:
    """The ``add``s of the JobFlow CRD: the reference, then the stored spec (its JSON text, bounded)."""
    return [
        {"op": "add", "path": TEMPLATE_REF_POINTER, "value": template_ref_schema()},
        {"op": "add", "path": STORED_SPEC_POINTER, "value": string(maxLength=MAX_STORED_SPEC_BYTES)},
    ]


def template_ref_rules_patch() -> list[JSONDict]:
    """The Component's rule on a JobFlow's spec (joined with the other rules on spec)."""
    return [
        {
            "op": "add",
            "path": f"{_SPEC}/x-kubernetes-validations",
            "value": [{"message": REF_EXCLUSIVE_MESSAGE, "rule": REF_EXCLUSIVE_RULE}],
        }
    ]


def jobflowtemplate_crd(jobflow_spec: JSONDict) -> JSONDict:
    """``jobflowtemplates.flow.volcano.sh``; ``jobflow_spec`` (the JobFlow CRD's spec schema) is ``spec.jobFlow``."""
    declaration = obj(
        {
            "default": string(maxLength=MAX_PARAM_VALUE_LENGTH),
            "description": string(maxLength=MAX_DESCRIPTION_LENGTH),
            "name": string(maxLength=MAX_PARAM_NAME_LENGTH, minLength=1),
        },
        required=["name"],
    )
    spec = obj(
        {"jobFlow": copy.deepcopy(jobflow_spec), "params": array(declaration, maxItems=MAX_PARAMS)},
        required=["jobFlow"],
    )
    schema = obj({"apiVersion": string(), "kind": string(), "metadata": {"type": "object"}, "spec": spec})
    crd = custom_resource_definition(
        "flow.volcano.sh",
        "JobFlowTemplate",
        "jobflowtemplates",
        "jobflowtemplate",
        ["jft"],
        schema,
        [
            {"jsonPath": ".spec.params[*].name", "name": "Params", "type": "string"},
            {"jsonPath": ".spec.jobFlow.flows[*].name", "name": "Flows", "type": "string"},
            {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        ],
    )
    del crd["spec"]["versions"][0]["subresources"]  # no status: nothing writes one
    return crd


def template_validation_patch(jobflow_patch: list[JSONDict]) -> list[JSONDict]:
    """The Component's patch of ``jobflowtemplates.flow.volcano.sh``: the template's own rules, then the
    JobFlow rules (``jobflow_patch``) moved from a JobFlow's spec to ``spec.jobFlow``."""
    own: list[JSONDict] = [
        {
            "op": "add",
            "path": f"{_ROOT}/x-kubernetes-validations",
            "value": [{"message": TEMPLATE_NAME_MESSAGE, "rule": TEMPLATE_NAME_RULE}],
        },
        {
            "op": "add",
            "path": f"{_SPEC}/properties/params/x-kubernetes-validations",
            "value": [{"message": PARAMS_NAMES_UNIQUE_MESSAGE, "rule": NAMES_UNIQUE_RULE}],
        },
        {
            "op": "add",
            "path": f"{_SPEC}/properties/params/items/x-kubernetes-validations",
            "value": [{"message": PARAMS_NAME_SHAPE_MESSAGE, "rule": NAME_SHAPE_RULE}],
        },
    ]
    moved: list[JSONDict] = []
    for operation in jobflow_patch:
        path = str(operation["path"])
        if not path.startswith(_SPEC):
            raise ValueError(f"a JobFlow rule outside spec cannot be carried into the template: {path}")
        value = operation["value"]
        if path == f"{_SPEC}/x-kubernetes-validations":
            value = [*value, {"message": TEMPLATE_NO_REF_MESSAGE, "rule": TEMPLATE_NO_REF_RULE}]
        moved.append({**operation, "path": TEMPLATE_JOB_FLOW_POINTER + path[len(_SPEC) :], "value": value})
    return [*own, *moved]
