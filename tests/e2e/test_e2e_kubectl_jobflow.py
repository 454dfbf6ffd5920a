"""`kubectl jobflow`, run through kubectl itself (which finds `kubectl-jobflow` on PATH), against the
real control plane, with the controller and the simulator driving real JobFlows."""

from __future__ import annotations

import itertools
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import RunningManager, wait_for
from jobflows import chain, create_all, examples, flow, phase_of, template

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError
from jobflow_controller.local.demo import show_tree
from jobflow_controller.local.kubectl import kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SLOW = "Pending:0.5s,Running:1.5s,Completed"
#: Two Volcano restarts (the simulator bumps retryCount on Restarting), then success.
RESTARTING = "Pending:0.2s,Running:0.2s,Restarting:0.2s,Running:0.2s,Restarting:0.2s,Running:0.2s,Completed"


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=3)
    yield running
    running.stop()


def plugin(*args: str, kubeconfig: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`kubectl jobflow ARGS` with the venv's bin directory first on PATH and KUBECONFIG unset
    unless given (tests that need the server pass --kubeconfig after the plugin's name)."""
    env = plugin_env(kubeconfig)
    if kubeconfig is None:
        env.pop("KUBECONFIG", None)
    return subprocess.run(
        [kubectl_path(), "jobflow", *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def tree_rows(output: str) -> list[list[str]]:
    """The tree's rows below the two header lines, cut into columns where the header's columns
    start; a "(see above)" line has one column only."""
    lines = output.splitlines()
    header = lines[1]
    starts = [header.index(h) for h in ("PHASE", "DURATION", "RESTARTS")]
    rows = []
    for line in lines[2:]:
        if line.endswith("(see above)"):
            rows.append([line])
            continue
        bounds = [0, *starts, len(line)]
        cells = [line[a:b].strip() for a, b in itertools.pairwise(bounds)]
        rows.append([line[: starts[0]].rstrip(), *cells[1:]])
    return rows


def succeeded(clientset: Clientset, namespace: str, *names: str) -> bool:
    return all(phase_of(clientset, namespace, n) == "Succeed" for n in names)


def test_kubectl_lists_the_plugin_from_path() -> None:
    result = subprocess.run(
        [kubectl_path(), "plugin", "list", "--name-only"], capture_output=True, text=True, env=plugin_env(), timeout=60
    )
    assert "kubectl-jobflow" in result.stdout.split()


def test_tree_draws_the_diamond_with_each_jobs_phase_duration_and_restarts(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, examples(namespace))
    wait_for(lambda: succeeded(clientset, namespace, "parallel-pipeline"), 90, what="parallel-pipeline Succeed")
    result = plugin("tree", "parallel-pipeline", "-n", namespace, f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout  # piped: plain
    lines = result.stdout.splitlines()
    assert re.fullmatch(rf"JobFlow {namespace}/parallel-pipeline   Succeed   5 flows   age \d+s", lines[0])
    assert re.split(r" {3,}", lines[1]) == ["FLOW", "PHASE", "DURATION", "RESTARTS"]
    rows = tree_rows(result.stdout)
    assert [r[0] for r in rows] == [
        "data-download",
        "├── feature-engineering",
        "│   └── model-training-v2",
        "│       └── model-ensemble",
        "└── model-training-v1",
        "    └── model-ensemble (see above)",
    ]
    for row in rows[:5]:
        assert row[1:2] == ["Completed"] and row[3] == "0", row
        assert re.fullmatch(r"\d+s", row[2]), row  # from jobStatusList: the Jobs are deleted by now
    assert len(rows[5]) == 1


def test_restarts_are_the_jobs_retry_count_as_the_status_records_it(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, [template("steady", namespace), template("flaky", namespace, script=RESTARTING)])
    create_all(clientset, [flow("restarts", namespace, chain("steady", "flaky"))])
    wait_for(lambda: succeeded(clientset, namespace, "restarts"), 60, what="restarts Succeed")
    result = plugin("tree", "restarts", f"--namespace={namespace}", f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert [(r[0], r[1], r[3]) for r in tree_rows(result.stdout)] == [
        ("steady", "Completed", "0"),
        ("└── flaky", "Completed", "2"),
    ]


def test_a_failed_flow_is_red_with_color_always_and_its_dependents_never_created(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, [template("ok", namespace), template("bad", namespace, script="Pending:0.2s,Failed")])
    create_all(clientset, [template("never", namespace)])
    create_all(clientset, [flow("broken", namespace, chain("ok", "bad", "never"))])
    wait_for(lambda: phase_of(clientset, namespace, "broken") == "Failed", 60, what="broken Failed")
    result = plugin("tree", "broken", "-n", namespace, "--color=always", f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert "\x1b[31mFailed\x1b[0m" in result.stdout and "\x1b[32mCompleted\x1b[0m" in result.stdout
    plain = ANSI.sub("", result.stdout)
    assert plain.splitlines()[0].startswith(f"JobFlow {namespace}/broken   Failed   3 flows")
    assert [(r[0], r[1]) for r in tree_rows(plain)] == [
        ("ok", "Completed"),
        ("└── bad", "Failed"),
        ("    └── never", "NotCreated"),
    ]


def test_namespace_and_server_come_from_the_kubeconfig_context(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    create_all(clientset, [template("a", namespace)])
    create_all(clientset, [flow("ctx", namespace, chain("a"))])
    config = yaml.safe_load(kubeconfig.read_text())
    base = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    with_ns = {"name": "with-ns", "context": {**base["context"], "namespace": namespace}}
    config["contexts"] = [base, with_ns]
    copy = tmp_path / "kubeconfig"
    copy.write_text(yaml.safe_dump(config))

    result = plugin("tree", "ctx", "--context=with-ns", kubeconfig=copy)  # KUBECONFIG, no -n
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"JobFlow {namespace}/ctx ")

    config["current-context"] = "with-ns"
    copy.write_text(yaml.safe_dump(config))
    assert plugin("dot", "ctx", kubeconfig=copy).returncode == 0

    result = plugin("tree", "ctx", f"--context={base['name']}", kubeconfig=copy)  # its namespace: default
    assert (result.returncode, result.stderr) == (
        1,
        'error: jobflows.flow.volcano.sh "ctx" not found in namespace "default"\n',
    )


def test_dot_is_a_digraph_with_an_edge_from_each_target(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, examples(namespace))
    wait_for(lambda: succeeded(clientset, namespace, "parallel-pipeline"), 90, what="parallel-pipeline Succeed")
    result = plugin("dot", "parallel-pipeline", "-n", namespace, f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('digraph "parallel-pipeline" {') and result.stdout.rstrip().endswith("}")
    edges = sorted(re.findall(r'^  "([^"]+)" -> "([^"]+)";$', result.stdout, re.MULTILINE))
    assert edges == [
        ("data-download", "feature-engineering"),
        ("data-download", "model-training-v1"),
        ("feature-engineering", "model-training-v2"),
        ("model-training-v1", "model-ensemble"),
        ("model-training-v2", "model-ensemble"),
    ]
    nodes = re.findall(r'^  "([^"]+)" \[label="[^"]+\\nCompleted, \d+s"', result.stdout, re.MULTILINE)
    assert len(nodes) == 5


def _sigint_as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_watch_redraws_as_the_flow_progresses_and_ctrl_c_ends_it(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, [template(n, namespace, script=SLOW) for n in ("one", "two")])
    create_all(clientset, [flow("watched", namespace, chain("one", "two"))])
    args = [kubectl_path(), "jobflow", "tree", "watched", "-n", namespace, "--watch", "--interval=0.2"]
    proc = subprocess.Popen(
        [*args, f"--kubeconfig={kubeconfig}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=plugin_env(),
        # As from a terminal: a suite started in the background (`cmd &` in a script) hands its
        # children SIGINT ignored, and Python then never raises KeyboardInterrupt.
        preexec_fn=_sigint_as_from_a_terminal,
    )
    out: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        wait_for(lambda: any(f"{namespace}/watched   Succeed" in line for line in out), 60, what="a Succeed frame")
        frames = "".join(out).split("\n\n")
        headers = [f.strip().splitlines()[0] for f in frames if f.strip()]
        assert len(headers) >= 3, frames
        assert any("Succeed" not in h for h in headers)  # redrawn while it ran
        assert not any(line.startswith("error:") for line in out)
        proc.send_signal(signal.SIGINT)  # kubectl exec'd the plugin: this is Ctrl-C to it
        assert proc.wait(timeout=15) == 0
        assert proc.stderr is not None and proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_missing_jobflow_exits_1_with_one_line_on_stderr(namespace: str, kubeconfig: Path) -> None:
    result = plugin("tree", "nope", "-n", namespace, f"--kubeconfig={kubeconfig}")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f'error: jobflows.flow.volcano.sh "nope" not found in namespace "{namespace}"\n'


def test_no_cluster_exits_1_with_one_line_on_stderr(kubeconfig: Path, tmp_path: Path) -> None:
    config = yaml.safe_load(kubeconfig.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = "https://127.0.0.1:1"
    dead = tmp_path / "kubeconfig"
    dead.write_text(yaml.safe_dump(config))
    result = plugin("tree", "anything", kubeconfig=dead)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("error: cannot reach the API server: ") and result.stderr.count("\n") == 1


def test_the_demo_ends_with_the_tree_of_a_pipeline(
    controller: RunningManager, clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    create_all(clientset, examples(namespace))
    wait_for(lambda: succeeded(clientset, namespace, "parallel-pipeline"), 90, what="parallel-pipeline Succeed")
    text = show_tree(str(kubeconfig), "parallel-pipeline", namespace)
    assert text.startswith(f"JobFlow {namespace}/parallel-pipeline   Succeed   5 flows")
    assert "    └── model-ensemble (see above)" in text
    coloured = show_tree(str(kubeconfig), "parallel-pipeline", namespace, color=True)
    assert "\x1b[32mCompleted\x1b[0m" in coloured and ANSI.sub("", coloured).splitlines()[1:] == text.splitlines()[1:]


# --- issue 22: Skipped flows, rules, finally (docs/rules.md) ------------------------------------------------
#
# The JobFlow's status is written by the test through the status subresource, as the controller would
# write it for an on-failure alerting pipeline that ended Failed: what is drawn is read from the status
# alone, and a Failed JobFlow is terminal, so a controller running meanwhile leaves it as written (its
# own status PUT carries a resourceVersion: one made before this write conflicts). Its flows name no
# JobTemplate, so no Job is ever created for it.

ALERTING_FLOWS: list[dict[str, Any]] = [
    {"name": "train", "continueOnFailure": False},
    {"name": "alert", "dependsOn": {"targets": ["train"], "rule": "AnyFailed"}},
    {"name": "deploy", "dependsOn": {"targets": ["train"]}},
    {"name": "publish", "dependsOn": {"targets": ["deploy"]}},
    {"name": "report", "dependsOn": {"targets": ["alert", "deploy"], "rule": "AllDone"}},
]


def _entry(job: str, state: str, start: str, end: str) -> dict[str, Any]:
    return {"name": job, "state": state, "startTimestamp": start, "endTimestamp": end, "restartCount": 0}


def ended_alerting_jobflow(clientset: Clientset, namespace: str, name: str) -> None:
    """An alerting JobFlow whose train failed (handled: alert's rule is AnyFailed), alert and report
    (AllDone) ran, deploy and publish were Skipped, and whose finally JobTemplate notify failed, which
    fails the JobFlow."""
    spec = {"jobRetainPolicy": "retain", "flows": ALERTING_FLOWS, "finally": [{"name": "notify"}]}
    created = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": name}, "spec": spec}
    created["metadata"]["namespace"] = namespace
    clientset.job_flows(namespace).create(created)
    job = f"{name}-{{}}".format
    status = {
        "state": {"phase": "Failed"},
        "failedJobs": [job("train"), job("notify")],
        "completedJobs": [job("alert"), job("report")],
        "skippedJobs": [job("deploy"), job("publish")],
        "jobStatusList": [
            _entry(job("train"), "Failed", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"),
            _entry(job("alert"), "Completed", "2026-01-01T00:01:00Z", "2026-01-01T00:01:20Z"),
            _entry(job("report"), "Completed", "2026-01-01T00:01:20Z", "2026-01-01T00:01:25Z"),
            _entry(job("notify"), "Failed", "2026-01-01T00:01:25Z", "2026-01-01T00:01:30Z"),
        ],
    }

    def written() -> bool:
        current = clientset.job_flows(namespace).get(name)
        try:
            clientset.job_flows(namespace).update_status({**current, "status": status})
        except ConflictError:
            return False
        return True

    wait_for(written, 30, what=f"the status of {name} written")


def test_tree_shows_skipped_flows_rules_and_the_finally_branch(
    clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    ended_alerting_jobflow(clientset, namespace, "alerting")
    stored = clientset.job_flows(namespace).get("alerting")
    assert stored["status"]["skippedJobs"] == ["alerting-deploy", "alerting-publish"]  # our CRD keeps it
    result = plugin("tree", "alerting", "-n", namespace, f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith(
        f"JobFlow {namespace}/alerting   Failed   5 flows, 1 finally   age "
    )
    assert [r[:3] for r in tree_rows(result.stdout)] == [
        ["train", "Failed", "60s"],
        ["├── alert [AnyFailed]", "Completed", "20s"],
        ["│   └── report [AllDone]", "Completed", "5s"],
        ["└── deploy", "Skipped", "-"],
        ["    ├── publish", "Skipped", "-"],
        ["    └── report [AllDone] (see above)"],
        ["finally", "", ""],  # the heading: no columns
        ["└── notify", "Failed", "5s"],
    ]


def test_dot_labels_rules_dashes_skipped_flows_and_clusters_finally(
    clientset: Clientset, namespace: str, kubeconfig: Path
) -> None:
    ended_alerting_jobflow(clientset, namespace, "alerting-dot")
    result = plugin("dot", "alerting-dot", "-n", namespace, f"--kubeconfig={kubeconfig}")
    assert result.returncode == 0, result.stderr
    assert '  "train" -> "alert" [label="AnyFailed"];' in result.stdout
    assert '  "deploy" -> "report" [label="AllDone"];' in result.stdout
    assert '  "deploy" [label="deploy\\nSkipped", fillcolor="#eeeeee", style="rounded,filled,dashed"];' in result.stdout
    assert '  subgraph "cluster_finally" {' in result.stdout
    assert '    "notify" [label="notify\\nFailed, 5s", fillcolor="#ffcdd2"];' in result.stdout
    assert sorted(re.findall(r'^  "([^"]+)" -> "notify" \[style=dotted\];$', result.stdout, re.MULTILINE)) == [
        "publish",
        "report",
    ]
