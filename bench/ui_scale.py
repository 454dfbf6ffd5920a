"""The web view at scale: `kubectl jobflow ui -A` over 1,000 JobFlows, 3,000 Jobs and their events,
in headless Chromium, measuring what a user sees.

Why: tests/e2e/test_e2e_ui_scale.py checks a 1,000-row list and a 500-flow page can be drawn; this
measures, against the targets of issue 38, the times a user waits and the UI process's memory.

A fresh control plane (no controller: the objects are written as the controller would write them,
so the figures are the UI's alone): ``--jobflows`` JobFlows (default 1,000) of three steps a -> b ->
c over 4 namespaces, their 3,000 Jobs (built by the controller's own ``new_job``: labels, owner
reference), every Job with a status, every JobFlow's status naming its Jobs mid-run, and an Event
per Job and per JobFlow. Then ``kubectl-jobflow ui -A --no-browser`` as a process of its own (from
the runtime virtualenv when there is one), and Debian's Chromium through Selenium (as
tests/e2e/browser.py drives it; nothing downloaded). Measured, each ``--rounds`` times (medians):

* ``list_first_paint_ms``: navigation start of the list page to the first animation frame whose DOM
  holds every row (a requestAnimationFrame watcher installed before the page's own scripts);
* ``page_from_list_ms``: from the list, the hash set to one JobFlow's page to the first frame with its
  DAG drawn (every node present); ``page_fresh_load_ms``: the same page opened by a new navigation;
* ``update_to_page_ms``: a Job's status PATCHed (wall clock before the request) to the frame in which
  the open page's node (it shows its Job's phase) shows the new one (the same clock: ``Date.now()``);
  ``update_to_list_ms``: a JobFlow's status PATCHed to the frame its row of the open list shows it;
* the UI process's RSS (VmRSS and VmHWM) and its smaps by mapping.

Targets (issue 38): first paint of the list and a JobFlow's page at most 1 s each, an update on an
open page within 500 ms. One JSON document on stdout.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))
sys.path.insert(0, str(_BENCH_DIR.parent / "tests" / "e2e"))

from bench._common import (  # noqa: E402
    RUNTIME_VENV_BIN,
    VENV_BIN,
    BenchError,
    Watchdog,
    control_plane,
    emit,
    load_average,
    log,
    machine,
    proc_status_kib,
    rest_client,
    run_pool,
    seed_namespaces,
    wait_until,
)
from bench._memory import smaps_by_mapping  # noqa: E402
from jobflow_controller.apis.builders import new_job  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.local.processes import Process  # noqa: E402
from tests.e2e.jobflows import chain, flow  # noqa: E402

NAMESPACES = 4
STEPS = "abc"
T0 = "2026-12-05T12:00:00Z"
TARGETS_MS = {"list_first_paint": 1000.0, "page": 1000.0, "update_to_page": 500.0}

#: Installed before the page's scripts on every navigation: notes, per animation frame, when what
#: the bench waits for first holds (window.__bench.marks), with performance.now() and Date.now().
WATCHER = """
window.__bench = {marks: {}, checks: {}};
(function tick() {
  var b = window.__bench, now = performance.now(), wall = Date.now();
  Object.keys(b.checks).forEach(function (name) {
    try { if (!b.marks[name] && b.checks[name]()) b.marks[name] = {perf: now, wall: wall}; } catch (e) {}
  });
  requestAnimationFrame(tick);
})();
"""


def phase_status(name: str, phases: dict[str, str], flow_phase: str = "Running") -> dict[str, Any]:
    """A JobFlow status as the controller writes it, each step's Job in the given phase."""
    status: dict[str, Any] = {"state": {"phase": flow_phase}, "completedJobs": [], "failedJobs": [], "runningJobs": []}
    entries, conditions = [], {}
    for step, phase in phases.items():
        job = f"{name}-{step}"
        key = {"Completed": "completedJobs", "Failed": "failedJobs", "Running": "runningJobs"}.get(phase)
        if key:
            status[key].append(job)
        entries.append({"name": job, "state": phase, "startTimestamp": T0, "restartCount": 0})
        conditions[job] = {"phase": phase, "createTime": T0}
    status["jobStatusList"] = entries
    status["conditions"] = conditions
    return status


def populate(clientset: Clientset, namespaces: list[str], count: int, timeout: float) -> list[tuple[str, str]]:
    """The JobFlows, their Jobs with statuses, the JobFlows' statuses and the Events; the keys."""
    seed_namespaces(clientset, namespaces, STEPS, "Pending:0s,Running:600s,Completed")
    keys = [(namespaces[i % len(namespaces)], f"ui-{i:04d}") for i in range(count)]
    templates = {(ns, step): clientset.job_templates(ns).get(step) for ns in namespaces for step in STEPS}

    def one(key: tuple[str, str]) -> None:
        ns, name = key
        created = clientset.job_flows(ns).create(flow(name, ns, chain(*STEPS)))
        phases = {"a": "Completed", "b": "Running", "c": "Pending"}
        for step in STEPS:
            job = clientset.jobs(ns).create(new_job(created, step, f"{name}-{step}", templates[(ns, step)], None))
            clientset.jobs(ns).patch_status(f"{name}-{step}", {"status": {"state": {"phase": phases[step]}}})
            event(clientset, ns, job, "Created", f"Created Job {name}-{step}")
        clientset.job_flows(ns).patch_status(name, {"status": phase_status(name, phases)})
        event(clientset, ns, created, "Started", "the JobFlow started")

    run_pool(one, keys, 8, "populate", timeout)
    return keys


