"""The sync, ported from upstream's jobflow_controller_action_test.go, plus the fixes we made."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobflow_fakes import (
    delete_all_jobs_created_by_job_flow,
    deploy_job,
    get_all_job_status,
    job,
    job_flow,
    job_template,
    load_job_template_and_set_job,
    new_fake_controller,
    strip_history_starts,
)

from jobflow_controller.apis import JobPhase, Phase
from jobflow_controller.apis.status import JobFlowStatus, JobRunningHistory, JobStatus
from jobflow_controller.jobflow.action import get_running_histories
from jobflow_controller.jobflow.observe import jobs_created_by_job_flow
from jobflow_controller.jobflow.state.pending import pending_update_status


def test_update_fn(status: JobFlowStatus, all_job_list: int) -> None:
    """The update function upstream's TestSyncJobFlowFunc passes instead of a real state's."""
    if len(status.completed_jobs) == all_job_list:
        status.phase = Phase.SUCCEED
    elif (status.running_jobs or status.completed_jobs) and not status.failed_jobs:
        status.phase = Phase.RUNNING
    elif status.failed_jobs or status.terminated_jobs:
        status.phase = Phase.FAILED
    else:
        status.phase = Phase.PENDING


test_update_fn.__test__ = False  # type: ignore[attr-defined]


def _sync_with_existing_job(phase: str) -> dict[str, Any]:
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("jobflow", flows=[{"name": "jobtemplate"}])
    controller.job_flow_informer.get_indexer().add(flow)
    controller.job_template_informer.get_indexer().add(job_template("jobtemplate"))
    controller.job_informer.get_indexer().add(
        job("jobflow-jobtemplate", flow="jobflow", template="jobtemplate", phase=phase, owner="jobflow")
    )
    controller.sync.sync_job_flow(flow, test_update_fn)
    writes = [a for a in clientset.api.actions if a.verb == "update_status"]
    assert len(writes) == 1
    return strip_history_starts(writes[0].body["status"])


def test_sync_job_flow_success_case() -> None:
    assert _sync_with_existing_job("Running") == {
        "runningJobs": ["jobflow-jobtemplate"],
        "jobStatusList": [
            {"name": "jobflow-jobtemplate", "state": "Running", "runningHistories": [{"state": "Running"}]}
        ],
        "conditions": {"jobflow-jobtemplate": {"phase": "Running"}},
        "state": {"phase": "Running"},
    }


def test_sync_job_flow_with_vcjob_status_failed() -> None:
    assert _sync_with_existing_job("Failed") == {
        "failedJobs": ["jobflow-jobtemplate"],
        "jobStatusList": [
            {"name": "jobflow-jobtemplate", "state": "Failed", "runningHistories": [{"state": "Failed"}]}
        ],
        "conditions": {"jobflow-jobtemplate": {"phase": "Failed"}},
        "state": {"phase": "Failed"},
    }


def test_sync_job_flow_with_vcjob_status_terminated() -> None:
    assert _sync_with_existing_job("Terminated") == {
        "terminatedJobs": ["jobflow-jobtemplate"],
        "jobStatusList": [
            {"name": "jobflow-jobtemplate", "state": "Terminated", "runningHistories": [{"state": "Terminated"}]}
        ],
        "conditions": {"jobflow-jobtemplate": {"phase": "Terminated"}},
        "state": {"phase": "Failed"},
    }


def test_running_histories_unchanged_when_the_phase_is_unchanged() -> None:
    t0, t1 = "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"
    existing = [JobStatus("vcJobA", "Completed", running_histories=[JobRunningHistory("Completed", t0, t1)])]
    assert get_running_histories(existing, "vcJobA", "Completed", "2024-01-01T00:05:00Z") == [
        JobRunningHistory("Completed", t0, t1)
    ]


def test_running_histories_close_the_last_entry_and_open_one_on_a_phase_change() -> None:
    t0, now = "2024-01-01T00:00:00Z", "2024-01-01T00:00:09Z"
    existing = [JobStatus("a", "Pending", running_histories=[JobRunningHistory("Pending", t0)])]
    assert get_running_histories(existing, "a", "Running", now) == [
        JobRunningHistory("Pending", t0, now),
        JobRunningHistory("Running", now),
    ]


def test_running_histories_of_a_job_with_no_phase_are_empty() -> None:
    assert get_running_histories([], "a", "", "2024-01-01T00:00:00Z") == []


def test_get_all_jobs_created_by_job_flow_selects_only_its_own_jobs() -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("JobflowA", flows=[{"name": "A"}, {"name": "B", "dependsOn": {"targets": ["A"]}}])
    indexer = controller.job_informer.get_indexer()
    indexer.add(
        job("JobflowA-A", flow="JobflowA", template="A", phase="Completed", retry_count=1, running_duration="1s")
    )
    indexer.add(job("JobflowA-B", flow="JobflowA", template="B", phase="Running"))
    indexer.add(job("JobflowB-A", flow="JobflowB", template="A"))
    indexer.add(job("JobflowB-B", flow="JobflowB", template="B"))
    names = sorted(j["metadata"]["name"] for j in jobs_created_by_job_flow(controller.job_lister, flow))
    assert names == ["JobflowA-A", "JobflowA-B"]


def test_get_all_job_status() -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("jobFlowA", flows=[{"name": "A"}, {"name": "B"}])
    t_a, t_b = "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"
    indexer = controller.job_informer.get_indexer()
    indexer.add(
        job("jobFlowA-A", flow="jobFlowA", phase="Completed", created=t_a, retry_count=1, running_duration="1s")
    )
    indexer.add(job("jobFlowA-B", flow="jobFlowA", phase="Running", created=t_b))
    status = strip_history_starts(get_all_job_status(controller, flow).to_dict())
    assert status == {
        "runningJobs": ["jobFlowA-B"],
        "completedJobs": ["jobFlowA-A"],
        "jobStatusList": [
            {
                "name": "jobFlowA-A",
                "state": "Completed",
                "startTimestamp": t_a,
                "endTimestamp": t_b,
                "restartCount": 1,
                "runningHistories": [{"state": "Completed"}],
            },
            {
                "name": "jobFlowA-B",
                "state": "Running",
                "startTimestamp": t_b,
                "runningHistories": [{"state": "Running"}],
            },
        ],
        "conditions": {
            "jobFlowA-A": {"phase": "Completed", "createTime": t_a, "runningDuration": "1s"},
            "jobFlowA-B": {"phase": "Running", "createTime": t_b},
        },
        "state": {},
    }


@pytest.mark.parametrize(
    ("phase", "listed_in"),
    [
        ("Pending", "pendingJobs"),
        ("Running", "runningJobs"),
        ("Completed", "completedJobs"),
        ("Failed", "failedJobs"),
        ("Terminated", "terminatedJobs"),
        ("Aborting", "unKnowJobs"),
        ("Aborted", "unKnowJobs"),
        ("Restarting", "unKnowJobs"),
        ("", "unKnowJobs"),
        ("Completing", None),
        ("Terminating", None),
    ],
)
def test_each_job_phase_lands_in_upstreams_status_list(phase: str, listed_in: str | None) -> None:
    controller, _, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}])
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase=phase))
    status = get_all_job_status(controller, flow).to_dict()
    lists = {k: v for k, v in status.items() if k.endswith("Jobs")}
    assert lists == ({listed_in: ["f-a"]} if listed_in else {})


def test_job_status_list_keeps_entries_of_jobs_that_are_gone() -> None:
    controller, _, _ = new_fake_controller()
    old = {"jobStatusList": [{"name": "f-gone", "state": "Completed"}]}
    flow = job_flow("f", flows=[{"name": "a"}], status=old)
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Running"))
    names = [e["name"] for e in get_all_job_status(controller, flow).to_dict()["jobStatusList"]]
    assert names == ["f-gone", "f-a"]


def test_load_job_template_and_set_job() -> None:
    controller, _, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("jobtemplate", spec={"queue": "q", "tasks": []}))
    flow = job_flow("jobflow", flows=[{"name": "jobtemplate"}])
    created = load_job_template_and_set_job(controller, flow, "jobtemplate", "jobflow-jobtemplate")
    keys = {"volcano.sh/createdByJobTemplate": "default.jobtemplate", "volcano.sh/createdByJobFlow": "default.jobflow"}
    assert created["metadata"] == {
        "name": "jobflow-jobtemplate",
        "namespace": "default",
        "labels": keys,
        "annotations": keys,
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": "jobflow",
                "uid": "",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert created["spec"] == {"queue": "q", "tasks": []}


def test_the_job_spec_is_the_templates_as_stored_with_no_empty_objects_added() -> None:
    """Upstream decodes the template into Go's JobSpec and encodes it again, so its Job shows
    `metadata: {}` in a task's pod template and `resources: {}` in a container, its quantities in
    canonical form (`1000m` as `"1"`) and no zero value that `omitempty` drops (`maxRetry: 0`).
    Ours sends the spec the API server stored for the template: nothing added, nothing rewritten."""
    controller, _, _ = new_fake_controller()
    spec = {
        "maxRetry": 0,
        "tasks": [
            {
                "name": "t",
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "busybox"},
                            {"name": "d", "image": "busybox", "resources": {"requests": {"cpu": "1000m"}}},
                        ]
                    }
                },
            }
        ],
    }
    controller.job_template_informer.get_indexer().add(job_template("t", spec=copy.deepcopy(spec)))
    created = load_job_template_and_set_job(controller, job_flow("f", flows=[{"name": "t"}]), "t", "f-t")
    assert created["spec"] == spec


def test_load_job_template_fails_with_the_listers_not_found() -> None:
    controller, _, _ = new_fake_controller()
    with pytest.raises(Exception, match=r'^jobtemplate\.flow\.volcano\.sh "b" not found$'):
        load_job_template_and_set_job(controller, job_flow("f"), "b", "f-b")


def test_deploy_job_creates_a_job_with_no_dependencies_and_a_created_event() -> None:
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("jobtemplate"))
    deploy_job(controller, job_flow("jobflow", flows=[{"name": "jobtemplate"}]))
    assert clientset.api.verbs("jobs") == [("create", "jobflow-jobtemplate")]
    assert recorder.drain() == ["Normal Created create a job named jobflow-jobtemplate!"]


def test_deploy_job_waits_until_every_target_is_completed() -> None:
    controller, clientset, _ = new_fake_controller()
    for name in ("a", "b", "c"):
        controller.job_template_informer.get_indexer().add(job_template(name))
    flow = job_flow("f", flows=[{"name": "a"}, {"name": "b"}, {"name": "c", "dependsOn": {"targets": ["a", "b"]}}])
    indexer = controller.job_informer.get_indexer()
    indexer.add(job("f-a", flow="f", phase="Completed"))
    indexer.add(job("f-b", flow="f", phase="Completing"))
    deploy_job(controller, flow)
    assert clientset.api.verbs("jobs") == []
    indexer.update(job("f-b", flow="f", phase="Completed", rv="2"))
    deploy_job(controller, flow)
    assert clientset.api.verbs("jobs") == [("create", "f-c")]


def test_deploy_job_creates_at_once_for_empty_targets() -> None:
    controller, clientset, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    deploy_job(controller, job_flow("f", flows=[{"name": "a", "dependsOn": {"targets": []}}]))
    assert clientset.api.verbs("jobs") == [("create", "f-a")]


def test_deploy_job_treats_already_exists_of_its_own_job_as_success_without_an_event() -> None:
    """The cache had not seen our Job yet: upstream's AlreadyExists-is-success, checked by one GET."""
    controller, clientset, recorder = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("a"))
    clientset.jobs("default").create(job("f-a", flow="f"))
    clientset.api.actions.clear()
    deploy_job(controller, job_flow("f", flows=[{"name": "a"}]))
    assert clientset.api.verbs("jobs") == [("create", "f-a"), ("get", "f-a")]
    assert recorder.drain() == []


