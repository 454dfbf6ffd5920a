"""The JobFlowTrigger controller's event reasons and messages (docs/triggers.md lists them)."""

from __future__ import annotations

from typing import Final

NORMAL: Final = "Normal"
WARNING: Final = "Warning"

#: A run was created; the message names it.
TRIGGERED: Final = "Triggered"
#: A firing, or the trigger itself, failed; the message names the cause.
TRIGGER_FAILED: Final = "TriggerFailed"

MESSAGE_TRIGGERED: Final = "Created jobflow %s (%s)"
MESSAGE_INVALID: Final = "invalid trigger: %s"
MESSAGE_FORBID: Final = "not starting a jobflow: %s is still running and concurrencyPolicy is Forbid"
MESSAGE_BINDING: Final = "cannot bind the event's params: %s"
MESSAGE_CREATE: Final = "cannot create the jobflow: %s"
MESSAGE_TEMPLATE_REFUSES: Final = "the bound params do not fit the template: %s"
MESSAGE_TEMPLATE_READ: Final = "cannot read jobflowtemplate %s: %s"
MESSAGE_RATE: Final = "%s event dropped: over the trigger's rate of %g per second (burst %d)"
MESSAGE_NOT_WATCHABLE: Final = "the controller may not watch %s (allowed: %s; the chart's triggers.watchKinds)"
MESSAGE_UNKNOWN_KIND: Final = "the API server serves no kind %s: %s"
#: Messages quote tenant text cut to this many characters.
MAX_QUOTED: Final = 300


def cut(text: str) -> str:
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED] + "..."
