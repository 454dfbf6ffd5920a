"""CPU per watch event: the client library's urllib3 stream (the product's watches) against kube/http1.py's
chunk reader on the same events, at the same time, and the decode alone: whether the watches should
move onto the requests' stack. `python bench/_http_stack/watch_cost.py EVENTS`. Not part of the
product (docs/decisions/0002-http-stack.md)."""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._common import control_plane, log, rest_client
from informers import ListOptions
from jobflow_controller.kube import listwatch
from jobflow_controller.kube.clientset import Clientset

WRITER = """
import sys
sys.path.insert(0, sys.argv[3])
from bench._common import rest_client
from jobflow_controller.kube.clientset import Clientset
t = Clientset(rest_client(sys.argv[1], agent="w")).job_templates("default")
obj = t.get("a")
for i in range(int(sys.argv[2])):
    obj["metadata"].setdefault("labels", {})["n"] = str(i)
    obj = t.update(obj)
"""


class Http1Watch:
    """The same watch read by kube/http1.py's chunk reader on transport.py's connection."""

    def __init__(self, rest, path, rv):
        from jobflow_controller.kube import http1

        self.http1 = http1
        query = [("watch", "true"), ("resourceVersion", rv), ("timeoutSeconds", "600")]
        _, url, headers, _, _ = rest.api_client.param_serialize(
            method="GET",
            resource_path=path,
            query_params=query,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        t = rest.transport
        self.conn = t._open(10.0)
        self.conn.sock.settimeout(120)
        self.conn.sock.sendall(http1.encode_request("GET", t.target(url), t._host_header, headers, None))
        status, _, hdrs = http1._head(self.conn.reader)
        assert status == 200 and hdrs.get(b"transfer-encoding") == b"chunked", (status, hdrs)
        self.cpu = 0.0

    def consume(self, n):
        h, reader = self.http1, self.conn.reader
        cpu, count, pending = time.thread_time(), 0, b""
        while count < n:
            size = h.chunk_size(h._line(reader, h.MAX_CHUNK_LINE, "chunk size line", "chunked body"))
            data = pending + reader.read(size)
            assert reader.read(2) == b"\r\n"
            view, start = memoryview(data), 0
            while (end := data.find(b"\n", start)) >= 0:
                listwatch._decode(view[start:end])
                start = end + 1
                count += 1
            pending = data[start:]
        self.cpu = time.thread_time() - cpu
        self.conn.close()


def main():
    from tests.e2e.jobflows import template

    n = int(sys.argv[1])
    root = str(Path(__file__).resolve().parents[2])
    with control_plane() as plane:
        rest = rest_client(plane.kubeconfig_path, agent="watch")
        templates = Clientset(rest).job_templates("default")
        created = templates.create(template("a", "default", "Completed"))
        lw = Clientset(rest).job_templates("default")
        watcher = listwatch.ResourceListerWatcher(rest, lw.resource, "default")
        watch = watcher.watch(ListOptions(resource_version=created["metadata"]["resourceVersion"], timeout_seconds=600))
        lines = []
        real_decode = listwatch._decode

        def keeping(line):
            lines.append(line.tobytes())
            return real_decode(line)

        listwatch._decode = keeping
        raw = Http1Watch(rest, lw.resource.path("default"), created["metadata"]["resourceVersion"])
        got = {}

        def consume():
            cpu = time.thread_time()
            for count, _ in enumerate(watch, 1):
                if count == n:
                    break
            got["cpu"] = time.thread_time() - cpu

        reader = threading.Thread(target=consume)
        reader.start()
        raw_reader = threading.Thread(target=raw.consume, args=(n,))
        raw_reader.start()
        subprocess.run([sys.executable, "-c", WRITER, str(plane.kubeconfig_path), str(n), root], check=True)
        reader.join(120)
        raw_reader.join(120)
        watch.stop()
        cpu = time.thread_time()
        for line in lines:
            real_decode(memoryview(line))
        decode = time.thread_time() - cpu
        per_event = got["cpu"] / n * 1e6
        decode_us = decode / n * 1e6
        log(f"{n} events: {per_event:.1f} us of CPU an event read and decoded; decode alone {decode_us:.1f}")
        log(f"http1 stream: {raw.cpu / n * 1e6:.1f} us of CPU an event read and decoded")
        print(
            json.dumps(
                {
                    "events": n,
                    "us_cpu_per_event_http1_stream": round(raw.cpu / n * 1e6, 1),
                    "us_cpu_per_event_read_and_decoded": round(per_event, 1),
                    "us_cpu_per_event_decode_alone": round(decode_us, 1),
                    "bytes_per_event": round(sum(map(len, lines)) / len(lines)),
                }
            )
        )


main()
