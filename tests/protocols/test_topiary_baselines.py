"""The Topiary baselines of section V-A: random-graph, complete, GossipSub-style, Scribe trees."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.csgraph as csg

from hedgerow.dissemination import entry_topics
from hedgerow.errors import ParameterError
from hedgerow.model import Instance
from hedgerow.protocols import get_protocol, protocol_class
from hedgerow.protocols.baselines.complete import CompleteGraph
from hedgerow.protocols.baselines.gossipsub import (
    GossipSubSplit,
    draw_outside,
    gossipsub_out,
    gossipsub_slots,
)
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.protocols.baselines.scribe import ScribeRandom, ScribeTopic, tree_edges
from hedgerow.workloads.interest import interest_instance


@pytest.fixture(scope="module")
def inst():
    return interest_instance(300, 40, 0.2, np.random.default_rng(4))


def _no_self_loops(ov):
    return ov.csr().diagonal().sum() == 0


def test_random_graph_is_registered_apart_from_spidercasts_random(inst):
    """Topiary's random graph is ``random-graph``; ``random`` is SpiderCast's random(y)."""
    assert protocol_class("random-graph") is RandomGraph
    assert protocol_class("random") is not RandomGraph
    assert "links" in protocol_class("random").params and list(RandomGraph.params) == ["d"]
    ov = get_protocol("random-graph", d=6).build(inst, seed=1)
    assert ov == RandomGraph(d=6).build(inst, seed=1)


def test_random_graph_out_degree(inst):
    ov = RandomGraph(d=6).build(inst, seed=1)
    assert ov.directed and _no_self_loops(ov)
    assert (ov.degree() == 6).all()
    assert ov != RandomGraph(d=6).build(inst, seed=2)
    assert ov == RandomGraph(d=6).build(inst, seed=1)


def test_complete_graph():
    small = Instance.from_lists([[0]] * 12, n_topics=1)
    ov = CompleteGraph().build(small)
    assert ov.n_edges == 66 and (ov.degree() == 11).all()


def test_gossipsub_splits_degree_over_topics(inst):
    out = gossipsub_out(inst, 6, np.random.default_rng(0))
    for v in range(inst.n_nodes):
        row = out[v][out[v] >= 0]
        assert len(row) == 6 and len(set(row.tolist())) == 6 and v not in row
        # each link serves a topic of v: the neighbour shares at least one topic
        shared = [inst.intersection_size(v, int(u)) for u in row]
        assert min(shared) >= 1
    # a node with 2 topics splits its 6 slots 3/3 over them
    two = Instance.from_lists([[0, 1]] + [[0]] * 10 + [[1]] * 10, n_topics=2)
    row = gossipsub_out(two, 6, np.random.default_rng(1))[0]
    assert sorted(two.topics_of(int(u))[0] for u in row) == [0, 0, 0, 1, 1, 1]
    ov = GossipSubSplit(d=6).build(inst, seed=0)
    assert (ov.degree() <= 6).all() and _no_self_loops(ov)


def _slots_by_setdiff(instance, d, rng):
    """The split as first written: each free set built with ``np.setdiff1d``."""
    n = instance.n_nodes
    out = np.full((n, d), -1, dtype=np.int64)
    slot_topic = np.full((n, d), -1, dtype=np.int64)
    for v in range(n):
        topics = rng.permutation(instance.topics_of(v))
        chosen: set[int] = set()
        for slot in range(d):
            u = -1
            if len(topics):
                t = int(topics[slot % len(topics)])
                free = np.setdiff1d(instance.subscribers(t), [v, *chosen])
                if len(free):
                    u = int(free[rng.integers(len(free))])
                    slot_topic[v, slot] = t
            if u < 0:
                free = np.setdiff1d(np.arange(n), [v, *chosen])
                if not len(free):
                    break
                u = int(free[rng.integers(len(free))])
            chosen.add(u)
            out[v, slot] = u
    return out, slot_topic


@pytest.mark.parametrize(
    ("n", "topics", "p", "d", "seed"),
    [(300, 40, 0.2, 6, 0), (200, 100, 0.02, 8, 3), (60, 5, 0.5, 7, 9), (9, 3, 0.3, 12, 2)],
)
def test_gossipsub_slots_draw_as_the_setdiff_construction(n, topics, p, d, seed):
    """The picks without building each free set are the same picks from the same stream."""
    inst = interest_instance(n, topics, p, np.random.default_rng(seed))
    new = gossipsub_slots(inst, d, np.random.default_rng(seed + 1))
    old = _slots_by_setdiff(inst, d, np.random.default_rng(seed + 1))
    assert np.array_equal(new[0], old[0]) and np.array_equal(new[1], old[1])


def test_draw_outside_steps_over_taken_ids():
    pool = np.arange(0, 40, 3)
    for seed in range(50):
        taken = np.random.default_rng(seed).choice(45, size=seed % 9, replace=False).tolist()
        free = np.setdiff1d(pool, taken)
        want = int(free[np.random.default_rng(seed).integers(len(free))])
        assert draw_outside(pool, taken, np.random.default_rng(seed)) == want
    assert draw_outside(np.array([1, 2]), [2, 1], np.random.default_rng(0)) == -1


def test_tree_edges_are_id_ordered_heaps():
    ident = np.array([0, 0, 0, 0, 0, 3, 0, 1, 2])
    # members 5..8 sorted by id: 6, 7, 8, 5; binary heap: 7->6, 8->6, 5->7
    assert tree_edges(np.array([5, 6, 7, 8]), ident, 2).tolist() == [[7, 6], [8, 6], [5, 7]]


def test_scribe_random_groups_are_disjoint_trees(inst):
    proto = ScribeRandom(d=6, n_groups=40)
    ov = proto.build(inst, seed=3)
    assert (ov.degree() <= 1).all()  # one parent link per node
    n_comp, _ = csg.connected_components(ov.undirected_csr(), directed=False)
    assert n_comp == proto.stats_["n_groups"] == 40
    # a tree per group: edges = nodes - groups
    assert ov.n_edges == inst.n_nodes - 40
    # children per node bounded by the fanout d - 1
    indeg = np.asarray(ov.csr().sum(axis=0)).ravel()
    assert indeg.max() <= 5


def test_scribe_topic_groups_respect_degree_and_connect_members(inst):
    ov = ScribeTopic(d=6).build(inst, seed=3)
    assert (ov.degree() <= 6).all() and _no_self_loops(ov)
    und = ov.undirected_csr()
    # every node with <= d topics joined all its topic trees: its topics' members reach it
    few = [v for v in range(inst.n_nodes) if inst.n_subs[v] <= 6]
    assert few
    _, labels = csg.connected_components(und, directed=False)
    for v in few[:10]:
        for t in inst.topics_of(v):
            joined = [u for u in inst.subscribers(int(t)) if inst.n_subs[u] <= 6]
            assert len(set(labels[joined].tolist())) == 1


def test_scribe_grouping_is_the_protocol_not_a_parameter(inst):
    """The two groupings are two protocols, ``scribe-random`` and ``scribe-topic``."""
    assert protocol_class("scribe-random") is ScribeRandom
    assert protocol_class("scribe-topic") is ScribeTopic
    with pytest.raises(ParameterError, match="unknown parameter 'groups'"):
        ScribeTopic(groups="random")
    # only random grouping has a number of groups; topic grouping has one group per topic
    with pytest.raises(ParameterError, match="unknown parameter 'n_groups'"):
        ScribeTopic(n_groups=40)
    topic = ScribeTopic(d=6)
    topic.build(inst, seed=3)
    assert topic.stats_["n_groups"] == inst.n_topics


# ------------------------------------------------------------------ forwarding and link topics
def test_forwarding_defaults_of_the_baselines():
    """Each baseline's own rule: per-topic meshes / trees where links have a topic, else TTL."""
    assert GossipSubSplit.forwarding == ScribeTopic.forwarding == "mesh"
    assert GossipSubSplit.labels_links and ScribeTopic.labels_links
    for cls in (ScribeRandom, RandomGraph, CompleteGraph):
        assert cls.forwarding == "ttl" and not cls.labels_links
    rand = ScribeRandom(n_groups=4)
    rand.build(interest_instance(30, 5, 0.3, np.random.default_rng(0)), seed=0)
    assert not hasattr(rand, "link_topics_")  # its groups carry no topic


