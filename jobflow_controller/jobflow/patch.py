"""Ours (upstream ignores `patch.jobSpec`, docs/patch.md): say early that a flow's patch cannot apply.

Plugged into the flow policy as its patch hook (`HOOK`, flow_policy.py `PatchHook`) for a JobFlow a flow
of which has a patch: `check` for a flow still waiting on its targets (`waiting`, asked by `deploy_job`),
so the user hears of a patch that can never apply now, not hours later when the targets have
completed; `apply` merges the patch into the spec of the Job upstream built from the template
(`finish_job`), and a patch that fails then gets the same WarningEvent.
"""

from __future__ import annotations

from typing import Any

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.patch import PatchError
from jobflow_controller.apis.patch_fields import apply_allowed_patch
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.world import FlowJob, WarningEvent, World


def check_patch(world: World, flow: jf.Flow) -> WarningEvent | None:
    """The WarningEvent for a waiting flow whose patch cannot apply to its JobTemplate, if any.

    Only for a flow that has a patch and whose template exists (a missing one is reported when the
    flow is due, as upstream reports it).
    """
    if flow.patch is None:
        return None
    template = world.templates.get(flow.name)
    if template is None:
        return None
    try:
        apply_allowed_patch(jf.spec(template), flow.patch, world.spec.patch_fields)
    except PatchError as err:
        return invalid_patch(world.job_name(flow.name), flow.name, err)
    return None


def invalid_patch(job_name: str, flow_name: str, err: PatchError) -> WarningEvent:
    """One WarningEvent naming the Job, the flow, the template and the problem; the correlator dedups repeats."""
    return WarningEvent(c.REASON_INVALID_PATCH, c.MESSAGE_INVALID_PATCH, (job_name, flow_name, flow_name, err))


class _PatchHook:
    """A flow's patch at the flow policy's named points (flow_policy.py `PatchHook`)."""

    def check(self, world: World, flow: jf.Flow) -> WarningEvent | None:
        return check_patch(world, flow)

    def apply(self, world: World, made: FlowJob, job: dict[str, Any]) -> dict[str, Any] | WarningEvent:
        """The spec patched (a new object: the template's spec came from the informer cache)."""
        try:
            job["spec"] = apply_allowed_patch(job["spec"], made.flow.patch, world.spec.patch_fields)
        except PatchError as err:
            return invalid_patch(made.job_name, made.flow.name, err)
        return job


HOOK = _PatchHook()
