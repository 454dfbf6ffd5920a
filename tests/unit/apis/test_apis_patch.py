"""`patch.jobSpec` merged into a JobTemplate's spec: tables of template + patch -> result (docs/patch.md).

Each row names one rule. `merge_job_spec` is the merge alone; `apply_patch` takes a flow's whole
`patch` value, checks its shape first and ignores the CRD's defaults.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobflow_controller.apis.patch import PatchError, apply_patch, merge_job_spec, patch_problems
from jobflow_controller.apis.patch_defaults import CRD_DEFAULTS

REPO = Path(__file__).resolve().parents[3]


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": list(containers), **spec}}


def task(name: str, replicas: int = 1, *containers: dict[str, Any], **pod_spec: Any) -> dict[str, Any]:
    return {"name": name, "replicas": replicas, "template": pod(*containers, **pod_spec)}


MAIN = {"name": "main", "image": "busybox:1.36", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
TEMPLATE: dict[str, Any] = {
    "minAvailable": 1,
    "queue": "research",
    "maxRetry": 5,
    "schedulerName": "volcano",
    "plugins": {"ssh": [], "env": []},
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "tasks": [
        task("ps", 1, {"name": "ps", "image": "ps:1"}),
        task("worker", 2, MAIN, nodeSelector={"disk": "ssd"}),
    ],
}

MERGES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # (id, template, patch.jobSpec, result)
    ("empty-patch-is-the-template", TEMPLATE, {}, TEMPLATE),
    (
        "scalar-replaces",
        {"minAvailable": 1, "queue": "a"},
        {"minAvailable": 3},
        {"minAvailable": 3, "queue": "a"},
    ),
    ("new-field-is-added", {"queue": "a"}, {"priorityClassName": "high"}, {"queue": "a", "priorityClassName": "high"}),
    ("null-deletes", {"minAvailable": 1, "queue": "a"}, {"minAvailable": None}, {"queue": "a"}),
    ("null-for-an-absent-field-is-nothing", {"queue": "a"}, {"ttlSecondsAfterFinished": None}, {"queue": "a"}),
    (
        "objects-merge-recursively",
        {"plugins": {"ssh": [], "env": []}},
        {"plugins": {"svc": ["--disable-network-policy=true"]}},
        {"plugins": {"ssh": [], "env": [], "svc": ["--disable-network-policy=true"]}},
    ),
    (
        "null-deletes-inside-an-object",
        {"plugins": {"ssh": [], "env": []}},
        {"plugins": {"ssh": None}},
        {"plugins": {"env": []}},
    ),
    (
        "an-unkeyed-list-is-replaced",
        {"policies": [{"event": "PodEvicted", "action": "RestartJob"}]},
        {"policies": [{"event": "PodFailed", "action": "AbortJob"}]},
        {"policies": [{"event": "PodFailed", "action": "AbortJob"}]},
    ),
    (
        "a-list-inside-an-object-is-replaced",
        {"plugins": {"svc": ["a", "b"]}},
        {"plugins": {"svc": ["c"]}},
        {"plugins": {"svc": ["c"]}},
    ),
    (
        "an-object-replaces-a-scalar",
        {"networkTopology": "x"},
        {"networkTopology": {"mode": "soft"}},
        {"networkTopology": {"mode": "soft"}},
    ),
    (
        "nulls-in-a-new-object-are-dropped",
        {},
        {"networkTopology": {"mode": "soft", "highestTierAllowed": None}},
        {"networkTopology": {"mode": "soft"}},
    ),
    (
        "nulls-in-a-replacing-list-are-kept",
        {},
        {"policies": [{"event": "PodFailed", "action": None}]},
        {"policies": [{"event": "PodFailed", "action": None}]},
    ),
    (
        "a-task-merges-into-the-task-of-its-name",
        {"tasks": [task("ps", 1), task("worker", 2)]},
        {"tasks": [{"name": "worker", "replicas": 8}]},
        {"tasks": [task("ps", 1), task("worker", 8)]},
    ),
    (
        "tasks-keep-the-templates-order",
        {"tasks": [task("ps", 1), task("worker", 2)]},
        {"tasks": [{"name": "worker", "replicas": 4}, {"name": "ps", "replicas": 2}]},
        {"tasks": [task("ps", 2), task("worker", 4)]},
    ),
    (
        "a-task-field-is-deleted-by-null",
        {"tasks": [{"name": "w", "replicas": 2, "minAvailable": 1}]},
        {"tasks": [{"name": "w", "minAvailable": None}]},
        {"tasks": [{"name": "w", "replicas": 2}]},
    ),
    (
        "an-empty-tasks-list-changes-nothing",
        {"tasks": [task("ps", 1)]},
        {"tasks": []},
        {"tasks": [task("ps", 1)]},
    ),
    (
        "null-tasks-deletes-them",
        {"queue": "a", "tasks": [task("ps", 1)]},
        {"tasks": None},
        {"queue": "a"},
    ),
    (
        "a-container-merges-by-name",
        {"tasks": [task("w", 1, {"name": "main", "image": "a:1"}, {"name": "side", "image": "s:1"})]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "image": "a:2"}]}}}]},
        {"tasks": [task("w", 1, {"name": "main", "image": "a:2"}, {"name": "side", "image": "s:1"})]},
    ),
    (
        "a-new-container-is-appended",
        {"tasks": [task("w", 1, {"name": "main", "image": "a:1"})]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "side", "image": "s:1"}]}}}]},
        {"tasks": [task("w", 1, {"name": "main", "image": "a:1"}, {"name": "side", "image": "s:1"})]},
    ),
    (
        "a-container-field-is-deleted-by-null",
        {"tasks": [task("w", 1, {"name": "main", "image": "a:1", "command": ["sleep"]})]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "command": None}]}}}]},
        {"tasks": [task("w", 1, {"name": "main", "image": "a:1"})]},
    ),
    (
        "args-and-command-are-replaced",
        {"tasks": [task("w", 1, {"name": "main", "args": ["a", "b"]})]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "args": ["c"]}]}}}]},
        {"tasks": [task("w", 1, {"name": "main", "args": ["c"]})]},
    ),
    (
        "init-containers-merge-by-name",
        {"tasks": [task("w", 1, initContainers=[{"name": "init", "image": "i:1"}, {"name": "x", "image": "x:1"}])]},
        {"tasks": [{"name": "w", "template": {"spec": {"initContainers": [{"name": "x", "image": "x:2"}]}}}]},
        {"tasks": [task("w", 1, initContainers=[{"name": "init", "image": "i:1"}, {"name": "x", "image": "x:2"}])]},
    ),
    (
        "env-merges-by-name-and-appends",
        {"tasks": [task("w", 1, MAIN)]},
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "main", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]}
                            ]
                        }
                    },
                }
            ]
        },
        {
            "tasks": [
                task(
                    "w",
                    1,
                    {
                        "name": "main",
                        "image": "busybox:1.36",
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                    },
                )
            ]
        },
    ),
    (
        "an-env-value-is-deleted-by-null",
        {"tasks": [task("w", 1, {"name": "main", "env": [{"name": "A", "value": "1"}]})]},
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "env": [
                                        {"name": "A", "value": None, "valueFrom": {"fieldRef": {"fieldPath": "x"}}}
                                    ],
                                }
                            ]
                        }
                    },
                }
            ]
        },
        {
            "tasks": [
                task("w", 1, {"name": "main", "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]})
            ]
        },
    ),
    (
        "ports-merge-by-container-port-and-protocol",
        {
            "tasks": [
                task(
                    "w",
                    1,
                    {
                        "name": "main",
                        "ports": [
                            {"containerPort": 53, "name": "dns-tcp"},
                            {"containerPort": 53, "protocol": "UDP", "name": "dns"},
                        ],
                    },
                )
            ]
        },
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "ports": [
                                        {"containerPort": 53, "protocol": "UDP", "hostPort": 5353},
                                        {"containerPort": 53, "protocol": "TCP", "hostPort": 5354},
                                        {"containerPort": 8080},
                                    ],
                                }
                            ]
                        }
                    },
                }
            ]
        },
        {
            "tasks": [
                task(
                    "w",
                    1,
                    {
                        "name": "main",
                        "ports": [
                            {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP", "hostPort": 5354},
                            {"containerPort": 53, "protocol": "UDP", "name": "dns", "hostPort": 5353},
                            {"containerPort": 8080},
                        ],
                    },
                )
            ]
        },
    ),
    (
        "volume-mounts-merge-by-mount-path",
        {
            "tasks": [
                task(
                    "w",
                    1,
                    {
                        "name": "main",
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "tmp", "mountPath": "/tmp"}],
                    },
                )
            ]
        },
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {
                        "spec": {
                            "containers": [{"name": "main", "volumeMounts": [{"mountPath": "/data", "name": "data2"}]}]
                        }
                    },
                }
            ]
        },
        {
            "tasks": [
                task(
                    "w",
                    1,
                    {
                        "name": "main",
                        "volumeMounts": [{"name": "data2", "mountPath": "/data"}, {"name": "tmp", "mountPath": "/tmp"}],
                    },
                )
            ]
        },
    ),
    (
        "pod-volumes-merge-by-name",
        {"tasks": [task("w", 1, volumes=[{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}])]},
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {
                        "spec": {"volumes": [{"name": "data", "emptyDir": None, "hostPath": {"path": "/mnt"}}]}
                    },
                }
            ]
        },
        {
            "tasks": [
                task("w", 1, volumes=[{"name": "data", "hostPath": {"path": "/mnt"}}, {"name": "tmp", "emptyDir": {}}])
            ]
        },
    ),
    (
        "other-pod-lists-are-replaced",
        {"tasks": [task("w", 1, tolerations=[{"key": "a"}], imagePullSecrets=[{"name": "r1"}])]},
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {"spec": {"tolerations": [{"key": "b"}], "imagePullSecrets": [{"name": "r2"}]}},
                }
            ]
        },
        {"tasks": [task("w", 1, tolerations=[{"key": "b"}], imagePullSecrets=[{"name": "r2"}])]},
    ),
    (
        "pod-template-metadata-is-a-json-merge",
        {"tasks": [{"name": "w", "template": {"metadata": {"labels": {"a": "1", "b": "2"}}}}]},
        {"tasks": [{"name": "w", "template": {"metadata": {"labels": {"b": None, "c": "3"}}}}]},
        {"tasks": [{"name": "w", "template": {"metadata": {"labels": {"a": "1", "c": "3"}}}}]},
    ),
    (
        "volcanos-own-volumes-are-not-keyed",
        {"volumes": [{"mountPath": "/a"}, {"mountPath": "/b"}]},
        {"volumes": [{"mountPath": "/b", "volumeClaimName": "pvc"}]},
        {"volumes": [{"mountPath": "/b", "volumeClaimName": "pvc"}]},
    ),
    (
        "a-keyed-list-the-template-lacks-is-filled-from-the-patch",
        {"tasks": [{"name": "w", "template": {"spec": {}}}]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "image": "a", "tty": None}]}}}]},
        {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "image": "a"}]}}}]},
    ),
    (
        "the-first-of-repeated-template-keys-is-merged",
        {"tasks": [task("w", 1, {"name": "main", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]})]},
        {
            "tasks": [
                {
                    "name": "w",
                    "template": {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "9"}]}]}},
                }
            ]
        },
        {"tasks": [task("w", 1, {"name": "main", "env": [{"name": "A", "value": "9"}, {"name": "A", "value": "2"}]})]},
    ),
]


@pytest.mark.parametrize(("template", "patch", "result"), [row[1:] for row in MERGES], ids=[row[0] for row in MERGES])
def test_merge_job_spec(template: dict[str, Any], patch: dict[str, Any], result: dict[str, Any]) -> None:
    assert merge_job_spec(template, patch) == result


def test_two_flows_get_different_jobs_from_one_template() -> None:
    small = {"tasks": [{"name": "worker", "replicas": 1}]}
    big = {
        "tasks": [
            {
                "name": "worker",
                "replicas": 6,
                "template": {
                    "spec": {
                        "containers": [{"name": "main", "image": "busybox:1.37", "env": [{"name": "A", "value": "x"}]}]
                    }
                },
            }
        ]
    }
    small_spec, big_spec = merge_job_spec(TEMPLATE, small), merge_job_spec(TEMPLATE, big)
    assert [t["replicas"] for t in small_spec["tasks"]] == [1, 1]
    assert [t["replicas"] for t in big_spec["tasks"]] == [1, 6]
    worker = big_spec["tasks"][1]["template"]["spec"]
    assert worker["containers"] == [
        {"name": "main", "image": "busybox:1.37", "env": [{"name": "A", "value": "x"}, {"name": "B", "value": "2"}]}
    ]
    assert worker["nodeSelector"] == {"disk": "ssd"}
    assert small_spec["tasks"][1]["template"] == TEMPLATE["tasks"][1]["template"]


def test_the_merge_modifies_neither_argument_and_shares_nothing_with_them() -> None:
    template, patch = copy.deepcopy(TEMPLATE), {"tasks": [{"name": "worker", "replicas": 3}], "plugins": {"svc": []}}
    before_template, before_patch = copy.deepcopy(template), copy.deepcopy(patch)
    result = merge_job_spec(template, patch)
    assert (template, patch) == (before_template, before_patch)
    result["tasks"][0]["template"]["spec"]["containers"][0]["image"] = "changed"
    result["plugins"]["svc"].append("x")
    assert (template, patch) == (before_template, before_patch)


# -- a patch task the template lacks --------------------------------------------------------------------
def test_a_patch_task_the_template_lacks_is_an_error_naming_it_and_the_templates_tasks() -> None:
    with pytest.raises(PatchError) as err:
        merge_job_spec(TEMPLATE, {"tasks": [{"name": "worker", "replicas": 2}, {"name": "chief", "replicas": 1}]})
    assert str(err.value) == 'patch.jobSpec.tasks[1]: no task "chief" in the template (its tasks: "ps", "worker")'
    assert err.value.path == "patch.jobSpec.tasks[1]"


def test_a_patch_task_for_a_template_without_tasks_is_an_error() -> None:
    with pytest.raises(
        PatchError, match=r'^patch\.jobSpec\.tasks\[0\]: no task "w" in the template \(it has no tasks\)$'
    ):
        merge_job_spec({"queue": "a"}, {"tasks": [{"name": "w"}]})


def test_a_new_container_env_or_volume_is_not_an_error() -> None:
    patch = {
        "tasks": [
            {
                "name": "ps",
                "template": {
                    "spec": {"containers": [{"name": "new", "env": [{"name": "N"}]}], "volumes": [{"name": "v"}]}
                },
            }
        ]
    }
    spec = merge_job_spec(TEMPLATE, patch)["tasks"][0]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["ps", "new"]
    assert spec["volumes"] == [{"name": "v"}]


# -- apply_patch: a flow's whole `patch` value, as the API server stores it ----------------------------
@pytest.mark.parametrize(
    "patch", [None, {}, {"jobSpec": None}, {"jobSpec": {}}], ids=["absent", "empty", "null", "empty-job-spec"]
)
def test_no_patch_gives_the_template_spec_verbatim(patch: object) -> None:
    assert apply_patch(TEMPLATE, patch) == TEMPLATE


def test_the_crd_defaults_in_a_stored_patch_are_ignored() -> None:
    """The API server writes maxRetry: 3 and queue: default into every patch.jobSpec it stores."""
    stored = {"jobSpec": {"maxRetry": 3, "queue": "default", "tasks": [{"name": "worker", "replicas": 4}]}}
    spec = apply_patch(TEMPLATE, stored)
    assert (spec["queue"], spec["maxRetry"]) == ("research", 5)
    assert spec["tasks"][1]["replicas"] == 4


def test_a_crd_default_inside_an_object_the_patch_writes_is_ignored() -> None:
    """`networkTopology: {highestTierAllowed: 1}` is stored with `mode: hard` added."""
    template = {"networkTopology": {"mode": "soft", "highestTierAllowed": 2}}
    stored = {
        "jobSpec": {"maxRetry": 3, "queue": "default", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    }
    assert apply_patch(template, stored) == {"networkTopology": {"mode": "soft", "highestTierAllowed": 1}}


def test_a_crd_default_inside_a_keyed_entry_is_ignored() -> None:
    """A patch giving an env var another key of the same ConfigMap is stored with `name: ""` added."""
    ref = {"name": "settings", "key": "lr"}
    template = {
        "tasks": [task("w", 1, {"name": "main", "env": [{"name": "LR", "valueFrom": {"configMapKeyRef": ref}}]})]
    }
    env = [{"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "", "key": "lr-big"}}}]
    stored = {
        "jobSpec": {"tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "env": env}]}}}]}
    }
    merged = apply_patch(template, stored)["tasks"][0]["template"]["spec"]["containers"][0]["env"]
    assert merged == [{"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "lr-big"}}}]


def test_entries_of_a_replaced_list_are_taken_as_written() -> None:
    template = {"tasks": [task("w", 1, {"name": "main", "envFrom": [{"configMapRef": {"name": "a"}}]})]}
    env_from = [{"configMapRef": {"name": ""}, "prefix": "X_"}]
    stored = {
        "jobSpec": {
            "tasks": [{"name": "w", "template": {"spec": {"containers": [{"name": "main", "envFrom": env_from}]}}}]
        }
    }
    assert apply_patch(template, stored)["tasks"][0]["template"]["spec"]["containers"][0]["envFrom"] == env_from


def test_a_default_is_told_apart_by_its_json_type() -> None:
    assert apply_patch({"maxRetry": 5}, {"jobSpec": {"maxRetry": 3.0}})["maxRetry"] == 3.0


def test_crd_defaults_are_those_of_the_jobflow_crd() -> None:
    """The table is the CRD's: every `default` under patch.jobSpec in manifests/crds, by field pattern."""
    crd = yaml.safe_load((REPO / "manifests" / "crds" / "flow.volcano.sh_jobflows.yaml").read_text())
    flows = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["flows"]
    found: dict[str, Any] = {}

    def walk(schema: dict[str, Any], pattern: str) -> None:
        if "default" in schema:
            found[pattern] = schema["default"]
        for name, child in (schema.get("properties") or {}).items():
            walk(child, f"{pattern}.{name}" if pattern else name)
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], f"{pattern}[]")

    walk(flows["items"]["properties"]["patch"]["properties"]["jobSpec"], "")
    assert dict(CRD_DEFAULTS) == found


