"""Warnings about tenant text the controller cannot read (docs/hostile-input.md): a malformed re-run
request, a malformed retry policy.

Whoever may `patch jobflows` can rewrite an annotation many times a second. Each cause gets one
Warning event per JobFlow generation, whatever the number of syncs, and so one log line (the event
broadcaster's "Event occurred"; nothing is logged here besides); the message is cut to
`MAX_MESSAGE` characters. Composed into the syncer (sync.py).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis import meta
from jobflow_controller.apis.lifecycle import RetryRequest, malformed_retry_request, pending_retry_request
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.world import WarningEvent

Obj = Mapping[str, Any]

#: Ours: the JobFlow's `flow.volcano.sh/retry-request` cannot be read or names no flow of it (stored
#: while the webhook was off). Nothing is re-run; the JobFlow is otherwise synced as before.
#: Argument: the problems.
REASON_INVALID_RETRY_REQUEST: Final = "InvalidRetryRequest"
MESSAGE_INVALID_RETRY_REQUEST: Final = "Re-run request ignored: %s"
#: The longest Warning message about tenant text (it quotes that text back, cut).
MAX_MESSAGE: Final = 1024


class InputWarnings:
    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder
        self._lock = threading.Lock()
        #: (namespace, name) -> reason -> (uid, generation) last warned about.
        self._warned: dict[tuple[str, str], dict[str, tuple[str, int]]] = {}

    def pending_retry_request(self, job_flow: Obj) -> RetryRequest | None:
        """`apis.lifecycle.pending_retry_request`, warning once about a malformed request."""
        problems = malformed_retry_request(job_flow)
        if problems:
            self.warn(
                job_flow,
                WarningEvent(REASON_INVALID_RETRY_REQUEST, MESSAGE_INVALID_RETRY_REQUEST, ("; ".join(problems),)),
            )
            return None
        return pending_retry_request(job_flow)

    def warn(self, job_flow: Obj, warning: WarningEvent, cause: str = "") -> None:
        """The Warning, unless this generation of this JobFlow already had it (for this `cause`: one
        reason may have several, as a `when` item per flow)."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        mark = (meta.uid(job_flow), meta.generation(job_flow))
        reason = f"{warning.reason}/{cause}" if cause else warning.reason
        with self._lock:
            causes = self._warned.setdefault(key, {})
            if causes.get(reason) == mark:
                return
            causes[reason] = mark
        message = cut(warning.message_fmt % warning.args)
        self._recorder.eventf(job_flow, c.EVENT_WARNING, warning.reason, "%s", message)

    # -- memories.py ----------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        with self._lock:
            self._warned.pop((namespace, name), None)

    def memory_sizes(self) -> dict[str, int]:
        return {"input_warned": len(self)}

    def __len__(self) -> int:
        with self._lock:
            return len(self._warned)


def cut(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[: MAX_MESSAGE - 40]}... ({len(message)} characters in all)"
