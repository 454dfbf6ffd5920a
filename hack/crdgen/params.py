"""The parameter fields our JobFlow CRD adds (docs/params.md, issue 37), and their CEL rules in the Component.

Base CRD (``params_patch``), all optional and without defaults, so a JobFlow that sets none is
stored exactly as upstream's:

* ``spec.params``: ``{name, value}`` strings, at most ``MAX_PARAMS``;
* ``spec.flows[].when``: ``{input, operator, values}``, ``operator`` an enum (``in``, ``notin``),
  ``values`` at least one string;
* ``spec.flows[].matrix``: ``params`` (1 to ``MAX_MATRIX_PARAMS`` lists of ``{name, values}``, each at
  least one and at most ``MAX_MATRIX_COMBINATIONS`` values) and ``maxParallel`` (at least 1).

The Component (``params_rules_patch``) adds what needs CEL: the names unique and of the shape
``[A-Za-z_][A-Za-z0-9_-]*`` in ``spec.params`` and in each matrix, with ``maxLength`` 63 on the names
(the bound the estimates need). The rules are of the kind ``crdgen.rules`` estimates (``distinct``
over at most ``MAX_PARAMS`` names, and ``MAX_MATRIX_PARAMS`` per flow; a regular expression over 63
characters): far under the per-call limit; the local control plane installs the Component, so every
e2e run has the API server check the estimates.
The 256 combinations, the 500 Jobs counting every matrix index and the length of
``<jobflow>-<flow>-<N-1>`` are the webhook's and the controller's alone (a product of list sizes has
no cheap CEL form, and the names need the JobFlow's).
"""

from __future__ import annotations

from typing import Final

from crdgen.schema import JSONDict, array, int32, obj, string
from jobflow_controller.apis.params import MAX_MATRIX_COMBINATIONS
from jobflow_controller.validation.limits import MAX_MATRIX_PARAMS, MAX_PARAMS
from jobflow_controller.validation.params import OPERATORS

_SPEC: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties"
PARAMS_POINTER: Final = f"{_SPEC}/params"
WHEN_POINTER: Final = f"{_SPEC}/flows/items/properties/when"
MATRIX_POINTER: Final = f"{_SPEC}/flows/items/properties/matrix"
#: The paths ``params_patch`` adds, in its order.
PARAMS_POINTERS: Final = (PARAMS_POINTER, WHEN_POINTER, MATRIX_POINTER)

#: The longest parameter name the Component allows (the bound its estimates rest on).
MAX_PARAM_NAME_LENGTH: Final = 63
NAMES_UNIQUE_RULE: Final = "self.map(p, p.name).distinct().size() == self.size()"
NAME_SHAPE_RULE: Final = "self.name.matches('^[A-Za-z_][A-Za-z0-9_-]*$')"
PARAMS_NAMES_UNIQUE_MESSAGE: Final = "jobflow params names must be unique"
PARAMS_NAME_SHAPE_MESSAGE: Final = "jobflow params name must match [A-Za-z_][A-Za-z0-9_-]*"
MATRIX_NAMES_UNIQUE_MESSAGE: Final = "jobflow Flow matrix.params names must be unique"
MATRIX_NAME_SHAPE_MESSAGE: Final = "jobflow Flow matrix.params name must match [A-Za-z_][A-Za-z0-9_-]*"


def params_schema() -> JSONDict:
    return array(obj({"name": string(minLength=1), "value": string()}, required=["name", "value"]), maxItems=MAX_PARAMS)


def when_schema() -> JSONDict:
    expression = obj(
        {"input": string(), "operator": string(enum=list(OPERATORS)), "values": array(string(), minItems=1)},
        required=["input", "operator", "values"],
    )
    return array(expression)


def matrix_schema() -> JSONDict:
    entry = obj(
        {"name": string(minLength=1), "values": array(string(), maxItems=MAX_MATRIX_COMBINATIONS, minItems=1)},
        required=["name", "values"],
    )
    return obj(
        {"maxParallel": int32(minimum=1), "params": array(entry, maxItems=MAX_MATRIX_PARAMS, minItems=1)},
        required=["params"],
    )


def params_patch() -> list[JSONDict]:
    """The ``add``s of the three fields."""
    return [
        {"op": "add", "path": PARAMS_POINTER, "value": params_schema()},
        {"op": "add", "path": WHEN_POINTER, "value": when_schema()},
        {"op": "add", "path": MATRIX_POINTER, "value": matrix_schema()},
    ]


def params_rules_patch() -> list[JSONDict]:
    """The Component's rules on the names, and the ``maxLength`` they need: the JobFlow's params, then a
    matrix's (the same three rules, each list with its own messages)."""
    return [
        *_named_list_rules(PARAMS_POINTER, PARAMS_NAMES_UNIQUE_MESSAGE, PARAMS_NAME_SHAPE_MESSAGE),
        *_named_list_rules(
            f"{MATRIX_POINTER}/properties/params", MATRIX_NAMES_UNIQUE_MESSAGE, MATRIX_NAME_SHAPE_MESSAGE
        ),
    ]


def _named_list_rules(pointer: str, unique_message: str, shape_message: str) -> list[JSONDict]:
    """A list of named items: the names unique, each well-formed, and bounded for CEL's cost estimate."""
    return [
        {
            "op": "add",
            "path": f"{pointer}/x-kubernetes-validations",
            "value": [{"message": unique_message, "rule": NAMES_UNIQUE_RULE}],
        },
        {
            "op": "add",
            "path": f"{pointer}/items/x-kubernetes-validations",
            "value": [{"message": shape_message, "rule": NAME_SHAPE_RULE}],
        },
        {"op": "add", "path": f"{pointer}/items/properties/name/maxLength", "value": MAX_PARAM_NAME_LENGTH},
    ]
