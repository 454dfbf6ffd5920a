"""Leader election wiring of the manager: who runs the controllers, and when it must stop.

Without --shards, one Lease (--leader-elect-resource-name) decides which replica runs the
controllers, as upstream's app/server.go does; losing it ends the process (`klog.Fatalf
("leaderelection lost")`). With --shards=N, one Lease per shard, each won and lost on its own
and one membership Lease per replica, the shards spread over the live replicas
(sharding/campaign.py). Either way the Lease is released only once the workers it guarded are
done, so no two replicas ever write for one JobFlow at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from jobflow_controller.framework import IN_FLIGHT_SYNC_GRACE
from jobflow_controller.kube.clientset import ResourceClient
from jobflow_controller.kube.leader_election_client import leader_election_locks
from jobflow_controller.kube.lease_lock import LeaseLock, lease_spec_to_leader_election_record
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.leaderelection import (
    HealthzAdaptor,
    LeaderCallbacks,
    LeaderElectionConfig,
    PrometheusLeaderMetrics,
    default_identity,
    run_or_die,
)
from jobflow_controller.leaderelection.resourcelock import EventRecorder
from jobflow_controller.manager.config import Options
from jobflow_controller.sharding import LeaseAccess, ShardCampaign, member_lease_name, shard_lease_name
from jobflow_controller.sharding.campaign import RunShard

log = structlog.get_logger("jobflow_controller.manager")


def run_leader_elected(
    o: Options,
    rest: RestClient,
    recorder: EventRecorder,
    registry: CollectorRegistry,
    watchdog: HealthzAdaptor | None,
    stop: threading.Event,
    lead: Callable[[threading.Event], None],
) -> bool:
    """Campaign for the Lease until `stop`; `lead(leading)` runs the controllers while leading.

    Returns True when the lease was lost before the stop (the caller exits 1); `stop` is set then.
    """
    identity = default_identity()
    leading_started, lead_done, lost = threading.Event(), threading.Event(), threading.Event()

    def on_started_leading(leading: threading.Event) -> None:
        leading_started.set()
        log.info("started leading", identity=identity)
        lead(leading)
        lead_done.set()

    def on_stopped_leading() -> None:
        if not stop.is_set():
            log.error("leaderelection lost", identity=identity)
            lost.set()
            stop.set()

    def on_new_leader(holder: str) -> None:
        if holder and holder != identity:
            log.info("new leader elected", leader=holder)

    callbacks = LeaderCallbacks(on_started_leading, on_stopped_leading, on_new_leader)
    with leader_locks(o, rest, recorder, identity) as lock_for:
        config = _election_config(o, lock_for(o.leader_elect_resource_name), callbacks, watchdog)
        elector_stop = threading.Event()
        elector = threading.Thread(
            target=run_or_die,
            args=(config, elector_stop),
            kwargs={"metrics": PrometheusLeaderMetrics(registry)},
            name="leader-elector",
            daemon=True,
        )
        elector.start()
        stop.wait()
        # Release the lease only once our workers are done, so no two leaders ever write at once.
        if leading_started.is_set():
            lead_done.wait(o.graceful_shutdown_timeout + IN_FLIGHT_SYNC_GRACE + 1.0)
        elector_stop.set()
        elector.join(timeout=o.leader_elect_renew_deadline + 5.0)
    return lost.is_set()


def _election_config(
    o: Options, lock: LeaseLock, callbacks: LeaderCallbacks, watchdog: HealthzAdaptor | None
) -> LeaderElectionConfig:
    return LeaderElectionConfig(
        lock=lock,
        callbacks=callbacks,
        lease_duration=o.leader_elect_lease_duration,
        renew_deadline=o.leader_elect_renew_deadline,
        retry_period=o.leader_elect_retry_period,
        watch_dog=watchdog,
        release_on_cancel=True,
        name=o.leader_elect_resource_name,
    )


def shard_campaign(
    o: Options,
    lock_for: Callable[[str], LeaseLock],
    identity: str,
    lease_client: ResourceClient,
    preferred: int | None,
    run_shard: RunShard,
    registry: CollectorRegistry,
) -> ShardCampaign:
    """The campaign for the shards' Leases, with this replica's membership Lease; each shard held
    runs `run_shard` until it is lost or handed over. `lease_client` lists and deletes the Leases
    of --leader-elect-resource-namespace (the membership and the rebalancing read them)."""
    base = o.leader_elect_resource_name

    def lease_name(shard: int) -> str:
        return shard_lease_name(base, shard)

    def list_leases() -> list[Mapping[str, Any]]:
        return list(lease_client.list())

    def delete_lease(name: str, uid: str) -> None:
        lease_client.delete(name, uid=uid or None)

    member = lock_for(member_lease_name(base, identity))
    leases = LeaseAccess(base, list_leases, delete_lease, member, lease_spec_to_leader_election_record)
    return ShardCampaign(
        o.shards,
        preferred,
        lock_for=lambda shard: lock_for(lease_name(shard)),
        run_shard=run_shard,
        name_for=lease_name,
        leases=leases,
        lease_duration=o.leader_elect_lease_duration,
        renew_deadline=o.leader_elect_renew_deadline,
        retry_period=o.leader_elect_retry_period,
        metrics=PrometheusLeaderMetrics(registry),
    )


def leader_locks(
    o: Options, rest: RestClient, recorder: EventRecorder, identity: str
) -> AbstractContextManager[Callable[[str], LeaseLock]]:
    """The Lease locks of --leader-elect-resource-namespace, over the leader election's own client."""
    return leader_election_locks(
        rest,
        o.leader_elect_resource_namespace,
        identity,
        event_recorder=recorder,
        renew_deadline=o.leader_elect_renew_deadline,
    )
