"""`wait()`: one watch on the JobFlow until its phase is final, a progress line while it runs.

The watch starts at the resourceVersion `create()`/`apply()` returned, so every change since is seen
and nothing is polled; without one, one GET gives it. Only if the server ends the stream early (its
own timeout, a restart) is another watch opened, from the last version seen. A Failed JobFlow
raises `JobFlowFailedError` naming its failed flows and the Warning events (one LIST of events).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from informers.listwatch import ListOptions
from jobflow_controller.apis.constants import FINISHED_PHASES, Phase
from jobflow_controller.kube.listwatch import ResourceListerWatcher
from jobflow_controller.kube.resources import JOB_FLOWS
from jobflow_sdk import run
from jobflow_sdk.errors import JobFlowDeletedError, JobFlowFailedError, WaitTimeoutError
from jobflow_sdk.status import flow_states, progress_line

Progress = Callable[[Mapping[str, Any]], None]
#: Seconds before another watch when the last one ended without an event.
RECONNECT_PAUSE = 1.0


def terminal_progress(stream: TextIO | None = None) -> Progress:
    """Rewrites one line of `stream` (stderr) with the phase and the flows' counts."""
    out = stream or sys.stderr

    def show(job_flow: Mapping[str, Any]) -> None:
        out.write("\r\033[K" + progress_line(job_flow))
        if str((job_flow.get("status") or {}).get("state", {}).get("phase") or "") in FINISHED_PHASES:
            out.write("\n")
        out.flush()

    return show


def notebook_progress() -> Progress | None:
    """In Jupyter: one output area, updated in place with the drawing and the counts; else None."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return None
    handle = display(HTML(""), display_id=True)

    def show(job_flow: Mapping[str, Any]) -> None:
        from jobflow_sdk.draw import svg

        handle.update(HTML(svg(job_flow) + f"<pre>{progress_line(job_flow)}</pre>"))

    return show


def auto_progress(enabled: bool | None) -> Progress | None:
    """`None`: a notebook's display, else a terminal's line when stderr is a terminal, else nothing."""
    if enabled is False:
        return None
    chosen = notebook_progress()
    if chosen is None and (enabled or sys.stderr.isatty()):
        chosen = terminal_progress()
    return chosen


def _phase(job_flow: Mapping[str, Any]) -> str:
    return str(((job_flow.get("status") or {}).get("state") or {}).get("phase") or "")


def wait_for(
    conn: run.Connection,
    name: str,
    namespace: str,
    *,
    resource_version: str | None,
    timeout: float,
    progress: Progress | None = None,
) -> str:
    """The final phase ("Succeed"), or raise: Failed, deleted, or still going after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    watcher = ResourceListerWatcher(conn.clientset.rest, JOB_FLOWS, namespace, field_selector=f"metadata.name={name}")
    last: Mapping[str, Any] = {}
    if not resource_version:
        last = run.get(conn, JOB_FLOWS, name, namespace)
        resource_version = str(last["metadata"]["resourceVersion"])
    while (phase := _phase(last)) not in FINISHED_PHASES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeoutError(name, phase, timeout)
        options = ListOptions(resource_version=resource_version, timeout_seconds=max(1, int(remaining)))
        stream, delivered = watcher.watch(options), False
        try:
            for event in stream:
                delivered = True
                if event.type == "ERROR":
                    # Too old a version (410 Gone): start again from the object as it is now.
                    last = run.get(conn, JOB_FLOWS, name, namespace)
                    resource_version = str(last["metadata"]["resourceVersion"])
                    break
                if event.type == "DELETED":
                    raise JobFlowDeletedError(name)
                resource_version = str((event.object.get("metadata") or {}).get("resourceVersion") or resource_version)
                if event.type in ("ADDED", "MODIFIED"):
                    last = event.object
                    if progress is not None:
                        progress(last)
                    if _phase(last) in FINISHED_PHASES or time.monotonic() >= deadline:
                        break
        finally:
            stream.stop()
        if not delivered:
            # A stream that ended at once (a proxy cutting it, a restarting server) is not reopened in a hot loop.
            time.sleep(min(RECONNECT_PAUSE, max(0.0, deadline - time.monotonic())))
    if phase == Phase.FAILED:
        raise failure(conn, last)
    return phase


def failure(conn: run.Connection, job_flow: Mapping[str, Any]) -> JobFlowFailedError:
    """The error for a Failed JobFlow: its failed flows (spec order) and the Warning events."""
    metadata = job_flow.get("metadata") or {}
    name, namespace = str(metadata.get("name")), str(metadata.get("namespace"))
    failed = [flow for flow, state in flow_states(job_flow).items() if state == "Failed"]
    return JobFlowFailedError(name, failed, run.warnings(run.events(conn, name, namespace)))
