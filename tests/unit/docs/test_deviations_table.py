"""docs/deviations.md is a contract: every row has one number of its own and names tests that exist.

A reader finds a row by its number (other docs and notes cite "row 37"), so two rows with one
number send them to the wrong one; a row's "Pinned by" cell is what says the deviation is tested,
so a test renamed or deleted must fail here rather than leave the row pointing at nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEVIATIONS = ROOT / "docs" / "deviations.md"
ROW = re.compile(r"^\| (?P<id>[A-Z]?\d+) \|")
#: A test file, by its path (`tests/unit/x/test_y.py`) or by its name alone (`test_y.py`), or a
#: `::name` of the last file named (`::prefix_*`: any name that begins so).
TOKEN = re.compile(r"(?:tests/[\w/]+/)?test_\w+\.py|::[A-Za-z_]\w*\*?")


def _tables() -> list[tuple[list[str], list[str]]]:
    """(header cells, row lines) of each table of the document."""
    tables: list[tuple[list[str], list[str]]] = []
    for line in DEVIATIONS.read_text().splitlines():
        if line.startswith("| #"):
            tables.append(([c.strip() for c in line.strip("|").split("|")], []))
        elif tables and ROW.match(line):
            tables[-1][1].append(line)
    return tables


def _rows() -> list[str]:
    return [row for _, rows in _tables() for row in rows]


def test_every_row_has_a_number_of_its_own() -> None:
    counts = Counter(ROW.match(row).group("id") for row in _rows())  # type: ignore[union-attr]
    assert len(counts) > 60
    assert [number for number, n in counts.items() if n > 1] == []


def _pinned_rows() -> list[tuple[str, str]]:
    out = []
    for header, rows in _tables():
        if "Pinned by" not in header:
            continue
        column = header.index("Pinned by")
        for row in rows:
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            out.append((cells[0], cells[column] if column < len(cells) else ""))
    return out


def _resolve(token: str) -> list[Path]:
    """The files a token names: its path, or every file of the suite with that name."""
    if "/" in token:
        return [ROOT / token] if (ROOT / token).is_file() else []
    return sorted((ROOT / "tests").rglob(token))


@pytest.mark.parametrize(("number", "cell"), _pinned_rows(), ids=[n for n, _ in _pinned_rows()])
def test_a_rows_tests_exist(number: str, cell: str) -> None:
    tokens = TOKEN.findall(cell)
    assert any(not t.startswith("::") for t in tokens), f"row {number} names no test file: {cell[:120]!r}"
    # `file::name` and a bare `::name` after it name a function (or class) of the last file named.
    files: list[Path] = []
    for token in tokens:
        if not token.startswith("::"):
            files = _resolve(token)
            assert files, f"row {number} names {token}, which does not exist"
            continue
        name = token[2:-1] + r"\w*" if token.endswith("*") else token[2:]
        assert any(re.search(rf"\b(def|class) {name}\b", f.read_text()) for f in files), (
            f"row {number} names {token[2:]} in {[str(f.relative_to(ROOT)) for f in files]}, not defined there"
        )
