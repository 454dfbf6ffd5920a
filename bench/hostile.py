"""Hostile input against the real control plane: what the other JobFlows see while it goes on.

One control plane (etcd + kube-apiserver, no kube-controller-manager), one ``jobflow-controller``
process run as ``manifests/deployment.yaml`` runs it (its flags' defaults: ``--kube-api-qps=50``,
``--kube-api-burst=100``, 3 workers; ``MALLOC_ARENA_MAX=2``), plus its webhook (``--enable-webhook``
on 127.0.0.1 with a certificate from a CA made here, registered with the API server by a
``ValidatingWebhookConfiguration`` for JobFlows in every namespace, ``failurePolicy: Fail``) and
``--probe-allow-loopback`` (the simulated pods run on 127.0.0.1). The Volcano Job simulator runs as
a process of its own (``bench/e2e_flows.py --simulator``).

Scenarios, one after another on that controller, each with ``BYSTANDERS`` "bystander" JobFlows
(plain 3-step chains, Jobs ``Pending:0.1s,Running:0.2s,Completed``) created one every
``BYSTANDER_INTERVAL`` s through the API server (so admitted by the webhook) while it runs:

* ``baseline``: the bystanders alone;
* ``webhook_attack``: ``bench/webhook_hostile.py``'s attackers (16 MiB bodies, 200 slow
  connections, 3 MiB of nested JSON, 3 MiB of ``[{},{},...]``) on the controller's webhook port for
  ``WEBHOOK_ATTACK_SECONDS``, from 127.0.0.2 (the API server calls from 127.0.0.1);
* ``webhook_freeze``: issue 33's body (``{"a":"`` then escaped quotes, no closing quote: 1 MiB of
  it froze the whole controller, GIL held by the webhook's shape check) at 1 MiB and 3 MiB, and
  variants (``bench/webhook_hostile.py`` ``FREEZE_BODIES``), each posted again and again from
  127.0.0.2 for ``WEBHOOK_FREEZE_SECONDS``: what each got back and its slowest answer;
* ``webhook_clients``: issue 33's per-client attacks for ``WEBHOOK_CLIENTS_SECONDS``, from two
  addresses (127.0.0.2 and 127.0.0.3) at once: from each, ``SILENT_CONNECTIONS`` connections that
  never start TLS (reopened when cut) and ``SLOW_BODIES`` 3 MiB bodies sent but for their last byte
  (sent again when cut); meanwhile a second, well-behaved client (127.0.0.4) posts a review every
  0.25 s: is it answered;
* ``flow_cap``: ``CAP_JOBFLOWS`` JobFlows of 500 flows (the cap) in one namespace with 500
  JobTemplates, 5 layers of ``CAP_WIDTH`` (flow i waits for flow i-100), instant Jobs, watched for a
  fixed ``CAP_WINDOW`` s (at the default client QPS the 1,500 Jobs take longer than the bench's budget:
  the Jobs created per second are reported);
* ``slow_drip_probe``: a server on 127.0.0.1 that answers every request with one byte every 0.3 s
  for 30 s; ``DRIP_JOBFLOWS`` JobFlows whose flow ``client`` waits for ``server`` (2 simulated pods,
  running ``DRIP_SERVER_RUN`` s) with an HTTP probe to that server; how long each check held its
  connection is measured at the server (the controller's deadline is 1 s per check);
* ``retry_storm``: ``STORM_JOBFLOWS`` JobFlows, each one flow whose Job always fails, with
  ``retry: {maxRetries: 20}``, for a fixed ``STORM_WINDOW`` s: retries back off exponentially from
  1 s (1, 2, 4, ... s, capped at 360 s), so 20 retries take over an hour; the window shows the first minute,
  its densest.
* ``matrix_fanout``: ``MATRIX_JOBFLOWS`` JobFlows, each in a namespace of its own, each one flow with a
  ``MATRIX_SIDE`` x ``MATRIX_SIDE`` matrix (256 Jobs, instant), watched until they Succeed or for
  ``MATRIX_WINDOW`` s: four tenants' fan-out at once (issue 42 item 9);
* ``annotation_storm``: a JobFlow whose ``flow.volcano.sh/retry-request`` and ``flow.volcano.sh/retry``
  annotations hold 5,000 ``[`` each, patched 10 times a second for 15 s: the controller's log lines about
  it, tracebacks, and the Warnings on it (one per cause is the target; issue 33 item 2).
* ``cron_overflow`` and ``cron_foreign_run``: CronJobFlows with values admission would refuse, and
  a run re-created by someone else under its name (issue 42 items 3-4; ``bench/_hostile_cron.py``).
* ``results_hostile``: pods whose three containers write 4 KiB termination messages each (12 KiB per
  pod): ~900 keys, not JSON, deeply nested JSON; a matrix flow whose 17 Jobs report 4,000 bytes each
  (past the 64 KiB per JobFlow) and a template reading a 4,000-byte result 100 times (issue 43;
  ``bench/_hostile_results.py``).
* ``cel_hostile``: JobFlows whose flows' ``when[].cel`` items are the costliest that pass admission
  (issue 43; ``bench/_hostile_cel.py``).
* ``template_hostile``: a JobFlowTemplate of 500 flows (about 400 KB of spec) and 40 runs of it at once:
  every run resolved and its spec stored, no Job (every flow Skipped), bystanders as ever
  (docs/templates.md; ``bench/_hostile_templates.py``).
* ``trigger_flood``: POSTs to an http JobFlowTrigger from six clients as fast as answered (forged,
  unauthorised and authorised tokens) and a watched ConfigMap updated 10 times a second, for 15 s
  (issue 46; ``bench/_hostile_triggers.py``).

Reported per scenario: the controller's peak RSS (VmHWM, reset through ``/proc/<pid>/clear_refs``
at the start of the scenario; VmRSS sampled every 0.25 s as a fallback), its CPU seconds, the
longest sync (``workqueue_longest_running_processor_seconds`` sampled every 0.25 s, and the upper
bound of the ``workqueue_work_duration_seconds`` bucket holding the scenario's slowest sync), the
controller's API requests, and the bystanders' reaction delay (dependency ``Completed`` to dependent
``ADDED``, as ``bench/e2e_flows.py`` measures it) p50/p99 against the baseline's, whether every
bystander was admitted and reached ``Succeed``, and within ``SUCCEED_WITHIN`` s of its first create
attempt; the controller's ``/healthz`` latency, sampled every ``SAMPLE_INTERVAL`` s throughout the
scenario (each call with a ``HEALTHZ_TIMEOUT`` s timeout; its max). Pass/fail against ``TARGETS``.
``--only`` runs the named scenarios (and the baseline).

Prints one JSON document on stdout, progress on stderr; exits 1 if a target is missed or the bench
cannot run. A watchdog fails it after ``TIME_LIMIT`` seconds.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import select
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# bench/ holds scripts named like the project's packages (workqueue.py, informers.py): drop it.
_BENCH_DIR = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH_DIR]
sys.path.insert(0, str(_BENCH_DIR.parent))

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from bench import (  # noqa: E402
    _hostile_cel,
    _hostile_cron,
    _hostile_params,
    _hostile_results,
    _hostile_templates,
    _hostile_triggers,
)
from bench._common import (  # noqa: E402
    BenchError,
    Watchdog,
    control_plane,
    controller_command,
    cpu_seconds,
    create_namespace,
    emit,
    load_average,
    log,
    machine,
    percentile,
    proc_status_kib,
    rest_client,
    run_pool,
    simulator_process,
    wait_until,
)
from bench.e2e_flows import Observer, apiserver_requests, latencies  # noqa: E402
from bench.webhook_hostile import (  # noqa: E402
    Attackers,
    FreezeBodies,
    NormalClient,
    SilentConnections,
    SlowBodies,
    Target,
)
from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION  # noqa: E402
from jobflow_controller.apis.retry import ATTEMPT_ANNOTATION, RETRY_ANNOTATION  # noqa: E402
from jobflow_controller.kube.clientset import Clientset  # noqa: E402
from jobflow_controller.kube.errors import ApiStatusError  # noqa: E402
from jobflow_controller.kube.resources import EVENTS, Resource  # noqa: E402
from jobflow_controller.local.certs import TinyCA, write  # noqa: E402
from jobflow_controller.local.processes import Process, free_port  # noqa: E402
from jobflow_controller.local.simulated_pods import PODS_ANNOTATION  # noqa: E402
from jobflow_controller.validation import MAX_FLOWS  # noqa: E402
from jobflow_controller.webhook import VALIDATE_PATH  # noqa: E402
from tests.e2e.jobflows import chain, flow, template  # noqa: E402

TIME_LIMIT = 720.0
BYSTANDERS = 10
BYSTANDER_INTERVAL = 1.5
BYSTANDER_SCRIPT = "Pending:0.1s,Running:0.2s,Completed"
BYSTANDER_TIMEOUT = 90.0
#: Issue 42 item 9: a bystander waits for the controller less than 1 s (p99) and Succeeds within 3 s.
BYSTANDER_WAIT_P99 = 1.0
WEBHOOK_ATTACK_SECONDS = 15.0
WEBHOOK_FREEZE_SECONDS = 15.0
WEBHOOK_CLIENTS_SECONDS = 15.0
SILENT_CONNECTIONS = 256
SLOW_BODIES = 4
ATTACKER_ADDRESSES = ("127.0.0.2", "127.0.0.3")
SECOND_CLIENT_ADDRESS = "127.0.0.4"
SUCCEED_WITHIN = 3.0
HEALTHZ_TIMEOUT = 5.0
CAP_JOBFLOWS = 3
CAP_WIDTH = 100
CAP_SCRIPT = "Pending:0s,Running:0s,Completed"
CAP_WINDOW = 90.0
DRIP_JOBFLOWS = 8
DRIP_PODS = 2
DRIP_BYTE_INTERVAL = 0.3
DRIP_FOR = 30.0
DRIP_SERVER_RUN = 15.0
ANNOTATION_TOUCHES = 150
#: The scenarios, in the order they run (bench/summary.py reports them in this order too).
SCENARIOS = (
    "baseline",
    "webhook_attack",
    "webhook_freeze",
    "webhook_clients",
    "flow_cap",
    "slow_drip_probe",
    "retry_storm",
    "matrix_fanout",
    "annotation_storm",
    "matrix_oversized",
    "param_expansion",
    "cron_overflow",
    "cron_foreign_run",
    "results_hostile",
    "cel_hostile",
    "template_hostile",
    "trigger_flood",
)
#: A namespace with this label is not sent to the webhook (annotation_storm's, as a CRD-only install).
NO_WEBHOOK_LABEL = "bench.jobflow.volcano.sh/no-webhook"
ANNOTATION_TOUCH_INTERVAL = 0.1
ANNOTATION_BRACKETS = 5000
STORM_JOBFLOWS = 100
STORM_MAX_RETRIES = 20
STORM_WINDOW = 60.0
STORM_SCRIPT = "Pending:0s,Running:0.2s,Failed"
MATRIX_JOBFLOWS = 4
MATRIX_SIDE = 16
MATRIX_WINDOW = 60.0
MATRIX_NAMESPACES = tuple(f"hostile-matrix-{i}" for i in range(MATRIX_JOBFLOWS))
SAMPLE_INTERVAL = 0.25
TARGETS = {
    "peak_rss_mib_at_most": 150.0,
    "bystander_wait_p99_s_at_most": BYSTANDER_WAIT_P99,
    "bystanders_all_succeed": True,
    "bystander_succeed_within_s": SUCCEED_WITHIN,
    "healthz_max_s_at_most": 1.0,
}

VALIDATING_WEBHOOK_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    namespaced=False,
)
WEBHOOK_NAME = "validatejobflow.volcano.sh"
#: The webhook's bucket bounds of workqueue_work_duration_seconds (client-go's: 10 ns to 10 s).
WRITES = ("POST", "PUT", "PATCH", "DELETE")


# -- the controller's metrics -----------------------------------------------------------------------


def scrape(port: int) -> dict[str, Any]:
    """Work-duration buckets and longest running processor by queue; requests by method."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    out: dict[str, Any] = {
        "buckets": defaultdict(dict),
        "longest": {},
        "requests": defaultdict(float),
        "codes": defaultdict(float),
    }
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "workqueue_work_duration_seconds_bucket":
                out["buckets"][sample.labels["name"]][float(sample.labels["le"])] = sample.value
            elif sample.name == "workqueue_longest_running_processor_seconds":
                out["longest"][sample.labels["name"]] = sample.value
            elif sample.name == "rest_client_requests_total":
                out["requests"][sample.labels["method"]] += sample.value
                out["codes"][sample.labels["code"]] += sample.value
    return out


