"""`kubectl jobflow ui`: the DAG layout (longest-path layers, barycentre ordering, coordinates)."""

from __future__ import annotations

import random
import time
import tracemalloc

import pytest

from kubectl_jobflow.ui.layout import (
    LAYERED,
    MAX_DUMMIES,
    MAX_EDGES,
    STRAIGHT,
    Geometry,
    assign_layers,
    count_crossings,
    count_dummies,
    layout,
    order_layers,
    real_edges,
    split_long_edges,
)

G = Geometry()


def deps(*pairs: str) -> dict[str, list[str]]:
    """'b<a' means b depends on a."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        flow, target = pair.split("<")
        out.setdefault(flow, []).append(target)
    return out


@pytest.mark.parametrize(
    ("names", "targets", "expected"),
    [
        (["a"], {}, {"a": 0}),
        (["a", "b", "c"], deps("b<a", "c<b"), {"a": 0, "b": 1, "c": 2}),
        # the longest path decides: d waits for c, two steps from a
        (["a", "b", "c", "d"], deps("b<a", "c<b", "d<a", "d<c"), {"a": 0, "b": 1, "c": 2, "d": 3}),
        # spec order does not matter: a dependent listed before its target
        (["d", "a"], deps("d<a"), {"d": 1, "a": 0}),
        # a target that names no flow is ignored (admission refuses it)
        (["a", "b"], deps("b<ghost"), {"a": 0, "b": 0}),
        # a cycle (admission refuses it) still gets layers: broken at the first stuck flow in spec order
        (["a", "b", "c"], deps("b<a", "b<c", "c<b"), {"a": 0, "b": 1, "c": 2}),
        # a self-dependency is ignored
        (["a"], deps("a<a"), {"a": 0}),
    ],
)
def test_a_flow_sits_one_layer_right_of_its_deepest_target(
    names: list[str], targets: dict[str, list[str]], expected: dict[str, int]
) -> None:
    assert assign_layers(names, targets) == expected


def test_an_edge_over_several_layers_passes_through_one_dummy_per_layer_between() -> None:
    names = ["a", "b", "c", "d"]
    targets = deps("b<a", "c<b", "d<c", "d<a")
    layers, edges, chains = split_long_edges(names, targets, assign_layers(names, targets))
    chain = chains[("a", "d")]
    assert chain[0] == "a" and chain[-1] == "d" and len(chain) == 4
    assert [sum(n in layer for n in chain[1:-1]) for layer in layers] == [0, 1, 1, 0]
    assert len(edges) == 3 + 3  # three short edges, and a -> d cut in three


@pytest.mark.parametrize(
    ("upper", "lower", "edges", "crossings"),
    [
        (["a", "b"], ["x", "y"], [("a", "x"), ("b", "y")], 0),
        (["a", "b"], ["x", "y"], [("a", "y"), ("b", "x")], 1),
        # edges sharing an end never cross
        (["a", "b"], ["x"], [("a", "x"), ("b", "x")], 0),
        # K(2,2) drawn any way crosses once
        (["a", "b"], ["x", "y"], [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")], 1),
        (["a", "b", "c"], ["x", "y", "z"], [("a", "z"), ("b", "y"), ("c", "x")], 3),
    ],
)
def test_crossings_between_two_layers_are_counted(
    upper: list[str], lower: list[str], edges: list[tuple[str, str]], crossings: int
) -> None:
    assert count_crossings(upper, lower, edges) == crossings


def test_the_barycentre_sweeps_untangle_two_crossed_chains() -> None:
    ordered, crossings = order_layers([["a", "b"], ["y", "x"]], [("a", "x"), ("b", "y")])
    assert crossings == 0
    assert ordered[0].index("a") == ordered[1].index("x")


def test_a_tree_is_drawn_without_crossings() -> None:
    rng = random.Random(7)
    names = [f"n{i}" for i in range(60)]
    targets = {n: [names[rng.randrange(i)]] for i, n in enumerate(names) if i}
    assert layout(names, targets).crossings == 0


def test_edges_run_left_to_right_from_a_targets_right_side_to_the_flows_left_side() -> None:
    names = ["a", "b", "c", "d"]
    result = layout(names, deps("b<a", "c<a", "d<b", "d<c"))
    boxes = {n.name: n for n in result.nodes}
    for route in result.edges:
        source, target = boxes[route.source], boxes[route.target]
        assert route.points[0] == (source.x + G.node_width, source.y + G.node_height / 2)
        assert route.points[-1] == (target.x, target.y + G.node_height / 2)
        xs = [x for x, _ in route.points]
        assert xs == sorted(xs)
    assert boxes["a"].x < boxes["b"].x == boxes["c"].x < boxes["d"].x


def test_no_two_boxes_overlap_and_all_fit_in_the_drawing() -> None:
    rng = random.Random(3)
    names = [f"f{i}" for i in range(120)]
    targets = {n: rng.sample(names[:i], min(i, 3)) for i, n in enumerate(names) if i}
    result = layout(names, targets, ["notify", "cleanup"])
    seen = set()
    for node in result.nodes:
        assert (node.x, node.y) not in seen
        seen.add((node.x, node.y))
        assert node.x >= 0 and node.x + G.node_width <= result.width
        assert node.y >= 0 and node.y + G.node_height <= result.height


def test_finally_flows_get_a_column_of_their_own_right_of_the_dag() -> None:
    result = layout(["a", "b"], deps("b<a"), ["notify", "cleanup"])
    boxes = {n.name: n for n in result.nodes}
    assert boxes["notify"].x == boxes["cleanup"].x > boxes["b"].x + G.node_width + G.column_gap
    assert boxes["notify"].y < boxes["cleanup"].y
    assert not [e for e in result.edges if "notify" in (e.source, e.target)]


def test_a_jobflow_of_only_finally_flows_and_an_empty_one_still_lay_out() -> None:
    assert [n.name for n in layout([], {}, ["notify"]).nodes] == ["notify"]
    empty = layout([], {})
    assert empty.nodes == () and empty.width >= 0 and empty.height >= 0


def test_the_ordering_reduces_crossings_of_a_shuffled_layered_dag() -> None:
    rng = random.Random(11)
    layers = [[f"l{depth}-{i}" for i in range(12)] for depth in range(5)]
    names = [n for layer in layers for n in layer]
    targets = {
        n: [layers[d - 1][(i + rng.choice((-1, 0, 1))) % 12]] for d in range(1, 5) for i, n in enumerate(layers[d])
    }
    shuffled = names[:]
    rng.shuffle(shuffled)
    layered = assign_layers(shuffled, targets)
    cut, edges, _ = split_long_edges(shuffled, targets, layered)
    before = sum(count_crossings(cut[i], cut[i + 1], [e for e in edges if e[0] in cut[i]]) for i in range(4))
    assert layout(shuffled, targets).crossings < before


def five_hundred_flows(seed: int = 1) -> tuple[list[str], dict[str, list[str]]]:
    """10 layers of 50 flows, each depending on up to 3 flows of the layers before it."""
    rng = random.Random(seed)
    names = [f"flow-{i:03d}" for i in range(500)]
    targets = {}
    for i, name in enumerate(names[50:], start=50):
        before = names[: i - i % 50]
        targets[name] = rng.sample(before[-100:], rng.randint(1, 3))
    return names, targets


def test_a_500_flow_dag_is_laid_out_whole() -> None:
    # Its time is bench/ui_layout.py's figure, not a timed test.
    names, targets = five_hundred_flows()
    result = layout(names, targets, ["notify"])
    assert len(result.nodes) == 501
    assert len({(n.x, n.y) for n in result.nodes}) == 501  # no two boxes in one place


def adversarial_flows(count: int, fan: int = 99) -> tuple[list[str], dict[str, list[str]]]:
    """Issue 33's admissible shape: each flow depends on the previous one and on the first `fan`
    (at most 100 targets per flow, 500 flows: within the CRD's caps). Every edge from one of the
    first flows spans all the layers between, so a dummy per layer crossed is ~fan x count^2 / 2."""
    names = [f"f{i:03d}" for i in range(count)]
    targets = {
        name: list(dict.fromkeys([*names[: min(i - 1, fan)], names[i - 1]])) for i, name in enumerate(names) if i
    }
    return names, targets


# -- the bounds (issue 33) ---------------------------------------------------------------------
def test_the_dummies_counted_beforehand_are_the_ones_the_routed_drawing_makes() -> None:
    rng = random.Random(5)
    names = [f"f{i}" for i in range(80)]
    targets = {n: rng.sample(names[:i], min(i, 4)) for i, n in enumerate(names) if i}
    layer = assign_layers(names, targets)
    layers, _, chains = split_long_edges(names, targets, layer)
    made = sum(len(layer_nodes) for layer_nodes in layers) - len(names)
    assert count_dummies(real_edges(names, targets, layer), layer) == made
    assert made == sum(len(chain) - 2 for chain in chains.values())


def test_a_500_flow_pipeline_is_still_routed_around_the_boxes() -> None:
    names, targets = five_hundred_flows()
    result = layout(names, targets, ["notify"])
    assert result.mode == LAYERED and result.omitted_edges == 0
    assert result.dummies < MAX_DUMMIES


def test_the_adversarial_500_flow_shape_is_drawn_straight_in_bounded_time_and_memory() -> None:
    """Issue 33: ~10 M dummy points, 44 s and 745 MiB at 200 flows before the cap. A generous bound
    (it takes ~0.1 s on an idle machine; bench/ui_layout.py has the figures)."""
    names, targets = adversarial_flows(500)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = layout(names, targets, ["notify"])
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seconds < 10.0
    assert peak < 64 * 2**20
    assert result.mode == STRAIGHT and result.dummies > MAX_DUMMIES
    # every flow is placed, each in a box of its own
    assert [n.name for n in result.nodes] == [*names, "notify"]
    assert len({(n.x, n.y) for n in result.nodes}) == 501
    edges = sum(len(t) for t in targets.values())
    assert len(result.edges) == MAX_EDGES and result.omitted_edges == edges - MAX_EDGES


def test_a_straight_drawing_draws_the_adjacent_layer_edges_first_and_every_edge_as_a_line() -> None:
    names, targets = adversarial_flows(200)
    result = layout(names, targets)
    layer = {n.name: n.layer for n in result.nodes}
    spans = [layer[e.target] - layer[e.source] for e in result.edges]
    assert spans[: len(names) - 1] == [1] * (len(names) - 1)  # the chain, every link of it
    boxes = {n.name: n for n in result.nodes}
    for route in result.edges:
        source, target = boxes[route.source], boxes[route.target]
        assert route.points == (
            (source.x + G.node_width, source.y + G.node_height / 2),
            (target.x, target.y + G.node_height / 2),
        )


def test_too_many_edges_are_drawn_straight_even_when_they_need_no_dummies() -> None:
    # two layers of 80: every flow of the second depends on every flow of the first (6,400 edges)
    first = [f"a{i}" for i in range(80)]
    second = [f"b{i}" for i in range(80)]
    result = layout(first + second, {n: first for n in second})
    assert result.mode == STRAIGHT and result.dummies == 0
    assert len(result.edges) == MAX_EDGES and result.omitted_edges == 80 * 80 - MAX_EDGES
