"""`kubectl jobflow results NAME [-o json]`: every Job's results and the JobFlow's own (docs/results.md).

Read from the JobFlow's status alone (`status.jobStatusList[].results`, `status.results`), so it shows
what the controller kept even after the Jobs and their pods are gone. The table has one row per value
(JOB, NAME, VALUE), the JobFlow's own results last with `(jobflow)` as their JOB; a value is shown on one
line, its control characters escaped and cut to `VALUE_WIDTH`. `-o json` prints every value whole:
`{"jobs": {job: {name: value}}, "results": {name: value}}`. The decisions are pure (`collect`,
`render_table`); `run_results` does the one GET.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from informers.errors import NotFoundError
from jobflow_controller.apis.results import recorded_own_results, recorded_results
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ForbiddenError
from jobflow_controller.kube.resources import JOB_FLOWS
from kubectl_jobflow.render import one_line

#: The widest VALUE cell of the table (`-o json` is never cut).
VALUE_WIDTH: Final = 60
#: What the JOB column shows for the JobFlow's own results.
OWN: Final = "(jobflow)"
HEADERS: Final = ("JOB", "NAME", "VALUE")


class ResultsError(Exception):
    """Ends the command with exit status 1 and this one line on stderr."""


@dataclass(frozen=True)
class Collected:
    """The results kept in a JobFlow's status: each Job's (status order) and the JobFlow's own."""

    jobs: dict[str, dict[str, str]] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "results": self.results}


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("results", parents=[common], help="every Job's results and the JobFlow's own")
    parser.add_argument("name", metavar="NAME", help="the JobFlow")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table", help="table (default) or json")


def collect(job_flow: Mapping[str, Any]) -> Collected:
    """The results of `job_flow`'s status; a Job whose results were never read (or that declares
    none) is left out, as is anything not stored as strings."""
    status = job_flow.get("status")
    status = status if isinstance(status, Mapping) else {}
    jobs: dict[str, dict[str, str]] = {}
    entries = status.get("jobStatusList")
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        found = recorded_results(entry.get("results"))
        if found is not None:
            jobs[entry["name"]] = found
    own = {r["name"]: r["value"] for r in recorded_own_results(status.get("results"))}
    return Collected(jobs, own)


def cell(value: str, width: int = VALUE_WIDTH) -> str:
    """`value` on one line, escaped and cut to `width` (as the tree's RESULTS column)."""
    return one_line(value, width)


def render_table(collected: Collected, width: int = VALUE_WIDTH) -> str:
    """JOB, NAME, VALUE: a row per Job's value, then the JobFlow's own; a line saying so when there is none."""
    rows = [
        (cell(job, 253), cell(n, 63), cell(v, width))
        for job, values in collected.jobs.items()
        for n, v in values.items()
    ]
    rows += [(OWN, cell(n, 63), cell(v, width)) for n, v in collected.results.items()]
    if not rows:
        return "No results.\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
    lines = [HEADERS, *rows]
    return "".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(line)).rstrip() + "\n" for line in lines)


def run_results(args: argparse.Namespace, clientset: Clientset, namespace: str, stdout: TextIO) -> int:
    """GET the JobFlow and print its results."""
    try:
        job_flow = clientset.job_flows(namespace).get(args.name)
    except NotFoundError as err:
        raise ResultsError(f'{JOB_FLOWS.group_resource} "{args.name}" not found in namespace "{namespace}"') from err
    except ForbiddenError as err:
        raise ResultsError(f"forbidden: {err.message}") from err
    collected = collect(job_flow)
    if args.output == "json":
        stdout.write(json.dumps(collected.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        stdout.write(render_table(collected))
    return 0