def _links(ov):
    return {tuple(e) for e in ov.edges().tolist()}


def test_gossipsub_link_topics_are_its_slots(inst):
    proto = GossipSubSplit(d=6, mesh="slot")
    ov = proto.build(inst, seed=0)
    lt = proto.link_topics_
    assert lt.dtype == np.int64 and lt.shape[1] == 3
    # every row is an out-link made for a topic both ends subscribe to
    assert {(u, v) for u, v, _ in lt.tolist()} <= _links(ov)
    for u, v, t in lt.tolist():
        assert t in inst.topics_of(u) and t in inst.topics_of(v)
    # one row per slot that found a subscriber; the rest are fallback links
    assert len(lt) + proto.stats_["fallback_links"] == ov.n_edges
    # same construction as gossipsub_out: the overlay is unchanged
    assert ov == GossipSubSplit(d=6).build(inst, seed=0)


def test_gossipsub_fallback_links_serve_no_mesh():
    """Topic 1 has a single subscriber (node 0): its slots fall back to random nodes, unlabelled."""
    small = Instance.from_lists([[0, 1]] + [[0]] * 3, n_topics=2)
    proto = GossipSubSplit(d=3, mesh="slot")
    ov = proto.build(small, seed=0)
    lt = proto.link_topics_
    assert set(lt[:, 2].tolist()) == {0}  # no row for topic 1, no -1
    # node 0: 3 slots over 2 topics (2 and 1); topic-1 slots found no subscriber
    out0 = [v for u, v in _links(ov) if u == 0]
    rows0 = [v for u, v, _ in lt.tolist() if u == 0]
    assert len(out0) == 3 and len(rows0) < 3
    assert proto.stats_["fallback_links"] == ov.n_edges - len(lt) >= 1


