"""The leader election's own client, and the Lease locks made over it.

Like upstream's "leader-election" client (kube-controller-manager's `rest.AddUserAgent(config,
"leader-election")`): connections of its own, so a renewal never waits behind the controllers'
requests, and a user agent of its own, so audit logs tell renewals apart. It shares the
configuration of the process's client, not its QPS budget or its cancel event: a draining
process must still release its Leases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.kube.lease_lock import LeaseLock, lease_request_timeout
from jobflow_controller.kube.rest import RestClient, add_user_agent
from jobflow_controller.leaderelection.resourcelock import EventRecorder

#: The user-agent suffix client-go's controller managers give the leader election's client.
USER_AGENT_SUFFIX = "leader-election"


@contextmanager
def leader_election_locks(
    rest: RestClient,
    namespace: str,
    identity: str,
    *,
    event_recorder: EventRecorder | None,
    renew_deadline: float,
) -> Iterator[Callable[[str], LeaseLock]]:
    """Yields `lock_for(name)`, a LeaseLock on Lease `namespace/name` held as `identity`; all locks
    share one client, closed on leaving the block."""
    api_client = k8s_client.ApiClient(rest.configuration)
    api_client.user_agent = add_user_agent(rest.api_client.user_agent, USER_AGENT_SUFFIX)
    timeout = lease_request_timeout(renew_deadline)

    def lock_for(name: str) -> LeaseLock:
        return LeaseLock(api_client, namespace, name, identity, event_recorder=event_recorder, request_timeout=timeout)

    try:
        yield lock_for
    finally:
        api_client.close()
