"""`helm lint --strict` passes for the default values and each value set of ci/."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_render import CHART, helm

VALUE_SETS = sorted((CHART / "ci").glob("*-values.yaml"))


def test_there_are_three_value_sets_beside_the_defaults() -> None:
    assert [p.name for p in VALUE_SETS] == [
        "flags-values.yaml",
        "sharding-monitoring-values.yaml",
        "webhook-cert-manager-values.yaml",
    ]


@pytest.mark.parametrize("values", [None, *VALUE_SETS], ids=["defaults", *(p.stem for p in VALUE_SETS)])
def test_helm_lint_strict_passes(values: Path | None) -> None:
    out = helm("lint", "--strict", str(CHART), *(["-f", str(values)] if values else []), check=False)

    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in out.stdout


def test_helm_lint_strict_fails_on_a_value_the_schema_refuses() -> None:
    out = helm("lint", "--strict", str(CHART), "--set", "workerThreds=3", check=False)
    assert out.returncode != 0
    assert "workerThreds" in out.stdout + out.stderr


def test_helm_package_makes_the_versioned_archive(tmp_path: Path) -> None:
    """What `make chart` runs: dist/jobflow-controller-<version>.tgz, ready for `helm push`."""
    out = helm("package", str(CHART), "--destination", str(tmp_path))

    archive = tmp_path / "jobflow-controller-0.1.0.tgz"
    assert f"saved it to: {archive}" in out.stdout
    assert archive.is_file()
