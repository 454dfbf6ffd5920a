"""`kubectl jobflow suspend|resume|stop|terminate|retry NAME`: each one merge patch of the JobFlow.

    suspend    {"spec": {"suspend": true}}             no new Job is created; running ones go on
    resume     {"spec": {"suspend": false}}
    stop       {"spec": {"shutdown": "Stop"}}          no new flow starts; finally flows run; Failed
    terminate  {"spec": {"shutdown": "Terminate"}}     running Jobs terminated; Failed
    retry      {"metadata": {"annotations": {"flow.volcano.sh/retry-request": '{"id": ..., "flows": [...]}'}}}

The controller does the rest (docs/lifecycle.md), so the same can be done with plain `kubectl patch`
or `kubectl annotate`. Each verb reads the JobFlow first, to say "not found" in one line, to check the
flows `retry --flow` names and to refuse a shutdown that would go backwards, then sends its one patch
and prints one line, as kubectl does (`jobflow.flow.volcano.sh/pipe suspended`). `--dry-run` prints the
patch instead of sending it. The decisions are pure (`verb_patch`, `verb_problem`); `run_verb` does the I/O.
"""

from __future__ import annotations

import argparse
import datetime
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TextIO

from informers.errors import NotFoundError
from jobflow_controller.apis.jobflowtemplate import effective_job_flow
from jobflow_controller.apis.lifecycle_fields import (
    RETRY_REQUEST_ANNOTATION,
    SHUTDOWN,
    SUSPEND,
    Shutdown,
    retry_request_value,
    shutdown_change_allowed,
)
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ForbiddenError
from jobflow_controller.kube.resources import JOB_FLOWS

RESOURCE: Final = "jobflow.flow.volcano.sh"


@dataclass(frozen=True)
class Verb:
    """One verb: its help line and what it did, as kubectl words it."""

    help: str
    done: str


VERBS: Final[Mapping[str, Verb]] = {
    "suspend": Verb("create no new Job until resumed; running Jobs go on (spec.suspend: true)", "suspended"),
    "resume": Verb("create Jobs again after a suspend (spec.suspend: false)", "resumed"),
    "stop": Verb(
        "start no new flow, let running Jobs and finally flows finish, end Failed (spec.shutdown: Stop)", "stopped"
    ),
    "terminate": Verb(
        "terminate the running Jobs, run no finally flow, end Failed (spec.shutdown: Terminate)", "terminated"
    ),
    "retry": Verb("re-run the Failed and Skipped flows, or those named, and what depends on them", "retry requested"),
}


class VerbError(Exception):
    """Ends the command with exit status 1 and this one line on stderr."""


def add_verb_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The five subcommands, on the plugin's subparsers (`sub`), with the connection flags (`common`)."""
    for name, verb in VERBS.items():
        parser = sub.add_parser(name, parents=[common], help=verb.help)
        parser.add_argument("name", metavar="NAME", help="the JobFlow")
        parser.add_argument("--dry-run", action="store_true", help="print the patch instead of sending it")
        if name == "retry":
            parser.add_argument(
                "--flow",
                dest="flows",
                action="append",
                default=[],
                metavar="FLOW",
                help="a flow to re-run, with what depends on it (repeatable; default: every Failed and Skipped flow)",
            )


def new_request_id(now: datetime.datetime | None = None) -> str:
    """A fresh re-run request id: the UTC time and five random characters (`20260101T120000Z-3fa9c`)."""
    moment = now or datetime.datetime.now(datetime.UTC)
    return f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)[:5]}"


def verb_patch(verb: str, request_id: str = "", flows: Sequence[str] = ()) -> dict[str, Any]:
    """The merge patch a verb sends."""
    if verb == "suspend":
        return {"spec": {SUSPEND: True}}
    if verb == "resume":
        return {"spec": {SUSPEND: False}}
    if verb == "stop":
        return {"spec": {SHUTDOWN: Shutdown.STOP.value}}
    if verb == "terminate":
        return {"spec": {SHUTDOWN: Shutdown.TERMINATE.value}}
    if verb == "retry":
        return {"metadata": {"annotations": {RETRY_REQUEST_ANNOTATION: retry_request_value(request_id, flows)}}}
    raise ValueError(f"unknown verb {verb!r}")


def verb_problem(verb: str, job_flow: Mapping[str, Any], flows: Sequence[str] = ()) -> str | None:
    """Why the verb must not be sent to this JobFlow, or None.

    A flow `retry --flow` names that the JobFlow does not have; a `stop` after a `terminate` (the
    shutdown is one way: admission would refuse it too, when the webhook or the CEL rules are installed).
    """
    raw_spec = job_flow.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    name = str((job_flow.get("metadata") or {}).get("name") or "")
    if verb == "retry":
        known = [str(f.get("name")) for f in spec.get("flows") or [] if isinstance(f, Mapping)]
        unknown = [flow for flow in flows if flow not in known]
        if unknown:
            return f'no flow of {RESOURCE}/{name} is named "{unknown[0]}" (its flows: {", ".join(known) or "none"})'
    if verb in ("stop", "terminate"):
        current = str(spec.get(SHUTDOWN) or "")
        wanted = verb_patch(verb)["spec"][SHUTDOWN]
        if current in ("Stop", "Terminate") and not shutdown_change_allowed(current, wanted):
            return f"{RESOURCE}/{name} is already shut down with {SHUTDOWN}: {current}, which cannot be undone"
    return None


def done_line(verb: str, name: str, request_id: str = "", flows: Sequence[str] = ()) -> str:
    """What the verb prints once the patch is accepted."""
    line = f"{RESOURCE}/{name} {VERBS[verb].done}"
    if verb == "retry":
        which = ", ".join(flows) if flows else "every Failed and Skipped flow"
        line += f" (id {request_id}: {which})"
    return line


def run_verb(args: argparse.Namespace, clientset: Clientset, namespace: str, stdout: TextIO) -> int:
    """Read the JobFlow, check, then send the one patch (or print it with `--dry-run`)."""
    verb, name, flows = args.command, args.name, list(getattr(args, "flows", None) or [])
    job_flows = clientset.job_flows(namespace)
    where = f'{JOB_FLOWS.group_resource} "{name}"'
    try:
        job_flow = job_flows.get(name)
        problem = verb_problem(verb, effective_job_flow(job_flow), flows)  # a run's flows: docs/templates.md
        if problem is not None:
            raise VerbError(problem)
        request_id = new_request_id() if verb == "retry" else ""
        patch = verb_patch(verb, request_id, flows)
        if args.dry_run:
            stdout.write(json.dumps(patch, separators=(",", ":")) + "\n")
            return 0
        job_flows.patch(name, patch)
    except NotFoundError as err:
        raise VerbError(f'{where} not found in namespace "{namespace}"') from err
    except ForbiddenError as err:
        raise VerbError(f"forbidden: {err.message}") from err
    stdout.write(done_line(verb, name, request_id, flows) + "\n")
    return 0
