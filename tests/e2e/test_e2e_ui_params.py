"""`kubectl jobflow ui` on a matrix flow (docs/params.md), in headless Chromium on the real control plane:
one node for the flow, its box counting the Completed Jobs, and each Job listed when it is opened.

The UI set-up is test_e2e_ui.py's, imported."""

from __future__ import annotations

import pytest
from browser import node_phases, phases_become, screenshot, wait_js
from jobflows import create_all, flow, template
from test_e2e_ui import FAST, browser, controller, ui  # noqa: F401 - fixtures used by name

from jobflow_controller.kube.clientset import Clientset

pytestmark = pytest.mark.e2e


def test_a_matrix_flow_is_one_node_listing_its_jobs_when_opened(
    request: pytest.FixtureRequest, clientset: Clientset, namespace: str
) -> None:
    request.getfixturevalue("controller")
    session, driver = request.getfixturevalue("ui"), request.getfixturevalue("browser")
    create_all(clientset, [template("prep", namespace, FAST), template("train", namespace, FAST)])
    matrix = {"params": [{"name": "lr", "values": ["0.1", "0.01"]}, {"name": "seed", "values": ["1", "2"]}]}
    flows = [
        {"name": "prep"},
        {"name": "train", "dependsOn": {"targets": ["prep"]}, "matrix": {**matrix, "maxParallel": 2}},
    ]
    clientset.job_flows(namespace).create(flow("grid", namespace, flows))
    driver.get(session.server.url + f"#/flow/{namespace}/grid")
    phases_become(driver, {"prep": "Completed", "train": "Completed"})
    assert sorted(node_phases(driver)) == ["prep", "train"]
    wait_js(
        driver,
        "return document.querySelector('#dag g.node[data-flow=\"train\"] text.state').textContent"
        " === 'Completed · 4/4'",
        "the matrix node's count",
    )
    driver.find_element("css selector", '#dag g.node[data-flow="train"]').click()
    side = wait_js(
        driver,
        "var t = document.getElementById('side').textContent; return t.indexOf('grid-train-3') >= 0 ? t : null;",
        "the matrix flow's Jobs in the side panel",
    )
    assert all(f"grid-train-{i}" in side for i in range(4)) and "Jobs" in side
    screenshot(driver, "dag-matrix.png")
