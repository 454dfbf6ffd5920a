"""The JobTemplate controller: records which Jobs were made from each template.

Faithful to upstream, quirks included: it reacts to adds only (a template, or a Job labelled with a
template), it lists the Jobs carrying `volcano.sh/createdByJobTemplate=<ns>.<name>` and writes their
names to `status.jobDependsOnList` only when there is at least one, never clearing it; a dropped
request's Warning event has an empty reason and the message `" JobTemplate failed for <err>"`.
Two fixes, in docs/deviations.md: the label value is split at the first dot only, so template
names with dots are handled (upstream requires exactly two parts and silently ignores them); and a
Job whose label names another namespace's template enqueues nothing, since the sync lists only the
template's own namespace and any tenant can write that label on a Job (upstream syncs the other
namespace's template for it).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import Any, Self, Unpack

import structlog

from informers import ResourceEventHandlerFuncs
from informers.errors import NotFoundError
from jobflow_controller.apis import CREATED_BY_JOB_TEMPLATE, FlowRequest, meta
from jobflow_controller.framework import ControllerOption, Stops, Wiring, register_controller
from jobflow_controller.jobtemplate.batching import DEFAULT_BATCH_WINDOW, SyncBatcher
from jobflow_controller.kube.conflict import DEFAULT_RETRY, retry_on_conflict
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_TEMPLATE

log = structlog.get_logger(__name__)

CONTROLLER_NAME = "jobtemplate-controller"
QUEUE_NAME = "jobtemplate"
EVENT_WARNING = "Warning"
MESSAGE_SYNC_FAILED = "%s JobTemplate failed for %s"


def get_template_string(namespace: str, name: str) -> str:
    """`GetTemplateString`: the "<namespace>.<name>" label value."""
    return f"{namespace}.{name}"


def split_template_label(value: str) -> tuple[str, str] | None:
    """Split "<namespace>.<template>" at the first dot; None when there is no dot at all."""
    namespace, dot, name = value.partition(".")
    return (namespace, name) if dot else None


@register_controller
class JobTemplateController:
    """Keeps each JobTemplate's `status.jobDependsOnList`: the Jobs created from it."""

    name = CONTROLLER_NAME

    def __init__(self, opt: ControllerOption, *, batch_window: float = DEFAULT_BATCH_WINDOW) -> None:
        self.wiring = Wiring(
            opt, CONTROLLER_NAME, QUEUE_NAME, self.sync_handler, self.on_dropped, log_keys=self.log_keys
        )
        self.workers, self.queue, self.clock = self.wiring.workers, self.wiring.queue, self.wiring.clock
        self.clientset, self.informer_factory, self.recorder = opt.clientset, opt.informer_factory, opt.recorder
        self.batcher = SyncBatcher(batch_window)
        self.job_template_informer, self.job_template_lister = self.wiring.watch(
            opt.informer_factory.job_templates(), ResourceEventHandlerFuncs(add_func=self.add_job_template)
        )
        self.job_informer, self.job_lister = self.wiring.watch(
            opt.informer_factory.jobs(), ResourceEventHandlerFuncs(add_func=self.add_job)
        )

    @classmethod
    def initialize(cls, opt: ControllerOption) -> Self:
        return cls(opt)

    def enqueue_job_template(self, req: FlowRequest) -> None:
        self.queue.add(req)

    # -- handlers -----------------------------------------------------------------------------
    def add_job_template(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if isinstance(obj, Mapping):
            self.enqueue_job_template(FlowRequest(meta.namespace(obj), job_template_name=meta.name(obj)))

    def add_job(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if not isinstance(obj, Mapping):
            return
        value = meta.labels(obj).get(CREATED_BY_JOB_TEMPLATE, "")
        if not value:
            return
        parts = split_template_label(value)
        if parts is None or parts[0] != meta.namespace(obj):
            return
        # Upstream enqueues at once; ours shares one sync among the Jobs of a burst (batching.py).
        req = FlowRequest(parts[0], job_template_name=parts[1])
        delay = self.batcher.delay(req, self.clock.now())
        if delay is None:
            return
        if delay <= 0:
            self.enqueue_job_template(req)
        else:
            self.queue.add_after(req, delay)

    # -- run and sync ---------------------------------------------------------------------------
    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None:
        self.wiring.run(stop, workers, **stops)

    def sync_handler(self, req: Hashable) -> None:
        assert isinstance(req, FlowRequest)
        try:
            job_template = self.job_template_lister.job_templates(req.namespace).get(req.job_template_name)
        except NotFoundError:
            log.info(
                f"JobTemplate {req.job_template_name} has been deleted.",
                jobtemplate=f"{req.namespace}/{req.job_template_name}",
            )
            return
        except Exception as err:
            # Upstream prints req.JobFlowName here, which is always empty for template requests.
            raise RuntimeError(f"get jobTemplate {req.job_flow_name} failed for {err}") from err
        # RetryOnConflict, as the JobFlow sync: each retry re-reads the template from the API server.
        attempts = 0

        def attempt() -> None:
            nonlocal attempts
            attempts += 1
            current = job_template if attempts == 1 else self._get_latest_job_template(req)
            if current is not None:
                self.sync_job_template(current)

        try:
            retry_on_conflict(DEFAULT_RETRY, attempt)
        except Exception as err:
            raise RuntimeError(
                f"sync jobTemplate {req.job_flow_name} failed for {err}, event is {req.event}, action is {req.action}"
            ) from err

    def _get_latest_job_template(self, req: FlowRequest) -> Mapping[str, Any] | None:
        try:
            latest: Mapping[str, Any] = self.clientset.job_templates(req.namespace).get(req.job_template_name)
        except NotFoundError:
            return None
        return latest

    def sync_job_template(self, job_template: Mapping[str, Any]) -> None:
        ns, name = meta.namespace(job_template), meta.name(job_template)
        # Upstream lists the namespace with `volcano.sh/createdByJobTemplate=<ns>.<name>`; the
        # label-value index finds the same Jobs without a scan.
        jobs = self.job_lister.by_label_index(BY_CREATED_BY_JOB_TEMPLATE, get_template_string(ns, name), ns)
        if not jobs:
            return
        names = sorted(meta.name(j) for j in jobs)
        status = dict(job_template.get("status") or {})
        if status.get("jobDependsOnList") == names:
            return
        status["jobDependsOnList"] = names
        try:
            self.clientset.job_templates(ns).update_status({**job_template, "status": status})
        except Exception as err:
            log.error(f"Failed to update status of JobTemplate {ns}/{name}: {err}", jobtemplate=f"{ns}/{name}")
            raise

    def log_keys(self, req: Hashable) -> dict[str, str]:
        assert isinstance(req, FlowRequest)
        return {"jobtemplate": f"{req.namespace}/{req.job_template_name}"}

    def on_dropped(self, req: Hashable, err: BaseException) -> None:
        assert isinstance(req, FlowRequest)
        try:
            job_template = self.job_template_lister.job_templates(req.namespace).get(req.job_template_name)
        except Exception:  # noqa: BLE001 - nothing to attach the event to
            return
        self.recorder.event(job_template, EVENT_WARNING, str(req.action), MESSAGE_SYNC_FAILED % (req.action, err))
