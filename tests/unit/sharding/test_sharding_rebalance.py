"""The elastic shards' rule (sharding/rebalance.py): quotas, what to campaign for, what to hand over."""

from __future__ import annotations

import pytest

from jobflow_controller.sharding.rebalance import View, campaign_order, plan, quotas, release_order


@pytest.mark.parametrize(
    ("shards", "members", "expected"),
    [
        (12, {"a"}, {"a": 12}),
        (12, {"a", "b"}, {"a": 6, "b": 6}),
        (12, {"c", "a", "b"}, {"a": 4, "b": 4, "c": 4}),
        (12, {"a", "b", "c", "d", "e"}, {"a": 3, "b": 3, "c": 2, "d": 2, "e": 2}),
        (3, {"a", "b", "c", "d"}, {"a": 1, "b": 1, "c": 1, "d": 0}),
        (1, {"b", "a"}, {"a": 1, "b": 0}),
        (7, set(), {}),
    ],
)
def test_quota_is_an_even_split_with_the_remainder_to_the_first_identities(
    shards: int, members: set[str], expected: dict[str, int]
) -> None:
    assert quotas(shards, members) == expected
    if members:
        assert sum(quotas(shards, members).values()) == shards


def test_campaign_order_puts_the_preferred_shard_first_and_covers_every_shard() -> None:
    order = campaign_order("pod-x", 12, preferred=5)
    assert order[0] == 5
    assert sorted(order) == list(range(12))


def test_campaign_order_differs_between_replicas_so_newcomers_rarely_collide() -> None:
    starts = {campaign_order(f"replica-{i}", 12, None)[0] for i in range(8)}
    assert len(starts) > 1


def test_release_order_hands_over_the_highest_shards_and_the_preferred_one_last() -> None:
    assert release_order(frozenset({0, 3, 7, 9}), preferred=9) == [7, 3, 0, 9]
    assert release_order(frozenset({1, 2}), preferred=None) == [2, 1]


def view(me: str, members: set[str], holders: dict[int, str], shards: int = 12, **kw: object) -> View:
    return View(me=me, shards=shards, members=frozenset(members), holders=holders, **kw)  # type: ignore[arg-type]


def held_by(holder: str, shards: range | list[int]) -> dict[int, str]:
    return dict.fromkeys(shards, holder)


@pytest.mark.parametrize(
    ("name", "the_view", "held", "campaign", "release"),
    [
        (
            "alone, nothing held: campaign for every shard",
            view("a", {"a"}, {}),
            frozenset(),
            set(range(12)),
            set(),
        ),
        (
            "alone and holding everything: nothing to do",
            view("a", {"a"}, {}),
            frozenset(range(12)),
            set(),
            set(),
        ),
        (
            "a second member joins: hand six over",
            view("a", {"a", "b"}, {}),
            frozenset(range(12)),
            set(),
            {6, 7, 8, 9, 10, 11},
        ),
        (
            "the newcomer: under quota, no free shard yet: wait",
            view("b", {"a", "b"}, held_by("a", range(12))),
            frozenset(),
            set(),
            set(),
        ),
        (
            "the newcomer once shards were released: take them",
            view("b", {"a", "b"}, held_by("a", range(6))),
            frozenset(),
            {6, 7, 8, 9, 10, 11},
            set(),
        ),
        (
            "two members over quota each hand over their own excess only",
            view("a", {"a", "b", "c"}, {**held_by("b", range(5, 10)), **held_by("c", range(10, 12))}),
            frozenset(range(5)),
            set(),
            {4},
        ),
        (
            "over quota, free shards cover part of the deficit: hand over the rest only",
            view("a", {"a", "b"}, {}),
            frozenset(range(10)),
            set(),
            {6, 7, 8, 9},
        ),
        (
            "third member: a, at 6 of 4, hands two over",
            view("a", {"a", "b", "c"}, held_by("b", range(6, 12))),
            frozenset(range(6)),
            set(),
            {4, 5},
        ),
        (
            "a holder that is no live member keeps its shards; the newcomer's deficit is still served",
            view("a", {"a", "b"}, held_by("ghost", range(7, 12))),
            frozenset(range(7)),
            set(),
            {6},
        ),
        (
            "at quota: a shard free for less than the delay is left to those under quota",
            view("a", {"a", "b"}, held_by("b", range(6, 11)), free_for={11: 3.0}, takeover_delay=15.0),
            frozenset(range(6)),
            set(),
            set(),
        ),
        (
            "at quota: a shard free for the delay is anyone's",
            view("a", {"a", "b"}, held_by("b", range(6, 11)), free_for={11: 15.0}, takeover_delay=15.0),
            frozenset(range(6)),
            {11},
            set(),
        ),
        (
            "a member died: its shards are free and the survivors' quota grew",
            view("a", {"a", "b"}, held_by("b", range(4, 8))),
            frozenset(range(4)),
            {8, 9},
            set(),
        ),
        (
            "the preferred shard first when only one is wanted",
            view("b", {"a", "b", "c"}, {**held_by("a", range(4)), **held_by("c", range(8, 12))}, preferred=6),
            frozenset({4, 5, 7}),
            {6},
            set(),
        ),
        (
            "the view's holder being me for a shard my unit does not run counts it as free",
            view("a", {"a"}, {3: "a"}, shards=4),
            frozenset({0, 1, 2}),
            {3},
            set(),
        ),
        (
            "a holder that is not a live member still holds its shard",
            view("a", {"a"}, {0: "ghost"}, shards=2),
            frozenset({1}),
            set(),
            set(),
        ),
        (
            "more members than shards: a member with quota 0 hands its shard over",
            view("z", {"a", "b", "z"}, {0: "a"}, shards=2),
            frozenset({1}),
            set(),
            {1},
        ),
    ],
)
def test_plan(name: str, the_view: View, held: frozenset[int], campaign: set[int], release: set[int]) -> None:
    decided = plan(the_view, held)
    assert (set(decided.campaign), set(decided.release)) == (campaign, release), name


def test_plan_never_releases_more_than_the_excess_nor_campaigns_for_held_shards() -> None:
    for members in ({"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "b", "c", "d", "e"}):
        for held_count in range(13):
            held = frozenset(range(held_count))
            decided = plan(view("a", members, {}), held)
            assert not decided.campaign & held
            assert decided.release <= held
            assert len(decided.release) <= max(0, held_count - quotas(12, members)["a"])


def test_replicas_applying_the_rule_converge_to_their_quotas() -> None:
    """A round-based simulation: every replica plans from the same view, releases happen, free
    shards go to the first replica that campaigns for them."""
    members = ["r0", "r1", "r2"]
    holding = {"r0": set(range(12)), "r1": set(), "r2": set()}
    for _round in range(6):
        holders = {s: m for m, shards in holding.items() for s in shards}
        decisions = {m: plan(view(m, set(members), holders), frozenset(holding[m])) for m in members}
        for m, decided in decisions.items():
            holding[m] -= decided.release
        holders = {s: m for m, shards in holding.items() for s in shards}
        for m in members:
            fresh = plan(view(m, set(members), holders), frozenset(holding[m]))
            for shard in sorted(fresh.campaign):
                if shard not in holders:
                    holding[m].add(shard)
                    holders[shard] = m
    assert sorted(len(s) for s in holding.values()) == [4, 4, 4]
    assert set().union(*holding.values()) == set(range(12))
