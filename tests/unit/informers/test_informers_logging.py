"""Every log call in the package has a format string that matches its arguments.

A bad ``%`` directive only fails when the record is emitted, which tests rarely do at DEBUG level,
so check the calls statically.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import informers

LEVELS = {"debug", "info", "warning", "error", "exception", "critical"}
SOURCES = sorted(Path(informers.__file__).parent.glob("*.py"))


def log_calls(path: Path) -> list[tuple[int, str, int]]:
    calls = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target = node.func.value
        if node.func.attr not in LEVELS or not (isinstance(target, ast.Name) and target.id == "logger"):
            continue
        if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            calls.append((node.lineno, node.args[0].value, len(node.args) - 1))
    return calls


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_log_format_strings_match_their_arguments(path: Path) -> None:
    for line, fmt, nargs in log_calls(path):
        try:
            fmt % tuple([0] * nargs)
        except (TypeError, ValueError) as err:
            pytest.fail(f"{path.name}:{line}: {fmt!r} with {nargs} args: {err}")
