"""The JobFlow controller (pkg/controllers/jobflow), on our informers and work queue."""

from jobflow_controller.jobflow.controller import CONTROLLER_NAME, JobFlowController, JobFlowOptions

__all__ = ["CONTROLLER_NAME", "JobFlowController", "JobFlowOptions"]
