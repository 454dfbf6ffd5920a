"""CronJobFlows on the real control plane, with `* * * * *` (docs/cron.md).

The wall-clock waits are shared: one module fixture creates every scenario's CronJobFlow at once and
drives one timeline, about three and a half minutes in all:

    M1   every scheduled CronJobFlow makes its first run (on time: within 5 s of the minute)
    M2   Forbid skips (its run is still going), Replace replaces, history deletes the oldest
    M2+  the controller stops; M3 passes with no controller; it starts again after M3
    M3+  each CronJobFlow starts its missed M3 run once, late

Each test then checks one behaviour on what the timeline left (waiting only if its part is not
there yet). A suspended CronJobFlow runs nothing all along; a manual run is made from it at the start.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import RunningManager, wait_for
from jobflows import SIM, template

from informers.errors import NotFoundError
from jobflow_controller.apis import jobflow as jf
from jobflow_controller.apis.cronjobflow import (
    MANUAL_TRIGGER_ANNOTATION,
    SCHEDULED_TIMESTAMP_ANNOTATION,
    time_hash_in_minutes,
)
from jobflow_controller.apis.meta import parse_time
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.errors import InvalidError
from jobflow_controller.local.kubectl import kubectl, kubectl_path, plugin_env
from jobflow_controller.local.resources import NAMESPACES
from jobflow_controller.local.simulator import JobSimulator

FAST = "Pending:0.5s,Running:1s,Completed"
LONG = "Pending:0.5s,Running:600s,Completed"
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    # name: (template script, spec fields)
    "ontime": (FAST, {}),
    "forbid": (LONG, {"concurrencyPolicy": "Forbid"}),
    "replace": (LONG, {"concurrencyPolicy": "Replace"}),
    "history": (FAST, {"successfulJobFlowsHistoryLimit": 1}),
    "paused": (FAST, {"suspend": True}),
}
MANUAL = "paused-by-hand"


def cron_job_flow(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "CronJobFlow",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "* * * * *",
            "jobFlowTemplate": {
                "metadata": {"labels": {"scenario": name}},
                "spec": {"jobRetainPolicy": "retain", "flows": [{"name": f"{name}-step"}]},
            },
            **spec,
        },
    }


def minute_after(t: datetime.datetime) -> datetime.datetime:
    return (t + datetime.timedelta(minutes=1)).replace(second=0, microsecond=0)


def sleep_until(t: datetime.datetime) -> None:
    time.sleep(max(0.0, (t - datetime.datetime.now(datetime.UTC)).total_seconds()))


@dataclass
class Timeline:
    namespace: str
    kubeconfig: Path
    m1: datetime.datetime
    m2: datetime.datetime
    m3: datetime.datetime
    restarted_at: datetime.datetime
    #: `kubectl get cjf` and `kubectl describe cjf ontime` after its two runs (before the restart).
    get_after_two: str = ""
    describe_after_two: str = ""
    manual_output: str = ""
    runs_before_restart: dict[str, list[str]] = field(default_factory=dict)


def runs_of(clientset: Clientset, namespace: str, owner: str) -> list[dict[str, Any]]:
    flows = clientset.job_flows(namespace).list()
    return sorted(
        (f for f in flows if any(r.get("name") == owner for r in f["metadata"].get("ownerReferences") or [])),
        key=lambda f: f["metadata"]["name"],
    )


def run_names(clientset: Clientset, namespace: str, owner: str) -> list[str]:
    return [f["metadata"]["name"] for f in runs_of(clientset, namespace, owner)]


def cron_events(clientset: Clientset, namespace: str, name: str) -> list[tuple[str, str, str]]:
    return [
        (e["type"], e["reason"], e["message"])
        for e in clientset.events(namespace).list()
        if e["involvedObject"].get("kind") == "CronJobFlow" and e["involvedObject"].get("name") == name
    ]


def cron_informer_synced(running: RunningManager) -> bool:
    """The manager's CronJobFlow controller has its informer (the CRD is served) and it has synced."""
    for controller in running.manager.controllers:
        informer = getattr(controller, "cron_job_flow_informer", None)
        if informer is not None:
            return bool(informer.has_synced())
    return False


def name_at(owner: str, t: datetime.datetime) -> str:
    return f"{owner}-{time_hash_in_minutes(t)}"


