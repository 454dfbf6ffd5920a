"""The Go-style formatter behind ``eventf``: Go's renderings, and no exception on mismatches."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.record._gofmt import sprintf


@pytest.mark.parametrize(
    ("fmt", "args", "expected"),
    [
        ("create a job named %s!", ("jf-a",), "create a job named jf-a!"),
        ("%v JobFlow failed for %v", ("SyncJobFlow", ValueError("x")), "SyncJobFlow JobFlow failed for x"),
        ("some verbose message: %v", (1,), "some verbose message: 1"),
        ("%v %v %v", (True, None, [1, "a"]), "true <nil> [1 a]"),
        ("%v", ({"b": 2, "a": 1},), "map[a:1 b:2]"),
        ("%d items", (3,), "3 items"),
        ("%5d|%-4s|%.2f", (42, "ab", 3.14159), "   42|ab  |3.14"),
        ("%q", ('a"b',), '"a\\"b"'),
        ("%t", (False,), "false"),
        ("%x/%X", ("abc", 255), "616263/FF"),
        ("100%%", (), "100%"),
        ("no verbs", (), "no verbs"),
    ],
)
def test_renders_like_go(fmt: str, args: tuple[Any, ...], expected: str) -> None:
    assert sprintf(fmt, *args) == expected


@pytest.mark.parametrize(
    ("fmt", "args", "expected"),
    [
        ("%s and %s", ("one",), "one and %!s(MISSING)"),
        ("%s", ("one", 2), "one%!(EXTRA int=2)"),
        ("%d", ("abc",), "%!d(string=abc)"),
        ("%f", ("abc",), "%!f(string=abc)"),
    ],
)
def test_mismatches_are_written_into_the_message(fmt: str, args: tuple[Any, ...], expected: str) -> None:
    assert sprintf(fmt, *args) == expected
