"""`InvalidResult` is sent once per cause (docs/results.md): syncs after the one that read a Job's pod,
whether the informer has shown the status written or not yet, read nothing again and warn no more; a
Failed Job's missing results add no Warning; the JobFlow's own results unresolvable warn once. Through
the whole controller (its lister, its own-writes record, its recorder), each case synced four times.
And one sync reads at most `MAX_READS_PER_SYNC` pods, the rest in the next, queued at once."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jobflow_fakes import FakeRecorder, job_flow, job_template, new_fake_controller
from test_jobflow_planner import UID, world_of
from test_jobflow_results import CountingClientset, Pods, plan, pod, vc_job

from jobflow_controller.jobflow.controller import JobFlowController
from jobflow_controller.jobflow.results_reader import MAX_READS_PER_SYNC, ResultsReader
from jobflow_controller.kube.resources import JOB_FLOWS, PODS

FLOWS = [{"name": "train", "results": {"names": ["acc"]}}, {"name": "publish", "dependsOn": {"targets": ["train"]}}]
SYNCS = 4


def invalid_results(recorder: FakeRecorder) -> list[str]:
    return [e for e in recorder.drain() if "InvalidResult" in e]


def sync_times(
    phase: str | None,
    message: str | None,
    status: dict[str, Any] | None = None,
    own: list[dict[str, str]] | None = None,
    caught_up_after: int = 2,
) -> tuple[list[str], list[tuple[str, str]]]:
    """Sync the JobFlow `SYNCS` times (its Job `phase`, None: gone; its pod's `message`, None: no pod); the
    informer shows the status written only after `caught_up_after` syncs. The Warnings, the pod reads."""
    clientset = CountingClientset()
    controller, _, recorder = new_fake_controller(clientset=clientset)
    obj = job_flow("f", flows=FLOWS, uid=UID, status=status, phase="Running")
    if own is not None:
        obj["spec"]["results"] = own
    indexer = controller.job_flow_informer.get_indexer()
    indexer.add(obj)
    clientset.api.objects[(JOB_FLOWS.plural, "default", "f")] = copy.deepcopy(obj)
    for name in ("train", "publish"):
        controller.job_template_informer.get_indexer().add(job_template(name))
    if phase is not None:
        controller.job_informer.get_indexer().add(vc_job("f-train", phase))
    if own is not None:
        controller.job_informer.get_indexer().add(vc_job("f-publish", "Completed", uid="u2"))
    if message is not None:
        found = pod(message)
        found["metadata"].update(name="f-train-main-0", namespace="default")
        clientset.api.objects[(PODS.plural, "default", "f-train-main-0")] = found
    warnings: list[str] = []
    for i in range(SYNCS):
        if i == caught_up_after:
            indexer.update(copy.deepcopy(clientset.api.objects[(JOB_FLOWS.plural, "default", "f")]))
        controller.sync.handle_job_flow(JobFlowController.request_for("default", "f"))
        warnings += invalid_results(recorder)
    return warnings, [(a.verb, a.name) for a in clientset.api.actions if a.resource == PODS.plural]


@pytest.mark.parametrize(
    ("case", "phase", "message", "status", "warned"),
    [
        ("a Completed Job's pod reported nothing valid", "Completed", "segfault", None, 1),
        ("a Completed Job's value is not a string", "Completed", json.dumps({"acc": 1}), None, 1),
        ("a Completed Job's pod is gone", "Completed", None, None, 1),
        (
            "a Completed Job deleted before it was read",
            None,
            None,
            {"completedJobs": ["f-train"], "jobStatusList": [{"name": "f-train", "state": "Completed"}]},
            1,
        ),
        ("a Failed Job's pod is gone", "Failed", None, None, 0),
        ("a Failed Job reported nothing valid", "Failed", "segfault", None, 0),
        ("a Completed Job's results are valid", "Completed", json.dumps({"acc": "0.9"}), None, 0),
    ],
)
def test_invalid_result_is_sent_once_per_cause(
    case: str, phase: str | None, message: str | None, status: dict[str, Any] | None, warned: int
) -> None:
    warnings, reads = sync_times(phase, message, status)
    assert len(warnings) == warned, (case, warnings)
    assert len(reads) <= 1, (case, reads)  # the pod is read at most once, whatever the cache shows


@pytest.mark.parametrize("caught_up_after", [1, 2, SYNCS])
def test_the_jobflows_own_unresolvable_results_warn_once(caught_up_after: int) -> None:
    recorded = {"jobStatusList": [{"name": "f-train", "state": "Completed", "results": {"acc": "0.9"}}]}
    own = [{"name": "best", "value": "$(params.nope)"}]
    warnings, reads = sync_times("Completed", None, recorded, own, caught_up_after)
    assert len(warnings) == 1 and "result 'best': $(params.nope) has no value" in warnings[0]
    assert reads == []


def test_one_sync_reads_at_most_max_reads_per_sync_pods_and_queues_the_rest_at_once() -> None:
    size = MAX_READS_PER_SYNC + 4
    flows = [
        {"name": "sweep", "matrix": {"params": [{"name": "i", "values": [str(i) for i in range(size)]}]}},
        {"name": "use", "dependsOn": {"targets": ["sweep"]}},
    ]
    flows[0]["results"] = {"names": ["acc"]}
    names = [f"f-sweep-{i}" for i in range(size)]
    jobs = [vc_job(n, "Completed", uid=f"uid-{n}") for n in names]
    for j in jobs:
        j["spec"] = {"tasks": [{"name": "main"}]}
    pods = Pods({f"{n}-main-0": pod('{"acc": "1"}', uid=f"uid-{n}") for n in names})
    obj = job_flow("f", flows=flows, uid=UID, phase="Running")
    first = ResultsReader(pods).read(world_of(obj, jobs))
    assert len(pods.requests) == MAX_READS_PER_SYNC and first.readings_left
    p = plan(first)
    assert p.deploy.more and [s for s in p.deploy.steps if getattr(s, "flow", None) == "use"] == []
    second = ResultsReader(pods).read(world_of(job_flow("f", flows=flows, uid=UID, status=p.status_body()), jobs))
    assert len(pods.requests) == size and not second.readings_left
    assert [s.flow for s in plan(second).deploy.steps if hasattr(s, "flow")] == ["use"]
