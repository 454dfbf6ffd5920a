"""The builder: the names the issue fixes, what each writes, and the YAML's stable order."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from jobflow_sdk import Flow, JobFlow, JobTemplate


def issue_pipeline() -> JobFlow:
    with JobFlow("ml-pipeline", namespace="team-a", params={"dataset": "s3://d/1"}) as jf:
        prep = jf.flow("data-preprocess")
        train = jf.flow("model-training", matrix={"lr": ["0.1", "0.01"]}, max_parallel=1)
        report = jf.flow("model-evaluation", when=[("$(params.dataset)", "notin", ["x"])])
        prep >> train >> report
    return jf


def test_the_issues_pipeline_renders_the_jobflow_it_reads_as() -> None:
    assert issue_pipeline().to_dict() == {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "ml-pipeline", "namespace": "team-a"},
        "spec": {
            "params": [{"name": "dataset", "value": "s3://d/1"}],
            "flows": [
                {"name": "data-preprocess"},
                {
                    "name": "model-training",
                    "dependsOn": {"targets": ["data-preprocess"]},
                    "matrix": {"params": [{"name": "lr", "values": ["0.1", "0.01"]}], "maxParallel": 1},
                },
                {
                    "name": "model-evaluation",
                    "dependsOn": {"targets": ["model-training"]},
                    "when": [{"input": "$(params.dataset)", "operator": "notin", "values": ["x"]}],
                },
            ],
        },
    }


def test_the_issues_pipeline_is_valid() -> None:
    assert issue_pipeline().validate() == []


def targets(jf: JobFlow) -> dict[str, list[str]]:
    return {f.name: f.targets for f in jf.flows}


def test_a_list_shifted_into_a_flow_makes_it_wait_for_each() -> None:
    with JobFlow("p") as jf:
        a, b, c = jf.flow("a"), jf.flow("b"), jf.flow("c")
        result = [a, b] >> c
    assert result is c
    assert targets(jf) == {"a": [], "b": [], "c": ["a", "b"]}


def test_a_flow_shifted_into_a_list_fans_out() -> None:
    with JobFlow("p") as jf:
        a, b, c = jf.flow("a"), jf.flow("b"), jf.flow("c")
        a >> [b, c]
    assert targets(jf) == {"a": [], "b": ["a"], "c": ["a"]}


def test_after_takes_flows_and_names_and_never_repeats_a_target() -> None:
    with JobFlow("p") as jf:
        a = jf.flow("a")
        b = jf.flow("b", after=[a, "a"])
        a >> b
    assert b.targets == ["a"]


def test_max_parallel_without_a_matrix_is_refused() -> None:
    with pytest.raises(ValueError, match="max_parallel needs a matrix"):
        Flow("x", max_parallel=2)


def test_every_flow_field_has_its_crd_name_in_a_fixed_order() -> None:
    flow = Flow(
        "x",
        after="a",
        rule="AllDone",
        when=[("$(params.m)", "in", "full")],
        matrix={"lr": "0.1"},
        continue_on_failure=True,
        retry=3,
        active_deadline_seconds=60,
        patch={"jobSpec": {"queue": "q"}},
    )
    assert list(flow.to_dict()) == [
        "name",
        "dependsOn",
        "when",
        "matrix",
        "continueOnFailure",
        "retry",
        "activeDeadlineSeconds",
        "patch",
    ]
    assert flow.to_dict()["dependsOn"] == {"targets": ["a"], "rule": "AllDone"}
    assert flow.to_dict()["when"] == [{"input": "$(params.m)", "operator": "in", "values": ["full"]}]
    assert flow.to_dict()["retry"] == {"maxRetries": 3}


def test_a_flow_given_a_template_takes_its_name_and_the_jobflows_namespace() -> None:
    train = JobTemplate("train", image="reg/train:1", command=["python", "train.py"])
    with JobFlow("p", namespace="team-a") as jf:
        flow = jf.flow(train)
        jf.flow(train, after=flow)  # the same template twice is sent once
    assert flow.name == "train"
    assert jf.templates == [train]
    assert train.to_dict()["metadata"] == {"name": "train", "namespace": "team-a"}


def test_a_template_from_an_image_is_a_one_task_volcano_job() -> None:
    template = JobTemplate(
        "train",
        image="reg/train:1",
        command=["python"],
        args=["train.py"],
        env={"A": "1"},
        resources={"limits": {"cpu": "1"}},
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
        replicas=2,
    )
    spec: dict[str, Any] = template.to_dict()["spec"]
    assert spec["minAvailable"] == 2 and spec["schedulerName"] == "volcano"
    [task] = spec["tasks"]
    assert task["replicas"] == 2 and task["name"] == "train"
    pod = task["template"]["spec"]
    assert pod["restartPolicy"] == "OnFailure" and pod["volumes"] == [{"name": "data", "emptyDir": {}}]
    assert pod["containers"] == [
        {
            "name": "train",
            "image": "reg/train:1",
            "command": ["python"],
            "args": ["train.py"],
            "env": [{"name": "A", "value": "1"}],
            "resources": {"limits": {"cpu": "1"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        }
    ]
    assert template.validate() == []


def test_a_template_needs_an_image_or_a_spec_not_both() -> None:
    with pytest.raises(ValueError, match=r"either image= .* or spec="):
        JobTemplate("x")
    with pytest.raises(ValueError, match="either image="):
        JobTemplate("x", image="i", spec={"tasks": []})


def test_param_references_only_a_declared_param() -> None:
    jf = JobFlow("p", params={"mode": "full"})
    assert jf.param("mode") == "$(params.mode)"
    with pytest.raises(KeyError, match="no param 'other'"):
        jf.param("other")


def test_matrix_ref_references_only_the_flows_matrix() -> None:
    flow = Flow("train", matrix={"lr": ["0.1"]})
    assert flow.matrix_ref("lr") == "$(matrix.lr)"
    with pytest.raises(KeyError):
        flow.matrix_ref("seed")


def test_a_flow_declares_its_results_and_later_flows_reference_them() -> None:
    """Results between flows (docs/results.md): the declaration in the CRD's shape, the references
    checked against it, a matrix flow's as the JSON array, and the round trip."""
    with JobFlow("p", results={"best": "$(flows.train.results.model)"}) as jf:
        train = jf.flow("train", results=["accuracy", "model"], results_from="master")
        sweep = jf.flow("sweep", matrix={"lr": ["0.1", "0.01"]}, results=["loss"])
        publish = jf.flow("publish", when=[(train.results.accuracy, "in", ["0.95"])])
        [train, sweep] >> publish
    assert train.to_dict()["results"] == {"from": {"task": "master"}, "names": ["accuracy", "model"]}
    assert list(sweep.to_dict()) == ["name", "matrix", "results"]
    assert train.results.model == "$(flows.train.results.model)"
    assert sweep.results["loss"] == "$(flows.sweep.results.loss[*])"
    assert publish.to_dict()["when"][0]["input"] == "$(flows.train.results.accuracy)"
    with pytest.raises(KeyError, match="declares no result 'f1'"):
        _ = train.results.f1
    with pytest.raises(ValueError, match="results_from needs results"):
        Flow("x", results_from="master")
    assert jf.to_dict()["spec"]["results"] == [{"name": "best", "value": "$(flows.train.results.model)"}]
    assert JobFlow.from_dict(jf.to_dict()).to_dict() == jf.to_dict()
    assert jf.validate() == []


