"""`kubectl jobflow ui` and results (docs/results.md), in headless Chromium on the real control plane: a
flow's results on its node (cut to a width) and in its panel (each Job of a matrix flow), the JobFlow's
own `status.results` on the page; a value is a tenant's text (HTML in it is shown, never run) and a
4 KiB value keeps the panel's width.

The UI set-up is test_e2e_ui.py's, imported; the reporting template test_e2e_results.py's."""

from __future__ import annotations

import json

import pytest
from browser import phases_become, screenshot, wait_js
from jobflows import create_all, flow
from test_e2e_results import reporting
from test_e2e_ui import FAST, browser, controller, ui  # noqa: F401 - fixtures used by name

from jobflow_controller.kube.clientset import Clientset

pytestmark = pytest.mark.e2e

#: HTML in a value: were it inserted unescaped, the image's handler would set `window.pwned`.
HOSTILE = '<img src=x onerror="window.pwned=1"><b id=bold>'
BIG = "z" * 4000


def test_results_show_on_the_nodes_in_the_panels_and_the_jobflows_own(
    request: pytest.FixtureRequest, clientset: Clientset, namespace: str
) -> None:
    request.getfixturevalue("controller")
    session, driver = request.getfixturevalue("ui"), request.getfixturevalue("browser")
    message = json.dumps({"accuracy": "0.93", "model": "s3://m/42", "html": HOSTILE, "big": BIG})
    create_all(
        clientset,
        [reporting("train", namespace, message), reporting("sweep", namespace, json.dumps({"loss": "0.5"}))],
    )
    matrix = {"params": [{"name": "lr", "values": ["0.1", "0.01"]}]}
    flows = [
        {"name": "train", "results": {"names": ["accuracy", "model", "html", "big"]}},
        {"name": "sweep", "dependsOn": {"targets": ["train"]}, "matrix": matrix, "results": {"names": ["loss"]}},
    ]
    doc = flow("ml", namespace, flows)
    doc["spec"]["results"] = [
        {"name": "best-model", "value": "$(flows.train.results.model)"},
        {"name": "losses", "value": "$(flows.sweep.results.loss[*])"},
        {"name": "shown", "value": "$(flows.train.results.html)"},
    ]
    create_all(clientset, [doc])
    driver.get(session.server.url + f"#/flow/{namespace}/ml")
    phases_become(driver, {"train": "Completed", "sweep": "Completed"})

    line = wait_js(
        driver,
        "var t = document.querySelector('#dag g.node[data-flow=\"train\"] text.results');"
        " return t && t.textContent.indexOf('accuracy=0.93') === 0 ? t.textContent : null;",
        "train's results on its node",
    )
    assert len(line) <= 24 and line.endswith("…")
    wait_js(
        driver,
        "var t = document.querySelector('#dag g.node[data-flow=\"sweep\"] text.results');"
        " return t && t.textContent === 'loss=[0.5,0.5]';",
        "the matrix flow's values on its node",
    )
    driver.find_element("css selector", '#dag g.node[data-flow="train"]').click()
    side = wait_js(
        driver,
        "var t = document.getElementById('side').textContent; return t.indexOf('s3://m/42') >= 0 ? t : null;",
        "train's results in its panel",
    )
    assert HOSTILE in side and BIG in side  # shown as text, whole
    widths = driver.execute_script(
        "return [document.getElementById('side').getBoundingClientRect().width,"
        " document.documentElement.scrollWidth, window.innerWidth];"
    )
    assert widths[0] <= 340 and widths[1] <= widths[2], widths  # the 4 KiB value wraps inside the panel
    screenshot(driver, "dag-results.png")

    driver.find_element("css selector", '#dag g.node[data-flow="sweep"]').click()
    wait_js(
        driver,
        "var t = document.getElementById('side').textContent;"
        " return t.indexOf('ml-sweep-0') >= 0 && t.indexOf('ml-sweep-1') >= 0 && t.indexOf('0.5') >= 0;",
        "each matrix Job's results in the panel",
    )
    own = wait_js(
        driver,
        "var b = document.getElementById('jobflow-results');"
        " return b && !b.hidden && b.textContent.indexOf('best-model') >= 0 ? b.textContent : null;",
        "the JobFlow's own results",
    )
    assert "s3://m/42" in own and '["0.5", "0.5"]' in own and HOSTILE in own
    assert driver.execute_script("return window.pwned === undefined && !document.getElementById('bold');")
