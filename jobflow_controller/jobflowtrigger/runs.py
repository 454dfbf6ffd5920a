"""The I/O of a trigger's runs: fire one, tidy up the finished ones, write the status.

Every firing and every sync of one trigger holds that trigger's lock (a fixed set of striped locks,
so the memory does not grow with the triggers), and starts from a fresh GET of the trigger, so two
firings at once (two POSTs, a POST and a resource event) never decide on the same `status.active`
nor lose a `triggeredCount` increment: the status is written with the GET's resourceVersion, and a
conflict (the spec edited meanwhile) re-reads and writes again.

A firing: refuse params the template (when it exists) would refuse (`template_refusal`: the JobFlow
controller would mark the run invalid and, without the webhook, it would stay active for good),
drop the finished runs from `status.active` (`reconcile_children`, CronJobFlow's), apply
`concurrencyPolicy` (`decide.decide_fire`), delete the active runs for `Replace` (uid-checked, as
the CronJobFlow's), create the run `<trigger>-<5 random lowercase letters>` (another suffix if the
name is taken), record `Triggered`, and write `lastTriggerTime`, `triggeredCount` and `active`.
"""

from __future__ import annotations

import datetime
import secrets
import string
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import structlog

from informers.errors import ApiStatusError, NotFoundError
from jobflow_controller.apis import cronjobflow as cjf
from jobflow_controller.apis import jobflowtrigger as jft
from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import format_time
from jobflow_controller.cronjobflow.decide import history_deletes, is_recorded_run, reconcile_children
from jobflow_controller.jobflowtrigger import events as ev
from jobflow_controller.jobflowtrigger.decide import decide_fire
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import AlreadyExistsError, ConflictError
from jobflow_controller.validation.jobflowtemplate import run_params_problems

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]
#: Striped locks: triggers whose keys hash alike share one (they then fire one after the other).
LOCK_STRIPES: Final = 64
#: Names tried for one run before the firing fails (5 letters: 11,881,376 names per trigger).
NAME_ATTEMPTS: Final = 3
#: The API server's codes for a run it refuses as invalid (BadRequest, Invalid).
REFUSED_CODES: Final = frozenset({400, 422})
#: Status writes tried on conflicts before the firing gives up on the status (the run stays).
STATUS_ATTEMPTS: Final = 5


class FireError(Exception):
    """A firing that made no run; `status` is the HTTP code for the caller (409 Forbid, 400 when the
    template or the API server refuses the run as invalid, 500 else)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def create_refusal_status(err: BaseException) -> int:
    """The caller's HTTP code when the run's create failed: 400 when the API server refused the run
    itself (400 BadRequest, as a webhook's denial, or 422 Invalid, as the CRD's schema and rules: a
    param the template does not declare, a value out of bounds), the caller's to fix; 500 for the
    API server's own failures (and anything else), which a retry may cure."""
    if isinstance(err, ApiStatusError) and err.code in REFUSED_CODES:
        return 400
    return 500


def template_refusal(trigger: Obj, params: Sequence[Mapping[str, str]], template: Obj | None) -> str | None:
    """Why the template refuses the run's `params` (an undeclared param, a required one missing), or
    None. A template that does not exist refuses nothing: the run waits for it (docs/triggers.md)."""
    if template is None:
        return None
    problems = run_params_problems(jft.new_run(trigger, meta.name(trigger), params), template)
    if not problems:
        return None
    return ev.MESSAGE_TEMPLATE_REFUSES % "; ".join(problems)


def run_name(trigger_name: str) -> str:
    suffix = "".join(secrets.choice(string.ascii_lowercase) for _ in range(jft.RUN_SUFFIX_CHARS))
    return f"{trigger_name}-{suffix}"


@dataclass
class _State:
    trigger: Obj
    active: list[dict[str, Any]]
    changed: bool = False


