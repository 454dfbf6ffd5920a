"""Versus: this controller against another build on bench/e2e_flows.py's workload, runs alternated.

Why: a CPU figure moves with the machine's load, so two builds are compared only run by run on one
machine, alternating, quiet and then beside a CPU hog (one ``yes > /dev/null``), as issue 38 asks
of upstream's Go controllers. ``--other`` is the other build's executable, run with the same flags
(``--kubeconfig``, ``--worker-threads``, the fast client flags, metrics and health addresses:
upstream's vc-controller-manager takes them all; ``hack/build-upstream.sh`` builds it with a wrapper
that adds ``--controllers=jobflow-controller,jobtemplate-controller``). Each run is
``bench/e2e_flows.py --worker-threads 3`` in a process of its own; its controller CPU, time until
all Succeed, peak RSS, and writes per JobFlow (the API server's count, which a build without
client metrics still has) are kept, and the medians and ratios (ours / other) printed as one JSON
document on stdout.

``--http-stacks urllib3,http.client,http1`` compares instead our controller with itself on different HTTP
stacks for its non-watch requests (``bench/e2e_flows.py --http-stack``, bench/_http_stack), the runs
alternated the same way; the ratios are each stack's over the last one's (docs/decisions/0002-http-stack.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

_BENCH_DIR = Path(__file__).resolve().parent
ROOT = _BENCH_DIR.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(ROOT))

from bench._common import emit, load_average, log, machine  # noqa: E402

#: Where hack/build-upstream.sh leaves upstream v1.13.0's controllers, wrapped.
DEFAULT_OTHER = Path(os.environ.get("JOBFLOW_CACHE", Path.home() / ".cache" / "jobflow-controller")) / (
    "upstream/v1.13.0/jobflow-controllers"
)
#: The controller's own writes, as the API server counts them (every client is in that count).
CONTROLLER_WRITES = ("PUT jobflows/status", "POST jobs ", "POST events", "PUT jobtemplates/status", "PATCH events")


def one_run(controller: str | None, time_scale: float, http_stack: str | None = None) -> dict[str, Any]:
    environment = dict(os.environ)
    environment.pop("JOBFLOW_BENCH_CONTROLLER", None)
    if controller is not None:
        environment["JOBFLOW_BENCH_CONTROLLER"] = controller
    command = [
        sys.executable,
        str(_BENCH_DIR / "e2e_flows.py"),
        "--worker-threads",
        "3",
        "--time-scale",
        str(time_scale),
        *([f"--http-stack={http_stack}"] if http_stack else []),
    ]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench/e2e_flows.py failed ({controller or 'ours'}): {done.stderr.strip().splitlines()[-1:]}")
    doc = json.loads(done.stdout)
    run = doc["runs"][0]
    writes = run["apiserver_writes_per_jobflow_all_clients"]
    return {
        "cpu_seconds": run["controller"]["cpu_seconds_run"],
        "seconds_until_all_succeed": run["seconds_until_all_succeed"],
        "peak_rss_mib": run["controller"]["peak_rss_mib"],
        # What the API server spent on the run, the simulator's and this process's requests included.
        "kube_apiserver_cpu_seconds": run["cpu_seconds_run_other_processes"]["kube_apiserver"],
        "controller_writes_per_jobflow": round(
            sum(v for k, v in writes.items() if k.startswith(CONTROLLER_WRITES) and not k.endswith(" 409")), 2
        ),
        "load_at_start": doc["load_average_at_start"][0],
    }


#: A contender: a name, the controller executable (None: ours) and its HTTP stack (None: the product's).
Contender = tuple[str, str | None, str | None]
RATIO_KEYS = (
    "cpu_seconds",
    "seconds_until_all_succeed",
    "peak_rss_mib",
    "controller_writes_per_jobflow",
    "kube_apiserver_cpu_seconds",
)


def series(contenders: list[Contender], rounds: int, time_scale: float) -> dict[str, Any]:
    """`rounds` runs of each contender, alternated; medians, and each one's ratios over the last's."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in contenders}
    for index in range(rounds):
        for name, controller, stack in contenders:
            runs[name].append(one_run(controller, time_scale, stack))
            log(f"  round {index + 1} {name}: {runs[name][-1]}")
    medians = {
        name: {key: statistics.median(r[key] for r in found) for key in found[0]} for name, found in runs.items()
    }
    base = contenders[-1][0]
    ratios = {
        f"{name}_over_{base}": {
            key: round(medians[name][key] / medians[base][key], 3) for key in RATIO_KEYS if medians[base][key]
        }
        for name in runs
        if name != base
    }
    return {"runs": runs, "medians": medians, **ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--other",
        default=str(DEFAULT_OTHER),
        help="the other build's executable (default: hack/build-upstream.sh's wrapper, %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each build per condition (default %(default)s)")
    parser.add_argument("--time-scale", type=float, default=3.0, help="bench/e2e_flows.py's --time-scale")
    parser.add_argument("--no-hog", action="store_true", help="only the quiet series")
    parser.add_argument(
        "--http-stacks",
        help="comma-separated HTTP stacks of our controller to compare instead (urllib3, http.client, http1)",
    )
    args = parser.parse_args()
    result: dict[str, Any] = {"benchmark": "versus", **machine(), "other": args.other}
    contenders: list[Contender] = [("ours", None, None), ("other", args.other, None)]
    if args.http_stacks:
        contenders = [(stack, None, stack) for stack in args.http_stacks.split(",")]
        result["other"] = "our controller on each HTTP stack (the ratios: each over the last one)"
    elif not os.access(args.other, os.X_OK):
        # make bench runs every benchmark: without the other build there is nothing to compare.
        result["not_run"] = f"no executable {args.other}: build it with hack/build-upstream.sh SOURCE_DIR"
        log(result["not_run"])
        emit(result)
        return
    log("== quiet")
    result["quiet"] = series(contenders, args.rounds, args.time_scale)
    if not args.no_hog:
        log("== beside `yes > /dev/null`")
        hog = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
        try:
            result["beside_a_hog"] = series(contenders, args.rounds, args.time_scale)
        finally:
            hog.kill()
            hog.wait()
    result["load_average_at_end"] = load_average()
    emit(result)


if __name__ == "__main__":
    main()
