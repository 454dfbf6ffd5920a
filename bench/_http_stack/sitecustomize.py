"""Loaded by the controller when a benchmark puts this folder on its PYTHONPATH (``--http-stack``).

Chooses the HTTP stack of the controller's non-watch requests, for bench/versus.py's A/B:
``$JOBFLOW_BENCH_HTTP_STACK`` is ``urllib3`` (the kubernetes client's pool, as it ships: what the
watches use), ``http1`` (kube/http1.py, the hand-written reader, on kube/transport.py's pool), or
``http.client`` (the product: kube/transport.py's pool and resend rules with kube/stdlib_http.py).
Not part of the product.
"""

import os

_stack = os.environ.get("JOBFLOW_BENCH_HTTP_STACK", "http.client")
if _stack == "urllib3":
    from jobflow_controller.kube import rest

    rest.transport_supports = lambda configuration: False
elif _stack == "http1":
    from jobflow_controller.kube import http1, transport

    def _http1_exchange(conn, method, target, host, headers, body):
        conn.sock.sendall(http1.encode_request(method, target, host, headers, body))
        return http1.read_reply(conn.reader, method)

    transport.Connection = http1.Connection
    transport.exchange = _http1_exchange
elif _stack != "http.client":
    raise SystemExit(f"JOBFLOW_BENCH_HTTP_STACK={_stack!r}: not urllib3 or http.client")
