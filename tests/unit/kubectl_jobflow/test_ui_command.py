"""`kubectl jobflow ui` as a command: its flags and the one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_jobflow import cli


def test_ui_takes_a_scope_a_port_and_no_browser() -> None:
    args = cli._parser().parse_args(["ui", "-A", "--port", "8080", "--no-browser"])
    assert (args.command, args.all_namespaces, args.port, args.no_browser) == ("ui", True, 8080, True)
    args = cli._parser().parse_args(["ui", "-n", "team"])
    assert (args.namespace, args.all_namespaces, args.port, args.no_browser) == ("team", False, 0, False)


@pytest.mark.parametrize("port", ["-1", "65536", "http"])
def test_a_port_must_be_a_port_number(port: str) -> None:
    with pytest.raises(SystemExit):
        cli._parser().parse_args(["ui", "--port", port])


def test_a_namespace_and_all_namespaces_together_are_one_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ui", "-n", "team", "--all-namespaces", "--no-browser"]) == 1
    assert capsys.readouterr().err == "error: --namespace and --all-namespaces cannot be used together\n"


def test_no_reachable_server_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "current-context: c\n"
    )
    assert cli.main(["ui", "--kubeconfig", str(kubeconfig), "--no-browser"]) == 1
    assert capsys.readouterr().err.startswith("error: cannot reach the API server: ")