@pytest.fixture(scope="module")
def timeline(kubeconfig: Path, clientset: Clientset, simulator: JobSimulator) -> Iterator[Timeline]:
    namespace = f"e2e-cron-{int(time.time()) % 100000}"
    clientset.resource(NAMESPACES).create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    manager = RunningManager(str(kubeconfig), worker_threads=2)
    try:
        # The CronJobFlows are created once the controller watches them, at least 12 s before a minute:
        # that minute is M1, the first time each can run (a run is due only after its creation).
        wait_for(lambda: cron_informer_synced(manager), 60, what="the CronJobFlow informer to sync")
        now = datetime.datetime.now(datetime.UTC)
        if now.second > 45:
            sleep_until(minute_after(now) + datetime.timedelta(seconds=1))
        for name, (script, spec) in SCENARIOS.items():
            clientset.job_templates(namespace).create(template(f"{name}-step", namespace, script))
            clientset.cron_job_flows(namespace).create(cron_job_flow(name, namespace, spec))
        m1 = minute_after(datetime.datetime.now(datetime.UTC))
        m2, m3 = m1 + datetime.timedelta(minutes=1), m1 + datetime.timedelta(minutes=2)
        manual = kubectl_create_from(kubeconfig, namespace)
        # Two runs of `ontime`, then the look of it, then the stop just after M2's runs.
        sleep_until(m2)
        wait_for(lambda: name_at("ontime", m2) in run_names(clientset, namespace, "ontime"), 30, what="ontime's M2 run")
        wait_for(lambda: name_at("replace", m2) in run_names(clientset, namespace, "replace"), 20, what="replace's M2")
        get_after_two = kubectl(kubeconfig, "get", "cjf", "-n", namespace)
        describe_after_two = kubectl(kubeconfig, "describe", "cjf", "ontime", "-n", namespace)
        before = {name: run_names(clientset, namespace, name) for name in SCENARIOS}
        manager.stop()
        sleep_until(m3 + datetime.timedelta(seconds=5))
        restarted_at = datetime.datetime.now(datetime.UTC)
        manager = RunningManager(str(kubeconfig), worker_threads=2)
        wait_for(lambda: name_at("ontime", m3) in run_names(clientset, namespace, "ontime"), 30, what="the M3 run")
        yield Timeline(
            namespace, kubeconfig, m1, m2, m3, restarted_at, get_after_two, describe_after_two, manual, before
        )
    finally:
        manager.stop()
        print(f"\n$ kubectl get cjf (after two runs)\n{locals().get('get_after_two', '')}")
        print(f"$ kubectl describe cjf ontime\n{locals().get('describe_after_two', '')}")
        with contextlib.suppress(NotFoundError):
            clientset.resource(NAMESPACES).delete(namespace)


