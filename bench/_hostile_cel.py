"""bench/hostile.py's `cel_hostile` scenario (issue 43, docs/decisions/0001-cel-library.md): the heaviest
`when[].cel` expressions that pass admission, evaluated by the controller while the bystanders run.

`CEL_JOBFLOWS` JobFlows, admitted by the webhook (the expressions compile within every limit), each
with params near the evaluation's input limit (`CEL_PARAMS` x 4 KiB) and `CEL_FLOWS` flows of 16 `cel`
items each (the most a flow may have), alternating the two costliest shapes measured: two
comprehensions over a list literal comparing the params map with itself, and the one `matches()` of
the costliest allowed pattern. Every item is true, so each flow's Job is created once all are judged.
Reported: how long until every flow's Job exists, the controller's CPU seconds (hostile.py's), and
whether any `InvalidWhen` was given (none should be). `bench` is hostile.py's `Bench`.
"""

from __future__ import annotations

import time
from typing import Any

from bench._common import create_namespace, log
from jobflow_controller.kube.resources import EVENTS
from tests.e2e.jobflows import flow, template

NAMESPACE = "hostile-cel"
CEL_JOBFLOWS = 16
#: 1 flow of 16 items: the 16 `cel` items a JobFlow may have (validation/when_cel.py).
CEL_FLOWS = 1
#: 28 params of 4 KiB: 112 Ki characters, under the 128 Ki of one evaluation's variables.
CEL_PARAMS = 28
JOBS_WITHIN = 60.0
JOB_SCRIPT = "Pending:0s,Running:0.1s,Completed"


def _literal(n: int) -> str:
    return "[" + ",".join(["0"] * n) + "]"


#: Two comprehensions over 190-element literals, each comparing a 112 Ki-character map 3 times.
COMPARE = " && ".join([_literal(190) + ".all(x, params == params && params == params && params == params)"] * 2)
#: The one matches() allowed, of the costliest 32-character pattern (10 Unicode classes), and the params.
MATCHES = "!'b'.matches('" + "\\\\w" * 10 + "') && size(params) > 0"
EXPRESSIONS = (COMPARE, MATCHES)


def cel_hostile(bench: Any) -> dict[str, Any]:
    namespace = NAMESPACE
    create_namespace(bench.clientset, namespace, {})
    params = [{"name": f"p{i}", "value": "v" * 4096} for i in range(CEL_PARAMS)]
    when = [{"cel": EXPRESSIONS[i % 2]} for i in range(16)]
    for i in range(CEL_FLOWS):
        bench.clientset.job_templates(namespace).create(template(f"c{i}", namespace, JOB_SCRIPT))
    started = time.monotonic()
    for j in range(CEL_JOBFLOWS):
        doc = flow(f"cel-{j}", namespace, [{"name": f"c{i}", "when": when} for i in range(CEL_FLOWS)])
        doc["spec"]["params"] = params
        bench.clientset.job_flows(namespace).create(doc)
    wanted = CEL_JOBFLOWS * CEL_FLOWS
    made = 0
    while time.monotonic() - started < JOBS_WITHIN:
        made = len(bench.clientset.jobs(namespace).list())
        if made >= wanted:
            break
        time.sleep(0.25)
    took = round(time.monotonic() - started, 2) if made >= wanted else None
    invalid = sum(
        int(e.get("count") or 1)
        for e in bench.clientset.resource(EVENTS, namespace).list()
        if e.get("reason") in ("InvalidWhen", "InvalidJobFlow")
    )
    log(f"   cel_hostile: {made}/{wanted} Jobs, all in {took} s, {invalid} InvalidWhen/InvalidJobFlow")
    return {
        "expressions_evaluated": CEL_JOBFLOWS * CEL_FLOWS * 16,
        "expression_lengths": [len(e) for e in EXPRESSIONS],
        "jobs_created": made,
        "all_jobs_created_after_s": took,
        "invalid_warnings": invalid,
    }


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    if name != "cel_hostile":
        return {}
    return {
        "every_flow_judged_true_and_created": result["all_jobs_created_after_s"] is not None,
        "no_invalid_warning": result["invalid_warnings"] == 0,
    }
