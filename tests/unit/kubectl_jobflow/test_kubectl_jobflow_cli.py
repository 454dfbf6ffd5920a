"""`kubectl jobflow` as a command: its flags, the watch loop, and the one-line errors."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from informers.errors import NotFoundError
from kubectl_jobflow import cli

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def test_connection_flags_are_accepted_before_and_after_the_command() -> None:
    args = cli._parser().parse_args(["--context", "c1", "tree", "p", "-n", "ns", "--kubeconfig=/k"])
    assert (args.command, args.name, args.context, args.namespace, args.kubeconfig) == ("tree", "p", "c1", "ns", "/k")
    args = cli._parser().parse_args(["-n", "early", "dot", "p"])
    assert (args.command, args.namespace) == ("dot", "early")


def test_flags_not_given_stay_unset_so_the_kubeconfig_decides() -> None:
    args = cli._parser().parse_args(["tree", "p"])
    assert not hasattr(args, "namespace") and not hasattr(args, "context") and not hasattr(args, "kubeconfig")
    assert (args.watch, args.interval, args.color) == (False, 1.0, "auto")


def test_interval_must_be_positive() -> None:
    with pytest.raises(SystemExit):
        cli._parser().parse_args(["tree", "p", "--watch", "--interval", "0"])


def test_watch_redraws_only_what_changed() -> None:
    frames = iter(["one", "one", "two", "two", "three"])
    drawn: list[str] = []
    cli.watch(lambda: next(frames), drawn.append, 1.0, sleep=lambda _: None, polls=5)
    assert drawn == ["one", "two", "three"]


def test_watch_sleeps_the_interval_between_polls() -> None:
    slept: list[float] = []
    cli.watch(lambda: "same", lambda _: None, 2.5, sleep=slept.append, polls=3)
    assert slept == [2.5, 2.5]


def test_a_failed_read_during_a_watch_is_shown_under_the_last_picture_and_retried() -> None:
    reads: list[str | Exception] = ["picture\n", ConnectionError("connection\n refused"), "picture\n"]

    def frame() -> str:
        read = reads.pop(0)
        if isinstance(read, Exception):
            raise read
        return read

    drawn: list[str] = []
    cli.watch(frame, drawn.append, 1.0, sleep=lambda _: None, polls=3)
    assert drawn == ["picture\n", "picture\n\nerror: connection refused (retrying)\n", "picture\n"]


def test_watch_ends_on_ctrl_c() -> None:
    def frame() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cli.watch(lambda: "x", lambda _: None, 1.0, sleep=lambda _: frame())


class _Client:
    def __init__(self, objects: dict[str, Any] | None = None, items: list[Any] | None = None) -> None:
        self.objects = objects or {}
        self.items = items or []
        self.selectors: list[str | None] = []

    def get(self, name: str) -> Any:
        if name not in self.objects:
            raise NotFoundError(f'jobflows.flow.volcano.sh "{name}" not found')
        return self.objects[name]

    def list(self, label_selector: str | None = None) -> list[Any]:
        self.selectors.append(label_selector)
        return self.items


class _Clientset:
    def __init__(self, flows: _Client, jobs: _Client) -> None:
        self._flows, self._jobs = flows, jobs

    def job_flows(self, namespace: str | None = None) -> _Client:
        return self._flows

    def jobs(self, namespace: str | None = None) -> _Client:
        return self._jobs


def test_a_missing_jobflow_is_one_readable_error() -> None:
    source = cli.FlowSource(_Clientset(_Client(), _Client()), "team", "nope")  # type: ignore[arg-type]
    message = 'jobflows.flow.volcano.sh "nope" not found in namespace "team"'
    with pytest.raises(cli.PluginError, match=f"^{re.escape(message)}$"):
        source.read(NOW)


def test_the_jobs_are_listed_by_the_controllers_created_by_label() -> None:
    flow = {"metadata": {"name": "p", "namespace": "team", "uid": "u"}, "spec": {"flows": [{"name": "a"}]}}
    jobs = _Client()
    view = cli.FlowSource(_Clientset(_Client({"p": flow}), jobs), "team", "p").read(NOW)  # type: ignore[arg-type]
    assert jobs.selectors == ["volcano.sh/createdByJobFlow=team.p"]
    assert [f.name for f in view.flows] == ["a"]


def test_a_label_value_too_long_to_exist_lists_every_job() -> None:
    name = "n" * 60
    flow = {"metadata": {"name": name, "namespace": "team", "uid": "u"}, "spec": {"flows": []}}
    jobs = _Client()
    cli.FlowSource(_Clientset(_Client({name: flow}), jobs), "team", name).read(NOW)  # type: ignore[arg-type]
    assert jobs.selectors == [None]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_jobflow", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_a_missing_kubeconfig_exits_1_with_one_line(tmp_path: Path) -> None:
    result = _run("tree", "p", f"--kubeconfig={tmp_path / 'none'}")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"error: stat {tmp_path / 'none'}: no such file or directory\n"


def test_no_cluster_exits_1_with_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    result = _run("dot", "p", f"--kubeconfig={kubeconfig}")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: cannot reach the API server: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
