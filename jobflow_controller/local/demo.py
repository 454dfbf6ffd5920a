"""`make demo`: a real control plane, the CRDs, the controller, the simulator, the example pipelines.

The two pipelines of manifests/examples, one failure-aware example (docs/rules.md),
manifests/examples/failure-aware/nightly-report: a RunToCompletion JobFlow whose extract-us fails,
whose other steps still run, and whose finally JobTemplate notify-team is told the outcome; and the
hyper-parameter sweep of docs/params.md, manifests/examples/params/hyperparameter-sweep: six
training Jobs, two at a time. Shows
each JobFlow's phase and its Jobs by state, redrawn whenever an informer sees a change, until each
JobFlow has ended as its example says (the pipelines Succeed, nightly-report Failed); then draws the
diamond and the nightly report with `kubectl jobflow tree` (the project's kubectl plugin, run through
kubectl), prints the kubectl lines to look at what happened and keeps the control plane up until
Ctrl-C (or exits at once with `--exit-when-done`, as the e2e test runs it). Beside them runs the
CronJobFlow `every-minute` (demo_cron.py, docs/cron.md): its runs join the table as they come,
`kubectl get cjf` is shown at the end, and while the control plane stays up each new run is announced.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from jobflow_controller.apis import job as vcjob
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis import meta
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.rest import RestClient
from jobflow_controller.local import demo_cron
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import EXAMPLES_DIR, install_crds, kubectl, kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator

#: Each JobFlow the demo runs, and the phase its example ends in.
FLOWS: Mapping[str, str] = {
    "ml-pipeline": "Succeed",
    "parallel-pipeline": "Succeed",
    "nightly-report": "Failed",
    "hyperparameter-sweep": "Succeed",
    "model-selection": "Succeed",
}
#: The failure-aware example the demo applies beside manifests/examples: templates first.
FAILURE_AWARE_EXAMPLE = tuple(
    EXAMPLES_DIR / "failure-aware" / f"nightly-report-{kind}.yaml" for kind in ("jobtemplates", "jobflow")
)
#: The parameter example the demo applies (docs/params.md): a 2x3 sweep, 2 Jobs at a time.
PARAMS_EXAMPLE = tuple(
    EXAMPLES_DIR / "params" / f"hyperparameter-sweep-{kind}.yaml" for kind in ("jobtemplates", "jobflow")
)
#: The results example the demo applies (docs/results.md): train reports, publish reads.
RESULTS_EXAMPLE = EXAMPLES_DIR / "results"
#: The JobFlows the demo draws at the end, with `kubectl jobflow tree`.
TREE_FLOWS = ("parallel-pipeline", "nightly-report", "hyperparameter-sweep", "model-selection")
LOOK_AROUND = (
    "kubectl get jf",
    "kubectl get cjf                         # the every-minute CronJobFlow and the nightly example",
    "kubectl jobflow create --from=cronjobflow/nightly-etl   # one run now",
    "kubectl describe jf ml-pipeline",
    "kubectl describe jf nightly-report        # the Skipped event",
    "kubectl get vcjob",
    "kubectl get jt",
    "kubectl jobflow tree ml-pipeline",
    "kubectl jobflow dot parallel-pipeline   # Graphviz: | dot -Tsvg > parallel.svg",
    "kubectl get vcjob nightly-report-notify-team -o jsonpath='{.metadata.annotations}'",
    "kubectl get vcjob -l flow.volcano.sh/matrix-index -L flow.volcano.sh/matrix-index   # the sweep's Jobs",
    "kubectl jobflow results model-selection -o json   # what train reported, what the JobFlow published",
    "kubectl jobflow ui                      # live DAGs in the browser, on 127.0.0.1 (Ctrl-C stops it)",
)
PHASE_ORDER = ("Pending", "Running", "Completing", "Completed", "Failed", "Terminated", "Aborted", "")


class Progress:
    """Keeps the latest JobFlows and Jobs from two informers and renders them as a small table."""

    def __init__(self, clientset: Clientset, namespace: str) -> None:
        self.changed = threading.Event()
        self.flows = SharedIndexInformer(clientset.job_flows(namespace).lister_watcher())
        self.jobs = SharedIndexInformer(clientset.jobs(namespace).lister_watcher())
        poke = ResourceEventHandlerFuncs(
            add_func=lambda *_: self.changed.set(),
            update_func=lambda *_: self.changed.set(),
            delete_func=lambda *_: self.changed.set(),
        )
        self.flows.add_event_handler(poke)
        self.jobs.add_event_handler(poke)
        self.seen_jobs: dict[str, set[str]] = defaultdict(set)

    def run(self, stop: threading.Event) -> None:
        for informer in (self.flows, self.jobs):
            threading.Thread(target=informer.run, args=(stop,), daemon=True).start()

    def phases(self) -> dict[str, str]:
        return {meta.name(f): jf.phase(f) for f in self.flows.get_store().list()}

    def settled(self, expected: Mapping[str, str]) -> bool:
        """Every named flow is in its expected phase, and those with `jobRetainPolicy: delete` have no Jobs left."""
        flows = {meta.name(f): f for f in self.flows.get_store().list()}
        names = tuple(expected)
        if any(jf.phase(flows.get(n, {})) != phase for n, phase in expected.items()):
            return False
        owners = {r.get("name") for j in self.jobs.get_store().list() for r in meta.owner_references(j)}
        return not any(jf.job_retain_policy(flows[n]) == "delete" and n in owners for n in names)

    def render(self) -> str:
        jobs_by_flow: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for job in self.jobs.get_store().list():
            owner = next((r.get("name") for r in meta.owner_references(job) if r.get("kind") == "JobFlow"), "")
            jobs_by_flow[str(owner)].append(job)
        lines = [f"{'JOBFLOW':<20} {'PHASE':<10} JOBS"]
        for flow in sorted(self.flows.get_store().list(), key=meta.name):
            name = meta.name(flow)
            by_state: dict[str, list[str]] = defaultdict(list)
            for job in jobs_by_flow.get(name, []):
                self.seen_jobs[name].add(meta.name(job))
                by_state[vcjob.phase(job) or "New"].append(meta.name(job).removeprefix(f"{name}-"))
            deleted = len(self.seen_jobs[name]) - len(jobs_by_flow.get(name, []))
            parts = [f"{state}: {', '.join(sorted(names))}" for state, names in sorted(by_state.items(), key=_order)]
            if deleted > 0:
                parts.append(f"deleted: {deleted}")
            total = len(jf.flows(flow))
            lines.append(f"{name:<20} {jf.phase(flow) or '-':<10} [{total} flows] " + ("; ".join(parts) or "-"))
        return "\n".join(lines)


def show_tree(kubeconfig: str, name: str, namespace: str = "default", *, color: bool = False) -> str:
    """`kubectl jobflow tree NAME` run through kubectl itself, as a user would; its output, or the
    error it printed (the demo has succeeded by then, so a plugin failure is shown, not fatal)."""
    return _plugin(kubeconfig, "tree", name, "-n", namespace, f"--color={'always' if color else 'never'}")


def _plugin(kubeconfig: str, *args: str) -> str:
    result = subprocess.run(
        [kubectl_path(), "jobflow", *args], capture_output=True, text=True, timeout=60, env=plugin_env(kubeconfig)
    )
    return result.stdout if result.returncode == 0 else f"(kubectl jobflow failed: {result.stderr.strip()})"


def _order(item: tuple[str, list[str]]) -> int:
    return PHASE_ORDER.index(item[0]) if item[0] in PHASE_ORDER else len(PHASE_ORDER)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description=__doc__)
    parser.add_argument("--exit-when-done", action="store_true", help="tear down once the JobFlows have ended")
    parser.add_argument("--timeout", type=float, default=180.0, help="give up after this many seconds")
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    tty = sys.stdout.isatty()

    print("starting a local control plane (etcd, kube-apiserver, kube-controller-manager)...")
    t0 = time.monotonic()
    plane = ControlPlane().start()
    controller: subprocess.Popen[bytes] | None = None
    try:
        install_crds(plane.kubeconfig_path)
        print(f"  up in {time.monotonic() - t0:.1f}s at {plane.server}; CRDs installed")
        kubeconfig = str(plane.kubeconfig_path)
        log_path = plane.root / "jobflow-controller.log"
        controller = _start_controller(kubeconfig, log_path)
        print(f"  jobflow-controller started (logs: {log_path})")
        progress = _start_pipelines(kubeconfig, stop)
        if not _wait_until_settled(progress, controller, log_path, stop, time.monotonic() + args.timeout, tty):
            return 1
        took = time.monotonic() - t0
        ended = ", ".join(f"{name} {phase}" for name, phase in FLOWS.items())
        print(f"\nthe JobFlows ended as written in {took:.1f}s ({ended}). Drawn by the kubectl plugin:\n")
        _print_look_around(kubeconfig, tty)
        if args.exit_when_done:
            return 0
        print(f"\nthe control plane stays up until Ctrl-C; {demo_cron.NAME} fires every minute:")
        demo_cron.announce_runs(progress.flows, lambda line: print(f"  {line}", flush=True))
        stop.wait()
        return 0
    finally:
        stop.set()
        if controller is not None:
            _stop_controller(controller)
        plane.stop()


def _start_controller(kubeconfig: str, log_path: Path) -> subprocess.Popen[bytes]:
    """The installed `jobflow-controller` (the virtualenv's first), without leader election, logging to a file."""
    controller_bin = shutil.which("jobflow-controller", path=str(Path(sys.executable).parent)) or "jobflow-controller"
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [controller_bin, f"--kubeconfig={kubeconfig}", "--leader-elect=false", "--enable-healthz"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": kubeconfig},
            start_new_session=True,
        )


def _start_pipelines(kubeconfig: str, stop: threading.Event) -> Progress:
    """Start the simulator and the progress informers, then apply the example pipelines."""
    rest = RestClient(build_config(kubeconfig), qps=200, burst=400, user_agent="jobflow-demo")
    clientset = Clientset(rest)
    threading.Thread(target=JobSimulator(clientset).run, args=(stop,), daemon=True).start()
    print("  Volcano job simulator started")
    progress = Progress(clientset, "default")
    progress.run(stop)
    print(kubectl(kubeconfig, "apply", "-k", str(EXAMPLES_DIR)).rstrip())
    print(kubectl(kubeconfig, "apply", *(f"--filename={path}" for path in FAILURE_AWARE_EXAMPLE)).rstrip())
    print(kubectl(kubeconfig, "apply", *(f"--filename={path}" for path in PARAMS_EXAMPLE)).rstrip())
    print(kubectl(kubeconfig, "apply", "-k", str(RESULTS_EXAMPLE)).rstrip())
    print(demo_cron.create(clientset))
    print("")
    return progress


def _wait_until_settled(
    progress: Progress,
    controller: subprocess.Popen[bytes],
    log_path: Path,
    stop: threading.Event,
    deadline: float,
    tty: bool,
) -> bool:
    """Redraw the table on every change until the JobFlows settle; False (said why) if they do not."""
    last = ""
    while not stop.is_set() and time.monotonic() < deadline:
        progress.changed.wait(0.5)
        progress.changed.clear()
        screen = progress.render()
        if screen != last:
            if tty and last:
                sys.stdout.write(f"\x1b[{last.count(chr(10)) + 1}F\x1b[J")
            print(screen, flush=True)
            last = screen
        if progress.settled(FLOWS):
            return True
        if controller.poll() is not None:
            print(f"jobflow-controller exited with {controller.returncode}; see {log_path}")
            return False
    print("the JobFlows did not end in time" if not stop.is_set() else "interrupted")
    return False


def _print_look_around(kubeconfig: str, tty: bool) -> None:
    for name in TREE_FLOWS:
        print(f"$ kubectl jobflow tree {name}")
        print(show_tree(kubeconfig, name, color=tty).rstrip() + "\n")
    print("$ kubectl jobflow results model-selection")
    print(_plugin(kubeconfig, "results", "model-selection").rstrip() + "\n")
    print("$ kubectl get cjf")
    print(kubectl(kubeconfig, "get", "cjf").rstrip() + "\n")
    print("Look around:\n")
    print(f"  export KUBECONFIG={kubeconfig} PATH={Path(kubectl_path()).parent}:$PATH")
    for line in LOOK_AROUND:
        print(f"  {line}")


def _stop_controller(controller: subprocess.Popen[bytes]) -> None:
    if controller.poll() is None:
        controller.terminate()
        try:
            controller.wait(timeout=15)
        except subprocess.TimeoutExpired:
            controller.kill()


if __name__ == "__main__":
    sys.exit(main())
