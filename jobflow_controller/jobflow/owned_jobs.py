"""The Jobs a JobFlow controls, from the Job informer's cache: upstream's `getAllJobsCreatedByJobFlow`.

Upstream lists the namespace with `volcano.sh/createdByJobFlow in (<ns>.<name>)`; the label-value
index gives the same Jobs without a scan. Ours keeps only the Jobs this JobFlow controls: the label
alone also matches an earlier JobFlow's of the same name, and anyone can set it. Upstream's order is
a map's (random); creation order keeps the lists stable. Read by the sync and by the JobFlow update
handler (does a Succeeded JobFlow with `jobRetainPolicy: delete` still have Jobs to delete?).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobflow_controller.apis import meta
from jobflow_controller.kube.informers import BY_CREATED_BY_JOB_FLOW, JobLister

Obj = Mapping[str, Any]


def jobs_created_by_job_flow(job_lister: JobLister, job_flow: Obj) -> list[Obj]:
    """The Jobs `job_flow` controls (by uid), in creation order."""
    ns = meta.namespace(job_flow)
    value = meta.generate_object_string(ns, meta.name(job_flow))
    jobs = [
        j for j in job_lister.by_label_index(BY_CREATED_BY_JOB_FLOW, value, ns) if meta.is_controlled_by(j, job_flow)
    ]
    return sorted(jobs, key=lambda j: (meta.creation_timestamp(j) or "", meta.name(j)))
