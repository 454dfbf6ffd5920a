"""--jobflow-patch-allowed-fields: parsed as pflag's string slice, checked at start, handed to the
JobFlow controller and the webhook (issue 21, item 7; docs/patch.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from jobflow_controller.apis.patch_fields import PatchFields
from jobflow_controller.jobflow import JobFlowOptions
from jobflow_controller.local.certs import TinyCA, write
from jobflow_controller.manager import controllers
from jobflow_controller.manager import options as opts
from jobflow_controller.manager.endpoints import Endpoints


def test_unset_allows_every_field_as_before_the_flag() -> None:
    o, _ = opts.parse([])
    assert o.jobflow_patch_allowed_fields == []
    assert o.patch_fields() is None


def test_a_comma_separated_list_repeated_or_not() -> None:
    o, _ = opts.parse(
        ["--jobflow-patch-allowed-fields=tasks.replicas,minAvailable", "--jobflow-patch-allowed-fields", "queue"]
    )
    assert o.patch_fields() == PatchFields(frozenset({("tasks", "replicas"), ("minAvailable",), ("queue",)}))


def test_none_allows_no_field() -> None:
    o, _ = opts.parse(["--jobflow-patch-allowed-fields=none"])
    assert o.patch_fields() == PatchFields(frozenset())


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tasks[0].replicas", "'tasks[0].replicas' is not a dotted field path below jobSpec (such as tasks.replicas)"),
        ("none,queue", "'none' cannot be given with fields"),
    ],
)
def test_a_value_that_is_no_field_path_exits_2_naming_the_flag(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse([f"--jobflow-patch-allowed-fields={value}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == f"jobflow-controller: error: invalid value for flag --jobflow-patch-allowed-fields: {message}\n"


def test_the_jobflow_controller_gets_the_allowed_fields() -> None:
    o, _ = opts.parse(["--jobflow-patch-allowed-fields=tasks.replicas", "--controllers=jobflow-controller"])
    option = controllers.controller_option(None, None, None, o, lambda: None, None)  # type: ignore[arg-type,return-value]
    jobflow_options = option.setting(JobFlowOptions)
    assert jobflow_options is not None
    assert jobflow_options.patch_fields == PatchFields(frozenset({("tasks", "replicas")}))


def test_the_webhook_gets_the_allowed_fields(tmp_path: Path) -> None:
    pair = TinyCA("test-ca").issue("webhook", server=True, dns_names=("localhost",), ips=("127.0.0.1",))
    cert, key = write(tmp_path / "tls.crt", pair.cert_pem), write(tmp_path / "tls.key", pair.key_pem, private=True)
    o, _ = opts.parse(
        [
            "--enable-webhook",
            "--webhook-address=127.0.0.1:0",
            f"--webhook-tls-cert-file={cert}",
            f"--webhook-tls-private-key-file={key}",
            "--jobflow-patch-allowed-fields=minAvailable",
        ]
    )
    endpoints = Endpoints(
        o, CollectorRegistry(), leader_election=lambda: None, informer_sync=lambda: None, shutdown=lambda: None
    )
    endpoints.start()
    try:
        assert endpoints.webhook is not None
        assert endpoints.webhook._server.patch_fields == PatchFields(frozenset({("minAvailable",)}))
    finally:
        endpoints.stop()
