"""apimachinery's meta/v1 as the JSON shows it: read-only accessors over object metadata, shared by
every kind; and `Time` and `Duration` (RFC 3339 times, Go durations), as metav1 holds them.

The hot accessors here and in `apis.jobflow`/`apis.job` test `isinstance(x, (dict, Mapping))`: every
decoded object is a dict, which passes the C-level check at once; the ABC check alone costs ten
times as much, and these run hundreds of times per sync.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


def metadata(obj: Obj) -> Mapping[str, Any]:
    md = obj.get("metadata") if isinstance(obj, (dict, Mapping)) else None
    return md if isinstance(md, (dict, Mapping)) else {}


def name(obj: Obj) -> str:
    return str(metadata(obj).get("name") or "")


def namespace(obj: Obj) -> str:
    return str(metadata(obj).get("namespace") or "")


def uid(obj: Obj) -> str:
    return str(metadata(obj).get("uid") or "")


def resource_version(obj: Obj) -> str:
    return str(metadata(obj).get("resourceVersion") or "")


def generation(obj: Obj) -> int:
    value = metadata(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def creation_timestamp(obj: Obj) -> str | None:
    ts = metadata(obj).get("creationTimestamp")
    return str(ts) if ts else None


def labels(obj: Obj) -> Mapping[str, str]:
    value = metadata(obj).get("labels")
    return value if isinstance(value, (dict, Mapping)) else {}


def owner_references(obj: Obj) -> list[Mapping[str, Any]]:
    refs = metadata(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, (dict, Mapping))] if isinstance(refs, list) else []


def get_controller_of(obj: Obj) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with `controller: true`, if any."""
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def generate_object_string(ns: str, obj_name: str) -> str:
    """`GenerateObjectString`: the "<namespace>.<name>" value of the createdBy labels."""
    return f"{ns}.{obj_name}"


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """metav1.IsControlledBy: `obj`'s controller reference points at `owner` by uid.

    The uid, not the name, is what tells a JobFlow from an earlier JobFlow of the same name that was
    deleted and re-created, and what tells our Job from one someone else made under the same name.
    """
    ref = get_controller_of(obj)
    return ref is not None and str(ref.get("uid") or "") == uid(owner)


# -- metav1.Time and metav1.Duration ---------------------------------------------------------------
# Times are RFC3339 at second precision in UTC ("2026-12-02T09:30:24Z"); durations are Go's
# `time.Duration.String()` ("1m30s", "2.5s", "0s"), which is what `runningDuration` holds.
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def format_time(t: datetime.datetime) -> str:
    return t.astimezone(datetime.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime.datetime:
    """An RFC3339 time; ValueError for anything else (a wrong type, a text past `MAX_TIME_TEXT`)."""
    if not isinstance(value, str) or len(value) > MAX_TIME_TEXT:
        raise ValueError(f"not an RFC3339 time: {str(value)[:MAX_TIME_TEXT]!r}")
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(datetime.UTC)


#: "2006-01-02T15:04:05.999999999+07:00" is 35 characters.
MAX_TIME_TEXT = 64


_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


#: The longest duration text parsed: a tenant writes these (a retry backoff), and Go's longest
#: meaningful one ("2562047h47m16.854775807s") is 24 characters.
MAX_DURATION_TEXT = 64
#: Go's `time.Duration` is an int64 of nanoseconds; ParseDuration refuses anything past it.
_MAX_DURATION_NS = 2**63 - 1


def parse_duration_ns(value: str) -> int:
    """Parse a Go duration string into integer nanoseconds, exactly as `time.ParseDuration` does.

    Integer arithmetic, not floats: a fraction finer than a nanosecond is truncated (Go's rule), and
    "2.9999999999s" stays below 3 s instead of rounding up to it. Raises ValueError on anything Go
    would reject (past an int64 of nanoseconds included) and on a text longer than
    `MAX_DURATION_TEXT` or not a string.
    """
    if not isinstance(value, str) or len(value) > MAX_DURATION_TEXT:
        raise ValueError(f"time: invalid duration {str(value)[:MAX_DURATION_TEXT]!r}")
    text = value.strip()
    sign = 1
    if text and text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if not text:
        raise ValueError(f"time: invalid duration {value!r}")
    if text == "0":
        return 0
    pos, total = 0, 0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if not match:
            raise ValueError(f"time: invalid duration {value!r}")
        number, unit = match.group(1), _UNIT_NANOS[match.group(2)]
        whole, _, frac = number.partition(".")
        total += int(whole or "0") * unit
        if frac:
            total += int(frac) * unit // 10 ** len(frac)
        pos = match.end()
        if total > _MAX_DURATION_NS + (sign < 0):
            raise ValueError(f"time: invalid duration {value!r}")
    return sign * total


def parse_duration(value: str) -> float:
    """Parse a Go duration string into seconds; raises ValueError on anything Go would reject."""
    return parse_duration_ns(value) / 1e9


def add_duration(t: datetime.datetime, duration: str) -> datetime.datetime:
    """`t.Add(d)` at Go's resolution, truncated to whole seconds as metav1.Time marshals it.

    A `timedelta` of float seconds rounds to the microsecond and can carry a time into the next
    second; Go never rounds up.
    """
    whole_seconds = (t.microsecond * 1_000 + parse_duration_ns(duration)) // 10**9
    return t.replace(microsecond=0) + datetime.timedelta(seconds=whole_seconds)


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