def test_other_values_of_max_retry_and_queue_apply() -> None:
    spec = apply_patch(TEMPLATE, {"jobSpec": {"maxRetry": 0, "queue": "gpu"}})
    assert (spec["queue"], spec["maxRetry"]) == ("gpu", 0)


def test_merge_job_spec_alone_applies_what_looks_like_a_default() -> None:
    assert merge_job_spec(TEMPLATE, {"queue": "default"})["queue"] == "default"


def test_apply_patch_raises_the_first_shape_problem() -> None:
    with pytest.raises(PatchError, match=r"^patch\.jobSpec\.tasks\[0\]: has no name "):
        apply_patch(TEMPLATE, {"jobSpec": {"tasks": [{"replicas": 2}, {"name": "chief"}]}})


# -- patch_problems: what needs no template -------------------------------------------------------------
SHAPES: list[tuple[str, object, list[str]]] = [
    ("absent", None, []),
    ("valid", {"jobSpec": {"tasks": [{"name": "a"}, {"name": "b", "template": pod({"name": "c"})}]}}, []),
    ("nulls-are-deletes", {"jobSpec": {"tasks": None, "minAvailable": None}}, []),
    ("patch-not-an-object", "replicas=3", ["patch: must be an object, not a string"]),
    ("job-spec-not-an-object", {"jobSpec": [1]}, ["patch.jobSpec: must be an object, not an array"]),
    (
        "tasks-not-an-array",
        {"jobSpec": {"tasks": {"name": "a"}}},
        ["patch.jobSpec.tasks: must be an array, not an object"],
    ),
    ("task-not-an-object", {"jobSpec": {"tasks": ["a"]}}, ["patch.jobSpec.tasks[0]: must be an object, not a string"]),
    (
        "task-without-a-name",
        {"jobSpec": {"tasks": [{"name": "a"}, {"replicas": 2}]}},
        ["patch.jobSpec.tasks[1]: has no name (patch entries are matched to the template's by name)"],
    ),
    (
        "task-with-an-empty-name",
        {"jobSpec": {"tasks": [{"name": ""}]}},
        ["patch.jobSpec.tasks[0]: has no name (patch entries are matched to the template's by name)"],
    ),
    (
        "task-name-not-a-string",
        {"jobSpec": {"tasks": [{"name": 7}]}},
        ["patch.jobSpec.tasks[0].name: must be a string, not a number"],
    ),
    (
        "duplicate-task-names",
        {"jobSpec": {"tasks": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}},
        ['patch.jobSpec.tasks[2]: name "a" is already used by tasks[0]'],
    ),
    (
        "template-not-an-object",
        {"jobSpec": {"tasks": [{"name": "a", "template": "x"}]}},
        ["patch.jobSpec.tasks[0].template: must be an object, not a string"],
    ),
    (
        "container-without-a-name",
        {"jobSpec": {"tasks": [{"name": "a", "template": pod({"image": "x"})}]}},
        [
            "patch.jobSpec.tasks[0].template.spec.containers[0]: has no name "
            "(patch entries are matched to the template's by name)"
        ],
    ),
    (
        "duplicate-env-names",
        {"jobSpec": {"tasks": [{"name": "a", "template": pod({"name": "c", "env": [{"name": "E"}, {"name": "E"}]})}]}},
        ['patch.jobSpec.tasks[0].template.spec.containers[0].env[1]: name "E" is already used by env[0]'],
    ),
    (
        "port-without-a-container-port",
        {"jobSpec": {"tasks": [{"name": "a", "template": pod({"name": "c", "ports": [{"name": "http"}]})}]}},
        [
            "patch.jobSpec.tasks[0].template.spec.containers[0].ports[0]: has no containerPort "
            "(patch entries are matched to the template's by containerPort and protocol)"
        ],
    ),
    (
        "container-port-not-an-integer",
        {"jobSpec": {"tasks": [{"name": "a", "template": pod({"name": "c", "ports": [{"containerPort": "80"}]})}]}},
        ["patch.jobSpec.tasks[0].template.spec.containers[0].ports[0].containerPort: must be an integer, not a string"],
    ),
    (
        "duplicate-ports-with-the-default-protocol",
        {
            "jobSpec": {
                "tasks": [
                    {
                        "name": "a",
                        "template": pod(
                            {"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]},
                            {"name": "d", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]},
                        ),
                    }
                ]
            }
        },
        [
            "patch.jobSpec.tasks[0].template.spec.containers[1].ports[1]: "
            "containerPort 80/TCP is already used by ports[0]"
        ],
    ),
    (
        "volume-mount-without-a-mount-path",
        {"jobSpec": {"tasks": [{"name": "a", "template": pod({"name": "c", "volumeMounts": [{"name": "v"}]})}]}},
        [
            "patch.jobSpec.tasks[0].template.spec.containers[0].volumeMounts[0]: has no mountPath "
            "(patch entries are matched to the template's by mountPath)"
        ],
    ),
    (
        "duplicate-init-containers-and-volumes",
        {
            "jobSpec": {
                "tasks": [
                    {
                        "name": "a",
                        "template": pod(
                            initContainers=[{"name": "i"}, {"name": "i"}], volumes=[{"name": "v"}, {"name": "v"}]
                        ),
                    }
                ]
            }
        },
        [
            'patch.jobSpec.tasks[0].template.spec.initContainers[1]: name "i" is already used by initContainers[0]',
            'patch.jobSpec.tasks[0].template.spec.volumes[1]: name "v" is already used by volumes[0]',
        ],
    ),
    (
        "every-problem-in-document-order",
        {"jobSpec": {"tasks": [{"replicas": 1}, {"name": "b", "template": pod({"image": "x"})}, {"name": "b"}]}},
        [
            "patch.jobSpec.tasks[0]: has no name (patch entries are matched to the template's by name)",
            "patch.jobSpec.tasks[1].template.spec.containers[0]: has no name "
            "(patch entries are matched to the template's by name)",
            'patch.jobSpec.tasks[2]: name "b" is already used by tasks[1]',
        ],
    ),
    (
        "unkeyed-lists-need-no-keys",
        {"jobSpec": {"policies": [{"action": "x"}, {"action": "x"}], "volumes": [{}]}},
        [],
    ),
]


@pytest.mark.parametrize(("patch", "problems"), [row[1:] for row in SHAPES], ids=[row[0] for row in SHAPES])
def test_patch_problems(patch: object, problems: list[str]) -> None:
    assert [str(p) for p in patch_problems(patch)] == problems
