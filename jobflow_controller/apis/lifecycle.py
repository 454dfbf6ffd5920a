"""Ours, opt-in (docs/lifecycle.md): suspend, shutdown, deadlines, TTL and the re-run request.

    spec:
      suspend: true                  # no new Job; running Jobs go on
      shutdown: Stop                 # or Terminate; one-way
      activeDeadlineSeconds: 7200    # the whole JobFlow, from its creation
      ttlSecondsAfterFinished: 600   # deleted this long after Succeed or Failed
      flows:
      - name: train
        activeDeadlineSeconds: 3600  # each attempt of the flow's Job, from the Job's creation

A re-run is asked for with the annotation `flow.volcano.sh/retry-request`, a JSON object
`{"id": "<unique>", "flows": ["<flow>", ...]}`; the controller acts once per id (the status's
`retryRequest` is the last id handled), so a request survives a restart and is never done twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.lifecycle_fields import (
    RetryRequest,
    Shutdown,
    read_retry_request,
    retry_request_problems,
    retry_request_text,
)
from jobflow_controller.apis.meta import Obj

__all__ = [
    "Lifecycle",
    "RetryRequest",
    "Shutdown",
    "malformed_retry_request",
    "pending_retry_request",
    "retry_request_to_sync",
]


@dataclass(frozen=True)
class Lifecycle:
    """The lifecycle fields of one JobFlow, read once per sync."""

    suspend: bool = False
    shutdown: str = ""
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    #: flow name -> its Jobs' activeDeadlineSeconds.
    flow_deadlines: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, job_flow: Obj) -> Lifecycle:
        spec = jf.spec(job_flow)
        deadlines = {}
        for raw in jf.raw_flow_list(job_flow):
            if isinstance(raw, (dict, Mapping)) and _seconds(raw.get("activeDeadlineSeconds")) is not None:
                deadlines[str(raw.get("name") or "")] = _seconds(raw.get("activeDeadlineSeconds")) or 0
        return cls(
            suspend=spec.get("suspend") is True,
            shutdown=str(spec.get("shutdown") or ""),
            active_deadline_seconds=_seconds(spec.get("activeDeadlineSeconds")),
            ttl_seconds_after_finished=_seconds(spec.get("ttlSecondsAfterFinished")),
            flow_deadlines=deadlines,
        )

    @property
    def halts(self) -> bool:
        """Whether the fields can stop the flows early (planned from their outcomes, outcomes.py)."""
        return bool(self.shutdown) or self.active_deadline_seconds is not None


def _seconds(value: object) -> int | None:
    """A non-negative whole number of seconds; anything else is absent (admission refuses it).

    Capped at Go's longest `time.Duration` (about 292 years), which no date arithmetic overflows.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return min(value, MAX_SECONDS)


#: `math.MaxInt64` nanoseconds, in whole seconds.
MAX_SECONDS = (2**63 - 1) // 10**9


def pending_retry_request(job_flow: Obj) -> RetryRequest | None:
    """The well-formed re-run request not handled yet: its id is not the status's `retryRequest`.

    Without the annotation (every JobFlow but one being re-run) the flows are not even parsed:
    this runs for every JobFlow event and every sync.
    """
    if retry_request_text(job_flow) is None:
        return None
    request = read_retry_request(job_flow, {f.name for f in jf.flows(job_flow)})
    if request is None or jf.status(job_flow).get("retryRequest") == request.id:
        return None
    return request


def malformed_retry_request(job_flow: Obj) -> list[str]:
    """What is wrong with the JobFlow's re-run request; empty when it has none or a well-formed one."""
    text = retry_request_text(job_flow)
    if text is None:
        return []
    return retry_request_problems(text, {f.name for f in jf.flows(job_flow)})


def retry_request_to_sync(new: Obj, old: Obj) -> bool:
    """Whether an update of the JobFlow brings a request to act on: a pending one, or a new
    malformed one (its Warning, docs/hostile-input.md). Never raises."""
    if pending_retry_request(new) is not None:
        return True
    text = retry_request_text(new)
    return text is not None and text != retry_request_text(old) and bool(malformed_retry_request(new))
