"""The JobFlow controller against a real API server, with the simulator standing in for Volcano."""

from __future__ import annotations

import datetime
import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import EventLog, RunningManager, wait_for, wait_for_foreground_deletes
from jobflows import (
    FAST,
    SIM,
    chain,
    create_all,
    events_of,
    examples,
    flow,
    job_names,
    phase_of,
    template,
)

from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis.meta import parse_duration, parse_time
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import NotFoundError
from jobflow_controller.local.simulator import JobSimulator


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def _succeeded(clientset: Clientset, namespace: str, *names: str) -> bool:
    return all(phase_of(clientset, namespace, n) == "Succeed" for n in names)


def test_both_example_pipelines_succeed(controller: RunningManager, clientset: Clientset, namespace: str) -> None:
    create_all(clientset, examples(namespace))
    wait_for(lambda: _succeeded(clientset, namespace, "ml-pipeline", "parallel-pipeline"), 60, what="both Succeed")
    # retain keeps the chain's Jobs; delete removes the diamond's once it has Succeeded.
    wait_for(lambda: not [n for n in job_names(clientset, namespace) if n.startswith("parallel-")], 30)
    assert job_names(clientset, namespace) == [
        "ml-pipeline-data-preprocess",
        "ml-pipeline-model-evaluation",
        "ml-pipeline-model-training",
    ]
    metrics = controller.manager.controllers[0].metrics
    assert metrics.succeed_count(namespace) == 2
    assert metrics.failed_count(namespace) == 0


