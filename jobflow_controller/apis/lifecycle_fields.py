"""The lifecycle fields of a JobFlow (ours, docs/lifecycle.md): names, values, and the re-run request.

    spec:
      suspend: true                 # no new Job is created while true
      shutdown: Stop                # or Terminate; one way: "" -> Stop -> Terminate
      activeDeadlineSeconds: 7200   # the whole JobFlow, from its creation
      ttlSecondsAfterFinished: 600  # deleted this long after Succeed or Failed
      flows:
      - name: train
        activeDeadlineSeconds: 3600 # each attempt of the flow's Job

A re-run from failure is asked for with the annotation ``flow.volcano.sh/retry-request``, a JSON object
``{"id": "<non-empty string>", "flows": ["<flow>", ...]}`` (``flows`` optional: every Failed and Skipped
flow); the controller acts on a request whose ``id`` differs from ``status.retryRequest``. An
annotation rather than a field, so that plain ``kubectl annotate`` can write it and so that it is
kept as written across controller restarts. Pure functions over JSON dicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from jobflow_controller.apis.jobflow import RETRY_REQUEST_ANNOTATION as RETRY_REQUEST_ANNOTATION
from jobflow_controller.apis.meta import Obj
from jobflow_controller.apis.tenant_text import excerpt, excerpt_text, load_json

SUSPEND: Final = "suspend"
SHUTDOWN: Final = "shutdown"
ACTIVE_DEADLINE_SECONDS: Final = "activeDeadlineSeconds"
TTL_SECONDS_AFTER_FINISHED: Final = "ttlSecondsAfterFinished"
#: The status fields the controller writes about them.
SUSPENDED_SINCE: Final = "suspendedSince"
RETRY_REQUEST: Final = "retryRequest"

#: The JobFlow annotation carrying a re-run request, and its two keys.
REQUEST_ID: Final = "id"
REQUEST_FLOWS: Final = "flows"


class Shutdown(StrEnum):
    """``spec.shutdown``: as Argo's ``spec.shutdown``, one way."""

    NONE = ""
    STOP = "Stop"
    TERMINATE = "Terminate"


SHUTDOWN_VALUES: Final = tuple(s.value for s in Shutdown)
#: The changes of ``spec.shutdown`` an UPDATE may make (besides none).
SHUTDOWN_TRANSITIONS: Final = frozenset(
    {(Shutdown.NONE, Shutdown.STOP), (Shutdown.NONE, Shutdown.TERMINATE), (Shutdown.STOP, Shutdown.TERMINATE)}
)


def shutdown_change_allowed(old: str, new: str) -> bool:
    return old == new or (old, new) in SHUTDOWN_TRANSITIONS


@dataclass(frozen=True)
class RetryRequest:
    """A well-formed re-run request: its id, and the flows named (empty: every Failed and Skipped flow)."""

    id: str
    flows: tuple[str, ...]


def retry_request_text(job_flow: Obj) -> str | None:
    """The annotation's raw value, None when the JobFlow has none."""
    metadata = job_flow.get("metadata") if isinstance(job_flow, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(RETRY_REQUEST_ANNOTATION) if isinstance(annotations, Mapping) else None
    return value if value is None or isinstance(value, str) else excerpt(value)


def retry_request_value(request_id: str, flows: Sequence[str] = ()) -> str:
    """The annotation's value for a request: ``{"id": "...", "flows": [...]}``, ``flows`` left out when empty."""
    body: dict[str, Any] = {REQUEST_ID: request_id}
    if flows:
        body[REQUEST_FLOWS] = list(flows)
    return json.dumps(body, separators=(",", ":"))


def retry_request_problems(text: str, flow_names: set[str]) -> list[str]:
    """What is wrong with the annotation's value ``text``, for a JobFlow with these flows; empty when none.

    Never raises (docs/hostile-input.md): a text too long or too deep is one problem.
    """
    return _read(text, flow_names)[1]


def _read(text: str, flow_names: set[str]) -> tuple[RetryRequest | None, list[str]]:
    where = f"annotation {RETRY_REQUEST_ANNOTATION}"
    value, problem = load_json(text, where)
    if problem is not None:
        return None, [problem]
    if not isinstance(value, Mapping):
        example = '{"id": "r1", "flows": ["train"]}'
        return None, [f"{where}: must be a JSON object such as {example}, got {excerpt(value)}"]
    problems = [
        f'{where}: unknown field "{excerpt_text(key)}" (known: {REQUEST_ID}, {REQUEST_FLOWS})'
        for key in value
        if key not in (REQUEST_ID, REQUEST_FLOWS)
    ]
    request_id = value.get(REQUEST_ID)
    if request_id is None:
        problems.append(f"{where}.{REQUEST_ID}: required, a non-empty string that differs from the last request's")
    elif not isinstance(request_id, str) or not request_id:
        problems.append(f"{where}.{REQUEST_ID}: must be a non-empty string, got {excerpt(request_id)}")
    flows = value.get(REQUEST_FLOWS)
    problems.extend(_flows_problems(f"{where}.{REQUEST_FLOWS}", flows, flow_names))
    if problems:
        return None, problems
    return RetryRequest(id=str(request_id), flows=tuple(flows or ())), []


def _flows_problems(where: str, flows: Any, flow_names: set[str]) -> list[str]:
    if flows is None:
        return []
    if not isinstance(flows, list):
        return [f"{where}: must be a list of flow names, got {excerpt(flows)}"]
    problems: list[str] = []
    for index, name in enumerate(flows):
        if not isinstance(name, str):
            problems.append(f"{where}[{index}]: must be a flow name, got {excerpt(name)}")
        elif name not in flow_names:
            problems.append(f'{where}[{index}]: no flow of this JobFlow is named "{excerpt_text(name)}"')
    return problems


def read_retry_request(job_flow: Obj, flow_names: set[str]) -> RetryRequest | None:
    """The JobFlow's re-run request when it has a well-formed one, else None (absent or malformed)."""
    text = retry_request_text(job_flow)
    return None if text is None else _read(text, flow_names)[0]
