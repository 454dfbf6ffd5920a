"""`JobFlow`: a pipeline written in Python, checked locally, submitted, watched and drawn.

    with JobFlow("ml-pipeline", namespace="team-a", params={"dataset": "s3://d/1"}) as jf:
        prep = jf.flow("data-preprocess")
        train = jf.flow("model-training", matrix={"lr": ["0.1", "0.01"]}, max_parallel=1)
        prep >> train
    jf.validate()          # [] or the webhook's messages
    jf.create(); jf.wait() # "Succeed", or JobFlowFailedError naming the failed flows

The builder holds names and fields, and `to_dict()` writes the API object in a fixed key order; the
rules are the controller's own (jobflow_sdk.validate), the requests go through
jobflow_controller.kube (jobflow_sdk.run). A flow given a `JobTemplate` takes its name, and
`create()`/`apply()` send the template first (server-side apply: running a cell twice is harmless).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from jobflow_controller.apis.constants import JOB_FLOW_KIND
from jobflow_controller.apis.results import recorded_own_results, recorded_results
from jobflow_controller.kube.resources import JOB_FLOWS, JOB_TEMPLATES
from jobflow_sdk import _yaml, run
from jobflow_sdk.errors import InvalidJobFlowError
from jobflow_sdk.flow import Flow
from jobflow_sdk.template import API_VERSION, JobTemplate

#: spec fields in the order `to_dict` writes them; Python's spelling -> the CRD's.
SPEC_FIELDS = {
    "job_retain_policy": "jobRetainPolicy",
    "failure_policy": "failurePolicy",
    "suspend": "suspend",
    "shutdown": "shutdown",
    "active_deadline_seconds": "activeDeadlineSeconds",
    "ttl_seconds_after_finished": "ttlSecondsAfterFinished",
}


def _opt(value: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(value) if value else None


class JobFlow:
    """A `flow.volcano.sh/v1alpha1` JobFlow, built flow by flow."""

    kind = JOB_FLOW_KIND

    def __init__(
        self,
        name: str,
        *,
        namespace: str | None = None,
        params: Mapping[str, str] | None = None,
        results: Mapping[str, str] | None = None,
        job_retain_policy: str | None = None,
        failure_policy: str | None = None,
        suspend: bool | None = None,
        shutdown: str | None = None,
        active_deadline_seconds: int | None = None,
        ttl_seconds_after_finished: int | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        connection: run.Connection | None = None,
    ) -> None:
        self.name, self.namespace = name, namespace
        self.params: dict[str, str] = dict(params or {})
        #: `spec.results`: the JobFlow's own results, `{name: value}`, a value usually a flow's result
        #: (`train.results.model`), resolved into `status.results` when the JobFlow Succeeds.
        self.own_results: dict[str, str] = dict(results or {})
        self.spec_fields: dict[str, Any] = {
            "job_retain_policy": job_retain_policy,
            "failure_policy": failure_policy,
            "suspend": suspend,
            "shutdown": shutdown,
            "active_deadline_seconds": active_deadline_seconds,
            "ttl_seconds_after_finished": ttl_seconds_after_finished,
        }
        self.labels, self.annotations = dict(labels or {}), dict(annotations or {})
        self.flows: list[Flow] = []
        self.finally_flows: list[Flow] = []
        self.templates: list[JobTemplate] = []
        #: spec fields this SDK has no argument for (a newer CRD's), kept so `from_dict` round-trips.
        self.extra_spec: dict[str, Any] = {}
        self.connection = connection
        #: The last object the API server returned (create, apply, wait): its status and version.
        self.server_object: dict[str, Any] | None = None

    # -- building -------------------------------------------------------------------------------
    def __enter__(self) -> JobFlow:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _tb: TracebackType | None
    ) -> None:
        return None

    def _adopt(self, step: str | JobTemplate) -> str:
        if isinstance(step, JobTemplate):
            if step.namespace is None:
                step.namespace = self.namespace
            if all(t is not step for t in self.templates):
                self.templates.append(step)
            return step.name
        return step

    def flow(self, step: str | JobTemplate, **fields: Any) -> Flow:
        """Add a flow running the JobTemplate `step` (or named `step`); `fields` are `Flow`'s
        (`after`, `rule`, `probe`, `when`, `matrix`, `max_parallel`, `results`, `results_from`,
        `continue_on_failure`, `retry`,
        `patch`, `active_deadline_seconds`)."""
        flow = Flow(self._adopt(step), **fields)
        self.flows.append(flow)
        return flow

    def finally_flow(self, step: str | JobTemplate, *, patch: Mapping[str, Any] | None = None) -> Flow:
        """Add a `finally` flow: it runs once every flow has ended, whatever the outcome."""
        flow = Flow(self._adopt(step), patch=patch)
        self.finally_flows.append(flow)
        return flow

    def __getitem__(self, name: str) -> Flow:
        for flow in self.flows + self.finally_flows:
            if flow.name == name:
                return flow
        raise KeyError(f"JobFlow {self.name!r} has no flow {name!r}")

    def param(self, name: str) -> str:
        """`$(params.<name>)`, checked against the JobFlow's params."""
        if name not in self.params:
            raise KeyError(f"JobFlow {self.name!r} has no param {name!r} (it has: {list(self.params)})")
        return f"$(params.{name})"

    # -- the API object -------------------------------------------------------------------------
    def spec_dict(self) -> dict[str, Any]:
        """`spec`, keys in a fixed order (also a CronJobFlow's `jobFlowTemplate.spec`)."""
        spec: dict[str, Any] = {}
        for field, key in SPEC_FIELDS.items():
            if self.spec_fields[field] is not None:
                spec[key] = self.spec_fields[field]
        if self.params:
            spec["params"] = [{"name": k, "value": v} for k, v in self.params.items()]
        spec["flows"] = [f.to_dict() for f in self.flows]
        if self.finally_flows:
            spec["finally"] = [f.to_dict() for f in self.finally_flows]
        if self.own_results:
            spec["results"] = [{"name": k, "value": v} for k, v in self.own_results.items()]
        spec.update(copy.deepcopy(self.extra_spec))
        return spec

    def metadata_dict(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": self.name}
        for key, value in (
            ("namespace", self.namespace),
            ("labels", _opt(self.labels)),
            ("annotations", _opt(self.annotations)),
        ):
            if value:
                metadata[key] = value
        return metadata

    def to_dict(self) -> dict[str, Any]:
        """The JobFlow as the API server takes it (templates not included: see `to_yaml`)."""
        return {
            "apiVersion": API_VERSION,
            "kind": self.kind,
            "metadata": self.metadata_dict(),
            "spec": self.spec_dict(),
        }

    def to_yaml(self, *, templates: bool = False) -> str:
        """The JobFlow's YAML; with `templates`, its JobTemplates first, as `kubectl apply -f` wants them."""
        documents = [t.to_dict() for t in self.templates] if templates else []
        return _yaml.dump([*documents, self.to_dict()])

    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, Any], **fields: Any) -> JobFlow:
        """A JobFlow from a `spec` dict (a JobFlow's, or a CronJobFlow's template's)."""
        known = {k: spec.get(v) for k, v in SPEC_FIELDS.items()}
        params = {str(p.get("name")): str(p.get("value")) for p in spec.get("params") or []}
        results = {str(r.get("name")): str(r.get("value")) for r in spec.get("results") or []}
        job_flow = cls(name, params=params, results=results, **known, **fields)
        job_flow.flows = [Flow.from_dict(f) for f in spec.get("flows") or []]
        job_flow.finally_flows = [Flow.from_dict(f) for f in spec.get("finally") or []]
        handled = {*SPEC_FIELDS.values(), "params", "flows", "finally", "results"}
        job_flow.extra_spec = {k: copy.deepcopy(v) for k, v in spec.items() if k not in handled}
        return job_flow

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> JobFlow:
        """A JobFlow from its API object, checked against the CRD's schema first (`SchemaError`)."""
        from jobflow_sdk.schema import require_schema

        require_schema(obj, JOB_FLOW_KIND)
        metadata = obj.get("metadata") or {}
        return cls.from_spec(
            str(metadata.get("name") or ""),
            obj.get("spec") or {},
            namespace=metadata.get("namespace"),
            labels=metadata.get("labels"),
            annotations=metadata.get("annotations"),
        )

    @classmethod
    def from_yaml(cls, text: str) -> JobFlow:
        """The JobFlow of a YAML text; JobTemplates in it (before or after) become its templates."""
        documents = _yaml.load(text)
        flows = [d for d in documents if d.get("kind") == JOB_FLOW_KIND]
        if len(flows) != 1:
            raise ValueError(f"expected one JobFlow in the YAML, found {len(flows)}")
        job_flow = cls.from_dict(flows[0])
        job_flow.templates = [JobTemplate.from_dict(d) for d in documents if d.get("kind") == JobTemplate.kind]
        return job_flow

    # -- local checks ---------------------------------------------------------------------------
    def validate(self) -> list[str]:
        """What the API server would refuse: the schema's problems (`path: message`), else the
        webhook's own messages (`"; ".join(...)` is its denial); [] when it would be admitted."""
        from jobflow_sdk.validate import job_flow_problems

        problems = job_flow_problems(self.to_dict())
        for template in self.templates:
            problems.extend(f"JobTemplate {template.name}: {p}" for p in template.validate())
        return problems

    def check(self) -> None:
        """Raise `SchemaError` or `InvalidJobFlowError` unless `validate()` is empty."""
        from jobflow_sdk.schema import require_schema
        from jobflow_sdk.validate import admission_problems

        for template in self.templates:
            require_schema(template.to_dict(), JobTemplate.kind)
        require_schema(self.to_dict(), JOB_FLOW_KIND)
        problems = admission_problems(self.to_dict())
        if problems:
            raise InvalidJobFlowError(JOB_FLOW_KIND, self.name, problems)

    # -- running --------------------------------------------------------------------------------
    def connect(self, kubeconfig: str | None = None, context: str | None = None) -> JobFlow:
        """Use this kubeconfig/context (default: kubectl's rules, else in-cluster); returns self."""
        self.connection = run.connect(kubeconfig, context, self.namespace)
        return self

    def _conn(self) -> run.Connection:
        if self.connection is None:
            self.connection = run.connect(namespace=self.namespace)
        return self.connection

    def _ns(self) -> str:
        return self.namespace or self._conn().namespace

    def create(self) -> JobFlow:
        """Check locally, apply the templates (server-side), create the JobFlow; returns self."""
        self.check()
        for template in self.templates:
            run.apply(self._conn(), JOB_TEMPLATES, template.to_dict())
        self.server_object = run.create(self._conn(), JOB_FLOWS, run.in_namespace(self.to_dict(), self._ns()))
        return self

    def apply(self, *, force: bool = True) -> JobFlow:
        """Check locally, then server-side apply the templates and the JobFlow (field manager `jobflow-sdk`)."""
        self.check()
        for template in self.templates:
            run.apply(self._conn(), JOB_TEMPLATES, template.to_dict(), force=force)
        self.server_object = run.apply(
            self._conn(), JOB_FLOWS, run.in_namespace(self.to_dict(), self._ns()), force=force
        )
        return self

    def delete(self, *, templates: bool = False, propagation: str = "Background") -> None:
        """Delete the JobFlow (its Jobs go with it, by owner reference); with `templates`, its templates too."""
        run.delete(self._conn(), JOB_FLOWS, self.name, self._ns(), propagation)
        for template in self.templates if templates else []:
            run.delete(self._conn(), JOB_TEMPLATES, template.name, template.namespace or self._ns())

    def get(self) -> dict[str, Any]:
        self.server_object = run.get(self._conn(), JOB_FLOWS, self.name, self._ns())
        return self.server_object

    def status(self) -> dict[str, Any]:
        """The JobFlow's `status`, read now."""
        return dict(self.get().get("status") or {})

    def phase(self) -> str:
        return str((self.status().get("state") or {}).get("phase") or "")

    def flow_states(self) -> dict[str, str]:
        """Each flow's state, read now (`Completed`, `Running`, `Skipped`, `Waiting`, ...)."""
        from jobflow_sdk.status import flow_states

        return flow_states(self.get())

    def jobs(self) -> list[dict[str, Any]]:
        """The Volcano Jobs created for this JobFlow."""
        return run.jobs(self._conn(), self.name, self._ns())

    def events(self) -> list[dict[str, Any]]:
        """The events about this JobFlow and its Jobs, oldest first."""
        return run.events(self._conn(), self.name, self._ns())

    def wait(self, timeout: float = 600, *, progress: bool | None = None) -> str:
        """Watch until the phase is final; returns it ("Succeed") or raises `JobFlowFailedError`
        (failed flows, Warning events), `WaitTimeoutError` or `JobFlowDeletedError`."""
        from jobflow_sdk.watch import auto_progress, wait_for

        version = str(((self.server_object or {}).get("metadata") or {}).get("resourceVersion") or "") or None
        shown = auto_progress(progress)

        def seen(job_flow: Mapping[str, Any]) -> None:
            self.server_object = dict(job_flow)  # so the notebook picture shows the states seen last
            if shown is not None:
                shown(job_flow)

        return wait_for(self._conn(), self.name, self._ns(), resource_version=version, timeout=timeout, progress=seen)

    def results(self) -> dict[str, dict[str, Any]]:
        """What the controller kept, read from the API server, in the shape of `kubectl jobflow results
        -o json`: `{"jobs": {"ml-train": {"accuracy": "0.93"}}, "results": {"best-model": "s3://m/42"}}`:
        each Job's results (`status.jobStatusList[].results`; Jobs that reported none left out) and the
        JobFlow's own (`status.results`, there once it Succeeded with `spec.results`)."""
        status = (self.get() or {}).get("status") or {}
        jobs: dict[str, dict[str, str]] = {}
        for entry in status.get("jobStatusList") or []:
            found = recorded_results(entry.get("results")) if isinstance(entry, Mapping) else None
            if found:
                jobs[str(entry.get("name") or "")] = found
        own = {r["name"]: r["value"] for r in recorded_own_results(status.get("results"))}
        return {"jobs": jobs, "results": own}

    def _verb(self, verb: str, flows: Sequence[str] = ()) -> JobFlow:
        self.server_object = run.send_lifecycle(self._conn(), self.name, self._ns(), verb, flows)
        return self

    def suspend(self) -> JobFlow:
        """Create no new Job until resumed; running Jobs go on."""
        return self._verb("suspend")

    def resume(self) -> JobFlow:
        return self._verb("resume")

    def stop(self) -> JobFlow:
        """Start no new flow, let running Jobs and finally flows finish, end Failed."""
        return self._verb("stop")

    def terminate(self) -> JobFlow:
        """Terminate the running Jobs, run no finally flow, end Failed."""
        return self._verb("terminate")

    def retry(self, flows: Sequence[str] = ()) -> JobFlow:
        """Re-run the Failed and Skipped flows (or those named) and what depends on them."""
        return self._verb("retry", flows)

    # -- notebooks ------------------------------------------------------------------------------
    def _drawn(self) -> dict[str, Any]:
        drawn = self.to_dict()
        if self.server_object and self.server_object.get("status"):
            drawn["status"] = self.server_object["status"]
        return drawn

    def _repr_svg_(self) -> str:
        from jobflow_sdk.draw import svg

        return svg(self._drawn())

    def _repr_html_(self) -> str:
        from jobflow_sdk.draw import svg
        from jobflow_sdk.status import progress_line

        return f"<div>{svg(self._drawn())}<pre>{progress_line(self._drawn())}</pre></div>"

    def __repr__(self) -> str:
        return f"JobFlow({self.name!r}, flows={[f.name for f in self.flows]!r})"