def test_results_reads_each_jobs_results_and_the_jobflows_own_from_the_status() -> None:
    jf = JobFlow("p")
    status = {
        "jobStatusList": [{"name": "p-train", "results": {"accuracy": "0.93"}}, {"name": "p-b"}],
        "results": [{"name": "best", "value": "s3://m/42"}, {"name": "bad", "value": 7}],
    }
    jf.get = lambda: {"status": status}  # type: ignore[method-assign]
    assert jf.results() == {"jobs": {"p-train": {"accuracy": "0.93"}}, "results": {"best": "s3://m/42"}}
    jf.get = lambda: {"status": {}}  # type: ignore[method-assign]
    assert jf.results() == {"jobs": {}, "results": {}}


def test_finally_flows_are_written_after_the_flows() -> None:
    with JobFlow("p", failure_policy="RunToCompletion") as jf:
        jf.flow("a")
        jf.finally_flow("notify")
    spec = jf.to_dict()["spec"]
    assert list(spec) == ["failurePolicy", "flows", "finally"]
    assert spec["finally"] == [{"name": "notify"}]


def test_to_yaml_keeps_the_builders_key_order_and_is_stable() -> None:
    text = issue_pipeline().to_yaml()
    assert text == issue_pipeline().to_yaml()
    assert text.startswith("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: ml-pipeline\n")
    assert text.index("params:") < text.index("flows:")
    assert "&id" not in text


def test_to_yaml_with_templates_puts_them_first() -> None:
    with JobFlow("p") as jf:
        jf.flow(JobTemplate("a", image="i"))
    kinds = [d["kind"] for d in yaml.safe_load_all(jf.to_yaml(templates=True))]
    assert kinds == ["JobTemplate", "JobFlow"]


def test_from_dict_then_to_dict_is_the_same_object() -> None:
    original = issue_pipeline().to_dict()
    original["spec"]["flows"][0]["retry"] = {"maxRetries": 2, "backoff": "10s"}
    original["spec"]["flows"][1]["dependsOn"]["probe"] = {"taskStatusList": [{"taskName": "t", "phase": "Running"}]}
    original["spec"]["suspend"] = False
    assert JobFlow.from_dict(original).to_dict() == original


def test_from_yaml_reads_the_templates_beside_the_jobflow() -> None:
    with JobFlow("p", namespace="ns") as jf:
        jf.flow(JobTemplate("a", image="i")) >> jf.flow(JobTemplate("b", image="j"))
    again = JobFlow.from_yaml(jf.to_yaml(templates=True))
    assert again.to_dict() == jf.to_dict()
    assert [t.to_dict() for t in again.templates] == [t.to_dict() for t in jf.templates]


def test_the_notebook_picture_is_an_svg_with_every_flow() -> None:
    picture = issue_pipeline()._repr_svg_()
    assert picture.startswith("<svg") and picture.endswith("</svg>")
    for name in ("data-preprocess", "model-training", "model-evaluation"):
        assert f">{name}</text>" in picture
    assert picture.count("<polyline") == 2


def test_a_string_when_is_a_cel_item() -> None:
    flow = Flow("publish", after="train", when=["double(flows['train'].results['acc']) >= 0.9", ("x", "in", "x")])
    assert flow.to_dict()["when"] == [
        {"cel": "double(flows['train'].results['acc']) >= 0.9"},
        {"input": "x", "operator": "in", "values": ["x"]},
    ]
