"""The admission rules on a `when` item's `cel` (ours, docs/results.md), shared by the webhook and the
controller (validation/params.py calls them for each `when` item that sets `cel`):

* `cel` and `input`/`operator`/`values` are alternatives: an item sets one or the other, not both;
* `cel` is a string the CEL seam compiles (apis/cel_expression.py: our static limits first, then the
  library's parser): the problem is the library's message, naming the flow and the item's index.

Whether it returns a bool is known only when it runs (its variables are maps of strings): a non-bool
is the controller's `InvalidWhen` (jobflow/when_cel.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from jobflow_controller.apis.cel_expression import CelError, compile_cel

#: The fields `cel` replaces in an item.
CLASSIC_FIELDS: Final = ("input", "operator", "values")


def cel_item_problems(where: str, entry: Mapping[str, object]) -> list[str]:
    """The problems of one `when` item that sets `cel` (`where`: `jobflow Flow f: when[0]`)."""
    problems = []
    both = [f for f in CLASSIC_FIELDS if f in entry]
    if both:
        problems.append(f"{where}: sets cel and {', '.join(both)}: cel replaces input, operator and values")
    text = entry.get("cel")
    if not isinstance(text, str):
        return [*problems, f"{where}.cel: must be a string, got {type(text).__name__}"]
    try:
        compile_cel(text)
    except CelError as err:
        problems.append(f"{where}.cel: {err}")
    return problems


def neither_problem(where: str, entry: Mapping[str, object]) -> str | None:
    """An item that sets neither `cel` nor any of `input`, `operator`, `values`."""
    if "cel" in entry or any(f in entry for f in CLASSIC_FIELDS):
        return None
    return f"{where}: must set cel, or input, operator and values"
