"""Which Job spec fields a flow's `patch.jobSpec` may set (`--jobflow-patch-allowed-fields`, docs/patch.md).

A patch can set any field of the Job spec (image, service account, hostPath volumes, security
context, queue, priority class), and the controller creates the Job under its own identity, so an
operator may narrow it to a list of field paths relative to `jobSpec`, dotted, with no list
indices: `tasks.replicas`, `tasks.template.spec.containers.resources`, `minAvailable`.

* A path allows its field and everything under it (`tasks.template.spec.containers` allows whole
  containers).
* A path goes through lists: through a keyed list of the merge (`tasks`, `containers`, `env`, ...)
  entry by entry, and an entry's key (a task's `name`, a port's `containerPort` and `protocol`) is
  allowed with any field inside it, since it only says which entry is meant. Any other list is a
  value: only a path naming it (or above it) allows it.
* A value the merge ignores (equal to its field's CRD default) sets nothing and is not checked, so
  the defaults the API server writes into every stored patch (`maxRetry: 3`, `queue: default`)
  never count against it. A `null` deletes the template's value: it is checked like a value.

None (the flag unset) allows everything, as before the flag; `none` allows no field at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jobflow_controller.apis.patch import (
    _JOB_SPEC,
    _JOB_SPEC_PATH,
    PatchError,
    _KeyedList,
    _Object,
    _same,
    apply_patch,
    job_spec_patch,
    patch_problems,
)
from jobflow_controller.apis.patch_defaults import CRD_DEFAULTS

__all__ = ["NO_FIELDS", "PatchFields", "apply_allowed_patch", "parse_patch_fields", "patch_field_problems"]

#: The flag's value that allows no field: every patch that sets anything is refused.
NO_FIELDS: Final = "none"
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_-]+")

Path = tuple[str, ...]


@dataclass(frozen=True)
class PatchFields:
    """The field paths a patch may set (each a tuple of field names below `jobSpec`)."""

    paths: frozenset[Path]

    def allows(self, path: Path) -> bool:
        """The field at `path` is allowed: it or one of the fields above it is listed."""
        return any(path[:n] in self.paths for n in range(1, len(path) + 1))

    def leads_to(self, path: Path) -> bool:
        """A listed path lies below `path`: some of its fields may be set."""
        return any(len(p) > len(path) and p[: len(path)] == path for p in self.paths)

    def __str__(self) -> str:
        return ",".join(sorted(".".join(p) for p in self.paths)) or NO_FIELDS


def parse_patch_fields(entries: Iterable[str]) -> PatchFields | None:
    """The flag's entries (a comma-separated list already split) as a `PatchFields`; None for no entry.

    Raises ValueError naming an entry that is no dotted field path, or `none` with other entries.
    """
    listed = [e.strip() for e in entries if e.strip()]
    if not listed:
        return None
    if NO_FIELDS in listed:
        if len(listed) > 1:
            raise ValueError(f"{NO_FIELDS!r} cannot be given with fields")
        return PatchFields(frozenset())
    paths = set()
    for entry in listed:
        segments = tuple(entry.split("."))
        if not all(_SEGMENT.fullmatch(s) for s in segments):
            raise ValueError(f"{entry!r} is not a dotted field path below jobSpec (such as tasks.replicas)")
        paths.add(segments)
    return PatchFields(frozenset(paths))


def patch_field_problems(patch: object, fields: PatchFields | None) -> list[PatchError]:
    """A `PatchError` for each field the flow's `patch` sets outside `fields`, in document order."""
    job_spec = job_spec_patch(patch)
    if fields is None or job_spec is None:
        return []
    problems: list[PatchError] = []
    _Walk(fields, problems).object(job_spec, (), "", _JOB_SPEC, _JOB_SPEC_PATH, ())
    return problems


def apply_allowed_patch(spec: Mapping[str, Any], patch: object, fields: PatchFields | None) -> dict[str, Any]:
    """`apply_patch`, refusing first (`PatchError`) a patch of a bad shape, then one that sets a field
    outside `fields`."""
    problems = patch_problems(patch) or patch_field_problems(patch, fields)
    if problems:
        raise problems[0]
    return apply_patch(spec, patch)


@dataclass(frozen=True)
class _Walk:
    fields: PatchFields
    problems: list[PatchError]

    def object(
        self, value: Mapping[str, Any], path: Path, pattern: str, rules: _Object | None, where: str, keys: Path
    ) -> None:
        """Check each field of `value` (at `path`, CRD-default `pattern`, `where` for messages);
        `keys` are the fields naming the keyed-list entry `value` is."""
        for name, child in value.items():
            child_path, child_pattern = (*path, name), f"{pattern}.{name}" if pattern else name
            child_where = f"{where}.{name}"
            if name in keys or self.fields.allows(child_path):
                continue
            if child_pattern in CRD_DEFAULTS and _same(child, CRD_DEFAULTS[child_pattern]):
                continue
            rule = rules.fields.get(name) if rules is not None else None
            if self.fields.leads_to(child_path) and isinstance(child, Mapping):
                self.object(
                    child, child_path, child_pattern, rule if isinstance(rule, _Object) else None, child_where, ()
                )
            elif self.fields.leads_to(child_path) and isinstance(rule, _KeyedList) and isinstance(child, list):
                entry_keys = tuple(k.field for k in rule.keys)
                for index, entry in enumerate(child):
                    if isinstance(entry, Mapping):
                        entry_where = f"{child_where}[{index}]"
                        self.object(entry, child_path, f"{child_pattern}[]", rule.item, entry_where, entry_keys)
            else:
                self.problems.append(PatchError(child_where, _not_allowed(self.fields)))


def _not_allowed(fields: PatchFields) -> str:
    if not fields.paths:
        return f"patches may set no field (--jobflow-patch-allowed-fields={NO_FIELDS})"
    return f"not among the fields a patch may set (--jobflow-patch-allowed-fields={fields})"
