"""Ours, opt-in (docs/params.md): a flow's Jobs under `params` and `matrix`, decided as pure functions.

A flow without `matrix` has its one Job `<jobflow>-<flow>`; a matrix flow has one Job per
combination i (0-based, product order), `<jobflow>-<flow>-<i>`. Each Job is built as a flow's
(template, patch, owner, createdBy keys), then every string of its spec, labels and annotations is
expanded (`parametrize`), and a matrix Job gets its index label and its values annotation.

`next_indexes` is the fan-out rule: at most `maxParallel` of the flow's Jobs unfinished at once,
new indexes in index order, none after a failure. `matrix_outcome` is the flow's outcome from its
Jobs': Failed as soon as one failed (after its retries), Completed once all completed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.meta import Obj
from jobflow_controller.apis.params import (
    MATRIX_INDEX_LABEL,
    MATRIX_PARAMS_ANNOTATION,
    Matrix,
    Param,
    matrix_job_name,
    matrix_params_json,
)
from jobflow_controller.apis.rules import Outcome
from jobflow_controller.apis.substitution import expand_values, job_variables


@dataclass(frozen=True)
class FlowJobSpec:
    """One Job a flow makes: its name, and for a matrix flow its index and values."""

    job_name: str
    index: int | None = None
    combination: tuple[tuple[str, str], ...] = ()


def flow_jobs(job_flow_name: str, flow_name: str, matrix: Matrix | None) -> list[FlowJobSpec]:
    """The flow's Jobs in index order: one `<jobflow>-<flow>`, or `<jobflow>-<flow>-<i>` per combination."""
    if matrix is None:
        return [FlowJobSpec(jf.job_name(job_flow_name, flow_name))]
    return [
        FlowJobSpec(matrix_job_name(job_flow_name, flow_name, i), i, combination)
        for i, combination in enumerate(matrix.combinations())
    ]


def parametrize(
    job: Mapping[str, Any], job_flow: Obj, flow_name: str, params: Sequence[Param], spec: FlowJobSpec
) -> dict[str, Any]:
    """A copy of the built `job` with its spec, labels and annotations expanded, and its matrix keys.

    The matrix label and annotation are added after the expansion: they record the values as declared.
    """
    variables = job_variables(job_flow, flow_name, [(p.name, p.value) for p in params], spec.combination, spec.index)
    out = dict(job)
    metadata = dict(job.get("metadata") or {})
    labels = expand_values(metadata.get("labels") or {}, variables)
    annotations = expand_values(metadata.get("annotations") or {}, variables)
    if spec.index is not None:
        labels[MATRIX_INDEX_LABEL] = str(spec.index)
        annotations[MATRIX_PARAMS_ANNOTATION] = matrix_params_json(spec.combination)
    metadata["labels"], metadata["annotations"] = labels, annotations
    out["metadata"] = metadata
    out["spec"] = expand_values(job.get("spec") or {}, variables)
    return out


class JobState(StrEnum):
    """Where one Job of a flow stands, as the planner sees it."""

    ABSENT = "Absent"  # never created (or gone, with nothing to bring it back)
    UNFINISHED = "Unfinished"  # created and not ended, or being re-created by a retry
    COMPLETED = "Completed"
    FAILED = "Failed"  # ended Failed or Terminated, no retry left


def matrix_outcome(states: Sequence[JobState]) -> str | None:
    """Failed as soon as one Job failed; Completed once every one completed; else None (not ended)."""
    if any(s == JobState.FAILED for s in states):
        return Outcome.FAILED
    if states and all(s == JobState.COMPLETED for s in states):
        return Outcome.COMPLETED
    return None


def next_indexes(states: Sequence[JobState], max_parallel: int) -> list[int]:
    """The never-created indexes to create now, in index order: room under `max_parallel`, none after a failure."""
    if any(s == JobState.FAILED for s in states):
        return []
    room = max_parallel - sum(1 for s in states if s == JobState.UNFINISHED)
    if room <= 0:
        return []
    return [i for i, s in enumerate(states) if s == JobState.ABSENT][:room]
