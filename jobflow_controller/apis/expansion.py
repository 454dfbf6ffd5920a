"""Ours (docs/params.md, docs/hostile-input.md): how much `$(VAR)` expansion may grow what it fills.

Each parameter, matrix value and `when` input is bounded in the CRD (`MAX_PARAM_VALUE_LENGTH`), but a
template may read one value many times: 100 references to a 20 KiB value make a 2 MB Job that etcd
refuses at every retry, and 500 `when` inputs reading a large value once held 1.4 GB in one sync.
So expansion has a budget, measured before anything is built (`substitution.references`: lengths,
never strings):

* per string: an expanded string (a Job's field, a label or annotation value, a `when` input) is at
  most `MAX_EXPANDED_STRING` characters;
* per Job: expansion adds at most `MAX_JOB_EXPANSION` characters to one Job;
* per JobFlow: expansion adds at most `MAX_JOBFLOW_EXPANSION` characters to all its Jobs together
  (every matrix index counted, flows in spec order, then `finally`);
* a Job's annotations (the template's, expanded, and ours such as `flow.volcano.sh/matrix-params`)
  stay within Kubernetes' own total, `MAX_ANNOTATIONS_BYTES`.

A flow over a budget gets no Job and a Warning `InvalidParams` naming it (jobflow/params_budget.py).
Pure functions of JSON values and variables; nothing given is modified.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.substitution import References, references

#: The longest string expansion may produce.
MAX_EXPANDED_STRING: Final = 64 * 1024
#: The most characters expansion may add to one Job.
MAX_JOB_EXPANSION: Final = 256 * 1024
#: The most characters expansion may add to all the Jobs of one JobFlow.
MAX_JOBFLOW_EXPANSION: Final = 4 * 1024 * 1024
#: Kubernetes' limit on an object's annotations, keys and values together (TotalAnnotationSizeLimitB).
MAX_ANNOTATIONS_BYTES: Final = 256 * 1024

#: Budget messages. Arguments as named.
MESSAGE_STRING: Final = "an expanded string would be {size} characters long, more than the {limit} allowed"
MESSAGE_JOB: Final = "expansion would add {size} characters to its Job, more than the {limit} allowed"
MESSAGE_JOBFLOW: Final = (
    "expansion would add {size} characters to the JobFlow's Jobs with this flow's, more than the {limit} allowed"
)
MESSAGE_ANNOTATIONS: Final = "its Job's annotations would be {size} bytes, more than the {limit} Kubernetes allows"
MESSAGE_WHEN: Final = "when[{index}].input would expand to {size} characters, more than the {limit} allowed"


@dataclass(frozen=True)
class Growth:
    """What expanding one value with some variables would do: its longest expanded string, and the
    characters added in all (negative when references are longer than their values)."""

    longest: int
    added: int


@dataclass(frozen=True)
class JobReferences:
    """Every string of a Job body (spec, labels, annotations) that holds a `$`, read once."""

    strings: tuple[References, ...]

    @classmethod
    def of(cls, *values: Any) -> JobReferences:
        return cls(tuple(r for value in values for r in _string_references(value) if r.names or r.escapes))

    def growth(self, variables: Mapping[str, str]) -> Growth:
        longest, added = 0, 0
        for found in self.strings:
            size = found.expanded_length(variables)
            longest = max(longest, size)
            added += size - found.length
        return Growth(longest, added)


def job_problem(growth: Growth) -> str | None:
    """The per-string and per-Job budgets for one Job's `growth`: None when it fits."""
    if growth.longest > MAX_EXPANDED_STRING:
        return MESSAGE_STRING.format(size=growth.longest, limit=MAX_EXPANDED_STRING)
    if growth.added > MAX_JOB_EXPANSION:
        return MESSAGE_JOB.format(size=growth.added, limit=MAX_JOB_EXPANSION)
    return None


def job_flow_problem(total: int) -> str | None:
    """The per-JobFlow budget for the characters its Jobs add in all, up to and with one flow's."""
    if total > MAX_JOBFLOW_EXPANSION:
        return MESSAGE_JOBFLOW.format(size=total, limit=MAX_JOBFLOW_EXPANSION)
    return None


def when_problem(inputs: tuple[str, ...], variables: Mapping[str, str]) -> str | None:
    """The per-string budget for a flow's `when` inputs, measured before any is expanded."""
    for index, text in enumerate(inputs):
        size = references(text).expanded_length(variables)
        if size > MAX_EXPANDED_STRING:
            return MESSAGE_WHEN.format(index=index, size=size, limit=MAX_EXPANDED_STRING)
    return None


def annotations_problem(annotations: Mapping[str, Any]) -> str | None:
    """Kubernetes' total for a Job's annotations (keys and values, UTF-8), checked before the create."""
    size = 0
    for key, value in annotations.items():
        size += len(str(key).encode("utf-8", "surrogatepass")) + len(str(value).encode("utf-8", "surrogatepass"))
    if size > MAX_ANNOTATIONS_BYTES:
        return MESSAGE_ANNOTATIONS.format(size=size, limit=MAX_ANNOTATIONS_BYTES)
    return None


def _string_references(value: Any) -> Iterator[References]:
    """The references of every string of a JSON value (a map's keys are never expanded)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "$" in item:
                yield references(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
