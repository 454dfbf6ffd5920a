"""The controller refuses a patch that sets a field outside --jobflow-patch-allowed-fields (issue 21, item 7).

Such a flow gets the `InvalidPatch` Warning and no Job, as a patch that cannot apply does
(test_jobflow_patch.py); the matching itself is tested in tests/unit/apis/test_apis_patch_fields.py.
"""

from __future__ import annotations

import copy
from typing import Any

from jobflow_fakes import FakeClientset, job_flow, job_template

from jobflow_controller.apis.patch_fields import PatchFields, parse_patch_fields
from jobflow_controller.jobflow.controller import JobFlowController, JobFlowOptions
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.record import FakeRecorder
from workqueue import FakeClock

SPEC: dict[str, Any] = {
    "queue": "research",
    "tasks": [
        {"name": "worker", "replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "a"}]}}}
    ],
}
#: As the API server stores it: the CRD's defaults maxRetry: 3 and queue: default come with it.
SCALE: dict[str, Any] = {"jobSpec": {"maxRetry": 3, "queue": "default", "tasks": [{"name": "worker", "replicas": 4}]}}
IMAGE: dict[str, Any] = {
    "jobSpec": {
        "tasks": [{"name": "worker", "template": {"spec": {"containers": [{"name": "main", "image": "evil"}]}}}]
    }
}


def _setup(flows: list[dict[str, Any]], patch_fields: PatchFields | None) -> tuple[Any, Any, Any]:
    clientset, recorder = FakeClientset(), FakeRecorder()
    factory = VolcanoInformerFactory(clientset)  # type: ignore[arg-type]
    controller = JobFlowController(
        clientset,  # type: ignore[arg-type]
        factory,
        recorder,
        JobFlowOptions(patch_fields=patch_fields),
        clock=FakeClock(),
    )
    controller.job_flow_informer.get_indexer().add(job_flow("jf", flows=flows, uid="uid-1"))
    for name in {f["name"] for f in flows}:
        controller.job_template_informer.get_indexer().add(job_template(name, spec=copy.deepcopy(SPEC)))
    return controller, clientset, recorder


def _sync(controller: JobFlowController) -> None:
    controller.sync.handle_job_flow(JobFlowController.request_for("default", "jf"))


def _created(clientset: Any) -> dict[str, dict[str, Any]]:
    return {a.name: a.body for a in clientset.api.actions if a.verb == "create"}


def test_a_patch_setting_a_field_outside_the_allowed_ones_gets_invalid_patch_and_no_job() -> None:
    flows = [{"name": "train", "patch": IMAGE}, {"name": "other"}]
    allowed = parse_patch_fields(["tasks.replicas", "tasks.template.spec.containers.resources"])
    controller, clientset, recorder = _setup(flows, allowed)
    _sync(controller)
    assert list(_created(clientset)) == ["jf-other"]
    assert recorder.drain() == [
        'Warning InvalidPatch Job jf-train is not created: the patch of flow "train" does not apply to '
        'JobTemplate "train": patch.jobSpec.tasks[0].template.spec.containers[0].image: not among the fields '
        "a patch may set (--jobflow-patch-allowed-fields=tasks.replicas,tasks.template.spec.containers.resources)",
        "Normal Created create a job named jf-other!",
    ]


def test_a_patch_within_the_allowed_fields_is_applied() -> None:
    controller, clientset, recorder = _setup(
        [{"name": "train", "patch": SCALE}], parse_patch_fields(["tasks.replicas"])
    )
    _sync(controller)
    spec = _created(clientset)["jf-train"]["spec"]
    assert spec["tasks"][0]["replicas"] == 4
    assert spec["queue"] == "research"
    assert recorder.drain() == ["Normal Created create a job named jf-train!"]


def test_without_the_flag_every_field_may_be_set() -> None:
    controller, clientset, _ = _setup([{"name": "train", "patch": IMAGE}], None)
    _sync(controller)
    assert _created(clientset)["jf-train"]["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "evil"


def test_a_waiting_flow_is_reported_before_its_targets_complete() -> None:
    flows = [{"name": "other"}, {"name": "train", "dependsOn": {"targets": ["other"]}, "patch": IMAGE}]
    controller, clientset, recorder = _setup(flows, parse_patch_fields(["none"]))
    _sync(controller)
    assert list(_created(clientset)) == ["jf-other"]
    assert recorder.drain()[1].startswith(
        'Warning InvalidPatch Job jf-train is not created: the patch of flow "train" does not apply to '
        'JobTemplate "train": patch.jobSpec.tasks: patches may set no field'
    )
