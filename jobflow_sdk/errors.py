"""The SDK's errors: one class per way a pipeline can go wrong, each carrying what a caller needs.

Every class derives from `JobFlowSDKError`, so `except JobFlowSDKError` catches them all; each also
derives from the builtin a caller would expect (`ValueError` for a spec the SDK refuses,
`TimeoutError` for a wait that ran out), so generic code handles them too.
"""

from __future__ import annotations

from collections.abc import Sequence


class JobFlowSDKError(Exception):
    """The base of every error the SDK raises on purpose."""


class SchemaError(JobFlowSDKError, ValueError):
    """The object does not fit its CRD's schema (a wrong type, an unknown field, a missing field):
    the API server would refuse it. `problems` are `path: message` lines, the path as kubectl prints
    it (`spec.flows[0].dependsOn.rule`)."""

    def __init__(self, kind: str, name: str, problems: Sequence[str]) -> None:
        self.kind, self.name, self.problems = kind, name, list(problems)
        super().__init__(f"{kind} {name!r} does not fit its schema: " + "; ".join(self.problems))


class InvalidJobFlowError(JobFlowSDKError, ValueError):
    """Admission would refuse the object: `problems` are the webhook's own messages."""

    def __init__(self, kind: str, name: str, problems: Sequence[str]) -> None:
        self.kind, self.name, self.problems = kind, name, list(problems)
        super().__init__(f"{kind} {name!r} is invalid: " + "; ".join(self.problems))


class JobFlowFailedError(JobFlowSDKError):
    """The JobFlow ended Failed. `failed_flows` name the flows whose Jobs failed (in spec order);
    `warnings` are the Warning events about the JobFlow and its Jobs (`reason: message`)."""

    def __init__(self, name: str, failed_flows: Sequence[str], warnings: Sequence[str]) -> None:
        self.name, self.phase = name, "Failed"
        self.failed_flows, self.warnings = list(failed_flows), list(warnings)
        flows = ", ".join(self.failed_flows) or "no flow failed (see the warnings)"
        text = f"JobFlow {name!r} Failed; failed flows: {flows}"
        if self.warnings:
            text += "; warnings: " + "; ".join(self.warnings)
        super().__init__(text)


class WaitTimeoutError(JobFlowSDKError, TimeoutError):
    """`wait()` ran out of time; `phase` is the last phase seen ("" when none was written yet)."""

    def __init__(self, name: str, phase: str, timeout: float) -> None:
        self.name, self.phase, self.timeout = name, phase, timeout
        super().__init__(f"JobFlow {name!r} still {phase or 'unstarted'} after {timeout:g}s")


class JobFlowDeletedError(JobFlowSDKError):
    """The JobFlow was deleted while `wait()` watched it."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"JobFlow {name!r} was deleted while waiting for it")


class NotAvailableError(JobFlowSDKError, NotImplementedError):
    """A feature the SDK has a place for but the controller does not serve yet."""
