"""flow.volcano.sh/v1alpha1 and batch.volcano.sh/v1alpha1: names, phases, accessors and builders.

Objects are the API's JSON dicts. Everything here reads them without mutating them (they may be the
informer cache's shared copies) and builds new dicts for what the controllers write.
"""

from jobflow_controller.apis.constants import (
    BATCH_GROUP,
    BATCH_GROUP_VERSION,
    CREATED_BY_JOB_FLOW,
    CREATED_BY_JOB_TEMPLATE,
    FINISHED_PHASES,
    FLOW_GROUP,
    FLOW_GROUP_VERSION,
    JOB_FLOW_KIND,
    JOB_KIND,
    JOB_TEMPLATE_KIND,
    UNFINISHED_PHASES,
    VERSION,
    VOLCANO,
    Action,
    Event,
    JobPhase,
    Phase,
    RetainPolicy,
)
from jobflow_controller.apis.request import FlowRequest

__all__ = [
    "BATCH_GROUP",
    "BATCH_GROUP_VERSION",
    "CREATED_BY_JOB_FLOW",
    "CREATED_BY_JOB_TEMPLATE",
    "FINISHED_PHASES",
    "FLOW_GROUP",
    "FLOW_GROUP_VERSION",
    "JOB_FLOW_KIND",
    "JOB_KIND",
    "JOB_TEMPLATE_KIND",
    "UNFINISHED_PHASES",
    "VERSION",
    "VOLCANO",
    "Action",
    "Event",
    "FlowRequest",
    "JobPhase",
    "Phase",
    "RetainPolicy",
]
