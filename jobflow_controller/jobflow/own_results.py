"""Ours, opt-in (docs/results.md): the JobFlow's own results, `spec.results` resolved into `status.results`.

Resolved once, when the JobFlow ends Succeed (as a Tekton Pipeline's results): each entry's value is
expanded with the params, the context and every flow's results read (`$(flows.F.results.N)`,
`$(flows.F.results.N[*])` of a matrix flow). An entry whose value still holds a reference that has no
value, or whose value grew past `MAX_RESULT_BYTES`, is left out and named in a problem (a Warning
`InvalidResult`). Later syncs of the Succeeded JobFlow keep what was recorded, so the Warning is sent
once. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jobflow_controller.apis.results import MAX_RESULT_BYTES, quoted
from jobflow_controller.apis.substitution import expand, references


def resolve(own: Sequence[tuple[str, str]], variables: Mapping[str, str]) -> tuple[list[dict[str, str]], list[str]]:
    """The `{name, value}` entries resolved, in spec order, and a problem for each entry left out."""
    resolved: list[dict[str, str]] = []
    problems: list[str] = []
    for name, text in own:
        missing = [v for v, _count in references(text).names if v not in variables]
        if missing:
            problems.append(f"result {name!r}: $({quoted(missing[0])}) has no value")
            continue
        value = expand(text, variables)
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_RESULT_BYTES:
            problems.append(f"result {name!r}: value is {size} bytes, more than the {MAX_RESULT_BYTES} allowed")
            continue
        resolved.append({"name": name, "value": value})
    return resolved, problems
