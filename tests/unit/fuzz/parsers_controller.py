"""The controller's and the admission rules' readers of tenant JSON, and the probes' network input.

`validation` is shared by the webhook and the controller (`validation_message` decides whether a
JobFlow is `InvalidJobFlow`); the informer handlers see every JobFlow and Job event of the cluster
and must never raise (a failure sleeps the shared listener); a probe reads whatever a tenant's pod
answers.
"""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path
from typing import Any

from registry import Parser

from jobflow_controller.apis.probe import HttpGet
from jobflow_controller.jobflow.probes import gate as probe_gate
from jobflow_controller.jobflow.probes.net import NetworkProbeRunner, refused_target
from jobflow_controller.validation import validate_job_flow, validate_job_flow_update
from jobflow_controller.validation.jobflow import validation_message
from jobflow_controller.validation.lifecycle import lifecycle_problems
from jobflow_controller.validation.names import job_name_problems

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobflow"))
from jobflow_fakes import new_fake_controller

_CONTROLLER, _, _ = new_fake_controller()
_HANDLERS = _CONTROLLER.handlers


def _update_job_flow(value: Any) -> None:
    _HANDLERS.update_job_flow({"metadata": {"name": "f", "resourceVersion": "1"}}, value)
    _HANDLERS.update_job_flow(value, value)  # the resync's replay
    _drain()


def _update_job(value: Any) -> None:
    _HANDLERS.update_job({"metadata": {"name": "j", "resourceVersion": "1"}}, value)
    _HANDLERS.delete_job(value)
    _drain()


def _drain() -> None:
    """The queue is never worked here: empty it so it stays small."""
    while len(_CONTROLLER.queue):
        item, _ = _CONTROLLER.queue.get()
        _CONTROLLER.queue.done(item)
        _CONTROLLER.queue.forget(item)


def _sync(value: Any) -> None:
    """One whole sync (observe, plan, execute against the recording fake API) of a JobFlow whose
    spec, annotations and status are the fuzzed value's."""
    raw = value if isinstance(value, dict) else {"spec": {"flows": value}}
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    job_flow = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {
            "name": "f",
            "namespace": "default",
            "uid": "u",
            "generation": 1,
            "resourceVersion": "1",
            "creationTimestamp": "2026-12-05T13:00:00Z",
            "annotations": metadata.get("annotations"),
        },
        "spec": raw.get("spec", raw),
        "status": raw.get("status"),
    }
    _SYNC_API.objects[("jobflows", "default", "f")] = job_flow
    _SYNC_CONTROLLER.job_flow_informer.get_indexer().update(job_flow)
    _SYNC_CONTROLLER.sync.handle_job_flow(_SYNC_CONTROLLER.request_for("default", "f"))


_SYNC_CONTROLLER, _sync_clientset, _ = new_fake_controller()
_SYNC_API = _sync_clientset.api
for _template in ("a", "b", "worker"):  # flows of these names have their Job created
    _SYNC_CONTROLLER.job_template_informer.get_indexer().add(
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "spec": {"tasks": [{"name": "worker"}]},
         "metadata": {"name": _template, "namespace": "default", "resourceVersion": "1"}}
    )  # fmt: skip


class _OneShotServer:
    """A TCP server on 127.0.0.1 that answers each connection with the next fuzzed bytes, then closes."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reply = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True, name="fuzz-probe-server").start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(1.0)
                try:
                    conn.recv(65536)
                    with self._lock:
                        reply = self.reply
                    conn.sendall(reply)
                except OSError:
                    pass


_SERVER: _OneShotServer | None = None


def _probe_response(data: Any) -> object:
    """kubelet's HTTP probe against a pod that answers `data` (any bytes) to the GET."""
    global _SERVER
    if _SERVER is None:
        _SERVER = _OneShotServer()
    with _SERVER._lock:
        _SERVER.reply = bytes(data) if isinstance(data, (bytes, bytearray)) else str(data).encode("utf-8", "replace")
    return NetworkProbeRunner().http_get("127.0.0.1", HttpGet(task_name="t", port=_SERVER.port, path="/"), 1.0)


PARSERS: list[Parser] = [
    # -- admission's rules (the webhook) and the controller's InvalidJobFlow ----------------------
    Parser("jobflow_controller.validation.jobflow.validate_job_flow", validate_job_flow, "json", ()),
    Parser(
        "jobflow_controller.validation.jobflow.validate_job_flow_update",
        lambda v: validate_job_flow_update(v, {"spec": {"flows": [{"name": "a"}]}}),
        "json",
        (),
    ),
    Parser("jobflow_controller.validation.jobflow.validation_message", validation_message, "json", ()),
    Parser("jobflow_controller.validation.lifecycle.lifecycle_problems", lifecycle_problems, "json", ()),
    Parser(
        "jobflow_controller.validation.names.job_name_problems",
        lambda t: job_name_problems("f", t) if isinstance(t, str) else None,
        "text",
        (),
    ),
    # -- the informer handlers --------------------------------------------------------------------
    Parser("jobflow_controller.jobflow.handler.JobFlowEventHandlers.update_job_flow", _update_job_flow, "json", ()),
    Parser("jobflow_controller.jobflow.handler.JobFlowEventHandlers.update_job", _update_job, "json", ()),
    # -- the sync ---------------------------------------------------------------------------------
    Parser("jobflow_controller.jobflow.sync.JobFlowSyncer.handle_job_flow", _sync, "json", ()),
    # -- probes: the pod, its address, what it answers -------------------------------------------
    Parser("jobflow_controller.jobflow.probes.net.refused_target", lambda t: refused_target({}, t), "text", ()),
    Parser(
        "jobflow_controller.jobflow.probes.net.refused_target[pod]",
        lambda v: refused_target(v if isinstance(v, dict) else {"spec": v}, "10.0.0.1"),
        "json",
        (),
    ),
    Parser("jobflow_controller.jobflow.probes.gate.job_tasks", lambda v: probe_gate.job_tasks({"spec": v}), "json", ()),
    Parser(
        "jobflow_controller.jobflow.probes.gate.task_phase_count",
        lambda v: probe_gate.task_phase_count({"status": v}, "t", "Running"),
        "json",
        (),
    ),
    Parser("jobflow_controller.jobflow.probes.net.NetworkProbeRunner.http_get", _probe_response, "bytes", (), 2.0),
]
