"""How Go reads a flag's value: strconv's numbers and booleans, and klog's own value types.

Each function takes the text after `--flag=` and returns the value, or raises ValueError with
Go's reason, exactly where `strconv.ParseInt`, `ParseUint`, `ParseBool` or klog's `Set` would
refuse it: `--worker-threads=-1` (a uint32), `-v=x` (klog's Level), `--vmodule=a` (no `=N`).
"""

from __future__ import annotations

import re

_INVALID = "invalid syntax"
_OUT_OF_RANGE = "value out of range"
#: Go's integer literal with base 0: 0x, 0o, 0b or a leading 0 (octal), `_` between digits.
_BASE_PREFIXES = {"0x": 16, "0o": 8, "0b": 2}
_FLOAT32_MAX = 3.4028234663852886e38


def _strconv_error(function: str, value: str, reason: str) -> ValueError:
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')  # Go's %q, for what a command line holds
    return ValueError(f'strconv.{function}: parsing "{quoted}": {reason}')


def _parse_magnitude(text: str, base: int) -> int:
    """Digits in `base`, `_` allowed only with base 0 (Go's rule): -1 stands for invalid syntax."""
    digits = text
    if base == 0:
        prefix = text[:2].lower() if text[:2].lower() in _BASE_PREFIXES else text[:1] if text[1:2] else ""
        base = _BASE_PREFIXES.get(prefix, 8 if prefix == "0" else 10)
        digits = text[len(prefix) :] if base != 10 else text
        # Go's underscoreOK: `_` only between digits, a base prefix counting as one.
        lead = "_?" if base != 10 else ""
        if "_" in digits and not re.fullmatch(lead + r"[0-9A-Za-z]+(_[0-9A-Za-z]+)*", digits):
            return -1
        digits = digits.replace("_", "")
    if not digits or not re.fullmatch(r"[0-9A-Za-z]+", digits):
        return -1
    try:
        return int(digits, base)
    except ValueError:
        return -1


def parse_int(value: str, bits: int = 64, base: int = 0) -> int:
    """strconv.ParseInt(value, base, bits): pflag's int flags use base 0 (`0x1f`, `017`, `1_000`)."""
    sign, text = (-1, value[1:]) if value[:1] == "-" else (1, value[1:] if value[:1] == "+" else value)
    magnitude = _parse_magnitude(text, base)
    if magnitude < 0:
        raise _strconv_error("ParseInt", value, _INVALID)
    number = sign * magnitude
    if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
        raise _strconv_error("ParseInt", value, _OUT_OF_RANGE)
    return number


def parse_uint(value: str, bits: int = 64, base: int = 0) -> int:
    """strconv.ParseUint(value, base, bits): no sign at all, `-1` is a syntax error as in Go."""
    magnitude = _parse_magnitude(value, base)
    if magnitude < 0:
        raise _strconv_error("ParseUint", value, _INVALID)
    if magnitude >= 1 << bits:
        raise _strconv_error("ParseUint", value, _OUT_OF_RANGE)
    return magnitude


def parse_bool(value: str) -> bool:
    """Go's strconv.ParseBool, as pflag's bool flags read their value."""
    if value in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if value in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise _strconv_error("ParseBool", value, _INVALID)


def parse_float32(value: str) -> float:
    """strconv.ParseFloat(value, 32), for pflag's float32 flags (`--kube-api-qps`)."""
    try:
        number = float(value)
    except ValueError:
        raise _strconv_error("ParseFloat", value, _INVALID) from None
    if value != value.strip() or "_" in value:
        raise _strconv_error("ParseFloat", value, _INVALID)
    if _FLOAT32_MAX < abs(number) < float("inf"):
        raise _strconv_error("ParseFloat", value, _OUT_OF_RANGE)
    return number


def parse_klog_level(value: str) -> int:
    """klog's Level (`-v`): a base-10 int32."""
    return parse_int(value, bits=32, base=10)


#: klog's severity names, in order: a threshold is a name (any case) or its number.
SEVERITIES = ("INFO", "WARNING", "ERROR", "FATAL")


def parse_klog_severity(value: str) -> int:
    """klog's severityValue (`--stderrthreshold`): INFO, WARNING, ERROR, FATAL or a base-10 int32."""
    if value.upper() in SEVERITIES:
        return SEVERITIES.index(value.upper())
    return parse_int(value, bits=32, base=10)


def parse_klog_vmodule(value: str) -> str:
    """klog's moduleSpec (`--vmodule`): comma-separated `pattern=N`, N a base-10 int32 >= 0."""
    for pattern in value.split(","):
        if not pattern:
            continue  # a trailing comma, as klog allows
        parts = pattern.split("=")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError("syntax error: expect comma-separated list of filename=N")
        try:
            level = parse_int(parts[1], bits=32, base=10)
        except ValueError:
            raise ValueError("syntax error: expect comma-separated list of filename=N") from None
        if level < 0:
            raise ValueError("negative value for vmodule level")
    return value


def parse_klog_trace_location(value: str) -> str:
    """klog's traceLocation (`--log-backtrace-at`): empty, or `file.go:N` with N > 0."""
    if not value:
        return value
    fields = value.split(":")
    if len(fields) != 2 or "." not in fields[0]:
        raise ValueError("syntax error: expect file.go:234")
    try:
        line = parse_int(fields[1], base=10)
    except ValueError:
        raise ValueError("syntax error: expect file.go:234") from None
    if line <= 0:
        raise ValueError("negative or zero value for level")
    return value
