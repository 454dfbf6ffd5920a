"""`make demo` works: both example pipelines Succeed, the failure-aware nightly-report ends Failed as its
example says and the hyper-parameter sweep Succeeds, on a fresh control plane of its own."""

from __future__ import annotations

import subprocess
import sys


def test_the_demo_runs_the_examples_to_their_end_and_tears_down() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jobflow_controller.local.demo", "--exit-when-done", "--timeout=150"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "the JobFlows ended as written in " in result.stdout
    assert (
        "(ml-pipeline Succeed, parallel-pipeline Succeed, nightly-report Failed, hyperparameter-sweep Succeed,"
        " model-selection Succeed)" in result.stdout
    )
    last_frame = result.stdout.split("JOBFLOW")[-1]
    assert "ml-pipeline          Succeed" in last_frame
    assert "parallel-pipeline    Succeed    [5 flows] deleted: 5" in last_frame
    assert "nightly-report       Failed     [7 flows]" in last_frame
    assert "kubectl describe jf ml-pipeline" in result.stdout
    assert "$ kubectl jobflow tree nightly-report\nJobFlow default/nightly-report   Failed   7 flows, 1 finally" in (
        result.stdout
    )
    assert "kubectl jobflow ui" in result.stdout
    # The sweep: its six training Jobs as one node of the tree, all Completed.
    assert "hyperparameter-sweep Succeed    [3 flows]" in last_frame
    assert "$ kubectl jobflow tree hyperparameter-sweep\n" in result.stdout
    assert "train (6 Jobs: 6 Completed)" in result.stdout
    # docs/results.md: what train reported, what publish read, what the JobFlow published.
    results = result.stdout.split("$ kubectl jobflow results model-selection\n", 1)[1]
    assert "s3://models/model-selection/42" in results and "0.93" in results and "published-model" in results
    # docs/cron.md: the every-minute CronJobFlow beside the pipelines, and `kubectl get cjf` at the end.
    assert "cronjobflow.flow.volcano.sh/every-minute created (schedule * * * * *: a run every minute)" in result.stdout
    get_cjf = result.stdout.split("$ kubectl get cjf\n", 1)[1]
    assert get_cjf.splitlines()[0].split()[:4] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND"]
    assert "every-minute" in get_cjf and "nightly-etl" in get_cjf
