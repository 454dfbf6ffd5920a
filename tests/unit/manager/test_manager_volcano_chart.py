"""Volcano's own Helm chart starts this process unchanged (issue 20, item 1).

The container args of `installer/helm/chart/volcano/templates/controllers.yaml` at v1.15.1
(`0a56ed331897f5455916a44d3075671376d731d6`), copied verbatim, are rendered here with every
optional line on, then parsed as the process parses its command line.
"""

from __future__ import annotations

import re

import pytest
import structlog

from jobflow_controller.manager import config, log_what_is_ignored
from jobflow_controller.manager import options as opts

CHART_ARGS_V1_15_1 = """\
            - --logtostderr
            - --enable-healthz=true
              {{- if .Values.custom.controller_metrics_enable }}
            - --enable-metrics=true
              {{- end }}
            - --leader-elect={{ .Values.custom.leader_elect_enable }}
              {{- if $scheduler_name }}
            - --scheduler-name={{- $scheduler_name }}
              {{- end }}
              {{- if .Values.custom.leader_elect_enable }}
            - --leader-elect-resource-namespace={{ .Release.Namespace }}
              {{- end }}
              {{- if .Values.custom.controller_kube_api_qps }}
            - --kube-api-qps={{.Values.custom.controller_kube_api_qps}}
              {{- end }}
              {{- if .Values.custom.controller_kube_api_burst }}
            - --kube-api-burst={{.Values.custom.controller_kube_api_burst}}
              {{- end }}
              {{- if .Values.custom.controller_worker_threads }}
            - --worker-threads={{.Values.custom.controller_worker_threads}}
              {{- end }}
              {{- if .Values.custom.controller_worker_threads_for_gc }}
            - --worker-threads-for-gc={{.Values.custom.controller_worker_threads_for_gc}}
              {{- end }}
              {{- if .Values.custom.controller_worker_threads_for_podgroup }}
            - --worker-threads-for-podgroup={{.Values.custom.controller_worker_threads_for_podgroup}}
              {{- end }}
              {{- if .Values.custom.sharding_configmap_enable }}
            - --sharding-configmap={{ .Release.Name }}-sharding-configmap
            - --sharding-configmap-namespace={{ .Release.Namespace }}
              {{- end }}
              {{- if .Values.custom.controller_enabled_controllers }}
            - --controllers={{.Values.custom.controller_enabled_controllers}}
              {{- end }}
            - -v={{.Values.custom.controller_log_level}}
            - 2>&1
"""

#: The chart's values.yaml defaults, with the optional ones set (scheduler_name is `~` there,
#: leader election off) and the release `volcano` in `volcano-system`.
VALUES = {
    ".Release.Name": "volcano",
    ".Release.Namespace": "volcano-system",
    "$scheduler_name": "volcano",
    ".Values.custom.leader_elect_enable": "true",
    ".Values.custom.controller_kube_api_qps": "50",
    ".Values.custom.controller_kube_api_burst": "100",
    ".Values.custom.controller_worker_threads": "3",
    ".Values.custom.controller_worker_threads_for_gc": "5",
    ".Values.custom.controller_worker_threads_for_podgroup": "5",
    ".Values.custom.controller_log_level": "4",
}


def render(controllers: str) -> list[str]:
    """The args the chart renders: every `if` true, each `{{ expr }}` replaced by its value."""
    values = {**VALUES, ".Values.custom.controller_enabled_controllers": controllers}
    args = []
    for line in CHART_ARGS_V1_15_1.splitlines():
        if not line.strip().startswith("- "):
            continue  # an `{{- if }}` or `{{- end }}`, all on
        rendered = re.sub(r"\{\{-?\s*(\S+)\s*\}\}", lambda m: values[m.group(1)], line.strip()[2:])
        args.append(rendered)
    return args


def test_the_rendered_args_are_the_charts() -> None:
    assert render("*,-hyperNode-controller") == [
        "--logtostderr",
        "--enable-healthz=true",
        "--enable-metrics=true",
        "--leader-elect=true",
        "--scheduler-name=volcano",
        "--leader-elect-resource-namespace=volcano-system",
        "--kube-api-qps=50",
        "--kube-api-burst=100",
        "--worker-threads=3",
        "--worker-threads-for-gc=5",
        "--worker-threads-for-podgroup=5",
        "--sharding-configmap=volcano-sharding-configmap",
        "--sharding-configmap-namespace=volcano-system",
        "--controllers=*,-hyperNode-controller",
        "-v=4",
        "2>&1",
    ]


@pytest.mark.parametrize(
    "controllers",
    [
        "*,-hyperNode-controller",  # v1.15.1, as a user sets custom.controller_enabled_controllers
        "*,-sharding-controller,-hyperNode-controller",  # master's chart with hypernode_controller_mode standalone
        "*,-sharding-controller,-colocation-config-controller",
    ],
)
def test_volcanos_chart_args_start_this_process(controllers: str) -> None:
    parsed = opts.parse_command_line(render(controllers))
    o = parsed.options
    assert parsed.version is False
    assert (o.enable_healthz, o.enable_metrics, o.leader_elect, o.leader_elect_resource_namespace) == (
        True,
        True,
        True,
        "volcano-system",
    )
    assert (o.kube_api_qps, o.kube_api_burst, o.worker_threads, o.verbosity) == (50.0, 100, 3, 4)
    assert o.controllers == controllers.split(",")
    assert config.unknown_controllers(o.controllers) == []
    assert config.is_controller_enabled(config.JOBFLOW_CONTROLLER, o.controllers)
    assert config.is_controller_enabled(config.JOBTEMPLATE_CONTROLLER, o.controllers)
    # Accepted, typed, and named in the start-up log as configuring nothing here.
    assert (o.scheduler_name, o.worker_threads_for_gc, o.worker_threads_for_podgroup) == (["volcano"], 5, 5)
    assert (o.sharding_configmap, o.sharding_configmap_namespace) == ("volcano-sharding-configmap", "volcano-system")
    assert parsed.ignored_flags == [
        "--scheduler-name",
        "--worker-threads-for-podgroup",
        "--worker-threads-for-gc",
        "--sharding-configmap",
        "--sharding-configmap-namespace",
        "--logtostderr",
    ]
    # The shell redirection the chart passes as an argument: pflag leaves it, upstream ignores it.
    assert parsed.ignored_args == ["2>&1"]


def test_what_configures_nothing_here_is_named_in_one_info_line_at_start() -> None:
    parsed = opts.parse_command_line(render("*,-hyperNode-controller"))
    with structlog.testing.capture_logs() as logs:
        log_what_is_ignored(parsed)
    assert logs == [
        {
            "event": "accepted as vc-controller-manager does; no effect here",
            "log_level": "info",
            "flags": parsed.ignored_flags,
            "arguments": ["2>&1"],
        }
    ]


def test_nothing_is_logged_when_everything_given_is_used() -> None:
    with structlog.testing.capture_logs() as logs:
        log_what_is_ignored(opts.parse_command_line(["--leader-elect=false", "-v=4"]))
    assert logs == []


def test_a_name_no_volcano_controller_has_is_warned_about() -> None:
    with structlog.testing.capture_logs() as logs:
        log_what_is_ignored(opts.parse_command_line(["--controllers=*,-jobflow-controler"]))
    assert [(entry["log_level"], entry["entries"]) for entry in logs] == [("warning", ["-jobflow-controler"])]
