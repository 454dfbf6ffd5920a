"""Per-file wall time of a pytest run, written as JSON when PYTEST_FILE_TIMES names a file.

Why: with `--dist loadfile` each file runs whole in one process, so the suite's length is set by the
files' times and how they are packed onto the processes; `--durations` lists tests, not files.
The sums are setup + call + teardown of every test of a file (session fixtures count where they
are first set up), grouped by the xdist worker that ran them.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

ENV = "PYTEST_FILE_TIMES"


class FileTimes:
    """Collects test reports (on the xdist controller, or the only process) into per-file sums."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.started = time.monotonic()
        self.files: dict[str, float] = defaultdict(float)
        self.tests: dict[str, int] = defaultdict(int)
        self.worker: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.files[path] += report.duration
        if report.when == "call":
            self.tests[path] += 1
        node = getattr(report, "node", None)  # the xdist worker that ran it, on the controller
        self.worker[path] = str(node.gateway.id) if node is not None else "main"

    def pytest_sessionfinish(self) -> None:
        rows = sorted(self.files.items(), key=lambda kv: -kv[1])
        per_worker: dict[str, float] = defaultdict(float)
        for path, seconds in rows:
            per_worker[self.worker[path]] += seconds
        doc = {
            "wall_s": round(time.monotonic() - self.started, 1),
            "load_at_end": os.getloadavg(),
            "per_worker_s": {w: round(s, 1) for w, s in sorted(per_worker.items())},
            "files": [
                {"file": p, "seconds": round(s, 2), "tests": self.tests[p], "worker": self.worker[p]} for p, s in rows
            ],
        }
        self.out.write_text(json.dumps(doc, indent=1) + "\n")


def register(config: pytest.Config) -> None:
    """Registers the collector on the process that sees every report (not on xdist workers)."""
    out = os.environ.get(ENV)
    if out and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileTimes(Path(out)), "jobflow-file-times")
