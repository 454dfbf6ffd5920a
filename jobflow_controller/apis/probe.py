"""`spec.flows[].dependsOn.probe`: upstream's three probe lists, read and checked (docs/probe.md).

Upstream's API has `probe.httpGetList` (`taskName`, `path`, `port`, `httpHeader`), `tcpSocketList`
(`taskName`, `port`) and `taskStatusList` (`taskName`, `phase`), stored by the CRD and never read by
its controller. Ours makes them dependency conditions. This module only reads the JSON and says
what is wrong with it without seeing any Job (`probe_problems`, shared by admission and the
controller); what the conditions mean is `jobflow.probe`'s business.

Everything here is a pure function of the JobFlow's JSON dict, which it never mutates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobflow_controller.apis.jsontype import json_type

#: The JSON keys, as upstream's Go tags spell them.
PROBE_FIELD = "probe"
HTTP_GET_LIST = "httpGetList"
TCP_SOCKET_LIST = "tcpSocketList"
TASK_STATUS_LIST = "taskStatusList"

#: `v1.PodPhase`, the keys of a Job's `status.taskStatusCount[task].phase`.
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")

_PROBE_PATH = "dependsOn.probe"


@dataclass(frozen=True)
class HttpGet:
    """GET http://<pod IP>:<port><path> against each Running pod of the target's task."""

    task_name: str
    port: int
    path: str = ""
    #: upstream's `httpHeader` is one `v1.HTTPHeader` (a name and a value), not a list.
    header: tuple[str, str] | None = None

    def describe(self) -> str:
        return f"httpGet {self.task_name}:{self.port}{self.path or '/'}"


@dataclass(frozen=True)
class TcpSocket:
    """A TCP connect to <pod IP>:<port> of each Running pod of the target's task."""

    task_name: str
    port: int

    def describe(self) -> str:
        return f"tcpSocket {self.task_name}:{self.port}"


@dataclass(frozen=True)
class TaskStatus:
    """The target Job's `status.taskStatusCount[task].phase[<phase>]` reaches the task's replicas."""

    task_name: str
    phase: str

    def describe(self) -> str:
        return f"taskStatus {self.task_name}={self.phase}"


ProbeCheck = HttpGet | TcpSocket | TaskStatus


