"""Loaded by the controller when a benchmark puts this folder on its PYTHONPATH (``--http-stack``).

Chooses the HTTP stack of the controller's non-watch requests, for bench/versus.py's A/B
(docs/decisions/0002-http-stack.md): ``$JOBFLOW_BENCH_HTTP_STACK`` is ``urllib3`` (the kubernetes
client's pool, as it ships: what the watches use), ``http.client`` (the standard library's, on
kube/transport.py's pool and resend rules: stdlib_http.py here), or ``http1`` (the product:
kube/transport.py with kube/http1.py). Not part of the product.
"""

import os

_stack = os.environ.get("JOBFLOW_BENCH_HTTP_STACK", "http1")
if _stack == "urllib3":
    from jobflow_controller.kube import rest

    rest.transport_supports = lambda configuration: False
elif _stack == "http.client":
    import stdlib_http

    from jobflow_controller.kube import transport

    transport.Connection = stdlib_http.Connection
    transport.Transport._exchange = stdlib_http.transport_exchange
elif _stack != "http1":
    raise SystemExit(f"JOBFLOW_BENCH_HTTP_STACK={_stack!r}: not urllib3, http.client or http1")
