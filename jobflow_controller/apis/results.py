"""Ours, opt-in (docs/results.md): the values a flow's Job reports, read from its pod's termination messages.

A flow declares `results: {from: {task}, names: [...]}`; once its Job has ended the controller reads
the pod `<job>-<task>-0` (Volcano's pod naming; the task defaults to the Job's first) and each of its
containers' termination message. A message that is a JSON object contributes its keys; an empty one
or one that is not a JSON object (a crash's text) is ignored. What a declared name came to is kept in
`status.jobStatusList[].results`. This module is pure: parsing the field, reading a pod (handed in)
into values and problems, each problem worded for an `InvalidResult` Warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.tenant_text import excerpt_text, load_json, utf8_size

#: At most this many names per flow (the CRD's `maxItems`, the webhook's and the controller's check).
MAX_RESULT_NAMES: Final = 16
#: A result name's longest form, and its shape (a DNS label that may also hold `_`).
MAX_RESULT_NAME_LENGTH: Final = 63
RESULT_NAME: Final = re.compile(r"[a-z0-9]([-a-z0-9_]*[a-z0-9])?")
#: A task name's longest form in `results.from.task` (Volcano's task names are DNS labels).
MAX_TASK_NAME_LENGTH: Final = 63
#: A value's largest UTF-8 size: Kubernetes' termination message per container.
MAX_RESULT_BYTES: Final = 4096
#: The largest message parsed: a kubelet writes at most 4096 bytes per container (12 KiB per pod),
#: but anyone allowed to write pods/status may write more; past this, a message is not read.
MAX_MESSAGE_BYTES: Final = 12 * 1024
#: The most container statuses of one pod looked at (init containers are not read).
MAX_CONTAINERS: Final = 64
#: The most the results of one JobFlow hold in all (names and values, UTF-8), in its status.
MAX_TOTAL_RESULT_BYTES: Final = 64 * 1024
#: At most this many entries in `spec.results` (and so in `status.results`): the JobFlow's own results.
MAX_JOBFLOW_RESULTS: Final = 16


@dataclass(frozen=True)
class FlowResults:
    """One flow's `results`: the task whose pod 0 reports them (None: the Job's first) and the names."""

    task: str | None
    names: tuple[str, ...]


@dataclass(frozen=True)
class Reading:
    """What one ended Job's pod reported: the declared names it gave (valid ones), and the problems.

    `problems` name each declared name missing or refused, one message each; a Completed Job with a
    problem counts as Failed (results_policy.py).
    """

    values: Mapping[str, str]
    problems: tuple[str, ...] = ()
    #: The pod could not be read (gone, or not the Job's): every declared name is missing.
    pod_missing: bool = False


@dataclass(frozen=True)
class ResultsSpec:
    """Each declaring flow's `results`, by flow name; None in `JobFlowSpec` for a JobFlow that declares none."""

    flows: Mapping[str, FlowResults] = field(default_factory=dict)
    #: `spec.results`: the JobFlow's own results, (name, value as written), resolved when it Succeeds.
    own: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, raw_by_flow: Sequence[tuple[str, Any]], raw_own: object = None) -> ResultsSpec | None:
        """From each flow's raw `results` (None when absent) and `spec.results`; None when neither declares any."""
        out = {}
        for name, raw in raw_by_flow:
            found = flow_results(raw)
            if found is not None:
                out[name] = found
        own = own_results(raw_own)
        return cls(out, own) if out or own else None


def own_results(raw: object) -> tuple[tuple[str, str], ...]:
    """`spec.results` as read: well-formed entries only, the first of a name, at most `MAX_JOBFLOW_RESULTS`
    (admission refuses anything else; the controller reports it as `InvalidJobFlow`)."""
    out: dict[str, str] = {}
    for entry in raw[:MAX_JOBFLOW_RESULTS] if isinstance(raw, list) else ():
        name = entry.get("name") if isinstance(entry, Mapping) else None
        value = entry.get("value") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and is_name(name) and isinstance(value, str) and name not in out:
            out[name] = value
    return tuple(out.items())


def recorded_own_results(raw: object) -> list[dict[str, str]]:
    """`status.results` as stored: `{name, value}` string entries, at most `MAX_JOBFLOW_RESULTS`."""
    out = []
    for entry in raw[:MAX_JOBFLOW_RESULTS] if isinstance(raw, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str) and isinstance(entry.get("value"), str):
            out.append({"name": entry["name"], "value": entry["value"]})
    return out


def flow_results(raw: object) -> FlowResults | None:
    """A flow's `results` as read (admission refuses a malformed one; only well-formed names are kept)."""
    if not isinstance(raw, Mapping):
        return None
    names = raw.get("names")
    kept = tuple(
        n for n in (names[:MAX_RESULT_NAMES] if isinstance(names, list) else ()) if isinstance(n, str) and is_name(n)
    )
    source = raw.get("from")
    task = source.get("task") if isinstance(source, Mapping) else None
    return FlowResults(task if isinstance(task, str) and task else None, tuple(dict.fromkeys(kept)))


def is_name(name: str) -> bool:
    return len(name) <= MAX_RESULT_NAME_LENGTH and RESULT_NAME.fullmatch(name) is not None


def first_task(job: Mapping[str, Any]) -> str:
    """The Job's first task's name ("" when it has none)."""
    tasks = (job.get("spec") or {}).get("tasks") if isinstance(job.get("spec"), Mapping) else None
    if isinstance(tasks, list) and tasks and isinstance(tasks[0], Mapping):
        return str(tasks[0].get("name") or "")
    return ""


