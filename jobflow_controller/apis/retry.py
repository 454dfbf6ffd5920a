"""Opt-in retry of a flow's failed Job (ours; upstream has none, volcano-sh/volcano #3838).

The policy is the flow's `retry` field, which our JobFlow CRD adds to upstream's schema (the only
difference, docs/retry.md):

    spec:
      flows:
      - name: train
        retry: {maxRetries: 2, backoff: 30s}

Upstream's CRD has no such field and the API server prunes it, so a cluster that keeps Volcano's
CRD can give the same policy in the JobFlow annotation `flow.volcano.sh/retry`, a JSON object
keyed by flow name (`'{"train": {"maxRetries": 2, "backoff": "30s"}}'`). When a flow has both, the
field wins and the annotation's entry for it is ignored (still checked at admission).

What is recorded, all in the JobFlow's status (nothing in memory), so a restarted controller knows
how many retries a flow already had:

* each retry appends a `runningHistories` entry of state `Retrying` to the Job's `jobStatusList`
  entry (closed when the re-created Job is first seen): the retries done are their count;
* the re-created Job carries the annotation `flow.volcano.sh/retry-attempt` (1, 2, ...), so a Job
  whose attempt is below the count is the old one, deleted but not yet gone;
* `restartCount` = the retries done + the current Job's own `status.retryCount` (Volcano's restarts
  inside one Job); without retries it is `retryCount`, exactly upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from jobflow_controller.apis.jobflow import RECREATING as RECREATING
from jobflow_controller.apis.jobflow import RERUN as RERUN
from jobflow_controller.apis.jobflow import RETRY_ANNOTATION as RETRY_ANNOTATION
from jobflow_controller.apis.jobflow import RETRYING as RETRYING
from jobflow_controller.apis.jobflow import raw_flow_list
from jobflow_controller.apis.meta import Obj, parse_duration_ns
from jobflow_controller.apis.tenant_text import excerpt, excerpt_text, load_json

#: The flow field holding its retry policy (spec.flows[].retry).
RETRY_FIELD: Final = "retry"
#: The annotation on a re-created Job: which retry made it (absent on the first Job).
ATTEMPT_ANNOTATION: Final = "flow.volcano.sh/retry-attempt"
#: `RETRY_ANNOTATION`, `RETRYING`, `RERUN` and `RECREATING` are apis/jobflow.py's (they tell a JobFlow
#: that uses retries or re-runs, `extensions`).

MAX_RETRIES: Final = "maxRetries"
#: The most retries a flow may ask for: each one adds entries to the JobFlow's status (which must
#: stay under etcd's request limit) and, with a backoff of 0 s, a delete and a create at once.
MAX_RETRIES_LIMIT: Final = 100
BACKOFF: Final = "backoff"
DEFAULT_BACKOFF: Final = "0s"


@dataclass(frozen=True)
class RetryPolicy:
    """One flow's policy: at most `max_retries` re-creations, each `backoff` seconds after the delete."""

    max_retries: int
    backoff: float


@dataclass
class RetryPolicies:
    """What the controller acts on: the valid policy of each flow that has one, and what is wrong.

    `problems` names only the policies in force (a flow's field, else its annotation entry), each
    as admission words it; a flow whose policy has a problem has no entry in `policies`.
    """

    policies: dict[str, RetryPolicy] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def retry_problems(job_flow: Obj) -> list[str]:
    """What admission says about the retry policies: the fields' (spec order), then the annotation's.

    Empty when there is none or all are valid.
    """
    problems: list[str] = []
    for name, raw in _field_policies(job_flow):
        problems.extend(_policy_problems(_field_where(name), raw))
    problems.extend(_annotation_problems(job_flow))
    return problems


def retry_policies(job_flow: Obj) -> RetryPolicies:
    """Each flow's policy in force: its `retry` field, else its annotation entry; invalid ones reported."""
    out = RetryPolicies()
    with_field: set[str] = set()
    for name, raw in _field_policies(job_flow):
        with_field.add(name)
        problems = _policy_problems(_field_where(name), raw)
        if problems:
            out.problems.extend(problems)
        elif name not in out.policies:
            out.policies[name] = _policy(raw)
    value, problem = _annotation_value(job_flow)
    if problem is not None:
        out.problems.append(problem)
        return out
    flows = _flow_names(job_flow)
    for name, raw in value.items():
        if name in with_field:
            continue  # the field wins
        where = _annotation_where(name)
        problems = ([] if name in flows else [_unknown_flow(where, name)]) + _policy_problems(where, raw)
        if problems:
            out.problems.extend(problems)
        else:
            out.policies[name] = _policy(raw)
    return out


def retry_annotation_changed(job_flow: Obj, old_job_flow: Obj) -> bool:
    return _annotation(job_flow) != _annotation(old_job_flow)


