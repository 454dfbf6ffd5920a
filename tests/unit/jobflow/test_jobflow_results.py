"""Results at the planner's named points (docs/results.md): which Jobs are read, a dependent waits for
its target's results, an invalid result fails the flow with one Warning, the results survive the Job
and go when it runs again, and a JobFlow without results makes no request and keeps no reading."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from jobflow_fakes import FakeClientset, FakeResourceClient, job, job_flow, job_template, new_fake_controller
from test_jobflow_action import test_update_fn
from test_jobflow_planner import UID, plan_through_state, world_of

from jobflow_controller.apis import Phase
from jobflow_controller.apis.results import MAX_TOTAL_RESULT_BYTES, Reading
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.policies import choose_policy
from jobflow_controller.jobflow.results_policy import ResultsPolicy
from jobflow_controller.jobflow.results_reader import ResultsReader, jobs_to_read, within_budget
from jobflow_controller.jobflow.world import NO_READINGS, JobCreate, SyncPlan, WarningEvent, World

FLOWS = [{"name": "train", "results": {"names": ["acc"]}}, {"name": "publish", "dependsOn": {"targets": ["train"]}}]


def vc_job(name: str, phase: str, uid: str = "job-uid") -> dict[str, Any]:
    out = job(name, flow="f", owner_uid=UID, phase=phase)
    out["metadata"]["uid"] = uid
    out["spec"] = {"tasks": [{"name": "main"}]}
    return out


def world(phases: dict[str, str], status: dict[str, Any] | None = None, flows: list[Any] = FLOWS) -> World:
    obj = job_flow("f", flows=flows, uid=UID, status=status, phase="Running")
    return world_of(obj, [vc_job(f"f-{n}", p) for n, p in phases.items()])


def pod(message: str, uid: str = "job-uid") -> dict[str, Any]:
    owner = {"kind": "Job", "uid": uid, "controller": True}
    terminated = {"state": {"terminated": {"message": message}}, "name": "main"}
    return {"metadata": {"ownerReferences": [owner]}, "status": {"containerStatuses": [terminated]}}


class Pods:
    """A fake `GetPod` that counts its requests."""

    def __init__(self, pods: dict[str, dict[str, Any]] | None = None) -> None:
        self.pods = pods or {}
        self.requests: list[str] = []

    def __call__(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.requests.append(name)
        return self.pods.get(name)


def plan(w: World) -> SyncPlan:
    found = plan_through_state(w)
    assert found is not None and found.status is not None
    return found


def created(p: SyncPlan) -> list[str]:
    return [s.flow for s in p.deploy.steps if isinstance(s, JobCreate)]


def entry(p: SyncPlan, name: str) -> dict[str, Any]:
    return next(e for e in p.status_body()["jobStatusList"] if e["name"] == name)


def test_a_completed_job_unread_holds_its_dependents() -> None:
    w = world({"train": "Completed"})
    assert isinstance(choose_policy(w), ResultsPolicy)
    assert created(plan(w)) == []


def test_read_results_go_on_the_jobs_entry_and_the_dependent_is_created() -> None:
    pods = Pods({"f-train-main-0": pod(json.dumps({"acc": "0.93", "other": "x"}))})
    w = ResultsReader(pods).read(world({"train": "Completed"}))
    p = plan(w)
    assert pods.requests == ["f-train-main-0"]
    assert created(p) == ["publish"]
    assert entry(p, "f-train")["results"] == {"acc": "0.93"}
    assert p.notices == []


def test_a_missing_result_fails_the_flow_with_one_invalid_result_warning() -> None:
    w = ResultsReader(Pods({"f-train-main-0": pod("segfault")})).read(world({"train": "Completed"}))
    p = plan(w)
    assert created(p) == []
    assert p.status is not None and p.status.phase == Phase.FAILED
    (notice,) = [n for n in p.notices if n.reason == c.REASON_INVALID_RESULT]
    assert notice.warning and notice.args[:2] == ("train", "f-train")
    assert "'acc': not reported by any container" in notice.args[2]
    assert entry(p, "f-train")["results"] == {}


def test_a_gone_pod_fails_the_flow() -> None:
    p = plan(ResultsReader(Pods()).read(world({"train": "Completed"})))
    assert p.status is not None and p.status.phase == Phase.FAILED
    assert "pod f-train-main-0 not found" in p.notices[-1].args[2]


def test_a_failed_jobs_missing_results_add_no_warning() -> None:
    p = plan(ResultsReader(Pods()).read(world({"train": "Failed"})))
    assert [n for n in p.notices if n.reason == c.REASON_INVALID_RESULT] == []
    assert entry(p, "f-train")["results"] == {}


def test_recorded_results_are_not_read_again_and_survive_the_job() -> None:
    status = {"jobStatusList": [{"name": "f-train", "state": "Completed", "results": {"acc": "0.9"}}]}
    pods = Pods()
    w = ResultsReader(pods).read(world({}, status=status))
    assert pods.requests == [] and w.readings is NO_READINGS
    p = plan(w)
    assert created(p) == ["publish"]
    assert entry(p, "f-train")["results"] == {"acc": "0.9"}


def test_a_job_running_again_drops_its_earlier_results_then_is_read_anew() -> None:
    histories = [{"state": "Completed"}, {"state": "Rerun"}]
    status = {
        "jobStatusList": [
            {"name": "f-train", "state": "Completed", "results": {"acc": "0.1"}, "runningHistories": histories}
        ]
    }
    p = plan(world({"train": "Running"}, status=status))
    assert "results" not in entry(p, "f-train")
    w = world({"train": "Completed"}, status=status)
    assert list(jobs_to_read(w)) == []  # attempt 0: the Job the re-run replaces, being deleted
    again = w.named_jobs["f-train"]
    again["metadata"]["annotations"][ATTEMPT_ANNOTATION] = "1"
    assert [name for name, _job, _d in jobs_to_read(w)] == ["f-train"]


def test_a_completed_job_gone_before_it_was_read_is_a_problem_without_a_request() -> None:
    status = {"jobStatusList": [{"name": "f-train", "state": "Completed"}]}
    pods = Pods()
    w = ResultsReader(pods).read(world({}, status=status))
    assert pods.requests == []
    assert "deleted before its results were read" in w.readings["f-train"].problems[0]


def test_results_past_the_job_flows_total_are_refused() -> None:
    big = {"acc": "x" * (MAX_TOTAL_RESULT_BYTES - 5)}
    status = {"jobStatusList": [{"name": "f-a", "state": "Completed", "results": big}]}
    flows = [{"name": "a", "results": {"names": ["acc"]}}, {"name": "b", "results": {"names": ["acc"]}}]
    w = world({"b": "Completed"}, status=status, flows=flows)
    out = within_budget(w, {"f-b": Reading({"acc": "0.95"})})
    assert dict(out["f-b"].values) == {} and "more than the 65536 allowed" in out["f-b"].problems[0]


def test_a_job_flow_without_results_makes_no_request_and_keeps_no_reading() -> None:
    pods = Pods()
    plain = world_of(job_flow("f", flows=[{"name": "a"}], uid=UID), [vc_job("f-a", "Completed")])
    assert ResultsReader(pods).read(plain) is plain
    assert pods.requests == [] and plain.readings is NO_READINGS
    assert "results" not in json.dumps(plan(replace(plain)).status_body())


class CountingClientset(FakeClientset):
    """The fake API, with the pods a results flow reads; every request lands in `api.actions`."""

    def pods(self, namespace: str | None = None) -> FakeResourceClient:
        from jobflow_controller.kube.resources import PODS

        return self.resource(PODS, namespace)


def requests_of_one_sync(flows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    clientset = CountingClientset()
    controller, _, _ = new_fake_controller(clientset=clientset)
    flow_obj = job_flow("jf", flows=flows, uid=UID)
    controller.job_flow_informer.get_indexer().add(flow_obj)
    controller.job_template_informer.get_indexer().add(job_template("a"))
    controller.job_informer.get_indexer().add(vc_job("jf-a", "Completed"))
    controller.sync.sync_job_flow(flow_obj, test_update_fn)
    return [(a.verb, a.name) for a in clientset.api.actions]


def test_a_sync_without_results_sends_the_requests_of_today_and_one_with_results_one_pod_read_more() -> None:
    plain = requests_of_one_sync([{"name": "a"}])
    assert plain == [("update_status", "jf")]
    declaring = requests_of_one_sync([{"name": "a", "results": {"names": ["acc"]}}])
    assert declaring == [("list", "jf-a-main-0"), ("update_status", "jf")]  # a LIST by name: no `get` on pods


def args_of(p: SyncPlan, flow: str) -> list[str]:
    (made,) = [s for s in p.deploy.steps if isinstance(s, JobCreate) and s.flow == flow]
    assert made.body is not None
    return list(made.body["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"])


def with_args(w: World, flow: str, *args: str) -> World:
    task = {"name": "main", "template": {"spec": {"containers": [{"name": "c", "image": "b", "args": list(args)}]}}}
    return replace(w, templates={**w.templates, flow: job_template(flow, spec={"tasks": [task]})})


def test_a_dependent_job_reads_its_targets_results_and_an_unknown_reference_stays_as_written() -> None:
    status = {"jobStatusList": [{"name": "f-train", "state": "Completed", "results": {"acc": "0.93"}}]}
    w = with_args(world({}, status=status), "publish", "$(flows.train.results.acc)", "$(flows.train.results.nope)")
    assert args_of(plan(w), "publish") == ["0.93", "$(flows.train.results.nope)"]


def test_a_matrix_flows_results_are_an_array_in_index_order_and_a_when_can_test_a_result() -> None:
    matrix = {"params": [{"name": "x", "values": ["1", "2"]}]}
    flows = [
        {"name": "sweep", "matrix": matrix, "results": {"names": ["acc"]}},
        {"name": "pick", "dependsOn": {"targets": ["sweep"]}},
        {
            "name": "skip",
            "dependsOn": {"targets": ["sweep"]},
            "when": [{"input": "$(flows.sweep.results.acc[*])", "operator": "in", "values": ["[]"]}],
        },
    ]
    entries = [
        {"name": "f-sweep-0", "state": "Completed", "results": {"acc": "0.5"}},
        {"name": "f-sweep-1", "state": "Completed", "results": {"acc": "0.7"}},
    ]
    w = with_args(world({}, status={"jobStatusList": entries}, flows=flows), "pick", "$(flows.sweep.results.acc[*])")
    p = plan(w)
    assert args_of(p, "pick") == ['["0.5", "0.7"]']
    assert "skip" not in created(p)
    assert p.status is not None and "f-skip" in p.status.skipped_jobs


def test_results_count_in_the_expansion_budget() -> None:
    status = {"jobStatusList": [{"name": "f-train", "state": "Completed", "results": {"acc": "x" * 4096}}]}
    many = "$(flows.train.results.acc)" * 17  # 17 x 4 KiB: past the 64 KiB of one expanded string
    p = plan(with_args(world({}, status=status), "publish", many))
    assert created(p) == []
    (warning,) = [s for s in p.deploy.steps if isinstance(s, WarningEvent)]
    assert warning.reason == c.REASON_INVALID_PARAMS
