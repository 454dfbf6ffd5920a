"""Admission of `spec.params`, `when` and `matrix`: each refused value and its exact message (docs/params.md)."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.validation import validate_job_flow, validation_message
from jobflow_controller.validation.jobflow import flows_changed


def jf(flows: list[dict[str, Any]], name: str = "jf", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"flows": flows, **spec}}


def matrix(*lists: tuple[str, list[Any]], **extra: Any) -> dict[str, Any]:
    return {"params": [{"name": n, "values": v} for n, v in lists], **extra}


WHEN_OK = [{"input": "$(params.mode)", "operator": "in", "values": ["full"]}]

REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "params-not-a-list",
        jf([{"name": "a"}], params={"mode": "full"}),
        'jobflow params: must be a list of {name, value} entries, got {"mode": "full"}',
    ),
    (
        "param-not-an-object",
        jf([{"name": "a"}], params=["mode"]),
        'jobflow params[0]: must be an object with a name and value, got "mode"',
    ),
    (
        "param-name-invalid",
        jf([{"name": "a"}], params=[{"name": "1mode", "value": "x"}]),
        'jobflow params[0].name: must match [A-Za-z_][A-Za-z0-9_-]*, got "1mode"',
    ),
    (
        "param-name-with-a-dot",
        jf([{"name": "a"}], params=[{"name": "a.b", "value": "x"}]),
        'jobflow params[0].name: must match [A-Za-z_][A-Za-z0-9_-]*, got "a.b"',
    ),
    (
        "param-name-missing",
        jf([{"name": "a"}], params=[{"value": "x"}]),
        "jobflow params[0].name: must match [A-Za-z_][A-Za-z0-9_-]*, got null",
    ),
    (
        "param-name-repeated",
        jf([{"name": "a"}], params=[{"name": "mode", "value": "x"}, {"name": "mode", "value": "y"}]),
        'jobflow params[1].name: "mode" is already used by params[0]',
    ),
    (
        "param-value-not-a-string",
        jf([{"name": "a"}], params=[{"name": "n", "value": 3}]),
        "jobflow params[0].value: must be a string, got 3",
    ),
    (
        "when-not-a-list",
        jf([{"name": "a", "when": {"input": "x"}}]),
        'jobflow Flow "a": when: must be a list of {input, operator, values} expressions, got {"input": "x"}',
    ),
    (
        "when-operator-unknown",
        jf([{"name": "a", "when": [{"input": "x", "operator": "eq", "values": ["x"]}]}]),
        'jobflow Flow "a": when[0].operator: must be one of in, notin, got "eq"',
    ),
    (
        "when-operator-missing",
        jf([{"name": "a", "when": [{"input": "x", "values": ["x"]}]}]),
        'jobflow Flow "a": when[0].operator: must be one of in, notin, got null',
    ),
    (
        "when-values-empty",
        jf([{"name": "a", "when": [{"input": "x", "operator": "in", "values": []}]}]),
        'jobflow Flow "a": when[0].values: must be a non-empty list of strings, got []',
    ),
    (
        "when-value-not-a-string",
        jf([{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["a", 1]}]}]),
        'jobflow Flow "a": when[0].values[1]: must be a string, got 1',
    ),
    (
        "when-input-not-a-string",
        jf([{"name": "a", "when": [{"input": 5, "operator": "in", "values": ["5"]}]}]),
        'jobflow Flow "a": when[0].input: must be a string, got 5',
    ),
    (
        "matrix-without-params",
        jf([{"name": "a", "matrix": {"maxParallel": 2}}]),
        'jobflow Flow "a": matrix.params: must list at least one parameter',
    ),
    (
        "matrix-empty-params",
        jf([{"name": "a", "matrix": {"params": []}}]),
        'jobflow Flow "a": matrix.params: must list at least one parameter',
    ),
    (
        "matrix-empty-value-list",
        jf([{"name": "a", "matrix": matrix(("lr", ["0.1"]), ("seed", []))}]),
        'jobflow Flow "a": matrix.params[1].values: must be a non-empty list of strings, got []',
    ),
    (
        "matrix-name-repeated",
        jf([{"name": "a", "matrix": matrix(("lr", ["0.1"]), ("lr", ["1"]))}]),
        'jobflow Flow "a": matrix.params[1].name: "lr" is already used by matrix.params[0]',
    ),
    (
        "matrix-name-invalid",
        jf([{"name": "a", "matrix": matrix(("l r", ["0.1"]))}]),
        'jobflow Flow "a": matrix.params[0].name: must match [A-Za-z_][A-Za-z0-9_-]*, got "l r"',
    ),
    (
        "matrix-over-256",
        jf([{"name": "a", "matrix": matrix(("x", [str(i) for i in range(16)]), ("y", [str(i) for i in range(17)]))}]),
        'jobflow Flow "a": matrix: has 272 combinations, more than the 256 allowed',
    ),
    (
        "matrix-max-parallel-zero",
        jf([{"name": "a", "matrix": matrix(("x", ["1"]), maxParallel=0)}]),
        'jobflow Flow "a": matrix.maxParallel: must be an integer of at least 1, got 0',
    ),
    (
        "matrix-max-parallel-not-an-integer",
        jf([{"name": "a", "matrix": matrix(("x", ["1"]), maxParallel="2")}]),
        'jobflow Flow "a": matrix.maxParallel: must be an integer of at least 1, got "2"',
    ),
    (
        "matrix-not-an-object",
        jf([{"name": "a", "matrix": ["x"]}]),
        'jobflow Flow "a": matrix: must be an object with params, got ["x"]',
    ),
    (
        "matrix-last-job-name-too-long",
        jf([{"name": "train", "matrix": matrix(("x", [str(i) for i in range(10)]), ("y", ["1", "2"]))}], name="j" * 55),
        f'jobflow Flow "train": matrix: Job name "{"j" * 55}-train-19" is 64 characters long, it must be at most 63',
    ),
    (
        "over-500-jobs-counting-matrix-indexes",
        jf([{"name": f"f{i}", "matrix": matrix(("x", [str(j) for j in range(200)]))} for i in range(3)]),
        "jobflow has 600 Jobs counting every matrix index, more than the 500 allowed",
    ),
    # Issue 42: the expansion budget's per-string bound, and the caps on `when` (the CRD's bounds).
    (
        "param-value-too-long",
        jf([{"name": "a"}], params=[{"name": "n", "value": "x" * 4097}]),
        "jobflow params[0].value: is 4097 characters long, more than the 4096 allowed",
    ),
    (
        "param-name-too-long",
        jf([{"name": "a"}], params=[{"name": "n" * 64, "value": "x"}]),
        "jobflow params[0].name: is 64 characters long, more than the 63 allowed",
    ),
    (
        "when-input-too-long",
        jf([{"name": "a"}, {"name": "train", "when": [{"input": "x" * 5000, "operator": "in", "values": ["x"]}]}]),
        'jobflow Flow "train": when[0].input: is 5000 characters long, more than the 4096 allowed',
    ),
    (
        "when-value-too-long",
        jf([{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["x", "y" * 4097]}]}]),
        'jobflow Flow "a": when[0].values[1]: is 4097 characters long, more than the 4096 allowed',
    ),
    (
        "when-too-many-expressions",
        jf([{"name": "a", "when": WHEN_OK * 17}]),
        'jobflow Flow "a": when: has 17 expressions, more than the 16 allowed',
    ),
    (
        "when-too-many-values",
        jf([{"name": "a", "when": [{"input": "x", "operator": "in", "values": ["v"] * 65}]}]),
        'jobflow Flow "a": when[0].values: has 65 values, more than the 64 allowed',
    ),
    (
        "matrix-value-too-long",
        jf([{"name": "a", "matrix": matrix(("x", ["1", "2" * 4097]))}]),
        'jobflow Flow "a": matrix.params[0].values[1]: is 4097 characters long, more than the 4096 allowed',
    ),
    (
        "matrix-name-too-long",
        jf([{"name": "a", "matrix": matrix(("x" * 64, ["1"]))}]),
        'jobflow Flow "a": matrix.params[0].name: is 64 characters long, more than the 63 allowed',
    ),
    # when[].cel (docs/results.md): cel or input/operator/values, never both nor neither; compiled.
    (
        "when-cel-and-input",
        jf([{"name": "a", "when": [{"cel": "true", "input": "x", "operator": "in", "values": ["x"]}]}]),
        'jobflow Flow "a": when[0]: sets cel and input, operator, values: cel replaces input, operator and values',
    ),
    (
        "when-neither",
        jf([{"name": "a", "when": [{}]}]),
        'jobflow Flow "a": when[0]: must set cel, or input, operator and values',
    ),
    (
        "when-cel-not-a-string",
        jf([{"name": "a", "when": [{"cel": 3}]}]),
        'jobflow Flow "a": when[0].cel: must be a string, got int',
    ),
    (
        "when-cel-too-long",
        jf([{"name": "a", "when": [{"cel": "true" + " " * 1024}]}]),
        'jobflow Flow "a": when[0].cel: longer than 1024 characters (1028)',
    ),
    (
        "when-cel-map",
        jf([{"name": "a", "when": [{"cel": "[1].map(x, x) == [1]"}]}]),
        'jobflow Flow "a": when[0].cel: map() is not allowed: its result can hold a copy of the variables for each'
        " element (use all, exists, exists_one, filter)",
    ),
]


@pytest.mark.parametrize(("job_flow", "message"), [(j, m) for _, j, m in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_refused_with_message(job_flow: dict[str, Any], message: str) -> None:
    assert message in validate_job_flow(job_flow)


def test_more_than_16_cel_items_are_refused_and_none_is_compiled() -> None:
    when = [{"cel": "params.mode =="}] * 16  # would not compile: not even tried
    flows = [{"name": f"f{i}", "when": when} for i in range(3)]
    assert validate_job_flow(jf(flows)) == ["jobflow has 48 when items with cel, more than the 16 allowed"]
    assert validate_job_flow(jf([{"name": "f", "when": [{"cel": "true"}] * 16}] * 1)) == []


def test_a_cel_that_does_not_compile_is_refused_with_the_librarys_message() -> None:
    when = [WHEN_OK[0], {"cel": "params.mode =="}]
    (problem,) = validate_job_flow(jf([{"name": "a", "when": when}]))
    assert problem.startswith("jobflow Flow \"a\": when[1].cel: Failed to parse expression 'params.mode =='")
    assert "Syntax error" in problem


def test_a_cel_item_beside_an_input_item_is_admitted() -> None:
    when = [WHEN_OK[0], {"cel": "double(flows['train'].results['acc']) >= 0.9 && params['mode'] == 'full'"}]
    assert validate_job_flow(jf([{"name": "a", "when": when}])) == []


def test_the_issue_example_is_admitted() -> None:
    flows = [
        {"name": "prepare", "when": [{"input": "$(params.mode)", "operator": "in", "values": ["full", "incremental"]}]},
        {
            "name": "train",
            "dependsOn": {"targets": ["prepare"]},
            "matrix": matrix(("lr", ["0.1", "0.01"]), ("seed", ["1", "2", "3"]), maxParallel=2),
        },
        {"name": "report", "dependsOn": {"targets": ["train"]}},
    ]
    params = [{"name": "dataset", "value": "s3://bucket/2026-12-05"}, {"name": "mode", "value": "full"}]
    assert validation_message(jf(flows, name="tune", params=params)) is None


def test_256_combinations_and_500_jobs_are_allowed() -> None:
    flows = [{"name": "a", "matrix": matrix(("x", [str(i) for i in range(16)]), ("y", [str(i) for i in range(16)]))}]
    flows += [{"name": f"f{i}"} for i in range(244)]
    assert validation_message(jf(flows)) is None


def test_a_matrix_job_name_of_63_characters_is_allowed() -> None:
    # 55 + "-train" + "-9": the last of ten indexes is 9.
    flows = [{"name": "train", "matrix": matrix(("x", [str(i) for i in range(10)]))}]
    assert validation_message(jf(flows, name="j" * 55)) is None


def test_an_update_that_changes_params_is_checked_in_full() -> None:
    old = jf([{"name": "a"}], params=[{"name": "m", "value": "x"}])
    new = jf([{"name": "a"}], params=[{"name": "m", "value": "y"}])
    assert flows_changed(new, old)
    assert not flows_changed(old, old)


def test_the_caps_on_params_and_matrix_lists() -> None:
    params = [{"name": f"p{i}", "value": "x"} for i in range(101)]
    assert "jobflow has 101 params, more than the 100 allowed" in validate_job_flow(jf([{"name": "a"}], params=params))
    lists = tuple((f"x{i}", ["1"]) for i in range(17))
    problems = validate_job_flow(jf([{"name": "a", "matrix": matrix(*lists)}]))
    assert 'jobflow Flow "a": matrix.params: has 17 lists, more than the 16 allowed' in problems


def test_a_matrix_job_may_not_be_another_flows_job() -> None:
    flows = [{"name": "train", "matrix": matrix(("x", ["1", "2"]))}, {"name": "train-1"}]
    assert (
        'jobflow Flow "train": matrix: its Job "<jobflow>-train-1" would be the Job'
        ' of the flow or finally entry "train-1"' in validate_job_flow(jf(flows))
    )


def test_a_probe_may_not_wait_on_a_matrix_flow() -> None:
    flows = [
        {"name": "train", "matrix": matrix(("x", ["1", "2"]))},
        {"name": "serve", "dependsOn": {"targets": ["train"], "probe": {"taskStatusList": [{"phase": "Running"}]}}},
    ]
    assert (
        'jobflow Flow "serve": dependsOn.probe: cannot wait on the matrix flow "train"'
        " (a probe checks one Job per target)" in validate_job_flow(jf(flows))
    )


def test_every_string_and_list_at_its_bound_is_allowed() -> None:
    when = [{"input": "i" * 4096, "operator": "notin", "values": ["v" * 4096] * 64}] * 16
    flows = [{"name": "a", "when": when, "matrix": matrix(("m" * 63, ["x" * 4096] * 256))}]
    assert validation_message(jf(flows, params=[{"name": "p" * 63, "value": "x" * 4096}])) is None


def test_a_huge_value_is_measured_never_quoted() -> None:
    problems = validate_job_flow(jf([{"name": "a"}], params=[{"name": "n", "value": "x" * 1_000_000}]))
    assert problems == ["jobflow params[0].value: is 1000000 characters long, more than the 4096 allowed"]


def test_past_a_lists_cap_only_the_first_entries_are_looked_at() -> None:
    # 100,000 bad values and 10,000 bad expressions: the count, and at most the cap's worth of entries.
    bad_values = [{"input": "x", "operator": "in", "values": [0] * 100_000}]
    problems = validate_job_flow(jf([{"name": "a", "when": bad_values}, {"name": "b", "when": [0] * 10_000}]))
    assert problems[0] == 'jobflow Flow "a": when[0].values: has 100000 values, more than the 64 allowed'
    assert problems[65] == 'jobflow Flow "b": when: has 10000 expressions, more than the 16 allowed'
    assert len(problems) == 1 + 64 + 1 + 16
