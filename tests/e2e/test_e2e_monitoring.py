"""manifests/monitoring against a real, lean `jobflow-controller` process (issue 12, parts 5 and 6).

One process serves the whole module: the real console script, run with `cryptography` and
`kubernetes_validate` made unimportable (tests/import_blocker.py), leader election on (the default
Lease name, which the rule and the dashboard pin, in a namespace of this module), metrics on a free
loopback port. It is given the work that makes every series of the dashboard and the rule exist:
a JobFlow that Succeeds, one whose flow fails, is retried once (`retry: {maxRetries: 1, backoff:
"0s"}`) and fails again so the JobFlow goes Failed, and a write to its Lease that sends its next
renewal down the slow path. Then every selector of every alert, panel and variable must select a
series of the scrape, carrying the labels the expression groups on.

No series needs a dropped request: the drop alert reads `workqueue_retries_total`, which each
queue exports from its creation, so `--max-requeue-num` is left at its default.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import import_blocker
import pytest
from e2e_helpers import ControllerProcess, wait_for
from jobflows import FAILS, create_all, failing_template, flow, phase_of, template
from monitoring_expressions import EXPRESSIONS, TARGET_LABELS, samples, selectors, selects

from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import ConflictError, NotFoundError
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import JobSimulator
from jobflow_controller.manager.options import Options

LEASE = Options().leader_elect_resource_name
#: A `/metrics` text as `monitoring_expressions.samples` reads it: (name, labels, value) per sample.
Scrape = list[tuple[str, dict[str, str], float]]
#: The one import of a blocked module the process may try, and cope with: the `kubernetes` client's
#: `kubernetes/dynamic/client.py` (imported by `import kubernetes`) probes for kubernetes_validate
#: in a `try: ... except ImportError` and does without it. The controller never uses that module.
TOLERATED = {("kubernetes_validate", "kubernetes/dynamic/client.py")}
#: A `=~` matcher that lists literal values, each of which must select a series.
ALTERNATIVES = re.compile(r"[\w-]+(\|[\w-]+)+")
REFUSAL = re.compile(re.escape(import_blocker.REFUSED) + r"([\w.]+) \(imported from (.*)\)$")


@dataclass
class Monitored:
    """The lean controller process after the work, and what its `/metrics` said then."""

    process: ControllerProcess
    namespace: str
    scrape: Scrape

    def value(self, metric: str, /, **labels: str) -> float | None:
        return _value(self.scrape, metric, **labels)


def _value(scrape: Scrape, metric: str, /, **labels: str) -> float | None:
    """The value of the sample `metric{labels}` of a scrape, None when there is none."""
    return next((v for n, found, v in scrape if n == metric and found == labels), None)


def _touch_lease(clientset: Clientset, namespace: str) -> bool:
    """Write the Lease behind the leader's back: its next optimistic renewal conflicts."""
    lease = clientset.leases(namespace).get(LEASE)
    lease["metadata"].setdefault("annotations", {})["e2e.jobflow.volcano.sh/touched"] = str(time.time())
    try:
        clientset.leases(namespace).update(lease)
    except ConflictError:  # renewed in between: read it again
        return False
    return True


def _drive(clientset: Clientset, process: ControllerProcess, namespace: str) -> Scrape:
    """Lead, run one JobFlow to Succeed and one through a retry to Failed, renew on the slow path, sync
    one CronJobFlow; return the scrape that shows all of it."""
    wait_for(process.is_leader, 30, what="the lean controller to lead")
    create_all(clientset, [template("ok", namespace), failing_template("bad", namespace, then=FAILS)])
    create_all(
        clientset,
        [
            flow("succeeds", namespace, [{"name": "ok"}]),
            flow("fails", namespace, [{"name": "bad", "retry": {"maxRetries": 1, "backoff": "0s"}}]),
        ],
    )
    # A CronJobFlow (suspended: no run) makes the CronJobFlow counters of the namespace, at 0.
    clientset.cron_job_flows(namespace).create(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "CronJobFlow",
            "metadata": {"name": "nightly", "namespace": namespace},
            "spec": {
                "schedule": "0 2 * * *",
                "suspend": True,
                "jobFlowTemplate": {"spec": {"flows": [{"name": "ok"}]}},
            },
        }
    )
    wait_for(lambda: phase_of(clientset, namespace, "succeeds") == "Succeed", 60, what="succeeds Succeed")
    wait_for(lambda: phase_of(clientset, namespace, "fails") == "Failed", 60, what="fails Failed")
    wait_for(lambda: _touch_lease(clientset, namespace), 10, what="the Lease to be written")
    return wait_for(
        lambda: (
            (s := samples(process.metrics()))
            and _value(s, "leader_election_slowpath_total", name=LEASE)
            and _value(s, "volcano_jobflow_failed_phase_count", jobflow_namespace=namespace)
            and _value(s, "volcano_jobflow_succeed_phase_count", jobflow_namespace=namespace)
            and _value(s, "jobflow_controller_cronjobflow_missed_total", namespace=namespace) is not None
            and s
        ),
        15,
        what="the slow-path renewal, both phase counters and the CronJobFlow counters in /metrics",
    )


