"""bench/hostile.py's results scenario (issue 43): pods writing the largest termination messages Kubernetes
allows (4 KiB per container, 3 containers: 12 KiB per pod), with many keys, not JSON, deeply nested
JSON, and JobFlows that bring results to the per-JobFlow budget and expand them past a Job's.

The JobFlows go through the webhook (they are admissible). Their tasks carry no simulator pod
annotation: a thread here plays the kubelet, creating each Job's pod `<job>-main-0` (controlled by the
Job) as soon as the Job appears, its three containers already terminated with the messages below; the
simulator drives the Jobs' phases (Running `RUN` s, so every pod is there before its Job ends).
`bench` is hostile.py's `Bench`.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench._common import create_namespace, log
from jobflow_controller.kube.errors import AlreadyExistsError, ApiStatusError
from jobflow_controller.kube.resources import EVENTS
from jobflow_controller.local.simulated_pods import task_pods
from tests.e2e.jobflows import flow, template

NAMESPACE = "hostile-results"
NAMESPACES = (NAMESPACE,)
RUN = "Pending:0.2s,Running:4s,Completed"
#: Kubernetes' limits on termination messages: per container, and per pod (3 containers of 4 KiB).
MESSAGE_BYTES = 4096
CONTAINERS = 3
NAMES = [f"r{i:02d}" for i in range(16)]
#: Each of a matrix flow's Jobs reports this many bytes: 17 of them are past the 64 KiB per JobFlow.
BUDGET_VALUE = 4000
BUDGET_JOBS = 17
#: A 4,000-byte value read this many times by one template: 400 KB, past a Job's 256 KiB expansion.
EXPANSIONS = 100
WITHIN = 60.0


def _fill(prefix: str, keys: dict[str, str]) -> str:
    """A JSON object of `keys` and filler keys, exactly `MESSAGE_BYTES` long."""
    doc = dict(keys)
    i = 0
    while len(json.dumps(doc)) < MESSAGE_BYTES - 40:
        doc[f"{prefix}{i:04d}"] = "x" * 8
        i += 1
    text = json.dumps(doc)
    pad = MESSAGE_BYTES - len(text) - len(', "pad": ""')
    return json.dumps({**doc, "pad": "p" * max(pad, 0)})


def messages(job_name: str) -> list[str]:
    """The three containers' messages of the Job's pod 0, by what its JobFlow stands for."""
    if job_name.startswith("many-keys"):
        # the 16 declared names spread over three containers, among ~900 undeclared keys
        return [_fill(f"c{c}-", {n: f"v-{n}" for n in NAMES[c::CONTAINERS]}) for c in range(CONTAINERS)]
    if job_name.startswith("not-json"):
        return ["\x1b[31mSegmentation fault " + "\ufffd" * 1300, "{" * MESSAGE_BYTES, '{"r00": ' * 500]
    if job_name.startswith("deep-json"):
        depth = MESSAGE_BYTES // 6
        return [
            '{"a":' * depth + "1" + "}" * depth,
            "[" * 2048 + "]" * 2048,
            '{"r00": ' + "[" * 2000 + "]" * 2000 + "}",
        ]
    if job_name.startswith("budget") or job_name.startswith("expand-big"):
        return [json.dumps({"v": "b" * BUDGET_VALUE}), "", ""]
    return ["", "", ""]


def _template(name: str) -> dict[str, Any]:
    doc = template(name, NAMESPACE, RUN)
    pod_spec = doc["spec"]["tasks"][0]["template"]["spec"]
    pod_spec["containers"] = [{"name": f"c{i}", "image": "busybox"} for i in range(CONTAINERS)]
    return doc


class Kubelet:
    """Creates each Job's pod 0 of the namespace, its containers terminated with `messages(job)`."""

    def __init__(self, bench: Any) -> None:
        self.clientset = bench.clientset
        self.done: set[str] = set()
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, name="results-kubelet", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with ThreadPoolExecutor(8, thread_name_prefix="results-kubelet") as pool:
            while not self.stop.wait(0.1):
                new = [j for j in self.clientset.jobs(NAMESPACE).list() if j["metadata"].get("uid") not in self.done]
                self.done.update(j["metadata"].get("uid") for j in new)
                list(pool.map(self._safe_pod, new))

    def _safe_pod(self, job: dict[str, Any]) -> None:
        try:
            self._pod(job)
        except (ApiStatusError, OSError) as err:
            self.errors.append(f"{job['metadata']['name']}: {str(err)[:200]}")

    def _pod(self, job: dict[str, Any]) -> None:
        pod = task_pods(job, job["spec"]["tasks"][0])[0]
        pods = self.clientset.pods(NAMESPACE)
        try:
            made = pods.create(pod)
        except AlreadyExistsError:
            pods.delete(pod["metadata"]["name"])
            made = pods.create(pod)
        statuses = [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": m}},
            }
            for c, m in zip(pod["spec"]["containers"], messages(job["metadata"]["name"]), strict=True)
        ]
        pods.update_status({**made, "status": {"phase": "Succeeded", "containerStatuses": statuses}})