def kubectl_create_from(kubeconfig: Path, namespace: str) -> str:
    result = subprocess.run(
        [kubectl_path(), "jobflow", "create", "--from=cronjobflow/paused", MANUAL, "-n", namespace],
        capture_output=True,
        text=True,
        timeout=60,
        env=plugin_env(kubeconfig),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_run_is_created_within_5_s_of_its_minute(timeline: Timeline, clientset: Clientset) -> None:
    for t in (timeline.m1, timeline.m2):
        run = clientset.job_flows(timeline.namespace).get(name_at("ontime", t))
        lag = (parse_time(run["metadata"]["creationTimestamp"]) - t).total_seconds()
        assert 0 <= lag <= 5, f"{run['metadata']['name']} created {lag}s after {t}"
        print(f"{run['metadata']['name']}: created {lag:.0f} s after {t:%H:%M:%S} (creationTimestamp, whole seconds)")
        assert run["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == t.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert run["metadata"]["labels"] == {"scenario": "ontime"}
        (owner,) = run["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJobFlow", "ontime", True)


def test_runs_succeed_and_the_status_follows(timeline: Timeline, clientset: Clientset) -> None:
    wait_for(
        lambda: jf.phase(clientset.job_flows(timeline.namespace).get(name_at("ontime", timeline.m3))) == "Succeed", 30
    )
    status = wait_for(
        lambda: (
            (s := clientset.cron_job_flows(timeline.namespace).get("ontime").get("status", {}))
            and not s.get("active")
            and s.get("lastSuccessfulTime")
            and s
        ),
        30,
        what="ontime's status to settle",
    )
    assert status["lastScheduleTime"] == timeline.m3.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_time(status["lastSuccessfulTime"]) > timeline.m3
    reasons = [reason for _t, reason, _m in cron_events(clientset, timeline.namespace, "ontime")]
    assert {"SuccessfulCreate", "SawCompletedJob"} <= set(reasons)
    assert ("Normal", "SuccessfulCreate", f"Created jobflow {name_at('ontime', timeline.m1)}") in cron_events(
        clientset, timeline.namespace, "ontime"
    )


def test_forbid_skips_while_its_run_is_active(timeline: Timeline, clientset: Clientset) -> None:
    assert run_names(clientset, timeline.namespace, "forbid") == [name_at("forbid", timeline.m1)]
    events = cron_events(clientset, timeline.namespace, "forbid")
    assert (
        "Normal",
        "JobAlreadyActive",
        "Not starting jobflow because prior execution is running and concurrency policy is Forbid",
    ) in events


def test_replace_deletes_the_active_run_and_starts_the_new_one(timeline: Timeline, clientset: Clientset) -> None:
    first, second = name_at("replace", timeline.m1), name_at("replace", timeline.m2)
    assert timeline.runs_before_restart["replace"][-1] == second
    events = cron_events(clientset, timeline.namespace, "replace")
    assert ("Normal", "SuccessfulDelete", f"Deleted jobflow {first}") in events

    def first_is_going() -> bool:
        try:
            return bool(clientset.job_flows(timeline.namespace).get(first)["metadata"].get("deletionTimestamp"))
        except NotFoundError:
            return True

    assert first_is_going()
    active = clientset.cron_job_flows(timeline.namespace).get("replace")["status"]["active"]
    assert [a["name"] for a in active] == [name_at("replace", timeline.m3)]


def test_history_limit_deletes_the_oldest_with_its_jobs(timeline: Timeline, clientset: Clientset) -> None:
    oldest = name_at("history", timeline.m1)
    wait_for(lambda: oldest not in run_names(clientset, timeline.namespace, "history"), 30, what="the oldest run gone")
    assert ("Normal", "SuccessfulDelete", f"Deleted jobflow {oldest}") in cron_events(
        clientset, timeline.namespace, "history"
    )
    # Its Job goes with it (the garbage collector follows the owner reference).
    wait_for(
        lambda: (
            f"{oldest}-history-step" not in [j["metadata"]["name"] for j in clientset.jobs(timeline.namespace).list()]
        ),
        60,
        what="the oldest run's Job to be collected",
    )
    wait_for(lambda: len(run_names(clientset, timeline.namespace, "history")) == 1, 30, what="one run kept")


def test_suspend_runs_nothing(timeline: Timeline, clientset: Clientset) -> None:
    assert run_names(clientset, timeline.namespace, "paused") == [MANUAL]
    assert "lastScheduleTime" not in clientset.cron_job_flows(timeline.namespace).get("paused").get("status", {})


def test_manual_trigger_creates_a_jobflow_from_the_template(timeline: Timeline, clientset: Clientset) -> None:
    assert timeline.manual_output == f"jobflow.flow.volcano.sh/{MANUAL} created\n"
    manual = clientset.job_flows(timeline.namespace).get(MANUAL)
    assert manual["metadata"]["annotations"] == {MANUAL_TRIGGER_ANNOTATION: "true"}
    assert manual["metadata"]["labels"] == {"scenario": "paused"}
    (owner,) = manual["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJobFlow", "paused", True)
    wait_for(lambda: jf.phase(clientset.job_flows(timeline.namespace).get(MANUAL)) == "Succeed", 30)


def test_a_restart_across_a_scheduled_time_starts_the_missed_run_once(timeline: Timeline, clientset: Clientset) -> None:
    m3_run = clientset.job_flows(timeline.namespace).get(name_at("ontime", timeline.m3))
    assert parse_time(m3_run["metadata"]["creationTimestamp"]) >= timeline.restarted_at.replace(microsecond=0)
    time.sleep(2)  # any duplicate would show by now
    assert run_names(clientset, timeline.namespace, "ontime") == [
        name_at("ontime", t) for t in (timeline.m1, timeline.m2, timeline.m3)
    ]
    creates = [
        m for _t, reason, m in cron_events(clientset, timeline.namespace, "ontime") if reason == "SuccessfulCreate"
    ]
    assert creates.count(f"Created jobflow {name_at('ontime', timeline.m3)}") == 1


def test_kubectl_get_cjf_prints_cronjobs_columns(timeline: Timeline) -> None:
    header, *rows = timeline.get_after_two.splitlines()
    assert header.split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    by_name = {row.split()[0]: row for row in rows}
    assert set(by_name) == set(SCENARIOS)
    assert "true" in by_name["paused"].split()
    assert "* * * * *" in by_name["ontime"]
    assert "Events:" in timeline.describe_after_two and "SuccessfulCreate" in timeline.describe_after_two
    assert SIM  # the templates' phases came from the simulator annotation


# --- the API server's own checks: the CRD's schema and the CEL Component (no webhook here) -----------


def _refusal(clientset: Clientset, namespace: str, doc: dict[str, Any]) -> str:
    try:
        clientset.cron_job_flows(namespace).create(doc)
    except InvalidError as err:
        return err.message
    raise AssertionError(f"{doc['metadata']['name']} was accepted")


@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        (
            "tz",
            {"schedule": "TZ=UTC 0 2 * * *"},
            "cannot use TZ or CRON_TZ in schedule, use the timeZone field instead",
        ),
        ("fields", {"schedule": "0 2 * *"}, "schedule must have five fields"),
        ("zone", {"timeZone": "Local"}, "timeZone must be an IANA time zone name such as Europe/Berlin"),
        ("limit", {"failedJobFlowsHistoryLimit": -1}, "should be greater than or equal to 0"),
        ("policy", {"concurrencyPolicy": "Sometimes"}, 'supported values: "Allow", "Forbid", "Replace"'),
        ("n" * 53, {}, "metadata.name must be no more than 52 characters"),
        ("n" * 45, {}, "the Job of each flow of a run, <name>-<minutes since the epoch>-<flow>, must be at most 63"),
        (
            "dup",
            {"jobFlowTemplate": {"spec": {"flows": [{"name": "a"}, {"name": "a"}]}}},
            "jobflow Flow names must be unique",
        ),
    ],
)
def test_the_api_server_refuses_what_the_crd_and_its_rules_catch(
    clientset: Clientset, namespace: str, name: str, spec: dict[str, Any], message: str
) -> None:
    doc = cron_job_flow(name, namespace, {})
    doc["spec"]["jobFlowTemplate"]["spec"]["flows"] = [{"name": "transform"}]
    doc["spec"].update(spec)
    assert message in _refusal(clientset, namespace, doc)