def event(clientset: Clientset, namespace: str, obj: dict[str, Any], reason: str, message: str) -> None:
    meta = obj["metadata"]
    clientset.events(namespace).create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": obj["apiVersion"],
                "kind": obj["kind"],
                "name": meta["name"],
                "namespace": namespace,
                "uid": meta["uid"],
            },
            "reason": reason,
            "message": message,
            "type": "Normal",
            "source": {"component": "bench-ui-scale"},
            "firstTimestamp": T0,
            "lastTimestamp": T0,
            "count": 1,
        }
    )


def start_ui(kubeconfig: str, log_path: Path) -> tuple[Process, str]:
    """`kubectl-jobflow ui -A --no-browser`; the process and the URL it printed."""
    venv = RUNTIME_VENV_BIN if (RUNTIME_VENV_BIN / "kubectl-jobflow").exists() else VENV_BIN
    process = Process(
        "kubectl-jobflow",
        [str(venv / "kubectl-jobflow"), "ui", "-A", "--no-browser", f"--kubeconfig={kubeconfig}"],
        log_path,
    )
    process.start()

    def url() -> str | None:
        if not process.alive():
            raise BenchError(f"kubectl-jobflow ui exited:\n{process.log_tail(20)}")
        for line in log_path.read_text(errors="replace").splitlines():
            if " at http://" in line:
                return line.split(" at ", 1)[1].strip()
        return None

    return process, wait_until(url, 180.0, "the UI's URL", interval=0.1)


def mark(driver: Any, name: str, check_js: str, timeout: float) -> dict[str, float]:
    """Register a frame check (a JS expression) and wait for its mark."""
    driver.execute_script(f"window.__bench.checks[{name!r}] = function () {{ return {check_js}; }};")
    got = wait_until(
        lambda: driver.execute_script(f"return window.__bench.marks[{name!r}] || null;"), timeout, name, interval=0.05
    )
    return dict(got)


def navigate(driver: Any, url: str, checks: dict[str, str], timeout: float) -> dict[str, dict[str, float]]:
    """A fresh navigation with `checks` registered from the first frame; their marks."""
    script = WATCHER + "".join(
        f"window.__bench.checks[{name!r}] = function () {{ return {js}; }};" for name, js in checks.items()
    )
    handle = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
    try:
        # From a blank page: a URL that differs from the current one only in its hash would be a
        # same-document navigation (no new document, no watcher, the old marks).
        driver.get("about:blank")
        driver.get(url)
        return {name: mark(driver, name, js, timeout) for name, js in checks.items()}
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": handle["identifier"]})


def node_is(key: tuple[str, str], step: str, phase: str) -> str:
    return (
        f"(function () {{ var g = document.querySelector('#dag g.node[data-flow=\"{step}\"]');"
        f" return !!g && g.getAttribute('data-phase') === '{phase}' && location.hash.indexOf('{key[1]}') >= 0; }})()"
    )


