"""The JobTemplate controller (pkg/controllers/jobtemplate)."""

from jobflow_controller.jobtemplate.controller import CONTROLLER_NAME, JobTemplateController

__all__ = ["CONTROLLER_NAME", "JobTemplateController"]
