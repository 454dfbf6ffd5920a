"""The parameter fields our JobFlow CRD adds (docs/params.md, issue 37), and their CEL rules in the Component.

Base CRD (``params_patch``), all optional and without defaults, so a JobFlow that sets none is
stored exactly as upstream's, and every string and list bounded (issue 42, docs/hostile-input.md),
so that the default install, whose only admission is this schema, never stores a gigabyte of
parameters:

* ``spec.params``: ``{name, value}`` strings, at most ``MAX_PARAMS``, names at most
  ``MAX_PARAM_NAME_LENGTH`` characters, values at most ``MAX_PARAM_VALUE_LENGTH``;
* ``spec.flows[].when``: at most ``MAX_WHEN_EXPRESSIONS`` of ``{input, operator, values}``,
  ``operator`` an enum (``in``, ``notin``), ``values`` one to ``MAX_WHEN_VALUES`` strings, the input
  and each value at most ``MAX_PARAM_VALUE_LENGTH`` characters; or of ``{cel}``, at most
  ``MAX_CEL_LENGTH`` characters (docs/results.md; the Component says which of the two sets);
* ``spec.flows[].matrix``: ``params`` (1 to ``MAX_MATRIX_PARAMS`` lists of ``{name, values}``, each at
  least one and at most ``MAX_MATRIX_COMBINATIONS`` values of at most ``MAX_PARAM_VALUE_LENGTH``
  characters) and ``maxParallel`` (1 to the int32 maximum).

The Component (``params_rules_patch``) adds what needs CEL: the names unique and of the shape
``[A-Za-z_][A-Za-z0-9_-]*`` in ``spec.params`` and in each matrix (estimated from the names'
``maxLength`` 63 and the lists' ``maxItems``: ``distinct`` over at most ``MAX_PARAMS`` names, and
``MAX_MATRIX_PARAMS`` per flow; a regular expression over 63 characters), and a matrix's product of
list sizes at most ``MAX_MATRIX_COMBINATIONS`` (``MATRIX_PRODUCT_RULE``). All far under the per-call
limit; the local control plane installs the Component, so every e2e run has the API server check
the estimates. The 500 Jobs counting every matrix index and the length of ``<jobflow>-<flow>-<N-1>``
are the webhook's and the controller's alone (they need the whole JobFlow and its name).
"""

from __future__ import annotations

from typing import Final

from crdgen.schema import JSONDict, array, int32, obj, string
from jobflow_controller.apis.cel_expression import MAX_CEL_LENGTH
from jobflow_controller.apis.params import (
    MAX_MATRIX_COMBINATIONS,
    MAX_PARAM_NAME_LENGTH,
    MAX_PARAM_VALUE_LENGTH,
    MAX_WHEN_EXPRESSIONS,
    MAX_WHEN_VALUES,
)
from jobflow_controller.validation.limits import MAX_MATRIX_PARAMS, MAX_PARAMS
from jobflow_controller.validation.params import OPERATORS

_SPEC: Final = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties"
PARAMS_POINTER: Final = f"{_SPEC}/params"
WHEN_POINTER: Final = f"{_SPEC}/flows/items/properties/when"
MATRIX_POINTER: Final = f"{_SPEC}/flows/items/properties/matrix"
#: The paths ``params_patch`` adds, in its order.
PARAMS_POINTERS: Final = (PARAMS_POINTER, WHEN_POINTER, MATRIX_POINTER)

#: The largest int32, ``maxParallel``'s bound (its format's range, written out: the schema says it).
MAX_INT32: Final = 2**31 - 1
NAMES_UNIQUE_RULE: Final = "self.map(p, p.name).distinct().size() == self.size()"
NAME_SHAPE_RULE: Final = "self.name.matches('^[A-Za-z_][A-Za-z0-9_-]*$')"
PARAMS_NAMES_UNIQUE_MESSAGE: Final = "jobflow params names must be unique"
PARAMS_NAME_SHAPE_MESSAGE: Final = "jobflow params name must match [A-Za-z_][A-Za-z0-9_-]*"
MATRIX_NAMES_UNIQUE_MESSAGE: Final = "jobflow Flow matrix.params names must be unique"
MATRIX_NAME_SHAPE_MESSAGE: Final = "jobflow Flow matrix.params name must match [A-Za-z_][A-Za-z0-9_-]*"

# The matrix's product of list sizes. CEL has no fold, so the product is written out over the at most
# MAX_MATRIX_PARAMS lists (the base CRD's maxItems): p0 is the first list's size, p<i> the product so
# far, each bound once to a name by mapping a one-element list (the Kubernetes CEL environment has no
# cel.bind; the targets rule in crdgen.rules binds the same way), and a list past the last counts 1.
# A product past PRODUCT_CLAMP stays PRODUCT_CLAMP + 1 from there on, so no multiplication overflows
# int64 (a list has at most about 2^20 values in a 3 MiB request, 2^40 * 2^20 < 2^63) and the rule
# still refuses it. Constant cost: sixteen sizes and multiplications, whatever the lists hold (the
# estimate does not depend on the values), and the same for the message, which names the product.
# Checked on kube-apiserver 1.37: 17 x 16 refused ("has 272 combinations"), 16 x 16 and 256 taken,
# 16 lists of 256 values refused ("has more than 1099511627776 combinations").
#: Where a partial product stops growing (it is then only "more than" this).
PRODUCT_CLAMP: Final = 1 << 40


