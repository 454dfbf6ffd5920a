"""`kubectl jobflow ui` used as a person would: headless Chromium on the real control plane, with the
controller and the simulator running the pipelines. Screenshots go to .test-artifacts/ui/."""

from __future__ import annotations

import http.cookiejar
import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import headless_chromium, node_phases, phases_become, screenshot, wait_js
from e2e_helpers import RunningManager, wait_for
from jobflows import create_all, examples, failing_template, flow, phase_of, template

from jobflow_controller.apis.lifecycle_fields import RETRY_REQUEST_ANNOTATION
from jobflow_controller.kube.clientset import Clientset
from jobflow_controller.kube.config import build_config
from jobflow_controller.kube.resources import Resource
from jobflow_controller.local.controlplane import ControlPlane
from jobflow_controller.local.kubectl import kubectl_path, plugin_env
from jobflow_controller.local.simulator import JobSimulator
from kubectl_jobflow.ui.command import Session, open_session
from kubectl_jobflow.ui.launch import RedirectFile

pytestmark = pytest.mark.e2e

SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
#: Long enough Running for the page to show it before it completes.
SLOW = "Pending:0.3s,Running:4s,Completed"
FAST = "Pending:0.2s,Running:0.3s,Completed"


@pytest.fixture(scope="module")
def controller(kubeconfig: Path, simulator: JobSimulator) -> Iterator[RunningManager]:
    running = RunningManager(str(kubeconfig), worker_threads=2)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def ui(kubeconfig: Path) -> Iterator[Session]:
    """The UI over every namespace, as the control plane's admin (the test kubeconfig)."""
    session = open_session(build_config(str(kubeconfig)), None)
    yield session
    session.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with headless_chromium() as driver:
        yield driver


