"""JobFlowTemplates and runs from one (docs/templates.md) on the real control plane (CEL rules on, no webhook).

A run with the defaults and one with overrides reach Succeed with the params in their Jobs; a run's
template edited and then deleted while it runs changes nothing in it; a run created before its
template waits (a Warning `InvalidJobFlowTemplate`) and goes on once the template is created; a run
whose params the template refuses stays Pending with no Job; a CronJobFlow runs a template by
reference; `kubectl jobflow submit --wait` creates a run and prints its name; the CRD's CEL rule
refuses flows together with a reference.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import FAST, events_of, phase_of, template

from informers.errors import NotFoundError
from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError, InvalidError
from jobflow_controller.local.kubectl import kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator

SLOW = "Pending:0.2s,Running:3s,Completed"


@pytest.fixture
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=2)
    yield running
    running.stop()


def reader(name: str, namespace: str, script: str = FAST) -> dict[str, Any]:
    """A JobTemplate whose container reads the params in its env."""
    doc = template(name, namespace, script)
    container = doc["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "DATASET", "value": "$(params.dataset)"},
        {"name": "MODE", "value": "$(params.mode)"},
    ]
    return doc


def job_flow_template(
    name: str, namespace: str, flows: list[dict[str, Any]], default_mode: str = "full"
) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlowTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "params": [
                {"name": "dataset", "description": "what to read"},
                {"name": "mode", "default": default_mode},
            ],
            "jobFlow": {"flows": flows},
        },
    }


def run(name: str, namespace: str, template_name: str, **params: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"jobFlowTemplateRef": {"name": template_name}}
    if params:
        spec["params"] = [{"name": k, "value": v} for k, v in params.items()]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def final(clientset: Clientset, namespace: str, name: str, timeout: float = 90) -> str:
    wait_for(lambda: phase_of(clientset, namespace, name) in ("Succeed", "Failed"), timeout, what=f"{name} final")
    return phase_of(clientset, namespace, name)


def env_of(clientset: Clientset, namespace: str, job: str) -> dict[str, str]:
    spec = clientset.jobs(namespace).get(job)["spec"]
    return {e["name"]: e["value"] for e in spec["tasks"][0]["template"]["spec"]["containers"][0]["env"]}


def jobs_of(clientset: Clientset, namespace: str, prefix: str) -> list[str]:
    return sorted(
        j["metadata"]["name"] for j in clientset.jobs(namespace).list() if j["metadata"]["name"].startswith(prefix)
    )


def test_runs_with_defaults_and_with_overrides_succeed_with_their_params(
    clientset: Clientset, namespace: str, controller: RunningManager
) -> None:
    clientset.job_templates(namespace).create(reader("prep", namespace))
    clientset.job_templates(namespace).create(reader("train", namespace))
    flows = [{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}}]
    clientset.job_flow_templates(namespace).create(job_flow_template("etl", namespace, flows))
    clientset.job_flows(namespace).create(run("defaults", namespace, "etl", dataset="d1"))
    clientset.job_flows(namespace).create(run("overrides", namespace, "etl", dataset="d2", mode="quick"))
    assert final(clientset, namespace, "defaults") == "Succeed"
    assert final(clientset, namespace, "overrides") == "Succeed"
    assert env_of(clientset, namespace, "defaults-train") == {"DATASET": "d1", "MODE": "full"}
    assert env_of(clientset, namespace, "overrides-prep") == {"DATASET": "d2", "MODE": "quick"}
    stored = clientset.job_flows(namespace).get("defaults")
    assert stored["metadata"]["labels"][jft.TEMPLATE_LABEL] == "etl"  # added by the controller
    assert json.loads(stored["status"][jft.STORED_SPEC_FIELD]) == {
        "flows": flows,
        "params": [{"name": "dataset", "value": "d1"}, {"name": "mode", "value": "full"}],
    }
    assert stored["spec"] == {"jobFlowTemplateRef": {"name": "etl"}, "params": [{"name": "dataset", "value": "d1"}]}
    assert stored["status"]["completedJobs"] == ["defaults-prep", "defaults-train"]


def test_editing_then_deleting_the_template_changes_nothing_in_a_run(
    clientset: Clientset, namespace: str, controller: RunningManager
) -> None:
    clientset.job_templates(namespace).create(reader("slow", namespace, SLOW))
    clientset.job_templates(namespace).create(reader("extra", namespace))
    flows = [{"name": "slow"}]
    clientset.job_flow_templates(namespace).create(job_flow_template("pipe", namespace, flows))
    clientset.job_flows(namespace).create(run("inflight", namespace, "pipe", dataset="d"))
    wait_for(lambda: "inflight-slow" in jobs_of(clientset, namespace, "inflight"), 30, what="first Job")
    edited = clientset.job_flow_templates(namespace).get("pipe")
    edited["spec"]["jobFlow"]["flows"] = [{"name": "slow"}, {"name": "extra", "dependsOn": {"targets": ["slow"]}}]
    edited["spec"]["params"][1]["default"] = "changed"
    clientset.job_flow_templates(namespace).update(edited)
    assert final(clientset, namespace, "inflight") == "Succeed"
    clientset.job_flow_templates(namespace).delete("pipe")
    clientset.job_flows(namespace).create(run("after", namespace, "pipe", dataset="d"))  # a new run waits
    wait_for(
        lambda: any(e[1] == "InvalidJobFlowTemplate" for e in events_of(clientset, namespace, "after")),
        30,
        what="Warning",
    )
    assert jobs_of(clientset, namespace, "inflight") == ["inflight-slow"]
    assert env_of(clientset, namespace, "inflight-slow")["MODE"] == "full"
    assert phase_of(clientset, namespace, "inflight") == "Succeed"


def test_a_run_waits_for_its_template_then_goes_on(
    clientset: Clientset, namespace: str, controller: RunningManager
) -> None:
    clientset.job_templates(namespace).create(reader("only", namespace))
    clientset.job_flows(namespace).create(run("early", namespace, "later", dataset="x"))
    wait_for(
        lambda: any(e[1] == "InvalidJobFlowTemplate" for e in events_of(clientset, namespace, "early")),
        30,
        what="Warning",
    )
    (warning,) = [e for e in events_of(clientset, namespace, "early") if e[1] == "InvalidJobFlowTemplate"]
    assert warning[:3] == (
        "Warning",
        "InvalidJobFlowTemplate",
        'JobFlowTemplate "later" not found; the JobFlow waits for it',
    )
    assert jobs_of(clientset, namespace, "early") == []
    clientset.job_flow_templates(namespace).create(job_flow_template("later", namespace, [{"name": "only"}]))
    assert final(clientset, namespace, "early") == "Succeed"
    assert jobs_of(clientset, namespace, "") == ["early-only"]
    assert env_of(clientset, namespace, "early-only") == {"DATASET": "x", "MODE": "full"}


def test_a_run_whose_params_the_template_refuses_stays_pending_with_no_job(
    clientset: Clientset, namespace: str, controller: RunningManager
) -> None:
    # No webhook here: the controller checks the params itself.
    clientset.job_templates(namespace).create(reader("one", namespace))
    clientset.job_flow_templates(namespace).create(job_flow_template("strict", namespace, [{"name": "one"}]))
    clientset.job_flows(namespace).create(run("bad", namespace, "strict", typo="x"))
    wait_for(
        lambda: any(e[1] == "InvalidJobFlowTemplate" for e in events_of(clientset, namespace, "bad")),
        30,
        what="Warning",
    )
    (warning,) = [e for e in events_of(clientset, namespace, "bad") if e[1] == "InvalidJobFlowTemplate"]
    assert warning[2] == (
        'JobFlowTemplate "strict" cannot run this JobFlow: param "typo" is not declared by JobFlowTemplate "strict"; '
        'param "dataset" is required by JobFlowTemplate "strict" and has no value'
    )
    wait_for(lambda: phase_of(clientset, namespace, "bad") == "Pending", 30, what="Pending")
    assert jobs_of(clientset, namespace, "bad") == []
    assert jft.STORED_SPEC_FIELD not in clientset.job_flows(namespace).get("bad")["status"]


def test_flows_and_a_reference_together_are_refused_by_the_crd(clientset: Clientset, namespace: str) -> None:
    both = run("both", namespace, "etl", dataset="d")
    both["spec"]["flows"] = [{"name": "a"}]
    with pytest.raises(InvalidError, match="mutually exclusive"):
        clientset.job_flows(namespace).create(both)


def test_a_cronjobflow_runs_a_template_by_reference(
    clientset: Clientset, namespace: str, controller: RunningManager
) -> None:
    clientset.job_templates(namespace).create(reader("step", namespace))
    clientset.job_flow_templates(namespace).create(job_flow_template("nightly", namespace, [{"name": "step"}]))
    cron = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": "by-ref", "namespace": namespace},
        "spec": {
            "schedule": "* * * * *",
            "jobFlowTemplate": {
                "spec": {"jobFlowTemplateRef": {"name": "nightly"}, "params": [{"name": "dataset", "value": "cron"}]}
            },
        },
    }
    clientset.cron_job_flows(namespace).create(cron)
    due_now(clientset, namespace, "by-ref")

    def a_run() -> str | None:
        runs = [
            j["metadata"]["name"]
            for j in clientset.job_flows(namespace).list()
            if j["metadata"]["name"].startswith("by-ref-")
        ]
        return runs[0] if runs else None

    wait_for(lambda: a_run() is not None, 30, what="a scheduled run")
    name = a_run()
    assert name is not None
    assert final(clientset, namespace, name) == "Succeed"
    assert env_of(clientset, namespace, f"{name}-step") == {"DATASET": "cron", "MODE": "full"}
    clientset.cron_job_flows(namespace).delete("by-ref")


def due_now(clientset: Clientset, namespace: str, name: str) -> None:
    """Record the minute before last as the CronJobFlow's `lastScheduleTime`: the current minute is then
    due at once (a missed time, as CronJob counts them), with no wait for the next minute to begin."""
    last = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:00Z")
    for _ in range(5):  # the controller may write the status between our read and our write
        cron = clientset.cron_job_flows(namespace).get(name)
        with contextlib.suppress(ConflictError):
            clientset.cron_job_flows(namespace).update_status({**cron, "status": {"lastScheduleTime": last}})
            return
    raise AssertionError(f"could not write {name}'s status")


def plugin(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [kubectl_path(), "jobflow", *args, "--kubeconfig", str(kubeconfig)],
        capture_output=True,
        text=True,
        env=plugin_env(),
        timeout=120,
        check=False,
    )


def test_kubectl_jobflow_submit_waits_and_prints_the_runs_name(
    clientset: Clientset, namespace: str, kubeconfig: Path, controller: RunningManager
) -> None:
    clientset.job_templates(namespace).create(reader("go", namespace))
    clientset.job_flow_templates(namespace).create(job_flow_template("cli", namespace, [{"name": "go"}]))
    done = plugin(kubeconfig, "submit", "--from=jobflowtemplate/cli", "-p", "dataset=a=b", "--wait", "-n", namespace)
    assert done.returncode == 0, done.stderr
    (name,) = done.stdout.split()
    assert name.startswith("cli-") and len(name) == len("cli-") + 5
    assert phase_of(clientset, namespace, name) == "Succeed"
    assert env_of(clientset, namespace, f"{name}-go") == {"DATASET": "a=b", "MODE": "full"}
    named = plugin(kubeconfig, "submit", "--from=jft/cli", "-p", "dataset=x", "--name", "mine", "-n", namespace)
    assert (named.returncode, named.stdout) == (0, "mine\n")
    listed = plugin(kubeconfig, "templates", "-n", namespace)
    assert listed.stdout.splitlines()[1].split() == ["cli", "dataset*,mode=full", "1", "2"]
    tree = plugin(kubeconfig, "tree", name, "-n", namespace, "--color", "never")
    assert f"JobFlow {namespace}/{name} (from JobFlowTemplate cli)" in tree.stdout
    assert "go" in tree.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from=jobflowtemplate/nope",), 'error: jobflowtemplates.flow.volcano.sh "nope" not found in namespace'),
        (("--from=jobflowtemplate/cli2", "-p", "novalue"), "error: -p must be KEY=VALUE, not 'novalue'"),
        (
            ("--from=jobflowtemplate/cli2", "-p", "typo=1"),
            'error: jobflow from JobFlowTemplate "cli2" would be refused: param "typo"',
        ),
        (("--from=jobflowtemplate/cli2",), 'param "dataset" is required'),
        (("--from=cronjobflow/cli2",), "error: --from must be jobflowtemplate/NAME"),
    ],
)
def test_kubectl_jobflow_submit_refuses_with_one_line(
    clientset: Clientset, namespace: str, kubeconfig: Path, args: tuple[str, ...], message: str
) -> None:
    clientset.job_flow_templates(namespace).create(job_flow_template("cli2", namespace, [{"name": "go"}]))
    done = plugin(kubeconfig, "submit", *args, "-n", namespace)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr
    with pytest.raises(NotFoundError):
        clientset.job_flows(namespace).get("cli2")
