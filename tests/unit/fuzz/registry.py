"""The one list of every function that reads tenant-controlled text or JSON: the ``Parser`` entry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Parser:
    name: str  # dotted path of the function under test
    call: Callable[[Any], object]  # takes one fuzzed input
    inputs: str  # "text" | "bytes" | "json"
    allowed: tuple[type[BaseException], ...]  # the documented errors it may raise
    bound_s: float = 1.0  # wall-clock bound per call