def test_the_command_prints_its_url_serves_it_and_stops_on_ctrl_c(kubeconfig: Path) -> None:
    """`kubectl jobflow ui` run through kubectl, as a user runs it: the printed URL's token buys
    the session's cookie, which alone opens the rest."""
    process = subprocess.Popen(
        [kubectl_path(), "jobflow", "ui", "-A", "--no-browser", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=plugin_env(kubeconfig),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/[\w-]{22}/\?token=[\w-]+)", line)
        assert line.startswith("JobFlows of all namespaces at ") and match, line
        url = match.group(1)
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(url, timeout=10) as response:
            assert response.status == 200 and b"JobFlows" in response.read()
        (cookie,) = list(jar)
        assert cookie.value not in url and cookie.has_nonstandard_attr("HttpOnly")
        home = url.split("?")[0]
        with opener.open(home + "api/list", timeout=10) as response:
            assert response.status == 200 and "rows" in json.loads(response.read())
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(home, timeout=10)
        assert refused.value.code == 403
        # the cookie's Path is the session's secret prefix: outside it the jar sends nothing, and
        # the server refuses whatever comes (issue 42: another server on 127.0.0.1 never sees it)
        outside = home.split("/", 3)
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(f"{outside[0]}//{outside[2]}/api/list", timeout=10)
        assert refused.value.code == 404
        # kubectl execs the plugin, so Ctrl-C reaches it directly: it stops at once and cleanly
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 0
        assert time.monotonic() - started < 5
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_browser_is_opened_on_a_private_redirect_file_never_on_the_token(kubeconfig: Path, tmp_path: Path) -> None:
    """Issue 33: the token is not in the browser's command line (/proc/<pid>/cmdline); the 0600 file
    it is given carries it, and is gone once the UI stops."""
    seen = tmp_path / "browser-argv.txt"
    fake_browser = tmp_path / "fake-browser"
    fake_browser.write_text(
        "#!/bin/sh\n"
        f'f="${{1#file://}}"; stat -c %a "$f" > {seen}.mode; cp "$f" {seen}.html; '
        f"printf '%s\\n' \"$@\" > {seen}.tmp && mv {seen}.tmp {seen}\n"
    )
    fake_browser.chmod(0o755)
    process = subprocess.Popen(
        [kubectl_path(), "jobflow", "ui", "-A", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**plugin_env(kubeconfig), "BROWSER": str(fake_browser)},
    )
    try:
        assert process.stdout is not None
        token = re.search(r"token=([\w-]+)", process.stdout.readline())
        assert token
        wait_for(seen.exists, timeout=20, what="the browser to be started")
        (argument,) = seen.read_text().split()
        assert argument.startswith("file://") and token.group(1) not in argument
        assert Path(f"{seen}.mode").read_text().strip() == "600"
        assert f"?token={token.group(1)}" in Path(f"{seen}.html").read_text()
        assert Path(argument.removeprefix("file://")).exists()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 0
        assert not Path(argument.removeprefix("file://")).exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_redirect_file_leads_the_browser_to_a_token_free_address_that_works(ui: Session, browser: Any) -> None:
    """The file:// page sends Chromium on to the entry URL; the SameSite=Strict cookie set there is
    sent with every later request, and the token leaves the address bar."""
    redirect = RedirectFile(ui.server.url + "#/")
    try:
        browser.get(redirect.uri)
        wait_js(browser, "return location.protocol === 'http:' && document.getElementById('rows') !== null", "the list")
        wait_js(browser, "return document.getElementById('conn').textContent === 'live'", "the live stream")
        assert browser.current_url == f"{ui.server.base_url}#/"
        assert ui.server.token not in browser.execute_script("return location.href + history.length")
        assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
    finally:
        redirect.remove()


def test_the_list_shows_the_demo_pipelines_live(
    ui: Session, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    browser.get(ui.server.url + "#/")
    wait_js(browser, "return document.getElementById('rows') !== null", "the list page")
    create_all(clientset, examples(namespace, FAST))
    for name in ("ml-pipeline", "parallel-pipeline"):
        wait_for(lambda n=name: phase_of(clientset, namespace, n) == "Succeed", timeout=90, what=f"{name} to Succeed")
    rows = wait_js(
        browser,
        "var rows = {}; document.querySelectorAll('#rows tr').forEach(function (tr) {"
        " rows[tr.getAttribute('data-key')] = [tr.getAttribute('data-phase'), tr.querySelector('.done').textContent];"
        f" }}); var k1 = '{namespace}/ml-pipeline', k2 = '{namespace}/parallel-pipeline';"
        " return rows[k1] && rows[k2] && rows[k1][0] === 'Succeed' && rows[k2][0] === 'Succeed' ? rows : null;",
        "both pipelines Succeed in the list, without a reload",
    )
    flows_of = {
        n: len(clientset.job_flows(namespace).get(n)["spec"]["flows"]) for n in ("ml-pipeline", "parallel-pipeline")
    }
    for name, total in flows_of.items():
        assert rows[f"{namespace}/{name}"][1] == f"{total}/{total}"
    # the namespace filter keeps this namespace's rows only
    browser.execute_script(
        "var s = document.getElementById('f-ns'); s.value = arguments[0]; s.dispatchEvent(new Event('input'));",
        namespace,
    )
    keys = browser.execute_script(
        "return Array.from(document.querySelectorAll('#rows tr')).map(function (tr) { return tr.dataset.key; });"
    )
    assert sorted(keys) == [f"{namespace}/ml-pipeline", f"{namespace}/parallel-pipeline"]
    screenshot(browser, "list.png")


def test_a_jobflow_page_shows_every_flow_and_follows_a_job_completing(
    ui: Session, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("slow", namespace, SLOW), template("quick", namespace, FAST)])
    flows = [
        {"name": "slow"},
        {"name": "quick", "dependsOn": {"targets": ["slow"]}},
    ]
    clientset.job_flows(namespace).create(flow("pipe", namespace, flows))
    browser.get(ui.server.url + f"#/flow/{namespace}/pipe")
    phases_become(browser, {"slow": "Running", "quick": "Waiting"})
    assert sorted(node_phases(browser)) == ["quick", "slow"]
    draws = browser.execute_script("return window.jobflowUI.draws")
    job = wait_for(lambda: clientset.jobs(namespace).get("pipe-slow")["status"]["state"]["phase"] == "Running")
    assert job
    screenshot(browser, "dag-running.png")
    # the Job completes: the page follows without a reload (no new page load, no redraw of the shape)
    phases_become(browser, {"slow": "Completed", "quick": "Completed"})
    assert clientset.jobs(namespace).get("pipe-slow")["status"]["state"]["phase"] == "Completed"
    assert browser.execute_script("return window.jobflowUI.draws") == draws
    wait_js(browser, "return document.querySelector('#summary .badge').textContent === 'Succeed'", "Succeed")
    # a node shows its Job's record and events; the JobFlow's events are below
    clientset.events(namespace).create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"pipe-slow.{uuid.uuid4().hex[:8]}"},
            # as Volcano's job controller records them (the UI caches Volcano Jobs' events only)
            "involvedObject": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "pipe-slow",
                "namespace": namespace,
            },
            "reason": "Checked",
            "message": "looked at by the UI test",
            "type": "Normal",
        }
    )
    browser.find_element("css selector", '#dag g.node[data-flow="slow"]').click()
    side = wait_js(
        browser,
        "var t = document.getElementById('side').textContent;"
        " return t.indexOf('looked at by the UI test') >= 0 && t.indexOf('Running histories') >= 0 ? t : null;",
        "the flow's Job record and event in the side panel",
    )
    assert "pipe-slow" in side and "restart count" in side
    wait_js(browser, "return document.getElementById('events').textContent.indexOf('Created') >= 0", "Created")
    screenshot(browser, "dag.png")


