"""The one list of every function that reads tenant-controlled text or JSON (docs/hostile-input.md).

Each area registers its parsers in a module of this directory named `parsers_<area>.py` holding a
list `PARSERS` of `Parser`; `all_parsers()` gathers them, `test_fuzz_parsers.py` fuzzes each, and
`test_fuzz_registry_complete.py` fails when the product decodes text in a function that is neither
registered nor listed as reading no tenant text.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Parser:
    name: str  # dotted path of the function under test
    call: Callable[[Any], object]  # takes one fuzzed input
    inputs: str  # "text" | "bytes" | "json"
    allowed: tuple[type[BaseException], ...]  # the documented errors it may raise
    bound_s: float = 1.0  # wall-clock bound per call


INPUT_KINDS = frozenset({"text", "bytes", "json"})


def as_text(value: Any) -> str:
    """A fuzzed input as the string a parser's callers hand it (they never pass anything else)."""
    return value if isinstance(value, str) else repr(value)


def parser_modules() -> list[str]:
    """The registering modules' names, `parsers_*`, sorted (so the fuzzing order is fixed)."""
    return sorted(path.stem for path in HERE.glob("parsers_*.py"))


def all_parsers() -> list[Parser]:
    """Every `PARSERS` entry of every `parsers_*.py` module here, module by module in name order."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    out: list[Parser] = []
    for name in parser_modules():
        module = importlib.import_module(name)
        parsers = getattr(module, "PARSERS", None)
        if not isinstance(parsers, list) or not all(isinstance(p, Parser) for p in parsers):
            raise TypeError(f"{name}.py must define PARSERS: list[Parser]")
        out.extend(parsers)
    return out
