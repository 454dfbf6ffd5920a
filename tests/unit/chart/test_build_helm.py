"""hack/build-helm.sh honours a helm 4 already there and builds only when there is none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from jobflow_controller.local.kubectl import REPO_ROOT

SCRIPT = REPO_ROOT / "hack" / "build-helm.sh"


def fake_helm(directory: Path, version: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    helm = directory / "helm"
    helm.write_text(f"#!/bin/sh\necho {version}\n")
    helm.chmod(0o755)
    return helm


def run(tmp_path: Path, path: list[Path], **env: str) -> subprocess.CompletedProcess[str]:
    """The script with an empty cache and a PATH of `path`, then a `go` that only says it was called,
    then the system's tools."""
    fake_go = tmp_path / "fake-go"
    fake_go.mkdir(exist_ok=True)
    (fake_go / "go").write_text('#!/bin/sh\necho "fake go $*" >&2\nexit 3\n')
    (fake_go / "go").chmod(0o755)
    environment = {
        "HOME": str(tmp_path),
        "HELM_BIN_DIR": str(tmp_path / "cache"),
        "PATH": os.pathsep.join([*map(str, path), str(fake_go), "/usr/bin", "/bin"]),
        **env,
    }
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=environment, check=False)


def test_a_helm_4_on_path_is_used(tmp_path: Path) -> None:
    helm = fake_helm(tmp_path / "bin", "v4.0.1")

    out = run(tmp_path, [tmp_path / "bin"])

    assert (out.returncode, out.stdout.strip()) == (0, str(helm))


def test_a_helm_3_on_path_is_not_used(tmp_path: Path) -> None:
    fake_helm(tmp_path / "bin", "v3.19.0")

    out = run(tmp_path, [tmp_path / "bin"])

    assert out.returncode == 3
    assert "building helm v4.3.2 from helm.sh/helm/v4" in out.stderr
    assert "fake go install" in out.stderr and "helm.sh/helm/v4/cmd/helm@v4.3.2" in out.stderr


def test_helm_from_the_environment_is_used_when_it_is_helm_4(tmp_path: Path) -> None:
    helm = fake_helm(tmp_path / "elsewhere", "v4.3.2")

    out = run(tmp_path, [], HELM=str(helm))

    assert (out.returncode, out.stdout.strip()) == (0, str(helm))


def test_a_built_helm_in_the_cache_is_used_without_building(tmp_path: Path) -> None:
    cached = fake_helm(tmp_path / "cache", "v4.3.2")

    out = run(tmp_path, [])

    assert (out.returncode, out.stdout.strip()) == (0, str(cached))
