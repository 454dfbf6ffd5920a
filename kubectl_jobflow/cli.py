"""`kubectl jobflow`: look at a JobFlow's DAG, and control its lifecycle.

    kubectl jobflow tree NAME [-n NAMESPACE] [--watch [--interval SECONDS]] [--color auto|always|never]
    kubectl jobflow dot NAME [-n NAMESPACE] | dot -Tsvg > flow.svg
    kubectl jobflow suspend|resume|stop|terminate NAME [-n NAMESPACE] [--dry-run]
    kubectl jobflow retry NAME [--flow FLOW]... [-n NAMESPACE] [--dry-run]
    kubectl jobflow create --from=cronjobflow/NAME [JOBFLOW] [-n NAMESPACE] [--dry-run]
    kubectl jobflow results NAME [-n NAMESPACE] [-o json]
    kubectl jobflow submit --from=jobflowtemplate/NAME [-p key=value ...] [--name N | --generate-name] [--wait]
    kubectl jobflow templates [-n NAMESPACE]

The verbs are `verbs`'s (docs/lifecycle.md).

kubectl runs the executable `kubectl-jobflow` found on PATH with the arguments after `jobflow`,
and resolves nothing for it, so the plugin reads `--kubeconfig`, `--context` and `-n/--namespace`
itself, by kubectl's rules (`kube.config.build_client_config`). As with every plugin, kubectl's
own flags go after the plugin's name: `kubectl jobflow tree NAME -n ns`, not `kubectl -n ns jobflow`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

import urllib3

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller import __version__
from jobflow_controller.apis import meta
from jobflow_controller.apis.constants import CREATED_BY_JOB_FLOW
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import ConfigError, build_client_config
from jobflow_controller.kube.resources import JOB_FLOWS
from jobflow_controller.kube.rest import RestClient, default_user_agent
from kubectl_jobflow import create as create_command
from kubectl_jobflow import results as results_command
from kubectl_jobflow import submit as submit_command
from kubectl_jobflow import triggers as triggers_command
from kubectl_jobflow.dot import render_dot
from kubectl_jobflow.render import branches_for, render_tree, use_color
from kubectl_jobflow.ui import command as ui_command
from kubectl_jobflow.verbs import VERBS, VerbError, add_verb_parsers, run_verb
from kubectl_jobflow.view import FlowView, build_view

PROG = "kubectl jobflow"
#: What can go wrong talking to the server, besides an API status: DNS, refused, TLS, timeouts.
TRANSPORT_ERRORS = (ConnectionError, OSError, urllib3.exceptions.HTTPError)
#: Clears the screen and homes the cursor before each redraw of `--watch` on a terminal.
CLEAR = "\x1b[H\x1b[2J"


EXAMPLES = """examples:
  kubectl jobflow tree ml-pipeline -n default      the flows as a tree: phase, duration, restarts
  kubectl jobflow tree ml-pipeline --watch         redrawn as it changes, until Ctrl-C
  kubectl jobflow dot ml-pipeline | dot -Tsvg > ml-pipeline.svg
  kubectl jobflow suspend ml-pipeline              no new Job until `kubectl jobflow resume ml-pipeline`
  kubectl jobflow retry ml-pipeline --flow model-evaluation   re-run a failed step and what follows it
  kubectl jobflow ui -A                            a live web view of every JobFlow, on 127.0.0.1
  kubectl jobflow create --from=cronjobflow/nightly-etl   run a CronJobFlow's JobFlow now
  kubectl jobflow results ml-pipeline -o json      every Job's results and the JobFlow's own
  kubectl jobflow submit --from=jobflowtemplate/etl -p dataset=d1 --wait   run a JobFlowTemplate
  kubectl jobflow templates                        the JobFlowTemplates, their params and runs
  kubectl jobflow triggers -A                      every JobFlowTrigger and the runs it fired
