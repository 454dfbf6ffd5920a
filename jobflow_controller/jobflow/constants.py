"""Reasons, messages and names the JobFlow controller shows to users (exact upstream strings)."""

from __future__ import annotations

#: `source.component` of every event, as upstream's controller manager sets it.
COMPONENT = "vc-controller-manager"
#: The work queue's name, which labels its `workqueue_*` metrics.
QUEUE_NAME = "jobflow"

EVENT_NORMAL = "Normal"
EVENT_WARNING = "Warning"

#: Normal event after a Job was created from a JobTemplate.
REASON_CREATED = "Created"
MESSAGE_CREATED = "create a job named %s!"
#: The message of the Warning event whose reason is the request's action, when a request is dropped.
MESSAGE_SYNC_FAILED = "%s JobFlow failed for %s"

#: Our addition (no upstream counterpart): a JobFlow whose spec can never finish.
REASON_INVALID = "InvalidJobFlow"
