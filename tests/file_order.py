"""Runs the slowest test files first, from the per-file times of a past run (tests/file_durations.json).

Why: `make test` runs `-n 2 --dist loadfile --no-loadscope-reorder`, so each process takes whole
files in collection order, one at a time as it frees up. Longest first (the LPT rule) keeps a
three-minute e2e file from starting last while the other process idles; xdist's own reorder
(most tests first) put the few-test, long e2e files at the end. Every process sorts the same way
(a fixed table, ties in collection order), as xdist requires. A file the table does not know is
given a typical time for its kind. Refresh the table after a full run with
`PYTEST_FILE_TIMES=tests/file_durations.json make test` (tests/file_times.py writes it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TABLE = Path(__file__).parent / "file_durations.json"
#: Seconds assumed for a file the table does not know: an e2e file mostly waits on the control plane.
UNKNOWN_E2E_SECONDS, UNKNOWN_UNIT_SECONDS = 15.0, 1.0


def load_table(path: Path = TABLE) -> dict[str, float]:
    """{file path relative to the repository: seconds}; empty when there is no table."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {row["file"]: float(row["seconds"]) for row in doc["files"]}


def estimate(path: str, table: dict[str, float]) -> float:
    if path in table:
        return table[path]
    return UNKNOWN_E2E_SECONDS if path.startswith("tests/e2e/") else UNKNOWN_UNIT_SECONDS


def longest_files_first(items: list[pytest.Item], table: dict[str, float]) -> None:
    """Sorts `items` in place by their file's estimated time, longest first (ties: the file collected
    first); a file's tests stay together and in their order (Python's sort is stable)."""

    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(item.nodeid.split("::", 1)[0], index)

    def key(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::", 1)[0]
        return -estimate(path, table), first[path]

    items.sort(key=key)
