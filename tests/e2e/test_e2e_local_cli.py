"""`python -m jobflow_controller.local up|status|down`: a control plane a person can use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jobflow_controller.local.kubectl import kubectl


def _local(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JOBFLOW_LOCAL_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "jobflow_controller.local", *args], capture_output=True, text=True, env=env, timeout=180
    )


def test_up_prints_the_kubeconfig_line_and_down_stops_everything(tmp_path: Path) -> None:
    state = tmp_path / "local"
    try:
        up = _local(state, "up")
        assert up.returncode == 0, up.stderr
        assert up.stdout.splitlines()[-1] == f"export KUBECONFIG={state / 'kubeconfig'}"
        status = _local(state, "status")
        assert status.returncode == 0
        assert "kube-apiserver: pid" in status.stdout and "exited" not in status.stdout
        crds = kubectl(state / "kubeconfig", "get", "crd", "-o", "name")
        assert "customresourcedefinition.apiextensions.k8s.io/jobflows.flow.volcano.sh" in crds
        assert "volcano-system" in kubectl(state / "kubeconfig", "get", "namespace", "-o", "name")
    finally:
        down = _local(state, "down")
    assert down.returncode == 0
    assert _local(state, "status").returncode == 1
    assert not state.exists()
