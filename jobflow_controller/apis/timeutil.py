"""metav1.Time and metav1.Duration as they appear in JSON.

Times are RFC3339 at second precision in UTC ("2026-12-02T09:30:24Z"); durations are Go's
`time.Duration.String()` ("1m30s", "2.5s", "0s"), which is what `runningDuration` holds.
"""

from __future__ import annotations

import datetime
import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def format_time(t: datetime.datetime) -> str:
    return t.astimezone(datetime.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(datetime.UTC)


def parse_duration(value: str) -> float:
    """Parse a Go duration string into seconds; raises ValueError on anything Go would reject."""
    text = value.strip()
    sign = 1.0
    if text and text[0] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if not text:
        raise ValueError(f"time: invalid duration {value!r}")
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if not match:
            raise ValueError(f"time: invalid duration {value!r}")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos == 0:
        raise ValueError(f"time: invalid duration {value!r}")
    return sign * total


def format_duration(seconds: float) -> str:
    """Go's Duration.String() for a value in seconds (nanosecond resolution)."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _trim(nanos, size) + unit
    hours, rem = divmod(nanos, 3600 * 1_000_000_000)
    minutes, rem = divmod(rem, 60 * 1_000_000_000)
    out = sign
    if hours:
        out += f"{hours}h"
    if hours or minutes:
        out += f"{minutes}m"
    return out + _trim(rem, 1_000_000_000) + "s"


def _trim(value: int, size: int) -> str:
    whole, frac = divmod(value, size)
    if not frac:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}.{str(frac).zfill(digits).rstrip('0')}"
