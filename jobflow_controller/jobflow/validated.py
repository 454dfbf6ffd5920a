"""Each JobFlow's validation, once per generation: remembered by (uid, generation).

A sync used to validate the whole JobFlow again (DAG, names, the failure-aware fields) though its
spec had not changed since the last sync; what the controller validates reads only the spec and the
JobFlow's name and namespace (the patch, probe and retry problems are each flow's own, reported at
their point of the sync), and the API server bumps `metadata.generation` on every spec change, so
the answer for one (uid, generation) never changes. The same entry says whether its
`InvalidJobFlow` Warning was given, so several syncs of one invalid generation add one Warning.
An object without a uid or a generation (written by hand in a test) is validated every time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobflow_controller.apis import meta
from jobflow_controller.validation.jobflow import validation_message


@dataclass
class _Verdict:
    uid: str
    generation: int
    problem: str | None
    warned: bool = False


class ValidationMemory:
    """`problem(job_flow)` once per (uid, generation); `first_warning(job_flow)` once per invalid one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._verdicts: dict[tuple[str, str], _Verdict] = {}

    def problem(self, job_flow: Mapping[str, Any]) -> str | None:
        """What makes the JobFlow one that can never run (joined problems), or None when it can."""
        key, uid, generation = (
            (meta.namespace(job_flow), meta.name(job_flow)),
            meta.uid(job_flow),
            meta.generation(job_flow),
        )
        with self._lock:
            verdict = self._verdicts.get(key)
        if verdict is not None and verdict.uid == uid and verdict.generation == generation and uid and generation:
            return verdict.problem
        problem = validation_message(job_flow, patches=False, retries=False)
        warned = verdict is not None and verdict.warned and (verdict.uid, verdict.generation) == (uid, generation)
        with self._lock:
            self._verdicts[key] = _Verdict(uid, generation, problem, warned)
        return problem

    def first_warning(self, job_flow: Mapping[str, Any]) -> bool:
        """True the first time it is asked for this invalid (uid, generation): its Warning is due."""
        key = (meta.namespace(job_flow), meta.name(job_flow))
        with self._lock:
            verdict = self._verdicts.get(key)
            if verdict is None or verdict.warned:
                return False
            verdict.warned = True
            return True

    # -- memories.py ------------------------------------------------------------------------------
    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        with self._lock:
            self._verdicts.pop((namespace, name), None)

    def memory_sizes(self) -> dict[str, int]:
        with self._lock:
            warned = sum(1 for v in self._verdicts.values() if v.warned and v.problem is not None)
            return {"invalid_warned": warned, "validated_specs": len(self._verdicts)}
