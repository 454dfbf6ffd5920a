"""The JobFlow state machine, one module per phase as upstream's `state/` package.

`new_state(job_flow, sync_job_flow)` picks the state from `status.state.phase`; `execute(action)`
runs the controller's sync with the phase's own status function. Upstream wires the sync through a
package-level variable (`state.SyncJobFlow`), which allows one controller per process; here it is
passed in, so tests and several controllers can coexist.
"""

from jobflow_controller.jobflow.state.factory import State, new_state
from jobflow_controller.jobflow.world import JobFlowActionFn, UpdateJobFlowStatusFn

__all__ = ["JobFlowActionFn", "State", "UpdateJobFlowStatusFn", "new_state"]
