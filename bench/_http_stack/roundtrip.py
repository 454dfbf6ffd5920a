"""CPU per request of each HTTP stack, in one process against a real kube-apiserver (GET and PUT of a
JobTemplate), blocks alternated: `python bench/_http_stack/roundtrip.py REQUESTS_PER_BLOCK_HALF ROUNDS`.
Not part of the product; bench/versus.py --http-stacks is the A/B on the whole controller
(docs/decisions/0002-http-stack.md)."""

import json
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]

import stdlib_http  # noqa: E402

from bench._common import control_plane, log, rest_client  # noqa: E402
from jobflow_controller.kube import http1, transport  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402

PRODUCT_EXCHANGE = transport.Transport._exchange


STACKS = {
    "http.client": (stdlib_http.Connection, stdlib_http.transport_exchange),
    "http1": (http1.Connection, PRODUCT_EXCHANGE),
    "urllib3": (http1.Connection, PRODUCT_EXCHANGE),
}


def block(kubeconfig, stack, n):
    transport.Connection, transport.Transport._exchange = STACKS[stack]
    rest = rest_client(kubeconfig, agent="roundtrip")
    if stack == "urllib3":
        rest.transport = None
    templates = Clientset(rest).job_templates("default")
    obj = templates.get("a")
    templates.get("a")  # the connection made
    cpu = time.process_time()
    for _ in range(n):
        obj = templates.get("a")
        obj = templates.update(obj)
    spent = time.process_time() - cpu
    rest.close()
    return spent / (2 * n) * 1e6


def main():
    from tests.e2e.jobflows import template

    n, rounds = int(sys.argv[1]), int(sys.argv[2])
    out = {s: [] for s in STACKS}
    with control_plane() as plane:
        rest = rest_client(plane.kubeconfig_path, agent="seed")
        Clientset(rest).job_templates("default").create(template("a", "default", "Completed"))
        for r in range(rounds):
            for stack in STACKS:
                out[stack].append(round(block(plane.kubeconfig_path, stack, n), 1))
                log(f"round {r + 1} {stack}: {out[stack][-1]} us of CPU a request")
    print(json.dumps({"us_cpu_per_request": out, "requests_per_block": 2 * n}))


main()
