"""A flow's `patch.jobSpec` merged into its JobTemplate's spec (docs/patch.md has the rules with examples).

Upstream's `Flow` has `patch: {jobSpec: <partial Volcano JobSpec>}` and never reads it: the Job is
the template's spec verbatim. Here the Job's spec is `apply_patch(template spec, flow.patch)`:

* a JSON merge patch (RFC 7386) everywhere: objects are merged key by key, recursively; a null
  deletes the key; any other value (a list included) replaces the template's;
* except the keyed lists below, merged entry by entry as Kubernetes' strategic merge patch merges
  them: a patch entry is merged, by these same rules, into the template's entry with the same key;
  an entry whose key the template's list lacks is appended, in patch order (for `tasks` it is an
  error instead); the template's other entries stay, in their order.

    jobSpec.tasks                                    by name (every patch task must name a template task)
    tasks[].template.spec.containers, .initContainers   by name
    tasks[].template.spec.volumes                     by name
    <container>.env                                   by name
    <container>.ports                                 by containerPort and protocol (default "TCP")
    <container>.volumeMounts                          by mountPath

Only those paths are keyed; a list of the same name anywhere else (Volcano's own `jobSpec.volumes`,
say) is replaced like any other list.

The JobFlow CRD gives `patch.jobSpec` the full JobSpec schema with its defaults, so the API server
writes `maxRetry: 3` and `queue: "default"` into every `patch.jobSpec` it stores (and, say,
`networkTopology.mode: hard` into every `networkTopology` a patch holds). A defaulted value cannot
be told from one the user wrote, and merged in it would reset the template's queue, retries, mode:
`apply_patch` ignores a patch value equal to its field's CRD default (`patch_defaults.CRD_DEFAULTS`;
the JobTemplate's and the Job's CRDs have the same defaults, so the Job loses nothing). Everything here
is a pure function of JSON dicts: nothing given is ever modified.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from jobflow_controller.apis.jsontype import json_copy, json_type
from jobflow_controller.apis.patch_defaults import CRD_DEFAULTS

__all__ = [
    "JOB_SPEC_FIELD",
    "PatchError",
    "apply_patch",
    "job_spec_patch",
    "merge_job_spec",
    "patch_problems",
]

#: The key of `Flow.patch` that holds the partial JobSpec (upstream's JSON tag; not `spec`).
JOB_SPEC_FIELD: Final = "jobSpec"


class PatchError(ValueError):
    """A patch that cannot apply: `path` (e.g. `patch.jobSpec.tasks[1]`) and what is wrong there."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class _Key:
    """One field of a keyed list's key; `default` stands in when an entry omits it (None: required)."""

    field: str
    kind: type
    default: Any = None


@dataclass(frozen=True)
class _Object:
    """An object whose `fields` have rules of their own; every other field is merged as RFC 7386 says."""

    fields: Mapping[str, _Object | _KeyedList] = field(default_factory=dict)


@dataclass(frozen=True)
class _KeyedList:
    """A list merged entry by entry, matching entries by `keys`; `must_exist`: no appending."""

    keys: tuple[_Key, ...]
    item: _Object = field(default_factory=_Object)
    must_exist: bool = False

    @property
    def matched_by(self) -> str:
        return " and ".join(k.field for k in self.keys)


_BY_NAME: Final = (_Key("name", str),)
_CONTAINER: Final = _Object(
    {
        "env": _KeyedList(_BY_NAME),
        "ports": _KeyedList((_Key("containerPort", int), _Key("protocol", str, "TCP"))),
        "volumeMounts": _KeyedList((_Key("mountPath", str),)),
    }
)
_POD_SPEC: Final = _Object(
    {
        "containers": _KeyedList(_BY_NAME, _CONTAINER),
        "initContainers": _KeyedList(_BY_NAME, _CONTAINER),
        "volumes": _KeyedList(_BY_NAME),
    }
)
_TASK: Final = _Object({"template": _Object({"spec": _POD_SPEC})})
#: The rules for a JobSpec: the root of the tree every path above hangs from.
_JOB_SPEC: Final = _Object({"tasks": _KeyedList(_BY_NAME, _TASK, must_exist=True)})

_PATCH_PATH: Final = "patch"
_JOB_SPEC_PATH: Final = f"{_PATCH_PATH}.{JOB_SPEC_FIELD}"


