"""Flags of the controller manager, named as Volcano's where it has them, in one table.

The table is grouped as upstream declares its flags: the controller manager's own (Volcano's
options.go), those accepted only so that vc-controller-manager's command lines work (its other
controllers' flags, the sharding controller's included), leader election (component-base),
klog's, then ours. Every flag `vc-controller-manager` v1.15.1 or master accepts is here, with its
type; those marked `ignored` configure nothing in this process and are named in one log line at
start when given. A flag's default is its `Options` field's (config.py), shown by --help;
`--kubeconfig` also reads `$KUBECONFIG`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from jobflow_controller.manager.config import DEFAULT_LEASE_NAMESPACE, Options, known_controllers
from jobflow_controller.manager.logs import LOG_FORMATS
from jobflow_controller.manager.pflag import (
    BOOL,
    DURATION,
    FLOAT,
    INT,
    LEVEL,
    MAP_STRING_BOOL,
    MODULE_SPEC,
    SEVERITY,
    STRING,
    STRING_ARRAY,
    STRING_SLICE,
    SWITCH,
    TRACE_LOCATION,
    UINT,
    UINT64,
    Flag,
    FlagGroup,
    FlagSet,
    Kind,
    add_flag_groups,
    pflag_args,
)
from jobflow_controller.manager.validation import FlagError, OptionError, validate

__all__ = ["FLAG_GROUPS", "FlagError", "Options", "ParsedCommandLine", "build_parser", "parse", "parse_command_line"]

DESCRIPTION = (
    "Runs Volcano's JobFlow and JobTemplate controllers: creates each flow's Job once the flows it "
    "depends on have Completed, keeps every JobFlow's status, and deletes the Jobs of a Succeeded "
    "flow with jobRetainPolicy: delete."
)

CONTROLLER_MANAGER = FlagGroup(
    "controller manager (Volcano's options.go)",
    (
        Flag("--kubeconfig", STRING, "kubeconfig path ($KUBECONFIG); empty: in-cluster", env="KUBECONFIG"),
        Flag("--master", STRING, "API server address; overrides the kubeconfig's server"),
        Flag("--kube-api-qps", FLOAT, "client-side QPS to the API server"),
        Flag("--kube-api-burst", INT, "client-side burst to the API server"),
        Flag(
            "--controllers",
            STRING_SLICE,
            "'*' enables all; 'name' or '+name' enables, '-name' disables. Names: " + ", ".join(known_controllers()),
        ),
        Flag(
            "--max-requeue-num",
            INT,
            "retries of a failing JobFlow before a Warning event drops it; -1 retries forever, 0 never",
        ),
        Flag("--worker-threads", UINT, "workers per controller (0: one, as upstream's JobFlow controllers always run)"),
        Flag("--enable-healthz", BOOL, "serve /healthz, /livez, /readyz"),
        Flag("--healthz-address", STRING, "address of the health endpoints"),
        Flag("--enable-metrics", BOOL, "serve /metrics"),
        Flag("--listen-address", STRING, "address of /metrics"),
        Flag(
            "--tls-cert-file",
            STRING,
            "x509 certificate (PEM) for HTTPS on --healthz-address; needs --tls-private-key-file",
        ),
        Flag("--tls-private-key-file", STRING, "x509 private key (PEM) matching --tls-cert-file"),
        Flag("--ca-cert-file", STRING, "x509 CA certificate (PEM) of the health endpoint's certificate chain"),
        Flag("--version", SWITCH, "print the version and exit"),
    ),
)


def _accepted(name: str, kind: Kind, help: str) -> Flag:
    """A flag of vc-controller-manager that configures nothing here: typed, accepted, ignored."""
    return Flag(name, kind, help, ignored=True)


ACCEPTED = FlagGroup(
    "accepted for vc-controller-manager compatibility; they configure nothing here",
    (
        _accepted(
            "--scheduler-name", STRING_ARRAY, "upstream: pods of these schedulers get PodGroups (default volcano)"
        ),
        _accepted("--worker-threads-for-podgroup", UINT, "upstream: PodGroup controller workers"),
        _accepted("--worker-threads-for-gc", UINT, "upstream: garbage collector workers"),
        _accepted("--worker-threads-for-queue", UINT, "upstream: queue controller workers"),
        _accepted("--worker-threads-for-cronjob", UINT, "upstream: CronJob controller workers"),
        _accepted("--inherit-owner-annotations", BOOL, "upstream: PodGroups inherit their owner's annotations"),
        _accepted(
            "--feature-gates",
            MAP_STRING_BOOL,
            "upstream's feature gates, key=true|false pairs (none affects the JobFlow controllers)",
        ),
        _accepted("--scheduler-configs", STRING_SLICE, "upstream's sharding controller: deprecated scheduler shards"),
        _accepted("--shard-sync-period", DURATION, "upstream's sharding controller: shard synchronization period"),
        _accepted("--enable-node-event-trigger", BOOL, "upstream's sharding controller: node events update shards"),
        _accepted("--sharding-configmap", STRING, "upstream's sharding controller: its ConfigMap"),
        _accepted("--sharding-configmap-namespace", STRING, "upstream's sharding controller: its namespace"),
    ),
)

LEADER_ELECTION = FlagGroup(
    "leader election (component-base)",
    (
        Flag("--leader-elect", BOOL, "elect a leader among replicas before running the controllers"),
        Flag(
            "--leader-elect-lease-duration", DURATION, "how long non-leaders wait before taking over an unrenewed lease"
        ),
        Flag("--leader-elect-renew-deadline", DURATION, "how long the leader tries to renew before giving up"),
        Flag("--leader-elect-retry-period", DURATION, "interval between acquire and renew attempts"),
        Flag("--leader-elect-resource-lock", STRING, "lock object type", choices=("leases",)),
        Flag("--leader-elect-resource-name", STRING, "name of the Lease"),
        Flag("--leader-elect-resource-namespace", STRING, "namespace of the Lease"),
        Flag(
            "--lock-object-namespace",
            STRING,
            "deprecated: use --leader-elect-resource-namespace (given alone, it sets the Lease's namespace)",
            deprecated=(
                "This flag is deprecated and will be removed in a future release. "
                "Please use --leader-elect-resource-namespace instead."
            ),
        ),
    ),
)

KLOG = FlagGroup(
    "logging (klog; `_` and `-` alike in every flag's name, as upstream)",
    (
        Flag("--v", LEVEL, "log verbosity (klog levels; >=4 is debug)", short="-v", dest="verbosity"),
        _accepted(
            "--log-flush-frequency",
            DURATION,
            "klog's flush interval (accepted; every log line is written at once here)",
        ),
        _accepted("--logtostderr", BOOL, "klog's flag (accepted; always)"),
        _accepted("--alsologtostderr", BOOL, "klog's (accepted; logs go to stderr only)"),
        _accepted("--log-dir", STRING, "klog's (accepted; no log files here)"),
        _accepted("--log-file", STRING, "klog's (accepted; no log files here)"),
        _accepted("--log-file-max-size", UINT64, "klog's, in MB (accepted; no log files here)"),
        _accepted("--add-dir-header", BOOL, "klog's header option (accepted; see --log-format)"),
        _accepted("--skip-headers", BOOL, "klog's header option (accepted; see --log-format)"),
        _accepted("--skip-log-headers", BOOL, "klog's header option (accepted; see --log-format)"),
        _accepted("--one-output", BOOL, "klog's (accepted; no log files here)"),
        _accepted("--stderrthreshold", SEVERITY, "klog's, INFO|WARNING|ERROR|FATAL or 0-3 (accepted; all to stderr)"),
        _accepted("--alsologtostderrthreshold", SEVERITY, "klog's (accepted; all to stderr)"),
        _accepted("--legacy-stderr-threshold-behavior", BOOL, "klog's (accepted; all to stderr)"),
        _accepted("--vmodule", MODULE_SPEC, "klog's per-file verbosity, pattern=N,... (accepted; see --v)"),
        _accepted("--log-backtrace-at", TRACE_LOCATION, "klog's file.go:N stack trace (accepted; Go files only)"),
    ),
)

OURS = FlagGroup(
    "ours (docs/operations.md)",
    (
        Flag(
            "--resync-period",
            DURATION,
            "every unfinished JobFlow is synced again at least this often, even without an event, so a "
            "request dropped after --max-requeue-num or lost to an outage cannot strand it; 0 turns it off",
        ),
        Flag(
            "--status-write-interval",
            DURATION,
            "ours: a JobFlow status change that does not finish it is written at most this long after it "
            "is seen, together with the changes that follow; Succeed and Failed at once; 0 writes every "
            "change as soon as --status-write-qps allows",
        ),
        Flag(
            "--status-write-qps",
            FLOAT,
            "ours: status writes per second, shared by all JobFlows, for changes that do not finish a "
            "JobFlow; a JobFlow waiting for its turn has every change since written together",
        ),
        Flag(
            "--status-write-burst",
            INT,
            "ours: how many such status writes may go at once before --status-write-qps paces them",
        ),
        Flag(
            "--probe-allow-loopback",
            BOOL,
            "ours: let dependsOn.probe check pods whose IP is a loopback address (refused by default); only "
            "for a local control plane whose simulated pods run on 127.0.0.1",
        ),
        Flag("--graceful-shutdown-timeout", DURATION, "on SIGTERM, how long the workers may finish queued work"),
        Flag(
            "--shards",
            INT,
            "split JobFlows over this many shards by an FNV-1a hash of their namespace; each replica runs "
            "the shards whose Lease <--leader-elect-resource-name>-shard-<i> it holds; 0 turns sharding off",
        ),
        Flag(
            "--shard-index",
            INT,
            "the shard this replica campaigns for first (the others only after one lease duration); "
            "default: the ordinal at the end of $POD_NAME or the hostname, as a StatefulSet names pods",
        ),
        Flag("--enable-webhook", BOOL, "serve the JobFlow validating webhook at /jobflows/validate"),
        Flag("--webhook-address", STRING, "address of the webhook (TLS)"),
        Flag("--webhook-tls-cert-file", STRING, "webhook serving certificate (PEM)"),
        Flag("--webhook-tls-private-key-file", STRING, "webhook serving key (PEM)"),
        Flag(
            "--jobflow-patch-allowed-fields",
            STRING_SLICE,
            "the Job spec fields a flow's patch.jobSpec may set, as dotted paths below jobSpec (each with "
            "everything under it), e.g. tasks.replicas,tasks.template.spec.containers.resources; a patch "
            "setting another gets InvalidPatch and no Job, and the webhook refuses it; empty: every "
            "field; none: no field (docs/patch.md)",
        ),
        Flag(
            "--trigger-address",
            STRING,
            "serve POST /triggers/<namespace>/<name> for http JobFlowTriggers on this address (TLS, needs "
            "--trigger-tls-cert-file and --trigger-tls-private-key-file); empty: off (docs/triggers.md)",
        ),
        Flag("--trigger-tls-cert-file", STRING, "the trigger endpoint's serving certificate (PEM)"),
        Flag("--trigger-tls-private-key-file", STRING, "the trigger endpoint's serving key (PEM)"),
        Flag(
            "--trigger-watch-kinds",
            STRING_SLICE,
            "the kinds resource JobFlowTriggers may watch, as apiVersion/kind (v1/ConfigMap,apps/v1/Deployment); "
            "the controller needs get, list and watch on them; a trigger naming another gets TriggerFailed",
        ),
        Flag("--log-format", STRING, "key=value text or one JSON object per line", choices=LOG_FORMATS),
    ),
)

#: Every flag of the process, in the order --help lists them.
FLAG_GROUPS = (CONTROLLER_MANAGER, ACCEPTED, LEADER_ELECTION, KLOG, OURS)


@dataclass
class ParsedCommandLine:
    options: Options
    #: --version was given.
    version: bool
    #: The flags given that configure nothing here (`ignored` in the table), as named there.
    ignored_flags: list[str]
    #: Arguments that are no flag (the `2>&1` of Volcano's chart), ignored as upstream ignores them.
    ignored_args: list[str]


def build_parser() -> argparse.ArgumentParser:
    parser = FlagSet(
        prog="jobflow-controller",
        description=DESCRIPTION,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        allow_abbrev=False,  # pflag has no abbreviations: --max-requeue is unknown
    )
    add_flag_groups(parser, FLAG_GROUPS, Options())
    return parser


def parse(argv: Sequence[str] | None = None) -> tuple[Options, bool]:
    """Parse and validate argv; returns (options, version_requested). Exits 2 on a bad flag."""
    parsed = parse_command_line(sys.argv[1:] if argv is None else argv)
    return parsed.options, parsed.version


def parse_command_line(argv: Sequence[str]) -> ParsedCommandLine:
    """Parse and validate argv as pflag would: exits 2 on a bad flag, 1 where upstream's
    CheckOptionOrDie refuses one (a controller named twice in --controllers)."""
    parser = build_parser()
    line = pflag_args(argv, FLAG_GROUPS, parser.error)
    values = vars(parser.parse_args(line.tokens))
    version = bool(values.pop("version"))
    for flag in (f for group in FLAG_GROUPS for f in group.flags if f.deprecated):
        if values[flag.field] is not None:
            print(f"Flag {flag.name} has been deprecated, {flag.deprecated}", file=sys.stderr)
    # A repeated flag never given is None: its field keeps its own default.
    options = Options(**{name: value for name, value in values.items() if value is not None})
    if options.lock_object_namespace is not None and options.leader_elect_resource_namespace == DEFAULT_LEASE_NAMESPACE:
        options.leader_elect_resource_namespace = options.lock_object_namespace
    try:
        validate(options)
    except OptionError as err:
        print(err, file=sys.stderr)  # as upstream's main: the message alone, exit 1
        raise SystemExit(1) from None
    except FlagError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    ignored = [flag.name for group in FLAG_GROUPS for flag in group.flags if flag.ignored and flag.name in line.given]
    return ParsedCommandLine(options, version, ignored, line.positional)
