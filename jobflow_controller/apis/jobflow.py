"""Read-only accessors over flow.volcano.sh/v1alpha1 JobFlow and JobTemplate dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobflow_controller.apis.meta import Obj


class Outcome(StrEnum):
    """How a flow ended. Aborted is none: a suspended Volcano Job can resume. Upstream's rule knows only
    Completed; the failure-aware rules (docs/rules.md) know all three."""

    COMPLETED = "Completed"
    FAILED = "Failed"
    SKIPPED = "Skipped"


@dataclass(frozen=True)
class Flow:
    """One entry of `spec.flows`.

    `targets` is None when upstream's `DependsOn == nil || DependsOn.Targets == nil` holds (the Job
    is created at once); an empty tuple is the non-nil `targets: []`, which upstream sends through
    `judge` with zero iterations (also created at once).
    """

    name: str
    targets: tuple[str, ...] | None
    #: The raw `dependsOn.probe` (ours, docs/probe.md); None when absent or null. Read by
    #: `apis.probe`, which says what is wrong with it, if anything.
    probe: Any = field(default=None, compare=False, hash=False)
    #: The raw `patch` (ours, docs/patch.md); None when absent or null. Read by `apis.patch`.
    patch: Any = field(default=None, compare=False, hash=False)
    #: `dependsOn.rule` (ours, docs/rules.md); None when absent: upstream's AllCompleted.
    rule: str | None = None
    #: `continueOnFailure` (ours, docs/rules.md): this flow's failure does not fail the JobFlow.
    continue_on_failure: bool = False
    #: The raw `when` and `matrix` (ours, docs/params.md); None when absent or null. Read by `apis.params`.
    when: Any = field(default=None, compare=False, hash=False)
    matrix: Any = field(default=None, compare=False, hash=False)
    #: The raw `results` (ours, docs/results.md); None when absent or null. Read by `apis.results`.
    results: Any = field(default=None, compare=False, hash=False)


def spec(obj: Obj) -> Mapping[str, Any]:
    value = obj.get("spec") if isinstance(obj, (dict, Mapping)) else None
    return value if isinstance(value, (dict, Mapping)) else {}


def status(obj: Obj) -> Mapping[str, Any]:
    value = obj.get("status") if isinstance(obj, (dict, Mapping)) else None
    return value if isinstance(value, (dict, Mapping)) else {}


def skipped_jobs(job_flow: Obj) -> list[str]:
    """The stored status's `skippedJobs` (the Jobs of the flows a condition skipped), empty when unset."""
    recorded = status(job_flow).get("skippedJobs")
    return [str(n) for n in recorded] if isinstance(recorded, list) else []


def raw_flow_list(job_flow: Obj) -> list[Any]:
    """`spec.flows` when it is a list (the CRD's schema says so), else empty."""
    value = spec(job_flow).get("flows")
    return value if isinstance(value, list) else []


def flows(job_flow: Obj) -> list[Flow]:
    out = []
    for raw in raw_flow_list(job_flow):
        if not isinstance(raw, (dict, Mapping)):
            continue
        depends_on = raw.get("dependsOn")
        targets: tuple[str, ...] | None = None
        probe: Any = None
        rule: str | None = None
        if isinstance(depends_on, (dict, Mapping)):
            if isinstance(depends_on.get("targets"), list):
                targets = tuple(str(t) for t in depends_on["targets"])
            probe = depends_on.get("probe")
            rule = str(depends_on["rule"]) if depends_on.get("rule") else None
        out.append(
            Flow(
                name=str(raw.get("name") or ""),
                targets=targets,
                probe=probe,
                patch=raw.get("patch"),
                rule=rule,
                continue_on_failure=raw.get("continueOnFailure") is True,
                when=raw.get("when"),
                matrix=raw.get("matrix"),
                results=raw.get("results"),
            )
        )
    return out


def has_probes(job_flow: Obj) -> bool:
    """Whether a flow has a `dependsOn.probe` (`flows`' reading), without building the flows: the
    Job handlers ask it for every Job event."""
    for raw in raw_flow_list(job_flow):
        if isinstance(raw, (dict, Mapping)):
            depends_on = raw.get("dependsOn")
            if isinstance(depends_on, (dict, Mapping)) and depends_on.get("probe") is not None:
                return True
    return False


def flow_patch(job_flow: Obj, flow_name: str) -> Any:
    """The raw `patch` value of the first flow named `flow_name` (None when absent or null).

    Not checked here: `apis.patch` says what is wrong with it, if anything.
    """
    for raw in spec(job_flow).get("flows") or []:
        if isinstance(raw, (dict, Mapping)) and str(raw.get("name") or "") == flow_name:
            return raw.get("patch")
    return None


def job_retain_policy(job_flow: Obj) -> str:
    return str(spec(job_flow).get("jobRetainPolicy") or "")


def phase(job_flow: Obj) -> str:
    state = status(job_flow).get("state")
    return str(state.get("phase") or "") if isinstance(state, (dict, Mapping)) else ""


def job_status_list(job_flow: Obj) -> list[Mapping[str, Any]]:
    value = status(job_flow).get("jobStatusList")
    return [e for e in value if isinstance(e, (dict, Mapping))] if isinstance(value, list) else []


def job_name(job_flow_name: str, flow_name: str) -> str:
    """`getJobName`: the Job a flow creates is "<jobflow>-<flow>"."""
    return f"{job_flow_name}-{flow_name}"
