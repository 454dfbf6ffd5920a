"""`kubectl jobflow ui`'s HTTP server under connections that hold threads (issue 33, item 5).

Prints one JSON document. The server (the real one, over a fake backend: the server is what is
attacked) runs in this process; the attacker opens, from the same machine:
- `idle`: N connections that send nothing;
- `slowloris`: N connections that send a request head one byte per second, never finishing it.
For each: the server's threads 1 s into the attack, the time to answer a legitimate request during
the attack (median of 5), and how many of the attacker's connections the server has closed after
`--hold` seconds (past the 10 s head deadline).

`--root PATH` imports kubectl_jobflow from another checkout (the code before the fix:
`git archive <commit> | tar -x -C PATH`), to measure before and after with the same bench.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import resource
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

TOKEN = "bench-token-0123456789abcdefghijklmnopqrstuvwxyz01234"


class _Changes:
    version = 0

    def touch(self, keys: Any) -> None:
        pass

    def wait(self, since: int, timeout: float) -> int:
        time.sleep(min(timeout, 0.2))
        return 0

    def changed_since(self, since: int) -> set[str]:
        return set()


class _Cache:
    changes = _Changes()


class _Backend:
    cache = _Cache()

    def list_snapshot(self) -> dict[str, Any]:
        return {"scope": "", "rows": []}


def _legit_ms(port: int, prefix: str) -> float | None:
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", f"{prefix}api/list", headers={"Host": f"127.0.0.1:{port}", "X-JobFlow-Token": TOKEN})
        response = conn.getresponse()
        response.read()
        conn.close()
        if response.status != 200:
            return None
    except OSError:
        return None
    return round((time.perf_counter() - started) * 1000, 1)


def _closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _attack(port: int, prefix: str, count: int, hold: float, slow: bool) -> dict[str, Any]:
    before = threading.active_count()
    socks: list[socket.socket] = []
    for _ in range(count):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            break
    stop = threading.Event()

    def trickle() -> None:
        head = f"GET /api/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode()
        sent = 0
        while not stop.wait(1.0):
            for sock in socks:
                with contextlib.suppress(OSError):  # closed by the server: what is measured
                    sock.send(head[sent : sent + 1] if sent < len(head) else b"a")
            sent += 1

    trickler = threading.Thread(target=trickle, daemon=True)
    if slow:
        trickler.start()
    time.sleep(1.0)
    threads = threading.active_count() - before - (1 if slow else 0)
    legit = [_legit_ms(port, prefix) for _ in range(5)]
    answered = [ms for ms in legit if ms is not None]
    time.sleep(max(0.0, hold - 1.0))
    closed = sum(_closed(sock) for sock in socks)
    legit_after = _legit_ms(port, prefix)
    stop.set()
    for sock in socks:
        sock.close()
    time.sleep(0.5)
    return {
        "connections_opened": len(socks),
        "server_threads_1s_in": threads,
        "legit_answered_of_5": len(answered),
        "legit_ms_median": statistics.median(answered) if answered else None,
        f"closed_by_server_after_{hold:g}s": closed,
        f"legit_ms_after_{hold:g}s": legit_after,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--connections", type=int, default=400)
    parser.add_argument("--hold", type=float, default=12.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.connections + 256)), hard))
    sys.path.insert(0, args.root)
    from kubectl_jobflow.ui.server import UIServer

    server = UIServer(_Backend(), token=TOKEN)  # type: ignore[arg-type]
    server.start()
    # Everything is under the session's secret prefix since issue 42 (a --root before it serves "/").
    prefix = getattr(getattr(server, "credentials", None), "prefix", "/")
    try:
        doc = {
            "root": args.root,
            "idle": _attack(server.port, prefix, args.connections, args.hold, slow=False),
            "slowloris": _attack(server.port, prefix, args.connections, args.hold, slow=True),
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }
    finally:
        server.shutdown()
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
