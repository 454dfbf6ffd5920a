"""One source of truth: with default values `helm template` renders what `kubectl kustomize manifests/`
does, and each optional part's value what its kustomize Component (or manifests/monitoring) adds,
object by object, but for Helm's own labels (chart_render.HELM_LABELS).

A failure lists every object only one side has and every differing field with both values, e.g.
``Deployment.apps volcano-system/jobflow-controller: /spec/template/spec/containers/0/args/2: chart ...``.
"""

from __future__ import annotations

from typing import Any

import pytest
from chart_render import HELM_LABELS, compare, helm_label_count, helm_template, key, kustomize

#: (value set, kustomize Components, extra kustomize resources): each optional part of manifests/.
CASES: dict[str, tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]] = {
    "defaults = manifests/": ({}, (), ()),
    "crds.celValidation = crd-validation": ({"crds": {"celValidation": True}}, ("crd-validation",), ()),
    "webhook = webhook": ({"webhook": {"enabled": True}}, ("webhook",), ()),
    "webhook with certManager = webhook, webhook/cert-manager": (
        {"webhook": {"enabled": True, "certificate": {"source": "certManager"}}},
        ("webhook", "webhook/cert-manager"),
        (),
    ),
    "webhook.networkPolicy = webhook, webhook/networkpolicy": (
        # manifests/ ships a placeholder range the overlay must replace; the chart asks for it.
        {"webhook": {"enabled": True, "networkPolicy": {"enabled": True, "apiServerCIDRs": ["192.0.2.0/24"]}}},
        ("webhook", "webhook/networkpolicy"),
        (),
    ),
    "sharding = sharding": ({"sharding": {"enabled": True}}, ("sharding",), ()),
    "triggers = triggers": ({"triggers": {"enabled": True}}, ("triggers",), ()),
    "triggers.networkPolicy = triggers, triggers/networkpolicy": (
        {"triggers": {"enabled": True, "networkPolicy": {"enabled": True}}},
        ("triggers", "triggers/networkpolicy"),
        (),
    ),
    "metrics.serviceMonitor, prometheusRule, grafanaDashboard = monitoring": (
        {
            "metrics": {
                "serviceMonitor": {"enabled": True},
                "prometheusRule": {"enabled": True},
                "grafanaDashboard": {"enabled": True},
            }
        },
        (),
        ("monitoring",),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_chart_renders_what_kustomize_does(case: str) -> None:
    values, components, resources = CASES[case]

    report = compare(helm_template(values), kustomize(components, resources))

    assert report == [], "\n".join(report)


def test_the_only_allowed_difference_is_there_and_is_helms_labels() -> None:
    """The comparison ignores exactly HELM_LABELS, and the chart does set them: every object but the
    CRDs (verbatim copies of manifests/crds) and the Namespace (rendered by `helm template` alone)."""
    rendered = helm_template()
    labelled = [d for d in rendered if set(d["metadata"].get("labels") or {}) >= HELM_LABELS]
    unlabelled = sorted(key(d)[0] for d in rendered if d not in labelled)

    crds = [key(d)[0] for d in kustomize() if d["kind"] == "CustomResourceDefinition"]
    assert len(crds) >= 2
    assert unlabelled == [*crds, "Namespace"]
    assert helm_label_count(rendered) == 3 * len(labelled)


def test_the_comparison_names_the_object_and_the_field_that_differ() -> None:
    chart = helm_template()
    deployment = next(d for d in chart if d["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["args"][0] = "--leader-elect=false"
    del chart[[d["kind"] for d in chart].index("PriorityClass")]

    report = compare(chart, kustomize())

    assert report == [
        "only in kustomize: PriorityClass.scheduling.k8s.io jobflow-controller",
        "Deployment.apps volcano-system/jobflow-controller: /spec/template/spec/containers/0/args/0: "
        'chart "--leader-elect=false", kustomize "--leader-elect=true"',
    ]