def _job_flows() -> list[dict[str, Any]]:
    declared = {"names": NAMES}
    matrix = {"params": [{"name": "i", "values": [str(i) for i in range(BUDGET_JOBS)]}], "maxParallel": BUDGET_JOBS}
    out = [
        flow("many-keys", NAMESPACE, [{"name": "w", "results": declared}]),
        flow("not-json", NAMESPACE, [{"name": "w", "results": declared}]),
        flow("deep-json", NAMESPACE, [{"name": "w", "results": {"names": ["r00", "a"]}}]),
        flow("budget", NAMESPACE, [{"name": "w", "matrix": matrix, "results": {"names": ["v"]}}]),
    ]
    expand = flow(
        "expand",
        NAMESPACE,
        [{"name": "big", "results": {"names": ["v"]}}, {"name": "use", "dependsOn": {"targets": ["big"]}}],
    )
    expand["spec"]["results"] = [{"name": "all", "value": "$(flows.big.results.v)" * 2}]
    out.append(expand)
    return out


def _summary(bench: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for job_flow in bench.clientset.job_flows(NAMESPACE).list():
        status = job_flow.get("status") or {}
        entries = status.get("jobStatusList") or []
        values = [e.get("results") or {} for e in entries]
        out[job_flow["metadata"]["name"]] = {
            "phase": (status.get("state") or {}).get("phase"),
            "results_bytes": sum(len(k) + len(v.encode()) for r in values for k, v in r.items()),
            "jobs_with_results": sum(1 for e in entries if e.get("results")),
            "status_bytes": len(json.dumps(status)),
        }
    return out


def _warnings(bench: Any) -> tuple[dict[str, dict[str, int]], int, list[str]]:
    """Warnings by JobFlow and reason (with counts), the longest event message, the Warnings' first 160
    characters."""
    out: dict[str, dict[str, int]] = {}
    longest, texts = 0, []
    for event in bench.clientset.resource(EVENTS, NAMESPACE).list():
        longest = max(longest, len(event.get("message") or ""))
        if event.get("type") == "Warning":
            texts.append(str(event.get("message") or "")[:160])
            about = out.setdefault(str((event.get("involvedObject") or {}).get("name")), {})
            about[event["reason"]] = about.get(event["reason"], 0) + int(event.get("count") or 1)
    return out, longest, sorted(texts)


def results_hostile(bench: Any) -> dict[str, Any]:
    """The five JobFlows, until four have ended and `expand` got its InvalidParams (or `WITHIN` s): phases,
    results kept, Warnings."""
    create_namespace(bench.clientset, NAMESPACE)
    for name in ("w", "big", "use"):
        bench.clientset.job_templates(NAMESPACE).create(_template(name))
    use = bench.clientset.job_templates(NAMESPACE).get("use")
    use["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["args"] = ["$(flows.big.results.v)"] * EXPANSIONS
    bench.clientset.job_templates(NAMESPACE).update(use)
    kubelet = Kubelet(bench)
    log_before = len(bench.controller.log_tail(10_000_000))
    started = time.monotonic()
    for doc in _job_flows():
        bench.clientset.job_flows(NAMESPACE).create(doc)
    try:
        while time.monotonic() - started < WITHIN:
            found = _summary(bench)
            ended = [f for n, f in found.items() if n != "expand" and f["phase"] in ("Succeed", "Failed")]
            # `expand` never ends: its flow `use` is refused (InvalidParams) and waits, as docs/params.md says
            if len(ended) == 4 and "InvalidParams" in _warnings(bench)[0].get("expand", {}):
                break
            time.sleep(0.5)
        time.sleep(2.0)  # the last Warnings
    finally:
        kubelet.stop.set()
        kubelet.thread.join(timeout=5)
    tail = bench.controller.log_tail(10_000_000)
    warnings, longest, texts = _warnings(bench)
    jobs = sorted(j["metadata"]["name"] for j in bench.clientset.jobs(NAMESPACE).list())
    result = {
        "jobflows": _summary(bench),
        "warnings_by_jobflow_and_reason": warnings,
        "longest_event_message": longest,
        "warning_messages": texts,
        "use_job_created": "expand-use" in jobs,
        "pods_written": len(kubelet.done),
        "kubelet_errors": kubelet.errors[:3],
        "seconds_until_all_judged": round(time.monotonic() - started, 1),
        "controller_log_growth_bytes": len(tail) - log_before,
        "tracebacks_in_log": tail[log_before:].count("Traceback"),
    }
    log(f"   results_hostile: {result['jobflows']}, warnings {warnings}")
    return result


def checks(name: str, result: dict[str, Any]) -> dict[str, bool]:
    """The scenario's own verdicts, beside hostile.py's common ones."""
    if name != "results_hostile":
        return {}
    flows, warned = result["jobflows"], result["warnings_by_jobflow_and_reason"]

    def phase(job_flow: str) -> str | None:
        return (flows.get(job_flow) or {}).get("phase")

    return {
        "many_keys_succeed_with_16_results": phase("many-keys") == "Succeed"
        and flows["many-keys"]["jobs_with_results"] == 1,
        "not_json_and_deep_json_fail_with_one_invalid_result": phase("not-json") == phase("deep-json") == "Failed"
        and (warned.get("not-json") or {}).get("InvalidResult") == 1
        and (warned.get("deep-json") or {}).get("InvalidResult") == 1,
        "budget_refused_past_64_kib": phase("budget") == "Failed"
        and flows["budget"]["results_bytes"] <= 64 * 1024
        and (warned.get("budget") or {}).get("InvalidResult") == 1,
        "expansion_past_a_jobs_budget_refused": not result["use_job_created"]
        and "InvalidParams" in (warned.get("expand") or {}),
        "event_messages_at_most_4096": result["longest_event_message"] <= 4096,
        "no_traceback": result["tracebacks_in_log"] == 0 and not result["kubelet_errors"],
    }