def measure(driver: Any, base: str, clientset: Clientset, keys: list[tuple[str, str]], rounds: int) -> dict[str, Any]:
    count = len(keys)
    rows_full = f"document.querySelectorAll('#rows tr').length >= {count}"
    dag_full = "document.querySelectorAll('#dag g.node').length === 3"
    runs: dict[str, list[float]] = {k: [] for k in ("list", "from_list", "fresh", "update_page", "update_list")}
    list_render: list[float] = []
    for r in range(rounds):
        # 1. The list, by a fresh navigation.
        marks = navigate(driver, base + "#/", {"rows": rows_full}, 120.0)
        runs["list"].append(marks["rows"]["perf"])
        list_render.append(float(driver.execute_script("return window.jobflowUI.lastListRenderMs || 0")))
        # 2. A row's update reaching the open list.
        ns, name = keys[(r * 97 + 11) % count]
        flip = "Failed" if r % 2 else "Succeed"
        row = f"document.querySelector('#rows tr[data-key=\"{ns}/{name}\"]')"
        driver.execute_script(
            f"window.__bench.marks['row{r}'] = null; window.__bench.checks['row{r}'] = function () "
            f"{{ var tr = {row}; return !!tr && tr.dataset.phase === '{flip}'; }};"
        )
        sent = time.time() * 1000.0
        clientset.job_flows(ns).patch_status(name, {"status": {"state": {"phase": flip}}})
        got = wait_until(
            lambda r=r: driver.execute_script(f"return window.__bench.marks['row{r}'] || null;"), 60.0, "row"
        )
        runs["update_list"].append(got["wall"] - sent)
        # 3. One JobFlow's page from the list (the hash, as a click on its name sets it).
        key = keys[(r * 131 + 7) % count]
        driver.execute_script(
            f"window.__bench.checks['page{r}'] = function () {{ return location.hash.indexOf('{key[1]}') >= 0 && "
            f"{dag_full}; }}; window.__bench.t0 = performance.now();"
            f" location.hash = '#/flow/{key[0]}/{key[1]}';"
        )
        got = wait_until(
            lambda r=r: driver.execute_script(f"return window.__bench.marks['page{r}'] || null;"), 60.0, "page"
        )
        runs["from_list"].append(got["perf"] - driver.execute_script("return window.__bench.t0"))
        # 4. An update reaching the open page: step c goes Running.
        driver.execute_script(
            f"window.__bench.checks['upd{r}'] = function () {{ return {node_is(key, 'c', 'Running')}; }};"
        )
        sent = time.time() * 1000.0
        job = f"{key[1]}-c"
        clientset.jobs(key[0]).patch_status(job, {"status": {"state": {"phase": "Running"}}})
        got = wait_until(
            lambda r=r: driver.execute_script(f"return window.__bench.marks['upd{r}'] || null;"), 60.0, "upd"
        )
        runs["update_page"].append(got["wall"] - sent)
        # Back to mid-run for the next rounds.
        clientset.jobs(key[0]).patch_status(job, {"status": {"state": {"phase": "Pending"}}})
        # 5. The same page by a fresh navigation.
        other = keys[(r * 53 + 29) % count]
        marks = navigate(driver, base + f"#/flow/{other[0]}/{other[1]}", {"dag": dag_full}, 120.0)
        runs["fresh"].append(marks["dag"]["perf"])
        log(f"  round {r + 1}: " + ", ".join(f"{k} {v[-1]:.0f} ms" for k, v in runs.items()))

    def summary(values: list[float]) -> dict[str, Any]:
        return {
            "median": round(statistics.median(values), 1),
            "max": round(max(values), 1),
            "runs": [round(v, 1) for v in values],
        }

    return {
        "list_first_paint_ms": summary(runs["list"]),
        "list_render_js_ms": summary(list_render),
        "page_from_list_ms": summary(runs["from_list"]),
        "page_fresh_load_ms": summary(runs["fresh"]),
        "update_to_page_ms": summary(runs["update_page"]),
        "update_to_list_ms": summary(runs["update_list"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobflows", type=int, default=1000, help="JobFlows, three Jobs each (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each figure (default %(default)s)")
    args = parser.parse_args()
    watchdog = Watchdog(1800.0, "bench/ui_scale.py")
    result: dict[str, Any] = {"benchmark": "ui_scale", **machine(), "targets_ms": TARGETS_MS}
    if not (shutil.which("chromium") or shutil.which("chromium-browser")) or not shutil.which("chromedriver"):
        # As the UI's browser tests: `make browser` installs Debian's, where it can.
        emit({**result, "skipped": "no chromium and chromedriver on PATH (make browser installs them)"})
        return
    try:
        from browser import headless_chromium

        with control_plane(watchdog) as plane:
            rest = rest_client(plane.kubeconfig_path, agent="bench-ui-scale")
            clientset = Clientset(rest)
            namespaces = [f"ui-{i}" for i in range(NAMESPACES)]
            started = time.monotonic()
            keys = populate(clientset, namespaces, args.jobflows, timeout=1200.0)
            result["workload"] = {
                "jobflows": len(keys),
                "jobs": 3 * len(keys),
                "events": 4 * len(keys),
                "namespaces": NAMESPACES,
                "populate_seconds": round(time.monotonic() - started, 1),
            }
            ui, base = start_ui(str(plane.kubeconfig_path), plane.root / "ui.log")
            watchdog.on_timeout(ui.stop)
            try:
                assert ui.pid is not None
                result["ui_rss_after_sync_mib"] = round(proc_status_kib(ui.pid, "VmRSS") / 1024.0, 1)
                with headless_chromium() as driver:
                    result["figures"] = measure(driver, base, clientset, keys, args.rounds)
                result["ui_process"] = {
                    "rss_mib": round(proc_status_kib(ui.pid, "VmRSS") / 1024.0, 1),
                    "peak_rss_mib": round(proc_status_kib(ui.pid, "VmHWM") / 1024.0, 1),
                    "smaps": smaps_by_mapping(ui.pid),
                    "command": "kubectl-jobflow ui -A --no-browser",
                }
            finally:
                ui.stop()
                rest.close()
    except BenchError as err:
        log(f"ERROR: {err}")
        sys.exit(1)
    finally:
        watchdog.cancel()
    figures = result["figures"]
    result["against_targets"] = {
        "list_first_paint": figures["list_first_paint_ms"]["median"] <= TARGETS_MS["list_first_paint"],
        "page_from_list": figures["page_from_list_ms"]["median"] <= TARGETS_MS["page"],
        "page_fresh_load": figures["page_fresh_load_ms"]["median"] <= TARGETS_MS["page"],
        "update_to_page": figures["update_to_page_ms"]["median"] <= TARGETS_MS["update_to_page"],
    }
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
