"""The CronJobFlow controller: JobFlows on a schedule, as Kubernetes' CronJob controller runs Jobs (docs/cron.md)."""

from jobflow_controller.cronjobflow.controller import CONTROLLER_NAME, CronJobFlowController
from jobflow_controller.cronjobflow.metrics import CronJobFlowMetrics

__all__ = ["CONTROLLER_NAME", "CronJobFlowController", "CronJobFlowMetrics"]
