"""Name rules upstream never checks: the names and label values the controller derives from a JobFlow.

For every flow the controller creates a Volcano Job named ``<jobflow>-<flow>`` and labels it
``volcano.sh/createdByJobFlow: <namespace>.<jobflow>`` and
``volcano.sh/createdByJobTemplate: <namespace>.<flow>``. Upstream accepts any flow name, so a name
that makes one of these invalid is only discovered when the create fails, and the flow is retried
until ``--max-requeue-num`` and then stuck. Checking them at admission (and in the controller)
turns that into an immediate, precise error.

The Job name rule is what both gatekeepers of a Volcano Job accept together:

* the API server requires a custom resource's name to be a DNS-1123 subdomain (lowercase letters,
  digits, ``-`` and ``.``, each dot-separated part starting and ending with a letter or digit, at
  most 253 characters);
* Volcano's job admission webhook (``validateJobName``) requires a Kubernetes qualified name, whose
  name part is at most 63 characters.

Their intersection is a DNS-1123 subdomain of at most 63 characters, the rule used here. (A Job whose
name has a dot still cannot use Volcano's ``svc`` plugin, which sets it as the pods' ``subdomain``, a
DNS-1123 label; that is a property of the Job template, not of the JobFlow, so it is not checked.)

A flow's name is also the name of the JobTemplate it runs, a custom resource, so it must be a DNS-1123
subdomain of at most 253 characters itself: ``-a`` makes the valid Job name ``jf--a``, but no
JobTemplate ``-a`` can ever exist, and the flow would wait for it for ever.
"""

from __future__ import annotations

import json
import re

__all__ = [
    "CREATED_BY_JOB_FLOW",
    "CREATED_BY_JOB_TEMPLATE",
    "MAX_JOB_NAME_LENGTH",
    "MAX_LABEL_VALUE_LENGTH",
    "MAX_TEMPLATE_NAME_LENGTH",
    "entry_name_problems",
    "flow_label_problems",
    "is_subdomain",
    "job_flow_label_problems",
    "job_name",
    "job_name_problems",
    "template_name_problems",
]

#: The longest Job name both the API server and Volcano's job webhook accept.
MAX_JOB_NAME_LENGTH = 63
#: The longest label value the API server accepts.
MAX_LABEL_VALUE_LENGTH = 63
#: The longest custom resource name (a DNS-1123 subdomain) the API server accepts.
MAX_TEMPLATE_NAME_LENGTH = 253

#: The label (and annotation) keys whose values the controller derives from the JobFlow.
CREATED_BY_JOB_FLOW = "volcano.sh/createdByJobFlow"
CREATED_BY_JOB_TEMPLATE = "volcano.sh/createdByJobTemplate"

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def job_name(job_flow: str, flow: str) -> str:
    """The name of the Job the controller creates for ``flow``: ``<jobflow>-<flow>``."""
    return f"{job_flow}-{flow}"


def job_name_problems(job_flow: str, flow: str, kind: str = "Flow") -> list[str]:
    """Why the Job created for ``flow`` of ``job_flow`` would be refused its name; empty if it is valid.

    ``kind`` names what ``flow`` is in the messages: ``Flow`` (``spec.flows``) or ``Finally`` (``spec.finally``).
    """
    name = job_name(job_flow, flow)
    problems: list[str] = []
    if len(name) > MAX_JOB_NAME_LENGTH:
        problems.append(
            f"jobflow {kind} {_quote(flow)}: Job name {_quote(name)} is {len(name)} characters long,"
            f" it must be at most {MAX_JOB_NAME_LENGTH}"
        )
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        problems.append(
            f"jobflow {kind} {_quote(flow)}: Job name {_quote(name)} must be a lowercase RFC 1123"
            " subdomain: lowercase letters, digits, '-' and '.', with every '.'-separated part starting"
            " and ending with a letter or digit"
        )
    return problems


def is_subdomain(name: str) -> bool:
    """Whether ``name`` has the shape of a DNS-1123 subdomain (its length is not checked)."""
    return _DNS1123_SUBDOMAIN.fullmatch(name) is not None


def template_name_problems(flow: str, kind: str = "Flow") -> list[str]:
    """Why no JobTemplate can be named ``flow``; empty if one can."""
    problems: list[str] = []
    if len(flow) > MAX_TEMPLATE_NAME_LENGTH:
        problems.append(
            f"jobflow {kind} {_quote(flow)}: JobTemplate name is {len(flow)} characters long,"
            f" it must be at most {MAX_TEMPLATE_NAME_LENGTH}"
        )
    if not _DNS1123_SUBDOMAIN.fullmatch(flow):
        problems.append(
            f"jobflow {kind} {_quote(flow)}: JobTemplate name {_quote(flow)} must be a lowercase RFC 1123"
            " subdomain: lowercase letters, digits, '-' and '.', with every '.'-separated part starting"
            " and ending with a letter or digit"
        )
    return problems


def job_flow_label_problems(namespace: str, job_flow: str) -> list[str]:
    """Why ``<namespace>.<jobflow>`` is not a valid ``volcano.sh/createdByJobFlow`` label value."""
    return _label_value_problems(f"jobflow {_quote(job_flow)}", CREATED_BY_JOB_FLOW, f"{namespace}.{job_flow}")


def flow_label_problems(namespace: str, flow: str, kind: str = "Flow") -> list[str]:
    """Why ``<namespace>.<flow>`` is not a valid ``volcano.sh/createdByJobTemplate`` label value."""
    return _label_value_problems(f"jobflow {kind} {_quote(flow)}", CREATED_BY_JOB_TEMPLATE, f"{namespace}.{flow}")


def entry_name_problems(job_flow: str, namespace: str, flow: str, kind: str = "Flow") -> list[str]:
    """Every name rule on one flow (or finally entry, ``kind="Finally"``) of ``<namespace>/<job_flow>``.

    The Job name, then the JobTemplate name (only what the Job name's message does not already say:
    ``-a`` makes the valid ``jf--a``), then the label value. Rules needing the JobFlow's name or
    namespace are skipped while it has none (a hand-made object; the API server always sets both).
    """
    problems = job_name_problems(job_flow, flow, kind) if job_flow else []
    if not job_flow or is_subdomain(job_name(job_flow, flow)):
        problems.extend(template_name_problems(flow, kind))
    if namespace:
        problems.extend(flow_label_problems(namespace, flow, kind))
    return problems


def _label_value_problems(subject: str, key: str, value: str) -> list[str]:
    # ``subject`` names what the value comes from, e.g. ``jobflow Flow "train"``.
    problems: list[str] = []
    if len(value) > MAX_LABEL_VALUE_LENGTH:
        problems.append(
            f"{subject}: label value {_quote(value)} for {key} is {len(value)} characters long,"
            f" it must be at most {MAX_LABEL_VALUE_LENGTH}"
        )
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(
            f"{subject}: label value {_quote(value)} for {key} must consist of letters, digits, '-', '_'"
            " or '.', and start and end with a letter or digit"
        )
    return problems


def _quote(value: str) -> str:
    # A double-quoted string with JSON escapes, close to Go's %q.
    return json.dumps(value, ensure_ascii=False)
