"""The seam of runs from a template (ours, docs/templates.md): the spec a sync plans, consulted once at its start.

`TemplateRefs.effective(job_flow)` is called by the sync handler before anything else reads the
JobFlow. A JobFlow without `spec.jobFlowTemplateRef` is returned as it is (upstream's path: no
request, no memory). A run is returned with the spec it was fixed to in place of its own
(`apis.jobflowtemplate.effective_job_flow`). At its first sync that spec is resolved from the
template (`apis.jobflowtemplate.resolve`: the template's `spec.jobFlow`, the params merged) and
written into `status.storedJobFlowTemplateSpec` before anything is planned, with a resourceVersion
precondition (a second resolution against an edited template can never replace the first), and the
run gets the `flow.volcano.sh/jobflowtemplate` label if its creator did not set it; that sync ends
there, and the run is planned by the next one, queued at once (a large template's resolution and its
planning are two turns of a worker, so the syncs waiting meanwhile get one in between). From then on
the template is never read again for this run: editing or deleting it changes nothing in flight.

What cannot be resolved is reported with a Warning `InvalidJobFlowTemplate` (once per run
generation and message) and the run is not planned: Pending (written once), no Job, as an invalid
JobFlow. A template that does not exist: the same Warning, and the run waits for it (the
template's add event resumes it, template_source.py). The template is read from the API server,
not the cache: the cache's events only say when to look again. While the template cache cannot
answer yet (CRD just installed, cache syncing) the run is put back for later, with no Warning.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import structlog

from informers.errors import NotFoundError
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.apis.jobflowtemplate import (
    MAX_STORED_SPEC_BYTES,
    STORED_SPEC_FIELD,
    TEMPLATE_LABEL,
    effective_job_flow,
    effective_spec,
    is_resolved,
    resolve,
    stored_spec,
    stored_spec_text,
    template_ref_name,
)
from jobflow_controller.jobflow import constants as c
from jobflow_controller.jobflow.status_writer import StatusWriter
from jobflow_controller.jobflow.template_source import TemplateSource
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.validation.jobflow import validation_message
from jobflow_controller.validation.jobflowtemplate import template_problems
from jobflow_controller.validation.jobflowtemplate_ref import template_ref_problems

if TYPE_CHECKING:
    from jobflow_controller.jobflow.controller import JobFlowQueue

log = structlog.get_logger(__name__)

Obj = Mapping[str, Any]

REASON_INVALID_TEMPLATE: Final = "InvalidJobFlowTemplate"
MESSAGE_NOT_FOUND: Final = 'JobFlowTemplate "%s" not found; the JobFlow waits for it'
MESSAGE_INVALID: Final = 'JobFlowTemplate "%s" cannot run this JobFlow: %s'
#: While the template cache cannot answer yet, the run is looked at again after this long.
NOT_READY_DELAY: Final = 1.0
#: The most template verdicts remembered (cleared past it: one more check each, never a wrong answer).
MAX_TEMPLATE_VERDICTS: Final = 4096
#: A message quoted in an event is cut to this many characters (tenant text, docs/hostile-input.md).
MAX_MESSAGE: Final = 1024


class TemplateRefs:
    """Resolves runs from a template; remembers what it warned about and which stored specs it checked."""

    def __init__(
        self,
        source: TemplateSource,
        clientset: Clientset,
        recorder: Any,
        queue: JobFlowQueue,
        status_writer: StatusWriter,
    ) -> None:
        self.source = source
        self._clientset = clientset
        self._recorder = recorder
        self._queue = queue
        self._writer = status_writer
        self._lock = threading.Lock()
        #: (namespace, name) -> (uid, generation, message) of the last Warning.
        self._warned: dict[tuple[str, str], tuple[str, int, str]] = {}
        #: (namespace, name) -> (uid, generation, the stored spec's JSON, its problem or None).
        self._checked: dict[tuple[str, str], tuple[str, int, str, str | None]] = {}
        #: (namespace, template) -> ((uid, resourceVersion), its problems): a template checked once.
        self._template_verdicts: dict[tuple[str, str], tuple[tuple[str, str], tuple[str, ...]]] = {}

    def effective(self, job_flow: Obj) -> Obj | None:
        """The JobFlow the sync plans, or None when this sync has nothing to do (put back for later)."""
        name = template_ref_name(job_flow)
        if name is None:
            return job_flow
        if is_resolved(job_flow):
            return self._stored(job_flow, name)
        ref_problems = template_ref_problems(job_flow)
        if ref_problems:
            self._warn(job_flow, MESSAGE_INVALID, name, "; ".join(ref_problems))
            self._pending(job_flow)
            return None
        if not self.source.ready():
            self._queue.react(meta.namespace(job_flow), meta.name(job_flow), NOT_READY_DELAY)
            return None
        # The server's copy, not the cache's: a template deleted or edited just before this run was
        # created must not resolve it from the old one. One GET, once per run (or per waiting sync).
        template = self._get(meta.namespace(job_flow), name)
        if template is None:
            self._warn(job_flow, MESSAGE_NOT_FOUND, name)
            self._pending(job_flow)
            return None
        return self._resolve(job_flow, name, template)

    def _get(self, namespace: str, name: str) -> Obj | None:
        """The template from the API server, None when it does not exist (one GET per such sync)."""
        try:
            found: Obj = self._clientset.job_flow_templates(namespace).get(name)
        except NotFoundError:
            return None
        return found

    def _pending(self, job_flow: Obj) -> None:
        """A run that cannot be planned (waiting, or refused): Pending, as an invalid JobFlow, and nothing
        else; its status is written once, when it has none yet. The planner never sees it (a JobFlow
        without flows is no upstream JobFlow to plan)."""
        if jf.phase(job_flow):
            return
        ns, name = meta.namespace(job_flow), meta.name(job_flow)
        body = {
            "metadata": {"resourceVersion": meta.resource_version(job_flow)},
            "status": {"state": {"phase": "Pending"}},
        }
        stored = self._clientset.job_flows(ns).patch_status(name, body)
        self._writer.own_writes.wrote(job_flow, stored)

    def _template_problems(self, template: Obj) -> list[str]:
        """The template's own problems, once per (uid, resourceVersion): its runs share the verdict."""
        version = (meta.uid(template), meta.resource_version(template))
        with self._lock:
            seen = self._template_verdicts.get((meta.namespace(template), meta.name(template)))
        if seen is not None and seen[0] == version and all(version):
            return list(seen[1])
        problems = template_problems(template)
        with self._lock:
            if len(self._template_verdicts) >= MAX_TEMPLATE_VERDICTS:
                self._template_verdicts.clear()
            self._template_verdicts[(meta.namespace(template), meta.name(template))] = (version, tuple(problems))
        return problems

    def _resolve(self, job_flow: Obj, name: str, template: Obj) -> Obj | None:
        problems = self._template_problems(template)
        spec, merge_problems = resolve(template, job_flow)
        problems.extend(merge_problems)
        text = stored_spec_text(spec) if spec is not None else ""
        if len(text) > MAX_STORED_SPEC_BYTES:
            problems.append(
                f"the resolved spec has {len(text)} bytes of JSON, more than the {MAX_STORED_SPEC_BYTES} allowed"
            )
        if spec is not None and not problems:
            candidate = {**job_flow, "spec": effective_spec(spec, job_flow)}
            message = validation_message(candidate, patches=False, retries=False)
            problems.extend([message] if message else [])
        if problems or spec is None:
            self._warn(job_flow, MESSAGE_INVALID, name, "; ".join(problems))
            self._pending(job_flow)
            return None
        stored = self._store(job_flow, name, text)
        with self._lock:  # checked just now: the next sync need not check the same text again
            self._checked[(meta.namespace(stored), meta.name(stored))] = (
                meta.uid(stored),
                meta.generation(stored),
                text,
                None,
            )
        # The run is planned by its next sync, at once: resolving a large template and planning it are
        # two turns of a worker, so the syncs waiting meanwhile get one in between.
        self._queue.react(meta.namespace(stored), meta.name(stored))
        return None

    def _store(self, job_flow: Obj, name: str, text: str) -> Obj:
        """The label (if missing), then the resolved spec with the run's resourceVersion as precondition:
        a 409 (the cache was behind our own earlier write) makes the sync start over from the server."""
        ns, run = meta.namespace(job_flow), meta.name(job_flow)
        client = self._clientset.job_flows(ns)
        current = job_flow
        if meta.labels(job_flow).get(TEMPLATE_LABEL) != name:
            patch = {"metadata": {"labels": {TEMPLATE_LABEL: name}, "resourceVersion": meta.resource_version(current)}}
            current = client.patch(run, patch)
        body = {"metadata": {"resourceVersion": meta.resource_version(current)}, "status": {STORED_SPEC_FIELD: text}}
        stored = client.patch_status(run, body)
        self._writer.own_writes.wrote(current, stored)
        log.info(f"JobFlow {run} runs JobFlowTemplate {name}", jobflow=f"{ns}/{run}")
        return stored

    def _stored(self, job_flow: Obj, name: str) -> Obj | None:
        """A resolved run: its stored spec, checked again whenever its text differs from the last one
        checked (the controller never trusts what it reads)."""
        key, uid = (meta.namespace(job_flow), meta.name(job_flow)), meta.uid(job_flow)
        text = str(jf.status(job_flow).get(STORED_SPEC_FIELD))
        generation = meta.generation(job_flow)
        with self._lock:
            seen = self._checked.get(key)
        if seen is not None and seen[:3] == (uid, generation, text):
            problem = seen[3]
        else:
            stored = stored_spec(job_flow)
            if stored is None:
                problem = f"not a JSON object of at most {MAX_STORED_SPEC_BYTES} bytes"
            else:
                candidate = {**job_flow, "spec": effective_spec(stored, job_flow)}
                problem = validation_message(candidate, patches=False, retries=False)
            with self._lock:
                self._checked[key] = (uid, generation, text, problem)
        if problem is not None:
            self._warn(job_flow, MESSAGE_INVALID, name, f"{STORED_SPEC_FIELD}: {problem}")
            self._pending(job_flow)
            return None
        return effective_job_flow(job_flow)

    def _warn(self, job_flow: Obj, message_fmt: str, *args: str) -> None:
        """The Warning, once per (uid, generation, message): several syncs of one waiting run add one."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        message = (message_fmt % args)[:MAX_MESSAGE]
        verdict = (meta.uid(job_flow), meta.generation(job_flow), message)
        with self._lock:
            if self._warned.get(key) == verdict:
                return
            self._warned[key] = verdict
        log.warning(f"{REASON_INVALID_TEMPLATE}: {message}", jobflow=f"{key[0]}/{key[1]}")
        self._recorder.event(job_flow, c.EVENT_WARNING, REASON_INVALID_TEMPLATE, message)

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        with self._lock:
            self._warned.pop((namespace, name), None)
            self._checked.pop((namespace, name), None)

    def memory_sizes(self) -> dict[str, int]:
        with self._lock:
            return {"template_warnings": len(self._warned), "template_specs_checked": len(self._checked)}
