"""The Python SDK against the real control plane: a pipeline written in Python is created, watched
to Succeed (with one watch, the requests counted), and its Jobs and events read back; a failing one
raises naming the failed flow; apply is a server-side apply that can be repeated; a lifecycle verb
sends the plugin's patch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.simulated_pods import RESULTS_ANNOTATION
from jobflow_controller.local.simulator import JobSimulator
from jobflow_sdk import SIMULATOR_PHASES, Connection, JobFlow, JobFlowFailedError, JobTemplate, connect

pytestmark = pytest.mark.e2e
FAST = "Pending:0.2s,Running:0.4s,Completed"
FAILS = "Pending:0.2s,Running:0.4s,Failed"


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=2)
    yield running
    running.stop()


class CountedConnection:
    """The SDK's connection with every request and watch it sends recorded (method, path, query)."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        self.connection: Connection = connect(str(kubeconfig), namespace=namespace)
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        rest = self.connection.clientset.rest
        request, stream = rest.request, rest.stream

        def counted_request(method: str, path: str, **kwargs: Any) -> Any:
            self.calls.append((method, path, dict(kwargs.get("query") or {})))
            return request(method, path, **kwargs)

        def counted_stream(path: str, **kwargs: Any) -> Any:
            self.calls.append(("WATCH", path, dict(kwargs.get("query") or {})))
            return stream(path, **kwargs)

        rest.request, rest.stream = counted_request, counted_stream  # type: ignore[method-assign]


def step(name: str, phases: str = FAST) -> JobTemplate:
    return JobTemplate(
        name, image="busybox", command=["sh", "-c", f"echo {name}"], pod_annotations={SIMULATOR_PHASES: phases}
    )


def test_a_pipeline_written_in_python_runs_to_succeed_with_one_watch(
    kubeconfig: Path, namespace: str, controller: RunningManager
) -> None:
    counted = CountedConnection(kubeconfig, namespace)
    with JobFlow("ml", namespace=namespace, job_retain_policy="retain", connection=counted.connection) as jf:
        prep, train, report = jf.flow(step("prep")), jf.flow(step("train")), jf.flow(step("report"))
        prep >> train >> report
    jf.create()
    before_wait = len(counted.calls)
    assert jf.wait(timeout=120, progress=False) == "Succeed"
    during_wait = counted.calls[before_wait:]
    assert [c[0] for c in during_wait] == ["WATCH"], during_wait
    assert during_wait[0][2]["fieldSelector"] == "metadata.name=ml"
    assert [j["metadata"]["name"] for j in jf.jobs()] == ["ml-prep", "ml-report", "ml-train"]
    assert jf.flow_states() == {"prep": "Completed", "train": "Completed", "report": "Completed"}
    created = [e for e in jf.events() if e["involvedObject"]["kind"] == "JobFlow" and e["reason"] == "Created"]
    assert created, jf.events()
    assert "Completed" in jf._repr_html_()


def test_a_failing_pipeline_raises_naming_the_failed_flow(
    kubeconfig: Path, namespace: str, controller: RunningManager
) -> None:
    connection = connect(str(kubeconfig), namespace=namespace)
    with JobFlow("broken", namespace=namespace, connection=connection) as jf:
        jf.flow(step("fetch")) >> jf.flow(step("train", FAILS)) >> jf.flow(step("publish"))
    jf.create()
    with pytest.raises(JobFlowFailedError) as caught:
        jf.wait(timeout=120, progress=False)
    assert caught.value.failed_flows == ["train"]
    assert "failed flows: train" in str(caught.value)


def test_apply_is_a_repeatable_server_side_apply_and_suspend_is_the_plugins_patch(
    kubeconfig: Path, namespace: str, controller: RunningManager
) -> None:
    connection = connect(str(kubeconfig), namespace=namespace)
    with JobFlow("applied", namespace=namespace, suspend=True, connection=connection) as jf:
        jf.flow(step("only"))
    jf.apply()
    jf.apply()  # the same again: no conflict, nothing changes
    stored = jf.get()
    managers = {m["manager"] for m in stored["metadata"]["managedFields"]}
    assert "jobflow-sdk" in managers
    assert stored["spec"]["suspend"] is True and jf.jobs() == []
    jf.resume()
    assert jf.get()["spec"]["suspend"] is False
    assert jf.wait(timeout=120, progress=False) == "Succeed"


def test_a_cronjobflow_written_in_python_is_applied_as_the_yaml_example_would_be(
    kubeconfig: Path, namespace: str, clientset: Clientset
) -> None:
    from jobflow_sdk.examples import nightly_etl

    cron = nightly_etl.pipeline()
    cron.namespace = namespace
    cron.connection = connect(str(kubeconfig), namespace=namespace)
    cron.apply()
    stored = clientset.cron_job_flows(namespace).get("nightly-etl")
    assert stored["spec"]["schedule"] == "0 2 * * *"
    assert (
        stored["spec"]["jobFlowTemplate"]["spec"]["flows"] == cron.to_dict()["spec"]["jobFlowTemplate"]["spec"]["flows"]
    )


def test_results_declared_in_python_flow_to_a_later_flows_job_and_when_and_read_back(
    kubeconfig: Path, namespace: str, controller: RunningManager
) -> None:
    """Results between flows through the SDK (docs/results.md): the simulator writes pod 0's
    termination message, a later flow's command and `when` read it, `jf.results()` returns it."""
    connection = connect(str(kubeconfig), namespace=namespace)
    reported = '{"accuracy": "0.93", "model": "s3://m/42"}'
    train_template = JobTemplate(
        "train",
        image="busybox",
        command=["sh", "-c", "train"],
        pod_annotations={SIMULATOR_PHASES: FAST, RESULTS_ANNOTATION: reported},
    )
    best = {"best-model": "$(flows.train.results.model)"}
    with JobFlow("res", namespace=namespace, results=best, job_retain_policy="retain", connection=connection) as jf:
        train = jf.flow(train_template, results=["accuracy", "model"])
        publish_template = JobTemplate(
            "publish", image="busybox", command=["echo", train.results.model], pod_annotations={SIMULATOR_PHASES: FAST}
        )
        publish = jf.flow(publish_template, when=[(train.results.accuracy, "in", ["0.93", "0.95"])])
        train >> publish
    jf.create()
    assert jf.wait(timeout=120, progress=False) == "Succeed"
    assert jf.results() == {
        "jobs": {"res-train": {"accuracy": "0.93", "model": "s3://m/42"}},
        "results": {"best-model": "s3://m/42"},
    }
    (job,) = [j for j in jf.jobs() if j["metadata"]["name"] == "res-publish"]
    command = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"]
    assert command == ["echo", "s3://m/42"]
