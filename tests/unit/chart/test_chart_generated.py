"""The chart's copies of manifests/ (charts/jobflow-controller/files) are what hack/gen_chart.py writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import gen_chart
import pytest
import yaml

from jobflow_controller.local.kubectl import REPO_ROOT


def test_the_committed_copies_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert gen_chart.main(["--check"]) == 0, capsys.readouterr().err


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """The parts of the repository the generator reads and writes, copied."""
    shutil.copytree(REPO_ROOT / "manifests", tmp_path / "manifests")
    shutil.copytree(REPO_ROOT / gen_chart.FILES, tmp_path / gen_chart.FILES)
    return tmp_path


def test_check_names_the_copy_a_changed_manifest_makes_stale(
    repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    role = repository / "manifests" / "clusterrole.yaml"
    role.write_text(
        role.read_text() + "  - apiGroups: [flow.volcano.sh]\n    resources: [cronjobflows]\n    verbs: [list]\n"
    )

    assert gen_chart.main(["--root", str(repository), "--check"]) == 1
    assert "clusterrole.yaml" in capsys.readouterr().err


def test_a_new_crd_in_the_kustomization_is_copied_and_an_old_copy_deleted(repository: Path) -> None:
    crds = repository / "manifests" / "crds"
    new = crds / "flow.volcano.sh_jobtemplates.yaml"
    renamed = crds / "flow.volcano.sh_renamed.yaml"
    new.rename(renamed)
    kustomization = crds / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("flow.volcano.sh_jobtemplates.yaml", renamed.name))

    assert gen_chart.main(["--root", str(repository)]) == 0

    copies = repository / gen_chart.FILES / "crds"
    listed = yaml.safe_load(kustomization.read_text())["resources"]
    assert renamed.name in listed and new.name not in listed
    assert sorted(p.name for p in copies.iterdir()) == sorted(listed)
    assert (copies / renamed.name).read_text() == renamed.read_text()
    assert gen_chart.main(["--root", str(repository), "--check"]) == 0


def test_only_the_crds_the_cel_component_changes_get_a_rules_copy() -> None:
    copies = REPO_ROOT / gen_chart.FILES / "crd-validation"
    # The JobFlow CRD and the CronJobFlow CRD (docs/cron.md); the JobTemplate CRD gets no rules.
    assert sorted(p.name for p in copies.iterdir()) == [
        "flow.volcano.sh_cronjobflows.yaml",
        "flow.volcano.sh_jobflows.yaml",
        "flow.volcano.sh_jobflowtemplates.yaml",
    ]
    assert "x-kubernetes-validations" in (copies / "flow.volcano.sh_jobflows.yaml").read_text()