def test_no_job_is_created_before_all_its_targets_completed(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    log = EventLog(clientset.jobs(namespace).lister_watcher())
    try:
        create_all(clientset, examples(namespace))
        wait_for(lambda: _succeeded(clientset, namespace, "ml-pipeline", "parallel-pipeline"), 60)
        docs = {d["metadata"]["name"]: d for d in examples(namespace) if d["kind"] == "JobFlow"}
        completed: set[str] = set()
        created: list[str] = []
        # Our watch may lag the controller's: wait until it has seen all eight Jobs complete.
        wait_for(lambda: sum(1 for _, j in log.snapshot() if vcjob.phase(j) == "Completed") >= 8, 30)
        for kind, job in log.snapshot():
            name = job["metadata"]["name"]
            if kind == "ADDED":
                owner = job["metadata"]["ownerReferences"][0]["name"]
                flow_name = name.removeprefix(f"{owner}-")
                spec_flow = next(f for f in docs[owner]["spec"]["flows"] if f["name"] == flow_name)
                targets = (spec_flow.get("dependsOn") or {}).get("targets") or []
                missing = [t for t in targets if f"{owner}-{t}" not in completed]
                assert not missing, f"{name} was created before {missing} completed"
                created.append(name)
            if vcjob.phase(job) == "Completed":
                completed.add(name)
        assert len(created) == len(set(created)) == 8
    finally:
        log.close()


def test_status_is_what_upstream_computes(controller: RunningManager, clientset: Clientset, namespace: str) -> None:
    create_all(clientset, [template(n, namespace) for n in ("a", "b", "c")])
    create_all(clientset, [flow("chain", namespace, chain("a", "b", "c"))])
    wait_for(lambda: _succeeded(clientset, namespace, "chain"), 60)
    status = clientset.job_flows(namespace).get("chain")["status"]
    jobs = {j["metadata"]["name"]: j for j in clientset.jobs(namespace).list()}
    assert sorted(status["completedJobs"]) == sorted(jobs) == ["chain-a", "chain-b", "chain-c"]
    for key in ("pendingJobs", "runningJobs", "failedJobs", "terminatedJobs", "unKnowJobs"):
        assert key not in status
    assert status["state"] == {"phase": "Succeed"}
    for name, job in jobs.items():
        created = job["metadata"]["creationTimestamp"]
        duration = job["status"]["runningDuration"]
        assert status["conditions"][name] == {
            "phase": "Completed",
            "createTime": created,
            "runningDuration": duration,
            "taskStatusCount": job["status"]["taskStatusCount"],
        }
    entries = {e["name"]: e for e in status["jobStatusList"]}
    assert sorted(entries) == sorted(jobs)
    for name, entry in entries.items():
        job = jobs[name]
        created = job["metadata"]["creationTimestamp"]
        end = parse_time(created) + datetime.timedelta(seconds=parse_duration(job["status"]["runningDuration"]))
        assert entry["state"] == "Completed"
        assert entry["startTimestamp"] == created
        assert entry["endTimestamp"] == end.strftime("%Y-%m-%dT%H:%M:%SZ")
        states = [h["state"] for h in entry["runningHistories"]]
        assert states[-1] == "Completed"
        assert all(s in ("Pending", "Running", "Completed") for s in states) and len(states) == len(set(states))
        histories = entry["runningHistories"]
        for before, after in itertools.pairwise(histories):
            assert before["endTimestamp"] == after["startTimestamp"]
        assert "endTimestamp" not in histories[-1]


def test_kubectl_describe_shows_the_created_events(
    controller: RunningManager,
    clientset: Clientset,
    namespace: str,
    kubectl_run,  # type: ignore[no-untyped-def]
) -> None:
    create_all(clientset, [template(n, namespace) for n in ("a", "b")])
    create_all(clientset, [flow("described", namespace, chain("a", "b"))])
    wait_for(lambda: _succeeded(clientset, namespace, "described"), 60)
    wait_for(lambda: len(events_of(clientset, namespace, "described")) == 2, 15, what="two Created events")
    out = kubectl_run("describe", "jf", "described", "-n", namespace)
    assert "create a job named described-a!" in out
    assert "create a job named described-b!" in out
    assert "vc-controller-manager" in out
    assert sorted(events_of(clientset, namespace, "described")) == [
        ("Normal", "Created", "create a job named described-a!", 1),
        ("Normal", "Created", "create a job named described-b!", 1),
    ]


@pytest.mark.parametrize("ending", ["Failed", "Terminated"])
def test_a_failing_job_fails_the_flow_and_its_dependents_are_never_created(
    controller: RunningManager, clientset: Clientset, namespace: str, ending: str
) -> None:
    create_all(clientset, [template("a", namespace, f"Pending:0.2s,Running:0.3s,{ending}"), template("b", namespace)])
    create_all(clientset, [flow("doomed", namespace, chain("a", "b"))])
    wait_for(lambda: phase_of(clientset, namespace, "doomed") == "Failed", 60)
    status = clientset.job_flows(namespace).get("doomed")["status"]
    assert status[f"{ending.lower()}Jobs"] == ["doomed-a"]
    assert job_names(clientset, namespace) == ["doomed-a"]
    metrics = controller.manager.controllers[0].metrics
    assert metrics.failed_count(namespace) == 1
    assert metrics.succeed_count(namespace) == 0


def test_a_cycle_that_passes_the_crd_rules_gets_one_warning_and_no_jobs(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("a", namespace), template("b", namespace)])
    cyclic = [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    create_all(clientset, [flow("cyclic", namespace, cyclic)])
    wait_for(lambda: events_of(clientset, namespace, "cyclic"), 30, what="the Warning event")
    assert events_of(clientset, namespace, "cyclic") == [("Warning", "InvalidJobFlow", "jobflow Flow is not DAG", 1)]
    assert job_names(clientset, namespace) == []
    # The STATUS column of `kubectl get jf` shows it, as upstream's status for a JobFlow with no Jobs.
    wait_for(lambda: phase_of(clientset, namespace, "cyclic") == "Pending", 30, what="the Pending phase")


def test_a_deleted_job_is_recreated_at_once(controller: RunningManager, clientset: Clientset, namespace: str) -> None:
    """Upstream re-creates it too, but only on some later event; the Job delete handler is ours."""
    create_all(clientset, [template("a", namespace, "Pending:30s,Completed"), template("b", namespace)])
    create_all(clientset, [flow("recreate", namespace, chain("a", "b"))])
    wait_for(lambda: job_names(clientset, namespace) == ["recreate-a"], 30)
    first_uid = clientset.jobs(namespace).get("recreate-a")["metadata"]["uid"]
    clientset.jobs(namespace).delete("recreate-a")

    def recreated() -> bool:
        try:
            return clientset.jobs(namespace).get("recreate-a")["metadata"]["uid"] != first_uid
        except Exception:  # noqa: BLE001 - not there yet
            return False

    wait_for(recreated, 30, what="recreate-a to be created again")


# -- patch.jobSpec (ours: upstream ignores it; docs/patch.md) ------------------------------------------
def _two_task_template(name: str, namespace: str) -> dict[str, Any]:
    """A template with tasks ps and worker, a queue and maxRetry of its own (not the CRD's defaults)."""

    def pod(image: str, env: list[dict[str, str]], script: str | None = None) -> dict[str, Any]:
        metadata = {"annotations": {SIM: script}} if script else {}
        containers = [{"name": "main", "image": image, "env": env}]
        return {"metadata": metadata, "spec": {"containers": containers, "restartPolicy": "OnFailure"}}

    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "minAvailable": 2,
            "queue": "research",
            "maxRetry": 5,
            "schedulerName": "volcano",
            "tasks": [
                {"name": "ps", "replicas": 1, "template": pod("ps:1", [{"name": "ROLE", "value": "ps"}], FAST)},
                {
                    "name": "worker",
                    "replicas": 1,
                    "template": pod(
                        "busybox:1.36", [{"name": "MODE", "value": "template"}, {"name": "LR", "value": "0.1"}]
                    ),
                },
            ],
        },
    }


