"""The layers of docs/architecture.md ("Packages and their direction") are enforced: each
import-linter contract in pyproject.toml breaks on the violation it is there for, and on no other.
The contracts run, verbatim, against a small package tree laid out like ours, first clean, then
with one bad import added."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT_TEXT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
CONTRACTS = {c["id"]: c["name"] for c in tomllib.loads(PYPROJECT_TEXT)["tool"]["importlinter"]["contracts"]}

#: A tree that keeps every contract: kube/ imports the client, the others reach it through kube/,
#: local/ uses the runtime, the manager uses everything but local/, the kubectl plugin uses the API,
#: client and validation layers.
CLEAN_TREE = {
    "jobflow_controller/__init__.py": "",
    "jobflow_controller/apis/__init__.py": "",
    "jobflow_controller/apis/phases.py": "import json\n",
    "jobflow_controller/kube/__init__.py": "",
    "jobflow_controller/kube/rest.py": "import kubernetes\nfrom kubernetes import client\n",
    "jobflow_controller/local/__init__.py": "from jobflow_controller.kube import rest\n",
    "jobflow_controller/manager/__init__.py": "",
    "jobflow_controller/manager/server.py": (
        "import informers\nimport workqueue\n"
        "from jobflow_controller.apis import phases\nfrom jobflow_controller.kube import rest\n"
    ),
    "jobflow_controller/validation/__init__.py": "",
    "jobflow_controller/jobflow/__init__.py": "",
    "jobflow_controller/jobtemplate/__init__.py": "",
    "jobflow_controller/cronjobflow/__init__.py": "",
    "jobflow_controller/record/__init__.py": "",
    "jobflow_controller/leaderelection/__init__.py": "",
    "jobflow_controller/sharding/__init__.py": "",
    "jobflow_controller/webhook/__init__.py": "",
    "jobflow_controller/framework.py": "",
    "kubectl_jobflow/__init__.py": "",
    "kubectl_jobflow/cli.py": (
        "import informers\nimport jobflow_controller\nfrom jobflow_controller.apis import phases\n"
        "from jobflow_controller.kube import rest\nfrom jobflow_controller.validation import x\n"
    ),
    "kubectl_jobflow/ui/__init__.py": "",
    "kubectl_jobflow/ui/layout.py": "",
    # The SDK: the API, client and validation layers, and the web view's layout.
    "jobflow_sdk/__init__.py": "",
    "jobflow_sdk/draw.py": (
        "import informers\nfrom jobflow_controller.apis import phases\nfrom jobflow_controller.kube import rest\n"
        "from jobflow_controller.validation import x\nfrom kubectl_jobflow.ui.layout import layout\n"
    ),
    "informers/__init__.py": "from informers import store\n",
    "informers/store.py": "",
    "workqueue/__init__.py": "from workqueue import queue\n",
    "workqueue/queue.py": "",
}


def _section(text: str) -> str:
    """pyproject.toml's `[tool.importlinter]` tables, as written."""
    lines = text.splitlines()
    start = lines.index("[tool.importlinter]")
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"\[+tool\.(?!importlinter)", lines[i])), len(lines)
    )
    return "\n".join(lines[start:end]) + "\n"


def broken_contracts(tmp_path: Path, extra: dict[str, str]) -> set[str]:
    """Run `lint-imports` over the clean tree plus `extra` (appended to a file); the broken names."""
    for path in {**CLEAN_TREE, **extra}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(CLEAN_TREE.get(path, "") + extra.get(path, ""))
    (tmp_path / "pyproject.toml").write_text(_section(PYPROJECT_TEXT))
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=tmp_path,
        # The tree's packages come first (lint-imports puts the working directory first);
        # hack.import_cycles, the cycle contract, comes from the repository.
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    statuses = dict(re.findall(r"^(.+) (KEPT|BROKEN)\b", result.stdout, re.MULTILINE))
    assert set(statuses) == set(CONTRACTS.values()), result.stdout + result.stderr
    broken = {name for name, status in statuses.items() if status == "BROKEN"}
    assert result.returncode == (1 if broken else 0), result.stdout + result.stderr
    return broken


def test_the_clean_tree_keeps_every_contract(tmp_path: Path) -> None:
    assert broken_contracts(tmp_path, {}) == set()


