"""Read-only accessors over flow.volcano.sh/v1alpha1 JobFlow and JobTemplate dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

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


#: Fields, annotations and status stamps of ours that say an extension is in use (`extensions`); the
#: modules of each extension import their names from here.
#: The run's field naming its template (docs/templates.md).
REF_FIELD: Final = "jobFlowTemplateRef"
#: Where a run keeps the spec it was resolved to (as Argo's `status.storedWorkflowTemplateSpec`), as
#: compact JSON text: a string is bounded by one `maxLength`, where an object of the spec's schema
#: would double the JobFlow CRD past what a client-side `kubectl apply` can store (256 KiB).
STORED_SPEC_FIELD: Final = "storedJobFlowTemplateSpec"
#: The JobFlow annotation holding per-flow retry policies, for clusters running upstream's CRD (docs/retry.md).
RETRY_ANNOTATION: Final = "flow.volcano.sh/retry"
#: The JobFlow annotation carrying a re-run request (docs/lifecycle.md).
RETRY_REQUEST_ANNOTATION: Final = "flow.volcano.sh/retry-request"
#: The `runningHistories` state recorded for each retry, from the delete to the re-created Job.
RETRYING: Final = "Retrying"
#: The same for a re-run asked for by `kubectl jobflow retry` (docs/lifecycle.md): it re-creates the
#: Job as a retry does, and raises restartCount, but spends none of the flow's `maxRetries`.
RERUN: Final = "Rerun"
RECREATING: Final = frozenset({RETRYING, RERUN})


class Extension(StrEnum):
    """Our extensions, each named once: a JobFlow that uses none of them is planned by upstream's rule
    alone, and each extension's seam is skipped (not called) for a JobFlow that does not use it."""

    TEMPLATE = "template"  # spec.jobFlowTemplateRef, or a run's stored spec (docs/templates.md)
    LIFECYCLE = "lifecycle"  # suspend, shutdown, deadlines, TTL, or their stamps in the status
    RERUN = "rerun"  # the annotation flow.volcano.sh/retry-request (docs/lifecycle.md)
    RETRY = "retry"  # a flow's retry, or the annotation flow.volcano.sh/retry (docs/retry.md)
    ATTEMPTS = "attempts"  # Jobs created again: retry, rerun, or a `Retrying`/`Rerun` history recorded
    PARAMS = "params"  # params, when, matrix (docs/params.md)
    RESULTS = "results"  # a flow's or the JobFlow's results (docs/results.md)
    RULES = "rules"  # failurePolicy, finally, dependsOn.rule, continueOnFailure (docs/rules.md)
    PATCH = "patch"  # a flow's (or a finally flow's) patch (docs/patch.md)
    PROBES = "probes"  # dependsOn.probe (docs/probe.md)


#: The fields of ours, by where they are set, and the extension each belongs to. Upstream's own are
#: `spec.flows`, `spec.jobRetainPolicy`, a flow's `name` and `dependsOn.targets`.
_SPEC_FIELDS = {
    REF_FIELD: Extension.TEMPLATE,
    "suspend": Extension.LIFECYCLE,
    "shutdown": Extension.LIFECYCLE,
    "activeDeadlineSeconds": Extension.LIFECYCLE,
    "ttlSecondsAfterFinished": Extension.LIFECYCLE,
    "params": Extension.PARAMS,
    "results": Extension.RESULTS,
    "failurePolicy": Extension.RULES,
    "finally": Extension.RULES,
}
_FLOW_FIELDS = {
    "activeDeadlineSeconds": Extension.LIFECYCLE,
    "retry": Extension.RETRY,
    "when": Extension.PARAMS,
    "matrix": Extension.PARAMS,
    "results": Extension.RESULTS,
    "continueOnFailure": Extension.RULES,
    "patch": Extension.PATCH,
}
_DEPENDS_ON_FIELDS = {"rule": Extension.RULES, "probe": Extension.PROBES}
_ANNOTATIONS = {RETRY_ANNOTATION: Extension.RETRY, RETRY_REQUEST_ANNOTATION: Extension.RERUN}
_STATUS_FIELDS = {
    STORED_SPEC_FIELD: Extension.TEMPLATE,
    "suspendedSince": Extension.LIFECYCLE,
    "finishedAt": Extension.LIFECYCLE,
    "retryRequest": Extension.LIFECYCLE,
}


def extensions(job_flow: Obj) -> frozenset[Extension]:
    """The extensions `job_flow` uses: one pass over its spec's keys (and its flows'), its annotations and
    its status's stamps, so every seam of the sync asks this answer instead of parsing its fields.

    A key counts when it is set (not null), whatever its value: a seam that runs for a value its
    parser then ignores answers as upstream, so this only ever errs on the side of running it.
    """
    found: set[Extension] = set()
    fields = spec(job_flow)
    found.update(ext for key, ext in _SPEC_FIELDS.items() if fields.get(key) is not None)
    for raw in raw_flow_list(job_flow):
        if not isinstance(raw, Mapping):
            continue
        found.update(ext for key, ext in _FLOW_FIELDS.items() if raw.get(key) is not None)
        depends_on = raw.get("dependsOn")
        if isinstance(depends_on, Mapping):
            found.update(ext for key, ext in _DEPENDS_ON_FIELDS.items() if depends_on.get(key) is not None)
    if isinstance(fields.get("finally"), list) and any(
        isinstance(f, Mapping) and f.get("patch") is not None for f in fields["finally"]
    ):
        found.add(Extension.PATCH)
    annotations = _metadata(job_flow).get("annotations")
    if isinstance(annotations, Mapping):
        found.update(ext for key, ext in _ANNOTATIONS.items() if key in annotations)
    stamps = status(job_flow)
    found.update(ext for key, ext in _STATUS_FIELDS.items() if stamps.get(key) is not None)
    if found & {Extension.RETRY, Extension.RERUN} or _recreated(job_flow):
        found.add(Extension.ATTEMPTS)
    return frozenset(found)


def _recreated(job_flow: Obj) -> bool:
    """Whether the status records a Job created again (a `Retrying` or `Rerun` history entry)."""
    for entry in job_status_list(job_flow):
        histories = entry.get("runningHistories")
        if isinstance(histories, list) and any(
            isinstance(h, Mapping) and h.get("state") in RECREATING for h in histories
        ):
            return True
    return False


def _metadata(obj: Obj) -> Mapping[str, Any]:
    value = obj.get("metadata") if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}
