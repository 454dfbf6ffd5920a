"""Failed: terminal. Upstream neither syncs nor refreshes the status any more (state/failed.go)."""

from __future__ import annotations

from jobflow_controller.apis import Action
from jobflow_controller.jobflow.state.factory import _Base


class FailedState(_Base):
    def execute(self, action: Action) -> None:
        return None