def test_a_page_opened_before_its_jobflow_exists_draws_it_once_it_is_made(
    ui: Session, browser: Any, clientset: Clientset, namespace: str
) -> None:
    """A link followed a moment before the JobFlow reaches the UI's cache (or a JobFlow deleted and
    made again) first says it does not exist, then draws it when it comes, with no reload."""
    browser.get(ui.server.url + f"#/flow/{namespace}/late")
    wait_js(browser, "return document.getElementById('main').textContent.indexOf('does not exist') >= 0", "gone")
    draws = browser.execute_script("return window.jobflowUI.draws")
    clientset.job_flows(namespace).create(flow("late", namespace, [{"name": "a"}, {"name": "b"}]))
    wait_js(browser, f"return window.jobflowUI.draws > {draws}", "the late JobFlow drawn")
    phases_become(browser, {"a": "Waiting", "b": "Waiting"})


def test_skipped_flows_rules_and_finally_flows_are_drawn_as_the_controller_decides(
    ui: Session, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    quick = [template(name, namespace, FAST) for name in ("quick", "alert", "notify")]
    create_all(clientset, [failing_template("breaks", namespace), *quick])
    flows = [
        {"name": "breaks"},
        {"name": "quick", "dependsOn": {"targets": ["breaks"]}},
        {"name": "alert", "dependsOn": {"targets": ["breaks"], "rule": "AnyFailed"}},
    ]
    doc = flow("rules", namespace, flows)
    doc["spec"]["finally"] = [{"name": "notify"}]
    clientset.job_flows(namespace).create(doc)
    browser.get(ui.server.url + f"#/flow/{namespace}/rules")
    phases_become(browser, {"breaks": "Failed", "quick": "Skipped", "alert": "Completed", "notify": "Completed"})
    wait_for(lambda: phase_of(clientset, namespace, "rules") in ("Succeed", "Failed"), what="the JobFlow to finish")
    status = clientset.job_flows(namespace).get("rules")["status"]
    assert status["skippedJobs"] == ["rules-quick"]
    finals = browser.execute_script(
        "return Array.from(document.querySelectorAll('#dag g.node.final')).map(function (g) {"
        " return g.dataset.flow; });"
    )
    assert finals == ["notify"]
    labels = browser.execute_script(
        "return Array.from(document.querySelectorAll('#dag .edge-label')).map(function (t) { return t.textContent; });"
    )
    assert labels == ["AnyFailed"]
    screenshot(browser, "dag-rules.png")


def test_retry_is_sent_as_the_plugins_annotation_after_a_confirmation(
    ui: Session, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [failing_template("breaks", namespace)])
    clientset.job_flows(namespace).create(flow("broken", namespace, [{"name": "breaks"}]))
    wait_for(lambda: phase_of(clientset, namespace, "broken") == "Failed", timeout=60, what="the JobFlow to fail")
    browser.get(ui.server.url + f"#/flow/{namespace}/broken")
    phases_become(browser, {"breaks": "Failed"})
    button = wait_js(
        browser,
        "var b = document.querySelector('#toolbar button[data-action=retry]'); return b && !b.disabled ? b : null;",
        "an enabled Retry button",
    )
    button.click()
    wait_js(browser, "return document.getElementById('confirm').open", "the confirmation")
    screenshot(browser, "confirm-retry.png")
    browser.find_element("id", "confirm-ok").click()
    annotation = wait_for(
        lambda: (clientset.job_flows(namespace).get("broken")["metadata"].get("annotations") or {}).get(
            RETRY_REQUEST_ANNOTATION
        ),
        what="the retry request annotation",
    )
    request = json.loads(annotation)
    assert request["id"] and "flows" not in request  # every Failed and Skipped flow


def test_suspend_sets_spec_suspend(
    ui: Session, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("long", namespace, "Pending:0.2s,Running:30s,Completed")])
    clientset.job_flows(namespace).create(flow("hold", namespace, [{"name": "long"}]))
    browser.get(ui.server.url + f"#/flow/{namespace}/hold")
    button = wait_js(
        browser,
        "var b = document.querySelector('#toolbar button[data-action=suspend]'); return b && !b.disabled ? b : null;",
        "an enabled Suspend button",
    )
    button.click()
    wait_js(browser, "return document.getElementById('confirm').open", "the confirmation")
    browser.find_element("id", "confirm-ok").click()
    wait_for(lambda: clientset.job_flows(namespace).get("hold")["spec"].get("suspend") is True, what="spec.suspend")
    wait_js(
        browser,
        "var b = document.querySelector('#toolbar button[data-action=resume]'); return b && !b.disabled;",
        "Resume enabled once suspended",
    )


