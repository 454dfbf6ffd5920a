"""`kubectl jobflow ui -A` on the real control plane (issue 33): its caches hold the Jobs JobFlows
created and the events its pages show, not every Job and Event of the cluster."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import wait_for

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from kubectl_jobflow.ui.command import Session, open_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def ui(kubeconfig: Path) -> Iterator[Session]:
    session = open_session(build_config(str(kubeconfig)), None)
    yield session
    session.close()


def volcano_job(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {},
    }


def event(namespace: str, api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{uuid.uuid4().hex[:8]}"},
        "involvedObject": {"apiVersion": api_version, "kind": kind, "name": name, "namespace": namespace},
        "reason": "Checked",
        "message": f"about {kind} {name}",
        "type": "Normal",
    }


def cached_names(informer: Any, namespace: str) -> set[str]:
    return {
        str((obj.get("involvedObject") or {}).get("name") or obj["metadata"]["name"])
        for obj in informer.get_store().list()
        if obj["metadata"].get("namespace") == namespace
    }


def test_with_all_namespaces_only_jobflows_jobs_and_the_events_shown_are_cached(
    ui: Session, clientset: Clientset, namespace: str
) -> None:
    jobs = clientset.jobs(namespace)
    jobs.create(volcano_job("made-by-a-jobflow", {"volcano.sh/createdByJobFlow": f"{namespace}.p"}))
    jobs.create(volcano_job("someone-elses"))
    events = clientset.events(namespace)
    shown = [
        event(namespace, "flow.volcano.sh/v1alpha1", "JobFlow", "p"),
        event(namespace, "batch.volcano.sh/v1alpha1", "Job", "made-by-a-jobflow"),
    ]
    not_shown = [
        event(namespace, "v1", "Pod", "a-pod"),
        event(namespace, "batch/v1", "Job", "a-kubernetes-job"),
    ]
    for doc in not_shown + shown:  # the ones not shown first: once the others arrive, they would have too
        events.create(doc)
    cache = ui.cache
    wait_for(lambda: "made-by-a-jobflow" in cached_names(cache.jobs, namespace), what="the JobFlow's Job cached")
    wait_for(lambda: "p" in cached_names(cache.flow_events, namespace), what="the JobFlow's event cached")
    wait_for(
        lambda: "made-by-a-jobflow" in cached_names(cache.job_events, namespace), what="the Volcano Job's event cached"
    )
    assert cached_names(cache.jobs, namespace) == {"made-by-a-jobflow"}
    assert cached_names(cache.flow_events, namespace) == {"p"}
    assert cached_names(cache.job_events, namespace) == {"made-by-a-jobflow"}
    assert [e["message"] for e in cache.events_about("Job", namespace, "made-by-a-jobflow")] == [
        "about Job made-by-a-jobflow"
    ]
