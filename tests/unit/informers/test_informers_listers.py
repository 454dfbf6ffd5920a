"""Listers (client-go ``listers.go``, ``listers_test.go``, ``GenericLister``)."""

from __future__ import annotations

import pytest
from informers_fakes import new_object
from informers_selectors import parse

from informers import (
    NAMESPACE_INDEX,
    GenericLister,
    GroupResource,
    NotFoundError,
    is_not_found,
    labels,
    list_all,
    meta_namespace_index_func,
    new_indexer,
)
from informers.store import Cache

JOBFLOWS = GroupResource("flow.volcano.sh", "jobflow")
CREATED_BY = "volcano.sh/createdByJobFlow"


def namespaced_indexer() -> Cache:
    return new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})


def test_group_resource_prints_resource_dot_group() -> None:
    assert str(JOBFLOWS) == "jobflow.flow.volcano.sh"
    assert str(GroupResource("", "pod")) == "pod"


def test_get_of_a_missing_object_is_the_upstream_not_found() -> None:
    lister = GenericLister(namespaced_indexer(), JOBFLOWS)
    with pytest.raises(NotFoundError) as caught:
        lister.by_namespace("default").get("x")
    err = caught.value
    assert str(err) == 'jobflow.flow.volcano.sh "x" not found'
    assert (err.code, err.reason) == (404, "NotFound")
    assert is_not_found(err)
    assert err.details == {"name": "x", "group": "flow.volcano.sh", "kind": "jobflow"}


def test_core_group_not_found_has_no_group_suffix() -> None:
    lister = GenericLister(new_indexer(), GroupResource("", "pod"))
    with pytest.raises(NotFoundError, match=r'^pod "foo" not found$'):
        lister.get("foo")


def test_namespaced_get_returns_the_cached_object_itself() -> None:
    indexer = namespaced_indexer()
    flow = new_object("ml-pipeline", "default", kind="JobFlow")
    indexer.add(flow)
    assert GenericLister(indexer, JOBFLOWS).by_namespace("default").get("ml-pipeline") is flow


def test_cluster_scoped_get_uses_the_name_as_key() -> None:
    indexer = new_indexer()
    node = new_object("node-1", "")
    indexer.add(node)
    assert GenericLister(indexer, GroupResource("", "node")).get("node-1") is node


def test_namespaced_list_by_label_selector() -> None:
    indexer = namespaced_indexer()
    for name, ns, owner in [
        ("jobflowa-a", "default", "default.jobflowa"),
        ("jobflowa-b", "default", "default.jobflowa"),
        ("jobflowb-a", "default", "default.jobflowb"),
        ("jobflowa-a", "other", "other.jobflowa"),
        ("unlabelled", "default", None),
    ]:
        indexer.add(new_object(name, ns, labels={CREATED_BY: owner} if owner else None))
    selector = parse(f"{CREATED_BY} in (default.jobflowa)")
    lister = GenericLister(indexer, JOBFLOWS)
    got = sorted(o["metadata"]["name"] for o in lister.by_namespace("default").list(selector))
    assert got == ["jobflowa-a", "jobflowa-b"]
    assert len(lister.list()) == 5
    assert len(lister.by_namespace("default").list()) == 4
    assert len(lister.list(parse(f"{CREATED_BY}"))) == 4
    assert lister.list(labels.nothing()) == []


def test_namespace_listing_without_the_index_falls_back_to_a_scan() -> None:
    indexer = new_indexer()
    indexer.add(new_object("a", "ns1"))
    indexer.add(new_object("b", "ns2"))
    lister = GenericLister(indexer, JOBFLOWS)
    assert [o["metadata"]["name"] for o in lister.by_namespace("ns1").list()] == ["a"]


def test_list_all_with_everything_skips_label_matching() -> None:
    indexer = new_indexer()
    for i in range(1000):
        indexer.add(new_object(f"o{i}", labels={"match": str(i % 10 == 0).lower()}))
    found: list[object] = []
    list_all(indexer, labels.everything(), found.append)
    assert len(found) == 1000
    found.clear()
    list_all(indexer, parse("match=true"), found.append)
    assert len(found) == 100
    found.clear()
    list_all(indexer, parse("match=nope"), found.append)
    assert found == []