# -- what can be checked without the template ---------------------------------------------------------
def patch_problems(patch: object) -> list[PatchError]:
    """Every problem of a flow's `patch` value that needs no template, in document order.

    A `patch` or `jobSpec` that is absent or null is no patch. Checked: `patch` and `jobSpec` are
    objects; along the keyed paths, objects are objects and keyed lists are arrays of objects;
    every entry of a keyed list has its key, of the right type; no two entries of one keyed list
    share a key. What only the template can say (whether each patch task names one of its tasks) is
    left to `apply_patch`. The CRD schema checks every other field's type before admission sees it.
    """
    problems: list[PatchError] = []
    if patch is None:
        return problems
    if not isinstance(patch, Mapping):
        problems.append(PatchError(_PATCH_PATH, f"must be an object, not {json_type(patch)}"))
        return problems
    job_spec = patch.get(JOB_SPEC_FIELD)
    if job_spec is not None:
        _check_object(job_spec, _JOB_SPEC, _JOB_SPEC_PATH, problems)
    return problems


def _check_object(value: object, rules: _Object, path: str, problems: list[PatchError]) -> None:
    if not isinstance(value, Mapping):
        problems.append(PatchError(path, f"must be an object, not {json_type(value)}"))
        return
    for name, rule in rules.fields.items():
        child = value.get(name)
        if child is None:  # absent, or null: RFC 7386's delete
            continue
        if isinstance(rule, _KeyedList):
            _check_list(child, rule, f"{path}.{name}", problems)
        else:
            _check_object(child, rule, f"{path}.{name}", problems)


def _check_list(value: object, rule: _KeyedList, path: str, problems: list[PatchError]) -> None:
    if not isinstance(value, list):
        problems.append(PatchError(path, f"must be an array, not {json_type(value)}"))
        return
    list_name = path.rsplit(".", 1)[-1]
    seen: dict[tuple[Any, ...], int] = {}
    for index, entry in enumerate(value):
        entry_path = f"{path}[{index}]"
        if not isinstance(entry, Mapping):
            problems.append(PatchError(entry_path, f"must be an object, not {json_type(entry)}"))
            continue
        key = _patch_key(entry, rule, entry_path, problems)
        if key is not None:
            if key in seen:
                problems.append(
                    PatchError(entry_path, f"{_describe(rule, key)} is already used by {list_name}[{seen[key]}]")
                )
            else:
                seen[key] = index
        _check_object(entry, rule.item, entry_path, problems)


def _patch_key(
    entry: Mapping[str, Any], rule: _KeyedList, path: str, problems: list[PatchError]
) -> tuple[Any, ...] | None:
    """The entry's key, or None after recording why it has none."""
    values: list[Any] = []
    for key in rule.keys:
        value = entry.get(key.field)
        if value is None or value == "":
            if key.default is None:
                problems.append(
                    PatchError(
                        path,
                        f"has no {key.field} (patch entries are matched to the template's by {rule.matched_by})",
                    )
                )
                return None
            value = key.default
        if not _is_kind(value, key.kind):
            problems.append(
                PatchError(f"{path}.{key.field}", f"must be {_kind_name(key.kind)}, not {json_type(value)}")
            )
            return None
        values.append(value)
    return tuple(values)


# -- the merge ----------------------------------------------------------------------------------------
def job_spec_patch(patch: object) -> Mapping[str, Any] | None:
    """The `jobSpec` of a flow's `patch` value, or None when there is none (absent, null, not objects)."""
    if not isinstance(patch, Mapping):
        return None
    job_spec = patch.get(JOB_SPEC_FIELD)
    return job_spec if isinstance(job_spec, Mapping) else None


def apply_patch(spec: Mapping[str, Any], patch: object) -> dict[str, Any]:
    """The Job spec for a flow: its template's `spec` with the flow's `patch` (the whole value) merged in.

    Raises `PatchError` for the first problem `patch_problems` finds, or for a patch task whose
    name the template lacks. A patch value equal to its field's CRD default (`CRD_DEFAULTS`) is
    ignored. Without a patch the result is a deep copy of `spec`, exactly what upstream sends.
    """
    problems = patch_problems(patch)
    if problems:
        raise problems[0]
    job_spec = job_spec_patch(patch)
    if job_spec is None:
        return json_copy(dict(spec))
    return merge_job_spec(spec, job_spec, ignore_crd_defaults=True)