def test_gossipsub_link_serving_two_topics():
    """u -> v for topic a and v -> u for topic b: two rows, the link serves both."""
    two = Instance.from_lists([[0, 1], [0, 1]], n_topics=2)
    proto = GossipSubSplit(d=1, mesh="slot")
    ov = proto.build(two, seed=2)  # a seed where the two slots drew different topics
    assert _links(ov) == {(0, 1), (1, 0)}
    assert sorted(map(tuple, proto.link_topics_.tolist())) == [(0, 1, 1), (1, 0, 0)]
    # both CSR entries of the undirected link serve both topics
    a = ov.undirected_csr()
    lab = entry_topics(a.indptr, a.indices, proto.link_topics_)
    assert lab.indptr.tolist() == [0, 2, 4] and lab.topics.tolist() == [0, 1, 0, 1]


def test_scribe_topic_link_topics_are_its_trees(inst):
    proto = ScribeTopic(d=6)
    ov = proto.build(inst, seed=3)
    lt = proto.link_topics_
    assert lt.dtype == np.int64 and {(u, v) for u, v, _ in lt.tolist()} == _links(ov)
    for t in range(inst.n_topics):
        tree = lt[lt[:, 2] == t]
        members = np.unique(tree[:, :2])
        # every member subscribes; the rows of a topic form one tree over its members
        assert all(t in inst.topics_of(int(m)) for m in members)
        if len(members):
            assert len(tree) == len(members) - 1
            sub = np.zeros((inst.n_nodes, inst.n_nodes), dtype=np.int8)
            sub[tree[:, 0], tree[:, 1]] = 1
            _, lab = csg.connected_components(sub, directed=True, connection="weak")
            assert len(set(lab[members].tolist())) == 1


def test_gossipsub_shared_mesh_serves_every_topic_both_ends_subscribe_to(inst):
    """Default reading: once connected, a peer is grafted into every topic both subscribe to."""
    proto = GossipSubSplit(d=6)
    ov = proto.build(inst, seed=0)
    rows = {tuple(r) for r in proto.link_topics_.tolist()}
    for u, v in ov.edges().tolist():
        shared = set(inst.topics_of(u).tolist()) & set(inst.topics_of(v).tolist())
        assert {t for a, b, t in rows if (a, b) == (u, v)} == shared
    slot = GossipSubSplit(d=6, mesh="slot")
    assert slot.build(inst, seed=0) == ov  # the same connections; only the labels differ
    assert {tuple(r) for r in slot.link_topics_.tolist()} <= rows
