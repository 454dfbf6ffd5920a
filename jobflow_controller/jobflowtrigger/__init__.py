"""The JobFlowTrigger controller: JobFlows started by an HTTP call or a watched change (docs/triggers.md)."""

from jobflow_controller.jobflowtrigger.controller import CONTROLLER_NAME, JobFlowTriggerController
from jobflow_controller.jobflowtrigger.settings import TriggerEndpoint, TriggerSettings

__all__ = ["CONTROLLER_NAME", "JobFlowTriggerController", "TriggerEndpoint", "TriggerSettings"]
