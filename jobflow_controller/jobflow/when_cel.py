"""Ours, opt-in (docs/results.md): a `when` item's `cel`, judged as a pure function.

The expression sees three maps of strings, built from the variables a `when` input expands with
(params_policy.py's and results_policy.py's): `params` (`params['mode']`), `flows` (each flow the
flow depends on, with results: `flows['train'].results['accuracy']`, a matrix flow's value the list
of its Jobs' values) and `context` (`context['jobflow.name']`). No `$(...)` is ever substituted into
the text, so a value cannot change the expression.

It must return a bool: false skips the flow as a false `input` item does (the `Skipped` event quotes
the expression); an evaluation error or another type is `InvalidWhen`, and the flow counts as Failed.
Compiled programs are cached by text (apis/cel_expression.py).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.cel_expression import CelError, compile_cel, evaluate_cel
from jobflow_controller.apis.results import MAX_TOTAL_RESULT_BYTES, result_reference
from jobflow_controller.apis.tenant_text import load_json
from jobflow_controller.jobflow.world import WarningEvent

#: The Normal `Skipped` event's message for a flow whose `cel` item is false (the reason is
#: docs/rules.md's). Arguments: the flow, the expression quoted and cut to `MAX_QUOTED` characters.
MESSAGE_SKIPPED_WHEN_CEL: Final = "flow %s skipped: when cel %s is false"
#: The Warning when a `cel` item cannot be judged; the flow counts as Failed (dependency rules,
#: `failurePolicy` and `finally` apply as to a failed flow). Once per flow, item and generation.
#: Arguments: the flow, the item's index, the expression quoted, the error.
REASON_INVALID_WHEN: Final = "InvalidWhen"
MESSAGE_INVALID_WHEN: Final = "Flow %s, when[%d].cel %s: %s; the flow counts as Failed"
MAX_QUOTED: Final = 200
#: The longest error quoted (the library's message may quote the expression).
MAX_ERROR: Final = 300

#: Values kept by (expression, variables): a few per flow with a `cel` of the JobFlows in flight.
VERDICTS_CACHED: Final = 1024
#: The longest `[*]` value read: every result of the JobFlow, each escaped (results_policy.py writes it).
MAX_ARRAY_BYTES: Final = 2 * MAX_TOTAL_RESULT_BYTES
_PREFIXES: Final = {"params.": "params", "context.": "context"}


@dataclass(frozen=True)
class WhenCelFalse:
    """A `cel` item that returned false."""

    text: str
    message_fmt: str = MESSAGE_SKIPPED_WHEN_CEL

    def message_args(self, flow_name: str) -> tuple[str, str]:
        return (flow_name, quote(self.text))


@dataclass(frozen=True)
class WhenInvalid:
    """A `cel` item that could not be judged: the flow counts as Failed."""

    index: int
    text: str
    error: str

    def warning_args(self, flow_name: str) -> tuple[str, int, str, str]:
        return (flow_name, self.index, quote(self.text), self.error[:MAX_ERROR])


def invalid_when_warnings(invalid: Mapping[str, WhenInvalid]) -> list[tuple[str, WarningEvent]]:
    """One `InvalidWhen` Warning per flow, with its cause (the flow and the item: given once per
    cause and JobFlow generation, input_warnings.py)."""
    return [
        (f"{flow}/{verdict.index}", WarningEvent(REASON_INVALID_WHEN, MESSAGE_INVALID_WHEN, verdict.warning_args(flow)))
        for flow, verdict in invalid.items()
    ]


def judge_cel(index: int, text: str, variables: Mapping[str, str]) -> WhenCelFalse | WhenInvalid | None:
    """None when the item holds, `WhenCelFalse` when it is false, `WhenInvalid` when it cannot say."""
    verdict = _VERDICTS.get(text, variables)
    if isinstance(verdict, str):
        return WhenInvalid(index, text, verdict)
    return None if verdict else WhenCelFalse(text)


def _verdict(text: str, variables: Mapping[str, str]) -> bool | str:
    """True or False, or why the expression cannot be judged."""
    try:
        value = evaluate_cel(compile_cel(text), cel_variables(variables))
    except CelError as err:
        return str(err)
    if not isinstance(value, bool):
        return f"must return a bool, returned {type(value).__name__}"
    return value


class _Verdicts:
    """Verdicts by (expression, a digest of the variables). CEL is pure (no clock, no I/O), and a flow
    skipped or failed by `when` has no Job, so every sync of its JobFlow judges it again: with the same
    results and params that costs a digest, not an evaluation. Bounded, least recently used first out;
    only the verdict is kept (never the value, nor the variables)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, bytes], bool | str] = OrderedDict()

    def get(self, text: str, variables: Mapping[str, str]) -> bool | str:
        digest = hashlib.sha256()
        for name, value in sorted(variables.items()):
            digest.update(f"{len(name)}:{name}{len(value)}:".encode())
            digest.update(value.encode("utf-8", "surrogatepass"))
        key = (text, digest.digest())
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        verdict = _verdict(text, variables)
        with self._lock:
            self._kept[key] = verdict
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return verdict


_VERDICTS: Final = _Verdicts(VERDICTS_CACHED)


def cel_variables(variables: Mapping[str, str]) -> dict[str, Any]:
    """The `$(VAR)` variables of a `when` (`params.X`, `context.Y`, `flows.F.results.N`, and
    `flows.F.results.N[*]`, a JSON array) as the three maps a `cel` item sees."""
    out: dict[str, Any] = {"params": {}, "flows": {}, "context": {}}
    for name, value in variables.items():
        prefix = next((p for p in _PREFIXES if name.startswith(p)), None)
        if prefix is not None:
            out[_PREFIXES[prefix]][name[len(prefix) :]] = value
            continue
        reference = result_reference(name)
        if reference is None:
            continue
        results = out["flows"].setdefault(reference.flow, {"results": {}})["results"]
        results[reference.name] = _array(value) if reference.array else value
    return out


def _array(value: str) -> list[str]:
    """A matrix flow's `[*]` value (a JSON array of strings, results_policy.py's) as a list."""
    found, problem = load_json(value, "results", max_bytes=MAX_ARRAY_BYTES)
    if problem is not None:
        return []
    return [v if isinstance(v, str) else json.dumps(v) for v in found] if isinstance(found, list) else []


def quote(text: str) -> str:
    """`text` as a JSON string, its first `MAX_QUOTED` characters only, the cut marked."""
    quoted = json.dumps(text[:MAX_QUOTED], ensure_ascii=False)
    return quoted if len(text) <= MAX_QUOTED else f"{quoted}... ({len(text)} characters)"
