"""The PromQL of manifests/monitoring, parsed, and the samples of a `/metrics` text, read.

Shared by the unit test (which checks the expressions against the series the controller's metrics
classes export) and the e2e test (which checks them against the scrape of a real controller
process): both need the same list of expressions, the same selectors and grouping labels, and the
same reading of the text exposition.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import promql_parser
import yaml

ROOT = Path(__file__).resolve().parents[1]
MONITORING = ROOT / "manifests" / "monitoring"
DASHBOARD_FILE = MONITORING / "grafana-dashboard.json"
RULE_FILE = MONITORING / "prometheusrule.yaml"
DASHBOARD = json.loads(DASHBOARD_FILE.read_text(encoding="utf-8"))
RULE = yaml.safe_load(RULE_FILE.read_text(encoding="utf-8"))

#: Labels Prometheus attaches to every scraped series (the target's, and kube-prometheus' relabelling
#: of a ServiceMonitor's endpoints), which a query may match or group on.
TARGET_LABELS = frozenset({"job", "instance", "namespace", "pod", "service", "container", "endpoint"})
#: What the tests put in place of Grafana's built-in interval variables before parsing.
GRAFANA_INTERVALS = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}
#: One sample line of the text exposition, and one label pair in it.
SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """(sample name, labels, value) of every sample line, named as Prometheus stores them.

    prometheus_client's own text parser is no help: it renames a counter's samples to
    `<name>_total`, which is exactly the difference that matters for `volcano_jobflow_*_phase_count`.
    """
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, line
        out.append((match["name"], dict(LABEL_PAIR.findall(match["labels"] or "")), float(match["value"])))
    return out


# -- the expressions ---------------------------------------------------------------------------
def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel of the dashboard, those nested in rows included."""
    for panel in items:
        yield panel
        yield from panels(panel.get("panels") or [])


def _variable_values() -> dict[str, str]:
    """What each dashboard variable stands for in a query: its "All" value, or a textbox's text."""
    values = {}
    for var in DASHBOARD["templating"]["list"]:
        if var["type"] == "textbox":
            values[var["name"]] = var["query"]
        elif var["type"] == "query":
            values[var["name"]] = var["allValue"]
    return values


def substitute(expr: str) -> str:
    for name, value in GRAFANA_INTERVALS.items():
        expr = expr.replace(name, value)
    values = _variable_values()
    expr = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values[m.group(1) or m.group(2)], expr)
    assert "$" not in expr, expr
    return expr


def expressions() -> list[tuple[str, str]]:
    """(where, PromQL) for every alert, every panel target and every variable query."""
    out = [(f"alert {r['alert']}", r["expr"]) for group in RULE["spec"]["groups"] for r in group["rules"]]
    for panel in panels(DASHBOARD["panels"]):
        for target in panel.get("targets") or []:
            out.append((f"panel {panel['title']!r} {target['refId']}", substitute(target["expr"])))
    for var in DASHBOARD["templating"]["list"]:
        if var["type"] == "query":
            match = LABEL_VALUES.match(var["query"]["query"])
            assert match, var["query"]
            out.append((f"variable {var['name']}", substitute(match["selector"])))
    return out


EXPRESSIONS = expressions()


def selectors(expr: str) -> tuple[list[promql_parser.VectorSelector], set[str]]:
    """Every vector selector of `expr`, and every label it groups on (by/without, on/ignoring)."""
    found: list[promql_parser.VectorSelector] = []
    grouping: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)
        if isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            grouping.update(node.modifier.labels)
        if isinstance(node, promql_parser.BinaryExpr) and node.modifier is not None:
            matching = node.modifier.matching
            if matching is not None:
                grouping.update(matching.labels)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found, grouping


def series_of(selector: promql_parser.VectorSelector, names: Iterable[str]) -> list[str]:
    """Those of `names` a selector can match: by its name, or by a `__name__` matcher."""
    names = list(names)
    if selector.name:
        return [selector.name] if selector.name in names else []
    for matcher in selector.matchers.matchers:
        if matcher.name == "__name__":
            if str(matcher.op) == "MatchOp.Equal":
                return [matcher.value] if matcher.value in names else []
            return [n for n in names if re.fullmatch(matcher.value, n)]
    return []


def selects(selector: promql_parser.VectorSelector, name: str, labels: dict[str, str]) -> bool:
    """Whether Prometheus would select this scraped sample, once it has added its target labels.

    A matcher on a target label the scrape cannot carry (`job=~".*"`) is left to Prometheus; a
    label the sample lacks is the empty string, as in PromQL.
    """
    if selector.name and selector.name != name:
        return False
    for matcher in selector.matchers.matchers:
        if matcher.name == "__name__":
            value = name
        elif matcher.name in labels:
            value = labels[matcher.name]
        elif matcher.name in TARGET_LABELS:
            continue
        else:
            value = ""
        op = str(matcher.op)
        if op == "MatchOp.Equal":
            ok = value == matcher.value
        elif op == "MatchOp.NotEqual":
            ok = value != matcher.value
        elif op == "MatchOp.Re":
            ok = re.fullmatch(matcher.value, value) is not None
        else:
            assert op == "MatchOp.NotRe", op
            ok = re.fullmatch(matcher.value, value) is None
        if not ok:
            return False
    return True
