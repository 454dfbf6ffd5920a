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

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import Obj

RETRY_REQUEST_ANNOTATION: Final = "flow.volcano.sh/retry-request"
#: Volcano's bus API: a Command acts on a Job (vcctl job suspend|resume|terminate).
BUS_GROUP_VERSION: Final = "bus.volcano.sh/v1alpha1"
COMMAND_KIND: Final = "Command"
TERMINATE_JOB: Final = "TerminateJob"


class Shutdown(StrEnum):
    STOP = "Stop"
    TERMINATE = "Terminate"


@dataclass(frozen=True)
class RetryRequest:
    id: str
    #: The flows named; empty: every Failed and Skipped flow.
    flows: tuple[str, ...] = ()


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
        for raw in spec.get("flows") or []:
            if isinstance(raw, Mapping) and _seconds(raw.get("activeDeadlineSeconds")) is not None:
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
    """A non-negative whole number of seconds; anything else is absent (admission refuses it)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def retry_request(job_flow: Obj) -> RetryRequest | None:
    """The re-run asked for by the annotation, if it is well formed (admission says why not)."""
    raw = (meta.metadata(job_flow).get("annotations") or {}).get(RETRY_REQUEST_ANNOTATION)
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str) or not value["id"]:
        return None
    flows = value.get("flows") or []
    if not isinstance(flows, list) or not all(isinstance(f, str) for f in flows):
        return None
    return RetryRequest(value["id"], tuple(flows))


def pending_retry_request(job_flow: Obj) -> RetryRequest | None:
    """The request not handled yet: its id is not the status's `retryRequest`."""
    request = retry_request(job_flow)
    if request is None or jf.status(job_flow).get("retryRequest") == request.id:
        return None
    return request


def new_terminate_command(job: Obj) -> dict[str, object]:
    """The Command that terminates `job`, as `vcctl job terminate` makes it: owned by the Job, named
    by the API server from `<job>-terminatejob-`."""
    reference = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": meta.name(job),
        "uid": meta.uid(job),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": BUS_GROUP_VERSION,
        "kind": COMMAND_KIND,
        "metadata": {
            "generateName": f"{meta.name(job)}-{TERMINATE_JOB.lower()}-",
            "namespace": meta.namespace(job),
            "ownerReferences": [reference],
        },
        "action": TERMINATE_JOB,
        "target": reference,
    }