def job_attempt(job: Obj) -> int:
    """Which retry created this Job (0: the first Job, or a malformed annotation)."""
    metadata = job.get("metadata") if isinstance(job, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    text = annotations.get(ATTEMPT_ANNOTATION) if isinstance(annotations, Mapping) else None
    # At most MAX_RETRIES_LIMIT retries (and Rerun requests past it): a few digits; ASCII digits
    # only, as Go's strconv.Atoi reads them (Python's int() also takes "1_0" and other scripts).
    if not isinstance(text, str) or not 0 < len(text) <= _MAX_ATTEMPT_DIGITS or not (text.isascii() and text.isdigit()):
        return 0
    return int(text)


_MAX_ATTEMPT_DIGITS: Final = 9


# -- the field -------------------------------------------------------------------------------------


def _field_policies(job_flow: Obj) -> list[tuple[str, Any]]:
    """(flow name, raw `retry`) for each flow that sets one (not null), in spec order."""
    out: list[tuple[str, Any]] = []
    for flow in _raw_flows(job_flow):
        raw = flow.get(RETRY_FIELD)
        if raw is not None:
            name = flow.get("name")
            out.append((name if isinstance(name, str) else "", raw))
    return out


def _field_where(flow: str) -> str:
    return f'jobflow Flow "{flow}": {RETRY_FIELD}'


# -- the annotation --------------------------------------------------------------------------------


def _annotation_problems(job_flow: Obj) -> list[str]:
    value, problem = _annotation_value(job_flow)
    if problem is not None:
        return [problem]
    flows = _flow_names(job_flow)
    problems: list[str] = []
    for name, raw in value.items():
        where = _annotation_where(name)
        if name not in flows:
            problems.append(_unknown_flow(where, name))
        problems.extend(_policy_problems(where, raw))
    return problems


def _annotation_value(job_flow: Obj) -> tuple[Mapping[str, Any], str | None]:
    """The annotation's object (empty when absent), or the one problem that makes it unreadable."""
    raw = _annotation(job_flow)
    if raw is None:
        return {}, None
    prefix = f"annotation {RETRY_ANNOTATION}"
    value, problem = load_json(raw, prefix)
    if problem is not None:
        return {}, problem
    if not isinstance(value, (dict, Mapping)):
        example = '{"a": {"maxRetries": 2, "backoff": "30s"}}'
        return {}, f"{prefix}: must be a JSON object keyed by flow name, e.g. {example}"
    return value, None


def _annotation(job_flow: Obj) -> str | None:
    metadata = job_flow.get("metadata") if isinstance(job_flow, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(RETRY_ANNOTATION) if isinstance(annotations, Mapping) else None
    return value if value is None or isinstance(value, str) else excerpt(value)


def _annotation_where(flow: str) -> str:
    return f'annotation {RETRY_ANNOTATION}["{excerpt_text(flow)}"]'


def _unknown_flow(where: str, flow: str) -> str:
    return f'{where}: no flow of this JobFlow is named "{excerpt_text(flow)}"'


# -- one policy ------------------------------------------------------------------------------------


def _policy_problems(where: str, policy: Any) -> list[str]:
    """The problems of one policy object, each prefixed with `where` (the field or annotation entry)."""
    if not isinstance(policy, (dict, Mapping)):
        return [f"{where}: must be an object with {MAX_RETRIES} and {BACKOFF}, got {excerpt(policy)}"]
    problems = [
        f'{where}: unknown field "{excerpt_text(str(key))}" (known: {MAX_RETRIES}, {BACKOFF})'
        for key in policy
        if key not in (MAX_RETRIES, BACKOFF)
    ]
    if MAX_RETRIES not in policy:
        problems.append(f"{where}.{MAX_RETRIES}: required")
    else:
        n = policy[MAX_RETRIES]
        if not isinstance(n, int) or isinstance(n, bool):
            problems.append(f"{where}.{MAX_RETRIES}: must be an integer, got {excerpt(n)}")
        elif n < 0:
            problems.append(f"{where}.{MAX_RETRIES}: must not be negative, got {n}")
        elif n > MAX_RETRIES_LIMIT:
            problems.append(f"{where}.{MAX_RETRIES}: must be at most {MAX_RETRIES_LIMIT}, got {n}")
    if BACKOFF in policy:
        backoff = policy[BACKOFF]
        if not isinstance(backoff, str):
            problems.append(f'{where}.{BACKOFF}: must be a duration string such as "30s", got {excerpt(backoff)}')
        else:
            try:
                ns = parse_duration_ns(backoff)
            except ValueError:
                shown = excerpt_text(backoff)
                problems.append(f'{where}.{BACKOFF}: invalid duration "{shown}" (a Go duration such as "30s", "1m30s")')
            else:
                if ns < 0:
                    problems.append(f'{where}.{BACKOFF}: must not be negative, got "{backoff}"')
    return problems


def _policy(raw: Mapping[str, Any]) -> RetryPolicy:
    """A policy `_policy_problems` found nothing wrong with."""
    backoff = parse_duration_ns(str(raw.get(BACKOFF, DEFAULT_BACKOFF))) / 1e9
    return RetryPolicy(max_retries=int(raw[MAX_RETRIES]), backoff=backoff)


def _raw_flows(job_flow: Obj) -> list[Mapping[str, Any]]:
    return [f for f in raw_flow_list(job_flow) if isinstance(f, (dict, Mapping))]


def _flow_names(job_flow: Obj) -> set[str]:
    return {str(f.get("name") or "") for f in _raw_flows(job_flow)}
