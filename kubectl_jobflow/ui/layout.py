"""A layered, left-to-right drawing of a JobFlow's DAG (Sugiyama's method, in its simplest form).

1. Layers by longest path: a flow sits one layer right of its furthest target, so every edge
   points right and a chain reads as a row.
2. An edge that spans several layers is cut by one dummy point per layer it crosses, so the
   ordering step sees it and the drawing bends it around the nodes instead of through them.
3. Crossings are reduced by barycentre sweeps: each layer is sorted by the mean position of its
   neighbours in the layer before (downward sweep) or after (upward sweep); the ordering with the
   fewest crossings seen is kept. Optimal ordering is NP-hard; this heuristic is what graphviz's
   `dot` starts from and is exact for trees and most pipelines people write.
4. Coordinates: layer * column width across, position * row height down, each layer centred on
   the tallest. `finally` flows (no edges: they run once the rest is over) get a column of their
   own at the right.

Bounded (issue 33): a tenant's admissible JobFlow (500 flows, each depending on the previous one and
on the first 99) would need ~9.9 M dummy points. Past `MAX_DUMMIES` dummy points or `MAX_EDGES`
edges the drawing is `STRAIGHT` instead: the same layers, ordered by the edges between adjacent
layers only, the long edges drawn as straight lines beneath the boxes, and at most `MAX_EDGES`
edges drawn (adjacent-layer ones first; the page says how many are left out, and every flow's panel
lists its targets). Every flow is always placed, so every flow and its state is shown.

Everything here is pure: names in, numbers out, so the browser only draws.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Sweeps (one down, one up) tried at most; most DAGs settle in two or three.
MAX_SWEEPS = 8
#: Dummy points the routed drawing may place; the 500-flow pipelines of bench/ui_layout.py need
#: a few hundred. Past it: the STRAIGHT drawing (its cost grows with the edges, not their spans).
MAX_DUMMIES = 10_000
#: Edges a drawing routes or draws at most (a JobFlow may have 500 flows x 100 targets = 50,000).
MAX_EDGES = 5_000
#: The drawing's modes: edges routed around the boxes through dummy points, or straight lines.
LAYERED, STRAIGHT = "layered", "straight"


@dataclass(frozen=True)
class Geometry:
    """Pixel sizes of the drawing: node boxes, the gap between columns and between rows."""

    node_width: float = 172.0
    node_height: float = 40.0
    column_gap: float = 76.0
    row_gap: float = 18.0
    margin: float = 16.0
    #: Extra space before the `finally` column, which is drawn apart from the DAG.
    finally_gap: float = 40.0

    @property
    def column(self) -> float:
        return self.node_width + self.column_gap

    @property
    def row(self) -> float:
        return self.node_height + self.row_gap


@dataclass(frozen=True)
class Placed:
    """A node's box: `x`, `y` is its top-left corner."""

    name: str
    layer: int
    x: float
    y: float


@dataclass(frozen=True)
class Route:
    """An edge from a target to the flow depending on it: the polyline from the right side of the
    target's box to the left side of the flow's box, through the dummy points between."""

    source: str
    target: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Layout:
    nodes: tuple[Placed, ...]
    edges: tuple[Route, ...]
    width: float
    height: float
    #: Edge crossings left after ordering (between adjacent layers, dummies included; in the
    #: STRAIGHT mode, between the adjacent-layer edges only).
    crossings: int
    mode: str = LAYERED
    #: Dummy points placed (LAYERED), or that the routed drawing would have needed (STRAIGHT).
    dummies: int = 0
    #: Edges of the DAG not drawn (STRAIGHT past MAX_EDGES).
    omitted_edges: int = 0


