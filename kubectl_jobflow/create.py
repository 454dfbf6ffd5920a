"""`kubectl jobflow create --from=cronjobflow/NAME [JOBFLOW]`: run a CronJobFlow's template now.

As `kubectl create job NAME --from=cronjob/CJ`: the JobFlow is the CronJobFlow's `jobFlowTemplate`
(its labels, annotations and spec), annotated `flow.volcano.sh/created-by-manual-trigger: "true"`
and controlled by the CronJobFlow (so its history limits and garbage collection cover it; the
controller reports it with `UnexpectedJob` while it runs, as CronJob's does for a manual Job). The
name defaults to `<cronjobflow>-manual-<5 random characters>`. Prints `jobflow.flow.volcano.sh/<name>
created`, or with `--dry-run` the JobFlow as JSON without creating it. The JobFlow is built by
`apis.cronjobflow.manual_job_flow`, the same builder the controller's runs come from.

The run is checked with the JobFlow rules before it is created (`job_flow_admission_problems`, the
function that checks a scheduled run's name at admission), so no manual run makes a Job name
`<run>-<flow>` over 63 characters: a default name too long for them is shortened to
`<cronjobflow>-m<7 random characters>`, as long as a scheduled run's `<cronjobflow>-<8 digits>`
(which admission bounded); a given name that breaks a rule is refused with the rule's message.
"""

from __future__ import annotations

import argparse
import json
import secrets
import string
from typing import Any, Final, TextIO

from informers.errors import NotFoundError
from jobflow_controller.apis.cronjobflow import manual_job_flow
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import AlreadyExistsError, ForbiddenError, InvalidError
from jobflow_controller.kube.resources import CRON_JOB_FLOWS, JOB_FLOWS
from jobflow_controller.validation.admission import job_flow_admission_problems

_ALPHABET: Final = string.ascii_lowercase + string.digits


class CreateError(Exception):
    """Ends the command with exit status 1 and this one line on stderr."""


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    create = sub.add_parser(
        "create",
        parents=[common],
        help="start a JobFlow now from a CronJobFlow's template (--from=cronjobflow/NAME)",
    )
    create.add_argument("name", metavar="JOBFLOW", nargs="?", help="the new JobFlow (default: <NAME>-manual-xxxxx)")
    create.add_argument("--from", dest="source", required=True, metavar="cronjobflow/NAME", help="the CronJobFlow")
    create.add_argument("--dry-run", action="store_true", help="print the JobFlow instead of creating it")


def source_name(source: str) -> str:
    """NAME of `cronjobflow/NAME` (`cjf/NAME` and `cronjobflows/NAME` too, as kubectl's resource names)."""
    kind, slash, name = source.partition("/")
    if not slash or kind.lower() not in ("cronjobflow", "cronjobflows", "cjf") or not name:
        raise CreateError(f"--from must be cronjobflow/NAME, not {source!r}")
    return name


def _random(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def default_name(cron_job_flow_name: str) -> str:
    return f"{cron_job_flow_name}-manual-{_random(5)}"


def short_name(cron_job_flow_name: str) -> str:
    """A default name as long as a scheduled run's `<name>-<8 digits>`; the `m` keeps it from ever
    being one."""
    return f"{cron_job_flow_name}-m{_random(7)}"


def manual_run(cron_job_flow: Any, cron_name: str, given: str | None) -> dict[str, Any]:
    """The manual run named `given`, or by default; `CreateError` when the JobFlow rules refuse it."""
    candidates = [given] if given else [default_name(cron_name), short_name(cron_name)]
    problems: list[str] = []
    for name in candidates:
        job_flow = manual_job_flow(cron_job_flow, name)
        problems = job_flow_admission_problems(job_flow)
        if not problems:
            return job_flow
    raise CreateError(f'jobflow "{candidates[-1]}" would be refused: {"; ".join(problems)}')


def run_create(args: argparse.Namespace, clientset: Clientset, namespace: str, stdout: TextIO) -> int:
    """Read the CronJobFlow, build the JobFlow, create it (or print it with `--dry-run`)."""
    cron_name = source_name(args.source)
    try:
        cron_job_flow = clientset.cron_job_flows(namespace).get(cron_name)
    except NotFoundError as err:
        where = f'{CRON_JOB_FLOWS.group_resource} "{cron_name}"'
        raise CreateError(f'{where} not found in namespace "{namespace}"') from err
    job_flow = manual_run(cron_job_flow, cron_name, args.name)
    name = job_flow["metadata"]["name"]
    if args.dry_run:
        stdout.write(json.dumps(job_flow, indent=2) + "\n")
        return 0
    try:
        clientset.job_flows(namespace).create(job_flow)
    except AlreadyExistsError as err:
        raise CreateError(f'{JOB_FLOWS.group_resource} "{name}" already exists') from err
    except (ForbiddenError, InvalidError) as err:
        raise CreateError(err.message) from err
    stdout.write(f"jobflow.flow.volcano.sh/{name} created\n")
    return 0
