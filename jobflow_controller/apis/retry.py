"""Opt-in retry of a flow's failed Job (ours; upstream has none, volcano-sh/volcano #3838).

Where it lives: the JobFlow annotation `flow.volcano.sh/retry`, a JSON object keyed by flow name,

    flow.volcano.sh/retry: '{"train": {"maxRetries": 2, "backoff": "30s"}}'

not `spec.flows[].retry`: the CRD (upstream's, byte for byte) has a structural schema with no
`x-kubernetes-preserve-unknown-fields` anywhere under `spec`, so the API server prunes an unknown
`retry` key from a flow before anything can read it (docs/retry.md; an e2e test pins the pruning).

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

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.meta import Obj
from jobflow_controller.apis.timeutil import parse_duration_ns

#: The JobFlow annotation holding the per-flow retry policies.
RETRY_ANNOTATION: Final = "flow.volcano.sh/retry"
#: The annotation on a re-created Job: which retry made it (absent on the first Job).
ATTEMPT_ANNOTATION: Final = "flow.volcano.sh/retry-attempt"
#: The `runningHistories` state recorded for each retry, from the delete to the re-created Job.
RETRYING: Final = "Retrying"

MAX_RETRIES: Final = "maxRetries"
BACKOFF: Final = "backoff"
DEFAULT_BACKOFF: Final = "0s"


@dataclass(frozen=True)
class RetryPolicy:
    """One flow's policy: at most `max_retries` re-creations, each `backoff` seconds after the delete."""

    max_retries: int
    backoff: float


def retry_problems(job_flow: Obj) -> list[str]:
    """What admission says about the annotation, in a fixed order; empty when absent or valid."""
    raw = _annotation(job_flow)
    if raw is None:
        return []
    prefix = f"annotation {RETRY_ANNOTATION}"
    try:
        value = json.loads(raw)
    except ValueError as err:
        return [f"{prefix}: not valid JSON: {err}"]
    if not isinstance(value, Mapping):
        example = '{"a": {"maxRetries": 2, "backoff": "30s"}}'
        return [f"{prefix}: must be a JSON object keyed by flow name, e.g. {example}"]
    flows = _flow_names(job_flow)
    problems: list[str] = []
    for flow, policy in value.items():
        where = f'{prefix}["{flow}"]'
        if flow not in flows:
            problems.append(f'{where}: no flow of this JobFlow is named "{flow}"')
        if not isinstance(policy, Mapping):
            problems.append(f"{where}: must be an object with {MAX_RETRIES} and {BACKOFF}")
            continue
        for key in policy:
            if key not in (MAX_RETRIES, BACKOFF):
                problems.append(f'{where}: unknown field "{key}" (known: {MAX_RETRIES}, {BACKOFF})')
        problems.extend(_policy_problems(where, policy))
    return problems


def retry_policies(job_flow: Obj) -> dict[str, RetryPolicy]:
    """The valid policies by flow name; a malformed annotation or entry gives no retries (as absent)."""
    raw = _annotation(job_flow)
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(value, Mapping):
        return {}
    out: dict[str, RetryPolicy] = {}
    for flow, policy in value.items():
        if not isinstance(policy, Mapping) or _policy_problems("", policy):
            continue
        backoff = parse_duration_ns(str(policy.get(BACKOFF, DEFAULT_BACKOFF))) / 1e9
        out[str(flow)] = RetryPolicy(max_retries=int(policy[MAX_RETRIES]), backoff=backoff)
    return out


def retry_annotation_changed(job_flow: Obj, old_job_flow: Obj) -> bool:
    return _annotation(job_flow) != _annotation(old_job_flow)


def job_attempt(job: Obj) -> int:
    """Which retry created this Job (0: the first Job, or a malformed annotation)."""
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    try:
        return max(0, int(str(annotations.get(ATTEMPT_ANNOTATION) or "0")))
    except ValueError:
        return 0


def _policy_problems(where: str, policy: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    if MAX_RETRIES not in policy:
        problems.append(f"{where}.{MAX_RETRIES}: required")
    else:
        n = policy[MAX_RETRIES]
        if not isinstance(n, int) or isinstance(n, bool):
            problems.append(f"{where}.{MAX_RETRIES}: must be an integer, got {json.dumps(n)}")
        elif n < 0:
            problems.append(f"{where}.{MAX_RETRIES}: must not be negative, got {n}")
    if BACKOFF in policy:
        backoff = policy[BACKOFF]
        if not isinstance(backoff, str):
            problems.append(f'{where}.{BACKOFF}: must be a duration string such as "30s", got {json.dumps(backoff)}')
        else:
            try:
                ns = parse_duration_ns(backoff)
            except ValueError:
                problems.append(
                    f'{where}.{BACKOFF}: invalid duration "{backoff}" (a Go duration such as "30s", "1m30s")'
                )
            else:
                if ns < 0:
                    problems.append(f'{where}.{BACKOFF}: must not be negative, got "{backoff}"')
    return problems


def _annotation(job_flow: Obj) -> str | None:
    annotations = (job_flow.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(RETRY_ANNOTATION) if isinstance(annotations, Mapping) else None
    return None if value is None else str(value)


def _flow_names(job_flow: Obj) -> set[str]:
    spec = job_flow.get("spec") or {}
    flows = spec.get("flows") if isinstance(spec, Mapping) else None
    return {str(f.get("name") or "") for f in flows or [] if isinstance(f, Mapping)}
