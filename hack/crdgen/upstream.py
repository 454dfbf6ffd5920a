"""Which part of each CRD we ship is upstream's: what the bounds test (issue 42) exempts, field by field.

Every string, list, map and integer the project adds to upstream's CRDs is bounded in the schema
(``maxLength`` or an enum, ``maxItems``, ``maxProperties``, ``maximum``), so that the default install,
whose only admission is the schema, never stores an unbounded field of ours; upstream's fields stay
exactly upstream's (the faithful contract: ``UPSTREAM_CRD_SHA256``). ``upstream_counterpart`` says
which is which: for each CRD, the schema upstream has at the same places. It is upstream's own
CRD (``upstream_jobflow_crd()``, pinned by its hash) plus the upstream schemas we embed elsewhere
(``UPSTREAM_EMBEDDINGS``): a finally entry's ``patch.jobSpec`` is a flow's, and a CronJobFlow's
``spec.jobFlowTemplate.spec`` is a JobFlow's spec, whose fields are upstream's but for our
additions. A field with no counterpart is ours; tests/unit/manifests/test_manifests_bounds.py walks
the generated CRDs beside their counterparts and fails on one of ours without a bound.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Final

from crdgen.bus import command_crd
from crdgen.flow import jobtemplate_crd, upstream_jobflow_crd
from crdgen.schema import JSONDict
from crdgen.volcano import job_crd

#: The CRD envelope every CRD has (Kubernetes' own fields, validated by the API server).
_ENVELOPE: Final = ("/properties/apiVersion", "/properties/kind", "/properties/metadata")
_FLOW_JOB_SPEC: Final = "/properties/spec/properties/flows/items/properties/patch/properties/jobSpec"
_FINALLY_JOB_SPEC: Final = "/properties/spec/properties/finally/items/properties/patch/properties/jobSpec"
_TEMPLATE_SPEC: Final = "/properties/spec/properties/jobFlowTemplate/properties/spec"
#: A JobFlowTemplate's JobFlow spec (ours, docs/templates.md).
_JOB_FLOW_TEMPLATE_SPEC: Final = "/properties/spec/properties/jobFlow"

#: CRD name -> (pointer in its schema, pointer in upstream's JobFlow schema): the upstream schemas it
#: embeds away from where upstream has them (pointers below ``openAPIV3Schema``), grafted in this order.
UPSTREAM_EMBEDDINGS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "jobflows.flow.volcano.sh": ((_FINALLY_JOB_SPEC, _FLOW_JOB_SPEC),),
    "cronjobflows.flow.volcano.sh": (
        *((pointer, pointer) for pointer in _ENVELOPE),
        (_TEMPLATE_SPEC, "/properties/spec"),
        (_TEMPLATE_SPEC + _FINALLY_JOB_SPEC.removeprefix("/properties/spec"), _FLOW_JOB_SPEC),
    ),
    "jobflowtemplates.flow.volcano.sh": (
        *((pointer, pointer) for pointer in _ENVELOPE),
        (_JOB_FLOW_TEMPLATE_SPEC, "/properties/spec"),
        (_JOB_FLOW_TEMPLATE_SPEC + _FINALLY_JOB_SPEC.removeprefix("/properties/spec"), _FLOW_JOB_SPEC),
    ),
    "jobflowtriggers.flow.volcano.sh": tuple((pointer, pointer) for pointer in _ENVELOPE),
}

#: CRD name -> upstream's own CRD of that name (None: the CRD is ours alone).
_UPSTREAM_CRDS: Final[Mapping[str, Callable[[], JSONDict] | None]] = {
    "jobflows.flow.volcano.sh": upstream_jobflow_crd,
    "jobtemplates.flow.volcano.sh": jobtemplate_crd,
    "jobs.batch.volcano.sh": job_crd,
    "commands.bus.volcano.sh": command_crd,
    "cronjobflows.flow.volcano.sh": None,
    "jobflowtemplates.flow.volcano.sh": None,
    "jobflowtriggers.flow.volcano.sh": None,
}


def root_schema(crd: Mapping[str, object]) -> JSONDict:
    """A CRD's one version's ``openAPIV3Schema``."""
    (version,) = crd["spec"]["versions"]  # type: ignore[index]
    schema: JSONDict = version["schema"]["openAPIV3Schema"]
    return schema


def upstream_counterpart(crd_name: str) -> JSONDict:
    """The schema upstream has where ``crd_name``'s has one: upstream's CRD, with the embedded schemas grafted.

    KeyError for a CRD the generator does not write.
    """
    make = _UPSTREAM_CRDS[crd_name]
    counterpart: JSONDict = root_schema(make()) if make is not None else {}
    source = root_schema(upstream_jobflow_crd())
    for ours, theirs in UPSTREAM_EMBEDDINGS.get(crd_name, ()):
        _graft(counterpart, ours, copy.deepcopy(_at(source, theirs)))
    return counterpart


def _steps(pointer: str) -> list[str]:
    return pointer.split("/")[1:]


def _at(schema: JSONDict, pointer: str) -> JSONDict:
    node = schema
    for step in _steps(pointer):
        node = node[step]
    return node


def _graft(schema: JSONDict, pointer: str, subtree: JSONDict) -> None:
    *parents, last = _steps(pointer)
    node = schema
    for step in parents:
        node = node.setdefault(step, {})
    node[last] = subtree
