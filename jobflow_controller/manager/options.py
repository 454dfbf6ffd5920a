"""Flags of the controller manager, named as Volcano's where it has them, in one table.

The table is grouped as upstream declares its flags: the controller manager's own (Volcano's
options.go), those accepted only so that vc-controller-manager's command lines work, leader
election (component-base), klog's, then ours. A flag's default is its `Options` field's
(config.py), shown by --help; `--kubeconfig` also reads `$KUBECONFIG`.
"""

from __future__ import annotations

import argparse
import sys

from jobflow_controller.manager.config import DEFAULT_LEASE_NAMESPACE, KNOWN_CONTROLLERS, Options
from jobflow_controller.manager.logs import LOG_FORMATS
from jobflow_controller.manager.pflag import (
    BOOL,
    DURATION,
    FLOAT,
    INT,
    MAP_STRING_BOOL,
    STRING,
    STRING_ARRAY,
    STRING_SLICE,
    SWITCH,
    UINT,
    Flag,
    FlagGroup,
    FlagSet,
    add_flag_groups,
)
from jobflow_controller.manager.validation import FlagError, validate

__all__ = ["FLAG_GROUPS", "FlagError", "Options", "build_parser", "parse"]

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
            "'*' enables all; 'name' or '+name' enables, '-name' disables. Names: " + ", ".join(KNOWN_CONTROLLERS),
        ),
        Flag(
            "--max-requeue-num",
            INT,
            "retries of a failing JobFlow before a Warning event drops it; -1 retries forever, 0 never",
        ),
        Flag("--worker-threads", INT, "workers per controller"),
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

ACCEPTED = FlagGroup(
    "accepted for vc-controller-manager compatibility; they configure nothing here",
    (
        Flag(
            "--lock-object-namespace",
            STRING,
            "deprecated: use --leader-elect-resource-namespace (given alone, it sets the Lease's namespace)",
            deprecated=(
                "This flag is deprecated and will be removed in a future release. "
                "Please use --leader-elect-resource-namespace instead."
            ),
        ),
        Flag("--scheduler-name", STRING_ARRAY, "upstream: pods of these schedulers get PodGroups (default volcano)"),
        Flag("--worker-threads-for-podgroup", UINT, "upstream: PodGroup controller workers"),
        Flag("--worker-threads-for-gc", UINT, "upstream: garbage collector workers"),
        Flag("--inherit-owner-annotations", BOOL, "upstream: PodGroups inherit their owner's annotations"),
        Flag(
            "--feature-gates",
            MAP_STRING_BOOL,
            "upstream's feature gates, key=true|false pairs (none affects the JobFlow controllers)",
        ),
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
    ),
)

KLOG = FlagGroup(
    "logging (klog)",
    (
        Flag("--v", INT, "log verbosity (klog levels; >=4 is debug)", short="-v", dest="verbosity"),
        Flag(
            "--log-flush-frequency",
            DURATION,
            "klog's flush interval (accepted; every log line is written at once here)",
        ),
        Flag("--logtostderr", BOOL, "klog's flag (accepted; always)"),
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
        Flag("--log-format", STRING, "key=value text or one JSON object per line", choices=LOG_FORMATS),
    ),
)

#: Every flag of the process, in the order --help lists them.
FLAG_GROUPS = (CONTROLLER_MANAGER, ACCEPTED, LEADER_ELECTION, KLOG, OURS)


def build_parser() -> argparse.ArgumentParser:
    parser = FlagSet(
        prog="jobflow-controller", description=DESCRIPTION, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    add_flag_groups(parser, FLAG_GROUPS, Options())
    return parser


def parse(argv: list[str] | None = None) -> tuple[Options, bool]:
    """Parse and validate argv; returns (options, version_requested). Exits 2 on a bad flag."""
    parser = build_parser()
    values = vars(parser.parse_args(argv))
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
    except FlagError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    return options, version
