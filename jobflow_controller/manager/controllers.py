"""The controllers this process runs (upstream's startControllers in app/server.go).

Both modes build them the same way: the single-replica manager once for the process, the sharded
one once per held shard (shards.py), each time over one client and one informer factory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from jobflow_controller.cronjobflow import CronJobFlowController, CronJobFlowMetrics
from jobflow_controller.jobflow import JobFlowController, JobFlowOptions
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflowtrigger import JobFlowTriggerController, TriggerSettings
from jobflow_controller.jobtemplate import JobTemplateController
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.manager.config import (
    CRONJOBFLOW_CONTROLLER,
    JOBFLOW_CONTROLLER,
    JOBFLOWTRIGGER_CONTROLLER,
    JOBTEMPLATE_CONTROLLER,
    Options,
    is_controller_enabled,
)
from jobflow_controller.manager.stops import set_after

Controller = JobFlowController | JobTemplateController | CronJobFlowController | JobFlowTriggerController


def build_controllers(
    clientset: Clientset,
    factory: VolcanoInformerFactory,
    recorder: object,
    options: Options,
    jobflow_metrics: Callable[[], JobFlowMetrics],
    queue_metrics: object,
    cron_metrics: Callable[[], CronJobFlowMetrics | None] = lambda: None,
    triggers: TriggerSettings | None = None,
) -> list[Controller]:
    """The controllers --controllers enables, over one client and one informer factory."""
    controllers: list[Controller] = []
    if is_controller_enabled(JOBFLOW_CONTROLLER, options.controllers):
        controllers.append(
            JobFlowController(
                clientset,
                factory,
                recorder,
                JobFlowOptions(
                    max_requeue_num=options.max_requeue_num,
                    status_write_interval=options.status_write_interval,
                    status_write_qps=options.status_write_qps,
                    status_write_burst=options.status_write_burst,
                    patch_fields=options.patch_fields(),
                    probe_allow_loopback=options.probe_allow_loopback,
                ),
                metrics=jobflow_metrics(),
                queue_metrics_provider=queue_metrics,
            )
        )
    if is_controller_enabled(JOBTEMPLATE_CONTROLLER, options.controllers):
        controllers.append(
            JobTemplateController(
                clientset,
                factory,
                recorder,
                max_requeue_num=options.max_requeue_num,
                queue_metrics_provider=queue_metrics,
            )
        )
    if is_controller_enabled(CRONJOBFLOW_CONTROLLER, options.controllers):
        controllers.append(
            CronJobFlowController(
                clientset, factory, recorder, metrics=cron_metrics(), queue_metrics_provider=queue_metrics
            )
        )
    if is_controller_enabled(JOBFLOWTRIGGER_CONTROLLER, options.controllers):
        settings = triggers or TriggerSettings(tuple(options.trigger_watch_kinds))
        controllers.append(
            JobFlowTriggerController.with_settings(
                clientset, factory, recorder, settings, queue_metrics_provider=queue_metrics
            )
        )
    return controllers


def serve_controller_endpoints(controllers: list[Controller], stop: threading.Event) -> None:
    """The endpoints a controller serves on every replica, leader or not (the trigger endpoint)."""
    for ctrl in controllers:
        if isinstance(ctrl, JobFlowTriggerController):
            ctrl.serve_endpoint(stop)


def run_controllers(
    controllers: list[Controller], stop: threading.Event, hard_stop: threading.Event, options: Options
) -> None:
    """Run every controller until `stop` (drain for --graceful-shutdown-timeout, then `hard_stop`)."""
    set_after(hard_stop, stop, options.graceful_shutdown_timeout)

    def run(ctrl: Controller) -> None:
        ctrl.run(stop, options.worker_threads, drain_timeout=options.graceful_shutdown_timeout, hard_stop=hard_stop)

    threads = [threading.Thread(target=run, args=(ctrl,), name=ctrl.name, daemon=True) for ctrl in controllers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
