"""The registry is complete: every function of the product that decodes text is fuzzed, or is listed
here as reading no tenant text, with why (docs/hostile-input.md).

A new `json.loads` (or YAML load, time or address parse) in a function that is neither fails here,
naming the function and the file to register it in.
"""

from __future__ import annotations

import pytest
from product_decoders import CallSite, call_sites
from registry import all_parsers, parser_modules

#: Functions that decode text no tenant wrote, and who wrote it instead.
NOT_TENANT_TEXT: dict[str, str] = {
    "jobflow_controller.kube.config._contexts": "the kubeconfig: the operator's file",
    "jobflow_controller.kube.errors.from_response": "an error Status from the API server",
    "jobflow_controller.kube.event_sink.KubeEventSink._send": "a copy of the controller's own Event body",
    "jobflow_controller.kube.event_sink.KubeEventSink._send_with_api_client": "the API server's answer to an Event",
    "jobflow_controller.kube.lease_lock._status_error": "an error Status from the API server",
    "jobflow_controller.kube.lease_lock.LeaseLock._request": "the API server's Lease",
    "jobflow_controller.apis.patch_fields.parse_patch_fields": "--jobflow-patch-allowed-fields: the operator's flag",
    "jobflow_controller.kube.lease_lock.parse_micro_time": "the Lease's renewTime: the replicas' own",
    "jobflow_controller.manager.govalues._parse_magnitude": "a flag's value: the operator's command line",
    "jobflow_controller.manager.metrics.exposition": "the controller's own metrics text (prometheus-client's)",
    "jobflow_controller.record._gofmt.sprintf": "the format: the controller's own message constants",
    "jobflow_controller.sharding.hash.ordinal_from_name": "the pod's hostname: the operator's StatefulSet",
    "jobflow_controller.kube.rest.decode_json": (
        "documents from the API server, which validated each object against its CRD's structural schema "
        "(no preserve-unknown-fields: nesting is bounded by the schema) and caps a request at 3 MiB"
    ),
}

#: Areas whose parsers another module registers: (path prefix, the registering module).
OWNED: tuple[tuple[str, str], ...] = (
    ("jobflow_controller/webhook/", "parsers_webhook"),
    ("kubectl_jobflow/ui/", "parsers_ui"),
)

REGISTERED = {p.name.split("[", 1)[0] for p in all_parsers()}
SITES = list(call_sites())


def _owner(site: CallSite) -> str | None:
    return next((module for prefix, module in OWNED if site.path.startswith(prefix)), None)


def _unregistered(sites: list[CallSite]) -> list[str]:
    return [
        f"{s.function} ({s.path}:{s.line}, {s.decoder})"
        for s in sites
        if s.function not in REGISTERED and s.function not in NOT_TENANT_TEXT
    ]


def test_the_scan_sees_the_known_decoders() -> None:
    """The scan itself works: it finds the annotations' parser and the API client's decoder, and the
    hand-written parsers of tenant text that are no JSON (issue 42): `$(VAR)` expansion (a pattern
    compiled in its module) and the name rules (a pattern compiled in another module)."""
    functions = {s.function: s.decoder for s in SITES}
    assert "jobflow_controller.apis.tenant_text.load_json" in functions
    assert "jobflow_controller.kube.rest.decode_json" in functions
    assert functions["jobflow_controller.apis.substitution.expand"] == "re.Pattern.sub"
    assert functions["jobflow_controller.validation.params._param_list_problems"] == "re.Pattern.fullmatch"


def test_every_decoding_function_of_the_controller_is_fuzzed_or_reads_no_tenant_text() -> None:
    mine = [s for s in SITES if _owner(s) is None]
    assert _unregistered(mine) == [], "register these in tests/unit/fuzz/parsers_<area>.py, or list them above"


@pytest.mark.parametrize(("prefix", "module"), OWNED)
def test_every_decoding_function_of_an_owned_area_is_fuzzed(prefix: str, module: str) -> None:
    sites = [s for s in SITES if s.path.startswith(prefix)]
    if module not in parser_modules():
        pytest.skip(f"{module}.py is written on its own branch (issue 33); {len(sites)} call sites wait for it")
    assert _unregistered(sites) == [], f"register these in tests/unit/fuzz/{module}.py"


def test_every_listed_exception_still_decodes_text() -> None:
    """A function listed above that no longer decodes anything is taken off the list."""
    assert set(NOT_TENANT_TEXT) <= {s.function for s in SITES}


def test_a_decoding_function_neither_registered_nor_listed_is_reported() -> None:
    site = CallSite("jobflow_controller.new.reads_an_annotation", "json.loads", "jobflow_controller/new.py", 7)
    assert _unregistered([site]) == [
        "jobflow_controller.new.reads_an_annotation (jobflow_controller/new.py:7, json.loads)"
    ]
