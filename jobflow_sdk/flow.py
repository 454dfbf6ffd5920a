"""`Flow`: one entry of a JobFlow's `spec.flows` (or `spec.finally`), and the `>>` that links them.

`a >> b` makes b depend on a and returns b, so `a >> b >> c` reads as the chain it builds;
`[a, b] >> c` makes c wait for both, `a >> [b, c]` fans out. `after=` says the same from the other
end. A flow's fields are the CRD's, in Python's spelling (`max_parallel` for `maxParallel`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: A `when` condition: (input, operator, values), as the CRD spells it `{input, operator, values}`; or
#: a CEL expression, a bare string (`{cel}`, docs/results.md).
When = tuple[str, str, Sequence[str] | str] | Mapping[str, Any] | str
#: The fields a flow entry may have, in the order `to_dict` writes them.
FLOW_FIELDS = (
    "name",
    "dependsOn",
    "when",
    "matrix",
    "results",
    "continueOnFailure",
    "retry",
    "activeDeadlineSeconds",
    "patch",
)


def result_reference(flow: str, result: str, matrix: bool = False) -> str:
    """The reference to a flow's result (`$(flows.train.results.accuracy)`; a matrix flow's is the
    JSON array of its Jobs' values, `$(flows.sweep.results.accuracy[*])`), docs/results.md."""
    return f"$(flows.{flow}.results.{result}{'[*]' if matrix else ''})"


def results_dict(results: Sequence[str] | Mapping[str, Any], task: str | None) -> dict[str, Any]:
    """`results=["accuracy", "model"]` (and `results_from="master"`) as `{from: {task}, names}`; a
    dict is the CRD's shape."""
    if isinstance(results, Mapping):
        return copy.deepcopy(dict(results))
    shaped: dict[str, Any] = {"from": {"task": task}} if task is not None else {}
    shaped["names"] = [results] if isinstance(results, str) else list(results)
    return shaped


def when_dict(condition: When) -> dict[str, Any]:
    """A `when` entry from `(input, operator, values)` (one value may be a bare string), a CEL
    expression (a string: `{cel}`) or a dict."""
    if isinstance(condition, Mapping):
        return dict(condition)
    if isinstance(condition, str):
        return {"cel": condition}
    input_, operator, values = condition
    return {"input": input_, "operator": operator, "values": [values] if isinstance(values, str) else list(values)}


def matrix_dict(matrix: Mapping[str, Sequence[str]] | Mapping[str, Any], max_parallel: int | None) -> dict[str, Any]:
    """`{"lr": ["0.1", "0.01"]}` (in order) as `{params: [{name, values}], maxParallel}`; a dict
    that already has `params` is taken as the CRD's shape."""
    if "params" in matrix and not isinstance(matrix["params"], str):
        shaped = copy.deepcopy(dict(matrix))
    else:
        shaped = {"params": [{"name": k, "values": [v] if isinstance(v, str) else list(v)} for k, v in matrix.items()]}
    if max_parallel is not None:
        shaped["maxParallel"] = max_parallel
    return shaped


def retry_dict(retry: int | Mapping[str, Any]) -> dict[str, Any]:
    """`retry=3` is `{maxRetries: 3}`; a dict is the CRD's shape (`{maxRetries, backoff}`)."""
    return {"maxRetries": retry} if isinstance(retry, int) else dict(retry)


class _Results:
    """`flow.results.accuracy`: the reference to a result the flow declares (`results=`)."""

    def __init__(self, flow: str, declared: Mapping[str, Any] | None, matrix: bool) -> None:
        self._flow, self._names, self._matrix = flow, list((declared or {}).get("names") or []), matrix

    def __getattr__(self, result: str) -> str:
        if result.startswith("_"):
            raise AttributeError(result)
        return self[result]

    def __getitem__(self, result: str) -> str:
        if result not in self._names:
            raise KeyError(f"flow {self._flow!r} declares no result {result!r} (it declares: {self._names})")
        return result_reference(self._flow, result, self._matrix)


