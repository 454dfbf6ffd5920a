"""What the correlator's logger keeps per event is packed into one string and read back unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.record.event_logger import _EventLog


@pytest.mark.parametrize(
    "log",
    [
        _EventLog(1, "2026-12-05T16:48:42Z", "jf-a.18a3f0c0ffee", "12345"),
        _EventLog(7, "", "jf-b.1", ""),
        _EventLog(0, "2026-12-05T16:48:42Z", "", "1"),
    ],
)
def test_a_log_of_strings_is_kept_as_one_string_and_read_back_equal(log: _EventLog) -> None:
    kept = log.packed()
    assert isinstance(kept, str)
    assert _EventLog.unpacked(kept) == log


@pytest.mark.parametrize(
    "first_timestamp, name",
    [(None, "jf-a.1"), ({"seconds": 1}, "jf-a.1"), ("2026-12-05T16:48:42Z", "odd\x1fname")],
)
def test_what_one_string_cannot_carry_back_keeps_the_object(first_timestamp: Any, name: str) -> None:
    log = _EventLog(2, first_timestamp, name, "9")
    assert log.packed() is log
    assert _EventLog.unpacked(log.packed()) is log
