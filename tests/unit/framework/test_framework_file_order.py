"""The suite's own scheduling rule (tests/file_order.py): the longest files first, each file whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from file_order import TABLE, UNKNOWN_E2E_SECONDS, UNKNOWN_UNIT_SECONDS, estimate, load_table, longest_files_first


@dataclass
class FakeItem:
    nodeid: str


def order(nodeids: list[str], table: dict[str, float]) -> list[str]:
    items = [FakeItem(n) for n in nodeids]
    longest_files_first(cast(list[pytest.Item], items), table)
    return [i.nodeid for i in items]


@pytest.mark.parametrize(
    ("nodeids", "table", "expected"),
    [
        (
            ["tests/unit/a.py::t1", "tests/e2e/b.py::t1", "tests/unit/a.py::t2", "tests/e2e/b.py::t2"],
            {"tests/unit/a.py": 1.0, "tests/e2e/b.py": 100.0},
            ["tests/e2e/b.py::t1", "tests/e2e/b.py::t2", "tests/unit/a.py::t1", "tests/unit/a.py::t2"],
        ),
        # Ties keep collection order.
        (["x.py::a", "y.py::a", "x.py::b"], {"x.py": 5.0, "y.py": 5.0}, ["x.py::a", "x.py::b", "y.py::a"]),
        # Unknown files: an e2e file is taken as longer than a unit file.
        (["tests/unit/new.py::t", "tests/e2e/new.py::t"], {}, ["tests/e2e/new.py::t", "tests/unit/new.py::t"]),
        # A known short e2e file goes after a known long unit file.
        (
            ["tests/e2e/short.py::t", "tests/unit/long.py::t"],
            {"tests/e2e/short.py": 2.0, "tests/unit/long.py": 30.0},
            ["tests/unit/long.py::t", "tests/e2e/short.py::t"],
        ),
    ],
)
def test_files_run_longest_first_and_whole(nodeids: list[str], table: dict[str, float], expected: list[str]) -> None:
    assert order(nodeids, table) == expected


def test_an_unknown_file_gets_its_kinds_typical_time() -> None:
    assert estimate("tests/e2e/test_e2e_new.py", {}) == UNKNOWN_E2E_SECONDS
    assert estimate("tests/unit/x/test_new.py", {}) == UNKNOWN_UNIT_SECONDS


def test_no_table_means_no_known_times(tmp_path: Path) -> None:
    assert load_table(tmp_path / "missing.json") == {}


def test_the_checked_in_table_names_files_that_exist() -> None:
    doc: dict[str, Any] = json.loads(TABLE.read_text())
    root = TABLE.parent.parent
    missing = [row["file"] for row in doc["files"] if not (root / row["file"]).is_file()]
    assert len(missing) <= len(doc["files"]) // 10, f"refresh tests/file_durations.json: {missing}"