@pytest.fixture(scope="module")
def monitored(
    kubeconfig: Path, clientset: Clientset, simulator: JobSimulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Monitored]:
    directory = tmp_path_factory.mktemp("lean-controller")
    namespace = f"e2e-{uuid.uuid4().hex[:8]}"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    process = ControllerProcess(
        str(kubeconfig),
        directory,
        "--leader-elect=true",
        f"--leader-elect-resource-namespace={namespace}",
        "--leader-elect-retry-period=500ms",
        name="lean",
        env=import_blocker.environment(directory),
    )
    try:
        try:
            scrape = _drive(clientset, process, namespace)
        except AssertionError as err:
            raise AssertionError(f"{err}\nThe lean controller's log:\n{process.log()}") from err
        yield Monitored(process, namespace, scrape)
    finally:
        process.stop()
        with contextlib.suppress(NotFoundError):
            clientset.resource(NAMESPACES).delete(namespace)


@pytest.mark.parametrize(("where", "expr"), EXPRESSIONS, ids=[w for w, _ in EXPRESSIONS])
def test_every_selector_selects_a_series_of_the_running_controller_with_the_labels_it_groups_on(
    monitored: Monitored, where: str, expr: str
) -> None:
    found, grouping = selectors(expr)
    assert found, f"{where}: no selector in {expr}"
    carried: set[str] = set(TARGET_LABELS)
    for selector in found:
        hits = [labels for name, labels, _ in monitored.scrape if selects(selector, name, labels)]
        assert hits, f"{where}: {selector} selects no series of the controller's /metrics"
        for matcher in selector.matchers.matchers:  # `name=~"jobflow|jobtemplate"`: each of them
            if str(matcher.op) == "MatchOp.Re" and ALTERNATIVES.fullmatch(matcher.value):
                missing = set(matcher.value.split("|")) - {labels.get(matcher.name) for labels in hits}
                assert not missing, f"{where}: {selector} selects no series with {matcher.name} in {missing}"
        for labels in hits:
            carried |= labels.keys()
    assert grouping <= carried, f"{where}: groups on {grouping - carried}, which no selected series carries"


def test_the_work_is_counted_in_the_series_the_dashboard_and_the_rule_read(monitored: Monitored) -> None:
    """One JobFlow Succeeded, one Failed after one retry; this process leads the Lease and renewed it
    once on the slow path (or more, should a renewal of its own have raced the test's write)."""
    ns = monitored.namespace
    assert monitored.value("volcano_jobflow_succeed_phase_count", jobflow_namespace=ns) == 1
    assert monitored.value("volcano_jobflow_failed_phase_count", jobflow_namespace=ns) == 1
    assert monitored.value("volcano_jobflow_job_retry_count", jobflow_namespace=ns) == 1
    assert monitored.value("leader_election_master_status", name=LEASE) == 1
    assert (monitored.value("leader_election_slowpath_total", name=LEASE) or 0) >= 1


def _tolerated(module: str, importer: str) -> bool:
    return any(module.partition(".")[0] == m and importer.endswith(f"/{path}") for m, path in TOLERATED)


def test_the_controller_ran_with_the_block_and_only_the_kubernetes_clients_optional_probe_tried_them(
    monitored: Monitored,
) -> None:
    assert monitored.process.popen.poll() is None, "the lean controller exited"
    log = monitored.process.log()
    assert log.count(import_blocker.INSTALLED) == 1, log  # the block was in place in this very process
    lines = [line for line in log.splitlines() if line.startswith(import_blocker.REFUSED)]
    refusals = [REFUSAL.match(line) for line in lines]
    assert all(refusals), lines
    assert [line for line, m in zip(lines, refusals, strict=True) if m and not _tolerated(*m.groups())] == [], log
    assert "ImportError" not in log and "ModuleNotFoundError" not in log, log


@pytest.mark.parametrize("module", import_blocker.BLOCKED)
def test_the_same_environment_refuses_the_blocked_modules_which_are_installed(module: str, tmp_path: Path) -> None:
    """The negative control: the block is what keeps them out, not their absence."""
    env = import_blocker.environment(tmp_path)
    blocked = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True)
    assert blocked.returncode == 1
    assert f"{import_blocker.REFUSED}{module} (imported from <string>)\n" in blocked.stderr
    assert f"ModuleNotFoundError: No module named '{module}' (blocked by the test)" in blocked.stderr
    plain = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
