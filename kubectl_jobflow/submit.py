"""`kubectl jobflow submit --from=jobflowtemplate/NAME` and `kubectl jobflow templates` (docs/templates.md).

`submit` creates a run of a JobFlowTemplate, as `argo submit --from=workflowtemplate/NAME`: a JobFlow
with `spec.jobFlowTemplateRef` and `spec.params` (from each `-p key=value`), labelled
`flow.volcano.sh/jobflowtemplate: NAME`, named `--name` or, by default, generated from
`<template>-`. It prints the run's name alone on stdout (so `$(kubectl jobflow submit ...)` is the
name). The params are checked against the template first (unknown, repeated, required missing), and
the run's JobFlow with them (its Job names with the run's name), so a run that would be refused or
never run is not created: one line on stderr and exit status 1. `--wait` then waits for the run to
finish: exit status 0 when it Succeeds, 1 when it Fails (its final phase on stderr).

`templates` lists the namespace's templates: their params (a required one marked `*`), their flows'
count, and their runs' count (the label selects them).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

from informers.errors import NotFoundError
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import AlreadyExistsError, ForbiddenError, InvalidError
from jobflow_controller.kube.resources import JOB_FLOW_TEMPLATES, JOB_FLOWS
from jobflow_controller.validation.jobflow import validation_message
from jobflow_controller.validation.jobflowtemplate import run_params_problems

FROM_KINDS: Final = ("jobflowtemplate", "jobflowtemplates", "jft")
#: The suffix the API server appends to a generateName; a stand-in of its length for the name rules.
GENERATED_SUFFIX: Final = "xxxxx"
FINAL_PHASES: Final = ("Succeed", "Failed")


class SubmitError(Exception):
    """Ends the command with exit status 1 and this one line on stderr."""


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    submit = sub.add_parser(
        "submit", parents=[common], help="run a JobFlowTemplate (--from=jobflowtemplate/NAME [-p key=value ...])"
    )
    submit.add_argument("--from", dest="source", required=True, metavar="jobflowtemplate/NAME", help="the template")
    submit.add_argument(
        "-p", "--param", dest="params", action="append", default=[], metavar="KEY=VALUE", help="a param's value"
    )
    names = submit.add_mutually_exclusive_group()
    names.add_argument("--name", help="the run's name (default: generated, <template>-xxxxx)")
    names.add_argument("--generate-name", action="store_true", help="generate the run's name (the default)")
    submit.add_argument("--wait", action="store_true", help="wait until the run Succeeds (exit 0) or Fails (exit 1)")
    submit.add_argument("--timeout", type=float, default=0.0, help="with --wait: give up after SECONDS (0: never)")
    sub.add_parser("templates", parents=[common], help="list the JobFlowTemplates: params, flows, runs")


def template_name(source: str) -> str:
    """NAME of `jobflowtemplate/NAME` (`jft/NAME` and `jobflowtemplates/NAME` too)."""
    kind, slash, name = source.partition("/")
    if not slash or kind.lower() not in FROM_KINDS or not name:
        raise SubmitError(f"--from must be jobflowtemplate/NAME, not {source!r}")
    return name


def parse_params(pairs: Sequence[str]) -> list[dict[str, str]]:
    """`-p key=value` each into `{name, value}`, in order; a pair without `=`, with an empty key, or
    a key given twice is refused (the value may hold `=` and be empty)."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise SubmitError(f"-p must be KEY=VALUE, not {pair[:80]!r}")
        if key in seen:
            raise SubmitError(f"-p {key[:80]} is given more than once")
        seen.add(key)
        out.append({"name": key, "value": value})
    return out


def new_run(template: Any, name: str | None, params: list[dict[str, str]]) -> dict[str, Any]:
    """The run of `template` (named `name`, or generated) with `params`; `SubmitError` if it would be refused."""
    template_name_ = str(template["metadata"]["name"])
    metadata: dict[str, Any] = {"labels": {jft.TEMPLATE_LABEL: template_name_}}
    metadata.update({"name": name} if name else {"generateName": f"{template_name_}-"})
    spec: dict[str, Any] = {jft.REF_FIELD: {"name": template_name_}}
    if params:
        spec[jft.PARAMS_FIELD] = params
    run = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": metadata, "spec": spec}
    problems = run_params_problems(run, template)
    resolved, _ = jft.resolve(template, run)
    if not problems and resolved is not None:
        as_named = name or f"{template_name_}-{GENERATED_SUFFIX}"
        namespace = str(template["metadata"].get("namespace") or "")
        candidate = {"metadata": {"name": as_named, "namespace": namespace}, "spec": resolved}
        message = validation_message(candidate, patches=False, retries=False)
        problems = [message] if message else []
    if problems:
        raise SubmitError(f'jobflow from JobFlowTemplate "{template_name_}" would be refused: {"; ".join(problems)}')
    return run


def run_submit(
    args: argparse.Namespace,
    clientset: Clientset,
    namespace: str,
    stdout: TextIO,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    name = template_name(args.source)
    params = parse_params(args.params)
    try:
        template = clientset.job_flow_templates(namespace).get(name)
    except NotFoundError as err:
        raise SubmitError(f'{JOB_FLOW_TEMPLATES.group_resource} "{name}" not found in namespace "{namespace}"') from err
    run = new_run(template, args.name, params)
    try:
        created = clientset.job_flows(namespace).create(run)
    except AlreadyExistsError as err:
        raise SubmitError(f'{JOB_FLOWS.group_resource} "{args.name}" already exists') from err
    except (ForbiddenError, InvalidError) as err:
        raise SubmitError(err.message) from err
    run_name = str(created["metadata"]["name"])
    stdout.write(f"{run_name}\n")
    stdout.flush()
    if not args.wait:
        return 0
    phase = wait_for_end(clientset, namespace, run_name, args.timeout, sleep)
    print(f"jobflow {run_name} {phase}", file=sys.stderr)
    return 0 if phase == "Succeed" else 1


def wait_for_end(
    clientset: Clientset, namespace: str, name: str, timeout: float, sleep: Callable[[float], None]
) -> str:
    """Poll the run every second until it Succeeds or Fails; `SubmitError` past `timeout` (0: never)."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    while True:
        phase = jf.phase(clientset.job_flows(namespace).get(name))
        if phase in FINAL_PHASES:
            return phase
        if deadline is not None and time.monotonic() > deadline:
            raise SubmitError(f"jobflow {name} is still {phase or 'Pending'} after {timeout:g}s")
        sleep(1.0)


def run_templates(clientset: Clientset, namespace: str, stdout: TextIO) -> int:
    """One line per template: NAME, PARAMS (`name=default`, `name*` when required), FLOWS, RUNS."""
    rows = [("NAME", "PARAMS", "FLOWS", "RUNS")]
    for template in sorted(clientset.job_flow_templates(namespace).list(), key=lambda t: str(t["metadata"]["name"])):
        name = str(template["metadata"]["name"])
        params = ",".join(d.name + ("*" if d.required else f"={d.default}") for d in jft.declarations(template))
        flows = len(jf.raw_flow_list({"spec": jft.template_job_flow_spec(template)}))
        runs = len(clientset.job_flows(namespace).list(label_selector=f"{jft.TEMPLATE_LABEL}={name}"))
        rows.append((name, _cut(params) or "<none>", str(flows), str(runs)))
    if len(rows) == 1:
        stdout.write(f"No JobFlowTemplates in namespace {namespace}.\n")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        stdout.write("   ".join(v.ljust(widths[i]) for i, v in enumerate(row)).rstrip() + "\n")
    return 0


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
