"""`CronJobFlow`: a JobFlow run on a schedule (docs/cron.md), built like a JobFlow.

    with CronJobFlow("nightly-etl", schedule="0 2 * * *", time_zone="Europe/Berlin") as cron:
        download = cron.flow("data-download")
        download >> cron.flow("feature-engineering")

Its flows, params and spec fields are those of the `JobFlow` it runs (`cron.job_flow`, made from the
keyword arguments `JobFlow` takes); its own fields are the schedule's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from jobflow_controller.apis.constants import CRON_JOB_FLOW_KIND
from jobflow_controller.kube.resources import CRON_JOB_FLOWS, JOB_TEMPLATES
from jobflow_sdk import _yaml, run
from jobflow_sdk.errors import InvalidJobFlowError
from jobflow_sdk.flow import Flow
from jobflow_sdk.jobflow import JobFlow
from jobflow_sdk.template import API_VERSION, JobTemplate

#: The CronJobFlow's own spec fields in `to_dict` order; Python's spelling -> the CRD's.
CRON_FIELDS = {
    "schedule": "schedule",
    "time_zone": "timeZone",
    "concurrency_policy": "concurrencyPolicy",
    "starting_deadline_seconds": "startingDeadlineSeconds",
    "successful_history_limit": "successfulJobFlowsHistoryLimit",
    "failed_history_limit": "failedJobFlowsHistoryLimit",
    "suspend": "suspend",
}


class CronJobFlow:
    """A `flow.volcano.sh/v1alpha1` CronJobFlow."""

    kind = CRON_JOB_FLOW_KIND

    def __init__(
        self,
        name: str,
        *,
        schedule: str,
        namespace: str | None = None,
        time_zone: str | None = None,
        concurrency_policy: str | None = None,
        starting_deadline_seconds: int | None = None,
        successful_history_limit: int | None = None,
        failed_history_limit: int | None = None,
        suspend: bool | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        template_labels: Mapping[str, str] | None = None,
        template_annotations: Mapping[str, str] | None = None,
        **job_flow_fields: Any,
    ) -> None:
        """`job_flow_fields` are `JobFlow`'s (params, job_retain_policy, failure_policy, ...): each run's."""
        self.name, self.namespace = name, namespace
        self.fields: dict[str, Any] = {
            "schedule": schedule,
            "time_zone": time_zone,
            "concurrency_policy": concurrency_policy,
            "starting_deadline_seconds": starting_deadline_seconds,
            "successful_history_limit": successful_history_limit,
            "failed_history_limit": failed_history_limit,
            "suspend": suspend,
        }
        self.labels, self.annotations = dict(labels or {}), dict(annotations or {})
        self.job_flow = JobFlow(
            name, namespace=namespace, labels=template_labels, annotations=template_annotations, **job_flow_fields
        )
        self.connection: run.Connection | None = None

    def __enter__(self) -> CronJobFlow:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _tb: TracebackType | None
    ) -> None:
        return None

    def flow(self, step: str | JobTemplate, **fields: Any) -> Flow:
        """A flow of each run (see `JobFlow.flow`)."""
        return self.job_flow.flow(step, **fields)

    def finally_flow(self, step: str | JobTemplate, *, patch: Mapping[str, Any] | None = None) -> Flow:
        return self.job_flow.finally_flow(step, patch=patch)

    def to_dict(self) -> dict[str, Any]:
        spec = {key: self.fields[f] for f, key in CRON_FIELDS.items() if self.fields[f] is not None}
        template: dict[str, Any] = {}
        template_meta = {k: v for k, v in self.job_flow.metadata_dict().items() if k in ("labels", "annotations")}
        if template_meta:
            template["metadata"] = template_meta
        template["spec"] = self.job_flow.spec_dict()
        spec["jobFlowTemplate"] = template
        metadata: dict[str, Any] = {"name": self.name}
        for key, value in (("namespace", self.namespace), ("labels", self.labels), ("annotations", self.annotations)):
            if value:
                metadata[key] = copy.deepcopy(value)
        return {"apiVersion": API_VERSION, "kind": self.kind, "metadata": metadata, "spec": spec}

    def to_yaml(self, *, templates: bool = False) -> str:
        documents = [t.to_dict() for t in self.job_flow.templates] if templates else []
        return _yaml.dump([*documents, self.to_dict()])

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CronJobFlow:
        """A CronJobFlow from its API object, checked against the CRD's schema first."""
        from jobflow_sdk.schema import require_schema

        require_schema(obj, CRON_JOB_FLOW_KIND)
        metadata, spec = obj.get("metadata") or {}, dict(obj.get("spec") or {})
        template = spec.get("jobFlowTemplate") or {}
        template_meta = template.get("metadata") or {}
        own: dict[str, Any] = {f: spec.get(key) for f, key in CRON_FIELDS.items()}
        cron = cls(
            str(metadata.get("name") or ""),
            namespace=metadata.get("namespace"),
            labels=metadata.get("labels"),
            annotations=metadata.get("annotations"),
            **own,
        )
        cron.job_flow = JobFlow.from_spec(
            cron.name,
            template.get("spec") or {},
            namespace=cron.namespace,
            labels=template_meta.get("labels"),
            annotations=template_meta.get("annotations"),
        )
        return cron

    @classmethod
    def from_yaml(cls, text: str) -> CronJobFlow:
        crons = [d for d in _yaml.load(text) if d.get("kind") == CRON_JOB_FLOW_KIND]
        if len(crons) != 1:
            raise ValueError(f"expected one CronJobFlow in the YAML, found {len(crons)}")
        return cls.from_dict(crons[0])

    def validate(self) -> list[str]:
        """The schema's problems, else the webhook's messages; [] when it would be admitted."""
        from jobflow_sdk.validate import cron_job_flow_problems_local

        return cron_job_flow_problems_local(self.to_dict())

    def _conn(self) -> run.Connection:
        if self.connection is None:
            self.connection = run.connect(namespace=self.namespace)
        return self.connection

    def apply(self, *, force: bool = True) -> dict[str, Any]:
        """Check locally, then server-side apply the templates and the CronJobFlow."""
        problems = self.validate()
        if problems:
            raise InvalidJobFlowError(self.kind, self.name, problems)
        for template in self.job_flow.templates:
            run.apply(self._conn(), JOB_TEMPLATES, template.to_dict(), force=force)
        return run.apply(self._conn(), CRON_JOB_FLOWS, self.to_dict(), force=force)

    def create(self) -> dict[str, Any]:
        problems = self.validate()
        if problems:
            raise InvalidJobFlowError(self.kind, self.name, problems)
        for template in self.job_flow.templates:
            run.apply(self._conn(), JOB_TEMPLATES, template.to_dict())
        return run.create(self._conn(), CRON_JOB_FLOWS, self.to_dict())

    def delete(self) -> None:
        run.delete(self._conn(), CRON_JOB_FLOWS, self.name, self.namespace or self._conn().namespace)

    def _repr_svg_(self) -> str:
        return self.job_flow._repr_svg_()