def matrix_product() -> str:
    """CEL: a matrix's product of list sizes (past ``PRODUCT_CLAMP``, ``PRODUCT_CLAMP + 1``), on the matrix."""

    def step(i: int) -> str:
        size = f"(size(self.params) > {i} ? size(self.params[{i}].values) : 1)"
        return f"(p{i - 1} > {PRODUCT_CLAMP} ? {PRODUCT_CLAMP + 1} : p{i - 1} * {size})"

    last = MAX_MATRIX_PARAMS - 1
    expression = step(last)
    for i in range(last - 1, 0, -1):
        expression = f"[{step(i)}].map(p{i}, {expression})[0]"
    return f"[size(self.params[0].values)].map(p0, {expression})[0]"


#: On each flow's matrix: at most MAX_MATRIX_COMBINATIONS combinations.
MATRIX_PRODUCT_RULE: Final = (
    f"!has(self.params) || size(self.params) == 0 || {matrix_product()} <= {MAX_MATRIX_COMBINATIONS}"
)
MATRIX_PRODUCT_MESSAGE: Final = (
    f"jobflow Flow matrix has more than {MAX_MATRIX_COMBINATIONS} combinations (the product of its params' list sizes)"
)
#: The message naming the product (``has 272 combinations``), as the webhook's does. The product is bound to
#: ``n`` and put in with ``format``: a ``+`` of ``string(n)`` is estimated as a string of any size, and
#: refused by the API server (its estimate 100 times the budget).
MATRIX_PRODUCT_MESSAGE_EXPRESSION: Final = (
    f"[{matrix_product()}].map(n, 'jobflow Flow matrix has %s combinations (the product of its params"
    f" list sizes), more than the {MAX_MATRIX_COMBINATIONS} allowed'.format([n > {PRODUCT_CLAMP} ?"
    f" 'more than {PRODUCT_CLAMP}' : string(n)]))[0]"
)


def params_schema() -> JSONDict:
    entry = obj(
        {
            "name": string(maxLength=MAX_PARAM_NAME_LENGTH, minLength=1),
            "value": string(maxLength=MAX_PARAM_VALUE_LENGTH),
        },
        required=["name", "value"],
    )
    return array(entry, maxItems=MAX_PARAMS)


def when_schema() -> JSONDict:
    """An item is ``{input, operator, values}`` or ``{cel}`` (docs/results.md): every field optional
    here (a structural schema has no ``oneOf``), the Component's ``WHEN_ONE_OF_RULE`` refuses neither
    and a mix, as the webhook and the controller do."""
    expression = obj(
        {
            "cel": string(maxLength=MAX_CEL_LENGTH),
            "input": string(maxLength=MAX_PARAM_VALUE_LENGTH),
            "operator": string(enum=list(OPERATORS)),
            "values": array(string(maxLength=MAX_PARAM_VALUE_LENGTH), maxItems=MAX_WHEN_VALUES, minItems=1),
        },
    )
    return array(expression, maxItems=MAX_WHEN_EXPRESSIONS)


def matrix_schema() -> JSONDict:
    values = array(string(maxLength=MAX_PARAM_VALUE_LENGTH), maxItems=MAX_MATRIX_COMBINATIONS, minItems=1)
    entry = obj(
        {"name": string(maxLength=MAX_PARAM_NAME_LENGTH, minLength=1), "values": values},
        required=["name", "values"],
    )
    return obj(
        {
            "maxParallel": int32(maximum=MAX_INT32, minimum=1),
            "params": array(entry, maxItems=MAX_MATRIX_PARAMS, minItems=1),
        },
        required=["params"],
    )


#: On each `when` item: `cel`, or all of `input`, `operator` and `values`, never a mix (docs/results.md).
WHEN_ONE_OF_RULE: Final = (
    "has(self.cel) ? !has(self.input) && !has(self.operator) && !has(self.values)"
    " : has(self.input) && has(self.operator) && has(self.values)"
)
WHEN_ONE_OF_MESSAGE: Final = "jobflow Flow when item sets cel, or input, operator and values, not both"


def params_patch() -> list[JSONDict]:
    """The ``add``s of the three fields."""
    return [
        {"op": "add", "path": PARAMS_POINTER, "value": params_schema()},
        {"op": "add", "path": WHEN_POINTER, "value": when_schema()},
        {"op": "add", "path": MATRIX_POINTER, "value": matrix_schema()},
    ]


def params_rules_patch() -> list[JSONDict]:
    """The Component's rules: on the names (the JobFlow's params, then a matrix's: the same two rules, each
    list with its own messages; the ``maxLength`` their estimates rest on is the base CRD's), and on each
    matrix its product of list sizes."""
    product = {
        "message": MATRIX_PRODUCT_MESSAGE,
        "messageExpression": MATRIX_PRODUCT_MESSAGE_EXPRESSION,
        "rule": MATRIX_PRODUCT_RULE,
    }
    return [
        *_named_list_rules(PARAMS_POINTER, PARAMS_NAMES_UNIQUE_MESSAGE, PARAMS_NAME_SHAPE_MESSAGE),
        *_named_list_rules(
            f"{MATRIX_POINTER}/properties/params", MATRIX_NAMES_UNIQUE_MESSAGE, MATRIX_NAME_SHAPE_MESSAGE
        ),
        {"op": "add", "path": f"{MATRIX_POINTER}/x-kubernetes-validations", "value": [product]},
        {
            "op": "add",
            "path": f"{WHEN_POINTER}/items/x-kubernetes-validations",
            "value": [{"message": WHEN_ONE_OF_MESSAGE, "rule": WHEN_ONE_OF_RULE}],
        },
    ]


def _named_list_rules(pointer: str, unique_message: str, shape_message: str) -> list[JSONDict]:
    """A list of named items: the names unique and each well-formed."""
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
    ]
