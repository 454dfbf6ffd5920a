"""The JobFlow validating admission webhook (upstream's ``/jobflows/validate``).

``WebhookServer`` serves it over HTTPS; ``admission`` holds the decisions, built on
``jobflow_controller.validation``. The manager starts the server with ``--enable-webhook``;
``manifests/webhook/`` registers it with the API server.
"""

from jobflow_controller.webhook.admission import (
    JOB_FLOW_RESOURCE,
    OPERATION_NOT_CREATE_OR_UPDATE,
    RESOURCE_NOT_JOB_FLOWS,
    GroupVersionResource,
    ReviewError,
    admit_job_flows,
    decode_review,
    review_response,
)
from jobflow_controller.webhook.server import HEALTHZ_PATH, MAX_BODY_BYTES, VALIDATE_PATH, WebhookServer

__all__ = [
    "HEALTHZ_PATH",
    "JOB_FLOW_RESOURCE",
    "MAX_BODY_BYTES",
    "OPERATION_NOT_CREATE_OR_UPDATE",
    "RESOURCE_NOT_JOB_FLOWS",
    "VALIDATE_PATH",
    "GroupVersionResource",
    "ReviewError",
    "WebhookServer",
    "admit_job_flows",
    "decode_review",
    "review_response",
]
