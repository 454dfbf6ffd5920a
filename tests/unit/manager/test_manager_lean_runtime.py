"""The runtime needs neither `cryptography` nor `kubernetes-validate`: they are the `test` and `local`
extras' (certificates for the local control plane, strict manifest checks, CRD generation), the
image installs the runtime set alone, and `jobflow-controller` imports and builds its manager with
both modules made unimportable."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import import_blocker

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Distribution name -> module name.
HEAVY = {"cryptography": "cryptography", "kubernetes-validate": "kubernetes_validate"}
assert tuple(HEAVY.values()) == import_blocker.BLOCKED
PRODUCT = ("jobflow_controller", "informers", "workqueue", "cmd")
LOCAL = ROOT / "jobflow_controller" / "local"

#: Run with `import_blocker.environment()`: its `sitecustomize` has refused both modules already.
BLOCKED_RUN = r"""
import importlib, pkgutil, sys

BLOCKED = ("cryptography", "kubernetes_validate")

# The hook works: both are installed in this environment, yet neither imports, nor does local/.
for probe in ("cryptography", "kubernetes_validate", "jobflow_controller.local.certs"):
    try:
        importlib.import_module(probe)
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit(f"{probe} imported despite the block")

# What the `jobflow-controller` console script runs, then the manager it builds from a kubeconfig.
from jobflow_controller.manager import main
assert main(["--version"]) == 0
from jobflow_controller.manager.options import Options
from jobflow_controller.manager.server import Manager

manager = Manager(Options(kubeconfig=sys.argv[1], leader_elect=False))
print("controllers:", ",".join(sorted(type(c).__name__ for c in manager.controllers)))
manager.rest.close()
manager.event_rest.close()

# Every other module of the product (the plugin, the webhook, ...) imports as well; local/ aside.
count = 0
for package in ("jobflow_controller", "informers", "workqueue"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        if info.name.startswith("jobflow_controller.local"):
            continue
        importlib.import_module(info.name)
        count += 1
assert not [m for m in sys.modules if m.partition(".")[0] in BLOCKED]
print("modules:", count)
"""

KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
"""


def test_the_controller_imports_and_builds_its_manager_with_both_modules_blocked(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, str(kubeconfig)],
        env=import_blocker.environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("jobflow-controller ")  # --version
    assert (
        lines[1]
        == "controllers: CronJobFlowController,JobFlowController,JobFlowTriggerController,JobTemplateController"
    )
    assert int(lines[2].removeprefix("modules: ")) > 40


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Constant) and node.value in HEAVY.values():  # resources.files("...")
            found.add(str(node.value))
    return found


def test_only_jobflow_controller_local_reaches_for_them() -> None:
    users = sorted(
        str(path.relative_to(ROOT))
        for package in PRODUCT
        for path in (ROOT / package).rglob("*.py")
        if _imports(path) & set(HEAVY.values())
    )
    assert users and all((ROOT / user).is_relative_to(LOCAL) for user in users), users


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_they_are_not_runtime_dependencies_but_the_test_and_local_extras() -> None:
    project = PYPROJECT["project"]
    assert not _names(project["dependencies"]) & set(HEAVY)
    extras = project["optional-dependencies"]
    assert set(HEAVY) <= _names(extras["local"])
    assert set(HEAVY) <= _names(extras["test"])


def test_make_install_brings_what_tests_and_the_demo_need() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (extras,) = re.findall(r"pip install .*-e '\.\[([a-z,]+)\]'", makefile)
    assert set(extras.split(",")) == {"test", "dev", "local"}


def test_the_image_installs_the_runtime_set_only_and_fails_the_build_otherwise() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n\s*", " ", "\n".join(ln for ln in dockerfile.splitlines() if not ln.lstrip().startswith("#")))
    runs = [ln.strip() for ln in joined.splitlines() if ln.strip().startswith("RUN")]
    assert any(re.search(r"pip wheel --wheel-dir /wheels \.$", r) for r in runs)  # `.`: no extras
    (install,) = [r for r in runs if "--find-links=/wheels" in r]
    assert re.search(r"--find-links=/wheels jobflow-controller(?=\s+&&)", install)
    guard = install.split("&& python -c ", 1)[1]
    assert all(f"'{module}'" in guard for module in HEAVY.values())
