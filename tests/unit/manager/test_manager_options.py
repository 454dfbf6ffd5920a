"""The manager's flags: upstream's names and defaults, Go syntax, and one readable line on a bad value."""

from __future__ import annotations

import pytest

from jobflow_controller.manager import config
from jobflow_controller.manager import options as opts


def test_defaults_are_upstreams_where_upstream_has_them() -> None:
    o, version = opts.parse([])
    assert version is False
    assert (o.kube_api_qps, o.kube_api_burst, o.max_requeue_num, o.worker_threads) == (50.0, 100, 15, 3)
    assert (o.enable_healthz, o.healthz_address, o.enable_metrics, o.listen_address) == (
        False,
        ":11251",
        False,
        ":8081",
    )
    assert o.leader_elect is True
    assert (o.leader_elect_lease_duration, o.leader_elect_renew_deadline, o.leader_elect_retry_period) == (15, 10, 2)
    assert o.leader_elect_resource_namespace == "volcano-system"
    assert o.controllers == ["*", "-sharding-controller"]  # upstream's TestAddFlags


def test_the_lease_is_named_so_it_runs_beside_volcanos_own_controller_manager() -> None:
    """Deviation: upstream's lease is vc-controller-manager; ours must not fight over it."""
    o, _ = opts.parse([])
    assert o.leader_elect_resource_name == "jobflow-controller"


def test_go_durations_and_booleans_are_understood() -> None:
    o, _ = opts.parse(["--leader-elect=false", "--leader-elect-lease-duration=1m30s", "--enable-metrics"])
    assert o.leader_elect is False
    assert o.leader_elect_lease_duration == 90.0
    assert o.enable_metrics is True


def test_resync_period_bounds_how_long_an_unfinished_job_flow_can_go_unsynced() -> None:
    """Ours (docs/operations.md): 30 s by default, a Go duration, 0 is upstream's no resync."""
    assert opts.parse([])[0].resync_period == 30.0
    assert opts.parse(["--resync-period=1m"])[0].resync_period == 60.0
    assert opts.parse(["--resync-period=0"])[0].resync_period == 0.0


def test_status_write_interval_bounds_how_late_a_status_change_is_written() -> None:
    """Ours (docs/performance.md): a Go duration; 0, the default, leaves the pace to --status-write-qps."""
    assert opts.parse([])[0].status_write_interval == 0.0
    assert opts.parse(["--status-write-interval=2s"])[0].status_write_interval == 2.0
    assert opts.parse(["--status-write-interval=500ms"])[0].status_write_interval == 0.5
    assert opts.parse(["--status-write-interval=0"])[0].status_write_interval == 0.0


def test_status_write_qps_and_burst_pace_the_status_writes_that_do_not_finish_a_job_flow() -> None:
    """Ours (docs/performance.md): client-go's overall requeue bucket by default; inf is upstream's pace."""
    o = opts.parse([])[0]
    assert (o.status_write_qps, o.status_write_burst) == (10.0, 100)
    o = opts.parse(["--status-write-qps=25.5", "--status-write-burst=1"])[0]
    assert (o.status_write_qps, o.status_write_burst) == (25.5, 1)
    assert opts.parse(["--status-write-qps=inf"])[0].status_write_qps == float("inf")


def test_probe_allow_loopback_is_off_unless_asked_for() -> None:
    """Ours (docs/probe.md "Limits"): only a local control plane's simulated pods run on 127.0.0.1."""
    assert opts.parse([])[0].probe_allow_loopback is False
    assert opts.parse(["--probe-allow-loopback"])[0].probe_allow_loopback is True
    assert opts.parse(["--probe-allow-loopback=false"])[0].probe_allow_loopback is False


def test_kubeconfig_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", "/tmp/k")
    assert opts.parse([])[0].kubeconfig == "/tmp/k"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kube-api-qps=fast"], "argument --kube-api-qps: invalid float value 'fast'"),
        (["--leader-elect-retry-period=2"], "argument --leader-elect-retry-period: invalid duration value '2'"),
        (["--leader-elect=maybe"], "argument --leader-elect: invalid bool value 'maybe'"),
        (["--healthz-address=11251"], "invalid value '11251' for flag --healthz-address: want [host]:port"),
        (["--feature-gates=A=maybe"], "argument --feature-gates: invalid mapStringBool value 'A=maybe'"),
        (["--worker-threads-for-gc=-1"], "argument --worker-threads-for-gc: invalid uint value '-1'"),
        (["--leader-elect-renew-deadline=20s"], "--leader-elect-lease-duration must be greater than"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--resync-period=-5s"], 'invalid value "-5s" for flag --resync-period: must not be negative'),
        (["--resync-period=30"], "argument --resync-period: invalid duration value '30'"),
        (
            ["--status-write-interval=-1s"],
            'invalid value "-1s" for flag --status-write-interval: must not be negative',
        ),
        (["--status-write-qps=0"], 'invalid value "0" for flag --status-write-qps: must be positive'),
        (["--status-write-qps=nan"], 'invalid value "nan" for flag --status-write-qps: must be positive'),
        (["--status-write-qps=many"], "argument --status-write-qps: invalid float value 'many'"),
        (["--status-write-burst=0"], 'invalid value "0" for flag --status-write-burst: must be at least 1'),
    ],
)
def test_a_bad_flag_exits_2_with_one_line_naming_it(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("jobflow-controller: error: ")
    assert message in err


@pytest.mark.parametrize(
    ("name", "controllers", "enabled"),
    [
        ("jobflow-controller", [], True),
        ("jobflow-controller", ["*"], True),
        ("jobflow-controller", ["*", "-jobflow-controller"], False),
        ("jobflow-controller", ["-jobflow-controller", "*"], False),
        ("jobtemplate-controller", ["*", "-jobflow-controller"], True),
        ("jobtemplate-controller", ["jobflow-controller"], False),
        ("jobflow-controller", ["+jobflow-controller"], True),
    ],
)
def test_is_controller_enabled_follows_upstream(name: str, controllers: list[str], enabled: bool) -> None:
    assert config.is_controller_enabled(name, controllers) is enabled


def test_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        opts.parse(["--help"])
    out = capsys.readouterr().out
    assert "--max-requeue-num" in out and "-1 retries forever" in out


def test_every_upstream_controller_manager_flag_is_accepted() -> None:
    """Issue 14: a vc-controller-manager command line (Helm's included) starts this process unchanged."""
    o, _ = opts.parse(
        [
            "--ca-cert-file=/etc/ca.crt",
            "--scheduler-name=volcano",
            "--scheduler-name=other",
            "--worker-threads-for-podgroup=5",
            "--worker-threads-for-gc=5",
            "--inherit-owner-annotations=false",
            "--feature-gates=VolcanoJobSupport=true,QueueCommandSync=false",
            "--log-flush-frequency=5s",
            "--logtostderr=true",
            "-v=4",
            "--controllers=*,-sharding-controller",
        ]
    )
    assert o.scheduler_name == ["volcano", "other"]
    assert (o.worker_threads_for_podgroup, o.worker_threads_for_gc, o.inherit_owner_annotations) == (5, 5, False)
    assert o.feature_gates == {"VolcanoJobSupport": True, "QueueCommandSync": False}
    assert (o.log_flush_frequency, o.logtostderr, o.verbosity) == (5.0, True, 4)
    assert config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)
    assert config.is_controller_enabled(config.JOBTEMPLATE_CONTROLLER, o.controllers)