"""


class PluginError(Exception):
    """Ends the command with exit status 1 and this one line on stderr."""


def _parser() -> argparse.ArgumentParser:
    # kubectl's connection flags are accepted before and after the subcommand; SUPPRESS keeps a
    # subcommand's parser from resetting a value given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--kubeconfig", default=argparse.SUPPRESS, help="path to the kubeconfig file")
    common.add_argument("--context", default=argparse.SUPPRESS, help="the kubeconfig context to use")
    common.add_argument(
        "-n", "--namespace", default=argparse.SUPPRESS, help="the JobFlow's namespace (default: the context's)"
    )
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Show a JobFlow's DAG of Jobs; suspend, resume, stop, terminate or re-run it.",
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES,
    )
    parser.add_argument("--version", action="version", version=f"kubectl-jobflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    tree = sub.add_parser(
        "tree", parents=[common], help="the flows as an indented tree with phase, duration and restarts"
    )
    tree.add_argument("name", metavar="NAME", help="the JobFlow")
    tree.add_argument("-w", "--watch", action="store_true", help="redraw whenever it changes, until Ctrl-C")
    tree.add_argument("--interval", type=_seconds, default=1.0, help="seconds between polls with --watch (1)")
    tree.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the phases: auto (on a terminal, unless NO_COLOR is set), always, never",
    )
    dot = sub.add_parser("dot", parents=[common], help="the DAG in Graphviz DOT, for `dot -Tsvg`")
    dot.add_argument("name", metavar="NAME", help="the JobFlow")
    add_verb_parsers(sub, common)
    create_command.add_parser(sub, common)
    results_command.add_parser(sub, common)
    submit_command.add_parsers(sub, common)
    triggers_command.add_parser(sub, common)
    ui_command.add_parser(sub, common)
    return parser


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


class FlowSource:
    """Reads one JobFlow and the Jobs it controls, and builds its view."""

    def __init__(self, clientset: Clientset, namespace: str, name: str) -> None:
        self.clientset = clientset
        self.namespace = namespace
        self.name = name

    def read(self, now: datetime.datetime | None = None) -> FlowView:
        try:
            job_flow = self.clientset.job_flows(self.namespace).get(self.name)
        except NotFoundError as err:
            raise PluginError(
                f'{JOB_FLOWS.group_resource} "{self.name}" not found in namespace "{self.namespace}"'
            ) from err
        jobs = self.clientset.jobs(self.namespace).list(label_selector=self._selector())
        return build_view(job_flow, jobs, now or datetime.datetime.now(datetime.UTC))

    def _selector(self) -> str | None:
        """The createdBy label the controller puts on the Jobs; a value too long for a label
        (namespace plus name over 63 characters) cannot have been set, so then list them all."""
        value = meta.generate_object_string(self.namespace, self.name)
        return f"{CREATED_BY_JOB_FLOW}={value}" if len(value) <= 63 else None


def watch(
    frame: Callable[[], str],
    write: Callable[[str], None],
    interval: float,
    sleep: Callable[[float], None] = time.sleep,
    polls: int | None = None,
) -> None:
    """Draw `frame()` and again whenever it differs, polling every `interval` seconds, until
    KeyboardInterrupt (or `polls` rounds, for tests). A failed read after the first one is drawn
    as the error beneath the last good picture and retried: a watch outlives a server restart."""
    last_good = frame()
    write(last_good)
    shown = last_good
    count = 1
    while polls is None or count < polls:
        sleep(interval)
        count += 1
        try:
            current = last_good = frame()
        except (PluginError, ApiStatusError, *TRANSPORT_ERRORS) as err:
            current = f"{last_good}\nerror: {_one_line(err)} (retrying)\n"
        if current != shown:
            write(current)
            shown = current


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def run(args: argparse.Namespace, stdout: TextIO) -> int:
    if args.command == "ui":
        return ui_command.run(args, stdout)
    configuration, default_namespace = build_client_config(
        getattr(args, "kubeconfig", None), getattr(args, "context", None)
    )
    namespace = getattr(args, "namespace", None) or default_namespace
    # One try per request (urllib3 would retry a refused connection three times): an error is
    # reported at once, and --watch polls again anyway.
    configuration.retries = False
    rest = RestClient(configuration, user_agent=default_user_agent("kubectl-jobflow"))
    try:
        if args.command in VERBS:
            return run_verb(args, Clientset(rest), namespace, stdout)
        if args.command == "create":
            return create_command.run_create(args, Clientset(rest), namespace, stdout)
        if args.command == "submit":
            return submit_command.run_submit(args, Clientset(rest), namespace, stdout)
        if args.command == "templates":
            return submit_command.run_templates(Clientset(rest), namespace, stdout)
        if args.command == "results":
            return results_command.run_results(args, Clientset(rest), namespace, stdout)
        if args.command == "triggers":
            return triggers_command.run_triggers(args, Clientset(rest), namespace, stdout)
        source = FlowSource(Clientset(rest), namespace, args.name)
        if args.command == "dot":
            stdout.write(render_dot(source.read()))
            return 0
        color = use_color(stdout, args.color)
        branches = branches_for(stdout)

        def frame() -> str:
            return render_tree(source.read(), color=color, branches=branches)

        if not args.watch:
            stdout.write(frame())
            return 0
        tty = bool(getattr(stdout, "isatty", None) and stdout.isatty())

        def write(text: str) -> None:
            stdout.write((CLEAR + text) if tty else text + "\n")
            stdout.flush()

        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a watch ends
            watch(frame, write, args.interval)
        return 0
    finally:
        rest.close()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args, sys.stdout)
    except (
        PluginError,
        ConfigError,
        VerbError,
        create_command.CreateError,
        results_command.ResultsError,
        submit_command.SubmitError,
    ) as err:
        return _fail(str(err))
    except ApiStatusError as err:
        return _fail(f"the server answered {err}")
    except BrokenPipeError:
        # `kubectl jobflow tree x | head -1`: the reader left; stay quiet, as other CLIs do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except TRANSPORT_ERRORS as err:
        return _fail(f"cannot reach the API server: {_one_line(err)}")
    except KeyboardInterrupt:
        return 130


def _fail(message: str) -> int:
    print(f"error: {_one_line(Exception(message))}", file=sys.stderr)
    return 1