def slowest_bucket(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float | str | None]:
    """Per queue, the upper bound of the smallest bucket that holds every sync of the interval."""
    out: dict[str, float | str | None] = {}
    for queue, buckets in after["buckets"].items():
        old = before["buckets"].get(queue, {})
        deltas = {le: count - old.get(le, 0.0) for le, count in buckets.items()}
        total = deltas.get(float("inf"), 0.0)
        if not total:
            out[queue] = None
            continue
        bound = min(le for le, n in deltas.items() if n >= total)
        out[queue] = "+Inf" if bound == float("inf") else bound
    return out


class Sampler:
    """The controller's RSS and longest running sync, every SAMPLE_INTERVAL s, maxima per scenario."""

    def __init__(self, pid: int, metrics_port: int) -> None:
        self.pid = pid
        self.port = metrics_port
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reset()
        threading.Thread(target=self._run, name="sampler", daemon=True).start()

    def reset(self) -> None:
        """A new scenario: clear the maxima, and the kernel's VmHWM (clear_refs 5) if we may."""
        with self.lock:
            self.rss_kib = 0
            self.longest: dict[str, float] = defaultdict(float)
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")
            self.hwm_reset = True
        except OSError:
            self.hwm_reset = False

    def _run(self) -> None:
        while not self.stop.wait(SAMPLE_INTERVAL):
            with contextlib.suppress(Exception):
                rss = proc_status_kib(self.pid, "VmRSS")
                longest = scrape(self.port)["longest"]
                with self.lock:
                    self.rss_kib = max(self.rss_kib, rss)
                    for queue, seconds in longest.items():
                        self.longest[queue] = max(self.longest[queue], seconds)

    def peaks(self) -> dict[str, Any]:
        with self.lock:
            sampled = self.rss_kib
            longest = {q: round(s, 3) for q, s in sorted(self.longest.items())}
        hwm = proc_status_kib(self.pid, "VmHWM") if self.hwm_reset else None
        return {
            "peak_rss_mib": round(max(sampled, hwm or 0) / 1024.0, 1),
            "peak_rss_source": "VmHWM reset at the scenario's start" if hwm else "VmRSS sampled every 0.25 s",
            "longest_running_sync_sampled_s": longest,
        }


