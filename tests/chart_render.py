"""Render the Helm chart and the kustomize tree, and say object by object how they differ.

Shared by the chart's unit tests (tests/unit/chart) and its e2e test (tests/e2e/test_e2e_helm.py).
helm is the one hack/build-helm.sh finds or builds (a helm 4 on PATH, else v4.3.2 in the cache).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from jobflow_controller.local.kubectl import REPO_ROOT, kubectl_path

CHART = REPO_ROOT / "charts" / "jobflow-controller"
MANIFESTS = REPO_ROOT / "manifests"
#: The release `helm install jobflow-controller -n volcano-system` makes: manifests/' names.
RELEASE = "jobflow-controller"
NAMESPACE = "volcano-system"
#: The labels the chart adds for Helm, as Helm's own charts do; the only difference allowed.
HELM_LABELS = frozenset({"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"})

Document = dict[str, Any]
Key = tuple[str, str, str]


@functools.cache
def helm_path() -> str:
    """hack/build-helm.sh's answer (it builds helm on first use, as the control plane is built)."""
    out = subprocess.run(
        ["bash", str(REPO_ROOT / "hack" / "build-helm.sh")], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"hack/build-helm.sh failed:\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


def helm(
    *args: str, kubeconfig: os.PathLike[str] | str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run helm; with `check`, a failure raises with helm's own stderr in the message."""
    env = {**os.environ, "HELM_CACHE_HOME": str(Path(tempfile.gettempdir()) / "jobflow-helm-cache")}
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    out = subprocess.run([helm_path(), *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    if check and out.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} exited {out.returncode}:\n{out.stderr}{out.stdout[-2000:]}")
    return out


def value_args(values: Mapping[str, Any] | None = None, files: Sequence[Path] = ()) -> list[str]:
    args = [arg for f in files for arg in ("-f", str(f))]
    if values:
        handle = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)  # noqa: SIM115 (kept for helm)
        with handle:
            yaml.safe_dump(dict(values), handle)
        args += ["-f", handle.name]
    return args


#: libyaml's loader when PyYAML has it: the CRDs make a render 0.8 MB, 6 s to parse in pure Python.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: A line that starts or ends a document (`---` alone on its line), and any other marker line: text
#: with one of those (`--- !tag`, `...`) is parsed whole, as YAML says, not split here.
_SEPARATOR = re.compile(r"^---[ \t]*$", re.M)
_OTHER_MARKER = re.compile(r"^(?:---[ \t]*\S|\.\.\.)", re.M)


@functools.lru_cache(maxsize=64)
def _parsed(part: str) -> tuple[Document, ...]:
    return tuple(d for d in yaml.load_all(part, Loader=LOADER) if d)


def documents(text: str) -> list[Document]:
    """The documents of a render. Each document's text is parsed once per process and handed out as a
    deep copy: renders of the chart with other values repeat the 2 MB of CRDs word for word, and their
    parse (0.6 s) was most of a chart test's time."""
    if _OTHER_MARKER.search(text):
        return [d for d in yaml.load_all(text, Loader=LOADER) if d]
    return [copy.deepcopy(d) for part in _SEPARATOR.split(text) for d in _parsed(part)]


def helm_template(
    values: Mapping[str, Any] | None = None,
    files: Sequence[Path] = (),
    release: str = RELEASE,
    namespace: str = NAMESPACE,
) -> list[Document]:
    """`helm template` of the chart, as `helm install <release> -n <namespace>` would render it."""
    return documents(helm("template", release, str(CHART), "-n", namespace, *value_args(values, files)).stdout)


def kustomize(components: Iterable[str] = (), resources: Iterable[str] = ()) -> list[Document]:
    """`kubectl kustomize` of an overlay of manifests/ with the given Components and extra resources
    (folders of manifests/)."""
    with tempfile.TemporaryDirectory() as overlay:
        rel = os.path.relpath(MANIFESTS, overlay)
        Path(overlay, "kustomization.yaml").write_text(
            yaml.safe_dump(
                {
                    "resources": [rel, *(f"{rel}/{r}" for r in resources)],
                    "components": [f"{rel}/{c}" for c in components],
                }
            )
        )
        out = subprocess.run(
            [kubectl_path(), "kustomize", overlay], capture_output=True, text=True, check=True, timeout=120
        )
    return documents(out.stdout)


@functools.cache
def _kustomized(components: tuple[str, ...], resources: tuple[str, ...]) -> tuple[Document, ...]:
    return tuple(kustomize(components, resources))


def kustomize_once(components: Iterable[str] = (), resources: Iterable[str] = ()) -> list[Document]:
    """`kustomize`, rendered once per test process for each set of Components and resources (a render
    and its parse take seconds: the CRDs are most of it) and handed out as a deep copy, so a test may
    change what it gets."""
    return copy.deepcopy(list(_kustomized(tuple(components), tuple(resources))))


def key(doc: Mapping[str, Any]) -> Key:
    group = doc["apiVersion"].rpartition("/")[0]
    meta = doc["metadata"]
    return (f"{doc['kind']}.{group}" if group else doc["kind"], meta.get("namespace", ""), meta["name"])


def show(k: Key) -> str:
    kind, namespace, name = k
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def without_helm_labels(doc: Document) -> Document:
    """`doc` with the chart's Helm labels removed from its own metadata (never from a selector or a
    pod template, where the chart adds none)."""
    meta = dict(doc["metadata"])
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in HELM_LABELS}
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return {**doc, "metadata": meta}


def differences(path: str, chart: Any, kustomized: Any) -> list[str]:
    """Every place where two JSON values differ, as `path: chart X, kustomize Y` lines."""
    if isinstance(chart, dict) and isinstance(kustomized, dict):
        return [
            line
            for name in sorted(set(chart) | set(kustomized))
            for line in differences(f"{path}/{name}", chart.get(name, "<absent>"), kustomized.get(name, "<absent>"))
        ]
    if isinstance(chart, list) and isinstance(kustomized, list) and len(chart) == len(kustomized):
        return [
            line
            for i, (a, b) in enumerate(zip(chart, kustomized, strict=True))
            for line in differences(f"{path}/{i}", a, b)
        ]
    if chart == kustomized:
        return []
    return [f"{path}: chart {_short(chart)}, kustomize {_short(kustomized)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


def compare(chart: Iterable[Document], kustomized: Iterable[Document]) -> list[str]:
    """Object by object, beyond HELM_LABELS: the objects only one side has, and for each object both
    have, every differing field. Empty when the renders are the same."""
    ours = {key(d): without_helm_labels(d) for d in chart}
    theirs = {key(d): d for d in kustomized}
    report = [f"only in the chart: {show(k)}" for k in sorted(set(ours) - set(theirs))]
    report += [f"only in kustomize: {show(k)}" for k in sorted(set(theirs) - set(ours))]
    for k in sorted(set(ours) & set(theirs)):
        report += [f"{show(k)}: {line}" for line in differences("", ours[k], theirs[k])]
    return report


def helm_label_count(chart: Iterable[Document]) -> int:
    """How many Helm labels the chart's objects carry: the whole of the allowed difference."""
    return sum(len(HELM_LABELS & set(d["metadata"].get("labels") or {})) for d in chart)
