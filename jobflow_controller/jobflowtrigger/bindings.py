"""From an event to the run's params: the body's parser and the bindings, as pure functions.

An HTTP trigger's body is tenant text from anyone holding a token that may create JobFlows: it is
bounded before it is decoded (``MAX_BODY_BYTES``, then the JSON's depth and values, measured on the
text as the webhook measures an AdmissionReview), so a body costs at most a few times its 64 KiB.
A binding is a literal ``value`` or a ``cel`` expression over the event's variables (``body``; or
``object``, ``oldObject``, ``type``); its result must be a string, or a number or boolean written
as its string, of at most ``MAX_PARAM_VALUE_LENGTH`` characters. Any other result is a
``BindingError``: a 400 for the caller, a ``TriggerFailed`` Warning for a resource event.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Final

from jobflow_controller.apis.cel_expression import CelError, compile_cel, evaluate_cel
from jobflow_controller.apis.jobflowtrigger import Binding
from jobflow_controller.apis.params import MAX_PARAM_VALUE_LENGTH
from jobflow_controller.webhook.jsonshape import json_shape_problem

__all__ = ["MAX_BODY_BYTES", "MAX_BODY_DEPTH", "MAX_BODY_VALUES", "BindingError", "bind", "parse_body"]

#: The largest body a trigger takes (413 above it, before any of it is read).
MAX_BODY_BYTES: Final = 64 * 1024
#: Nesting and values of a body's JSON, counted on the text before it is decoded.
MAX_BODY_DEPTH: Final = 32
MAX_BODY_VALUES: Final = 10_000


class BindingError(ValueError):
    """A body that is not acceptable JSON, or a binding that gives no usable value (its message says which)."""


def parse_body(data: bytes) -> object:
    """The body as JSON (an empty body is ``{}``); ``BindingError`` for anything else."""
    if len(data) > MAX_BODY_BYTES:
        raise BindingError(f"the body is over {MAX_BODY_BYTES} bytes")
    if not data.strip():
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BindingError(f"the body is not UTF-8: {err.reason}") from None
    problem = json_shape_problem(text, max_values=MAX_BODY_VALUES, max_depth=MAX_BODY_DEPTH)
    if problem is not None:
        raise BindingError(problem)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise BindingError(f"the body is not JSON: {str(err)[:200]}") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def as_param_value(name: str, result: object) -> str:
    """A binding's result as a param value: a string, or a number or boolean written as JSON would."""
    if isinstance(result, bool):
        text = "true" if result else "false"
    elif isinstance(result, int):
        text = str(result)
    elif isinstance(result, float):
        if not math.isfinite(result):
            raise BindingError(f"param {name}: the expression gave {result}, not a finite number")
        text = repr(result) if result != int(result) or abs(result) >= 1e16 else str(int(result))
    elif isinstance(result, str):
        text = result
    else:
        kind = type(result).__name__ if result is not None else "null"
        raise BindingError(f"param {name}: the expression gave a {kind}, not a string, number or boolean")
    if len(text) > MAX_PARAM_VALUE_LENGTH:
        raise BindingError(f"param {name}: the value is over {MAX_PARAM_VALUE_LENGTH} characters")
    return text


def bind(bindings: Sequence[Binding], variables: Mapping[str, object]) -> list[dict[str, str]]:
    """The run's `spec.params`, in the bindings' order; ``BindingError`` on the first that fails."""
    params: list[dict[str, str]] = []
    for binding in bindings:
        if binding.cel is None:
            params.append({"name": binding.name, "value": binding.value or ""})
            continue
        try:
            result = evaluate_cel(compile_cel(binding.cel), variables)
        except CelError as err:
            raise BindingError(f"param {binding.name}: {json.dumps(binding.cel[:80])}: {str(err)[:200]}") from None
        params.append({"name": binding.name, "value": as_param_value(binding.name, result)})
    return params
