"""`build_client_config`: the kubeconfig, context and namespace a kubectl plugin resolves, as kubectl does."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from jobflow_controller.kube.config import ConfigError, build_client_config


def _kubeconfig(path: Path, current: str = "one", server_port: int = 6443) -> Path:
    path.write_text(
        f"""apiVersion: v1
kind: Config
current-context: {current}
clusters:
  - name: c1
    cluster: {{server: "https://127.0.0.1:{server_port}", insecure-skip-tls-verify: true}}
  - name: c2
    cluster: {{server: "https://127.0.0.2:{server_port}", insecure-skip-tls-verify: true}}
users:
  - name: u
    user: {{token: t}}
contexts:
  - name: one
    context: {{cluster: c1, user: u, namespace: team-one}}
  - name: two
    context: {{cluster: c2, user: u}}
"""
    )
    return path


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_the_current_contexts_namespace(no_env: Path) -> None:
    configuration, namespace = build_client_config(str(_kubeconfig(no_env / "k")))
    assert (configuration.host, namespace) == ("https://127.0.0.1:6443", "team-one")


def test_context_picks_server_and_a_context_without_namespace_means_default(no_env: Path) -> None:
    configuration, namespace = build_client_config(str(_kubeconfig(no_env / "k")), "two")
    assert (configuration.host, namespace) == ("https://127.0.0.2:6443", "default")


def test_an_unknown_context_is_an_error(no_env: Path) -> None:
    with pytest.raises(ConfigError, match=r'^context "three" does not exist$'):
        build_client_config(str(_kubeconfig(no_env / "k")), "three")


def test_a_missing_explicit_kubeconfig_is_an_error(no_env: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        build_client_config(str(no_env / "absent"))


def test_kubeconfig_env_files_are_merged_first_one_wins(no_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _kubeconfig(no_env / "a", current="two", server_port=1111)
    second = _kubeconfig(no_env / "b", current="one", server_port=2222)
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(no_env / "missing"), str(first), str(second)]))
    configuration, namespace = build_client_config()
    assert (configuration.host, namespace) == ("https://127.0.0.2:1111", "default")


def test_home_kubeconfig_when_nothing_else_is_set(no_env: Path) -> None:
    (no_env / "home" / ".kube").mkdir(parents=True)
    _kubeconfig(no_env / "home" / ".kube" / "config")
    assert build_client_config()[1] == "team-one"


def test_nothing_at_all_is_an_error_naming_what_was_tried(no_env: Path) -> None:
    tried = "no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, and not in a cluster"
    with pytest.raises(ConfigError, match=re.escape(tried)):
        build_client_config()
