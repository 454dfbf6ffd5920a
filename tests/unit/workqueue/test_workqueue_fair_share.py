"""Start-time fair queuing over tenants (fair_share.py): who goes next, charged by the work done."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from workqueue import FairShare, PriorityStorage, Queue


def _order(share: FairShare, waiting: dict[str, int], charges: dict[str, float] | None = None) -> list[str]:
    """Serve `waiting` (tenant -> pieces of work, each tenant FIFO) to the end; each piece handed
    to a tenant is charged `charges[tenant]` (default: the estimate)."""
    left = dict(waiting)
    order: list[str] = []
    while any(left.values()):
        tenant = str(share.pick([t for t in waiting if left[t]]))
        share.serve(tenant)
        if charges and tenant in charges:
            share.charge(tenant, charges[tenant])
        left[tenant] -= 1
        order.append(tenant)
    return order


@pytest.mark.parametrize(
    ("waiting", "charges", "expected"),
    [
        pytest.param({"a": 2, "b": 2}, None, ["a", "b", "a", "b"], id="equal work: in turn"),
        pytest.param(
            {"big": 3, "small": 1}, {"big": 5.0}, ["big", "small", "big", "big"], id="a costly turn puts a tenant back"
        ),
        pytest.param(
            {"big": 2, "small": 3},
            {"big": 4.0},
            ["big", "small", "small", "small", "big"],
            id="shares by work, not count",
        ),
    ],
)
def test_the_next_tenant_is_the_one_with_the_least_work_handed(
    waiting: dict[str, int], charges: dict[str, float] | None, expected: list[str]
) -> None:
    assert _order(FairShare(estimate=1.0), waiting, charges) == expected


def test_an_idle_tenant_starts_at_the_virtual_time_not_at_its_old_credit() -> None:
    share = FairShare(estimate=1.0)
    for _ in range(10):  # "busy" alone for a while: it has no debt to anyone
        share.serve("busy")
    assert share.tag("busy") == pytest.approx(1.0)
    assert share.tag("new") == 0.0
    assert share.pick(["busy", "new"]) == "new"


def test_the_queue_hands_an_idle_namespace_out_before_a_busy_ones_backlog() -> None:
    share = FairShare(estimate=0.02)
    q: Queue[Hashable] = Queue(queue=PriorityStorage(tenant_of=lambda i: str(i).split("/")[0], fair_share=share))
    for i in range(5):
        q.add(f"a/{i}")
    for i in range(5):
        q.add(f"b/{i}")
    item, _ = q.get(timeout=1)
    share.charge("a", 0.5)  # a's syncs are long
    q.done(item)
    handed = []
    for _ in range(4):
        item, _ = q.get(timeout=1)
        handed.append(item)
        q.done(item)
    assert handed == ["b/0", "b/1", "b/2", "b/3"]  # a waits until b has had as much worker time
