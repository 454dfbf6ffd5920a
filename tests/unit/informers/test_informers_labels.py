"""Label selectors (apimachinery ``labels/selector_test.go``): parse, match, print, build."""

from __future__ import annotations

import informers_selectors as selectors
import pytest
from informers_selectors import InvalidSelectorError, add, new_requirement, requires_exact_match

from informers import labels
from informers.labels import Operator


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("x=a", "x=a"),
        ("x==a", "x==a"),
        ("x!=a", "x!=a"),
        ("x=a,y!=b", "x=a,y!=b"),
        ("y!=b,x=a", "x=a,y!=b"),
        ("x in (a)", "x in (a)"),
        ("x in (b,a)", "x in (a,b)"),
        ("x notin (a, b)", "x notin (a,b)"),
        ("x", "x"),
        ("!x", "!x"),
        ("  x  ,  !y  ", "x,!y"),
        ("x=", "x="),
        ("x in ()", "x in ()"),
        ("x>1", "x>1"),
        ("x<1", "x<1"),
        (
            "volcano.sh/createdByJobFlow in (default.ml-pipeline)",
            "volcano.sh/createdByJobFlow in (default.ml-pipeline)",
        ),
        ("in in (in)", "in in (in)"),
    ],
)
def test_parse_and_print_canonically(text: str, canonical: str) -> None:
    assert str(selectors.parse(text)) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "x=a||y=b",
        "x==a==b",
        "!x=a",
        "x in",
        "x in (a",
        "x in a)",
        "x notin ()y",
        "x>a",
        "x,",
        ",x",
        "x=a,",
        "bad/key/name=a",
        "x=" + "v" * 64,
        "-x=a",
        "x=a b",
    ],
)
def test_parse_rejects_invalid_selectors(text: str) -> None:
    with pytest.raises(InvalidSelectorError):
        selectors.parse(text)


@pytest.mark.parametrize(
    ("text", "present", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=z", {"x": "y"}, False),
        ("x==y", {"x": "y"}, True),
        ("x!=y", {"x": "y"}, False),
        ("x!=z", {"x": "y"}, True),
        ("x!=z", {}, True),  # a != requirement matches objects without the key
        ("x in (y,z)", {"x": "y"}, True),
        ("x in (y,z)", {}, False),
        ("x notin (y,z)", {"x": "y"}, False),
        ("x notin (y,z)", {"x": "w"}, True),
        ("x notin (y,z)", {}, True),
        ("x", {"x": ""}, True),
        ("x", {"y": "z"}, False),
        ("!x", {"y": "z"}, True),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "2"}, True),
        ("x>1", {"x": "1"}, False),
        ("x<1", {"x": "0"}, True),
        ("x>1", {"x": "abc"}, False),
        ("x>1", {}, False),
        ("x=y,z in (a)", {"x": "y", "z": "a"}, True),
        ("x=y,z in (a)", {"x": "y", "z": "b"}, False),
        ("x=", {"x": ""}, True),
    ],
)
def test_matches(text: str, present: dict[str, str], expected: bool) -> None:
    assert selectors.parse(text).matches(present) is expected


def test_the_jobflow_selector_can_be_built_programmatically() -> None:
    requirement = new_requirement("volcano.sh/createdByJobFlow", Operator.IN, ["default.ml-pipeline"])
    selector = add(labels.everything(), requirement)
    assert str(selector) == "volcano.sh/createdByJobFlow in (default.ml-pipeline)"
    assert selector == selectors.parse("volcano.sh/createdByJobFlow in (default.ml-pipeline)")
    assert selector.matches({"volcano.sh/createdByJobFlow": "default.ml-pipeline"})
    assert not selector.matches({"volcano.sh/createdByJobFlow": "default.other"})


def test_requirements_are_validated() -> None:
    with pytest.raises(InvalidSelectorError, match="values set can't be empty"):
        new_requirement("x", Operator.IN, [])
    with pytest.raises(InvalidSelectorError, match="exact-match compatibility requires one single value"):
        new_requirement("x", Operator.EQUALS, ["a", "b"])
    with pytest.raises(InvalidSelectorError, match="values set must be empty"):
        new_requirement("x", Operator.EXISTS, ["a"])
    with pytest.raises(InvalidSelectorError, match="the value must be an integer"):
        new_requirement("x", Operator.GREATER_THAN, ["a"])
    with pytest.raises(InvalidSelectorError, match="key"):
        new_requirement("Bad_Prefix/x", Operator.EXISTS)
    with pytest.raises(InvalidSelectorError, match="Unsupported value"):
        new_requirement("x", "~=", ["a"])
    assert str(new_requirement("x", "notin", ["b", "a"])) == "x notin (a,b)"


def test_add_returns_a_new_selector() -> None:
    base = selectors.parse("a=b")
    extended = add(base, new_requirement("c", Operator.DOES_NOT_EXIST))
    assert str(base) == "a=b"
    assert str(extended) == "a=b,!c"


def test_selector_from_set() -> None:
    selector = selectors.selector_from_set({"b": "2", "a": "1"})
    assert str(selector) == "a=1,b=2"
    assert selector.matches({"a": "1", "b": "2", "c": "3"})
    assert not selector.matches({"a": "1"})
    assert selectors.selector_from_set({}).empty()
    assert selectors.selector_from_set({"a": "not valid!"}).matches({"a": "not valid!"})
    with pytest.raises(InvalidSelectorError):
        selectors.validated_selector_from_set({"a": "not valid!"})


def test_everything_and_nothing() -> None:
    assert labels.everything().empty()
    assert labels.everything().matches({})
    assert not labels.nothing().matches({})
    assert not labels.nothing().empty()
    assert labels.matches_nothing(labels.nothing())
    assert not labels.matches_nothing(labels.everything())


def test_requires_exact_match() -> None:
    assert requires_exact_match(selectors.parse("a in (x),b=y"), "a") == "x"
    assert requires_exact_match(selectors.parse("a in (x,z)"), "a") is None
    assert requires_exact_match(selectors.parse("b=y"), "a") is None


def test_format_labels_is_sorted_key_value_pairs() -> None:
    assert selectors.format_labels({"b": "2", "a": "1"}) == "a=1,b=2"