def test_a_missing_template_does_not_stop_the_other_flows() -> None:
    """Deviation: upstream stops at the first failed create; we try every flow, then fail."""
    controller, clientset, _ = new_fake_controller()
    controller.job_template_informer.get_indexer().add(job_template("b"))
    with pytest.raises(Exception, match="not found"):
        deploy_job(controller, job_flow("f", flows=[{"name": "a"}, {"name": "b"}]))
    assert clientset.api.verbs("jobs") == [("create", "f-b")]


def test_status_is_written_even_when_a_create_failed() -> None:
    """Deviation: upstream writes no status in a pass where any create failed."""
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}, {"name": "b"}])
    controller.job_informer.get_indexer().add(job("f-b", flow="f", phase="Running"))
    with pytest.raises(Exception, match="not found"):
        controller.sync.sync_job_flow(flow, pending_update_status)
    writes = [a.body["status"]["runningJobs"] for a in clientset.api.actions if a.verb == "update_status"]
    assert writes == [["f-b"]]


def test_delete_all_jobs_created_by_job_flow_selects_by_label_only() -> None:
    controller, clientset, _ = new_fake_controller()
    clientset.jobs("default").create({"metadata": {"name": "jobtemplate"}})
    clientset.api.actions.clear()
    delete_all_jobs_created_by_job_flow(controller, job_flow("jobflow", flows=[{"name": "jobtemplate"}]))
    assert clientset.api.verbs("jobs") == []


