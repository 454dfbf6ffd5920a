"""--shards and --shard-index: off by default, validated, and the preferred shard of a StatefulSet pod."""

from __future__ import annotations

import pytest

from jobflow_controller.manager import options as opts
from jobflow_controller.manager.shards import preferred_shard


def test_sharding_is_off_by_default() -> None:
    options, _ = opts.parse([])
    assert (options.shards, options.shard_index) == (0, None)


def test_shards_and_shard_index_are_parsed() -> None:
    options, _ = opts.parse(["--shards=3", "--shard-index=2"])
    assert (options.shards, options.shard_index) == (3, 2)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shards=-1"], "--shards: must not be negative"),
        (["--shard-index=0"], "--shard-index needs --shards"),
        (["--shards=3", "--shard-index=3"], "--shard-index: must be in 0..2"),
    ],
)
def test_bad_sharding_flags_exit_2_naming_the_flag(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        opts.parse(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_shard_index_flag_wins_over_the_pod_name() -> None:
    options, _ = opts.parse(["--shards=3", "--shard-index=0"])
    assert preferred_shard(options, pod_name="jobflow-controller-2") == 0


def test_preferred_shard_is_the_statefulset_ordinal_of_the_pod() -> None:
    options, _ = opts.parse(["--shards=3"])
    assert preferred_shard(options, pod_name="jobflow-controller-2") == 2


@pytest.mark.parametrize("pod_name", ["jobflow-controller-3", "jobflow-controller-7d9f8-x2x4z", "laptop"])
def test_no_preferred_shard_without_an_ordinal_below_the_shard_count(pod_name: str) -> None:
    options, _ = opts.parse(["--shards=3"])
    assert preferred_shard(options, pod_name=pod_name) is None


def test_pod_name_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAME", "jobflow-controller-1")
    options, _ = opts.parse(["--shards=3"])
    assert preferred_shard(options) == 1
