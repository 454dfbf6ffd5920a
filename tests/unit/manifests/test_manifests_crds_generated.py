"""The committed CRDs are exactly what hack/gen_crds.py generates, and generating is deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from jobflow_controller.local import crds

ROOT = Path(__file__).resolve().parents[3]
CRD_DIR = ROOT / "manifests" / "crds"


def test_committed_crds_equal_the_generator_output() -> None:
    for name, text in crds.crd_files().items():
        path = CRD_DIR / name
        assert path.is_file(), f"{path} is missing: run hack/gen_crds.py"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run hack/gen_crds.py"


def test_crd_directory_holds_only_generated_files_and_the_kustomization() -> None:
    present = {p.name for p in CRD_DIR.iterdir() if p.is_file()}
    assert present == {*crds.CRD_FILES, "kustomization.yaml"}
    assert set(crds.crd_files()) == set(crds.CRD_FILES)


def test_kustomization_lists_every_crd() -> None:
    kustomization = yaml.safe_load((CRD_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == sorted(crds.CRD_FILES)


def test_generation_is_deterministic_within_a_process() -> None:
    assert crds.crd_files() == crds.crd_files()


def test_generator_check_passes_under_another_hash_seed() -> None:
    # Set and dict orders that leaked into the output would show up under a different PYTHONHASHSEED.
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen_crds.py"), "--check"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_generator_emits_the_jobflow_crd_without_rules_on_demand() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen_crds.py"), "--without-rules", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == crds.render_crd(crds.jobflow_crd(with_rules=False))
    assert "x-kubernetes-validations" not in result.stdout


def test_committed_yaml_parses_back_to_the_built_crds() -> None:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for name, crd in crds.all_crds().items():
        text = (CRD_DIR / name).read_text(encoding="utf-8")
        documents = [d for d in yaml.load_all(text, Loader=loader) if d]
        assert documents == [crd]