def merge_job_spec(
    spec: Mapping[str, Any], job_spec: Mapping[str, Any], *, ignore_crd_defaults: bool = False
) -> dict[str, Any]:
    """`job_spec` (a partial JobSpec) merged into `spec` by the rules of the module docstring.

    With `ignore_crd_defaults` (what `apply_patch` passes), a patch value equal to its field's CRD
    default is skipped as if absent. Raises `PatchError` as `apply_patch` does. Neither argument
    is modified; the result shares nothing with them.
    """
    problems: list[PatchError] = []
    _check_object(job_spec, _JOB_SPEC, _JOB_SPEC_PATH, problems)
    if problems:
        raise problems[0]
    result = json_copy(dict(spec))
    merge = _Merge(CRD_DEFAULTS if ignore_crd_defaults else {})
    merge.merge_object(result, job_spec, _JOB_SPEC, _JOB_SPEC_PATH, "")
    return result


@dataclass(frozen=True)
class _Merge:
    """One merge: `defaults` are the patch values to skip, by field pattern (`CRD_DEFAULTS` or none)."""

    defaults: Mapping[str, Any]

    def merge_object(
        self, target: dict[str, Any], patch: Mapping[str, Any], rules: _Object | None, path: str, pattern: str
    ) -> None:
        """RFC 7386 into `target` (our own copy, changed in place), with `rules` for the keyed fields.

        `path` names the place for errors (`patch.jobSpec.tasks[1]`), `pattern` for the defaults
        (`tasks[]`).
        """
        for name, value in patch.items():
            field_pattern = f"{pattern}.{name}" if pattern else name
            if value is None:
                target.pop(name, None)
                continue
            if field_pattern in self.defaults and _same(value, self.defaults[field_pattern]):
                continue
            rule = rules.fields.get(name) if rules is not None else None
            if isinstance(rule, _KeyedList):
                target[name] = self.merge_list(target.get(name), value, rule, f"{path}.{name}", f"{field_pattern}[]")
            elif isinstance(value, Mapping):
                current = target.get(name)
                merged = current if isinstance(current, dict) else {}
                self.merge_object(merged, value, rule, f"{path}.{name}", field_pattern)
                target[name] = merged
            else:
                target[name] = json_copy(value)

    def merge_list(self, target: object, patch: Sequence[Any], rule: _KeyedList, path: str, pattern: str) -> list[Any]:
        """A keyed list: each patch entry merged into the template's entry of its key, or appended."""
        result: list[Any] = list(target) if isinstance(target, list) else []
        index: dict[tuple[Any, ...], int] = {}
        for position, entry in enumerate(result):
            key = _template_key(entry, rule)
            if key is not None and key not in index:  # the first of repeated keys, as strategic merge takes it
                index[key] = position
        for patch_index, entry in enumerate(patch):
            key = _template_key(entry, rule)
            assert key is not None  # patch_problems refused entries without a key
            entry_path = f"{path}[{patch_index}]"
            if key in index:
                merged = result[index[key]]
                if not isinstance(merged, dict):
                    merged = {}
                self.merge_object(merged, entry, rule.item, entry_path, pattern)
                result[index[key]] = merged
            elif rule.must_exist:
                raise PatchError(entry_path, _no_such_task(rule, key, result))
            else:
                added: dict[str, Any] = {}
                self.merge_object(added, entry, rule.item, entry_path, pattern)
                result.append(added)
        return result


def _template_key(entry: object, rule: _KeyedList) -> tuple[Any, ...] | None:
    if not isinstance(entry, Mapping):
        return None
    values: list[Any] = []
    for key in rule.keys:
        value = entry.get(key.field)
        if value is None or value == "":
            if key.default is None:
                return None
            value = key.default
        if not _is_kind(value, key.kind):
            return None
        values.append(value)
    return tuple(values)


def _no_such_task(rule: _KeyedList, key: tuple[Any, ...], entries: list[Any]) -> str:
    """Only `tasks` must match (`must_exist`): name the missing task and those the template has."""
    names = [k for k in (_template_key(e, rule) for e in entries) if k is not None]
    have = ", ".join(json.dumps(k[0]) for k in names)
    listing = f"its tasks: {have}" if names else "it has no tasks"
    return f"no task {json.dumps(key[0])} in the template ({listing})"


# -- small helpers --------------------------------------------------------------------------------------
def _same(value: object, default: object) -> bool:
    """Equal and of the same JSON type (so `false` is not `0`)."""
    return type(value) is type(default) and value == default


def _describe(rule: _KeyedList, key: tuple[Any, ...]) -> str:
    if len(key) == 1:
        return f"{rule.keys[0].field} {json.dumps(key[0])}"
    return f"{rule.keys[0].field} {'/'.join(str(part) for part in key)}"


def _is_kind(value: object, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _kind_name(kind: type) -> str:
    return "an integer" if kind is int else "a string"
