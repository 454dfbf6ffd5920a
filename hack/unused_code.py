"""`make lint`'s check for unused code: vulture over the product, with the tests, benchmarks and tools as its users.

Why this wrapper and not vulture's command line: vulture reports on every file it reads, and the
tests must be read (a function only the tests call is not dead code to this check) without being
reported on (an unused test helper is the tests' business). Names that only a framework calls (an
`http.server` handler's `do_GET`, a `__exit__` parameter, a flag kept for upstream's command lines)
are in hack/vulture_allowlist.py, each with why. Exit status 1 when the product has unused code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
#: What is reported on.
PRODUCT = ("jobflow_controller", "informers", "workqueue", "kubectl_jobflow", "jobflow_sdk", "cmd")
#: What is read as users of the product, and not reported on.
USERS = ("tests", "bench", "hack")
#: Generated (hack/gen_sdk_models.py): its fields are the CRD's, read by pydantic.
EXCLUDE = ["*/jobflow_sdk/models/_*.py"]
MIN_CONFIDENCE = 60


def unused() -> list[str]:
    scanner = vulture.Vulture()
    paths = [str(ROOT / p) for p in (*PRODUCT, *USERS)] + [str(ROOT / "hack" / "vulture_allowlist.py")]
    scanner.scavenge(paths, exclude=EXCLUDE)
    product = tuple(str(ROOT / p) + "/" for p in PRODUCT)
    return [
        item.get_report()
        for item in scanner.get_unused_code(min_confidence=MIN_CONFIDENCE)
        if str(item.filename).startswith(product)
    ]


def main() -> int:
    found = unused()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} unused names: remove them, or allow one in hack/vulture_allowlist.py saying why")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