@dataclass(frozen=True)
class Probe:
    """One flow's probe: every entry of the three lists, in spec order."""

    http_get: tuple[HttpGet, ...] = ()
    tcp_socket: tuple[TcpSocket, ...] = ()
    task_status: tuple[TaskStatus, ...] = ()
    checks: tuple[ProbeCheck, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", (*self.task_status, *self.http_get, *self.tcp_socket))

    def __bool__(self) -> bool:
        return bool(self.checks)

    def task_names(self) -> list[str]:
        """The tasks the entries name, each once, in the order they first appear."""
        return list(dict.fromkeys(check.task_name for check in self.checks))

    def for_tasks(self, tasks: set[str]) -> tuple[ProbeCheck, ...]:
        """The entries that apply to a Job with these tasks."""
        return tuple(check for check in self.checks if check.task_name in tasks)


def parse_probe(raw: object) -> Probe:
    """The probe in `raw`; entries `probe_problems` would refuse are left out (call that first)."""
    if not isinstance(raw, Mapping):
        return Probe()
    http_get: list[HttpGet] = []
    for entry in _entries(raw, HTTP_GET_LIST):
        if _entry_problems(entry, HTTP_GET_LIST, ""):
            continue
        header = entry.get("httpHeader")
        http_get.append(
            HttpGet(
                task_name=str(entry["taskName"]),
                port=int(entry["port"]),
                path=str(entry.get("path") or ""),
                header=(str(header["name"]), str(header.get("value") or "")) if isinstance(header, Mapping) else None,
            )
        )
    tcp_socket = [
        TcpSocket(task_name=str(e["taskName"]), port=int(e["port"]))
        for e in _entries(raw, TCP_SOCKET_LIST)
        if not _entry_problems(e, TCP_SOCKET_LIST, "")
    ]
    task_status = [
        TaskStatus(task_name=str(e["taskName"]), phase=str(e["phase"]))
        for e in _entries(raw, TASK_STATUS_LIST)
        if not _entry_problems(e, TASK_STATUS_LIST, "")
    ]
    return Probe(tuple(http_get), tuple(tcp_socket), tuple(task_status))


def probe_problems(raw: object, *, has_targets: bool = True) -> list[str]:
    """Every problem of a flow's `dependsOn.probe` that needs no Job, as `<path>: <problem>`.

    Absent or null is no probe. Checked: the probe and its lists have the right shapes; every entry
    names its task (a valid DNS-1123 label, as Volcano's task names are); a port is 1..65535 (the
    CRD lets 0 through); an HTTP path is empty or starts with `/` and holds no whitespace or control
    character; a header has a valid field name and a value without line breaks; a phase is a pod
    phase; and the flow has targets (upstream creates a flow without targets at once, so a probe
    there could never gate anything). Whether the task exists in a target's Job only the controller
    can tell.
    """
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        return [f"{_PROBE_PATH}: must be an object, not {json_type(raw)}"]
    problems: list[str] = []
    if not has_targets and any(_entries(raw, name) for name in (HTTP_GET_LIST, TCP_SOCKET_LIST, TASK_STATUS_LIST)):
        problems.append(f"{_PROBE_PATH}: needs dependsOn.targets: a probe checks the Jobs of the flow's targets")
    for list_name in (TASK_STATUS_LIST, HTTP_GET_LIST, TCP_SOCKET_LIST):
        value = raw.get(list_name)
        path = f"{_PROBE_PATH}.{list_name}"
        if value is None:
            continue
        if not isinstance(value, list):
            problems.append(f"{path}: must be an array, not {json_type(value)}")
            continue
        for index, entry in enumerate(value):
            problems.extend(_entry_problems(entry, list_name, f"{path}[{index}]"))
    return problems


def _entry_problems(entry: object, list_name: str, path: str) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{path}: must be an object, not {json_type(entry)}"]
    problems: list[str] = []
    task = entry.get("taskName")
    if task is None or task == "":
        problems.append(f"{path}.taskName: is required")
    elif not isinstance(task, str):
        problems.append(f"{path}.taskName: must be a string, not {json_type(task)}")
    elif not _is_dns1123_label(task):
        problems.append(
            f"{path}.taskName: {task!r} is not a valid task name (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    if list_name in (HTTP_GET_LIST, TCP_SOCKET_LIST):
        problems.extend(_port_problems(entry.get("port"), f"{path}.port"))
    if list_name == HTTP_GET_LIST:
        problems.extend(_path_problems(entry.get("path"), f"{path}.path"))
        problems.extend(_header_problems(entry.get("httpHeader"), f"{path}.httpHeader"))
    if list_name == TASK_STATUS_LIST:
        phase = entry.get("phase")
        if phase is None or phase == "":
            problems.append(f"{path}.phase: is required (one of {', '.join(POD_PHASES)})")
        elif phase not in POD_PHASES:
            problems.append(f"{path}.phase: {phase!r} is not a pod phase (one of {', '.join(POD_PHASES)})")
    return problems


def _port_problems(port: object, path: str) -> list[str]:
    if port is None:
        return [f"{path}: is required"]
    if isinstance(port, bool) or not isinstance(port, int):
        return [f"{path}: must be an integer, not {json_type(port)}"]
    if not 1 <= port <= 65535:
        return [f"{path}: must be between 1 and 65535, not {port}"]
    return []


def _path_problems(value: object, path: str) -> list[str]:
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return [f"{path}: must be a string, not {json_type(value)}"]
    if not value.startswith("/"):
        return [f"{path}: {value!r} must start with '/'"]
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return [f"{path}: {value!r} must not contain whitespace or control characters"]
    return []


#: RFC 7230 `token` characters, what an HTTP field name may hold.
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _header_problems(value: object, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [f"{path}: must be an object, not {json_type(value)}"]
    problems: list[str] = []
    name = value.get("name")
    if not isinstance(name, str) or not name or not set(name) <= _TOKEN_CHARS:
        problems.append(f"{path}.name: {name!r} is not a valid HTTP header name")
    header_value = value.get("value")
    if header_value is not None and not isinstance(header_value, str):
        problems.append(f"{path}.value: must be a string, not {json_type(header_value)}")
    elif isinstance(header_value, str) and any(ch in "\r\n\0" for ch in header_value):
        problems.append(f"{path}.value: must not contain line breaks or NUL")
    return problems


def _is_dns1123_label(value: str) -> bool:
    if not 0 < len(value) <= 63:
        return False
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return set(value) <= allowed and value[0] != "-" and value[-1] != "-"


def _entries(raw: Mapping[str, Any], list_name: str) -> list[Any]:
    value = raw.get(list_name)
    return list(value) if isinstance(value, list) else []
