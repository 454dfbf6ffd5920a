"""Every example of manifests/examples/ is written in Python too (jobflow_sdk/examples), and each
renders exactly the YAML example: the same objects, field for field, templates in file order."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobflow_sdk import CronJobFlow, JobFlow
from jobflow_sdk.examples import EXAMPLES

EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "manifests" / "examples"


def documents(relative: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES_DIR / relative).read_text()) if d]


def built(module: str) -> JobFlow | CronJobFlow:
    built_object: JobFlow | CronJobFlow = importlib.import_module(f"jobflow_sdk.examples.{module}").pipeline()
    return built_object


def test_every_yaml_example_has_a_python_twin() -> None:
    listed = {path for pair in EXAMPLES.values() for path in pair if path}
    on_disk = {str(p.relative_to(EXAMPLES_DIR)) for p in EXAMPLES_DIR.rglob("*.yaml") if p.name != "kustomization.yaml"}
    assert listed == on_disk


@pytest.mark.parametrize("module", sorted(EXAMPLES))
def test_the_python_example_renders_its_yaml_exactly(module: str) -> None:
    obj_file, templates_file = EXAMPLES[module]
    pipeline = built(module)
    assert [pipeline.to_dict()] == documents(obj_file)
    templates = pipeline.job_flow.templates if isinstance(pipeline, CronJobFlow) else pipeline.templates
    assert [t.to_dict() for t in templates] == (documents(templates_file) if templates_file else [])


@pytest.mark.parametrize("module", sorted(EXAMPLES))
def test_the_python_example_is_valid_locally(module: str) -> None:
    assert built(module).validate() == []


@pytest.mark.parametrize("module", sorted(EXAMPLES))
def test_the_yaml_example_round_trips_through_the_sdk(module: str) -> None:
    obj_file, templates_file = EXAMPLES[module]
    text = (EXAMPLES_DIR / obj_file).read_text()
    if templates_file:
        text = (EXAMPLES_DIR / templates_file).read_text() + "\n---\n" + text
    kind = CronJobFlow if "cronjobflow" in obj_file else JobFlow
    loaded = kind.from_yaml(text)
    assert [loaded.to_dict()] == documents(obj_file)
    assert yaml.safe_load(loaded.to_yaml()) == documents(obj_file)[0]


def _python_blocks(doc: str) -> list[str]:
    text = (EXAMPLES_DIR.parents[1] / doc).read_text()
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


def test_the_walkthroughs_pipeline_and_cronjobflow_build_and_validate() -> None:
    blocks = _python_blocks("docs/sdk.md")
    walkthrough: dict[str, Any] = {}
    exec(blocks[0], walkthrough)
    assert walkthrough["jf"].validate() == []
    cron_block = next(b for b in blocks if "CronJobFlow(" in b)
    cron: dict[str, Any] = {}
    exec(cron_block.split("cron.validate()")[0], cron)
    assert cron["cron"].validate() == []
