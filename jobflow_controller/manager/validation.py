"""Checks of the parsed flags that no single value shows (upstream's CheckOptionOrDie).

A value of the wrong kind fails while parsing (pflag.py); what is caught here is a value out of
range or flags that cannot work together, reported as one line naming the flag, before anything
starts.
"""

from __future__ import annotations

from jobflow_controller.manager.config import Options, controller_name


class FlagError(Exception):
    """A flag value that cannot be used; str() is the one line printed before exiting 2."""


class OptionError(FlagError):
    """Upstream's CheckOptionOrDie refuses it: str() is printed as it is, and the process exits 1."""


def check_controllers(controllers: list[str]) -> None:
    """Upstream's checkControllers: a name may appear once, whatever its prefix, and the error names
    the repeated entry as written. A name no controller has is accepted, as upstream accepts it."""
    seen: set[str] = set()
    for entry in controllers:
        if entry == "*":
            continue
        name = controller_name(entry)
        if name in seen:
            raise OptionError(f"controllers option {entry} cannot have both '-' and '+' prefixes")
        seen.add(name)


def _check_address(flag: str, value: str) -> None:
    _host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise FlagError(f"invalid value {value!r} for flag --{flag}: want [host]:port")


def _check_ranges(o: Options) -> None:
    if o.kube_api_qps < 0:
        raise FlagError(f'invalid value "{o.kube_api_qps:g}" for flag --kube-api-qps: must not be negative')
    if o.kube_api_burst < 0:
        raise FlagError(f'invalid value "{o.kube_api_burst}" for flag --kube-api-burst: must not be negative')
    if o.resync_period < 0:
        raise FlagError(f'invalid value "{o.resync_period:g}s" for flag --resync-period: must not be negative')
    if o.shards < 0:
        raise FlagError(f'invalid value "{o.shards}" for flag --shards: must not be negative')
    if o.shard_index is not None:
        if o.shards == 0:
            raise FlagError("--shard-index needs --shards")
        if not 0 <= o.shard_index < o.shards:
            raise FlagError(f'invalid value "{o.shard_index}" for flag --shard-index: must be in 0..{o.shards - 1}')
    if o.status_write_interval < 0:
        raise FlagError(
            f'invalid value "{o.status_write_interval:g}s" for flag --status-write-interval: must not be negative'
        )
    if not o.status_write_qps > 0:
        raise FlagError(f'invalid value "{o.status_write_qps:g}" for flag --status-write-qps: must be positive')
    if o.status_write_burst < 1:
        raise FlagError(f'invalid value "{o.status_write_burst}" for flag --status-write-burst: must be at least 1')


def _check_leader_election(o: Options) -> None:
    if not o.leader_elect:
        return
    if o.leader_elect_lease_duration <= o.leader_elect_renew_deadline:
        raise FlagError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline")
    if o.leader_elect_renew_deadline <= 1.2 * o.leader_elect_retry_period:
        raise FlagError("--leader-elect-renew-deadline must be greater than 1.2 * --leader-elect-retry-period")
    if o.leader_elect_retry_period <= 0:
        raise FlagError("--leader-elect-retry-period must be greater than zero")


def validate(o: Options) -> None:
    """Raise `FlagError` for the first flag that cannot be used (`OptionError` where upstream exits 1).

    --controllers is checked first, as upstream's CheckOptionOrDie does.
    """
    check_controllers(o.controllers)
    _check_ranges(o)
    _check_address("healthz-address", o.healthz_address)
    _check_address("listen-address", o.listen_address)
    _check_address("webhook-address", o.webhook_address)
    _check_leader_election(o)
    if o.enable_webhook and not (o.webhook_tls_cert_file and o.webhook_tls_private_key_file):
        raise FlagError("--enable-webhook needs --webhook-tls-cert-file and --webhook-tls-private-key-file")
    try:
        o.patch_fields()
    except ValueError as err:
        raise FlagError(f"invalid value for flag --jobflow-patch-allowed-fields: {err}") from None
    if o.trigger_address:
        _check_address("trigger-address", o.trigger_address)
        if not (o.trigger_tls_cert_file and o.trigger_tls_private_key_file):
            raise FlagError("--trigger-address needs --trigger-tls-cert-file and --trigger-tls-private-key-file")
    if bool(o.tls_cert_file) != bool(o.tls_private_key_file):
        raise FlagError("--tls-cert-file and --tls-private-key-file must be given together")
