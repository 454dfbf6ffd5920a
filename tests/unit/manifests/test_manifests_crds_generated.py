"""The committed CRDs and the CEL-rules patch are exactly what hack/gen_crds.py generates, and generating is
deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import crdgen as crds
import yaml

ROOT = Path(__file__).resolve().parents[3]
CRD_DIR = ROOT / "manifests" / "crds"


def test_committed_files_equal_the_generator_output() -> None:
    for name, text in crds.generated_files().items():
        path = ROOT / name
        assert path.is_file(), f"{path} is missing: run hack/gen_crds.py"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run hack/gen_crds.py"


def test_generator_writes_the_crds_the_patch_and_volcanos_job_and_command_crds_apart() -> None:
    assert set(crds.generated_files()) == {
        "manifests/crds/flow.volcano.sh_jobflows.yaml",
        "manifests/crds/flow.volcano.sh_jobtemplates.yaml",
        "manifests/crd-validation/jobflow-validation.yaml",
        "manifests/crds/flow.volcano.sh_cronjobflows.yaml",
        "manifests/crds/flow.volcano.sh_jobflowtriggers.yaml",
        "manifests/crd-validation/cronjobflow-validation.yaml",
        "manifests/crds/flow.volcano.sh_jobflowtemplates.yaml",
        "manifests/crd-validation/jobflowtemplate-validation.yaml",
        "hack/local-crds/batch.volcano.sh_jobs.yaml",
        "hack/local-crds/bus.volcano.sh_commands.yaml",
    }


def test_crd_directory_holds_only_generated_files_and_the_kustomization() -> None:
    present = {p.name for p in CRD_DIR.iterdir() if p.is_file()}
    assert present == {*crds.CRD_FILES, "kustomization.yaml"}


def test_kustomization_lists_every_crd() -> None:
    kustomization = yaml.safe_load((CRD_DIR / "kustomization.yaml").read_text(encoding="utf-8"))
    assert sorted(kustomization["resources"]) == sorted(crds.CRD_FILES)


def test_generation_is_deterministic_within_a_process() -> None:
    assert crds.generated_files() == crds.generated_files()


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


def test_generator_writes_every_file_into_another_root(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen_crds.py"), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    for name, text in crds.generated_files().items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text


def test_committed_yaml_parses_back_to_the_built_crds_and_patch() -> None:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for name, crd in crds.all_crds().items():
        text = (ROOT / name).read_text(encoding="utf-8")
        documents = [d for d in yaml.load_all(text, Loader=loader) if d]
        assert documents == [crd]
    patch = yaml.load((ROOT / crds.VALIDATION_PATCH_FILE).read_text(encoding="utf-8"), Loader=loader)
    assert patch == crds.validation_patch()
