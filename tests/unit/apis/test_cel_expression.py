"""The CEL seam (jobflow_controller/apis/cel_expression.py): our static limits, the library's refusals and
evaluation errors as `CelError`, one rule per row."""

from __future__ import annotations

import pytest

from jobflow_controller.apis.cel_expression import (
    MAX_ADDITIONS,
    MAX_CEL_LENGTH,
    MAX_COMPREHENSIONS,
    MAX_CONTAINER_ITEMS,
    MAX_INPUT_CHARS,
    MAX_INPUT_ITEMS,
    MAX_MATCHES,
    MAX_NESTING,
    MAX_PATTERN_LENGTH,
    CelError,
    compile_cel,
    evaluate_cel,
)

VARIABLES = {
    "params": {"mode": "full", "n": "3"},
    "flows": {"train": {"results": {"accuracy": "0.93"}}, "shard": {"results": {"n": ["1", "2", "3"]}}},
    "context": {"jobflow.name": "jf"},
}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("double(flows['train'].results['accuracy']) >= 0.9", True),
        ("double(flows['train'].results['accuracy']) >= 0.95", False),
        ("params['mode'] == 'full' && context['jobflow.name'] == 'jf'", True),
        ("params.mode in ['full', 'incremental']", True),
        ("flows['shard'].results['n'].all(x, x in ['1', '2', '3'])", True),
        ("flows['shard'].results['n'].all(x, int(x) > 0)", True),
        ("flows['shard'].results['n'].exists(x, x == '2')", True),
        ("size(flows['shard'].results['n'].filter(x, int(x) > 1)) == 2", True),
        ("flows['shard'].results['n'].filter(x, int(x) > 2).exists_one(x, x == '3')", True),
        ("has(params.mode) && !has(params.other)", True),
        ("'a' + 'b'", "ab"),
        ("int(params.n) * 2", 6),
        ("params.mode.startsWith('fu') && params.mode.matches('^f.+l$')", True),
        ("'x' // a comment ((((\n == 'x'", True),
        ("r'\\d' == '\\\\d' && '''(((''' == '((('", True),
    ],
)
def test_an_expression_evaluates_to_its_value(text: str, value: object) -> None:
    assert evaluate_cel(compile_cel(text), VARIABLES) == value


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("x" * (MAX_CEL_LENGTH + 1), f"longer than {MAX_CEL_LENGTH} characters"),
        ("(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1), f"nested deeper than {MAX_NESTING}"),
        ("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), f"nested deeper than {MAX_NESTING}"),
        ("[1].all(x, [2].exists(y, x == y))", "a comprehension inside another"),
        ("[1].filter(x, [x].all(y, y > 0))", "a comprehension inside another"),
        ("[1].map(x, x)", "map() is not allowed"),
        ("[1].all(x, x in params.list)", "'in' takes a list literal"),
        ("[1].all(x, " + "x > 0 && " * 12 + "true)", "a comprehension longer than"),
        ("'a'.matches('a') && 'b'.matches('b') && 'c'.matches('c')", f"more than {MAX_MATCHES} matches() calls"),
        ("['a'].all(x, x.matches('a'))", "matches() inside a comprehension"),
        ("'a'.matches(params.mode)", "matches() takes one string literal"),
        ("'a'.matches('a' + 'b')", "matches() takes one string literal"),
        ("'a'.matches('(a{9}){9}')", "without {n} repetition"),
        ("'a'.matches('" + "a" * (MAX_PATTERN_LENGTH + 1) + "')", f"at most {MAX_PATTERN_LENGTH} characters"),
        (
            " && ".join(["[1].all(x, x > 0)"] * (MAX_COMPREHENSIONS + 1)),
            f"more than {MAX_COMPREHENSIONS} comprehensions",
        ),
        ("'a'" + " + 'a'" * (MAX_ADDITIONS + 1), f"more than {MAX_ADDITIONS} '+' operators"),
        ("'abc", "unterminated string"),
        ("params.mode ==", "Syntax error"),
        ("params.?mode", "unsupported syntax"),
    ],
)
def test_a_refused_expression_names_why(text: str, error: str) -> None:
    with pytest.raises(CelError, match=None) as raised:
        compile_cel(text)
    assert error in str(raised.value)


