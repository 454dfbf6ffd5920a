"""Every limit of the webhook, in one place: what a client can make it hold, and for how long.

Any pod that can reach port 8443 can send it anything (the NetworkPolicy in ``manifests/webhook``
narrows who can), and with ``failurePolicy: Fail`` a webhook that falls over blocks every JobFlow
create and update in the cluster. So a request is bounded before it costs anything: its headers,
its body, the time it may take, the connections and reviews in flight at once, and the size of
the Python objects its JSON becomes. docs/webhook.md ("Limits") gives the numbers and what a client
sees beyond each one; the API server's own requests stay well inside all of them.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DRAIN_LIMIT",
    "HEADERS_DEADLINE",
    "MAX_BODY_BYTES",
    "MAX_BODY_BYTES_IN_FLIGHT",
    "MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT",
    "MAX_CONCURRENT_REVIEWS",
    "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_CLIENT",
    "MAX_HEADER_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_VALUES",
    "MIN_ANSWER_SECONDS",
    "READ_CHUNK",
    "REQUEST_DEADLINE",
    "RETRY_AFTER_SECONDS",
]

#: The API server refuses request bodies over 3 MiB itself (its ``MaxRequestBodyBytes``), and a
#: review carries at most two objects that etcd (about 1.5 MiB each) accepted: 413 above it.
MAX_BODY_BYTES: Final = 3 * 1024 * 1024
#: The request line and headers together; the API server sends a few hundred bytes. 431 above it.
MAX_HEADER_BYTES: Final = 64 * 1024
#: From the accepted connection to the last byte of the body: TLS handshake, headers and body. A
#: client that drips its request slower than this loses the connection (the API server's own
#: ``timeoutSeconds`` for this webhook is 10 s, so it has given up by then anyway).
REQUEST_DEADLINE: Final = 10.0
#: From the accepted connection to the end of the request's headers: the TLS handshake and the
#: headers, which the API server sends in a few milliseconds. A connection that has not sent its
#: headers by then (one that never starts TLS, or drips its headers) is closed without an answer,
#: so each one a client holds costs it a reconnection every 3 s. The body then gets what is left of
#: ``REQUEST_DEADLINE``.
HEADERS_DEADLINE: Final = 3.0
#: Writing the answer gets what is left of the deadline, but never less than this.
MIN_ANSWER_SECONDS: Final = 1.0
#: Connections open at once, each one thread; one more is closed as soon as it is accepted, before
#: its TLS handshake (no thread, no answer: there is no TLS session to answer 429 in).
MAX_CONNECTIONS: Final = 256
#: Connections one client address may hold at once: half of ``MAX_CONNECTIONS``, so one address
#: can never hold them all. One more is closed at accept. When ``MAX_CONNECTIONS`` are open all the
#: same (several addresses), a newcomer from an address holding fewer than the biggest holder takes
#: that holder's oldest connection still reading its request (``clients.ClientShares``).
MAX_CONNECTIONS_PER_CLIENT: Final = MAX_CONNECTIONS // 2
#: Body bytes held at once by all connections, counted as they arrive: a request whose next chunk
#: would pass it is answered 429 with ``Retry-After``. Four maximum-size bodies.
MAX_BODY_BYTES_IN_FLIGHT: Final = 4 * MAX_BODY_BYTES
#: Body bytes one client address may hold at once: half of ``MAX_BODY_BYTES_IN_FLIGHT``, two
#: maximum-size bodies; past it, 429. When the global budget is spent all the same, a client holding
#: less than the biggest holder takes that holder's biggest body still being read.
MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT: Final = MAX_BODY_BYTES_IN_FLIGHT // 2
#: Reviews decoded and validated at once; the others wait, within their deadline, then get 429.
#: A review costs its body a few times over while it is decoded (see ``MAX_JSON_VALUES``).
MAX_CONCURRENT_REVIEWS: Final = 2
#: Nesting of arrays and objects. A JobFlow review nests about 20 deep (review, request, object,
#: spec, flows, patch.jobSpec, a pod template's affinity); Python's decoder recurses once a level.
MAX_JSON_DEPTH: Final = 100
#: Arrays, objects, members and elements of the body, counted before it is decoded. Decoded, a
#: value costs 30 to 75 bytes of memory (an empty object 72), so this bounds a review at about
#: 21 MiB; a review of two 500-flow JobFlows with 100 targets a flow and a pod template in each
#: patch has about 130,000.
MAX_JSON_VALUES: Final = 300_000
#: After an answer, what the client still sends (a refused request's body) is read and dropped up
#: to this much, so closing does not reset the connection before the client reads the answer; past
#: it the connection is closed, and reset (as Go's net/http, which reads 256 KiB).
DRAIN_LIMIT: Final = 256 * 1024
#: How much of a body is read at a time (and charged to ``MAX_BODY_BYTES_IN_FLIGHT``).
READ_CHUNK: Final = 64 * 1024
#: Sent with a 429.
RETRY_AFTER_SECONDS: Final = 1
