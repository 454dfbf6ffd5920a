"""The caps on a JobFlow's size: flows per JobFlow, targets per flow, finally entries, defined here once.

The same numbers are in three places, all from these constants:

* the validation rule (``size_problems``), so the webhook refuses a JobFlow over a cap and the
  controller gives a stored one ``InvalidJobFlow``;
* the JobFlow CRD we ship, as ``maxItems`` on ``spec.flows`` and ``spec.flows[].dependsOn.targets``
  (``hack/crdgen`` imports them), so the API server refuses it even without the webhook;
* the optional CEL Component ``manifests/crd-validation/``, whose rules' cost estimates rest on those
  two ``maxItems`` (``hack/crdgen/rules.py`` says why they fit the API server's CEL budgets).

Why 500 and 100 (docs/operations.md, "Limits"): the CEL rules' estimated cost stays under the API
server's per-call limit, and the status of a JobFlow with 500 running flows stays far under etcd's
request limit (about 1.5 MiB).

Why 100 finally entries (docs/rules.md): a finally entry is a Job like a flow's, so 500 flows and
100 finally Jobs keep the status within the same margin, and the CEL rule that finally names repeat
no flow name (``hack/crdgen/rules.py``) is estimated from this ``maxItems``. A finally entry reports
or cleans up: a handful is the use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

__all__ = [
    "MAX_FINALLY",
    "MAX_FLOWS",
    "MAX_MATRIX_PARAMS",
    "MAX_PARAMS",
    "MAX_TARGETS",
    "size_problems",
    "too_many_finally_message",
    "too_many_flows_message",
    "too_many_targets_message",
]

#: The most flows one JobFlow may have (``spec.flows``).
MAX_FLOWS: Final = 500
#: The most targets one flow may wait for (``spec.flows[].dependsOn.targets``).
MAX_TARGETS: Final = 100
#: The most entries ``spec.finally`` may have.
MAX_FINALLY: Final = 100
#: The most entries ``spec.params`` may have, and the most lists one flow's ``matrix.params`` may
#: have (docs/params.md): the CEL rules that the names are unique are estimated from them.
MAX_PARAMS: Final = 100
MAX_MATRIX_PARAMS: Final = 16


def too_many_flows_message(count: int) -> str:
    """``jobflow has 501 flows, more than the 500 allowed``."""
    return f"jobflow has {count} flows, more than the {MAX_FLOWS} allowed"


def too_many_targets_message(flow: str, count: int) -> str:
    """``jobflow Flow "<flow>": dependsOn.targets: has 101 targets, more than the 100 allowed``."""
    return f'jobflow Flow "{flow}": dependsOn.targets: has {count} targets, more than the {MAX_TARGETS} allowed'


def too_many_finally_message(count: int) -> str:
    """``jobflow has 101 finally entries, more than the 100 allowed``."""
    return f"jobflow has {count} finally entries, more than the {MAX_FINALLY} allowed"


def size_problems(graph: Iterable[tuple[str, Sequence[Any]]]) -> list[str]:
    """The caps ``graph`` (``(name, targets)`` pairs in spec order) exceeds: flows first, then each flow's targets."""
    pairs = list(graph)
    problems = [too_many_flows_message(len(pairs))] if len(pairs) > MAX_FLOWS else []
    problems.extend(
        too_many_targets_message(name, len(targets)) for name, targets in pairs if len(targets) > MAX_TARGETS
    )
    return problems
