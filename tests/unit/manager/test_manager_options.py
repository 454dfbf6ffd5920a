"""The manager's flags: upstream's names and defaults, Go syntax, and one readable line on a bad value."""

from __future__ import annotations

import pytest

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
    assert o.controllers == ["*"]


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


def test_kubeconfig_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", "/tmp/k")
    assert opts.parse([])[0].kubeconfig == "/tmp/k"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kube-api-qps=fast"], "argument --kube-api-qps: invalid float value 'fast'"),
        (["--leader-elect-retry-period=2"], "argument --leader-elect-retry-period: invalid duration value '2'"),
        (["--leader-elect=maybe"], "argument --leader-elect: invalid bool value 'maybe'"),
        (["--worker-threads=0"], 'invalid value "0" for flag --worker-threads: must be at least 1'),
        (["--healthz-address=11251"], "invalid value '11251' for flag --healthz-address: want [host]:port"),
        (["--controllers=jobflow-controller,-jobflow-controller"], "controllers option jobflow-controller cannot have"),
        (["--controllers=job-controller"], "unknown controller 'job-controller'"),
        (["--leader-elect-renew-deadline=20s"], "--leader-elect-lease-duration must be greater than"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--resync-period=-5s"], 'invalid value "-5s" for flag --resync-period: must not be negative'),
        (["--resync-period=30"], "argument --resync-period: invalid duration value '30'"),
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
    assert opts.is_controller_enabled(name, controllers) is enabled


def test_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        opts.parse(["--help"])
    out = capsys.readouterr().out
    assert "--max-requeue-num" in out and "-1 retries forever" in out
