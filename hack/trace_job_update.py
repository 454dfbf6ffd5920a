"""The files one Job update passes through to the JobFlow's status write, traced on a real control plane.

Starts the local control plane (etcd, kube-apiserver), runs the JobFlow controller in this process
as the manager builds it (real informers, queue, workers, REST client), creates a JobTemplate and a
one-flow JobFlow, waits for its Job, then sets the Job's phase to Running through the status
subresource (as Volcano's job controller does) and records, with `sys.settrace` on every thread but
this one, each project file a function of which runs from that moment until the JobFlow's status
PUT carrying `runningJobs` has returned. Prints one JSON document: the files in the order first
entered, each with its thread and first function, and how many times `status_writer.py` was entered.
docs/architecture.md lists the result. Run: `.venv/bin/python hack/trace_job_update.py`.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobflow_controller.jobflow import JobFlowController  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.kube.config import build_config  # noqa: E402
from jobflow_controller.kube.informers import VolcanoInformerFactory  # noqa: E402
from jobflow_controller.kube.rest import RestClient  # noqa: E402
from jobflow_controller.local.controlplane import ControlPlane  # noqa: E402
from jobflow_controller.local.kubectl import install_crds  # noqa: E402
from jobflow_controller.local.resources import NAMESPACES  # noqa: E402
from jobflow_controller.record import FakeRecorder  # noqa: E402

NS = "trace"
PROJECT = tuple(str(ROOT / d) for d in ("jobflow_controller", "informers", "workqueue"))

_lock = threading.Lock()
_recording = threading.Event()
_seen: dict[str, tuple[int, str, str]] = {}
_entered: dict[str, int] = {}


def _tracer(frame: FrameType, event: str, arg: Any) -> None:
    if event != "call" or not _recording.is_set() or threading.current_thread() is threading.main_thread():
        return None
    path = frame.f_code.co_filename
    if not path.startswith(PROJECT):
        return None
    rel = str(Path(path).relative_to(ROOT))
    with _lock:
        if rel not in _seen:
            _seen[rel] = (len(_seen), threading.current_thread().name, frame.f_code.co_name)
        _entered[rel] = _entered.get(rel, 0) + 1
    return None


def main() -> None:
    plane = ControlPlane()
    plane.start()
    stop = threading.Event()
    try:
        install_crds(plane.kubeconfig_path)
        rest = RestClient(build_config(str(plane.kubeconfig_path)), qps=50, burst=100, user_agent="trace")
        clientset = Clientset(rest)
        clientset.resource(NAMESPACES).create({"metadata": {"name": NS}})
        controller = JobFlowController(clientset, VolcanoInformerFactory(clientset), FakeRecorder())
        threading.settrace(_tracer)
        sys.settrace(_tracer)
        threading.Thread(target=controller.run, args=(stop, 1), daemon=True, name="controller").start()
        template = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "a"}}
        pod = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
        template["spec"] = {"tasks": [{"name": "t", "replicas": 1, "template": pod}]}
        clientset.job_templates(NS).create(template)
        flow = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"}}
        flow["spec"] = {"flows": [{"name": "a"}], "jobRetainPolicy": "retain"}
        clientset.job_flows(NS).create(flow)
        job = _wait(lambda: _get(clientset.jobs(NS), "f-a"))
        _wait(lambda: (clientset.job_flows(NS).get("f").get("status") or {}).get("state"))
        time.sleep(1.0)  # everything the create caused has settled
        job = clientset.jobs(NS).get("f-a")
        job["status"] = {"state": {"phase": "Running"}}
        _recording.set()
        clientset.jobs(NS).update_status(job)
        _wait(lambda: "f-a" in (clientset.job_flows(NS).get("f").get("status") or {}).get("runningJobs", []))
        _recording.clear()
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        files = [
            {"file": f, "thread": t, "first_function": fn}
            for f, (_, t, fn) in sorted(_seen.items(), key=lambda kv: kv[1][0])
        ]
        print(
            json.dumps(
                {
                    "files": files,
                    "count": len(files),
                    "status_writer_entered": _entered.get("jobflow_controller/jobflow/status_writer.py", 0),
                },
                indent=1,
            )
        )
    finally:
        stop.set()
        plane.stop()


def _get(client: Any, name: str) -> Any:
    try:
        return client.get(name)
    except Exception:  # noqa: BLE001
        return None


def _wait(predicate: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError("trace: the controller did not get there")


if __name__ == "__main__":
    main()
