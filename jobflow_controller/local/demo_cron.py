"""The demo's CronJobFlow: a copy of manifests/examples/nightly-etl-cronjobflow.yaml firing every minute.

`make demo` creates it beside the example pipelines; its runs (`every-minute-<minutes>`) show in the
progress table as they come, `kubectl get cjf` is printed at the end, and while the control plane
stays up each new run is announced with how long after its minute it was created (docs/cron.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import yaml

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from jobflow_controller.apis import meta
from jobflow_controller.apis.cronjobflow import SCHEDULED_TIMESTAMP_ANNOTATION
from jobflow_controller.apis.meta import parse_time
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.local.kubectl import EXAMPLES_DIR

NAME = "every-minute"
EXAMPLE = EXAMPLES_DIR / "nightly-etl-cronjobflow.yaml"


def every_minute(namespace: str = "default") -> dict[str, Any]:
    """The nightly example, renamed, on `* * * * *` in UTC, keeping its two last successful runs."""
    doc: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["metadata"] = {"name": NAME, "namespace": namespace}
    spec = doc["spec"]
    spec.pop("timeZone", None)
    spec.update(schedule="* * * * *", successfulJobFlowsHistoryLimit=2)
    return doc


def create(clientset: Clientset, namespace: str = "default") -> str:
    clientset.cron_job_flows(namespace).create(every_minute(namespace))
    return f"cronjobflow.flow.volcano.sh/{NAME} created (schedule * * * * *: a run every minute)"


def run_line(job_flow: Mapping[str, Any]) -> str | None:
    """`every-minute fired: <run> for <time>, created <lag> s after it`, for a run of the demo's CronJobFlow."""
    stamp = meta.metadata(job_flow).get("annotations", {}).get(SCHEDULED_TIMESTAMP_ANNOTATION)
    created = meta.creation_timestamp(job_flow)
    if not meta.name(job_flow).startswith(f"{NAME}-") or not stamp or not created:
        return None
    lag = (parse_time(created) - parse_time(stamp)).total_seconds()
    return f"{NAME} fired: {meta.name(job_flow)} for {stamp}, created {lag:.0f} s after it"


def announce_runs(flows: SharedIndexInformer, say: Callable[[str], None]) -> None:
    """From now on, `say` a line for each new run of the demo's CronJobFlow."""

    def added(obj: Any, is_in_initial_list: bool = False) -> None:
        line = run_line(obj) if isinstance(obj, Mapping) and not is_in_initial_list else None
        if line is not None:
            say(line)

    flows.add_event_handler(ResourceEventHandlerFuncs(add_func=added))