def test_upstream_defaults_of_the_accepted_flags() -> None:
    o, _ = opts.parse([])
    assert o.scheduler_name == ["volcano"]
    assert (o.worker_threads_for_podgroup, o.worker_threads_for_gc, o.inherit_owner_annotations) == (5, 1, True)
    assert (o.feature_gates, o.log_flush_frequency, o.logtostderr) == ({}, 5.0, True)


def test_other_volcano_controllers_may_be_named_in_controllers() -> None:
    o, _ = opts.parse(["--controllers=-job-controller,+jobflow-controller,-gc-controller"])
    assert config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)
    assert not config.is_controller_enabled(config.JOBTEMPLATE_CONTROLLER, o.controllers)


def test_the_deprecated_lock_object_namespace_sets_the_lease_namespace_with_pflags_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    o, _ = opts.parse(["--lock-object-namespace=kube-system"])
    assert o.leader_elect_resource_namespace == "kube-system"
    assert capsys.readouterr().err == (
        "Flag --lock-object-namespace has been deprecated, This flag is deprecated and will be removed in a "
        "future release. Please use --leader-elect-resource-namespace instead.\n"
    )
    both, _ = opts.parse(["--lock-object-namespace=kube-system", "--leader-elect-resource-namespace=mine"])
    assert both.leader_elect_resource_namespace == "mine"


def test_upstreams_tls_flags_are_the_health_endpoints_and_the_webhook_has_its_own() -> None:
    o, _ = opts.parse(
        [
            "--tls-cert-file=/h.crt",
            "--tls-private-key-file=/h.key",
            "--ca-cert-file=/ca.crt",
            "--enable-webhook",
            "--webhook-tls-cert-file=/w.crt",
            "--webhook-tls-private-key-file=/w.key",
        ]
    )
    assert (o.tls_cert_file, o.tls_private_key_file, o.ca_cert_file) == ("/h.crt", "/h.key", "/ca.crt")
    assert (o.webhook_tls_cert_file, o.webhook_tls_private_key_file) == ("/w.crt", "/w.key")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--enable-webhook"], "--enable-webhook needs --webhook-tls-cert-file and --webhook-tls-private-key-file"),
        (
            ["--enable-webhook", "--tls-cert-file=/a", "--tls-private-key-file=/b"],
            "--enable-webhook needs --webhook-tls-cert-file and --webhook-tls-private-key-file",
        ),
        (["--tls-cert-file=/a"], "--tls-cert-file and --tls-private-key-file must be given together"),
        (["--tls-private-key-file=/b"], "--tls-cert-file and --tls-private-key-file must be given together"),
        (
            ["--trigger-address=:8444", "--trigger-tls-cert-file=/t.crt"],
            "--trigger-address needs --trigger-tls-cert-file and --trigger-tls-private-key-file",
        ),
        (["--trigger-address=nowhere"], "trigger-address"),
    ],
)
def test_tls_flags_that_cannot_work_exit_2_naming_them(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_trigger_flags_are_off_by_default_and_parsed_when_given() -> None:
    default, _ = opts.parse([])
    assert (default.trigger_address, default.trigger_watch_kinds) == ("", [])
    given, _ = opts.parse(
        [
            "--trigger-address=:8444",
            "--trigger-tls-cert-file=/t.crt",
            "--trigger-tls-private-key-file=/t.key",
            "--trigger-watch-kinds=v1/ConfigMap,apps/v1/Deployment",
        ]
    )
    assert (given.trigger_address, given.trigger_tls_cert_file, given.trigger_tls_private_key_file) == (
        ":8444",
        "/t.crt",
        "/t.key",
    )
    assert given.trigger_watch_kinds == ["v1/ConfigMap", "apps/v1/Deployment"]
