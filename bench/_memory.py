"""Where a process's RSS is: /proc/<pid>/smaps by mapping, and a tracemalloc snapshot by package.

Not a benchmark (``make bench`` skips ``bench/_*.py``). Used by ``bench/e2e_flows.py --memory`` and
``bench/soak.py``. Categories of mappings:

* ``python``: the interpreter's executable and libpython (code and data of CPython itself);
* ``extensions``: the C extensions of site-packages and lib-dynload (orjson, yaml, _ssl, ...),
  each by its package;
* ``system_libraries``: libc, libssl/libcrypto, libz, ld.so and the other shared libraries;
* ``heap``: ``[heap]`` (glibc's main arena: malloc below its mmap threshold, from the main thread);
* ``anonymous``: anonymous mappings: CPython's 256 KiB object arenas (pymalloc, every object of
  512 bytes or less), glibc's other arenas (threads' malloc, ``MALLOC_ARENA_MAX``) and large
  allocations mmap'd on their own;
* ``stacks``: ``[stack]`` and the threads' stacks are anonymous too, hence counted there;
  ``other``: ``[vvar]``, ``[vdso]``, files that are not libraries.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

_SITE = re.compile(r"/site-packages/([^/]+)/")


def _category(path: str) -> str:
    if not path:
        return "anonymous"
    if path == "[heap]":
        return "heap"
    if path.startswith("["):
        return "stack" if path == "[stack]" else "other"
    name = Path(path).name
    if re.match(r"python3(\.\d+)?$", name) or name.startswith("libpython"):
        return "python"
    site = _SITE.search(path)
    if site:
        return f"extension:{site.group(1).split('.')[0]}"
    if "/lib-dynload/" in path:
        return f"extension:stdlib:{name.split('.')[0]}"
    if ".so" in name:
        return f"library:{name.split('.so')[0]}"
    return "other"


def smaps_by_mapping(pid: int | str) -> dict[str, Any]:
    """RSS (and its private part) in MiB by category of mapping, largest first, with the total."""
    rss: dict[str, int] = defaultdict(int)
    private: dict[str, int] = defaultdict(int)
    current = "other"
    with open(f"/proc/{pid}/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split(None, 5)
            if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                current = _category(head[5].strip() if len(head) > 5 else "")
            elif head and head[0] == "Rss:":
                rss[current] += int(head[1])
            elif head and head[0] in ("Private_Clean:", "Private_Dirty:"):
                private[current] += int(head[1])
    grouped: dict[str, int] = defaultdict(int)
    for key, kib in rss.items():
        grouped[key.split(":")[0] if key.startswith("library:") else key] += kib
    return {
        "total_rss_mib": round(sum(rss.values()) / 1024, 1),
        "by_category_mib": {
            k: round(v / 1024, 2) for k, v in sorted(_fold(rss).items(), key=lambda kv: -kv[1]) if v >= 64
        },
        "extensions_mib": {
            k.split(":", 1)[1]: round(v / 1024, 2)
            for k, v in sorted(rss.items(), key=lambda kv: -kv[1])
            if k.startswith("extension:") and v >= 128
        },
        "libraries_mib": {
            k.split(":", 1)[1]: round(v / 1024, 2)
            for k, v in sorted(rss.items(), key=lambda kv: -kv[1])
            if k.startswith("library:") and v >= 128
        },
        "private_mib": round(sum(private.values()) / 1024, 1),
    }


def _fold(rss: dict[str, int]) -> dict[str, int]:
    folded: dict[str, int] = defaultdict(int)
    for key, kib in rss.items():
        folded[{"library": "libraries", "extension": "extensions"}.get(key.split(":")[0], key)] += kib
    return folded


def _package(filename: str) -> str:
    site = _SITE.search(filename)
    if site:
        return site.group(1).split(".")[0]
    for ours in ("jobflow_controller", "informers", "workqueue"):
        marker = f"/{ours}/"
        if marker in filename:
            rest = filename.split(marker, 1)[1]
            sub = rest.split("/", 1)[0] if "/" in rest else ""
            return f"{ours}.{sub}" if sub and ours == "jobflow_controller" else ours
    if filename.startswith("<frozen"):
        return "importlib (code objects of imports)"
    if "/lib/python3" in filename:
        return "stdlib:" + Path(filename).stem
    return "other"


def tracemalloc_by_package(snapshot_path: str | Path, top: int = 25) -> dict[str, Any]:
    """A snapshot's traced bytes (allocating line's file) by package, in MiB, largest first."""
    import tracemalloc

    snapshot = tracemalloc.Snapshot.load(str(snapshot_path))
    by: dict[str, int] = defaultdict(int)
    for stat in snapshot.statistics("filename"):
        by[_package(stat.traceback[0].filename)] += stat.size
    total = sum(by.values())
    return {
        "traced_mib": round(total / 2**20, 2),
        "by_package_mib": {k: round(v / 2**20, 2) for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:top]},
    }


def take_snapshot(pid: int, directory: Path, timeout: float = 120.0) -> Path | None:
    """SIGUSR2 the controller (manager/heap_snapshots.py) and wait for the snapshot it writes."""
    before = set(directory.glob("*.tracemalloc"))
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = set(directory.glob("*.tracemalloc")) - before
        if new:
            time.sleep(2.0)  # dump() writes it in one go, but let it finish
            return new.pop()
        time.sleep(0.5)
    return None


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) == 2 and sys.argv[1].isdigit():
        json.dump(smaps_by_mapping(sys.argv[1]), sys.stdout, indent=2)
    elif len(sys.argv) == 2:
        json.dump(tracemalloc_by_package(sys.argv[1]), sys.stdout, indent=2)
    else:
        sys.exit("usage: python bench/_memory.py PID | SNAPSHOT.tracemalloc")
    sys.stdout.write("\n")