def pod_name(job: Mapping[str, Any], declared: FlowResults) -> str:
    """`<job>-<task>-0`: Volcano's name for the task's pod of index 0."""
    return f"{meta.name(job)}-{declared.task or first_task(job)}-0"


def read_pod(pod: Mapping[str, Any] | None, job: Mapping[str, Any], declared: FlowResults) -> Reading:
    """The declared names' values in the termination messages of `pod` (None: not found).

    A pod not controlled by the Job (by uid) is another's and is not read.
    """
    name = pod_name(job, declared)
    if pod is None:
        return _missing(declared, f"pod {name} not found")
    if not _controlled_by(pod, meta.uid(job)):
        return _missing(declared, f"pod {name} is not controlled by Job {meta.name(job)}")
    return read_messages(termination_messages(pod), declared.names)


def _missing(declared: FlowResults, why: str) -> Reading:
    return Reading({}, tuple(f"result {n!r}: {why}" for n in declared.names), pod_missing=True)


def _controlled_by(pod: Mapping[str, Any], uid: str) -> bool:
    owners = meta.metadata(pod).get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return bool(uid) and owner.get("uid") == uid
    return False


def termination_messages(pod: Mapping[str, Any]) -> list[tuple[str, object]]:
    """(container, message) of each terminated container of the pod, at most `MAX_CONTAINERS`."""
    status = pod.get("status")
    statuses = status.get("containerStatuses") if isinstance(status, Mapping) else None
    out: list[tuple[str, object]] = []
    for entry in statuses[:MAX_CONTAINERS] if isinstance(statuses, list) else ():
        if not isinstance(entry, Mapping):
            continue
        state = entry.get("state")
        terminated = state.get("terminated") if isinstance(state, Mapping) else None
        if isinstance(terminated, Mapping) and terminated.get("message"):
            out.append((str(entry.get("name") or "")[:MAX_RESULT_NAME_LENGTH], terminated.get("message")))
    return out


def read_messages(messages: Sequence[tuple[str, object]], names: Sequence[str]) -> Reading:
    """The declared `names` from the containers' messages: each message that is a JSON object gives its keys.

    Refused, each a problem: a name no container gave, a name two containers gave, a value that is not
    a string, a value over `MAX_RESULT_BYTES`. A message over `MAX_MESSAGE_BYTES` or not a JSON object
    is ignored (its names, if declared, are missing). Never raises.
    """
    wanted = set(names)
    given: dict[str, list[tuple[str, object]]] = {}
    for container, text in messages:
        value, problem = load_json(text, "termination message", max_bytes=MAX_MESSAGE_BYTES)
        if problem is not None or not isinstance(value, dict):
            continue
        for key, found in value.items():
            if key in wanted:
                given.setdefault(key, []).append((container, found))
    values: dict[str, str] = {}
    problems: list[str] = []
    for name in names:
        found_in = given.get(name)
        if not found_in:
            problems.append(f"result {name!r}: not reported by any container")
        elif len(found_in) > 1:
            problems.append(f"result {name!r}: given by containers {found_in[0][0]!r} and {found_in[1][0]!r}")
        elif not isinstance(found_in[0][1], str):
            problems.append(f"result {name!r}: must be a string, got {type(found_in[0][1]).__name__}")
        elif (size := utf8_size(found_in[0][1], MAX_RESULT_BYTES)) > MAX_RESULT_BYTES:
            problems.append(f"result {name!r}: value is {size} bytes, more than the {MAX_RESULT_BYTES} allowed")
        else:
            values[name] = found_in[0][1]
    return Reading(values, tuple(problems))


#: `flows.<flow>.results.<name>`, and `[*]` after it for a matrix flow's array (the flow may hold dots).
_REFERENCE: Final = re.compile(r"flows\.(.+)\.results\.([a-z0-9](?:[-a-z0-9_]*[a-z0-9])?)(\[\*\])?")
#: The longest variable name read as a reference (a flow name's 253, a result name's 63, the rest).
MAX_REFERENCE_LENGTH: Final = 253 + 63 + 20


@dataclass(frozen=True)
class ResultReference:
    """`$(flows.F.results.N)` (`array` False) or `$(flows.F.results.N[*])` (True)."""

    flow: str
    name: str
    array: bool

    @property
    def variable(self) -> str:
        return f"flows.{self.flow}.results.{self.name}{'[*]' if self.array else ''}"


def result_reference(variable: str) -> ResultReference | None:
    """The reference a `$(VAR)` name is, or None when it is not one (another variable, or too long)."""
    if not variable.startswith("flows.") or len(variable) > MAX_REFERENCE_LENGTH:
        return None
    found = _REFERENCE.fullmatch(variable)
    if found is None:
        return None
    return ResultReference(found.group(1), found.group(2), found.group(3) is not None)


def results_size(results: Mapping[str, str]) -> int:
    """The UTF-8 size of names and values: what counts against `MAX_TOTAL_RESULT_BYTES`."""
    return sum(len(k.encode()) + len(v.encode("utf-8", "surrogatepass")) for k, v in results.items())


def recorded_results(raw: object) -> dict[str, str] | None:
    """A `jobStatusList` entry's `results` as stored (strings only; None when absent)."""
    if not isinstance(raw, Mapping):
        return None
    return {str(k): v for k, v in raw.items() if isinstance(v, str)}


def quoted(value: str) -> str:
    """A value cut for a message."""
    return excerpt_text(value)