class Flow:
    """One flow of a JobFlow; it runs the JobTemplate of its own name."""

    def __init__(
        self,
        name: str,
        *,
        after: Flow | str | Iterable[Flow | str] = (),
        rule: str | None = None,
        probe: Mapping[str, Any] | None = None,
        when: Sequence[When] | None = None,
        matrix: Mapping[str, Any] | None = None,
        max_parallel: int | None = None,
        results: Sequence[str] | Mapping[str, Any] | None = None,
        results_from: str | None = None,
        continue_on_failure: bool | None = None,
        retry: int | Mapping[str, Any] | None = None,
        patch: Mapping[str, Any] | None = None,
        active_deadline_seconds: int | None = None,
    ) -> None:
        if max_parallel is not None and matrix is None:
            raise ValueError(f"flow {name!r}: max_parallel needs a matrix")
        self.name = name
        self.targets: list[str] = []
        self.rule, self.probe = rule, copy.deepcopy(dict(probe)) if probe is not None else None
        self.when = [when_dict(c) for c in when] if when is not None else None
        self.matrix = matrix_dict(matrix, max_parallel) if matrix is not None else None
        if results_from is not None and results is None:
            raise ValueError(f"flow {name!r}: results_from needs results")
        #: `results`: the names the flow reports, and the task whose pod 0 reports them.
        self.declared_results = results_dict(results, results_from) if results is not None else None
        self.continue_on_failure = continue_on_failure
        self.retry = retry_dict(retry) if retry is not None else None
        self.patch = copy.deepcopy(dict(patch)) if patch is not None else None
        self.active_deadline_seconds = active_deadline_seconds
        #: Fields this SDK has no argument for (a newer CRD's), kept so `from_dict` round-trips.
        self.extra: dict[str, Any] = {}
        self.after(after)

    def after(self, *flows: Flow | str | Iterable[Flow | str]) -> Flow:
        """Depend on `flows` too (names or flows, nested lists flattened); returns self."""
        for item in flows:
            if isinstance(item, Flow | str):
                self._depend(item)
            else:
                for inner in item:
                    self.after(inner)
        return self

    def _depend(self, target: Flow | str) -> None:
        name = target.name if isinstance(target, Flow) else target
        if name not in self.targets:
            self.targets.append(name)

    def __rshift__(self, other: Flow | Sequence[Flow]) -> Any:
        """`self >> other`: other waits for self. Returns other, so chains read left to right."""
        if isinstance(other, Flow):
            other.after(self)
            return other
        if isinstance(other, list | tuple):
            for flow in other:
                flow.after(self)
            return other
        return NotImplemented

    def __rrshift__(self, other: Sequence[Flow]) -> Flow:
        """`[a, b] >> self`: self waits for every flow of the list."""
        if isinstance(other, list | tuple):
            return self.after(other)
        return NotImplemented

    @property
    def results(self) -> _Results:
        """`flow.results.accuracy` is `$(flows.<flow>.results.accuracy)` (with `[*]` for a matrix
        flow), for a later flow's template, `when` or patch; the name must be declared."""
        return _Results(self.name, self.declared_results, self.matrix is not None)

    def matrix_ref(self, param: str) -> str:
        """`$(matrix.<param>)`, for this flow's JobTemplate, checked against the matrix's names."""
        names = [p.get("name") for p in (self.matrix or {}).get("params", [])]
        if param not in names:
            raise KeyError(f"flow {self.name!r} has no matrix parameter {param!r} (it has: {names})")
        return f"$(matrix.{param})"

    def to_dict(self) -> dict[str, Any]:
        """The flow entry, fields in `FLOW_FIELDS` order (then any extra ones)."""
        depends_on: dict[str, Any] = {"targets": list(self.targets)} if self.targets else {}
        if self.rule is not None:
            depends_on["rule"] = self.rule
        if self.probe is not None:
            depends_on["probe"] = copy.deepcopy(self.probe)
        values = {
            "name": self.name,
            "dependsOn": depends_on or None,
            "when": copy.deepcopy(self.when),
            "matrix": copy.deepcopy(self.matrix),
            "results": copy.deepcopy(self.declared_results),
            "continueOnFailure": self.continue_on_failure,
            "retry": copy.deepcopy(self.retry),
            "activeDeadlineSeconds": self.active_deadline_seconds,
            "patch": copy.deepcopy(self.patch),
        }
        out = {k: values[k] for k in FLOW_FIELDS if values[k] is not None}
        out.update(copy.deepcopy(self.extra))
        return out

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> Flow:
        """A flow from its spec entry; fields unknown to this SDK are kept in `extra`."""
        depends_on = entry.get("dependsOn") or {}
        matrix = entry.get("matrix")
        flow = cls(
            str(entry.get("name") or ""),
            after=list(depends_on.get("targets") or []),
            rule=depends_on.get("rule"),
            probe=depends_on.get("probe"),
            when=entry.get("when"),
            matrix=matrix,
            results=entry.get("results"),
            continue_on_failure=entry.get("continueOnFailure"),
            retry=entry.get("retry"),
            patch=entry.get("patch"),
            active_deadline_seconds=entry.get("activeDeadlineSeconds"),
        )
        flow.extra = {k: copy.deepcopy(v) for k, v in entry.items() if k not in FLOW_FIELDS}
        return flow

    def __repr__(self) -> str:
        return f"Flow({self.name!r}, after={self.targets!r})" if self.targets else f"Flow({self.name!r})"
