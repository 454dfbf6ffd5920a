"""Go's flag syntax on argparse, as spf13/pflag gives it to Volcano's controller manager.

The command line is first read as pflag reads it (`pflag_args`): `--flag=value`, `--flag value`
(the next argument is the value, even one starting with `-`), a bare boolean flag means true,
`-v=4`, `-v 4` and `-v4` for klog's one-letter flag, `_` and `-` alike in every name (component-
base's WordSepNormalizeFunc), no abbreviations, and arguments that are no flag (the `2>&1` Volcano's
chart passes) or follow `--` are set aside, as pflag leaves them for a program that ignores them.
What comes out is one `--name=value` per flag given, which argparse converts and checks.

Durations take Go's syntax (`15s`, `1m30s`), numbers and booleans Go's strconv rules, and a bad
value exits 2 with one line naming the flag and pflag's kind of value (`invalid duration value
'2'`). A flag is declared once, as a `Flag` in a table; its default is read from the object the
flags fill in, so it is written nowhere else.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from jobflow_controller.apis.meta import parse_duration
from jobflow_controller.manager import govalues
from jobflow_controller.manager.govalues import parse_bool


class FlagSet(argparse.ArgumentParser):
    """argparse, but every error exits 2 after one line (no usage dump), as pflag does."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


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
#: pflag's int: Go's base-0 integer literal (`0x1f`, `017`), 64 bits.
INT = Kind("int", govalues.parse_int)
#: pflag's uint32 (`--worker-threads`): no sign, below 2^32.
UINT = Kind("uint", lambda value: govalues.parse_uint(value, bits=32))
UINT64 = Kind("uint64", govalues.parse_uint)
#: pflag's float32 (`--kube-api-qps`); `inf` and `nan` parse, as in Go.
FLOAT = Kind("float", govalues.parse_float32)
BOOL = Kind("bool", parse_bool)
DURATION = Kind("duration", parse_duration)
#: klog's value types, each checked as klog's Set does.
LEVEL = Kind("Level", govalues.parse_klog_level)
SEVERITY = Kind("severityValue", govalues.parse_klog_severity)
MODULE_SPEC = Kind("moduleSpec", govalues.parse_klog_vmodule)
TRACE_LOCATION = Kind("traceLocation", govalues.parse_klog_trace_location)
MAP_STRING_BOOL = Kind("mapStringBool", _map_string_bool)
#: A comma-separated list (pflag's StringSlice): `*,-sharding-controller`.
STRING_SLICE = Kind("stringSlice", _string_slice, show=",".join)
#: Each use adds one value (pflag's StringArray); not given, the field keeps its own default.
STRING_ARRAY = Kind("stringArray")
#: A flag without a value that is no option of the process (`--version`).
SWITCH = Kind("switch")


class _ExtendSlice(argparse.Action):
    """pflag's StringSlice: the first use replaces the default, each further use appends."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, _option_string: Any = None) -> None:
        current = getattr(namespace, self.dest)
        setattr(namespace, self.dest, [*current, *values] if isinstance(current, list) else values)


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
    #: Accepted (upstream has it) but configures nothing here: named in the start-up log when given.
    ignored: bool = False

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
            group.add_argument(*names, **options)
            return
        if self.kind is STRING_SLICE:
            options["action"] = _ExtendSlice
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


@dataclass
class CommandLine:
    """A command line as pflag reads it: each flag given as `--name=value`, in order."""

    #: What argparse is given: `--name=value` per flag, `--help`, and any unknown flag as written.
    tokens: list[str] = field(default_factory=list)
    #: The flags given, by their table name (`--log-dir` for `--log_dir`), each once.
    given: list[str] = field(default_factory=list)
    #: Arguments that are no flag, and everything after `--`: pflag leaves them; they are ignored.
    positional: list[str] = field(default_factory=list)


class _Reader:
    """pflag's parseArgs over a table of flags; an error is one line through `fail` (exit 2)."""

    def __init__(self, flags: Sequence[Flag], fail: Callable[[str], NoReturn]) -> None:
        self.long = {flag.name.removeprefix("--"): flag for flag in flags}
        self.short = {flag.short.removeprefix("-"): flag for flag in flags if flag.short}
        self.fail = fail
        self.line = CommandLine()

    def read(self, argv: Sequence[str]) -> CommandLine:
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg == "--":
                self.line.positional.extend(args)
                break
            if len(arg) < 2 or arg[0] != "-":
                self.line.positional.append(arg)
            elif arg[1] == "-":
                self._long(arg, args)
            else:
                self._shorthands(arg, args)
        return self.line

    def _long(self, arg: str, args: list[str]) -> None:
        name, has_value, value = arg[2:].partition("=")
        if not name or name[0] in "-=":
            self.fail(f"bad flag syntax: {arg}")
        flag = self.long.get(name.replace("_", "-"))  # WordSepNormalizeFunc: every name, not klog's only
        if flag is None:
            # pflag's own --help; anything else is unknown and argparse reports it (no abbreviations).
            self.line.tokens.append("--help" if name == "help" else arg)
            return
        if not has_value:
            if flag.kind in (BOOL, SWITCH):
                value = "true"  # pflag's NoOptDefVal of a bool flag
            elif args:
                value = args.pop(0)  # the next argument, whatever it starts with
            else:
                self.fail(f"flag needs an argument: {arg}")
        self._set(flag, value)

    def _shorthands(self, arg: str, args: list[str]) -> None:
        """`-v=4`, `-v4`, `-v 4`; pflag reads letters until one takes the rest as its value."""
        letters = arg[1:]
        while letters:
            letter, rest = letters[0], letters[1:]
            flag = self.short.get(letter)
            if flag is None:
                if letter == "h":
                    self.line.tokens.append("--help")
                    return
                self.fail(f"unknown shorthand flag: {letter!r} in {arg}")
            if rest.startswith("=") and len(rest) > 1:
                value, letters = rest[1:], ""
            elif flag.kind in (BOOL, SWITCH):
                value, letters = "true", rest
            elif rest:
                value, letters = rest, ""
            elif args:
                value, letters = args.pop(0), ""
            else:
                self.fail(f"flag needs an argument: {letter!r} in {arg}")
            self._set(flag, value)

    def _set(self, flag: Flag, value: str) -> None:
        if flag.name not in self.line.given:
            self.line.given.append(flag.name)
        if flag.kind is not SWITCH:
            self.line.tokens.append(f"{flag.name}={value}")
            return
        try:
            if parse_bool(value):
                self.line.tokens.append(flag.name)
        except ValueError as err:
            self.fail(f"argument {flag.name}: invalid bool value {value!r}: {err}")


def pflag_args(argv: Sequence[str], groups: Sequence[FlagGroup], fail: Callable[[str], NoReturn]) -> CommandLine:
    """Read `argv` as pflag does over the flags of `groups`; `fail` reports a syntax error."""
    return _Reader([flag for group in groups for flag in group.flags], fail).read(argv)