def reader_kubeconfig(control_plane: ControlPlane, clientset: Clientset, namespace: str) -> Path:
    """A ServiceAccount that may get, list and watch JobFlows, Jobs and events, and nothing else."""
    clientset.resource(SERVICE_ACCOUNTS, namespace).create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "viewer"}}
    )
    read = ["get", "list", "watch"]
    rules = [
        {"apiGroups": ["flow.volcano.sh"], "resources": ["jobflows"], "verbs": read},
        {"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": read},
        {"apiGroups": [""], "resources": ["events"], "verbs": read},
    ]
    clientset.resource(ROLES, namespace).create(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "viewer"}, "rules": rules}
    )
    clientset.resource(ROLE_BINDINGS, namespace).create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "viewer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}],
        }
    )
    token = clientset.rest.request(
        "POST",
        SERVICE_ACCOUNTS.path(namespace, "viewer", "token"),
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}},
    )["status"]["token"]
    path = Path(control_plane.root) / f"viewer-{uuid.uuid4().hex[:6]}.kubeconfig"
    cluster = {"server": control_plane.server, "certificate-authority": str(control_plane.ca_path)}
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "viewer", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "viewer", "namespace": namespace}}],
                "current-context": "c",
            }
        )
    )
    return path


def test_a_user_who_may_not_patch_sees_every_action_disabled_with_the_reason(
    control_plane: ControlPlane, browser: Any, controller: RunningManager, clientset: Clientset, namespace: str
) -> None:
    create_all(clientset, [template("long", namespace, "Pending:0.2s,Running:30s,Completed")])
    clientset.job_flows(namespace).create(flow("watched", namespace, [{"name": "long"}]))
    session = open_session(build_config(str(reader_kubeconfig(control_plane, clientset, namespace))), namespace)
    try:
        browser.get(session.server.url + f"#/flow/{namespace}/watched")
        phases_become(browser, {"long": "Running"})
        buttons = wait_js(
            browser,
            "var bs = Array.from(document.querySelectorAll('#toolbar button.action'));"
            " return bs.length === 5 ? bs.map(function (b) { return [b.dataset.action, b.disabled, b.title]; }) : 0;",
            "the action buttons",
        )
        for action, disabled, title in buttons:
            assert disabled, action
            assert "RBAC does not allow patch" in title, (action, title)
        assert "RBAC" in browser.find_element("id", "rbac-reason").text
        screenshot(browser, "forbidden.png")
        # and the server refuses the action itself, whatever a page sends
        status = browser.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            " fetch('api/action', {method: 'POST', headers: {'Content-Type': 'application/json'},"
            f" body: JSON.stringify({{key: '{namespace}/watched', action: 'stop'}})}})"
            " .then(function (r) { done(r.status); });"
        )
        assert status == 409
        assert not clientset.job_flows(namespace).get("watched")["spec"].get("shutdown")
    finally:
        session.close()
