"""The admission rules on the failure-aware fields (ours, opt-in; docs/rules.md).

`spec.flows[].dependsOn.rule`, `spec.flows[].continueOnFailure`, `spec.failurePolicy` and
`spec.finally`. Each value the planner could not act on is refused with a message naming the field
and what it may hold, in the style of the other flow rules (`jobflow Flow "<flow>": <field>: ...`).
The patch of a finally entry is checked with the flows' patches (`patch`); everything else about
these fields is here:

* a flow: an unknown `dependsOn.rule`; a `rule` without targets (a rule decides over the targets'
  outcomes, a flow without targets has none); a `dependsOn.probe` with a rule other than
  `AllCompleted` (the probes look into the targets' running Jobs, which only that rule waits for);
  a `continueOnFailure` that is not a boolean;
* the JobFlow: an unknown `failurePolicy`; a `finally` that is not a list, or has more than
  `MAX_FINALLY` entries; an entry that is not an object or has no name; a finally name that
  repeats a flow's (both would be the Job `<jobflow>-<name>`) or another finally entry's; a
  finally name that breaks the name rules a flow's name obeys (`names.entry_name_problems`).

The values are the API's (`apis.rules`, docs/rules.md); the CRD's enums are generated from the same tuples.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from jobflow_controller.apis.rules import FailurePolicy, Rule
from jobflow_controller.validation.limits import MAX_FINALLY, too_many_finally_message
from jobflow_controller.validation.names import entry_name_problems, job_name
from jobflow_controller.validation.rawflows import raw_flows

__all__ = [
    "DEFAULT_RULE",
    "FAILURE_POLICIES",
    "RULES",
    "failure_aware_problems",
    "failure_aware_spec",
    "finally_problems",
    "flow_rule_problems",
]

#: `spec.flows[].dependsOn.rule` (`apis.rules.Rule`), in the order the docs and messages list them.
RULES: Final = tuple(rule.value for rule in Rule)
DEFAULT_RULE: Final = Rule.ALL_COMPLETED.value
#: `spec.failurePolicy` (`apis.rules.FailurePolicy`); the first is the default (upstream's behaviour).
FAILURE_POLICIES: Final = tuple(policy.value for policy in FailurePolicy)

_FINALLY_NAMES_NOT_UNIQUE: Final = "jobflow Finally names must be unique"


def failure_aware_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """Every problem with the failure-aware fields: each flow's (spec order), the policy's, finally's."""
    problems = [err for prefix, flow in raw_flows(job_flow) for err in flow_rule_problems(prefix, flow)]
    spec = _mapping(_mapping(job_flow).get("spec"))
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in FAILURE_POLICIES:
        problems.append(f"jobflow failurePolicy: must be one of {', '.join(FAILURE_POLICIES)}, got {_json(policy)}")
    problems.extend(finally_problems(job_flow))
    return problems


def failure_aware_spec(job_flow: Mapping[str, Any]) -> tuple[Any, Any]:
    """The JobFlow-level fields (`finally`, `failurePolicy`): an UPDATE that changes them is checked in full."""
    spec = _mapping(_mapping(job_flow).get("spec"))
    return spec.get("finally") or None, spec.get("failurePolicy")


def flow_rule_problems(prefix: str, flow: Mapping[str, Any]) -> list[str]:
    """The problems of one flow's `dependsOn.rule` and `continueOnFailure`, each after ``prefix``."""
    problems: list[str] = []
    depends_on = flow.get("dependsOn")
    rule = depends_on.get("rule") if isinstance(depends_on, Mapping) else None
    if isinstance(depends_on, Mapping) and rule is not None:
        if rule not in RULES:
            problems.append(f"{prefix}: dependsOn.rule: must be one of {', '.join(RULES)}, got {_json(rule)}")
        targets = depends_on.get("targets")
        if not isinstance(targets, list) or not targets:
            problems.append(
                f"{prefix}: dependsOn.rule: {_json(rule)} needs dependsOn.targets"
                " (a rule decides over the targets' outcomes; this flow has none)"
            )
        elif rule in RULES and rule != DEFAULT_RULE and depends_on.get("probe") is not None:
            problems.append(
                f"{prefix}: dependsOn.probe: only allowed with the rule {DEFAULT_RULE}, not {_json(rule)}"
                " (a probe checks the targets' running Jobs, which only that rule waits for)"
            )
    continue_on_failure = flow.get("continueOnFailure")
    if continue_on_failure is not None and not isinstance(continue_on_failure, bool):
        problems.append(f"{prefix}: continueOnFailure: must be true or false, got {_json(continue_on_failure)}")
    return problems


def finally_problems(job_flow: Mapping[str, Any]) -> list[str]:
    """The problems of `spec.finally`: its shape and size, then each entry's name, in spec order."""
    entries = _mapping(_mapping(job_flow).get("spec")).get("finally")
    if entries is None:
        return []
    if not isinstance(entries, list):
        return [f"jobflow finally: must be a list of {{name, patch}} entries, got {_json(entries)}"]
    problems = [too_many_finally_message(len(entries))] if len(entries) > MAX_FINALLY else []
    metadata = _mapping(_mapping(job_flow).get("metadata"))
    job_flow_name, namespace = _string(metadata.get("name")), _string(metadata.get("namespace"))
    flow_names = {_string(flow.get("name")) for _prefix, flow in raw_flows(job_flow)}
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping):
            problems.append(f"jobflow finally[{index}]: must be an object with a name, got {_json(entry)}")
        elif name is None or name == "":
            problems.append(f"jobflow finally[{index}]: has no name (the JobTemplate it runs)")
        elif not isinstance(name, str):
            problems.append(f"jobflow finally[{index}].name: must be a string, got {_json(name)}")
        elif name in seen:
            problems.append(f"{_FINALLY_NAMES_NOT_UNIQUE}: {_json(name)}")
        else:
            seen.add(name)
            problems.extend(_finally_name_problems(job_flow_name, namespace, name, flow_names))
    return problems


def _finally_name_problems(job_flow: str, namespace: str, name: str, flow_names: set[str]) -> list[str]:
    """A first finally entry's name: not a flow's, and a valid name as a flow's must be."""
    if name in flow_names:
        job = job_name(job_flow or "<jobflow>", name)
        return [f"jobflow Finally {_json(name)}: repeats the name of a flow (both would be the Job {_json(job)})"]
    return entry_name_problems(job_flow, namespace, name, kind="Finally")


def _json(value: object) -> str:
    # The value as the user wrote it in JSON (strings quoted, like Go's %q), cut short when long.
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""
