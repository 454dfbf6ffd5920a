"""The controllers this process runs (upstream's startControllers in app/server.go).

As upstream's, the manager names no controller: each registers itself with the framework
(`register_controller` on its class, imported by config.py as upstream's blank imports do), and the
manager builds the ones --controllers enables from one `ControllerOption` (`initialize`) and runs
them. Both modes build them the same way: the single-replica manager once for the process, the
sharded one once per held shard (shards.py), each time over one client and one informer factory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from jobflow_controller.cronjobflow import CronJobFlowMetrics
from jobflow_controller.framework import Controller, ControllerOption, registered_controllers
from jobflow_controller.jobflow import JobFlowOptions
from jobflow_controller.jobflow.state.metrics import JobFlowMetrics
from jobflow_controller.jobflowtrigger import TriggerSettings
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.informers import VolcanoInformerFactory
from jobflow_controller.manager.config import Options, is_controller_enabled, known_controllers
from jobflow_controller.manager.stops import set_after

__all__ = ["Controller", "build_controllers", "controller_option", "run_controllers", "serve_controller_endpoints"]


def controller_option(
    clientset: Clientset,
    factory: VolcanoInformerFactory,
    recorder: object,
    options: Options,
    jobflow_metrics: Callable[[], JobFlowMetrics],
    queue_metrics: object,
    cron_metrics: Callable[[], CronJobFlowMetrics | None] = lambda: None,
    triggers: TriggerSettings | None = None,
) -> ControllerOption:
    """The one options object every controller is built from: the flags, and each controller's own
    settings and metrics by type (made only when a controller asks, so only for an enabled one)."""

    def jobflow_options() -> JobFlowOptions:
        return JobFlowOptions(
            max_requeue_num=options.max_requeue_num,
            status_write_interval=options.status_write_interval,
            status_write_qps=options.status_write_qps,
            status_write_burst=options.status_write_burst,
            patch_fields=options.patch_fields(),
            probe_allow_loopback=options.probe_allow_loopback,
        )

    return ControllerOption(
        clientset,
        factory,
        recorder,
        max_requeue_num=options.max_requeue_num,
        queue_metrics_provider=queue_metrics,
        settings={
            JobFlowOptions: jobflow_options,
            JobFlowMetrics: jobflow_metrics,
            CronJobFlowMetrics: cron_metrics,
            TriggerSettings: lambda: triggers or TriggerSettings(tuple(options.trigger_watch_kinds)),
        },
    )


def build_controllers(opt: ControllerOption, enabled: list[str]) -> list[Controller]:
    """The registered controllers `enabled` (--controllers) names, all from the one `opt`, in the order
    of `known_controllers` (the JobFlow controller first), whatever order they were imported in."""
    order = known_controllers()
    chosen = [c for c in registered_controllers() if is_controller_enabled(c.name, enabled)]
    return [controller.initialize(opt) for controller in sorted(chosen, key=lambda c: order.index(c.name))]


def serve_controller_endpoints(controllers: list[Controller], stop: threading.Event) -> None:
    """The endpoints a controller serves on every replica, leader or not (the trigger endpoint)."""
    for ctrl in controllers:
        serve: Callable[[threading.Event], None] | None = getattr(ctrl, "serve_endpoint", None)
        if serve is not None:
            serve(stop)


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
