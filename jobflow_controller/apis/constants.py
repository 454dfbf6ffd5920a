"""Names and enums exactly as Volcano declares them (flow/v1alpha1, batch/v1alpha1, jobflow/constant.go)."""

from __future__ import annotations

from enum import StrEnum

FLOW_GROUP = "flow.volcano.sh"
BATCH_GROUP = "batch.volcano.sh"
#: Volcano's command bus (`bus/v1alpha1`): a Command asks Volcano's job controller to act on a Job.
BUS_GROUP = "bus.volcano.sh"
VERSION = "v1alpha1"
FLOW_GROUP_VERSION = f"{FLOW_GROUP}/{VERSION}"
BATCH_GROUP_VERSION = f"{BATCH_GROUP}/{VERSION}"
BUS_GROUP_VERSION = f"{BUS_GROUP}/{VERSION}"

JOB_FLOW_KIND = "JobFlow"
JOB_TEMPLATE_KIND = "JobTemplate"
JOB_KIND = "Job"
COMMAND_KIND = "Command"
#: Ours (docs/cron.md): JobFlows on a schedule, as Kubernetes' CronJob runs Jobs.
CRON_JOB_FLOW_KIND = "CronJobFlow"
#: Ours (docs/templates.md): a reusable JobFlow spec with declared params, run by reference.
JOB_FLOW_TEMPLATE_KIND = "JobFlowTemplate"
#: Ours (docs/triggers.md): JobFlows started by an event.
JOB_FLOW_TRIGGER_KIND = "JobFlowTrigger"

#: Substring upstream looks for in an owner reference's apiVersion to find the owning JobFlow.
VOLCANO = "volcano"
#: Label and annotation keys put on every Job a JobFlow creates; values are "<namespace>.<name>".
CREATED_BY_JOB_TEMPLATE = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW = "volcano.sh/createdByJobFlow"


class Phase(StrEnum):
    """A JobFlow's `status.state.phase` (the CRD enum)."""

    SUCCEED = "Succeed"
    TERMINATING = "Terminating"
    FAILED = "Failed"
    RUNNING = "Running"
    PENDING = "Pending"


#: The phases a JobFlow never leaves (a Failed one is not synced any more; a Succeed one only for its
#: retain policy), and those it is still working in ("" is a JobFlow no sync has written yet).
FINISHED_PHASES = frozenset({Phase.SUCCEED, Phase.FAILED})
UNFINISHED_PHASES = frozenset({"", Phase.PENDING, Phase.RUNNING})


class JobPhase(StrEnum):
    """A Volcano Job's `status.state.phase`."""

    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


class RetainPolicy(StrEnum):
    RETAIN = "retain"
    DELETE = "delete"


class Action(StrEnum):
    SYNC_JOB_FLOW = "SyncJobFlow"
    SYNC_JOB_TEMPLATE = "SyncJobTemplate"
    #: What the jobtemplate controller actually enqueues: upstream never sets an action there.
    NONE = ""


class Event(StrEnum):
    OUT_OF_SYNC = "OutOfSync"
    NONE = ""
