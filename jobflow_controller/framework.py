"""What the controllers share, as Volcano's `pkg/controllers/framework`: registry, options, queue, workers.

As upstream's framework.go, a controller registers itself (`register_controller`, upstream's
`RegisterController` in each package's init), is built from one `ControllerOption` (`initialize`,
upstream's `Initialize(opt)`), and runs until its stop (`run`); the manager iterates the registry
(`registered_controllers`, upstream's `ForeachController`) instead of naming each controller.
Registering another is a decorator on its class and an import in manager/controllers.py.

A controller's `Wiring` holds its `QueueController`, hands it the sync handler and drop event, and
gives the client-go worker loop in three layers: `_run_worker` loops until the queue shuts down,
`_process_next_work_item` does the queue bookkeeping, `sync_handler` holds the business logic and
knows nothing of retries. `handle_err` is upstream's `handleJobFlowErr`/`handleJobTemplateErr`.

Stopping comes in two strengths, because a controller that writes after losing its lease races
the new leader. A *drain* (SIGTERM: `stop` with a `drain_timeout`) lets the workers sync what is
already queued until the queue is empty or the deadline passes. A *hard stop* (the lease is lost:
`hard_stop`; the drain's deadline passed; or no drain was asked for) starts no sync at all: a worker
that still gets an item from the queue marks it done untouched and exits. client-go's queue keeps
handing out queued items after `ShutDown` until it is empty, so the queue alone cannot give this;
the check sits in `_process_next_work_item`. A sync already running cannot be interrupted (Python
has no context cancellation): `shut_down` waits `IN_FLIGHT_SYNC_GRACE` for those.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, TypedDict, TypeVar, Unpack

import structlog

from informers import ResourceEventHandlerFuncs, wait_for_cache_sync
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import is_conflict
from jobflow_controller.kube.informers import VolcanoInformerFactory
from workqueue import Clock, QueueStorage, RateLimitingQueue, RealClock, default_controller_rate_limiter

log = structlog.get_logger(__name__)

#: Upstream's default for --max-requeue-num: 5 ms doubling to ~82 s, about 164 s of retries in all.
DEFAULT_MAX_REQUEUE_NUM = 15

#: How long `shut_down` waits for syncs that were already running when the stop became hard (the
#: drain deadline passed, or the lease was lost). They cannot be interrupted, and the manager must
#: not release the lease under them; the manager budgets for this past --graceful-shutdown-timeout.
IN_FLIGHT_SYNC_GRACE = 5.0

#: How often the controller's own thread looks at `hard_stop` while waiting for `stop`. Workers
#: look at it directly before every sync, so this only bounds how soon idle workers are woken.
HARD_STOP_POLL = 0.05

#: How long a request whose write still conflicted after `retry.DEFAULT_RETRY` waits before its
#: next try. It is not a failure, so it neither uses up --max-requeue-num nor grows the backoff.
CONFLICT_REQUEUE_DELAY = 0.1


T = TypeVar("T")


def _request_keys(req: Any) -> dict[str, str]:
    return {"request": str(req)}


@dataclass(frozen=True)
class ControllerOption:
    """Upstream's `framework.ControllerOption`: what every controller is built from, one object for all.

    Upstream's struct carries every controller's own fields too; here those are in `settings`, a
    factory per type (a controller's options, its metrics), so that this module names no controller
    and a disabled controller's metrics are never made. `setting(T)` is the one of type T, or None.
    """

    clientset: Clientset
    informer_factory: VolcanoInformerFactory
    recorder: Any
    max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM
    queue_metrics_provider: object | None = None
    clock: Clock | None = None
    settings: Mapping[type, Callable[[], object]] = field(default_factory=dict)

    def setting(self, kind: type[T]) -> T | None:
        make = self.settings.get(kind)
        value = make() if make is not None else None
        return value if isinstance(value, kind) else None


class Stops(TypedDict, total=False):
    """How a controller's run ends besides `stop`: `QueueController.run_workers`' drain and hard stop."""

    drain_timeout: float | None
    hard_stop: threading.Event | None


class Controller(Protocol):
    """Upstream's `framework.Controller`: `Name()`, `Initialize(opt)`, `Run(stopCh)`.

    `initialize` makes the controller (Python builds the object rather than filling a zero value);
    `run` takes the drain and hard stop of framework's `QueueController.run_workers`."""

    name: str

    @classmethod
    def initialize(cls, opt: ControllerOption) -> Self: ...

    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None: ...


_REGISTRY: dict[str, type[Controller]] = {}
ControllerType = TypeVar("ControllerType", bound=type[Controller])


def register_controller(controller: ControllerType) -> ControllerType:
    """Upstream's `RegisterController`, as a class decorator; a second controller of a name is refused."""
    if _REGISTRY.get(controller.name, controller) is not controller:
        raise ValueError(f"controller {controller.name!r} is already registered")
    _REGISTRY[controller.name] = controller
    return controller


def registered_controllers() -> Iterator[type[Controller]]:
    """Upstream's `ForeachController`: the registered controllers, in the order they registered."""
    return iter(list(_REGISTRY.values()))


class Wiring:
    """What every controller is wired from, written once: its `QueueController` (the option's clock,
    retries and queue metrics; `queue_kwargs` override them), the informers it watches, each with its
    lister and handlers, and `run`, which starts the factory and waits for those informers' caches."""

    def __init__(
        self,
        opt: ControllerOption,
        name: str,
        queue_name: str,
        sync_handler: Callable[[Any], None],
        on_dropped: Callable[[Any, BaseException], None] | None,
        **queue_kwargs: Any,
    ) -> None:
        defaults = {"max_requeue_num": opt.max_requeue_num, "queue_metrics_provider": opt.queue_metrics_provider}
        arguments: dict[str, Any] = {"clock": opt.clock, **defaults, **queue_kwargs}
        self.workers = QueueController(name, queue_name, sync_handler, on_dropped, **arguments)
        self.queue, self.clock = self.workers.queue, self.workers.clock
        self.informer_factory = opt.informer_factory
        self._informers: list[Any] = []

    def watch(self, source: Any, handlers: ResourceEventHandlerFuncs | None = None) -> tuple[Any, Any]:
        """client-go's `Informer().AddEventHandler(handlers)` and `Lister()` in one call; the informer's
        cache is waited for by `run`."""
        informer, lister = source.informer(), source.lister()
        if handlers is not None:
            informer.add_event_handler(handlers)
        self._informers.append(informer)
        return informer, lister

    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None:
        synced = [informer.has_synced for informer in self._informers]
        self.workers.run_workers(stop, workers, self.informer_factory.start, *synced, **stops)


class QueueController:
    """A rate-limited queue drained by N workers through `sync_handler`, with bounded retries.

    `sync_handler(req)` holds the business logic and raises on failure; `on_dropped(req, err)` (if
    any) is called when a request has failed `max_requeue_num` times and leaves the queue; `log_keys(req)`
    gives the key=value pairs that name the request's object in log lines; `before_drain()` runs
    once the stop is asked for, before the queue shuts down (what must still be queued for the
    drain).
    """

    def __init__(
        self,
        name: str,
        queue_name: str,
        sync_handler: Callable[[Any], None],
        on_dropped: Callable[[Any, BaseException], None] | None,
        *,
        log_keys: Callable[[Any], dict[str, str]] = _request_keys,
        before_drain: Callable[[], None] | None = None,
        max_requeue_num: int = DEFAULT_MAX_REQUEUE_NUM,
        clock: Clock | None = None,
        queue_metrics_provider: object | None = None,
        queue_storage: QueueStorage[Hashable] | None = None,
    ) -> None:
        self.name = name
        self.sync_handler = sync_handler
        self.on_dropped = on_dropped
        self.log_keys = log_keys
        self._before_drain = before_drain
        self.clock = clock or RealClock()
        # Upstream turns any negative value into -1: retry forever.
        self.max_requeue_num = -1 if max_requeue_num < 0 else max_requeue_num
        self.queue: RateLimitingQueue[Hashable] = RateLimitingQueue(
            default_controller_rate_limiter(),
            name=queue_name,
            clock=self.clock,
            metrics_provider=queue_metrics_provider,  # type: ignore[arg-type]
            queue=queue_storage,
        )
        self._workers: list[threading.Thread] = []
        # Set once the stop is hard (drain deadline passed, or no drain): no new sync starts.
        self._stopped_hard = threading.Event()
        # The caller's "stop now" event (lease lost), read directly so no sync starts after it.
        self._hard_stop: threading.Event | None = None
        # `stop` when it was given without a drain: setting it is already a hard stop.
        self._no_drain_stop: threading.Event | None = None

    # -- run ------------------------------------------------------------------------------------
    def run_workers(
        self,
        stop: threading.Event,
        workers: int,
        start_informers: Callable[[threading.Event], None],
        *has_synced: Callable[[], bool],
        drain_timeout: float | None = None,
        hard_stop: threading.Event | None = None,
    ) -> None:
        """Start the informers, wait for their caches, run the workers until `stop` is set.

        `stop` alone asks for a drain of at most `drain_timeout` seconds (none when it is None).
        `hard_stop` means "stop now, drain nothing": the manager sets it when the lease is lost, as
        another replica may already be writing. Workers read it before every sync, so from the
        moment it is set no new sync starts, even before `stop` follows.
        """
        self._hard_stop = hard_stop
        if drain_timeout is None or drain_timeout <= 0:
            # No drain: `stop` itself is the hard stop, read by the workers as soon as it is set.
            self._no_drain_stop = stop
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
            if hard_stop is None:
                stop.wait()
            else:
                while not stop.wait(HARD_STOP_POLL) and not hard_stop.is_set():
                    pass
        finally:
            self.shut_down(drain_timeout)

    def must_stop_now(self) -> bool:
        """True once the stop is hard: the lease is lost, the drain's deadline passed, or no drain."""
        if self._stopped_hard.is_set():
            return True
        return any(event is not None and event.is_set() for event in (self._hard_stop, self._no_drain_stop))

    def shut_down(self, drain_timeout: float | None = None) -> None:
        """Stop taking work: drain for at most `drain_timeout` seconds, then start nothing new.

        The queue is shut down at once (no new adds; a retry asked for now is dropped, and the next
        leader's initial list brings the object back). While draining, workers keep syncing what is
        queued; they exit when it is empty. The drain ends early when every worker has exited or the
        stop turns hard. After that no sync starts, and the workers still inside one get one shared
        `IN_FLIGHT_SYNC_GRACE` between them, not one each, so N workers cannot take N times as long.
        """
        if self._before_drain is not None:
            self._before_drain()
        if drain_timeout is None or drain_timeout <= 0:
            self._stopped_hard.set()
        self.queue.shut_down()
        if not self.must_stop_now():
            assert drain_timeout is not None
            drained = self._join_workers(time.monotonic() + drain_timeout, interrupted=self.must_stop_now)
            if not drained:
                log.info("drain ended before the queue was empty", controller=self.name, hard=self.must_stop_now())
        self._stopped_hard.set()
        if not self._join_workers(time.monotonic() + IN_FLIGHT_SYNC_GRACE):
            log.warning("workers still syncing after the grace period", controller=self.name)

    def _join_workers(self, deadline: float, interrupted: Callable[[], bool] | None = None) -> bool:
        """Join every worker by one shared `deadline`; False if one is still alive when it passes
        (or as soon as `interrupted()` turns true)."""
        for thread in self._workers:
            while thread.is_alive():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (interrupted is not None and interrupted()):
                    return False
                thread.join(min(remaining, HARD_STOP_POLL) if interrupted is not None else remaining)
        return True

    def _until(self, stop: threading.Event) -> None:
        """`wait.Until(worker, 1s, stopCh)`: restart the worker a second after it returns."""
        while not stop.is_set() and not self.queue.shutting_down() and not self.must_stop_now():
            self._run_worker()
            if self.clock.sleep(1.0, stop):
                return

    def _run_worker(self) -> None:
        while self._process_next_work_item():
            pass

    def _process_next_work_item(self) -> bool:
        """Take one request and sync it; False when the worker should exit.

        Once the stop is hard, a request still handed out is marked done without a sync and the
        worker exits. It is not forgotten or requeued: its retry count is left as it was, and the
        object comes back through the next leader's initial list.
        """
        req, shutdown = self.queue.get()
        if shutdown:
            return False
        if self.must_stop_now():
            log.debug("not syncing: the controller is stopping", controller=self.name, **self.log_keys(req))
            self.queue.done(req)
            return False
        try:
            err: BaseException | None = None
            try:
                self.sync_handler(req)
            except Exception as e:  # noqa: BLE001 - a failed sync is retried, never fatal
                err = e
            if err is not None and self.must_stop_now():
                # The stop turned hard during the sync (its requests may have been cancelled):
                # neither a retry nor a drop, since the next leader lists the object afresh.
                log.info("sync cut short by the stop", controller=self.name, **self.log_keys(req), error=str(err))
                return False
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
        if self.on_dropped is not None:
            self.on_dropped(req, err)
        log.info("dropping request out of the queue", controller=self.name, **self.log_keys(req), error=str(err))
        self.queue.forget(req)
