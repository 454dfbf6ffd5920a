"""Building JobFlows and JobTemplates for the end-to-end tests, and reading them back."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import yaml

from jobflow_controller.apis import jobflow as jf
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import NotFoundError
from jobflow_controller.local.kubectl import EXAMPLES_DIR
from jobflow_controller.local.phase_script import RETRY_PHASES_ANNOTATION_PREFIX

SIM = "sim.jobflow.volcano.sh/phases"
FAST = "Pending:0.2s,Running:0.4s,Completed"
FAILS = "Pending:0.2s,Running:0.4s,Failed"


def template(name: str, namespace: str, script: str = FAST, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "minAvailable": replicas,
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "main",
                    "replicas": replicas,
                    "template": {
                        "metadata": {"annotations": {SIM: script}},
                        "spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "OnFailure"},
                    },
                }
            ],
        },
    }


def failing_template(name: str, namespace: str, then: str | None = None, attempt: int = 1) -> dict[str, Any]:
    """A template whose Job fails; the Job of retry `attempt` follows `then` instead, if given."""
    doc = template(name, namespace, FAILS)
    if then is not None:
        annotations = doc["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
        annotations[f"{RETRY_PHASES_ANNOTATION_PREFIX}{attempt}"] = then
    return doc


def flow(name: str, namespace: str, flows: list[dict[str, Any]], retain: str = "retain") -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobRetainPolicy": retain, "flows": flows},
    }


def chain(*names: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": names[0]}]
    for prev, cur in itertools.pairwise(names):
        out.append({"name": cur, "dependsOn": {"targets": [prev]}})
    return out


def examples(namespace: str, script: str | None = FAST) -> list[dict[str, Any]]:
    """The example pipelines of manifests/examples, moved to `namespace`, templates first."""
    docs: list[dict[str, Any]] = []
    for path in sorted(Path(EXAMPLES_DIR).glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        # The pipelines only: the nightly CronJobFlow example has its own test (test_e2e_cronjobflow.py).
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] != "CronJobFlow")
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
        if script is not None and doc["kind"] == "JobTemplate":
            for task in doc["spec"]["tasks"]:
                task["template"]["metadata"]["annotations"][SIM] = script
    return sorted(docs, key=lambda d: d["kind"] != "JobTemplate")


def create_all(clientset: Clientset, docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        ns = doc["metadata"]["namespace"]
        client = clientset.job_templates(ns) if doc["kind"] == "JobTemplate" else clientset.job_flows(ns)
        client.create(doc)


def phase_of(clientset: Clientset, namespace: str, name: str) -> str:
    try:
        obj = clientset.job_flows(namespace).get(name)
    except NotFoundError:
        return ""
    return jf.phase(obj)


def job_names(clientset: Clientset, namespace: str) -> list[str]:
    return sorted(j["metadata"]["name"] for j in clientset.jobs(namespace).list())


def events_of(clientset: Clientset, namespace: str, name: str) -> list[tuple[str, str, str, int]]:
    items = clientset.events(namespace).list()
    return [
        (e["type"], e["reason"], e["message"], int(e.get("count") or 1))
        for e in items
        if e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == "JobFlow"
    ]
