"""`JobFlowTemplate` and `submit_from_template` (docs/templates.md): a reusable pipeline, and a run of it.

    with JobFlowTemplate("etl", params={"dataset": None, "mode": "full"}) as etl:
        etl.flow("prepare") >> etl.flow("train")
    etl.apply(conn)
    run = submit_from_template(conn, "etl", {"dataset": "s3://bucket/today"})

A template's flows and spec fields are a `JobFlow`'s (`etl.job_flow`); its params are declared with
their defaults (None: required) and read in the flows as `etl.param("mode")`. `submit_from_template`
creates a run (a JobFlow with `spec.jobFlowTemplateRef` and `spec.params`, labelled
`flow.volcano.sh/jobflowtemplate`, named `name` or generated), as `kubectl jobflow submit` does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from jobflow_controller.apis import jobflowtemplate as jft
from jobflow_controller.apis.constants import JOB_FLOW_TEMPLATE_KIND
from jobflow_controller.kube.resources import JOB_FLOW_TEMPLATES, JOB_FLOWS, JOB_TEMPLATES
from jobflow_controller.validation.jobflowtemplate import template_problems
from jobflow_sdk import _yaml, run
from jobflow_sdk.errors import InvalidJobFlowError
from jobflow_sdk.flow import Flow
from jobflow_sdk.jobflow import JobFlow
from jobflow_sdk.template import API_VERSION, JobTemplate


class JobFlowTemplate:
    """A `flow.volcano.sh/v1alpha1` JobFlowTemplate."""

    kind = JOB_FLOW_TEMPLATE_KIND

    def __init__(
        self,
        name: str,
        *,
        params: Mapping[str, str | None] | None = None,
        descriptions: Mapping[str, str] | None = None,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        **job_flow_fields: Any,
    ) -> None:
        """`params`: name -> default (None: required); `job_flow_fields` are `JobFlow`'s (no `params`)."""
        self.name, self.namespace = name, namespace
        self.params, self.descriptions = dict(params or {}), dict(descriptions or {})
        self.labels = dict(labels or {})
        self.job_flow = JobFlow(name, namespace=namespace, **job_flow_fields)

    def __enter__(self) -> JobFlowTemplate:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _tb: TracebackType | None
    ) -> None:
        return None

    def flow(self, step: str | JobTemplate, **fields: Any) -> Flow:
        """A flow of each run (see `JobFlow.flow`)."""
        return self.job_flow.flow(step, **fields)

    def param(self, name: str) -> str:
        """`$(params.<name>)`, checked against the declared params."""
        if name not in self.params:
            raise KeyError(f"JobFlowTemplate {self.name!r} has no param {name!r} (it has: {list(self.params)})")
        return f"$(params.{name})"

    def to_dict(self) -> dict[str, Any]:
        declared = []
        for name, default in self.params.items():
            entry: dict[str, Any] = {"name": name}
            if default is not None:
                entry["default"] = default
            if name in self.descriptions:
                entry["description"] = self.descriptions[name]
            declared.append(entry)
        spec: dict[str, Any] = {"jobFlow": self.job_flow.spec_dict()}
        if declared:
            spec["params"] = declared
        metadata: dict[str, Any] = {"name": self.name}
        for key, value in (("namespace", self.namespace), ("labels", self.labels)):
            if value:
                metadata[key] = copy.deepcopy(value)
        return {"apiVersion": API_VERSION, "kind": self.kind, "metadata": metadata, "spec": spec}

    def to_yaml(self, *, templates: bool = False) -> str:
        documents = [t.to_dict() for t in self.job_flow.templates] if templates else []
        return _yaml.dump([*documents, self.to_dict()])

    def problems(self) -> list[str]:
        """What admission (the webhook, the controller) would refuse in it."""
        return template_problems(self.to_dict())

    def apply(self, conn: run.Connection, *, force: bool = True) -> dict[str, Any]:
        """Check locally, then server-side apply its JobTemplates and itself; the stored template."""
        problems = self.problems()
        if problems:
            raise InvalidJobFlowError(self.kind, self.name, problems)
        for template in self.job_flow.templates:
            run.apply(conn, JOB_TEMPLATES, template.to_dict(), force=force)
        return run.apply(conn, JOB_FLOW_TEMPLATES, self.to_dict(), force=force)


def run_of(template: str, params: Mapping[str, str] | None = None, *, name: str | None = None) -> dict[str, Any]:
    """The run of the template named `template` with `params` (named `name`, or generated `<template>-xxxxx`)."""
    metadata: dict[str, Any] = {"labels": {jft.TEMPLATE_LABEL: template}}
    metadata.update({"name": name} if name else {"generateName": f"{template}-"})
    spec: dict[str, Any] = {jft.REF_FIELD: {"name": template}}
    if params:
        spec[jft.PARAMS_FIELD] = [{"name": k, "value": v} for k, v in params.items()]
    return {"apiVersion": API_VERSION, "kind": "JobFlow", "metadata": metadata, "spec": spec}


def submit_from_template(
    conn: run.Connection, template: str, params: Mapping[str, str] | None = None, *, name: str | None = None
) -> dict[str, Any]:
    """Create a run of `template` in the connection's namespace; the created JobFlow (its name is `metadata.name`)."""
    return run.create(conn, JOB_FLOWS, run_of(template, params, name=name))