class HealthProbe:
    """``GET /healthz`` on the controller every SAMPLE_INTERVAL s: the latency of each answer (a call
    that fails or times out counts as its time until then), maxima per scenario."""

    def __init__(self, health_port: int) -> None:
        self.url = f"http://127.0.0.1:{health_port}/healthz"
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reset()
        threading.Thread(target=self._run, name="healthz-probe", daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.latencies: list[float] = []
            self.failures: dict[str, int] = defaultdict(int)

    def _run(self) -> None:
        while not self.stop.wait(SAMPLE_INTERVAL):
            started = time.monotonic()
            failure = None
            try:
                with urllib.request.urlopen(self.url, timeout=HEALTHZ_TIMEOUT) as response:
                    response.read()
                    if response.status != 200:
                        failure = f"HTTP {response.status}"
            except OSError as err:
                failure = type(err).__name__
            with self.lock:
                self.latencies.append(time.monotonic() - started)
                if failure is not None:
                    self.failures[failure] += 1

    def summary(self) -> dict[str, Any]:
        with self.lock:
            latencies, failures = list(self.latencies), dict(self.failures)
        return {
            "samples": len(latencies),
            "max_s": round(max(latencies), 3) if latencies else None,
            "p99_s": _round(percentile(latencies, 99)),
            "failures": failures,
        }


# -- the webhook, registered with the API server ----------------------------------------------------


def webhook_files(directory: Path) -> tuple[Path, Path, bytes]:
    ca = TinyCA("bench-hostile-webhook-ca")
    pair = ca.issue("jobflow-controller-webhook", server=True, ips=("127.0.0.1",))
    cert = write(directory / "tls.crt", pair.cert_pem)
    key = write(directory / "tls.key", pair.key_pem, private=True)
    return cert, key, ca.cert_pem


def register_webhook(clientset: Clientset, port: int, ca_pem: bytes, namespace: str) -> None:
    """manifests/webhook's registration, by URL to 127.0.0.1; waits until the API server calls it."""
    clientset.resource(VALIDATING_WEBHOOK_CONFIGURATIONS).create(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "bench-hostile-validate-jobflows"},
            "webhooks": [
                {
                    "name": WEBHOOK_NAME,
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{port}{VALIDATE_PATH}",
                        "caBundle": base64.b64encode(ca_pem).decode(),
                    },
                    "rules": [
                        {
                            "operations": ["CREATE", "UPDATE"],
                            "apiGroups": ["flow.volcano.sh"],
                            "apiVersions": ["v1alpha1"],
                            "resources": ["jobflows"],
                            "scope": "Namespaced",
                        }
                    ],
                    # Every namespace but one whose JobFlows must reach the controller unadmitted
                    # (annotation_storm: what a CRD-only install stores).
                    "namespaceSelector": {"matchExpressions": [{"key": NO_WEBHOOK_LABEL, "operator": "DoesNotExist"}]},
                    "failurePolicy": "Fail",
                    "matchPolicy": "Equivalent",
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                }
            ],
        }
    )
    # A cycle passes the CRD's rules; only the webhook refuses it.
    steps = [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    cycle = flow("cycle", namespace, steps)

    def refused_by_webhook() -> bool:
        try:
            clientset.job_flows(namespace).create(cycle, dry_run=True)
        except ApiStatusError as err:
            return f'admission webhook "{WEBHOOK_NAME}" denied the request' in err.message
        return False

    wait_until(refused_by_webhook, 30.0, "the API server to call the webhook", interval=0.2)


# -- bystanders -------------------------------------------------------------------------------------


class Bystanders:
    """BYSTANDERS 3-step chains, created one every BYSTANDER_INTERVAL s from a thread of their own."""

    def __init__(self, clientset: Clientset, namespace: str) -> None:
        self.clientset = clientset
        self.namespace = namespace
        self.flows = [flow(f"bystander-{i:02d}", namespace, chain("a", "b", "c")) for i in range(BYSTANDERS)]
        self.admitted: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self.first_attempt: dict[str, float] = {}
        self.thread = threading.Thread(target=self._create, name=f"bystanders-{namespace}", daemon=True)
        self.thread.start()

    def _create(self) -> None:
        next_at = time.monotonic()
        for job_flow in self.flows:
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at += BYSTANDER_INTERVAL
            self.first_attempt[f"{self.namespace}/{job_flow['metadata']['name']}"] = time.monotonic()
            for _attempt in range(3):
                try:
                    self.clientset.job_flows(self.namespace).create(job_flow)
                    self.admitted.append(job_flow)
                    break
                except Exception as err:  # noqa: BLE001  (a refusal is a result: count it, try again)
                    self.refusals.append(f"{job_flow['metadata']['name']}: {str(err)[:200]}")
                    time.sleep(0.5)

    def finish(self, observer: Observer) -> dict[str, Any]:
        """Wait for the creations and for every admitted bystander to Succeed; their figures."""
        self.thread.join(timeout=BYSTANDERS * BYSTANDER_INTERVAL + 60.0)
        keys = [f"{self.namespace}/{f['metadata']['name']}" for f in self.admitted]

        def done() -> bool:
            with observer.lock:
                return all(k in observer.flow_succeeded for k in keys)

        with contextlib.suppress(BenchError):
            wait_until(done, BYSTANDER_TIMEOUT, "the bystanders to Succeed", interval=0.2)
        with observer.lock:
            succeeded = sum(k in observer.flow_succeeded for k in keys)
            took = [observer.flow_succeeded[k] - self.first_attempt[k] for k in keys if k in observer.flow_succeeded]
            waited = [w for w in (self._waited(observer, f) for f in self.admitted) if w is not None]
        measured = latencies(observer, self.admitted)
        delay = measured["dependency_completed_to_dependent_added"]
        return {
            "created": len(self.flows),
            "admitted": len(self.admitted),
            "refused_attempts": len(self.refusals),
            "refusals_first": self.refusals[:3],
            "succeeded": succeeded,
            "first_create_to_succeed_s_max": round(max(took), 2) if took else None,
            f"succeeded_within_{SUCCEED_WITHIN:.0f}_s": sum(t <= SUCCEED_WITHIN for t in took),
            "reaction_delay": delay,
            "jobflow_added_to_first_job_added": measured["jobflow_added_to_first_job_added"],
            "last_job_completed_to_jobflow_succeed": measured["last_job_completed_to_jobflow_succeed"],
            "create_to_succeed_s": _spread(took),
            "waiting_for_the_controller_s": _spread(waited),
        }

    def _waited(self, observer: Observer, job_flow: dict[str, Any]) -> float | None:
        """create->Succeed less the time its Jobs ran (ADDED to Completed, the simulator's script):
        what the bystander spent waiting for the controller. Its Jobs run one after another (a chain)."""
        ns, name = job_flow["metadata"]["namespace"], job_flow["metadata"]["name"]
        key = f"{ns}/{name}"
        jobs = [f"{ns}/{name}-{step['name']}" for step in job_flow["spec"]["flows"]]
        if key not in observer.flow_succeeded or not all(j in observer.job_completed for j in jobs):
            return None
        ran = sum(observer.job_completed[j] - observer.job_added[j] for j in jobs)
        return observer.flow_succeeded[key] - self.first_attempt[key] - ran


# -- the scenarios ------------------------------------------------------------------------------------


class Bench:
    def __init__(
        self, plane: Any, clientset: Clientset, controller: Process, metrics_port: int, health_port: int
    ) -> None:
        self.plane = plane
        self.clientset = clientset
        self.controller = controller
        assert controller.pid is not None
        self.pid = controller.pid
        self.metrics_port = metrics_port
        self.observer = Observer(clientset)
        self.observer.start()
        self.sampler = Sampler(self.pid, metrics_port)
        self.health = HealthProbe(health_port)
        self.webhook_target: Target | None = None
        self.trigger_port, self.trigger_ca = 0, b""

    def scenario(self, name: str, attack: Any) -> dict[str, Any]:
        """Reset the peaks, start the bystanders, run ``attack()`` (its dict goes into the result)."""
        log(f"== {name}")
        namespace = f"bystanders-{name.replace('_', '-')}"
        self.sampler.reset()
        self.health.reset()
        before = scrape(self.metrics_port)
        api_before = apiserver_requests(self.plane)
        cpu0 = cpu_seconds(self.pid)
        started = time.monotonic()
        bystanders = Bystanders(self.clientset, namespace)
        details = attack()
        result = {"bystanders": bystanders.finish(self.observer), "healthz": self.health.summary()}
        elapsed = time.monotonic() - started
        if not self.controller.alive():
            raise BenchError(f"the controller exited during {name}\n{self.controller.log_tail(30)}")
        after = scrape(self.metrics_port)
        api_after = apiserver_requests(self.plane)
        writes = sum(v - api_before.get(k, 0.0) for k, v in api_after.items() if k.split(" ", 1)[0] in WRITES)
        result["controller"] = {
            **self.sampler.peaks(),
            "slowest_sync_bucket_le_s": slowest_bucket(before, after),
            "cpu_seconds": round(cpu_seconds(self.pid) - cpu0, 2),
            "api_requests_by_method": {
                m: int(v - before["requests"].get(m, 0.0))
                for m, v in sorted(after["requests"].items())
                if v - before["requests"].get(m, 0.0)
            },
            "api_requests_by_code": {
                code: int(v - before["codes"].get(code, 0.0))
                for code, v in sorted(after["codes"].items())
                if v - before["codes"].get(code, 0.0)
            },
        }
        result["seconds"] = round(elapsed, 1)
        result["apiserver_writes_all_clients_per_s"] = round(writes / elapsed, 1)
        result |= details
        log(
            f"   {name}: peak RSS {result['controller']['peak_rss_mib']} MiB, bystanders"
            f" {result['bystanders']['succeeded']}/{BYSTANDERS} Succeed,"
            f" delay p99 {result['bystanders']['reaction_delay']['p99_ms']} ms,"
            f" create->Succeed {result['bystanders']['create_to_succeed_s']},"
            f" waiting {result['bystanders']['waiting_for_the_controller_s']},"
            f" /healthz max {result['healthz']['max_s']} s"
        )
        return result

    # 1. the webhook
    def webhook_attack(self) -> dict[str, Any]:
        assert self.webhook_target is not None
        attackers = Attackers(self.webhook_target.at(ATTACKER_ADDRESSES[0]), time.monotonic() + WEBHOOK_ATTACK_SECONDS)
        outcomes = attackers.join()
        alive = self.webhook_target.post(b'{"kind": "AdmissionReview"}') in (200, 400)
        return {"attack_seconds": WEBHOOK_ATTACK_SECONDS, "attacks": outcomes, "webhook_answers_after": alive}

    def webhook_freeze(self) -> dict[str, Any]:
        assert self.webhook_target is not None
        bodies = FreezeBodies(self.webhook_target.at(ATTACKER_ADDRESSES[0]), time.monotonic() + WEBHOOK_FREEZE_SECONDS)
        outcomes = bodies.join()
        alive = self.webhook_target.post(b'{"kind": "AdmissionReview"}') in (200, 400)
        return {"attack_seconds": WEBHOOK_FREEZE_SECONDS, "bodies": outcomes, "webhook_answers_after": alive}

    def webhook_clients(self) -> dict[str, Any]:
        assert self.webhook_target is not None
        until = time.monotonic() + WEBHOOK_CLIENTS_SECONDS
        attackers = {
            address: (
                SilentConnections(self.webhook_target.at(address), SILENT_CONNECTIONS, until),
                SlowBodies(self.webhook_target.at(address), SLOW_BODIES, until),
            )
            for address in ATTACKER_ADDRESSES
        }
        second = NormalClient(self.webhook_target.at(SECOND_CLIENT_ADDRESS), until)
        answered = second.join()
        outcomes = {
            address: {"silent_connections": silent.join(), "slow_3_mib_bodies": slow.join()}
            for address, (silent, slow) in attackers.items()
        }
        alive = self.webhook_target.post(b'{"kind": "AdmissionReview"}') in (200, 400)
        return {
            "attack_seconds": WEBHOOK_CLIENTS_SECONDS,
            "attackers": outcomes,
            "second_client": answered,
            "webhook_answers_after": alive,
        }

    # 2. JobFlows at the flow cap
    def flow_cap(self) -> dict[str, Any]:
        namespace = "hostile-cap"
        names = [f"f{i:03d}" for i in range(MAX_FLOWS)]
        create_namespace(self.clientset, namespace)
        run_pool(
            lambda n: self.clientset.job_templates(namespace).create(template(n, namespace, CAP_SCRIPT)),
            names,
            8,
            "create templates",
            120.0,
        )
        flows = [
            {"name": n} if i < CAP_WIDTH else {"name": n, "dependsOn": {"targets": [names[i - CAP_WIDTH]]}}
            for i, n in enumerate(names)
        ]
        created = time.monotonic()
        for i in range(CAP_JOBFLOWS):
            self.clientset.job_flows(namespace).create(flow(f"cap-{i}", namespace, flows))
        keys = [f"{namespace}/cap-{i}" for i in range(CAP_JOBFLOWS)]

        def succeeded() -> int:
            with self.observer.lock:
                return sum(k in self.observer.flow_succeeded for k in keys)

        with contextlib.suppress(BenchError):
            wait_until(lambda: succeeded() == CAP_JOBFLOWS, CAP_WINDOW, "the flow-cap JobFlows", interval=0.5)
        window = time.monotonic() - created
        with self.observer.lock:
            jobs = sum(k.startswith(namespace + "/") for k in self.observer.job_added)
            done = [self.observer.flow_succeeded[k] - created for k in keys if k in self.observer.flow_succeeded]
        return {
            "jobflows": CAP_JOBFLOWS,
            "flows_each": MAX_FLOWS,
            "shape": f"{MAX_FLOWS // CAP_WIDTH} layers of {CAP_WIDTH}: flow i waits for flow i-{CAP_WIDTH}",
            "job_templates": MAX_FLOWS,
            "window_s": round(window, 1),
            "why_a_window": (
                f"at the default --kube-api-qps=50 the {CAP_JOBFLOWS * MAX_FLOWS} Jobs, their Events and the"
                " 500-entry status writes take longer than the bench's time budget: the window reports the rate"
            ),
            "jobs_created": jobs,
            "jobs_created_per_s": round(jobs / window, 1),
            "jobflows_succeeded": len(done),
            "seconds_to_succeed_max": round(max(done), 1) if done else None,
        }

    # 3. a slow-drip probe server
    def slow_drip_probe(self) -> dict[str, Any]:
        namespace = "hostile-drip"
        held: list[float] = []
        lock = threading.Lock()

        class Drip(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # One byte every DRIP_BYTE_INTERVAL s; between bytes, watch for the client's close
                # (a read of b"" on its FIN), so the time held is the check's, not our next write's.
                started = time.monotonic()
                try:
                    self.wfile.write(b"H")
                    self.wfile.flush()
                    while time.monotonic() - started < DRIP_FOR:
                        readable, _, _ = select.select([self.connection], [], [], DRIP_BYTE_INTERVAL)
                        if readable and not self.connection.recv(1024):
                            break
                        self.wfile.write(b"T")
                        self.wfile.flush()
                except OSError:
                    pass
                with lock:
                    held.append(time.monotonic() - started)
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Drip)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="drip", daemon=True).start()
        port = int(server.server_address[1])
        try:
            create_namespace(self.clientset, namespace)
            served = template("server", namespace, f"Pending:0.2s,Running:{DRIP_SERVER_RUN:g}s,Completed", DRIP_PODS)
            served["spec"]["tasks"][0]["template"]["metadata"]["annotations"][PODS_ANNOTATION] = "true"
            self.clientset.job_templates(namespace).create(served)
            self.clientset.job_templates(namespace).create(template("client", namespace, BYSTANDER_SCRIPT))
            probe = {"httpGetList": [{"taskName": "main", "port": port, "path": "/ready"}]}
            steps = [{"name": "server"}, {"name": "client", "dependsOn": {"targets": ["server"], "probe": probe}}]
            for i in range(DRIP_JOBFLOWS):
                self.clientset.job_flows(namespace).create(flow(f"drip-{i}", namespace, steps))
            keys = [f"{namespace}/drip-{i}" for i in range(DRIP_JOBFLOWS)]

            def all_done() -> bool:
                with self.observer.lock:
                    return all(k in self.observer.flow_succeeded for k in keys)

            with contextlib.suppress(BenchError):
                wait_until(all_done, DRIP_SERVER_RUN + 45.0, "the drip JobFlows", interval=0.5)
            with self.observer.lock:
                succeeded = sum(k in self.observer.flow_succeeded for k in keys)
        finally:
            server.shutdown()
            server.server_close()
        with lock:
            checks = list(held)
        return {
            "jobflows": DRIP_JOBFLOWS,
            "pods_per_target": DRIP_PODS,
            "server": f"one byte every {DRIP_BYTE_INTERVAL} s for {DRIP_FOR:g} s, then closes",
            "target_runs_s": DRIP_SERVER_RUN,
            "jobflows_succeeded": succeeded,
            "checks_seen_by_the_server": len(checks),
            "check_held_connection_s": {
                "p50": _round(percentile(checks, 50)),
                "p99": _round(percentile(checks, 99)),
                "max": _round(max(checks) if checks else None),
            },
        }

    # 4. a retry storm
    def retry_storm(self) -> dict[str, Any]:
        namespace = "hostile-storm"
        create_namespace(self.clientset, namespace)
        self.clientset.job_templates(namespace).create(template("fails", namespace, STORM_SCRIPT))
        steps = [{"name": "fails", "retry": {"maxRetries": STORM_MAX_RETRIES}}]
        docs = [flow(f"storm-{i:03d}", namespace, steps) for i in range(STORM_JOBFLOWS)]
        started = time.monotonic()
        api_before = apiserver_requests(self.plane)
        controller_before = scrape(self.metrics_port)["requests"]
        cpu0 = cpu_seconds(self.pid)
        run_pool(lambda d: self.clientset.job_flows(namespace).create(d), docs, 8, "create storm", 60.0)
        time.sleep(max(0.0, started + STORM_WINDOW - time.monotonic()))
        window = time.monotonic() - started
        cpu = cpu_seconds(self.pid) - cpu0
        api_after = apiserver_requests(self.plane)
        controller_after = scrape(self.metrics_port)["requests"]
        jobs = self.clientset.jobs(namespace).list()
        attempts = [int((j["metadata"].get("annotations") or {}).get(ATTEMPT_ANNOTATION) or 0) for j in jobs]
        writes = {
            k: v - api_before.get(k, 0.0)
            for k, v in api_after.items()
            if k.split(" ", 1)[0] in WRITES and v - api_before.get(k, 0.0)
        }
        controller_writes = sum(controller_after.get(m, 0.0) - controller_before.get(m, 0.0) for m in WRITES)
        return {
            "jobflows": STORM_JOBFLOWS,
            "max_retries": STORM_MAX_RETRIES,
            "window_s": round(window, 1),
            "why_a_window": (
                "retries back off exponentially from a 1 s floor (1, 2, 4, ... s, capped at 360 s), so"
                f" {STORM_MAX_RETRIES} retries take over an hour; the window covers the storm's densest minute"
            ),
            "retries_done": sum(attempts),
            "retries_done_per_jobflow_max": max(attempts) if attempts else 0,
            "controller_cpu_seconds_in_window": round(cpu, 2),
            "controller_cpu_share_of_one_core": round(cpu / window, 3),
            "controller_writes_per_s": round(controller_writes / window, 1),
            "apiserver_writes_per_s_all_clients": round(sum(writes.values()) / window, 1),
            "apiserver_writes_in_window_by_resource": {k: int(v) for k, v in sorted(writes.items())},
        }

    # 5. four tenants' matrix fan-out (issue 42 item 9)
    def matrix_fanout(self) -> dict[str, Any]:
        """MATRIX_JOBFLOWS JobFlows, one per namespace, each one flow of a 16 x 16 matrix (256 Jobs)."""
        side = [str(i) for i in range(MATRIX_SIDE)]
        steps = [{"name": "fan", "matrix": {"params": [{"name": "x", "values": side}, {"name": "y", "values": side}]}}]
        for namespace in MATRIX_NAMESPACES:
            create_namespace(self.clientset, namespace)
            self.clientset.job_templates(namespace).create(template("fan", namespace, CAP_SCRIPT))
        created = time.monotonic()
        for namespace in MATRIX_NAMESPACES:
            self.clientset.job_flows(namespace).create(flow("fanout", namespace, steps))
        keys = [f"{namespace}/fanout" for namespace in MATRIX_NAMESPACES]

        def succeeded() -> int:
            with self.observer.lock:
                return sum(k in self.observer.flow_succeeded for k in keys)

        with contextlib.suppress(BenchError):
            wait_until(lambda: succeeded() == len(keys), MATRIX_WINDOW, "the matrix JobFlows", interval=0.5)
        window = time.monotonic() - created
        with self.observer.lock:
            jobs = sum(k.split("/", 1)[0] in MATRIX_NAMESPACES for k in self.observer.job_added)
            done = [self.observer.flow_succeeded[k] - created for k in keys if k in self.observer.flow_succeeded]
        return {
            "jobflows": MATRIX_JOBFLOWS,
            "shape": f"one namespace each; one flow, a {MATRIX_SIDE} x {MATRIX_SIDE} matrix",
            "window_s": round(window, 1),
            "jobs_created": jobs,
            "jobs_created_per_s": round(jobs / window, 1),
            "jobflows_succeeded": len(done),
            "seconds_to_succeed_max": round(max(done), 1) if done else None,
        }

    # 6. tenant annotations the controller parses (issue 33 item 2)
    def annotation_storm(self) -> dict[str, Any]:
        """A JobFlow whose retry annotations hold 5,000 `[`, touched 10 times a second for 15 s, in a
        namespace the webhook does not admit: the controller's log lines and Warnings about it, beside
        the bystanders."""
        namespace = "hostile-annotations"
        # The webhook refuses these annotations (`not valid JSON: nested deeper than 8 levels`): the
        # attack is on the controller of an install without it, so this namespace is not admitted by it.
        create_namespace(self.clientset, namespace, {NO_WEBHOOK_LABEL: "true"})
        self.clientset.job_templates(namespace).create(template("a", namespace, BYSTANDER_SCRIPT))
        doc = flow("hostile", namespace, [{"name": "a"}])
        nested = "[" * ANNOTATION_BRACKETS
        doc["metadata"]["annotations"] = {RETRY_REQUEST_ANNOTATION: nested, RETRY_ANNOTATION: nested}
        log_before = len(self.controller.log_tail(1_000_000).splitlines())
        try:
            self.clientset.job_flows(namespace).create(doc)
        except ApiStatusError as refused:
            return {"admitted": False, "refusal": refused.message[:300]}
        for i in range(ANNOTATION_TOUCHES):
            self.clientset.job_flows(namespace).patch("hostile", {"metadata": {"annotations": {"touched": str(i)}}})
            time.sleep(ANNOTATION_TOUCH_INTERVAL)
        lines = self.controller.log_tail(1_000_000).splitlines()[log_before:]
        about = [line for line in lines if f"{namespace}/hostile" in line]
        events = self.clientset.resource(EVENTS, namespace).list()
        warnings = {
            e.get("reason"): int(e.get("count") or 1)
            for e in events
            if e.get("type") == "Warning" and (e.get("involvedObject") or {}).get("name") == "hostile"
        }
        return {
            "admitted": True,
            "touches": ANNOTATION_TOUCHES,
            "controller_log_lines_about_it": len(about),
            "tracebacks_in_log": sum("Traceback" in line for line in lines),
            "warnings_on_it_by_reason_count": warnings,
        }

    # issue 42 items 1 and 2 (bench/_hostile_params.py)
    def matrix_oversized(self) -> dict[str, Any]:
        return _hostile_params.matrix_oversized(self, NO_WEBHOOK_LABEL)

    def param_expansion(self) -> dict[str, Any]:
        return _hostile_params.param_expansion(self, NO_WEBHOOK_LABEL)

    # 6. CronJobFlows (issue 42 items 3 and 4)
    def cron_overflow(self) -> dict[str, Any]:
        return _hostile_cron.cron_overflow(self.clientset, self.controller, {NO_WEBHOOK_LABEL: "true"})

    def cron_foreign_run(self) -> dict[str, Any]:
        return _hostile_cron.cron_foreign_run(self.clientset)

    # 7. results (issue 43; bench/_hostile_results.py)
    def results_hostile(self) -> dict[str, Any]:
        return _hostile_results.results_hostile(self)

    # issue 43: the heaviest when[].cel that passes admission (bench/_hostile_cel.py)
    def cel_hostile(self) -> dict[str, Any]:
        return _hostile_cel.cel_hostile(self)

    # 8. JobFlowTemplates (docs/templates.md, bench/_hostile_templates.py)
    def template_hostile(self) -> dict[str, Any]:
        return _hostile_templates.template_hostile(self, NO_WEBHOOK_LABEL)

    # 9. JobFlowTriggers (issue 46)
    def trigger_flood(self) -> dict[str, Any]:
        return _hostile_triggers.trigger_flood(self.clientset, self.trigger_port, self.trigger_ca, create_namespace)

    def baseline(self) -> dict[str, Any]:
        return {}


