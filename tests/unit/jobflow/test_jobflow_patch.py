"""The controller applies `patch.jobSpec` (ours; upstream ignores it) and reports a patch that cannot apply.

The merge rules themselves are tested in tests/unit/apis/test_apis_patch.py; here: the created Job,
the `InvalidPatch` Warning, that the other flows go on and nothing is retried, and the triggers.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobflow_fakes import job_flow, job_template, new_fake_controller

from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.controller import JobFlowController

SPEC: dict[str, Any] = {
    "minAvailable": 1,
    "queue": "research",
    "maxRetry": 5,
    "tasks": [
        {
            "name": "worker",
            "replicas": 1,
            "template": {
                "spec": {
                    "containers": [{"name": "main", "image": "busybox:1.36", "env": [{"name": "MODE", "value": "a"}]}]
                }
            },
        }
    ],
}
#: What the API server stores for a patch that sets replicas, image and one env var: the CRD's
#: defaults maxRetry: 3 and queue: default come with it.
PATCH: dict[str, Any] = {
    "jobSpec": {
        "maxRetry": 3,
        "queue": "default",
        "tasks": [
            {
                "name": "worker",
                "replicas": 4,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "busybox:1.37", "env": [{"name": "MODE", "value": "b"}]}
                        ]
                    }
                },
            }
        ],
    }
}
UNKNOWN_TASK: dict[str, Any] = {"jobSpec": {"tasks": [{"name": "chief", "replicas": 1}]}}


def _req(name: str) -> Any:
    return JobFlowController.request_for("default", name)


def _setup(flows: list[dict[str, Any]], templates: tuple[str, ...] = ("train",), **kw: Any) -> tuple[Any, Any, Any]:
    controller, clientset, recorder = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(job_flow("jf", flows=flows, uid="uid-1", **kw))
    for name in templates:
        controller.job_template_informer.get_indexer().add(job_template(name, spec=copy.deepcopy(SPEC)))
    return controller, clientset, recorder


def _created(clientset: Any) -> dict[str, dict[str, Any]]:
    return {a.name: a.body for a in clientset.api.actions if a.verb == "create"}


def test_the_job_is_the_template_spec_with_the_flows_patch_merged_in() -> None:
    controller, clientset, recorder = _setup([{"name": "train", "patch": PATCH}])
    controller.sync.handle_job_flow(_req("jf"))
    spec = _created(clientset)["jf-train"]["spec"]
    assert spec == {
        "minAvailable": 1,
        "queue": "research",  # the CRD's default queue in the stored patch is not applied
        "maxRetry": 5,
        "tasks": [
            {
                "name": "worker",
                "replicas": 4,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "busybox:1.37", "env": [{"name": "MODE", "value": "b"}]}
                        ]
                    }
                },
            }
        ],
    }
    assert recorder.drain() == ["Normal Created create a job named jf-train!"]


def test_a_patch_changes_nothing_but_the_spec() -> None:
    patched, patched_api, _ = _setup([{"name": "train", "patch": PATCH}])
    plain, plain_api, _ = _setup([{"name": "train"}])
    patched.sync.handle_job_flow(_req("jf"))
    plain.sync.handle_job_flow(_req("jf"))
    with_patch, without = _created(patched_api)["jf-train"], _created(plain_api)["jf-train"]
    assert with_patch["metadata"] == without["metadata"]
    assert without["metadata"] == {
        "name": "jf-train",
        "namespace": "default",
        "labels": {"volcano.sh/createdByJobTemplate": "default.train", "volcano.sh/createdByJobFlow": "default.jf"},
        "annotations": {
            "volcano.sh/createdByJobTemplate": "default.train",
            "volcano.sh/createdByJobFlow": "default.jf",
        },
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": "jf",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert set(with_patch) == set(without) == {"apiVersion", "kind", "metadata", "spec"}
    assert without["spec"] == SPEC


@pytest.mark.parametrize(
    "patch", [{}, {"jobSpec": {"maxRetry": 3, "queue": "default"}}], ids=["empty", "only-defaults"]
)
def test_a_patch_with_nothing_to_apply_gives_the_template_verbatim(patch: dict[str, Any]) -> None:
    controller, clientset, _ = _setup([{"name": "train", "patch": patch}])
    controller.sync.handle_job_flow(_req("jf"))
    assert _created(clientset)["jf-train"]["spec"] == SPEC


def test_the_cached_template_and_job_flow_are_never_modified() -> None:
    controller, _, _ = _setup([{"name": "train", "patch": PATCH}])
    template = controller.job_template_lister.job_templates("default").get("train")
    flow = controller.job_flow_lister.job_flows("default").get("jf")
    before = copy.deepcopy((template, flow))
    controller.sync.handle_job_flow(_req("jf"))
    assert (template, flow) == before


def test_a_patch_task_the_template_lacks_gets_an_invalid_patch_warning_and_no_job() -> None:
    controller, clientset, recorder = _setup(
        [{"name": "train", "patch": UNKNOWN_TASK}, {"name": "other"}], templates=("train", "other")
    )
    controller.sync.handle_job_flow(_req("jf"))  # no error: nothing is retried
    assert list(_created(clientset)) == ["jf-other"]
    assert recorder.drain() == [
        'Warning InvalidPatch Job jf-train is not created: the patch of flow "train" does not apply to '
        'JobTemplate "train": patch.jobSpec.tasks[0]: no task "chief" in the template (its tasks: "worker")',
        "Normal Created create a job named jf-other!",
    ]
    assert [a.verb for a in clientset.api.actions if a.resource == "jobflows"] == ["update_status"]


def test_the_reason_and_message_are_pinned() -> None:
    assert c.REASON_INVALID_PATCH == "InvalidPatch"
    assert c.MESSAGE_INVALID_PATCH == (
        'Job %s is not created: the patch of flow "%s" does not apply to JobTemplate "%s": %s'
    )


def test_an_invalid_patch_is_not_retried() -> None:
    """Retrying cannot help until the JobFlow or the template changes: the request is forgotten."""
    controller, _, _ = _setup([{"name": "train", "patch": UNKNOWN_TASK}])
    controller.queue.add(_req("jf"))
    assert controller.workers._process_next_work_item()
    assert len(controller.queue) == 0
    assert controller.queue.num_requeues(_req("jf")) == 0


def test_a_malformed_patch_that_slipped_past_admission_stops_only_its_flow() -> None:
    """With the webhook off nothing refuses a nameless patch task: the controller reports it per flow."""
    controller, clientset, recorder = _setup(
        [{"name": "train", "patch": {"jobSpec": {"tasks": [{"replicas": 2}]}}}, {"name": "other"}],
        templates=("train", "other"),
    )
    controller.sync.handle_job_flow(_req("jf"))
    assert list(_created(clientset)) == ["jf-other"]
    assert recorder.drain()[0] == (
        'Warning InvalidPatch Job jf-train is not created: the patch of flow "train" does not apply to '
        'JobTemplate "train": patch.jobSpec.tasks[0]: has no name '
        "(patch entries are matched to the template's by name)"
    )


def test_a_waiting_flows_bad_patch_is_reported_before_its_targets_complete() -> None:
    flows = [{"name": "other"}, {"name": "train", "dependsOn": {"targets": ["other"]}, "patch": UNKNOWN_TASK}]
    controller, clientset, recorder = _setup(flows, templates=("train", "other"))
    controller.sync.handle_job_flow(_req("jf"))
    assert list(_created(clientset)) == ["jf-other"]
    events = recorder.drain()
    assert events[0] == "Normal Created create a job named jf-other!"
    assert events[1].startswith('Warning InvalidPatch Job jf-train is not created: the patch of flow "train"')


def test_a_waiting_flow_whose_template_is_missing_is_not_reported_early() -> None:
    flows = [{"name": "other"}, {"name": "train", "dependsOn": {"targets": ["other"]}, "patch": UNKNOWN_TASK}]
    controller, _, recorder = _setup(flows, templates=("other",))
    controller.sync.handle_job_flow(_req("jf"))
    assert recorder.drain() == ["Normal Created create a job named jf-other!"]


def test_a_valid_job_flow_with_an_invalid_patch_is_not_an_invalid_job_flow() -> None:
    controller, _, recorder = _setup(
        [{"name": "train", "patch": {"jobSpec": {"tasks": [{"name": "a"}, {"name": "a"}]}}}]
    )
    controller.sync.handle_job_flow(_req("jf"))
    events = recorder.drain()
    assert len(events) == 1 and events[0].startswith("Warning InvalidPatch ")
    assert events[0].endswith(': patch.jobSpec.tasks[1]: name "a" is already used by tasks[0]')


# -- triggers ---------------------------------------------------------------------------------------
def _template_with(generation: int, rv: str) -> dict[str, Any]:
    template = job_template("train", spec=copy.deepcopy(SPEC))
    template["metadata"].update(generation=generation, resourceVersion=rv)
    return template


def test_a_template_spec_change_resumes_the_unfinished_flows_with_a_patch() -> None:
    controller, _, _ = new_fake_controller()
    indexer = controller.job_flow_informer.get_indexer()
    indexer.add(job_flow("patched", flows=[{"name": "train", "patch": UNKNOWN_TASK}], phase="Running"))
    indexer.add(job_flow("plain", flows=[{"name": "train"}], phase="Running"))
    indexer.add(job_flow("done", flows=[{"name": "train", "patch": UNKNOWN_TASK}], phase="Failed"))
    indexer.add(job_flow("elsewhere", flows=[{"name": "eval", "patch": UNKNOWN_TASK}]))
    controller.handlers.update_job_template(_template_with(1, "10"), _template_with(2, "11"))
    item, _ = controller.queue.get()
    assert item.job_flow_name == "patched"
    assert len(controller.queue) == 0


def test_a_template_status_write_enqueues_nothing() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_flow_informer.get_indexer().add(
        job_flow("patched", flows=[{"name": "train", "patch": UNKNOWN_TASK}])
    )
    controller.handlers.update_job_template(_template_with(1, "10"), _template_with(1, "11"))
    assert len(controller.queue) == 0


def test_a_fixed_template_lets_the_flow_be_created() -> None:
    controller, clientset, recorder = _setup([{"name": "train", "patch": UNKNOWN_TASK}])
    controller.sync.handle_job_flow(_req("jf"))
    assert _created(clientset) == {}
    fixed = copy.deepcopy(SPEC)
    fixed["tasks"].append({"name": "chief", "replicas": 0, "template": {"spec": {"containers": [{"name": "c"}]}}})
    controller.job_template_informer.get_indexer().update(job_template("train", spec=fixed))
    recorder.drain()
    controller.sync.handle_job_flow(_req("jf"))
    assert [t["replicas"] for t in _created(clientset)["jf-train"]["spec"]["tasks"]] == [1, 1]
    assert recorder.drain() == ["Normal Created create a job named jf-train!"]
