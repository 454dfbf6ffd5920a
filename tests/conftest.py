"""Shared pytest setup: marks everything under tests/e2e with the `e2e` marker, runs the slowest files
first (tests/file_order.py) and writes per-file times when asked (tests/file_times.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

E2E_DIR = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from file_order import load_table, longest_files_first

    longest_files_first(items, load_table())
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


def pytest_configure(config: pytest.Config) -> None:
    from file_times import register

    register(config)
