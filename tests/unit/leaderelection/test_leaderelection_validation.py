"""`NewLeaderElector`'s validation (client-go `TestLeaderElectionConfigValidation` and the rules
it encodes), with client-go's exact messages."""

from __future__ import annotations

import dataclasses
import socket

import pytest
from leaderelection_fakes import FakeLock, make_config

from jobflow_controller.leaderelection import (
    LeaderCallbacks,
    LeaderElector,
    default_identity,
)


def test_valid_config_is_accepted() -> None:
    LeaderElector(make_config(FakeLock("baz"), lease_duration=15.0, renew_deadline=2.0, retry_period=1.0))


def test_component_base_defaults_are_valid() -> None:
    config = make_config(FakeLock("baz"), lease_duration=15.0, renew_deadline=10.0, retry_period=2.0)
    LeaderElector(config)
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15.0, 10.0, 2.0)


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "message"),
    [
        (10.0, 10.0, 1.0, "leaseDuration must be greater than renewDeadline"),
        (5.0, 10.0, 1.0, "leaseDuration must be greater than renewDeadline"),
        (15.0, 2.4, 2.0, "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (15.0, 2.0, 2.0, "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (15.0, 0.12, 0.1, "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (15.0, 10.0, 0.0, "retryPeriod must be greater than zero"),
        (1.0, 0.0, -1.0, "renewDeadline must be greater than zero"),
        (0.0, -1e-9, -1.0, "leaseDuration must be greater than zero"),
    ],
)
def test_invalid_durations_are_rejected(lease: float, renew: float, retry: float, message: str) -> None:
    config = make_config(FakeLock("baz"), lease_duration=lease, renew_deadline=renew, retry_period=retry)
    with pytest.raises(ValueError) as excinfo:
        LeaderElector(config)
    assert str(excinfo.value) == message


def test_renew_deadline_just_above_jittered_retry_is_accepted() -> None:
    LeaderElector(make_config(FakeLock("baz"), lease_duration=15.0, renew_deadline=2.401, retry_period=2.0))


def test_missing_on_started_leading_is_rejected() -> None:
    config = make_config(FakeLock("baz"))
    config = dataclasses.replace(config, callbacks=LeaderCallbacks(on_stopped_leading=lambda: None))
    with pytest.raises(ValueError, match=r"^OnStartedLeading callback must not be nil$"):
        LeaderElector(config)


def test_missing_on_stopped_leading_is_rejected() -> None:
    config = make_config(FakeLock("baz"))
    config = dataclasses.replace(config, callbacks=LeaderCallbacks(on_started_leading=lambda _: None))
    with pytest.raises(ValueError, match=r"^OnStoppedLeading callback must not be nil$"):
        LeaderElector(config)


def test_empty_lock_identity_is_rejected() -> None:
    with pytest.raises(ValueError) as excinfo:
        LeaderElector(make_config(FakeLock("")))
    assert str(excinfo.value) == "Lock identity is empty"


def test_default_identity_is_hostname_underscore_uuid() -> None:
    identity = default_identity()
    host, _, uid = identity.rpartition("_")
    assert host == socket.gethostname()
    assert len(uid) == 36 and uid.count("-") == 4
    assert default_identity() != identity
