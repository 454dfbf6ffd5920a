"""What the controller manager runs with: its options, each defaulted once, where the value belongs.

A default that a part of the product owns comes from that part (the requeue limit from the queue
controller, the status bucket from the JobFlow controller, the lease timings from the leader
elector); the controller manager's own values are here. The flags (options.py) show these defaults
and fill these fields; tests and embedders build an `Options` directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The controller packages register themselves when imported (upstream's blank imports,
# `_ "volcano.sh/volcano/pkg/controllers/jobflow"`): a fourth is one more name on this line.
from jobflow_controller import cronjobflow, jobflow, jobflowtrigger, jobtemplate  # noqa: F401
from jobflow_controller.apis.patch_fields import PatchFields, parse_patch_fields
from jobflow_controller.framework import DEFAULT_MAX_REQUEUE_NUM, registered_controllers
from jobflow_controller.jobflow.status_writer import STATUS_WRITE_BURST, STATUS_WRITE_INTERVAL, STATUS_WRITE_QPS
from jobflow_controller.leaderelection import DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD
from jobflow_controller.manager.logs import DEFAULT_LOG_FORMAT

JOBFLOW_CONTROLLER = "jobflow-controller"
JOBTEMPLATE_CONTROLLER = "jobtemplate-controller"
#: Ours (docs/cron.md): CronJobFlows. Enabled by `*` like the others.
CRONJOBFLOW_CONTROLLER = "cronjobflow-controller"
#: Volcano's other controllers (v1.15.1 and master register the same ten, case as written): their
#: names are valid in --controllers (so a command line written for vc-controller-manager, whose
#: default is `*,-sharding-controller`, works here), but this process runs none of them.
OTHER_VOLCANO_CONTROLLERS = (
    "colocation-config-controller",
    "cronjob-controller",
    "gc-controller",
    "hyperNode-controller",
    "job-controller",
    "pg-controller",
    "queue-controller",
    "sharding-controller",
)
#: Upstream's default for --controllers.
DEFAULT_CONTROLLERS = "*,-sharding-controller"

# Volcano's options.go defaults.
DEFAULT_KUBE_API_QPS = 50.0
DEFAULT_KUBE_API_BURST = 100
DEFAULT_WORKER_THREADS = 3
DEFAULT_HEALTHZ_ADDRESS = ":11251"
DEFAULT_LISTEN_ADDRESS = ":8081"
#: Volcano's LeaderElectionDefault; the name is ours, so we run beside vc-controller-manager.
DEFAULT_LEASE_NAMESPACE = "volcano-system"
DEFAULT_LEASE_NAME = "jobflow-controller"


@dataclass
class Options:
    kubeconfig: str | None = None
    master: str | None = None
    kube_api_qps: float = DEFAULT_KUBE_API_QPS
    kube_api_burst: int = DEFAULT_KUBE_API_BURST
    max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM
    worker_threads: int = DEFAULT_WORKER_THREADS
    controllers: list[str] = field(default_factory=lambda: DEFAULT_CONTROLLERS.split(","))
    enable_healthz: bool = False
    healthz_address: str = DEFAULT_HEALTHZ_ADDRESS
    enable_metrics: bool = False
    listen_address: str = DEFAULT_LISTEN_ADDRESS
    leader_elect: bool = True
    leader_elect_lease_duration: float = DEFAULT_LEASE_DURATION
    leader_elect_renew_deadline: float = DEFAULT_RENEW_DEADLINE
    leader_elect_retry_period: float = DEFAULT_RETRY_PERIOD
    leader_elect_resource_lock: str = "leases"
    leader_elect_resource_name: str = DEFAULT_LEASE_NAME
    leader_elect_resource_namespace: str = DEFAULT_LEASE_NAMESPACE
    graceful_shutdown_timeout: float = 30.0
    #: Ours: every unfinished JobFlow is synced again at least this often (0: never, as upstream).
    resync_period: float = 30.0
    #: Ours: split JobFlows by namespace over this many shards, one Lease each (0: off, as upstream).
    shards: int = 0
    #: Ours: the shard this replica campaigns for first (None: the pod name's StatefulSet ordinal).
    shard_index: int | None = None
    #: Ours (docs/performance.md): at most this long between a status change and its write; 0 writes
    #: every change as soon as the status bucket below has a token for it.
    status_write_interval: float = STATUS_WRITE_INTERVAL
    #: Ours (docs/performance.md): the bucket of status writes that do not finish a JobFlow.
    status_write_qps: float = STATUS_WRITE_QPS
    status_write_burst: int = STATUS_WRITE_BURST
    #: Ours (docs/probe.md "Limits"): let `dependsOn.probe` check pods on loopback addresses; only for
    #: a local control plane, whose simulated pods run on 127.0.0.1.
    probe_allow_loopback: bool = False
    log_format: str = DEFAULT_LOG_FORMAT
    verbosity: int = 0
    enable_webhook: bool = False
    webhook_address: str = ":8443"
    webhook_tls_cert_file: str | None = None
    webhook_tls_private_key_file: str | None = None
    #: Ours (docs/triggers.md): the trigger endpoint's address ("" serves none), its TLS pair, and
    #: the kinds resource triggers may watch (`<apiVersion>/<kind>`, e.g. `v1/ConfigMap`).
    trigger_address: str = ""
    trigger_tls_cert_file: str | None = None
    trigger_tls_private_key_file: str | None = None
    trigger_watch_kinds: list[str] = field(default_factory=list)
    #: Ours (docs/patch.md): the Job spec fields a flow's `patch.jobSpec` may set, as paths below
    #: `jobSpec` (`tasks.replicas`); empty allows every field (as before the flag), `none` none.
    jobflow_patch_allowed_fields: list[str] = field(default_factory=list)
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
    worker_threads_for_queue: int = 5
    worker_threads_for_cronjob: int = 3
    inherit_owner_annotations: bool = True
    feature_gates: dict[str, bool] = field(default_factory=dict)
    # The sharding controller's (pkg/controllers/sharding/config.go, a FlagProvider).
    scheduler_configs: list[str] = field(
        default_factory=lambda: ["volcano:volcano:0.0:0.6:false:2:100", "agent-scheduler:agent:0.7:1.0:true:2:100"]
    )
    shard_sync_period: float = 60.0
    enable_node_event_trigger: bool = True
    sharding_configmap: str = "volcano-sharding-configmap"
    sharding_configmap_namespace: str = "volcano-system"
    log_flush_frequency: float = 5.0
    # klog's (InitFlags), with the values Volcano's main.go leaves them at.
    logtostderr: bool = True
    log_dir: str = ""
    log_file: str = ""
    log_file_max_size: int = 1800
    alsologtostderr: bool = False
    legacy_stderr_threshold_behavior: bool = False
    add_dir_header: bool = False
    skip_headers: bool = False
    one_output: bool = False
    skip_log_headers: bool = False
    stderrthreshold: int = 0
    alsologtostderrthreshold: int = 0
    vmodule: str = ""
    log_backtrace_at: str = ""

    def patch_fields(self) -> PatchFields | None:
        """--jobflow-patch-allowed-fields parsed (None: every field); ValueError if it does not parse."""
        return parse_patch_fields(self.jobflow_patch_allowed_fields)


def known_controllers() -> tuple[str, ...]:
    """The names --controllers selects what runs here by: the framework's registry (each controller
    registers itself, framework.py `register_controller`), the JobFlow controller first, then by name."""
    return tuple(sorted((c.name for c in registered_controllers()), key=lambda n: (n != JOBFLOW_CONTROLLER, n)))


def unknown_controllers(controllers: list[str]) -> list[str]:
    """The names in --controllers that no Volcano controller has (upstream ignores them silently)."""
    known = (*known_controllers(), *OTHER_VOLCANO_CONTROLLERS)
    return [entry for entry in controllers if entry != "*" and controller_name(entry) not in known]


def controller_name(entry: str) -> str:
    """An entry of --controllers without its one `+` or `-` (upstream's `c[1:]`)."""
    return entry[1:] if entry.startswith(("+", "-")) else entry


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