@pytest.mark.parametrize(
    "text",
    [
        "'((((((((((((((((((((((((((((((((((((' == ''",  # brackets in a string are text
        "'+ + + + + + + + + + + +' != ''",  # so are operators
        "\"map(x, all(\" + 'y' == 'map(x, all(y'",
        "[1].all(x, x > 0) && [2].all(y, y > 0)",  # one after another is fine
        "[1, 2].filter(y, y > 1).all(z, z > 0)",  # a chain too
        "{'map': 1}.map == 1",  # a field named map is no call
        "1e+5 > 1.0",  # an exponent's sign is no operator
    ],
)
def test_text_within_the_limits_compiles(text: str) -> None:
    compile_cel(text)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("flows['missing'].results['x'] == ''", "no such key: 'missing'"),
        ("int(params.mode) > 1", "Function 'int' error"),
        ("params.mode + 1", "Unsupported operation: string + int"),
        ("1 / 0 == 1", "division by zero"),
        ("9223372036854775807 + 1 > 0", "overflow"),
        ("[1][5] == 1", "index error"),
        ("params.mode.split(',') == []", "Undefined variable or function: 'split'"),
    ],
)
def test_an_evaluation_error_is_a_cel_error(text: str, error: str) -> None:
    with pytest.raises(CelError) as raised:
        evaluate_cel(compile_cel(text), VARIABLES)
    assert error in str(raised.value)


def test_a_cel_error_is_a_value_error() -> None:
    assert issubclass(CelError, ValueError)


def test_the_same_text_compiles_once() -> None:
    assert compile_cel("params.mode == 'x'") is compile_cel("params.mode == 'x'")


@pytest.mark.parametrize(
    "variables",
    [
        {"params": {"a": "x" * (MAX_INPUT_CHARS + 1)}},
        {"params": {"a": ["x"] * (MAX_INPUT_ITEMS + 1)}},
        {"params": {f"k{i}": "v" for i in range(MAX_INPUT_ITEMS)}},
        {"params": {"a": object()}},
        {"params": {"a": ["x"] * (MAX_CONTAINER_ITEMS + 1)}},
    ],
)
def test_variables_over_the_limits_are_refused(variables: dict[str, object]) -> None:
    with pytest.raises(CelError, match="variable"):
        evaluate_cel(compile_cel("true"), variables)


def test_a_compiled_program_runs_on_another_thread() -> None:
    import threading

    compiled = compile_cel("params.mode == 'full'")
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(evaluate_cel(compiled, VARIABLES)))
    thread.start()
    thread.join()
    assert out == [True]


def test_the_deepest_admitted_expressions_run_on_a_1_mib_thread_stack() -> None:
    """The library evaluates on the calling thread's stack, and a Rust stack overflow kills the process
    (measured: 510 levels crash a 256 KiB stack). The length limit bounds the depth to ~512 levels;
    our threads have Python's default stack (8 MiB on Linux): here an eighth of it suffices, in a child
    process so that a crash fails the test instead of killing the test run."""
    import subprocess
    import sys

    script = """
import threading
from jobflow_controller.apis.cel_expression import CelError, compile_cel, evaluate_cel, MAX_CEL_LENGTH
deep = ["1" + "-1" * 511, "params" + ".a" * 509, "params" + "['a']" * 202, "true" + " && true" * 127,
        "1" + " == 1" * 203, "-" * 1023 + "1", "!" * 1020 + "true"]
def run():
    for text in deep:
        assert len(text) <= MAX_CEL_LENGTH, len(text)
        try:
            evaluate_cel(compile_cel(text), {"params": {}})
        except CelError:
            pass
    print("ok")
threading.stack_size(1024 * 1024)
thread = threading.Thread(target=run)
thread.start()
thread.join()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]
