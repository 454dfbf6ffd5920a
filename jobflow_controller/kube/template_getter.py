"""The webhook's read of the JobFlowTemplate a run names (ours, docs/templates.md): one GET per run admitted.

A GET rather than the controller's informer: the webhook answers on every replica, leader or not,
and the template informer runs only in the leader. Any error (the template is missing, the CRD is not
installed, the API server is slow) is "cannot tell": the run is admitted, and the controller checks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from jobflow_controller.kube.clientset import Clientset

log = structlog.get_logger(__name__)


def template_getter(clientset: Clientset) -> Callable[[str, str], Mapping[str, Any] | None]:
    def get(namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return clientset.job_flow_templates(namespace).get(name)
        except Exception as err:  # noqa: BLE001 - cannot tell: admitted, the controller checks
            log.debug("JobFlowTemplate not read for admission", template=f"{namespace}/{name}", error=str(err)[:200])
            return None

    return get
