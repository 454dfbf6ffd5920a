"""Flags of the controller manager, named and defaulted as Volcano's (options.go) where it has them.

Durations take Go's syntax (`15s`, `1m30s`), booleans Go's (`--leader-elect=false`), and a bad value
exits 2 with one line naming the flag, as pflag does. `--kubeconfig` also reads `$KUBECONFIG`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from jobflow_controller.apis.timeutil import parse_duration

JOBFLOW_CONTROLLER = "jobflow-controller"
JOBTEMPLATE_CONTROLLER = "jobtemplate-controller"
KNOWN_CONTROLLERS = (JOBFLOW_CONTROLLER, JOBTEMPLATE_CONTROLLER)
#: Volcano's other controllers: their names are valid in --controllers (so a command line written
#: for vc-controller-manager, whose default is `*,-sharding-controller`, works here), but this
#: process runs none of them.
OTHER_VOLCANO_CONTROLLERS = (
    "gc-controller",
    "job-controller",
    "pg-controller",
    "queue-controller",
    "cronjob-controller",
    "hypernode-controller",
    "sharding-controller",
)
#: Upstream's default for --controllers.
DEFAULT_CONTROLLERS = "*,-sharding-controller"
DEPRECATED_LOCK_OBJECT_NAMESPACE = (
    "Flag --lock-object-namespace has been deprecated, This flag is deprecated and will be removed in a future "
    "release. Please use --leader-elect-resource-namespace instead."
)


@dataclass
class Options:
    kubeconfig: str | None = None
    master: str | None = None
    kube_api_qps: float = 50.0
    kube_api_burst: int = 100
    max_requeue_num: int = 15
    worker_threads: int = 3
    controllers: list[str] = field(default_factory=lambda: DEFAULT_CONTROLLERS.split(","))
    enable_healthz: bool = False
    healthz_address: str = ":11251"
    enable_metrics: bool = False
    listen_address: str = ":8081"
    leader_elect: bool = True
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    leader_elect_resource_lock: str = "leases"
    leader_elect_resource_name: str = "jobflow-controller"
    leader_elect_resource_namespace: str = "volcano-system"
    graceful_shutdown_timeout: float = 30.0
    #: Ours: every unfinished JobFlow is synced again at least this often (0: never, as upstream).
    resync_period: float = 30.0
    #: Ours: split JobFlows by namespace over this many shards, one Lease each (0: off, as upstream).
    shards: int = 0
    #: Ours: the shard this replica campaigns for first (None: the pod name's StatefulSet ordinal).
    shard_index: int | None = None
    #: Ours (docs/performance.md): at most this long between a status change and its write; 0 writes
    #: every change as soon as the status bucket below has a token for it.
    status_write_interval: float = 0.0
    #: Ours (docs/performance.md): the bucket of status writes that do not finish a JobFlow.
    status_write_qps: float = 10.0
    status_write_burst: int = 100
    log_format: str = "text"
    verbosity: int = 0
    enable_webhook: bool = False
    webhook_address: str = ":8443"
    webhook_tls_cert_file: str | None = None
    webhook_tls_private_key_file: str | None = None
    #: Upstream's meaning: the healthz endpoint's TLS certificate, key and CA (HTTPS when set).
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    ca_cert_file: str | None = None
    # Upstream's flags that configure Volcano's other controllers or its klog set-up: accepted with
    # upstream's defaults so that vc-controller-manager's command lines work unchanged; unused here.
    lock_object_namespace: str | None = None
    scheduler_name: list[str] = field(default_factory=lambda: ["volcano"])
    worker_threads_for_podgroup: int = 5
    worker_threads_for_gc: int = 1
    inherit_owner_annotations: bool = True
    feature_gates: dict[str, bool] = field(default_factory=dict)
    log_flush_frequency: float = 5.0
    logtostderr: bool = True


class FlagError(Exception):
    """A flag value that cannot be used; str() is the one line printed before exiting 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _bool(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise ValueError(f"strconv.ParseBool: parsing {value!r}: invalid syntax")


def _duration(value: str) -> float:
    return parse_duration(value)


def _typed(kind: str, convert: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(value: str) -> Any:
        try:
            return convert(value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"invalid {kind} value {value!r}: {err}") from None

    parse.__name__ = kind
    return parse


def _feature_gates(value: str) -> dict[str, bool]:
    """component-base's mapStringBool: `Gate=true,Other=false`."""
    gates: dict[str, bool] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"missing bool value for {item}")
        gates[key.strip()] = _bool(raw.strip())
    return gates


def _uint(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def build_parser() -> argparse.ArgumentParser:
    d = Options()
    p = _Parser(
        prog="jobflow-controller",
        description=(
            "Runs Volcano's JobFlow and JobTemplate controllers: creates each flow's Job once the flows it "
            "depends on have Completed, keeps every JobFlow's status, and deletes the Jobs of a Succeeded "
            "flow with jobRetainPolicy: delete."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    flag = p.add_argument
    b = _typed("bool", _bool)
    dur = _typed("duration", _duration)
    g = p.add_argument_group("client")
    g.add_argument(
        "--kubeconfig",
        default=os.environ.get("KUBECONFIG") or None,
        help="kubeconfig path ($KUBECONFIG); empty: in-cluster",
    )
    g.add_argument("--master", default=None, help="API server address; overrides the kubeconfig's server")
    g.add_argument(
        "--kube-api-qps", type=_typed("float", float), default=d.kube_api_qps, help="client-side QPS to the API server"
    )
    g.add_argument(
        "--kube-api-burst",
        type=_typed("int", int),
        default=d.kube_api_burst,
        help="client-side burst to the API server",
    )
    g = p.add_argument_group("controllers")
    g.add_argument(
        "--controllers",
        default=DEFAULT_CONTROLLERS,
        help="'*' enables all; 'name' or '+name' enables, '-name' disables. Names: " + ", ".join(KNOWN_CONTROLLERS),
    )
    g.add_argument(
        "--max-requeue-num",
        type=_typed("int", int),
        default=d.max_requeue_num,
        help="retries of a failing JobFlow before a Warning event drops it; -1 retries forever, 0 never",
    )
    g.add_argument("--worker-threads", type=_typed("int", int), default=d.worker_threads, help="workers per controller")
    g.add_argument(
        "--resync-period",
        type=dur,
        default=d.resync_period,
        help=(
            "every unfinished JobFlow is synced again at least this often, even without an event, so a "
            "request dropped after --max-requeue-num or lost to an outage cannot strand it; 0 turns it off"
        ),
    )
    g.add_argument(
        "--status-write-interval",
        type=dur,
        default=d.status_write_interval,
        help=(
            "ours: a JobFlow status change that does not finish it is written at most this long after it "
            "is seen, together with the changes that follow; Succeed and Failed at once; 0 writes every "
            "change as soon as --status-write-qps allows"
        ),
    )
    g.add_argument(
        "--status-write-qps",
        type=_typed("float", float),
        default=d.status_write_qps,
        help=(
            "ours: status writes per second, shared by all JobFlows, for changes that do not finish a "
            "JobFlow; a JobFlow waiting for its turn has every change since written together"
        ),
    )
    g.add_argument(
        "--status-write-burst",
        type=_typed("int", int),
        default=d.status_write_burst,
        help="ours: how many such status writes may go at once before --status-write-qps paces them",
    )
    g.add_argument(
        "--graceful-shutdown-timeout",
        type=dur,
        default=d.graceful_shutdown_timeout,
        help="on SIGTERM, how long the workers may finish queued work",
    )
    g = p.add_argument_group("sharding (ours; docs/operations.md)")
    g.add_argument(
        "--shards",
        type=_typed("int", int),
        default=d.shards,
        help=(
            "split JobFlows over this many shards by an FNV-1a hash of their namespace; each replica runs "
            "the shards whose Lease <--leader-elect-resource-name>-shard-<i> it holds; 0 turns sharding off"
        ),
    )
    g.add_argument(
        "--shard-index",
        type=_typed("int", int),
        default=None,
        help=(
            "the shard this replica campaigns for first (the others only after one lease duration); "
            "default: the ordinal at the end of $POD_NAME or the hostname, as a StatefulSet names pods"
        ),
    )
    g = p.add_argument_group("health and metrics")
    g.add_argument(
        "--enable-healthz",
        type=b,
        nargs="?",
        const=True,
        default=d.enable_healthz,
        help="serve /healthz, /livez, /readyz",
    )
    g.add_argument("--healthz-address", default=d.healthz_address, help="address of the health endpoints")
    g.add_argument("--enable-metrics", type=b, nargs="?", const=True, default=d.enable_metrics, help="serve /metrics")
    g.add_argument("--listen-address", default=d.listen_address, help="address of /metrics")
    g = p.add_argument_group("leader election")
    g.add_argument(
        "--leader-elect",
        type=b,
        nargs="?",
        const=True,
        default=d.leader_elect,
        help="elect a leader among replicas before running the controllers",
    )
    g.add_argument(
        "--leader-elect-lease-duration",
        type=dur,
        default=d.leader_elect_lease_duration,
        help="how long non-leaders wait before taking over an unrenewed lease",
    )
    g.add_argument(
        "--leader-elect-renew-deadline",
        type=dur,
        default=d.leader_elect_renew_deadline,
        help="how long the leader tries to renew before giving up",
    )
    g.add_argument(
        "--leader-elect-retry-period",
        type=dur,
        default=d.leader_elect_retry_period,
        help="interval between acquire and renew attempts",
    )
    g.add_argument(
        "--leader-elect-resource-lock",
        default=d.leader_elect_resource_lock,
        choices=["leases"],
        help="lock object type",
    )
    g.add_argument("--leader-elect-resource-name", default=d.leader_elect_resource_name, help="name of the Lease")
    g.add_argument(
        "--leader-elect-resource-namespace", default=d.leader_elect_resource_namespace, help="namespace of the Lease"
    )
    g = p.add_argument_group("admission webhook")
    g.add_argument(
        "--enable-webhook",
        type=b,
        nargs="?",
        const=True,
        default=d.enable_webhook,
        help="serve the JobFlow validating webhook at /jobflows/validate",
    )
    g.add_argument("--webhook-address", default=d.webhook_address, help="address of the webhook (TLS)")
    g.add_argument("--webhook-tls-cert-file", default=None, help="webhook serving certificate (PEM)")
    g.add_argument("--webhook-tls-private-key-file", default=None, help="webhook serving key (PEM)")
    g = p.add_argument_group("logging")
    g.add_argument(
        "--log-format",
        default=d.log_format,
        choices=["text", "json"],
        help="key=value text or one JSON object per line",
    )
    g.add_argument(
        "-v",
        "--v",
        dest="verbosity",
        type=_typed("int", int),
        default=d.verbosity,
        help="log verbosity (klog levels; >=4 is debug)",
    )
    g.add_argument(
        "--log-flush-frequency",
        type=dur,
        default=d.log_flush_frequency,
        help="klog's flush interval (accepted; every log line is written at once here)",
    )
    g.add_argument(
        "--logtostderr", type=b, nargs="?", const=True, default=d.logtostderr, help="klog's flag (accepted; always)"
    )
    g.add_argument("--version", action="store_true", help="print the version and exit")
    g = p.add_argument_group("health endpoint TLS (upstream's flags)")
    g.add_argument(
        "--tls-cert-file",
        default=None,
        help="x509 certificate (PEM) for HTTPS on --healthz-address; needs --tls-private-key-file",
    )
    g.add_argument("--tls-private-key-file", default=None, help="x509 private key (PEM) matching --tls-cert-file")
    g.add_argument(
        "--ca-cert-file", default=None, help="x509 CA certificate (PEM) of the health endpoint's certificate chain"
    )
    g = p.add_argument_group("accepted for vc-controller-manager compatibility; they configure nothing here")
    g.add_argument(
        "--lock-object-namespace",
        default=None,
        help="deprecated: use --leader-elect-resource-namespace (given alone, it sets the Lease's namespace)",
    )
    g.add_argument(
        "--scheduler-name",
        action="append",
        default=None,
        help="upstream: pods of these schedulers get PodGroups (default volcano)",
    )
    g.add_argument(
        "--worker-threads-for-podgroup",
        type=_typed("uint", _uint),
        default=d.worker_threads_for_podgroup,
        help="upstream: PodGroup controller workers",
    )
    g.add_argument(
        "--worker-threads-for-gc",
        type=_typed("uint", _uint),
        default=d.worker_threads_for_gc,
        help="upstream: garbage collector workers",
    )
    g.add_argument(
        "--inherit-owner-annotations",
        type=b,
        nargs="?",
        const=True,
        default=d.inherit_owner_annotations,
        help="upstream: PodGroups inherit their owner's annotations",
    )
    g.add_argument(
        "--feature-gates",
        type=_typed("mapStringBool", _feature_gates),
        default={},
        help="upstream's feature gates, key=true|false pairs (none affects the JobFlow controllers)",
    )
    del flag
    return p


def check_controllers(controllers: list[str]) -> None:
    """Upstream's checkControllers: a name may appear once, whatever its prefix; unknown names fail."""
    seen: set[str] = set()
    for entry in controllers:
        name = entry.lstrip("+-")
        if entry == "*":
            continue
        if name not in KNOWN_CONTROLLERS and name not in OTHER_VOLCANO_CONTROLLERS:
            raise FlagError(f"invalid value {entry!r} for flag --controllers: unknown controller {name!r}")
        if name in seen:
            raise FlagError(f"controllers option {name} cannot have both '-' and '+' prefixes")
        seen.add(name)


def is_controller_enabled(name: str, controllers: list[str]) -> bool:
    """Upstream's isControllerEnabled: first explicit mention wins, then '*', else disabled."""
    if not controllers:
        return True
    has_star = False
    for entry in controllers:
        if entry in (name, f"+{name}"):
            return True
        if entry == f"-{name}":
            return False
        if entry == "*":
            has_star = True
    return has_star


def _check_address(flag: str, value: str) -> None:
    _host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise FlagError(f"invalid value {value!r} for flag --{flag}: want [host]:port")


def validate(o: Options) -> None:
    if o.kube_api_qps < 0:
        raise FlagError(f'invalid value "{o.kube_api_qps:g}" for flag --kube-api-qps: must not be negative')
    if o.kube_api_burst < 0:
        raise FlagError(f'invalid value "{o.kube_api_burst}" for flag --kube-api-burst: must not be negative')
    if o.worker_threads < 1:
        raise FlagError(f'invalid value "{o.worker_threads}" for flag --worker-threads: must be at least 1')
    if o.resync_period < 0:
        raise FlagError(f'invalid value "{o.resync_period:g}s" for flag --resync-period: must not be negative')
    if o.shards < 0:
        raise FlagError(f'invalid value "{o.shards}" for flag --shards: must not be negative')
    if o.shard_index is not None:
        if o.shards == 0:
            raise FlagError("--shard-index needs --shards")
        if not 0 <= o.shard_index < o.shards:
            raise FlagError(f'invalid value "{o.shard_index}" for flag --shard-index: must be in 0..{o.shards - 1}')
    if o.status_write_interval < 0:
        raise FlagError(
            f'invalid value "{o.status_write_interval:g}s" for flag --status-write-interval: must not be negative'
        )
    if not o.status_write_qps > 0:
        raise FlagError(f'invalid value "{o.status_write_qps:g}" for flag --status-write-qps: must be positive')
    if o.status_write_burst < 1:
        raise FlagError(f'invalid value "{o.status_write_burst}" for flag --status-write-burst: must be at least 1')
    check_controllers(o.controllers)
    _check_address("healthz-address", o.healthz_address)
    _check_address("listen-address", o.listen_address)
    _check_address("webhook-address", o.webhook_address)
    if o.leader_elect:
        if o.leader_elect_lease_duration <= o.leader_elect_renew_deadline:
            raise FlagError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline")
        if o.leader_elect_renew_deadline <= 1.2 * o.leader_elect_retry_period:
            raise FlagError("--leader-elect-renew-deadline must be greater than 1.2 * --leader-elect-retry-period")
        if o.leader_elect_retry_period <= 0:
            raise FlagError("--leader-elect-retry-period must be greater than zero")
    if o.enable_webhook and not (o.webhook_tls_cert_file and o.webhook_tls_private_key_file):
        raise FlagError("--enable-webhook needs --webhook-tls-cert-file and --webhook-tls-private-key-file")
    if bool(o.tls_cert_file) != bool(o.tls_private_key_file):
        raise FlagError("--tls-cert-file and --tls-private-key-file must be given together")


def parse(argv: list[str] | None = None) -> tuple[Options, bool]:
    """Parse and validate argv; returns (options, version_requested). Exits 2 on a bad flag."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    values = vars(ns)
    version = bool(values.pop("version"))
    values["controllers"] = [c.strip() for c in str(values["controllers"]).split(",") if c.strip()]
    values["scheduler_name"] = values["scheduler_name"] or ["volcano"]
    options = Options(**values)
    if options.lock_object_namespace is not None:
        print(DEPRECATED_LOCK_OBJECT_NAMESPACE, file=sys.stderr)
        if options.leader_elect_resource_namespace == Options.leader_elect_resource_namespace:
            options.leader_elect_resource_namespace = options.lock_object_namespace
    try:
        validate(options)
    except FlagError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    return options, version
