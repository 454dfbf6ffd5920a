"""A flow's name is also the name of its JobTemplate, so it must be one the API server accepts.

A JobTemplate is a custom resource: its name is a DNS-1123 subdomain of at most 253 characters. A
flow named ``-a`` passes the Job name rule (``jf--a`` is a valid name) but no template can ever be
named ``-a``; the rule refuses it, and names the template, both at admission and in the
controller's ``InvalidJobFlow`` (both read ``validation_message``).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation import validate_job_flow, validation_message
from jobflow_controller.validation.names import (
    MAX_TEMPLATE_NAME_LENGTH,
    is_subdomain,
    job_name_problems,
    template_name_problems,
)

SUBDOMAIN_RULE = (
    "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', with every"
    " '.'-separated part starting and ending with a letter or digit"
)


def job_flow(*flow_names: str, name: str = "jf", namespace: str = "default") -> dict[str, Any]:
    metadata = {key: value for key, value in (("name", name), ("namespace", namespace)) if value}
    return {"metadata": metadata, "spec": {"flows": [{"name": n} for n in flow_names]}}


def test_limit_is_the_api_servers_for_a_custom_resource_name() -> None:
    assert MAX_TEMPLATE_NAME_LENGTH == 253


@pytest.mark.parametrize("flow", ["a", "0", "train", "model.v2", "a-b.c-d", "x" * 253])
def test_valid_template_names(flow: str) -> None:
    assert template_name_problems(flow) == []


@pytest.mark.parametrize(
    "flow",
    ["-a", "a-", ".a", "a.", "a..b", "a.-b", "A", "under_score", "spa ce", "ü", ""],
    ids=["leading-dash", "trailing-dash", "leading-dot", "trailing-dot", "empty-part", "dash-after-dot",
         "uppercase", "underscore", "space", "non-ascii", "empty"],
)  # fmt: skip
def test_name_that_is_not_a_lowercase_subdomain_is_refused(flow: str) -> None:
    assert template_name_problems(flow) == [f'jobflow Flow "{flow}": JobTemplate name "{flow}" {SUBDOMAIN_RULE}']


def test_name_over_253_characters_is_refused_with_its_length() -> None:
    assert template_name_problems("x" * 254) == [
        'jobflow Flow "' + "x" * 254 + '": JobTemplate name is 254 characters long, it must be at most 253'
    ]


def test_leading_dash_passes_the_job_name_rule_but_not_the_template_rule() -> None:
    assert is_subdomain("jf--a")
    assert job_name_problems("jf", "-a") == []
    assert validate_job_flow(job_flow("-a")) == [f'jobflow Flow "-a": JobTemplate name "-a" {SUBDOMAIN_RULE}']


def test_a_name_the_job_name_rule_already_refuses_is_not_reported_twice() -> None:
    # "Bad" makes the Job name "jf-Bad" invalid; that message names the flow already.
    assert validate_job_flow(job_flow("Bad")) == job_name_problems("jf", "Bad")


def test_template_rule_applies_without_the_jobflows_name() -> None:
    assert validate_job_flow(job_flow("-a", name="", namespace="")) == template_name_problems("-a")


def test_controller_message_names_the_template() -> None:
    # The controller's InvalidJobFlow Warning carries validation_message.
    assert validation_message(job_flow("a", "-b")) == f'jobflow Flow "-b": JobTemplate name "-b" {SUBDOMAIN_RULE}'
