"""Go's flag syntax on argparse, as spf13/pflag gives it to Volcano's controller manager.

Durations take Go's syntax (`15s`, `1m30s`), booleans Go's (`--leader-elect=false`, or the bare
flag for true), and a bad value exits 2 with one line naming the flag and pflag's kind of value
(`invalid duration value '2'`). A flag is declared once, as a `Flag` in a table; its default is
read from the object the flags fill in, so it is written nowhere else.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from jobflow_controller.apis.timeutil import parse_duration


class FlagSet(argparse.ArgumentParser):
    """argparse, but every error exits 2 after one line (no usage dump), as pflag does."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_bool(value: str) -> bool:
    """Go's strconv.ParseBool, as pflag's bool flags read their value."""
    lowered = value.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise ValueError(f"strconv.ParseBool: parsing {value!r}: invalid syntax")


def _uint(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _map_string_bool(value: str) -> dict[str, bool]:
    """component-base's mapStringBool: `Gate=true,Other=false`."""
    gates: dict[str, bool] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"missing bool value for {item}")
        gates[key.strip()] = parse_bool(raw.strip())
    return gates


def _string_slice(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


@dataclass(frozen=True)
class Kind:
    """A kind of flag value: how a value parses, and how a default is shown in --help."""

    name: str
    convert: Callable[[str], Any] | None = None
    #: How a default that is no string is given to argparse (which converts string defaults).
    show: Callable[[Any], str] | None = None

    def parser(self) -> Callable[[str], Any] | None:
        convert = self.convert
        if convert is None:
            return None

        def parse(value: str) -> Any:
            try:
                return convert(value)
            except ValueError as err:
                raise argparse.ArgumentTypeError(f"invalid {self.name} value {value!r}: {err}") from None

        parse.__name__ = self.name
        return parse


STRING = Kind("string")
INT = Kind("int", int)
UINT = Kind("uint", _uint)
FLOAT = Kind("float", float)
BOOL = Kind("bool", parse_bool)
DURATION = Kind("duration", parse_duration)
MAP_STRING_BOOL = Kind("mapStringBool", _map_string_bool)
#: A comma-separated list (pflag's StringSlice): `*,-sharding-controller`.
STRING_SLICE = Kind("stringSlice", _string_slice, show=",".join)
#: Each use adds one value (pflag's StringArray); not given, the field keeps its own default.
STRING_ARRAY = Kind("stringArray")
#: A flag without a value that is no option of the process (`--version`).
SWITCH = Kind("switch")


@dataclass(frozen=True)
class Flag:
    """One flag: `--name`, its kind and help; it fills the field named after it (or `dest`)."""

    name: str
    kind: Kind
    help: str
    short: str | None = None
    dest: str | None = None
    choices: tuple[str, ...] | None = None
    #: Read the default from this environment variable when it is set and not empty.
    env: str | None = None
    #: pflag's MarkDeprecated: this message is printed when the flag is given.
    deprecated: str | None = None

    @property
    def field(self) -> str:
        return self.dest or self.name.lstrip("-").replace("-", "_")

    def add_to(self, group: argparse._ArgumentGroup, defaults: object) -> None:
        names = [self.short, self.name] if self.short else [self.name]
        if self.kind is SWITCH:
            group.add_argument(*names, dest=self.field, action="store_true", help=self.help)
            return
        options: dict[str, Any] = {"dest": self.field, "help": self.help, "type": self.kind.parser()}
        if self.kind is STRING_ARRAY:
            # argparse would append to the default: it stays unset here and the field keeps its own.
            options.update(action="append", default=None)
        else:
            default = getattr(defaults, self.field)
            if self.env:
                default = os.environ.get(self.env) or default
            options["default"] = self.kind.show(default) if self.kind.show else default
        if self.kind is BOOL:
            options.update(nargs="?", const=True)
        if self.choices:
            options["choices"] = list(self.choices)
        group.add_argument(*names, **options)


@dataclass(frozen=True)
class FlagGroup:
    """Flags shown together in --help, under `title`."""

    title: str
    flags: tuple[Flag, ...]


def add_flag_groups(parser: argparse.ArgumentParser, groups: tuple[FlagGroup, ...], defaults: object) -> None:
    """Declare every flag of `groups` on `parser`, each defaulting to its field of `defaults`."""
    for flag_group in groups:
        group = parser.add_argument_group(flag_group.title)
        for flag in flag_group.flags:
            flag.add_to(group, defaults)
