"""The pods of a simulated Job's tasks, as Volcano's job controller creates them and a kubelet reports them.

When a task's pod template carries `sim.jobflow.volcano.sh/pods: "true"` the simulator creates, when
the Job enters Running, the task's `replicas` pods (`<job>-<task>-<index>`, Volcano's labels
`volcano.sh/job-name`, `volcano.sh/task-spec`, `volcano.sh/job-namespace`, `volcano.sh/task-index`,
controlled by the Job) so that `dependsOn.probe` HTTP and TCP checks have something to reach, and
writes their status through the pods/status subresource: Running with pod IP 127.0.0.1 (no kubelet
runs here, so a test serves the probed port itself, on 127.0.0.1 only). When the Job finishes they
become Succeeded (Completing, Completed) or Failed (any other finish), as Volcano retains finished
pods. Jobs without the annotation get no pods. Pure functions: the simulator does the writes.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import meta
from jobflow_controller.apis.meta import format_time
from jobflow_controller.apis.retry import job_attempt
from jobflow_controller.kube.errors import AlreadyExistsError
from jobflow_controller.local.phase_script import FINISHING

#: On a task's pod template: "true" makes the simulator create and run that task's pods.
PODS_ANNOTATION = "sim.jobflow.volcano.sh/pods"
#: On a task's pod template (docs/results.md): the termination message its pod of index 0 ends with,
#: written as it is (so a test can write a bad one too); the task gets simulated pods. A Job created again
#: (attempt N) uses `sim.jobflow.volcano.sh/results-retry-N` instead when the template has it.
RESULTS_ANNOTATION = "sim.jobflow.volcano.sh/results"
RETRY_RESULTS_ANNOTATION_PREFIX = "sim.jobflow.volcano.sh/results-retry-"
#: The pod IP every simulated pod reports; what a test serves its probed ports on.
POD_IP = "127.0.0.1"
#: The node simulated pods are bound to: no scheduler runs, and a bound pod may report an IP.
POD_NODE = "volcano-sim-node"
#: Volcano's pod labels (batch/v1alpha1 `JobNameKey`, `TaskSpecKey`, `JobNamespaceKey`, `TaskIndex`).
JOB_NAME_LABEL = "volcano.sh/job-name"
TASK_SPEC_LABEL = "volcano.sh/task-spec"
JOB_NAMESPACE_LABEL = "volcano.sh/job-namespace"
TASK_INDEX_LABEL = "volcano.sh/task-index"


def pod_tasks(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The tasks whose pod template asks for simulated pods (`sim.jobflow.volcano.sh/pods: "true"`)."""
    out = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        annotations = ((task.get("template") or {}).get("metadata") or {}).get("annotations") or {}
        if str(annotations.get(PODS_ANNOTATION, "")).lower() == "true" or RESULTS_ANNOTATION in annotations:
            out.append(task)
    return out


def task_pods(job: Mapping[str, Any], task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pods Volcano's job controller creates for one task: `replicas` of them, named
    `<job>-<task>-<index>`, labelled and annotated as Volcano does, controlled by the Job."""
    job_name, namespace, task_name = meta.name(job), meta.namespace(job), str(task.get("name") or "")
    template = task.get("template") or {}
    owner = {
        "apiVersion": str(job.get("apiVersion") or "batch.volcano.sh/v1alpha1"),
        "kind": "Job",
        "name": job_name,
        "uid": meta.uid(job),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pods = []
    for index in range(int(task.get("replicas") or 0)):
        labels = {
            **((template.get("metadata") or {}).get("labels") or {}),
            JOB_NAME_LABEL: job_name,
            TASK_SPEC_LABEL: task_name,
            JOB_NAMESPACE_LABEL: namespace,
            TASK_INDEX_LABEL: str(index),
        }
        annotations = {
            **((template.get("metadata") or {}).get("annotations") or {}),
            JOB_NAME_LABEL: job_name,
            TASK_SPEC_LABEL: task_name,
        }
        spec = {**(template.get("spec") or {}), "nodeName": POD_NODE}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{job_name}-{task_name}-{index}",
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": annotations,
                    "ownerReferences": [owner],
                },
                "spec": spec,
            }
        )
    return pods


def termination_message(job: Mapping[str, Any], task: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    """The message the pod's first container ends with: the task's results annotation (the attempt's, if
    any), on the pod of index 0 only; None when it has none."""
    if not meta.name(pod).endswith("-0"):
        return None
    annotations = ((task.get("template") or {}).get("metadata") or {}).get("annotations") or {}
    attempt = job_attempt(job)
    message = annotations.get(f"{RETRY_RESULTS_ANNOTATION_PREFIX}{attempt}") if attempt else None
    message = message if message is not None else annotations.get(RESULTS_ANNOTATION)
    return str(message) if message is not None else None


def container_statuses(pod: Mapping[str, Any], message: str | None, succeeded: bool) -> list[dict[str, Any]]:
    """The terminated status of each container of a finished pod, the first with `message`."""
    out = []
    for i, container in enumerate(((pod.get("spec") or {}).get("containers")) or []):
        terminated: dict[str, Any] = {
            "exitCode": 0 if succeeded else 1,
            "reason": "Completed" if succeeded else "Error",
        }
        if i == 0 and message:
            terminated["message"] = message
        out.append(
            {
                "name": str(container.get("name") or ""),
                "image": str(container.get("image") or ""),
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": terminated},
            }
        )
    return out


def pod_status(job_phase: str, now: datetime.datetime) -> dict[str, Any] | None:
    """The status a kubelet would report for the pods of a Job entering `job_phase` (None: leave them)."""
    if job_phase == "Running":
        ready = {"type": "Ready", "status": "True", "lastTransitionTime": format_time(now)}
        return {
            "phase": "Running",
            "hostIP": POD_IP,
            "hostIPs": [{"ip": POD_IP}],
            "podIP": POD_IP,
            "podIPs": [{"ip": POD_IP}],
            "startTime": format_time(now),
            "conditions": [ready],
        }
    if job_phase in ("Completing", "Completed"):
        return {"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}]}
    if job_phase in FINISHING:
        return {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False"}]}
    return None


def finished_status(
    job: Mapping[str, Any], task: Mapping[str, Any], pod: Mapping[str, Any], status: dict[str, Any]
) -> dict[str, Any]:
    """`status`, and once the pod has finished its containers' terminated states (docs/results.md)."""
    if status.get("phase") not in ("Succeeded", "Failed"):
        return status
    message = termination_message(job, task, pod)
    return {**status, "containerStatuses": container_statuses(pod, message, status["phase"] == "Succeeded")}


def create_pod(pods: Any, pod: Mapping[str, Any]) -> None:
    """Create the pod; one of the name left by an earlier Job (its garbage not collected yet) is replaced,
    as Volcano's job controller replaces it, and one of this Job's (a restarted simulator) is kept."""
    try:
        pods.create(pod)
    except AlreadyExistsError:
        uid = meta.metadata(pod)["ownerReferences"][0]["uid"]
        existing = pods.get(meta.name(pod))
        if any(o.get("uid") == uid for o in meta.metadata(existing).get("ownerReferences") or []):
            return
        pods.delete(meta.name(pod))
        pods.create(pod)