def _spread(values: list[float]) -> dict[str, float | None]:
    return {
        "p50": _round(percentile(values, 50)),
        "p99": _round(percentile(values, 99)),
        "max": _round(max(values) if values else None),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def verdicts(scenarios: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, result in scenarios.items():
        if "skipped" in result:
            continue
        b = result["bystanders"]
        wait_p99 = b["waiting_for_the_controller_s"]["p99"]
        checks = {
            "peak_rss_under_150_mib": result["controller"]["peak_rss_mib"] < TARGETS["peak_rss_mib_at_most"],
            "bystanders_all_admitted_and_succeed": b["admitted"] == b["created"] == b["succeeded"],
            "bystander_wait_p99_under_1_s": wait_p99 is not None and wait_p99 < TARGETS["bystander_wait_p99_s_at_most"],
            "bystanders_succeed_within_3_s": b[f"succeeded_within_{SUCCEED_WITHIN:.0f}_s"] == b["created"],
            "healthz_under_1_s": (result["healthz"]["max_s"] or 0.0) <= TARGETS["healthz_max_s_at_most"]
            and result["healthz"]["samples"] > 0,
        }
        if name == "slow_drip_probe":
            held = result["check_held_connection_s"]["max"]
            checks["every_check_under_1_5_s"] = held is not None and held < 1.5
        if name in ("webhook_attack", "webhook_freeze", "webhook_clients"):
            checks["webhook_answers_after"] = result["webhook_answers_after"]
        if name == "webhook_freeze":
            checks["every_body_answered_400_within_1_s"] = all(
                set(body["answers"]) == {"400"} and body["slowest_answer_s"] <= 1.0
                for body in result["bodies"].values()
            )
        if name == "annotation_storm" and result.get("admitted"):
            checks["one_warning_per_cause_no_traceback"] = result["tracebacks_in_log"] == 0 and result[
                "warnings_on_it_by_reason_count"
            ] == {"InvalidRetryRequest": 1, "InvalidRetryPolicy": 1}
        checks |= _hostile_params.checks(name, result)
        checks |= _hostile_templates.checks(name, result)
        if name == "webhook_clients":
            second = result["second_client"]
            checks["second_client_all_answered"] = second["sent"] > 0 and second["answered_200"] == second["sent"]
        checks |= _hostile_cron.checks(name, result)
        checks |= _hostile_results.checks(name, result)
        checks |= _hostile_cel.checks(name, result)
        checks |= _hostile_triggers.checks(name, result)
        out[name] = checks
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="", help="comma-separated scenarios to run (baseline always runs); default: all"
    )
    args = parser.parse_args()
    watchdog = Watchdog(TIME_LIMIT, "bench/hostile.py")
    wanted = set(args.only.split(",")) | {"baseline"} if args.only else set(SCENARIOS)
    result: dict[str, Any] = {"benchmark": "hostile", **machine(), "targets": TARGETS}
    scenarios: dict[str, Any] = {}
    bystander_namespaces = [f"bystanders-{n.replace('_', '-')}" for n in SCENARIOS]
    try:
        with control_plane(watchdog) as plane, tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
            rest = rest_client(plane.kubeconfig_path, agent="bench-hostile")
            clientset = Clientset(rest)
            for namespace in bystander_namespaces:
                create_namespace(clientset, namespace)
                for step in "abc":
                    clientset.job_templates(namespace).create(template(step, namespace, BYSTANDER_SCRIPT))
            simulator = simulator_process(
                plane,
                [
                    *bystander_namespaces,
                    *MATRIX_NAMESPACES,
                    "hostile-cap",
                    "hostile-drip",
                    "hostile-storm",
                    "hostile-annotations",
                    "hostile-matrix",
                    "hostile-params",
                    _hostile_cel.NAMESPACE,
                    *_hostile_cron.NAMESPACES,
                    *_hostile_results.NAMESPACES,
                    _hostile_triggers.NAMESPACE,
                ],
            )
            cert, key, ca_pem = webhook_files(Path(tmp))
            metrics_port, health_port, webhook_port, trigger_port = free_port(), free_port(), free_port(), free_port()
            controller = Process(
                "jobflow-controller",
                [
                    "env",
                    "MALLOC_ARENA_MAX=2",
                    controller_command(),
                    f"--kubeconfig={plane.kubeconfig_path}",
                    "--leader-elect=false",
                    "--enable-metrics",
                    f"--listen-address=127.0.0.1:{metrics_port}",
                    "--enable-healthz",
                    f"--healthz-address=127.0.0.1:{health_port}",
                    "--enable-webhook",
                    f"--webhook-address=127.0.0.1:{webhook_port}",
                    f"--webhook-tls-cert-file={cert}",
                    f"--webhook-tls-private-key-file={key}",
                    "--probe-allow-loopback",
                    f"--trigger-address=127.0.0.1:{trigger_port}",
                    f"--trigger-tls-cert-file={cert}",
                    f"--trigger-tls-private-key-file={key}",
                    "--trigger-watch-kinds=v1/ConfigMap",
                ],
                plane.root / "controller.log",
            )
            watchdog.on_timeout(controller.stop)
            watchdog.on_timeout(simulator.stop)
            try:
                simulator.start()
                controller.start()
                wait_until(lambda: _ready(health_port) or not controller.alive(), 60.0, "the controller's /readyz")
                if not controller.alive():
                    raise BenchError(f"the controller exited at start-up\n{controller.log_tail(30)}")
                register_webhook(clientset, webhook_port, ca_pem, bystander_namespaces[0])
                bench = Bench(plane, clientset, controller, metrics_port, health_port)
                bench.webhook_target = Target(webhook_port, ca_pem)  # the API server's address: 127.0.0.1
                bench.trigger_port, bench.trigger_ca = trigger_port, ca_pem
                assert controller.pid is not None
                result["controller_idle_rss_mib"] = round(proc_status_kib(controller.pid, "VmRSS") / 1024.0, 1)
                log(
                    f"controller up (pid {controller.pid}), webhook registered; {result['controller_idle_rss_mib']} MiB"
                )
                for name in SCENARIOS:
                    if name not in wanted:
                        scenarios[name] = {"skipped": "not asked for (--only)"}
                        continue
                    scenarios[name] = bench.scenario(name, getattr(bench, name))
                bench.sampler.stop.set()
                bench.health.stop.set()
                bench.observer.stop.set()
            finally:
                controller.stop()
                simulator.stop()
                rest.close()
    except BenchError as err:
        log(f"ERROR: {err}")
        return 1
    finally:
        watchdog.cancel()

    base = scenarios["baseline"]["bystanders"]["reaction_delay"]
    result["controller"] = {
        "flags": "defaults (--kube-api-qps=50 --kube-api-burst=100, 3 workers) + webhook + --probe-allow-loopback",
        "environment": {"MALLOC_ARENA_MAX": "2"},
    }
    result["bystanders"] = {
        "per_scenario": BYSTANDERS,
        "every_s": BYSTANDER_INTERVAL,
        "shape": "3-step chain a -> b -> c",
        "job_phase_script": BYSTANDER_SCRIPT,
        "delay": "dependency Completed (MODIFIED event) to the dependent Job's ADDED event",
    }
    result["scenarios"] = scenarios
    result["bystander_delay_vs_baseline"] = {
        name: {
            "p50_ms": s["bystanders"]["reaction_delay"]["p50_ms"],
            "p99_ms": s["bystanders"]["reaction_delay"]["p99_ms"],
            "baseline_p50_ms": base["p50_ms"],
            "baseline_p99_ms": base["p99_ms"],
        }
        for name, s in scenarios.items()
        if "skipped" not in s
    }
    result["summary"] = {
        "peak_rss_mib_max": max(
            (s["controller"]["peak_rss_mib"] for s in scenarios.values() if "skipped" not in s), default=None
        ),
        "bystander_p99_ms_max": max(
            (s["bystanders"]["reaction_delay"]["p99_ms"] or 0.0 for s in scenarios.values() if "skipped" not in s),
            default=None,
        ),
        "bystander_wait_p99_s_max": max(
            (
                s["bystanders"]["waiting_for_the_controller_s"]["p99"] or 0.0
                for s in scenarios.values()
                if "skipped" not in s
            ),
            default=None,
        ),
        "bystander_create_to_succeed_s_max": max(
            (s["bystanders"]["create_to_succeed_s"]["max"] or 0.0 for s in scenarios.values() if "skipped" not in s),
            default=None,
        ),
        "longest_sync_sampled_s": max(
            (
                v
                for s in scenarios.values()
                if "skipped" not in s
                for v in s["controller"]["longest_running_sync_sampled_s"].values()
            ),
            default=None,
        ),
    }
    result["pass"] = verdicts(scenarios)
    result["all_pass"] = all(all(v.values()) for v in result["pass"].values())
    result["load_average_at_end"] = load_average()
    emit(result)
    return 0 if result["all_pass"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