def test_a_succeeded_delete_flow_deletes_its_jobs_and_writes_no_status() -> None:
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], retain="delete", phase="Succeed")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Completed"))
    clientset.jobs("default").create({"metadata": {"name": "f-a"}})
    clientset.api.actions.clear()
    controller.sync.sync_job_flow(flow, pending_update_status)
    assert clientset.api.verbs() == [("delete", "f-a")]


def test_a_job_already_deleted_counts_as_deleted() -> None:
    """Deviation: upstream requeues on NotFound from a stale cache; the Job is gone, as wanted."""
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], retain="delete", phase="Succeed")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Completed"))
    delete_all_jobs_created_by_job_flow(controller, flow)
    assert clientset.api.verbs() == [("delete", "f-a")]


def test_the_cache_is_never_mutated() -> None:
    controller, _, _ = new_fake_controller()
    history = {"name": "f-a", "state": "Pending", "runningHistories": [{"state": "Pending", "startTimestamp": "x"}]}
    flow = job_flow("f", flows=[{"name": "a"}], phase="Pending", status={"jobStatusList": [history]})
    controller.job_flow_informer.get_indexer().add(flow)
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Running"))
    import copy

    before = copy.deepcopy(flow)
    controller.sync.sync_job_flow(flow, pending_update_status)
    assert flow == before


