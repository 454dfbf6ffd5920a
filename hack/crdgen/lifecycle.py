"""The lifecycle fields our JobFlow CRD adds (docs/lifecycle.md): all optional, so upstream's objects stay valid.

``spec.suspend``, ``spec.shutdown``, ``spec.activeDeadlineSeconds``, ``spec.ttlSecondsAfterFinished``,
``spec.flows[].activeDeadlineSeconds``, and the status the controller writes about them:
``status.suspendedSince``, ``status.finishedAt``, ``status.retryRequest``. The bounds are the
webhook's (``jobflow_controller.validation.lifecycle``; the values from ``apis.lifecycle_fields``), so
that an API server without the webhook refuses the same values, with its own message, and the upper
bounds every field of ours has (issue 42): the seconds at most Go's longest Duration, which the
controller reads a larger value as, the strings as long as the controller reads them. What no
schema can say (a ``shutdown`` changed back, a malformed ``flow.volcano.sh/retry-request``) is the
webhook's; the transition is also the CEL Component's (``transition_rule_patch``).
"""

from __future__ import annotations

from typing import Final

from crdgen.schema import JSONDict, date_time, sorted_keys, string
from jobflow_controller.apis.lifecycle import MAX_SECONDS
from jobflow_controller.apis.lifecycle_fields import SHUTDOWN_VALUES
from jobflow_controller.apis.meta import MAX_TIME_TEXT
from jobflow_controller.apis.tenant_text import MAX_ANNOTATION_BYTES

_ROOT: Final = "/spec/versions/0/schema/openAPIV3Schema/properties"
SPEC_POINTER: Final = f"{_ROOT}/spec"
_SPEC: Final = f"{SPEC_POINTER}/properties"
_FLOW: Final = f"{_SPEC}/flows/items/properties"
_STATUS: Final = f"{_ROOT}/status/properties"


def _seconds() -> JSONDict:
    # At most Go's longest Duration, which the controller reads any larger value as (apis.lifecycle).
    return {"format": "int64", "maximum": MAX_SECONDS, "minimum": 0, "type": "integer"}


def _time() -> JSONDict:
    # As long as the controller's parser reads (apis.meta); it writes RFC 3339 times of about 20.
    return sorted_keys({**date_time(), "maxLength": MAX_TIME_TEXT})


#: Where each added field goes, and its schema. ``status.retryRequest`` is the id of the last request
#: handled, which comes from an annotation the controller reads only up to ``MAX_ANNOTATION_BYTES``.
LIFECYCLE_FIELDS: Final[dict[str, JSONDict]] = {
    f"{_SPEC}/suspend": {"type": "boolean"},
    f"{_SPEC}/shutdown": string(enum=list(SHUTDOWN_VALUES)),
    f"{_SPEC}/activeDeadlineSeconds": _seconds(),
    f"{_SPEC}/ttlSecondsAfterFinished": _seconds(),
    f"{_FLOW}/activeDeadlineSeconds": _seconds(),
    f"{_STATUS}/suspendedSince": _time(),
    f"{_STATUS}/finishedAt": _time(),
    f"{_STATUS}/retryRequest": string(maxLength=MAX_ANNOTATION_BYTES),
}
#: The paths ``lifecycle_patch`` adds, in its order.
LIFECYCLE_POINTERS: Final = tuple(LIFECYCLE_FIELDS)

#: On spec (the Component only): ``shutdown`` only goes "" -> Stop, "" -> Terminate, Stop -> Terminate.
SHUTDOWN_TRANSITION_RULE: Final = (
    "!has(oldSelf.shutdown) || oldSelf.shutdown == '' || (has(self.shutdown) && (self.shutdown == oldSelf.shutdown"
    " || (oldSelf.shutdown == 'Stop' && self.shutdown == 'Terminate')))"
)
SHUTDOWN_TRANSITION_MESSAGE: Final = (
    'spec.shutdown may only go from "" to Stop or Terminate, or from Stop to Terminate; it cannot be undone'
)


def lifecycle_patch() -> list[JSONDict]:
    """The ``add``s of the lifecycle fields."""
    return [{"op": "add", "path": path, "value": dict(schema)} for path, schema in LIFECYCLE_FIELDS.items()]


def transition_rule_patch() -> list[JSONDict]:
    """The Component's transition rule on ``spec`` (it reads ``oldSelf``: checked on every UPDATE, never ratcheted)."""
    rule = {"message": SHUTDOWN_TRANSITION_MESSAGE, "rule": SHUTDOWN_TRANSITION_RULE}
    return [{"op": "add", "path": f"{SPEC_POINTER}/x-kubernetes-validations", "value": [rule]}]
