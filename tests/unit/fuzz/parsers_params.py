"""Params, `when` and matrix readers (docs/params.md), for the fuzzer: `$(VAR)` expansion and its
measure, the `when` judge, the matrix readers with their names and sizes, and the expansion budget.

Text parsers get a template string (or an expression's input) as the tenant wrote it; the JSON
parsers get a whole JobFlow, as the API server would hand it, or anything else.
"""

from __future__ import annotations

from typing import Any

from registry import Parser, as_text

from jobflow_controller.apis import expansion, params, substitution
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.jobflow import when

#: Variables as a Job's: a 4 KiB param (the CRD's bound) among short ones.
VARIABLES = {"params.big": "v" * 4096, "params.a": "x", "matrix.lr": "0.1", "context.flow.name": "f"}


def _job_names(job_flow: Any) -> object:
    """Every flow's Job names, as observe, the Job handler and the plugin list them."""
    if not isinstance(job_flow, dict):
        return None
    flows = jf.flows(job_flow)
    spec = params.ParamsSpec.of(job_flow, flows)
    if spec is None:
        return None
    return [spec.job_names("jf", f.name) for f in flows]


def _matrices(job_flow: Any) -> object:
    """Each flow's matrix read, its size, combinations and Job names (none when oversized)."""
    out = []
    for flow in jf.flows(job_flow) if isinstance(job_flow, dict) else ():
        found = params.matrix(flow.matrix)
        if found is not None:
            out.append((found.size, len(found.combinations()), len(params.matrix_job_names("jf", flow.name, found))))
    return out


def _when(job_flow: Any) -> object:
    """Each flow's `when` read, measured against its budget, then judged, as the params policy does."""
    out = []
    for flow in jf.flows(job_flow) if isinstance(job_flow, dict) else ():
        expressions = params.when_expressions(flow.when)
        if expansion.when_problem(tuple(e.input for e in expressions), VARIABLES) is None:
            verdict = when.judge_when(expressions, VARIABLES)
            out.append(None if verdict is None else verdict.message(flow.name))
    return out


PARSERS: list[Parser] = [
    Parser(
        "jobflow_controller.apis.substitution.expand",
        lambda t: substitution.expand(as_text(t), VARIABLES),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.apis.substitution.references",
        lambda t: substitution.references(as_text(t)).expanded_length(VARIABLES),
        "text",
        (),
    ),
    Parser(
        "jobflow_controller.apis.expansion.JobReferences.growth",
        lambda v: expansion.job_problem(expansion.JobReferences.of(v).growth(VARIABLES)),
        "json",
        (),
    ),
    Parser("jobflow_controller.apis.params.ParamsSpec.job_names", _job_names, "json", ()),
    Parser("jobflow_controller.apis.params.matrix", _matrices, "json", ()),
    Parser("jobflow_controller.jobflow.when.judge_when", _when, "json", ()),
]