def test_metrics_count_a_transition_only_after_the_status_write_succeeded() -> None:
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase="Running")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Failed"))
    clientset.api.fail[("update_status", "f")] = RuntimeError("conflict")
    from jobflow_controller.jobflow.state.running import running_update_status

    with pytest.raises(RuntimeError):
        controller.sync.sync_job_flow(flow, running_update_status)
    assert controller.metrics.failed_count("default") == 0
    del clientset.api.fail[("update_status", "f")]
    controller.sync.sync_job_flow(flow, running_update_status)
    assert controller.metrics.failed_count("default") == 1


def test_an_unchanged_status_is_not_written_again() -> None:
    controller, clientset, _ = new_fake_controller()
    flow = job_flow("f", flows=[{"name": "a"}], phase="Running")
    controller.job_informer.get_indexer().add(job("f-a", flow="f", phase="Running"))
    controller.sync.sync_job_flow(flow, pending_update_status)
    written = next(a.body for a in clientset.api.actions if a.verb == "update_status")
    clientset.api.actions.clear()
    controller.sync.sync_job_flow(written, pending_update_status)
    assert clientset.api.verbs() == []


def test_phase_enum_values_are_upstreams() -> None:
    assert [p.value for p in Phase] == ["Succeed", "Terminating", "Failed", "Running", "Pending"]
    assert JobPhase.COMPLETED == "Completed"
    assert [p.value for p in JobPhase] == [
        "Pending",
        "Aborting",
        "Aborted",
        "Running",
        "Restarting",
        "Completing",
        "Completed",
        "Terminating",
        "Terminated",
        "Failed",
    ]


def test_jobs_are_selected_by_label_within_the_job_flows_namespace_only() -> None:
    controller, _, _ = new_fake_controller()
    indexer = controller.job_informer.get_indexer()
    indexer.add(job("f-a", "default", flow="f"))
    stray = job("f-a", "other", flow="f")
    stray["metadata"]["labels"]["volcano.sh/createdByJobFlow"] = "default.f"  # same value, other namespace
    indexer.add(stray)
    indexer.add(job("f-b", "default", flow="g"))
    found = jobs_created_by_job_flow(controller.job_lister, job_flow("f"))
    assert [(j["metadata"]["namespace"], j["metadata"]["name"]) for j in found] == [("default", "f-a")]


def test_running_histories_keep_the_first_every_retrying_and_the_last_eight_entries() -> None:
    from jobflow_controller.jobflow.action import MAX_RUNNING_HISTORIES, bounded_histories

    flapping = [JobRunningHistory("Pending" if i % 2 else "Running", f"t{i}") for i in range(40)]
    flapping[5] = JobRunningHistory("Retrying", "t5")
    kept = bounded_histories(flapping)
    assert kept[0] == flapping[0] and kept[1] == flapping[5]
    assert MAX_RUNNING_HISTORIES == 8
    assert kept[2:] == flapping[-MAX_RUNNING_HISTORIES:]
    assert bounded_histories(flapping[:9]) == flapping[:9]


def test_one_sync_creates_at_most_25_jobs_and_queues_the_job_flow_again_for_the_rest() -> None:
    from jobflow_controller.jobflow.action import MAX_CREATES_PER_SYNC

    controller, clientset, _ = new_fake_controller()
    flow = job_flow("wide", flows=[{"name": f"f{i}"} for i in range(30)])
    controller.job_flow_informer.get_indexer().add(flow)
    for i in range(30):
        controller.job_template_informer.get_indexer().add(job_template(f"f{i}"))
    req = controller.request_for("default", "wide")
    controller.sync.handle_job_flow(req)
    assert MAX_CREATES_PER_SYNC == 25
    assert [n for v, n in clientset.api.verbs("jobs") if v == "create"] == [f"wide-f{i}" for i in range(25)]
    assert len(controller.queue) == 1  # back at once for the other five
    for i in range(25):  # the informer shows the first 25 (expectations say so already)
        controller.job_informer.get_indexer().add(job(f"wide-f{i}", flow="wide"))
    controller.sync.handle_job_flow(req)
    assert [n for v, n in clientset.api.verbs("jobs") if v == "create"][25:] == [f"wide-f{i}" for i in range(25, 30)]