def _worker_patch(replicas: int, image: str, env: list[dict[str, str]]) -> dict[str, Any]:
    container = {"name": "main", "image": image, "env": env}
    return {
        "jobSpec": {
            "tasks": [{"name": "worker", "replicas": replicas, "template": {"spec": {"containers": [container]}}}]
        }
    }


def test_two_job_flows_share_one_template_and_patch_it_differently(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """The template is looked up by flow name (upstream's rule), so the sharing flows are in two JobFlows."""
    create_all(clientset, [_two_task_template("train", namespace)])
    small = _worker_patch(2, "busybox:1.36", [{"name": "MODE", "value": "small"}])
    big = _worker_patch(4, "busybox:1.37", [{"name": "MODE", "value": "big"}, {"name": "EPOCHS", "value": "10"}])
    big["jobSpec"]["minAvailable"] = 5
    create_all(
        clientset,
        [
            flow("small", namespace, [{"name": "train", "patch": small}]),
            flow("big", namespace, [{"name": "train", "patch": big}]),
        ],
    )
    # What the API server stored: the CRD's defaults come with every patch.jobSpec.
    stored = clientset.job_flows(namespace).get("small")["spec"]["flows"][0]["patch"]["jobSpec"]
    assert (stored["maxRetry"], stored["queue"]) == (3, "default")
    wait_for(lambda: _succeeded(clientset, namespace, "small", "big"), 60, what="both Succeed")

    def worker(job_name: str) -> tuple[int, str, list[dict[str, str]]]:
        task = next(t for t in clientset.jobs(namespace).get(job_name)["spec"]["tasks"] if t["name"] == "worker")
        container = task["template"]["spec"]["containers"][0]
        return task["replicas"], container["image"], container["env"]

    assert worker("small-train") == (
        2,
        "busybox:1.36",
        [{"name": "MODE", "value": "small"}, {"name": "LR", "value": "0.1"}],
    )
    assert worker("big-train") == (
        4,
        "busybox:1.37",
        [{"name": "MODE", "value": "big"}, {"name": "LR", "value": "0.1"}, {"name": "EPOCHS", "value": "10"}],
    )
    template_ps = clientset.job_templates(namespace).get("train")["spec"]["tasks"][0]
    for job_name, min_available in (("small-train", 2), ("big-train", 5)):
        job = clientset.jobs(namespace).get(job_name)
        spec = job["spec"]
        assert (spec["minAvailable"], spec["queue"], spec["maxRetry"]) == (min_available, "research", 5)
        assert [t["name"] for t in spec["tasks"]] == ["ps", "worker"]
        assert spec["tasks"][0] == template_ps
        assert job["metadata"]["labels"] == {
            "volcano.sh/createdByJobTemplate": f"{namespace}.train",
            "volcano.sh/createdByJobFlow": f"{namespace}.{job_name.removesuffix('-train')}",
        }
    # The template itself is untouched.
    template = clientset.job_templates(namespace).get("train")["spec"]
    assert [t["replicas"] for t in template["tasks"]] == [1, 1]


def test_a_bad_patch_gets_an_invalid_patch_warning_and_the_other_flows_still_run(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(
        clientset, [_two_task_template("train", namespace), template("prep", namespace), template("eval", namespace)]
    )
    bad = {"jobSpec": {"tasks": [{"name": "chief", "replicas": 1}]}}
    flows = [{"name": "prep"}, {"name": "train", "patch": bad}, {"name": "eval", "dependsOn": {"targets": ["prep"]}}]
    create_all(clientset, [flow("bad", namespace, flows)])
    message = (
        'Job bad-train is not created: the patch of flow "train" does not apply to JobTemplate "train": '
        'patch.jobSpec.tasks[0]: no task "chief" in the template (its tasks: "ps", "worker")'
    )

    def warned() -> bool:
        return any(e[:3] == ("Warning", "InvalidPatch", message) for e in events_of(clientset, namespace, "bad"))

    wait_for(warned, 30, what="the InvalidPatch Warning")
    wait_for(
        lambda: "bad-eval" in clientset.job_flows(namespace).get("bad").get("status", {}).get("completedJobs", []), 60
    )
    assert job_names(clientset, namespace) == ["bad-eval", "bad-prep"]
    assert phase_of(clientset, namespace, "bad") == "Running"
    assert {e[1] for e in events_of(clientset, namespace, "bad")} == {"Created", "InvalidPatch"}

    # A template edit that gives it the task resumes the flow at once (not at the next resync).
    fixed = clientset.job_templates(namespace).get("train")
    fixed["spec"]["tasks"].append({**fixed["spec"]["tasks"][1], "name": "chief", "replicas": 3})
    clientset.job_templates(namespace).update(fixed)
    wait_for(lambda: phase_of(clientset, namespace, "bad") == "Succeed", 20, what="bad to Succeed")
    chief = next(t for t in clientset.jobs(namespace).get("bad-train")["spec"]["tasks"] if t["name"] == "chief")
    assert chief["replicas"] == 1


def test_a_job_flow_deleted_in_the_foreground_goes_without_any_job_created_again(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """The API server sets `deletionTimestamp` (and bumps the generation), then the garbage collector
    deletes the Jobs before the JobFlow: a JobFlow being deleted must not create them again."""
    wait_for_foreground_deletes(clientset, namespace)
    create_all(clientset, [template("a", namespace, "Pending:0.2s,Running:60s,Completed"), template("b", namespace)])
    create_all(clientset, [flow("going", namespace, chain("a", "b"))])
    wait_for(lambda: job_names(clientset, namespace) == ["going-a"], 30, what="the first Job")
    clientset.job_flows(namespace).delete("going", propagation_policy="Foreground")

    def gone() -> bool:
        try:
            clientset.job_flows(namespace).get("going")
        except NotFoundError:
            return True
        return False

    wait_for(gone, 60, interval=0.2, what="the Foreground delete of the JobFlow")
    time.sleep(1.0)  # a create the controller would still make shows up within this
    assert job_names(clientset, namespace) == []
    created = [e for e in events_of(clientset, namespace, "going") if e[1] == "Created"]
    assert created == [("Normal", "Created", "create a job named going-a!", 1)]


def test_a_status_that_would_pass_etcds_limit_fails_the_job_flow_with_one_that_fits(
    controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    """80 Jobs of 250 tasks each: their taskStatusCount, copied into `conditions`, would make a status
    of about 1.8 MiB, which etcd refuses (1.5 MiB); the JobFlow records Failed with a status that fits."""
    tasks = [
        {
            "name": f"task-{i:03d}-{'x' * 50}",
            "replicas": 1,
            "template": {
                "metadata": {"annotations": {SIM: "Pending:0.2s,Running:120s,Completed"}},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        }
        for i in range(250)
    ]
    doc = template("wide", namespace)
    doc["spec"]["tasks"], doc["spec"]["minAvailable"] = tasks, 1
    create_all(clientset, [doc] + [{**template(f"w{i}", namespace), "spec": doc["spec"]} for i in range(80)])
    create_all(clientset, [flow("huge", namespace, [{"name": f"w{i}"} for i in range(80)])])
    # 80 Jobs of 250 tasks through the simulator: 120 s was not enough at a load average of 15.
    wait_for(lambda: phase_of(clientset, namespace, "huge") == "Failed", 240, interval=0.5, what="Failed")
    stored = clientset.job_flows(namespace).get("huge")["status"]
    assert len(json.dumps(stored, separators=(",", ":"))) <= 1024 * 1024  # as the controller measures it
    warnings = [e for e in events_of(clientset, namespace, "huge") if e[1] == "StatusTooLarge"]
    assert len(warnings) == 1 and "over the limit of 1048576 bytes" in warnings[0][2]
    assert "written without: running histories but the last" in warnings[0][2]
