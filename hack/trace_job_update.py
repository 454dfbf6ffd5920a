"""The path one Job update takes to the JobFlow's status write: the project files entered, and the frames.

Runs the real controller (informers, handlers, queue, worker loop, sync, status writer) on the unit
tests' recording clientset (tests/unit/jobflow/jobflow_fakes.py: only the API is fake): a one-flow
JobFlow that uses no extension of ours (apis/jobflow.py `extensions` is empty) in Pending, synced
once already, whose Job `f-a` moves from Pending to Running. The Job update goes through the
update handler into the queue; then, with `sys.setprofile` on, one `_process_next_work_item` runs
until the status PUT, where the stack is taken. Prints one JSON document:

- `files`: the project files (jobflow_controller/, kube/ excluded, as the issue counts them) a
  function of which ran between the dequeue and the PUT, in the order first entered;
- `frames`: the call chain from `_process_next_work_item` to the PUT (`update_status`), one
  `file:function` each.

docs/architecture.md lists the output; tests/unit/layers/test_short_path.py fails when the path
grows past that list. Run: `.venv/bin/python hack/trace_job_update.py`.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests/unit/jobflow")]

from jobflow_fakes import FakeResourceClient, job, job_flow, job_template, new_fake_controller  # noqa: E402

PACKAGE = ROOT / "jobflow_controller"
SKIPPED = PACKAGE / "kube"


def _project_file(path: str) -> str | None:
    """`path` relative to the project root when it counts (jobflow_controller/ but kube/), else None."""
    p = Path(path)
    if not p.is_relative_to(PACKAGE) or p.is_relative_to(SKIPPED):
        return None
    return str(p.relative_to(ROOT))


def trace() -> dict[str, Any]:
    """One Job update from the worker loop to the status PUT: the files entered and the frames."""
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase="Pending", status={"pendingJobs": ["f-a"]}, uid="u1")
    controller.job_flow_informer.get_indexer().add(flow)
    controller.job_template_informer.get_indexer().add(job_template("a"))
    old = job("f-a", flow="f", phase="Pending", created="2026-12-06T07:00:00Z", owner_uid="u1")
    new = job("f-a", flow="f", phase="Running", created="2026-12-06T07:00:00Z", rv="2", owner_uid="u1")
    # The JobFlow was synced once with its Job Pending (validated, status written): the update comes after.
    controller.job_informer.get_indexer().add(old)
    controller.handlers.enqueue_job_flow(controller.request_for("default", "f"))
    assert controller.workers._process_next_work_item()
    controller.job_informer.get_indexer().update(new)
    controller.handlers.job_funcs().on_update(old, new)

    files: list[str] = []
    frames: list[str] = []
    recording = [True]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not recording[0]:
            return
        rel = _project_file(frame.f_code.co_filename)
        if rel is not None and rel not in files:
            files.append(rel)

    original = FakeResourceClient.update_status

    def update_status(self: FakeResourceClient, obj: dict[str, Any]) -> dict[str, Any]:
        if self.resource.plural == "jobflows" and not frames:
            recording[0] = False
            stack = traceback.extract_stack()[:-1]
            start = next(i for i, f in enumerate(stack) if f.name == "_process_next_work_item")
            frames.extend(f"{_short(f.filename)}:{f.name}" for f in stack[start:])
            frames.append("kube/clientset.py:update_status")
        return original(self, obj)

    FakeResourceClient.update_status = update_status  # type: ignore[method-assign]
    sys.setprofile(profile)
    try:
        assert controller.workers._process_next_work_item()
    finally:
        sys.setprofile(None)
        FakeResourceClient.update_status = original  # type: ignore[method-assign]
    written = [a for a in clientset.api.actions if a.verb == "update_status"][1:]
    assert written and written[-1].body["status"]["runningJobs"] == ["f-a"], "no status write with f-a Running"
    return {"files": files, "file_count": len(files), "frames": frames, "frame_count": len(frames)}


def _short(path: str) -> str:
    p = Path(path)
    return str(p.relative_to(PACKAGE)) if p.is_relative_to(PACKAGE) else p.name


if __name__ == "__main__":
    print(json.dumps(trace(), indent=1))