def assign_layers(names: Sequence[str], targets: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Longest-path layering: 0 for a flow without (known) targets, else one more than its deepest
    target. Unknown targets are ignored; flows in a cycle (admission refuses both) are layered after
    the targets already placed, in spec order, so a broken spec still draws."""
    known = set(names)
    deps = {n: [t for t in dict.fromkeys(targets.get(n, ())) if t in known and t != n] for n in names}
    dependents: dict[str, list[str]] = {n: [] for n in names}
    missing = {n: len(deps[n]) for n in names}
    for name in names:
        for target in deps[name]:
            dependents[target].append(name)
    layer: dict[str, int] = {}
    ready = [n for n in names if missing[n] == 0]
    while True:
        while ready:
            name = ready.pop()
            layer[name] = 1 + max((layer[t] for t in deps[name]), default=-1)
            for dependent in dependents[name]:
                missing[dependent] -= 1
                if missing[dependent] == 0:
                    ready.append(dependent)
        stuck = next((n for n in names if n not in layer), None)
        if stuck is None:
            return layer
        missing[stuck] = 0  # break the cycle here: its placed targets decide its layer
        deps[stuck] = [t for t in deps[stuck] if t in layer]
        ready.append(stuck)


def _dummy(source: str, target: str, layer: int) -> str:
    # NUL cannot occur in a Kubernetes name, so a dummy never collides with a flow.
    return f"\0{source}\0{target}\0{layer}"


def real_edges(
    names: Sequence[str], targets: Mapping[str, Sequence[str]], layer: Mapping[str, int]
) -> list[tuple[str, str]]:
    """(target, dependent) for every dependency drawn, in spec order: not an unknown target, a
    self-dependency, nor the edge that broke a cycle."""
    return [
        (source, name)
        for name in names
        for source in dict.fromkeys(targets.get(name, ()))
        if source in layer and source != name and layer[source] < layer[name]
    ]


def count_dummies(edges: Sequence[tuple[str, str]], layer: Mapping[str, int]) -> int:
    """The dummy points the routed drawing needs: one per layer each edge crosses (computed before
    any is made, so a shape that would need millions never allocates them)."""
    return sum(layer[b] - layer[a] - 1 for a, b in edges)


def _layers_of(names: Sequence[str], layer: Mapping[str, int]) -> list[list[str]]:
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for name in names:
        layers[layer[name]].append(name)
    return layers


def split_long_edges(
    names: Sequence[str], targets: Mapping[str, Sequence[str]], layer: Mapping[str, int]
) -> tuple[list[list[str]], list[tuple[str, str]], dict[tuple[str, str], list[str]]]:
    """The layers (spec order, dummies after the flows), the edges between adjacent layers, and
    for each real edge the chain of nodes it passes through (its two ends included)."""
    layers = _layers_of(names, layer)
    short: list[tuple[str, str]] = []
    chains: dict[tuple[str, str], list[str]] = {}
    for source, name in real_edges(names, targets, layer):
        chain = [source]
        for between in range(layer[source] + 1, layer[name]):
            dummy = _dummy(source, name, between)
            layers[between].append(dummy)
            chain.append(dummy)
        chain.append(name)
        short.extend(itertools.pairwise(chain))
        chains[(source, name)] = chain
    return layers, short, chains


def straight_edges(
    names: Sequence[str], edges: Sequence[tuple[str, str]], layer: Mapping[str, int]
) -> tuple[list[list[str]], list[tuple[str, str]], dict[tuple[str, str], list[str]], int]:
    """The STRAIGHT drawing's input: the layers of the flows alone, the edges between adjacent
    layers (what the ordering sees), at most `MAX_EDGES` edges to draw (adjacent-layer ones first,
    then the long ones in spec order), each its two ends, and how many are left out."""
    short = [(a, b) for a, b in edges if layer[b] - layer[a] == 1]
    long = [(a, b) for a, b in edges if layer[b] - layer[a] > 1]
    drawn = (short + long)[:MAX_EDGES]
    return _layers_of(names, layer), short, {(a, b): [a, b] for a, b in drawn}, len(edges) - len(drawn)


def count_crossings(upper: Sequence[str], lower: Sequence[str], edges: Sequence[tuple[str, str]]) -> int:
    """Crossings between two adjacent layers: inversions of the lower ends once the edges are sorted
    by their upper end (Barth, Jünger and Mutzel's counting, with a Fenwick tree: O(E log V))."""
    up = {n: i for i, n in enumerate(upper)}
    low = {n: i for i, n in enumerate(lower)}
    pairs = sorted((up[a], low[b]) for a, b in edges if a in up and b in low)
    tree = [0] * (len(lower) + 1)
    crossings = 0
    for seen, (_, position) in enumerate(pairs):
        # Edges seen so far whose lower end is right of this one's cross it.
        index, not_right = position + 1, 0
        while index > 0:
            not_right += tree[index]
            index -= index & -index
        crossings += seen - not_right
        index = position + 1
        while index <= len(lower):
            tree[index] += 1
            index += index & -index
    return crossings


def _total_crossings(layers: Sequence[Sequence[str]], between: Sequence[Sequence[tuple[str, str]]]) -> int:
    return sum(count_crossings(layers[i], layers[i + 1], between[i]) for i in range(len(layers) - 1))


def _sorted_by_barycentre(layer: list[str], neighbours: Mapping[str, list[str]], fixed: Mapping[str, int]) -> list[str]:
    """`layer` sorted by the mean position of each node's neighbours in the fixed layer; a node
    without any keeps its own position, and ties keep the current order (a stable sort)."""
    keys: dict[str, float] = {}
    for position, name in enumerate(layer):
        around = [fixed[n] for n in neighbours.get(name, ()) if n in fixed]
        keys[name] = sum(around) / len(around) if around else float(position)
    return sorted(layer, key=keys.__getitem__)


def _sweep(layers: list[list[str]], neighbours: Mapping[str, list[str]], downward: bool) -> None:
    """Reorder each layer by its neighbours in the layer before it (downward) or after it (upward)."""
    steps = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
    for i in steps:
        fixed = layers[i - 1] if downward else layers[i + 1]
        layers[i] = _sorted_by_barycentre(layers[i], neighbours, {n: p for p, n in enumerate(fixed)})


def order_layers(layers: list[list[str]], edges: Sequence[tuple[str, str]]) -> tuple[list[list[str]], int]:
    """Barycentre sweeps down and up, keeping the ordering with the fewest crossings."""
    index = {n: i for i, layer in enumerate(layers) for n in layer}
    between: list[list[tuple[str, str]]] = [[] for _ in range(max(len(layers) - 1, 0))]
    preds: dict[str, list[str]] = {}
    succs: dict[str, list[str]] = {}
    for a, b in edges:
        between[index[a]].append((a, b))
        preds.setdefault(b, []).append(a)
        succs.setdefault(a, []).append(b)
    best = [list(layer) for layer in layers]
    best_count = _total_crossings(best, between)
    current = [list(layer) for layer in layers]
    stale = 0
    for _ in range(MAX_SWEEPS):
        if best_count == 0 or stale == 2:
            break
        improved = False
        for downward in (True, False):
            _sweep(current, preds if downward else succs, downward)
            count = _total_crossings(current, between)
            if count < best_count:
                best, best_count, improved = [list(layer) for layer in current], count, True
        # A sweep that did not help may still lead to one that does; two in a row do not.
        stale = 0 if improved else stale + 1
    return best, best_count


def layout(
    names: Sequence[str],
    targets: Mapping[str, Sequence[str]],
    finally_names: Sequence[str] = (),
    geometry: Geometry = Geometry(),
) -> Layout:
    """Place `names` (spec order; `targets[name]` the flows it depends on) and the `finally` flows:
    routed through dummy points when that stays within `MAX_DUMMIES` and `MAX_EDGES`, else STRAIGHT."""
    layer = assign_layers(names, targets)
    edges = real_edges(names, targets, layer)
    dummies = count_dummies(edges, layer)
    mode, omitted = LAYERED, 0
    if dummies <= MAX_DUMMIES and len(edges) <= MAX_EDGES:
        layers, short, chains = split_long_edges(names, targets, layer)
    else:
        mode = STRAIGHT
        layers, short, chains, omitted = straight_edges(names, edges, layer)
    ordered, crossings = order_layers(layers, short)
    tallest = max((len(col) for col in ordered), default=0)
    points: dict[str, tuple[float, float]] = {}
    for column, col_nodes in enumerate(ordered):
        top = geometry.margin + (tallest - len(col_nodes)) * geometry.row / 2
        for position, name in enumerate(col_nodes):
            points[name] = (geometry.margin + column * geometry.column, top + position * geometry.row)
    placed = [Placed(n, layer[n], *points[n]) for n in names]
    width = geometry.margin * 2 + max(len(ordered) * geometry.column - geometry.column_gap, 0)
    if finally_names:
        x = width - geometry.margin + (geometry.column_gap + geometry.finally_gap if names else 0)
        for position, name in enumerate(finally_names):
            placed.append(Placed(name, len(ordered), x, geometry.margin + position * geometry.row))
        width = x + geometry.node_width + geometry.margin
        tallest = max(tallest, len(finally_names))
    height = geometry.margin * 2 + max(tallest * geometry.row - geometry.row_gap, 0)
    routes = tuple(_route(chain, points, geometry) for chain in chains.values())
    return Layout(tuple(placed), routes, width, height, crossings, mode, dummies, omitted)


def _route(chain: Sequence[str], points: Mapping[str, tuple[float, float]], geometry: Geometry) -> Route:
    """From the middle of the source's right side, through each dummy's column, to the middle of
    the target's left side."""
    middle = geometry.node_height / 2
    sx, sy = points[chain[0]]
    path = [(sx + geometry.node_width, sy + middle)]
    for dummy in chain[1:-1]:
        dx, dy = points[dummy]
        path.append((dx, dy + middle))
        path.append((dx + geometry.node_width, dy + middle))
    tx, ty = points[chain[-1]]
    path.append((tx, ty + middle))
    return Route(chain[0], chain[-1], tuple(path))
