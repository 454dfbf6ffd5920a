"""The flags come from one table, and every default is defined once, by the part that owns it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from jobflow_controller import framework
from jobflow_controller.jobflow import status_writer
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.leader_election_client import leader_election_locks
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.leaderelection import DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD
from jobflow_controller.manager import config, pflag, validation
from jobflow_controller.manager import options as opts

FLAGS = [flag for group in opts.FLAG_GROUPS for flag in group.flags]
NOT_OPTIONS = {"version"}  # asks for the version; configures nothing

KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
"""


def test_every_flag_fills_one_field_and_every_field_has_one_flag() -> None:
    fields = [flag.field for flag in FLAGS if flag.field not in NOT_OPTIONS]
    assert sorted(fields) == sorted(f.name for f in dataclasses.fields(config.Options))


def test_no_flag_is_declared_twice() -> None:
    names = [flag.name for flag in FLAGS] + [flag.short for flag in FLAGS if flag.short]
    assert len(names) == len(set(names))


def test_the_flags_defaults_are_the_options_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert opts.parse([]) == (config.Options(), False)


def test_defaults_owned_elsewhere_are_those_owners_values() -> None:
    o = config.Options()
    assert o.max_requeue_num == framework.DEFAULT_MAX_REQUEUE_NUM
    assert (o.status_write_qps, o.status_write_burst, o.status_write_interval) == (
        status_writer.STATUS_WRITE_QPS,
        status_writer.STATUS_WRITE_BURST,
        status_writer.STATUS_WRITE_INTERVAL,
    )
    assert (o.leader_elect_lease_duration, o.leader_elect_renew_deadline, o.leader_elect_retry_period) == (
        DEFAULT_LEASE_DURATION,
        DEFAULT_RENEW_DEADLINE,
        DEFAULT_RETRY_PERIOD,
    )


def test_the_manager_writes_no_owned_default_again() -> None:
    """15 (requeues), 10.0 (status qps), 15.0/10.0/2.0 (lease) appear in none of the flags' modules."""
    for module in (config, opts, pflag, validation):
        source = Path(str(module.__file__)).read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w.])(15|15\.0|10\.0|2\.0)(?![\w.])", source), module.__name__


def test_help_lists_every_flag_under_its_group_with_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        opts.parse(["--help"])
    out = capsys.readouterr().out
    titles = [group.title for group in opts.FLAG_GROUPS]
    assert [line[:-1] for line in out.splitlines() if line[:-1] in titles] == titles
    # argparse wraps the help at the terminal's width: compare with the line breaks taken out.
    assert "--controllers CONTROLLERS" in out and "(default: *,-sharding-controller)" in " ".join(out.split())
    assert "--max-requeue-num MAX_REQUEUE_NUM" in out and "(default: 15)" in out
    for flag in FLAGS:
        assert flag.name in out


def test_leader_election_locks_share_a_client_of_their_own(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    rest = RestClient(build_config(str(path)), user_agent="vc-controller-manager/v1")
    try:
        with leader_election_locks(rest, "volcano-system", "me", event_recorder=None, renew_deadline=10.0) as lock_for:
            first, second = lock_for("a"), lock_for("b")
            assert (first.namespace, first.name, first.identity(), second.name) == ("volcano-system", "a", "me", "b")
            assert first._api_client is second._api_client
            assert first._api_client is not rest.api_client
            assert first._api_client.user_agent == "vc-controller-manager/v1/leader-election"
    finally:
        rest.close()
