"""What both controllers share, as Volcano's `pkg/controllers/framework`: the queue and its workers.

A controller subclasses `QueueController`, gives its sync handler and its drop event, and gets the
client-go worker loop in three layers: `_run_worker` loops until the queue shuts down,
`_process_next_work_item` does the queue bookkeeping, `sync_handler` holds the business logic and
knows nothing of retries. `handle_err` is upstream's `handleJobFlowErr`/`handleJobTemplateErr`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

import structlog

from informers import wait_for_cache_sync
from jobflow_controller.kube.errors import is_conflict
from workqueue import Clock, RateLimitingQueue, RealClock, default_controller_rate_limiter

log = structlog.get_logger(__name__)

#: Upstream's default for --max-requeue-num: 5 ms doubling to ~82 s, about 164 s of retries in all.
DEFAULT_MAX_REQUEUE_NUM = 15

#: How long a request whose write still conflicted after `retry.DEFAULT_RETRY` waits before its
#: next try. It is not a failure, so it neither uses up --max-requeue-num nor grows the backoff.
CONFLICT_REQUEUE_DELAY = 0.1


class QueueController:
    """A rate-limited queue drained by N workers through `sync_handler`, with bounded retries."""

    name = "controller"

    def __init__(
        self,
        queue_name: str,
        *,
        max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM,
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
    ) -> None:
        self.clock = clock or RealClock()
        # Upstream turns any negative value into -1: retry forever.
        self.max_requeue_num = -1 if max_requeue_num < 0 else max_requeue_num
        self.queue: RateLimitingQueue[Hashable] = RateLimitingQueue(
            default_controller_rate_limiter(),
            name=queue_name,
            clock=self.clock,
            metrics_provider=queue_metrics_provider,  # type: ignore[arg-type]
        )
        self._workers: list[threading.Thread] = []

    # -- what a controller provides ------------------------------------------------------------
    def sync_handler(self, req: Hashable) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def log_keys(self, req: Hashable) -> dict[str, str]:
        """The key=value pairs that name the request's object in log lines."""
        return {"request": str(req)}

    def on_dropped(self, req: Hashable, err: BaseException) -> None:  # pragma: no cover - abstract
        """Called when a request has failed `max_requeue_num` times and leaves the queue."""
        raise NotImplementedError

    # -- run ------------------------------------------------------------------------------------
    def run_workers(
        self,
        stop: threading.Event,
        workers: int,
        start_informers: Callable[[threading.Event], None],
        *has_synced: Callable[[], bool],
        drain_timeout: float | None = None,
    ) -> None:
        """Start the informers, wait for their caches, run the workers until `stop` is set."""
        try:
            start_informers(stop)
            if not wait_for_cache_sync(stop, *has_synced):
                log.error("caches failed to sync", controller=self.name)
                return
            count = max(1, workers)
            for i in range(count):
                thread = threading.Thread(target=self._until, args=(stop,), name=f"{self.name}-{i}", daemon=True)
                thread.start()
                self._workers.append(thread)
            log.info("controller is running", controller=self.name, workers=count)
            stop.wait()
        finally:
            self.shut_down(drain_timeout)

    def shut_down(self, drain_timeout: float | None = None) -> None:
        """Stop taking work; with `drain_timeout`, let the workers finish what is queued first."""
        if drain_timeout is not None:
            drainer = threading.Thread(target=self.queue.shut_down_with_drain, daemon=True)
            drainer.start()
            drainer.join(drain_timeout)
        self.queue.shut_down()
        for thread in self._workers:
            thread.join(timeout=drain_timeout if drain_timeout is not None else 5.0)

    def _until(self, stop: threading.Event) -> None:
        """`wait.Until(worker, 1s, stopCh)`: restart the worker a second after it returns."""
        while not stop.is_set() and not self.queue.shutting_down():
            self._run_worker()
            if self.clock.sleep(1.0, stop):
                return

    def _run_worker(self) -> None:
        while self._process_next_work_item():
            pass

    def _process_next_work_item(self) -> bool:
        req, shutdown = self.queue.get()
        if shutdown:
            return False
        try:
            err: BaseException | None = None
            try:
                self.sync_handler(req)
            except Exception as e:  # noqa: BLE001 - a failed sync is retried, never fatal
                err = e
            self.handle_err(err, req)
        finally:
            self.queue.done(req)
        return True

    def handle_err(self, err: BaseException | None, req: Hashable) -> None:
        """Forget on success; retry with backoff below max_requeue_num (-1: always); then drop.

        A conflict is someone else's write racing ours, not a failure of the request (the sync
        already re-read and retried it): the request comes back shortly without being counted,
        so another client's edits can never push a JobFlow to its Warning and out of the queue.
        """
        if err is None:
            self.queue.forget(req)
            return
        if is_conflict(err):
            log.info("requeue after conflict", controller=self.name, **self.log_keys(req), error=str(err))
            self.queue.add_after(req, CONFLICT_REQUEUE_DELAY)
            return
        if self.max_requeue_num == -1 or self.queue.num_requeues(req) < self.max_requeue_num:
            log.info("requeue", controller=self.name, **self.log_keys(req), error=str(err))
            self.queue.add_rate_limited(req)
            return
        self.on_dropped(req, err)
        log.info("dropping request out of the queue", controller=self.name, **self.log_keys(req), error=str(err))
        self.queue.forget(req)