def test_every_module_of_kube_may_import_the_client(tmp_path: Path) -> None:
    extra = {
        "jobflow_controller/kube/__init__.py": "import kubernetes\n",
        "jobflow_controller/kube/lease/__init__.py": "",
        "jobflow_controller/kube/lease/lock.py": "from kubernetes.client import ApiClient\n",
    }
    assert broken_contracts(tmp_path, extra) == set()


@pytest.mark.parametrize(
    ("contract", "extra"),
    [
        pytest.param("kube-door", {"jobflow_controller/manager/server.py": "import kubernetes\n"}, id="manager"),
        pytest.param(
            "kube-door",
            {"jobflow_controller/manager/server.py": "from kubernetes.client import ApiClient\n"},
            id="from",
        ),
        pytest.param("kube-door", {"informers/store.py": "from kubernetes import watch\n"}, id="informers"),
        pytest.param("kube-door", {"jobflow_controller/__init__.py": "import kubernetes\n"}, id="root-package"),
        pytest.param("client-go-ports", {"informers/store.py": "import workqueue\n"}, id="informers-workqueue"),
        pytest.param(
            "client-go-ports", {"workqueue/queue.py": "from jobflow_controller.apis import phases\n"}, id="workqueue"
        ),
        pytest.param("apis", {"jobflow_controller/apis/phases.py": "from jobflow_controller.kube import rest\n"}),
        pytest.param("apis", {"jobflow_controller/apis/phases.py": "import informers\n"}, id="apis-informers"),
        pytest.param("no-local", {"jobflow_controller/manager/server.py": "import jobflow_controller.local\n"}),
        pytest.param("no-plugin", {"jobflow_controller/manager/server.py": "import kubectl_jobflow.cli\n"}),
        pytest.param("plugin-layers", {"kubectl_jobflow/cli.py": "from jobflow_controller.jobflow import x\n"}),
        pytest.param("plugin-layers", {"kubectl_jobflow/cli.py": "import workqueue\n"}, id="plugin-workqueue"),
        pytest.param("kube-door", {"kubectl_jobflow/cli.py": "import kubernetes\n"}, id="plugin-client"),
        pytest.param("kube-door", {"jobflow_sdk/draw.py": "import kubernetes\n"}, id="sdk-client"),
        pytest.param("no-sdk", {"kubectl_jobflow/cli.py": "import jobflow_sdk\n"}, id="plugin-sdk"),
        pytest.param("no-sdk", {"jobflow_controller/manager/server.py": "import jobflow_sdk\n"}, id="manager-sdk"),
        pytest.param(
            "sdk-layers", {"jobflow_sdk/draw.py": "from jobflow_controller.jobflow import x\n"}, id="sdk-jobflow"
        ),
        pytest.param("sdk-layers", {"jobflow_sdk/draw.py": "import kubectl_jobflow.cli\n"}, id="sdk-plugin"),
        pytest.param(
            "no-cycles",
            {"jobflow_controller/kube/rest.py": "from jobflow_controller.manager import server\n"},
            id="sibling",
        ),
        pytest.param(
            "no-cycles",
            {
                "jobflow_controller/manager/__init__.py": "from jobflow_controller.manager.server import x\n",
                "jobflow_controller/manager/server.py": "import jobflow_controller.manager\nx = 1\n",
            },
            id="package-and-its-module",
        ),
    ],
)
def test_each_contract_breaks_on_its_violation_alone(tmp_path: Path, contract: str, extra: dict[str, str]) -> None:
    assert broken_contracts(tmp_path, extra) == {CONTRACTS[contract]}


def _import_cycles() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "hack" / "import_cycles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported)
    return graph


def test_import_cycles_lists_each_circle_once_with_its_members_sorted() -> None:
    graph = _graph(("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p", "p.x"), ("p.x", "p"), ("p.a", "p.d"))
    assert _import_cycles().import_cycles(graph) == [["p", "p.x"], ["p.a", "p.b", "p.c"]]


def test_import_cycles_finds_none_in_a_graph_that_only_fans_in() -> None:
    graph = _graph(("p.a", "p.b"), ("p.a", "p.c"), ("p.b", "p.c"), ("p", "p.a"))
    assert _import_cycles().import_cycles(graph) == []
