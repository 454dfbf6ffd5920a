"""The admission rules on a `when` item's `cel` (ours, docs/results.md), shared by the webhook and the
controller (validation/params.py calls them for each `when` item that sets `cel`):

* at most `MAX_CEL_ITEMS` `cel` items in the JobFlow (past it, none is compiled);
* `cel` and `input`/`operator`/`values` are alternatives: an item sets one or the other, not both;
* `cel` is a string the CEL seam compiles (apis/cel_expression.py: our static limits first, then the
  library's parser): the problem is the library's message, naming the flow and the item's index.

Whether it returns a bool is known only when it runs (its variables are maps of strings): a non-bool
is the controller's `InvalidWhen` (jobflow/when_cel.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from jobflow_controller.apis import cel_expression
from jobflow_controller.apis.cel_expression import CelError
from jobflow_controller.apis.params import MAX_WHEN_EXPRESSIONS

#: The most `cel` items in one JobFlow: compiling a 1 KiB expression takes the library up to ~10 ms
#: (500 flows of 16 would hold a webhook call or the controller's validation for over a minute), and a
#: sync may judge every one (with the limits of apis/cel_expression.py, up to a few ms each).
MAX_CEL_ITEMS: Final = 16
#: The fields `cel` replaces in an item.
CLASSIC_FIELDS: Final = ("input", "operator", "values")


def cel_count_problem(flows: Iterable[Mapping[str, object]]) -> str | None:
    """More than `MAX_CEL_ITEMS` `cel` items in the JobFlow's flows (each flow's first
    `MAX_WHEN_EXPRESSIONS` items counted): none is compiled then."""
    count = 0
    for flow in flows:
        when = flow.get("when")
        items = when[:MAX_WHEN_EXPRESSIONS] if isinstance(when, list) else ()
        count += sum(1 for item in items if isinstance(item, Mapping) and "cel" in item)
    if count <= MAX_CEL_ITEMS:
        return None
    return f"jobflow has {count} when items with cel, more than the {MAX_CEL_ITEMS} allowed"


def cel_item_problems(where: str, entry: Mapping[str, object], *, compile_cel: bool = True) -> list[str]:
    """The problems of one `when` item that sets `cel` (`where`: `jobflow Flow f: when[0]`); its text
    compiled unless `compile_cel` is False."""
    problems = []
    both = [f for f in CLASSIC_FIELDS if f in entry]
    if both:
        problems.append(f"{where}: sets cel and {', '.join(both)}: cel replaces input, operator and values")
    text = entry.get("cel")
    if not isinstance(text, str):
        return [*problems, f"{where}.cel: must be a string, got {type(text).__name__}"]
    if not compile_cel:
        return problems
    try:
        cel_expression.compile_cel(text)
    except CelError as err:
        problems.append(f"{where}.cel: {err}")
    return problems


def neither_problem(where: str, entry: Mapping[str, object]) -> str | None:
    """An item that sets neither `cel` nor any of `input`, `operator`, `values`."""
    if "cel" in entry or any(f in entry for f in CLASSIC_FIELDS):
        return None
    return f"{where}: must set cel, or input, operator and values"
