"""The sharding Component: the Deployment becomes a StatefulSet of three replicas sharing twelve shards
(--shards=12, independent of the replicas: they are rebalanced), whose Role also grants the shard
Leases and the replicas' membership Leases; the base manifests stay unsharded."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from chart_render import kustomize_once

from jobflow_controller.local.kubectl import REPO_ROOT
from jobflow_controller.manager import options as opts
from jobflow_controller.sharding import shard_lease_name

MANIFESTS = REPO_ROOT / "manifests"


def _render(tmp_path: Path, *components: str) -> list[dict[str, Any]]:
    """`kubectl kustomize` of manifests/ with `components` (rendered once per process: kustomize_once)."""
    return kustomize_once(components)


def _one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind}s"
    return found[0]


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = workload["spec"]["template"]["spec"]["containers"][0]
    return container


def test_the_component_replaces_the_deployment_with_a_statefulset_of_three_parallel_pods(tmp_path: Path) -> None:
    docs = _render(tmp_path, "sharding")
    assert not [d for d in docs if d["kind"] == "Deployment"]
    sts = _one(docs, "StatefulSet")
    assert sts["spec"]["replicas"] == 3
    assert sts["spec"]["podManagementPolicy"] == "Parallel"
    service = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == sts["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == sts["spec"]["selector"]["matchLabels"]


def test_the_replicas_share_a_fixed_number_of_shards_and_know_their_pod_name(tmp_path: Path) -> None:
    sts = _one(_render(tmp_path, "sharding"), "StatefulSet")
    container = _container(sts)
    options, _ = opts.parse(container["args"])
    assert options.shards == 12
    assert sts["spec"]["replicas"] == 3
    assert options.shard_index is None  # taken from the pod name's ordinal
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in container["env"]


def test_the_pod_template_is_the_deployments_but_for_the_shards_flag_and_the_pod_name(tmp_path: Path) -> None:
    deployment = _one(_render(tmp_path), "Deployment")
    sts = _one(_render(tmp_path, "sharding"), "StatefulSet")
    template = copy.deepcopy(sts["spec"]["template"])
    container = template["spec"]["containers"][0]
    container["env"] = [variable for variable in container["env"] if variable["name"] != "POD_NAME"]
    container["args"] = [a for a in container["args"] if not a.startswith("--shards=")]
    assert template == deployment["spec"]["template"]
    assert sts["spec"]["selector"] == deployment["spec"]["selector"]
    assert sts["metadata"]["labels"] == deployment["metadata"]["labels"]


def test_the_role_grants_the_lease_of_every_shard_by_name(tmp_path: Path) -> None:
    docs = _render(tmp_path, "sharding")
    options, _ = opts.parse(_container(_one(docs, "StatefulSet"))["args"])
    role = _one(docs, "Role")
    named = {n for rule in role["rules"] for n in rule.get("resourceNames") or [] if set(rule["verbs"]) >= {"get"}}
    shard_leases = {shard_lease_name(options.leader_elect_resource_name, i) for i in range(options.shards)}
    assert shard_leases <= named
    assert named - shard_leases == {options.leader_elect_resource_name}


def test_the_base_manifests_are_unsharded(tmp_path: Path) -> None:
    docs = _render(tmp_path)
    assert not [d for d in docs if d["kind"] == "StatefulSet"]
    args = _container(_one(docs, "Deployment"))["args"]
    assert not [a for a in args if a.startswith("--shard")]
    role = _one(docs, "Role")
    assert not [n for rule in role["rules"] for n in rule.get("resourceNames") or [] if "shard" in n]


def test_the_role_grants_the_membership_leases_which_no_name_can_be_known_for(tmp_path: Path) -> None:
    role = _one(_render(tmp_path, "sharding"), "Role")
    unnamed = [rule for rule in role["rules"] if not rule.get("resourceNames")]
    assert {"get", "list", "update", "delete"} <= {verb for rule in unnamed for verb in rule["verbs"]}


def test_without_the_component_the_role_grants_no_lease_but_its_own(tmp_path: Path) -> None:
    role = _one(_render(tmp_path), "Role")
    unnamed = [rule for rule in role["rules"] if not rule.get("resourceNames")]
    assert [rule["verbs"] for rule in unnamed] == [["create"]]
