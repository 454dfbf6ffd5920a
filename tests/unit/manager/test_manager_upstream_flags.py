"""Every flag `vc-controller-manager` accepts (v1.15.1 and master), accepted here with its type.

The list is upstream's: `cmd/controller-manager/app/options/options.go` `AddFlags`, the sharding
controller's `AddFlags` (a FlagProvider), `--feature-gates`, `--log-flush-frequency` (main.go),
component-base's `BindLeaderElectionFlags`, and klog v2.140.0's `InitFlags`, all on one pflag set
normalized by component-base's `WordSepNormalizeFunc`. Each row: the flag, its pflag type, a good
value, what it becomes, a value its type refuses, and whether it is used here or only accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.manager import options as opts

USED, IGNORED = "used", "ignored"

# name, pflag type, good value, Options field, parsed, bad value (None: a string takes anything), use
UPSTREAM_FLAGS: list[tuple[str, str, str, str, Any, str | None, str]] = [
    # options.go
    ("master", "string", "https://k:6443", "master", "https://k:6443", None, USED),
    ("kubeconfig", "string", "/k", "kubeconfig", "/k", None, USED),
    ("ca-cert-file", "string", "/ca", "ca_cert_file", "/ca", None, USED),
    ("tls-cert-file", "string", "/c", "tls_cert_file", "/c", None, USED),
    ("tls-private-key-file", "string", "/k", "tls_private_key_file", "/k", None, USED),
    ("lock-object-namespace", "string", "ns", "leader_elect_resource_namespace", "ns", None, USED),
    ("kube-api-qps", "float32", "25.5", "kube_api_qps", 25.5, "fast", USED),
    ("kube-api-burst", "int", "0x20", "kube_api_burst", 32, "1.5", USED),
    ("version", "bool", "false", "", None, "maybe", USED),
    ("worker-threads", "uint32", "0", "worker_threads", 0, "-1", USED),
    ("worker-threads-for-cronjob", "uint32", "7", "worker_threads_for_cronjob", 7, "4294967296", IGNORED),
    ("scheduler-name", "stringArray", "other", "scheduler_name", ["other"], None, IGNORED),
    ("max-requeue-num", "int", "-1", "max_requeue_num", -1, "x", USED),
    ("healthz-address", "string", ":9999", "healthz_address", ":9999", None, USED),
    ("enable-healthz", "bool", "true", "enable_healthz", True, "yes", USED),
    ("enable-metrics", "bool", "T", "enable_metrics", True, "on", USED),
    ("listen-address", "string", ":9090", "listen_address", ":9090", None, USED),
    ("inherit-owner-annotations", "bool", "false", "inherit_owner_annotations", False, "no", IGNORED),
    ("worker-threads-for-podgroup", "uint32", "9", "worker_threads_for_podgroup", 9, "-5", IGNORED),
    ("worker-threads-for-gc", "uint32", "0", "worker_threads_for_gc", 0, "one", IGNORED),
    ("worker-threads-for-queue", "uint32", "2", "worker_threads_for_queue", 2, "-1", IGNORED),
    ("controllers", "stringSlice", "-jobtemplate-controller", "controllers", ["-jobtemplate-controller"], None, USED),
    # pkg/controllers/sharding/config.go
    ("scheduler-configs", "stringSlice", "a:b,c:d", "scheduler_configs", ["a:b", "c:d"], None, IGNORED),
    ("shard-sync-period", "duration", "2m", "shard_sync_period", 120.0, "60", IGNORED),
    ("enable-node-event-trigger", "bool", "false", "enable_node_event_trigger", False, "off", IGNORED),
    ("sharding-configmap", "string", "cm", "sharding_configmap", "cm", None, IGNORED),
    ("sharding-configmap-namespace", "string", "ns", "sharding_configmap_namespace", "ns", None, IGNORED),
    # main.go: utilfeature.DefaultMutableFeatureGate.AddFlag, log-flush-frequency
    ("feature-gates", "mapStringBool", "A=true,B=false", "feature_gates", {"A": True, "B": False}, "A", IGNORED),
    ("log-flush-frequency", "duration", "1s", "log_flush_frequency", 1.0, "1", IGNORED),
    # component-base BindLeaderElectionFlags
    ("leader-elect", "bool", "false", "leader_elect", False, "maybe", USED),
    ("leader-elect-lease-duration", "duration", "1m", "leader_elect_lease_duration", 60.0, "60", USED),
    ("leader-elect-renew-deadline", "duration", "5s", "leader_elect_renew_deadline", 5.0, "5", USED),
    ("leader-elect-retry-period", "duration", "1s", "leader_elect_retry_period", 1.0, "1", USED),
    ("leader-elect-resource-lock", "string", "leases", "leader_elect_resource_lock", "leases", "configmaps", USED),
    ("leader-elect-resource-name", "string", "me", "leader_elect_resource_name", "me", None, USED),
    ("leader-elect-resource-namespace", "string", "ns", "leader_elect_resource_namespace", "ns", None, USED),
    # klog v2.140.0 InitFlags (registered with `_`, normalized to `-`)
    ("log_dir", "string", "/tmp", "log_dir", "/tmp", None, IGNORED),
    ("log_file", "string", "/tmp/f", "log_file", "/tmp/f", None, IGNORED),
    ("log_file_max_size", "uint64", "10", "log_file_max_size", 10, "-1", IGNORED),
    ("logtostderr", "bool", "false", "logtostderr", False, "2", IGNORED),
    ("alsologtostderr", "bool", "true", "alsologtostderr", True, "y", IGNORED),
    ("legacy_stderr_threshold_behavior", "bool", "true", "legacy_stderr_threshold_behavior", True, "x", IGNORED),
    ("v", "Level", "4", "verbosity", 4, "high", USED),
    ("add_dir_header", "bool", "true", "add_dir_header", True, "x", IGNORED),
    ("skip_headers", "bool", "true", "skip_headers", True, "x", IGNORED),
    ("one_output", "bool", "true", "one_output", True, "x", IGNORED),
    ("skip_log_headers", "bool", "true", "skip_log_headers", True, "x", IGNORED),
    ("stderrthreshold", "severityValue", "warning", "stderrthreshold", 1, "loud", IGNORED),
    ("alsologtostderrthreshold", "severityValue", "3", "alsologtostderrthreshold", 3, "x", IGNORED),
    ("vmodule", "moduleSpec", "foo=2,bar*=1", "vmodule", "foo=2,bar*=1", "foo", IGNORED),
    ("log_backtrace_at", "traceLocation", "gc.go:12", "log_backtrace_at", "gc.go:12", "gc:12", IGNORED),
]
#: Where ours refuses at parse time what upstream refuses only when it runs (exit 1 there).
REFUSED_LATER_UPSTREAM = {"leader-elect-resource-lock"}
#: Flags that need another to be accepted by our validation.
COMPANIONS = {"tls-cert-file": ["--tls-private-key-file=/k"], "tls-private-key-file": ["--tls-cert-file=/c"]}


def _ours(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_the_table_has_every_upstream_flag_and_only_ours_besides() -> None:
    upstream = {_ours(row[0]) for row in UPSTREAM_FLAGS}
    table = {flag.name for group in opts.FLAG_GROUPS for flag in group.flags if group is not opts.OURS}
    assert table == upstream
    ignored = {flag.name for group in opts.FLAG_GROUPS for flag in group.flags if flag.ignored}
    assert ignored == {_ours(row[0]) for row in UPSTREAM_FLAGS if row[6] == IGNORED}


@pytest.mark.parametrize("row", UPSTREAM_FLAGS, ids=[row[0] for row in UPSTREAM_FLAGS])
def test_every_upstream_flag_is_accepted_with_its_type(row: tuple[str, str, str, str, Any, str | None, str]) -> None:
    name, kind, good, field, parsed, _bad, use = row
    companions = COMPANIONS.get(name, [])
    spellings = [[f"--{name}={good}"], [_ours(name), good], [f"--{name.replace('-', '_')}={good}"]]
    if kind == "bool":
        spellings[1] = [f"--{name}={good}"]  # pflag: a bool's value only with `=`
    for argv in spellings:
        result = opts.parse_command_line([*argv, *companions])
        if field:
            assert getattr(result.options, field) == parsed, argv
        else:
            assert result.version is False
        assert result.ignored_flags == ([_ours(name)] if use == IGNORED else []), argv
        assert result.ignored_args == []


@pytest.mark.parametrize(
    "row", [r for r in UPSTREAM_FLAGS if r[5] is not None], ids=[r[0] for r in UPSTREAM_FLAGS if r[5] is not None]
)
def test_a_value_its_type_refuses_exits_2_naming_the_flag(
    row: tuple[str, str, str, str, Any, str | None, str], capsys: pytest.CaptureFixture[str]
) -> None:
    name, kind, *_rest = row
    with pytest.raises(SystemExit) as exit_info:
        opts.parse_command_line([f"--{name}={row[5]}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    shown = "-v/--v" if name == "v" else _ours(name)
    assert err.startswith(f"jobflow-controller: error: argument {shown}: ")
    if name not in REFUSED_LATER_UPSTREAM:
        assert f"invalid {'uint' if kind == 'uint32' else 'float' if kind == 'float32' else kind} value" in err
