"""`JobTemplate`: a Volcano Job spec under a name, built from an image and a command.

`JobTemplate("train", image="reg/train:1", command=["python", "train.py"])` is the common case: a
one-task Volcano Job (one container, `replicas` pods, `minAvailable` = `replicas`, scheduled by
Volcano) with optional args, env, resources, volumes and pod annotations. Anything else a Volcano Job
can hold is written as the raw spec (`JobTemplate("x", spec={...})`), which is what `from_dict` reads
back too. A flow runs the JobTemplate of its own name (upstream's rule), so `jf.flow(template)` names
the flow after the template.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from jobflow_controller.apis.constants import FLOW_GROUP, JOB_TEMPLATE_KIND, VERSION
from jobflow_sdk import _yaml

API_VERSION = f"{FLOW_GROUP}/{VERSION}"
#: The pod annotation the local Volcano job simulator reads (phases and durations); Volcano ignores it.
SIMULATOR_PHASES = "sim.jobflow.volcano.sh/phases"


def env_list(env: Mapping[str, str] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    """`{"K": "v"}` (in order) or a list of EnvVar dicts (for `valueFrom`) as the container's `env`."""
    if env is None:
        return None
    if isinstance(env, Mapping):
        return [{"name": str(k), "value": str(v)} for k, v in env.items()]
    return [dict(e) for e in env]


def _without_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class JobTemplate:
    """A `flow.volcano.sh/v1alpha1` JobTemplate."""

    kind = JOB_TEMPLATE_KIND

    def __init__(
        self,
        name: str,
        *,
        image: str | None = None,
        command: Sequence[str] | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | Sequence[Mapping[str, Any]] | None = None,
        resources: Mapping[str, Any] | None = None,
        volumes: Sequence[Mapping[str, Any]] | None = None,
        volume_mounts: Sequence[Mapping[str, Any]] | None = None,
        replicas: int = 1,
        min_available: int | None = None,
        scheduler_name: str | None = "volcano",
        queue: str | None = None,
        max_retry: int | None = None,
        task_name: str | None = None,
        restart_policy: str | None = "OnFailure",
        pod_annotations: Mapping[str, str] | None = None,
        pod_labels: Mapping[str, str] | None = None,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        spec: Mapping[str, Any] | None = None,
    ) -> None:
        """Either `image` (a one-task Job built from the keyword arguments) or `spec` (a raw Volcano
        JobSpec, used as it is); never both, never neither."""
        if (image is None) == (spec is None):
            raise ValueError(f"JobTemplate {name!r}: give either image= (a one-task Job) or spec= (a raw JobSpec)")
        self.name, self.namespace = name, namespace
        self.labels, self.annotations = dict(labels or {}), dict(annotations or {})
        if spec is not None:
            self.spec: dict[str, Any] = copy.deepcopy(dict(spec))
            return
        self.spec = one_task_spec(
            task_name or name,
            image=image,
            command=command,
            args=args,
            env=env,
            resources=resources,
            volumes=volumes,
            volume_mounts=volume_mounts,
            replicas=replicas,
            min_available=min_available,
            scheduler_name=scheduler_name,
            queue=queue,
            max_retry=max_retry,
            restart_policy=restart_policy,
            pod_annotations=pod_annotations,
            pod_labels=pod_labels,
        )

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server takes it (a fresh dict: changing it changes nothing here)."""
        metadata = _without_none(
            {
                "name": self.name,
                "namespace": self.namespace,
                "labels": dict(self.labels) or None,
                "annotations": dict(self.annotations) or None,
            }
        )
        return {"apiVersion": API_VERSION, "kind": self.kind, "metadata": metadata, "spec": copy.deepcopy(self.spec)}

    def to_yaml(self) -> str:
        return _yaml.dump([self.to_dict()])

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> JobTemplate:
        """A JobTemplate from its API object (checked against the CRD's schema first)."""
        from jobflow_sdk.schema import require_schema

        require_schema(obj, JOB_TEMPLATE_KIND)
        metadata = obj.get("metadata") or {}
        return cls(
            str(metadata.get("name") or ""),
            namespace=metadata.get("namespace"),
            labels=metadata.get("labels"),
            annotations=metadata.get("annotations"),
            spec=obj.get("spec") or {},
        )

    @classmethod
    def from_yaml(cls, text: str) -> list[JobTemplate]:
        """Every JobTemplate of a (multi-document) YAML text."""
        return [cls.from_dict(d) for d in _yaml.load(text)]

    def validate(self) -> list[str]:
        """What the API server's schema would refuse, `path: message` each; [] when it fits."""
        from jobflow_sdk.schema import schema_problems

        return schema_problems(self.to_dict(), JOB_TEMPLATE_KIND)

    def __repr__(self) -> str:
        return f"JobTemplate({self.name!r})"


def _meta(pod_meta: Mapping[str, Any]) -> dict[str, Any]:
    return {"metadata": dict(pod_meta)} if pod_meta else {}


def one_task_spec(
    task: str,
    *,
    image: str | None,
    command: Sequence[str] | None,
    args: Sequence[str] | None,
    env: Mapping[str, str] | Sequence[Mapping[str, Any]] | None,
    resources: Mapping[str, Any] | None,
    volumes: Sequence[Mapping[str, Any]] | None,
    volume_mounts: Sequence[Mapping[str, Any]] | None,
    replicas: int,
    min_available: int | None,
    scheduler_name: str | None,
    queue: str | None,
    max_retry: int | None,
    restart_policy: str | None,
    pod_annotations: Mapping[str, str] | None,
    pod_labels: Mapping[str, str] | None,
) -> dict[str, Any]:
    """A Volcano JobSpec of one task `task` (its container named alike) running `image`."""
    container = _without_none(
        {
            "name": task,
            "image": image,
            "command": list(command) if command is not None else None,
            "args": list(args) if args is not None else None,
            "env": env_list(env),
            "resources": copy.deepcopy(dict(resources)) if resources is not None else None,
            "volumeMounts": [dict(m) for m in volume_mounts] if volume_mounts is not None else None,
        }
    )
    pod_meta = _without_none(
        {"labels": dict(pod_labels) if pod_labels else None, "annotations": dict(pod_annotations or {}) or None}
    )
    pod_spec = _without_none(
        {
            "containers": [container],
            "volumes": [dict(v) for v in volumes] if volumes is not None else None,
            "restartPolicy": restart_policy,
        }
    )
    task_entry = {"replicas": replicas, "name": task, "template": {**_meta(pod_meta), "spec": pod_spec}}
    return _without_none(
        {
            "minAvailable": replicas if min_available is None else min_available,
            "schedulerName": scheduler_name,
            "queue": queue,
            "maxRetry": max_retry,
            "tasks": [task_entry],
        }
    )