def test_the_api_server_fills_cronjobs_defaults(clientset: Clientset, namespace: str) -> None:
    doc = cron_job_flow("defaults", namespace, {})
    created = clientset.cron_job_flows(namespace).create(doc)
    spec = created["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobFlowsHistoryLimit"], spec["failedJobFlowsHistoryLimit"]) == (3, 1)


# --- kubectl jobflow ui: the CronJobFlows section ------------------------------------------------------


def test_the_ui_lists_each_cronjobflow_with_its_next_run_and_links_to_its_runs(timeline: Timeline) -> None:
    from browser import headless_chromium, wait_js

    from jobflow_controller.kube.config import build_config
    from kubectl_jobflow.ui.command import open_session

    session = open_session(build_config(str(timeline.kubeconfig)), timeline.namespace)
    try:
        # Scripts may authenticate with the token in a header (kubectl_jobflow/ui/auth.py).
        request = urllib.request.Request(
            session.server.url.split("?")[0] + "api/cronjobflows", headers={"X-JobFlow-Token": session.server.token}
        )
        with urllib.request.urlopen(request) as r:
            doc = json.loads(r.read())
        rows = {row["name"]: row for row in doc["rows"]}
        assert set(rows) == set(SCENARIOS) and doc["note"] == ""
        assert rows["paused"]["next"] is None and rows["paused"]["nextProblem"] == "suspended"
        assert parse_time(rows["ontime"]["next"]) > timeline.m3
        assert [r["name"] for r in rows["ontime"]["runs"]] == [
            name_at("ontime", t) for t in (timeline.m3, timeline.m2, timeline.m1)
        ]
        with headless_chromium() as browser:
            browser.get(session.server.url + "#/")
            links = wait_js(
                browser,
                "var s = document.getElementById('cron'); return s && s.querySelectorAll('a.cron-run').length"
                " && Array.from(s.querySelectorAll('tr[data-key$=\"/ontime\"] a.cron-run'))"
                ".map(a => a.getAttribute('href'))",
                "the CronJobFlows section with ontime's runs",
            )
            assert links[0] == f"#/flow/{timeline.namespace}/{name_at('ontime', timeline.m3)}"
            next_cell = browser.execute_script(
                "return document.querySelector('#cron tr[data-key$=\"/ontime\"] .cron-next').textContent"
            )
            assert next_cell == rows["ontime"]["next"] or parse_time(next_cell) > timeline.m3
    finally:
        session.close()
