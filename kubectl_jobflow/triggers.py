"""`kubectl jobflow triggers [-n NS | -A] [-o json]`: the JobFlowTriggers and what each fired (docs/triggers.md).

One row per trigger: its template, its source (`http`, or the watched kind), how many runs it made
and when last, and the runs it has now (the JobFlows annotated `flow.volcano.sh/triggered-by` with its
name and controlled by it), each with its phase, newest first. Two LISTs (triggers and JobFlows of
the namespace, or of all); the table is built by the pure `rows`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TextIO

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import jobflowtrigger as jft
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from kubectl_jobflow.render import one_line

HEADERS: Final = ("NAMESPACE", "NAME", "TEMPLATE", "SOURCE", "TRIGGERED", "LAST TRIGGER", "RUNS")
#: Runs shown per trigger in the table (`-o json` lists them all).
MAX_RUNS_SHOWN: Final = 3


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("triggers", parents=[common], help="the JobFlowTriggers and the runs each fired")
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table", help="table (default) or json")


def source_of(trigger: Mapping[str, Any]) -> str:
    source = jft.resource_source(trigger)
    if jft.kind_of(trigger) == jft.RESOURCE and source is not None:
        return f"{source.kind} ({','.join(source.events)})"
    return jft.kind_of(trigger) or "-"


def runs_of(trigger: Mapping[str, Any], job_flows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The runs `trigger` controls now, newest first: name and phase."""
    mine = [
        f
        for f in job_flows
        if meta.namespace(f) == meta.namespace(trigger)
        and meta.is_controlled_by(f, trigger)
        and (meta.metadata(f).get("annotations") or {}).get(jft.TRIGGERED_BY_ANNOTATION) == meta.name(trigger)
    ]
    mine.sort(key=lambda f: (meta.creation_timestamp(f) or "", meta.name(f)), reverse=True)
    return [{"name": meta.name(f), "phase": jf.phase(f) or "Pending"} for f in mine]


def rows(triggers: Sequence[Mapping[str, Any]], job_flows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for trigger in sorted(triggers, key=lambda t: (meta.namespace(t), meta.name(t))):
        out.append(
            {
                "namespace": meta.namespace(trigger),
                "name": meta.name(trigger),
                "template": jft.template_name(trigger),
                "source": source_of(trigger),
                "triggered": jft.triggered_count(trigger),
                "lastTriggerTime": jft.last_trigger_time(trigger),
                "runs": runs_of(trigger, job_flows),
            }
        )
    return out


def render_table(table: Sequence[Mapping[str, Any]]) -> str:
    if not table:
        return "No JobFlowTriggers found.\n"
    lines: list[tuple[str, ...]] = [HEADERS]
    for row in table:
        runs = [f"{r['name']}({r['phase']})" for r in row["runs"][:MAX_RUNS_SHOWN]]
        more = len(row["runs"]) - MAX_RUNS_SHOWN
        shown = ",".join(runs) + (f",+{more}" if more > 0 else "") or "<none>"
        cells = (
            row["namespace"],
            row["name"],
            row["template"],
            row["source"],
            str(row["triggered"]),
            row["lastTriggerTime"] or "<never>",
            shown,
        )
        lines.append(tuple(one_line(str(c), 120) for c in cells))
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADERS))]
    return "".join("   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in lines)


def run_triggers(args: argparse.Namespace, clientset: Clientset, namespace: str, stdout: TextIO) -> int:
    scope = None if args.all_namespaces else namespace
    table = rows(clientset.job_flow_triggers(scope).list(), clientset.job_flows(scope).list())
    if args.output == "json":
        stdout.write(json.dumps({"triggers": table}, indent=2) + "\n")
    else:
        stdout.write(render_table(table))
    return 0
