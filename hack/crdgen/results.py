"""The results fields our JobFlow CRD adds (docs/results.md, issue 43), bounded as every field of ours.

``results_patch``, all optional and without defaults (a JobFlow that sets none is stored as upstream's):

* ``spec.flows[].results``: ``names``, one to ``MAX_RESULT_NAMES`` strings of at most
  ``MAX_RESULT_NAME_LENGTH`` characters, each matching ``RESULT_NAME`` (a ``pattern``: the regular
  expression the webhook and the controller check), unique (a set); ``from.task`` at most
  ``MAX_TASK_NAME_LENGTH`` characters;
* ``status.jobStatusList[].results``: a map of at most ``MAX_RESULT_NAMES`` names to values of at most
  ``MAX_RESULT_BYTES`` characters, written by the controller only;
* ``spec.results``: the JobFlow's own, at most ``MAX_JOBFLOW_RESULTS`` ``{name, value}`` (a list-map keyed
  by name, so a name is unique), names as a flow result's, values at most ``MAX_RESULT_BYTES`` characters;
* ``status.results``: the same shape, written by the controller when the JobFlow Succeeds.
"""

from __future__ import annotations

from typing import Final

from crdgen.schema import JSONDict, array, map_of, obj, string
from jobflow_controller.apis.results import (
    MAX_JOBFLOW_RESULTS,
    MAX_RESULT_BYTES,
    MAX_RESULT_NAME_LENGTH,
    MAX_RESULT_NAMES,
    MAX_TASK_NAME_LENGTH,
    RESULT_NAME,
)

_ROOT: Final = "/spec/versions/0/schema/openAPIV3Schema/properties"
FLOW_RESULTS_POINTER: Final = f"{_ROOT}/spec/properties/flows/items/properties/results"
JOB_RESULTS_POINTER: Final = f"{_ROOT}/status/properties/jobStatusList/items/properties/results"
SPEC_RESULTS_POINTER: Final = f"{_ROOT}/spec/properties/results"
STATUS_RESULTS_POINTER: Final = f"{_ROOT}/status/properties/results"
#: The paths ``results_patch`` adds, in its order.
RESULTS_POINTERS: Final = (FLOW_RESULTS_POINTER, JOB_RESULTS_POINTER, SPEC_RESULTS_POINTER, STATUS_RESULTS_POINTER)


def flow_results_schema() -> JSONDict:
    name = string(maxLength=MAX_RESULT_NAME_LENGTH, minLength=1, pattern=f"^{RESULT_NAME.pattern}$")
    names = array(name, maxItems=MAX_RESULT_NAMES, minItems=1, **{"x-kubernetes-list-type": "set"})
    source = obj({"task": string(maxLength=MAX_TASK_NAME_LENGTH, minLength=1)}, required=["task"])
    return obj({"from": source, "names": names}, required=["names"])


def job_results_schema() -> JSONDict:
    values = map_of(string(maxLength=MAX_RESULT_BYTES))
    values["maxProperties"] = MAX_RESULT_NAMES
    return values


def own_results_schema() -> JSONDict:
    """``spec.results`` and ``status.results``: ``{name, value}`` entries, unique by name."""
    name = string(maxLength=MAX_RESULT_NAME_LENGTH, minLength=1, pattern=f"^{RESULT_NAME.pattern}$")
    entry = obj({"name": name, "value": string(maxLength=MAX_RESULT_BYTES)}, required=["name", "value"])
    extensions = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    return array(entry, maxItems=MAX_JOBFLOW_RESULTS, **extensions)


def results_patch() -> list[JSONDict]:
    """The ``add``s of the four fields."""
    return [
        {"op": "add", "path": FLOW_RESULTS_POINTER, "value": flow_results_schema()},
        {"op": "add", "path": JOB_RESULTS_POINTER, "value": job_results_schema()},
        {"op": "add", "path": SPEC_RESULTS_POINTER, "value": own_results_schema()},
        {"op": "add", "path": STATUS_RESULTS_POINTER, "value": own_results_schema()},
    ]