class TriggerRuns:
    """Fires triggers and keeps their status; `children(trigger)` lists its JobFlows from the cache."""

    def __init__(self, clientset: Clientset, recorder: Any, children: Any) -> None:
        self.clientset = clientset
        self.recorder = recorder
        self.children = children
        self._locks = [threading.Lock() for _ in range(LOCK_STRIPES)]

    def lock(self, namespace: str, name: str) -> threading.Lock:
        return self._locks[zlib.crc32(f"{namespace}/{name}".encode()) % LOCK_STRIPES]

    def _event(self, trigger: Obj, type_: str, reason: str, message: str) -> None:
        self.recorder.event(trigger, type_, reason, message)

    def _fresh(self, namespace: str, name: str) -> Obj | None:
        try:
            found: Obj = self.clientset.job_flow_triggers(namespace).get(name)
        except NotFoundError:
            return None
        return found

    def _observe(self, trigger: Obj, now: datetime.datetime) -> _State:
        """The active runs, finished ones dropped, history beyond the limits deleted."""
        children = self.children(trigger)
        deleted = {meta.uid(c) for c in history_deletes(trigger, children) if self._delete(trigger, c, "Background")}
        children = [c for c in children if meta.uid(c) not in deleted]
        reconciled = reconcile_children(trigger, children, now)
        active = [ref for ref in reconciled.active if str(ref.get("uid") or "") not in deleted]
        for ref in reconciled.unverified:
            if not is_recorded_run(ref, self._get_run(trigger, ref), trigger):
                active = [r for r in active if r.get("uid") != ref.get("uid")]
        return _State(trigger, active, changed=active != [dict(r) for r in cjf.active(trigger)])

    def _template(self, trigger: Obj) -> Obj | None:
        """The trigger's JobFlowTemplate (one GET, so an edit just made counts), None when it does not
        exist; another failure fails the firing with 500 (a retry may cure it)."""
        name = jft.template_name(trigger)
        try:
            found: Obj = self.clientset.job_flow_templates(meta.namespace(trigger)).get(name)
        except NotFoundError:
            return None
        except Exception as err:
            raise FireError(500, ev.cut(ev.MESSAGE_TEMPLATE_READ % (name, err))) from err
        return found

    def _get_run(self, trigger: Obj, ref: Mapping[str, Any]) -> Obj | None:
        try:
            found: Obj = self.clientset.job_flows(meta.namespace(trigger)).get(str(ref.get("name") or ""))
        except NotFoundError:
            return None
        return found

    def _delete(self, trigger: Obj, run: Obj, propagation: str) -> bool:
        try:
            self.clientset.job_flows(meta.namespace(run)).delete(
                meta.name(run), propagation_policy=propagation, uid=meta.uid(run) or None
            )
        except (NotFoundError, ConflictError):
            return True  # gone, or the name holds another object now: ours is gone
        except Exception as err:  # noqa: BLE001 - reported; the next sync tries again
            log.warning("could not delete jobflow", trigger=_key(trigger), jobflow=meta.name(run), error=str(err))
            return False
        return True

    def sync(self, namespace: str, name: str, now: datetime.datetime) -> None:
        """Tidy the trigger's runs: history limits and `status.active` (no run is started)."""
        with self.lock(namespace, name):
            trigger = self._fresh(namespace, name)
            if trigger is None:
                return
            state = self._observe(trigger, now)
            if state.changed:
                self._write_status(state, fired_at=None)

    def fire(self, namespace: str, name: str, params: Sequence[Mapping[str, str]], now: datetime.datetime) -> str:
        """Start one run of the trigger with `params`; its name, or `FireError`."""
        with self.lock(namespace, name):
            trigger = self._fresh(namespace, name)
            if trigger is None:
                raise FireError(404, f"jobflowtrigger {namespace}/{name} not found")
            refusal = template_refusal(trigger, params, self._template(trigger))
            if refusal is not None:
                raise FireError(400, ev.cut(refusal))
            state = self._observe(trigger, now)
            decision = decide_fire(trigger, state.active)
            if not decision.start:
                if state.changed:
                    self._write_status(state, fired_at=None)
                raise FireError(409, ev.MESSAGE_FORBID % decision.blocked_by)
            for ref in decision.replace:
                run = self._get_run(trigger, ref)
                if (
                    run is not None
                    and is_recorded_run(ref, run, trigger)
                    and not self._delete(trigger, run, "Foreground")
                ):
                    raise FireError(500, f"cannot replace the active jobflow {ref.get('name')}")
                state.active = [r for r in state.active if r.get("uid") != ref.get("uid")]
            created = self._create(trigger, params)
            state.active.append(cjf.object_reference(created))
            self._event(
                trigger, ev.NORMAL, ev.TRIGGERED, ev.MESSAGE_TRIGGERED % (meta.name(created), jft.kind_of(trigger))
            )
            self._write_status(state, fired_at=now)
            return meta.name(created)

    def _create(self, trigger: Obj, params: Sequence[Mapping[str, str]]) -> Obj:
        client = self.clientset.job_flows(meta.namespace(trigger))
        for attempt in range(NAME_ATTEMPTS):
            try:
                created: Obj = client.create(jft.new_run(trigger, run_name(meta.name(trigger)), params))
            except AlreadyExistsError:
                if attempt + 1 == NAME_ATTEMPTS:
                    raise FireError(500, "no free run name after 3 tries") from None
                continue
            except Exception as err:
                raise FireError(create_refusal_status(err), ev.MESSAGE_CREATE % ev.cut(str(err))) from err
            return created
        raise FireError(500, "no free run name")  # pragma: no cover - the loop returns or raises

    def _write_status(self, state: _State, fired_at: datetime.datetime | None) -> None:
        trigger = state.trigger
        client = self.clientset.job_flow_triggers(meta.namespace(trigger))
        for _ in range(STATUS_ATTEMPTS):
            status = dict(jft.status(trigger))
            status["active"] = state.active
            if fired_at is not None:
                status["lastTriggerTime"] = format_time(fired_at)
                status["triggeredCount"] = min(jft.MAX_TRIGGERED, jft.triggered_count(trigger) + 1)
            try:
                client.update_status({**trigger, "status": status})
                return
            except ConflictError:
                fresh = self._fresh(meta.namespace(trigger), meta.name(trigger))
                if fresh is None or meta.uid(fresh) != meta.uid(trigger):
                    return
                trigger = fresh
        log.warning("gave up writing the trigger's status after conflicts", trigger=_key(trigger))


def _key(obj: Obj) -> str:
    return f"{meta.namespace(obj)}/{meta.name(obj)}"
