"""`JobFlowMemories`: every per-JobFlow memory of the controller, in one registry.

Each part that remembers something per JobFlow (the Jobs seen deleted Completed, the status
writes, the create expectations, the probe results, the Commands sent, what was logged or warned)
registers here, so that a JobFlow gone is forgotten by all of them at once (`forget`) and the
memory gauge reads every size from one place (`sizes`, bench/soak.py). A new memory is one more
`register`; nothing else changes.
"""

from __future__ import annotations

from typing import Protocol


class Memory(Protocol):
    """A part that remembers something per JobFlow."""

    def forget_job_flow(self, namespace: str, name: str, uid: str | None) -> None:
        """The JobFlow is gone: of that object only when `uid` is known, else of every object of the name."""

    def memory_sizes(self) -> dict[str, int]:
        """How many entries each of its memories holds now, by gauge name."""


class JobFlowMemories:
    def __init__(self) -> None:
        self._memories: list[Memory] = []

    def register(self, memory: Memory) -> None:
        self._memories.append(memory)

    def forget(self, namespace: str, name: str, uid: str | None = None) -> None:
        for memory in self._memories:
            memory.forget_job_flow(namespace, name, uid)

    def sizes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for memory in self._memories:
            out.update(memory.memory_sizes())
        return out
