"""The command line is read as spf13/pflag reads vc-controller-manager's (issue 20, item 1)."""

from __future__ import annotations

import pytest

from jobflow_controller.manager import config, govalues
from jobflow_controller.manager import options as opts


def _exit(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse_command_line(argv)
    return exit_info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("argv", [["-v=4"], ["-v", "4"], ["-v4"], ["--v=4"], ["--v", "4"]])
def test_klogs_v_takes_pflags_shorthand_forms(argv: list[str]) -> None:
    assert opts.parse_command_line(argv).options.verbosity == 4


def test_underscores_and_dashes_are_alike_in_every_name() -> None:
    """component-base's WordSepNormalizeFunc applies to the whole flag set, not klog's flags only."""
    argv = ["--kube_api_qps=5", "--log_dir=/x", "--add-dir-header", "--leader_elect=false"]
    o = opts.parse_command_line(argv).options
    assert (o.kube_api_qps, o.log_dir, o.add_dir_header, o.leader_elect) == (5.0, "/x", True, False)


def test_a_value_given_apart_may_start_with_a_dash() -> None:
    o = opts.parse_command_line(["--controllers", "-jobtemplate-controller", "--max-requeue-num", "-1"]).options
    assert (o.controllers, o.max_requeue_num) == (["-jobtemplate-controller"], -1)


def test_a_bare_boolean_is_true_and_the_next_argument_is_no_value_of_it() -> None:
    """pflag: `--leader-elect false` is `--leader-elect=true` and a non-flag argument `false`."""
    parsed = opts.parse_command_line(["--leader-elect", "false", "--enable-metrics"])
    assert (parsed.options.leader_elect, parsed.options.enable_metrics) == (True, True)
    assert parsed.ignored_args == ["false"]


def test_arguments_that_are_no_flags_are_ignored_as_upstream_ignores_them() -> None:
    parsed = opts.parse_command_line(["2>&1", "--worker-threads=2", "-", "x", "--", "--no-such-flag", "-v=9"])
    assert parsed.options.worker_threads == 2
    assert parsed.options.verbosity == 0  # after `--`: no flag
    assert parsed.ignored_args == ["2>&1", "-", "x", "--no-such-flag", "-v=9"]


def test_a_repeated_slice_flag_appends_as_pflags_string_slice() -> None:
    o = opts.parse_command_line(["--controllers=*", "--controllers=-jobflow-controller,-gc-controller"]).options
    assert o.controllers == ["*", "-jobflow-controller", "-gc-controller"]
    assert not config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)


def test_version_is_a_bool_flag() -> None:
    assert opts.parse_command_line(["--version"]).version is True
    assert opts.parse_command_line(["--version=true"]).version is True
    assert opts.parse_command_line(["--version=false"]).version is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # No abbreviations: pflag knows only whole names.
        (["--max-requeue=3"], "unrecognized arguments: --max-requeue=3"),
        (["--leader-elect-lease=15s"], "unrecognized arguments: --leader-elect-lease=15s"),
        (["--kubeconfig"], "flag needs an argument: --kubeconfig"),
        (["-v"], "flag needs an argument: 'v' in -v"),
        (["-logtostderr"], "unknown shorthand flag: 'l' in -logtostderr"),
        (["---v=1"], "bad flag syntax: ---v=1"),
        (["--=x"], "bad flag syntax: --=x"),
        (["--version=maybe"], "argument --version: invalid bool value 'maybe'"),
        (["--worker-threads=-1"], "argument --worker-threads: invalid uint value '-1'"),
        (["--worker-threads=4294967296"], "value out of range"),
        (["--kube-api-burst=9223372036854775808"], "value out of range"),
    ],
)
def test_what_pflag_refuses_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _exit(argv, capsys)
    assert code == 2
    assert err.startswith("jobflow-controller: error: ") and err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--help=x"]])
def test_help_exits_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse_command_line(argv)
    assert exit_info.value.code == 0
    assert "--max-requeue-num" in capsys.readouterr().out


def test_worker_threads_zero_is_accepted() -> None:
    """Upstream's --worker-threads is a uint32: 0 is valid. Both JobFlow controllers then run one
    worker each, which is what upstream's run whatever the flag says (test_jobflow_controller.py)."""
    assert opts.parse_command_line(["--worker-threads=0"]).options.worker_threads == 0


@pytest.mark.parametrize(
    ("controllers", "line"),
    [
        ("+job-controller,-job-controller", "controllers option -job-controller cannot have both '-' and '+' prefixes"),
        ("*,jobflow-controller,-jobflow-controller", "controllers option -jobflow-controller cannot have both"),
        ("-gc-controller,-gc-controller", "controllers option -gc-controller cannot have both '-' and '+' prefixes"),
        ("no-such,+no-such", "controllers option +no-such cannot have both '-' and '+' prefixes"),
    ],
)
def test_a_controller_named_twice_exits_1_with_upstreams_line(
    controllers: str, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream's checkControllers, through CheckOptionOrDie: the message alone, then exit 1."""
    code, err = _exit([f"--controllers={controllers}"], capsys)
    assert code == 1
    assert err.startswith(line) and err.count("\n") == 1


def test_upstreams_controller_names_are_known_case_as_written() -> None:
    o = opts.parse_command_line(["--controllers=*,-hyperNode-controller,-colocation-config-controller"]).options
    assert config.unknown_controllers(o.controllers) == []
    assert config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)


def test_a_name_no_controller_has_is_accepted_as_upstream_accepts_it() -> None:
    """Upstream ignores it silently; the manager names it in a warning at start (manager/__init__.py)."""
    o = opts.parse_command_line(["--controllers=*,-hypernode-controller,+jobflow-controler"]).options
    assert config.unknown_controllers(o.controllers) == ["-hypernode-controller", "+jobflow-controler"]
    assert config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)


@pytest.mark.parametrize(
    ("parse", "value", "expected"),
    [
        (govalues.parse_int, "0x1F", 31),
        (govalues.parse_int, "017", 15),
        (govalues.parse_int, "-0b11", -3),
        (govalues.parse_int, "1_000", 1000),
        (govalues.parse_uint, "0o17", 15),
        (govalues.parse_bool, "True", True),
        (govalues.parse_bool, "F", False),
        (govalues.parse_klog_severity, "Error", 2),
        (govalues.parse_klog_vmodule, "a=1,", "a=1,"),
        (govalues.parse_klog_trace_location, "", ""),
    ],
)
def test_go_reads_these_values_so(parse: object, value: str, expected: object) -> None:
    assert callable(parse)
    assert parse(value) == expected


@pytest.mark.parametrize(
    ("parse", "value"),
    [
        (govalues.parse_int, "08"),
        (govalues.parse_int, "_1"),
        (govalues.parse_int, "1_"),
        (govalues.parse_int, " 1"),
        (govalues.parse_uint, "+1"),
        (govalues.parse_bool, "tRuE"),
        (govalues.parse_bool, "yes"),
        (govalues.parse_float32, "1e39"),
        (govalues.parse_klog_level, "0x1"),
        (govalues.parse_klog_vmodule, "a=-1"),
        (govalues.parse_klog_trace_location, "gc.go:0"),
    ],
)
def test_go_refuses_these_values(parse: object, value: str) -> None:
    assert callable(parse)
    with pytest.raises(ValueError):
        parse(value)
