"""OPT, Vitis's overlay-per-topic baseline (section IV): per-topic rings or greedy coverage."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import Instance
from hedgerow.protocols import get_protocol
from hedgerow.protocols.baselines.opt import coverage_select
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import world_for_instance


def _hub_instance(k: int = 8) -> Instance:
    """Node 0 follows topics 0..k-1; topic t's other subscribers are nodes 1+t and 1+k+t."""
    subs = [list(range(k))] + [[t] for t in range(k)] + [[t] for t in range(k)]
    return Instance.from_lists(subs, n_topics=k)


def test_greedy_coverage_prefers_the_widest_candidate():
    inst = Instance.from_lists([[0, 1, 2, 3], [0, 1], [2], [0, 1, 2, 3], [3]])
    assert coverage_select(0, np.array([1, 2, 4, 3]), inst).tolist() == [3]
    # without node 3: {0,1} first, then {2} and {3} in buffer order
    assert coverage_select(0, np.array([1, 2, 4]), inst).tolist() == [1, 2, 4]
    # a candidate that adds nothing is never taken
    assert coverage_select(1, np.array([2, 4]), inst).tolist() == []


def test_unbounded_covers_every_topic_bounded_cannot():
    inst = _hub_instance(8)
    full = get_protocol("opt", overlay="coverage", unbounded=True, cycles=6, cache=inst.n_nodes,
                        sampler="uniform", coverage=1)
    ov = full.build(inst, seed=1)
    # node 0 needs one link per topic: 8 out-links, above any bound of 3
    assert ov.degree()[0] == 8
    assert full.stats_["uncovered_share"] == 0.0
    bounded = get_protocol("opt", overlay="coverage", rt=3, cycles=6, cache=inst.n_nodes,
                           sampler="uniform")
    ovb = bounded.build(inst, seed=1)
    assert ovb.degree().max() <= 3


def test_bounded_opt_misses_subscribers_unbounded_reaches_all():
    """Fig. 10a / 11: a degree bound leaves topics split; without it, every subscriber is hit."""
    rng = np.random.default_rng(0)
    subs = [rng.choice(40, size=12, replace=False).tolist() for _ in range(80)]
    inst = Instance.from_lists(subs, n_topics=40)
    world = world_for_instance(inst, seed=3, messages=300)
    rates = {}
    for ub, rt in ((False, 1), (True, 1)):
        res = run_protocol(get_protocol("opt", overlay="coverage", rt=rt, unbounded=ub,
                                        cycles=15, cache=20, sampler="uniform"), world)
        rates[ub] = res.rows[0]["receive_rate"]
        assert res.rows[0]["relay_share"] == 0.0  # events stay among subscribers
    assert rates[False] < 0.9 < rates[True]


def test_same_seed_same_overlay():
    inst = _hub_instance(5)
    a = get_protocol("opt", cycles=4).build(inst, seed=2)
    b = get_protocol("opt", cycles=4).build(inst, seed=2)
    assert np.array_equal(a.edges(), b.edges())


@pytest.mark.parametrize(("param", "value"), [("rt", 0), ("cycles", 0), ("coverage", 0)])
def test_bad_parameters(param, value):
    with pytest.raises(ParameterError, match=param):
        get_protocol("opt", **{param: value}).check_params()


def test_topic_ring_keeps_the_nearest_subscriber_each_way_per_topic():
    from hedgerow.protocols.baselines.opt import topic_ring_select

    inst = Instance.from_lists([[0, 1], [0, 1], [0], [], [1], [0]])
    ids = np.array([50, 10, 60, 70, 40, 20], dtype=np.uint64)
    # node 0 (id 50): topic 0 -> successor 2 (60), predecessor 5 (20); topic 1 -> 1 (10) both ways
    # (1 and 4 are its only other subscribers: successor 1 via the wrap, predecessor 4 at 40)
    got = topic_ring_select(0, np.array([1, 2, 3, 4, 5]), inst, ids)
    assert sorted(got.tolist()) == [1, 2, 4, 5]
    assert topic_ring_select(0, np.array([3]), inst, ids).tolist() == []


def test_unbounded_topic_rings_converge_to_every_topics_true_ring():
    """overlay=ring, unbounded: each topic's subscribers end up on their id ring (hit ratio 1)."""
    from hedgerow.protocols.vitis import ring

    rng = np.random.default_rng(1)
    subs = [rng.choice(30, size=int(rng.integers(1, 8)), replace=False).tolist()
            for _ in range(120)]
    inst = Instance.from_lists(subs, n_topics=30)
    assert get_protocol("opt").checked()["overlay"] == "ring"
    p = get_protocol("opt", overlay="ring", unbounded=True, cycles=10, cache=20)
    ov = p.build(inst, seed=4)
    ids = ring.node_ids(120, int(p.streams(4).stream("opt:ids").integers(0, 2**31)))
    nbrs = [set() for _ in range(120)]
    for u, v in ov.edges():
        nbrs[u].add(v)
        nbrs[v].add(u)
    for t in range(30):
        members = inst.subscribers(t)
        if len(members) < 2:
            continue
        order = members[np.argsort(ids[members])]
        for a, b in zip(order, np.roll(order, -1), strict=True):
            assert b in nbrs[a]
    # a degree bound breaks some rings
    world = world_for_instance(inst, seed=3, messages=200)
    bounded = run_protocol(get_protocol("opt", overlay="ring", rt=2, cycles=25, cache=20), world)
    full = run_protocol(get_protocol("opt", overlay="ring", unbounded=True, cycles=25, cache=20),
                        world)
    assert bounded.rows[0]["receive_rate"] < 0.95 < full.rows[0]["receive_rate"] == 1.0


# ----------------------------------------------------------------- forward="own": own rings
def _random_instance(nodes: int = 120, topics: int = 30, seed: int = 1) -> Instance:
    rng = np.random.default_rng(seed)
    subs = [rng.choice(topics, size=int(rng.integers(1, 8)), replace=False).tolist()
            for _ in range(nodes)]
    return Instance.from_lists(subs, n_topics=topics)


def _own_and_topic_hops(ov, inst, lt):
    """Hops of one event per topic from its first subscriber: own-ring labels (TopicLinks) and,
    independently, every link between subscribers (scipy breadth-first on the induced graph)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    from hedgerow.dissemination.routed import TopicLinks

    topics = np.array([t for t in range(inst.n_topics) if len(inst.subscribers(t)) > 1])
    pubs = np.array([inst.subscribers(t)[0] for t in topics])
    own, _, relay = TopicLinks.from_rows(inst.n_nodes, inst.n_topics, lt).flood(
        pubs, topics, inst.masks)
    assert (relay == 0).all()
    und = ov.undirected_csr()
    topic = np.full(own.shape, -1)
    for i, t in enumerate(topics):
        keep = np.zeros(inst.n_nodes)
        keep[inst.subscribers(t)] = 1
        sub = sp.diags(keep) @ und @ sp.diags(keep)
        d = shortest_path(sp.csr_array(sub), unweighted=True, indices=int(pubs[i]))
        topic[i, np.isfinite(d)] = d[np.isfinite(d)]
    return topics, pubs, own, topic


def test_own_rings_converged_unbounded_reach_every_subscriber():
    inst = _random_instance()
    p = get_protocol("opt", unbounded=True, cycles=10, cache=20, forward="own")
    assert (p.forwarding, p.labels_links) == ("mesh", True)
    ov = p.build(inst, seed=4)
    topics, _, own, _ = _own_and_topic_hops(ov, inst, p.link_topics_)
    for i, t in enumerate(topics):
        assert (own[i, inst.subscribers(t)] >= 0).all(), f"topic {t} split on its own ring"
    world = world_for_instance(inst, seed=3, messages=200)
    row = run_protocol(get_protocol("opt", unbounded=True, cycles=10, cache=20, forward="own"),
                       world).rows[0]
    assert row["receive_rate"] == 1.0 and row["relay_share"] == 0.0


@pytest.mark.parametrize("unbounded", [True, False])
def test_own_rings_are_slower_subsets_of_the_topic_links(unbounded):
    inst = _random_instance(seed=2)
    p = get_protocol("opt", rt=3, unbounded=unbounded, cycles=6, cache=10, forward="own")
    ov = p.build(inst, seed=5)
    lt = p.link_topics_
    # labels: links of the overlay between two subscribers of the labelled topic
    assert (np.asarray(ov.csr()[lt[:, 0], lt[:, 1]]).ravel() == 1).all()
    both = inst.masks[lt[:, 0], lt[:, 2] >> 6] & inst.masks[lt[:, 1], lt[:, 2] >> 6]
    assert ((both >> (lt[:, 2] & 63).astype(np.uint64)) & np.uint64(1)).all()
    _, _, own, topic = _own_and_topic_hops(ov, inst, lt)
    reached = topic >= 0
    assert ((own == -1) | (own >= topic)).all()
    assert not (own[~reached] >= 0).any()
    assert (own[reached] >= topic[reached]).all()
    # the same overlay as the default build: forward changes the policy, not the links
    same = get_protocol("opt", rt=3, unbounded=unbounded, cycles=6, cache=10).build(inst, seed=5)
    assert np.array_equal(same.edges(), ov.edges())


def test_own_ring_links_hand_made_ring():
    from hedgerow.model.overlay import Overlay
    from hedgerow.protocols.baselines.opt import own_ring_links

    inst = Instance.from_lists([[0, 1], [0, 1], [0], [], [1], [0]])
    ids = np.array([50, 10, 60, 70, 40, 20], dtype=np.uint64)
    full = [(u, v) for u in range(6) for v in range(u + 1, 6)]
    # every node linked: topic 0 in id order 1 (10), 5 (20), 0 (50), 2 (60); topic 1: 1, 4, 0
    got = own_ring_links(Overlay.from_edges(6, full, directed=True), inst, ids).tolist()
    assert got == [[0, 1, 1], [0, 2, 0], [0, 4, 1], [0, 5, 0], [1, 2, 0], [1, 4, 1], [1, 5, 0]]
    # without 0 - 2, and 0 - 5 chosen by 5: node 0's topic-0 neighbours are 1 (cw, by the wrap)
    # and 5 (ccw); node 2's are 1 (cw) and 5 (ccw); 5 -> 0 is the out-link that carries 0 - 5
    part = [e for e in full if e not in ((0, 2), (0, 5))] + [(5, 0)]
    got = own_ring_links(Overlay.from_edges(6, part, directed=True), inst, ids).tolist()
    assert got == [[0, 1, 0], [0, 1, 1], [0, 4, 1], [1, 2, 0], [1, 4, 1], [1, 5, 0], [2, 5, 0],
                   [5, 0, 0]]


def test_forward_own_needs_the_rings():
    with pytest.raises(ParameterError, match="forward") as e:
        get_protocol("opt", overlay="coverage", forward="own").check_params()
    assert "\n" not in str(e.value) and e.value.key == "forward"
    get_protocol("opt", overlay="coverage", forward="topic").check_params()


def test_forward_own_passes_the_static_conformance_checks():
    from hedgerow.protocols.baselines.opt import OPT
    from hedgerow.scenarios import checks

    class OPTOwn(OPT):
        quick_params: ClassVar[dict[str, Any]] = {**OPT.quick_params, "forward": "own"}

    for check in checks.protocol_checks(OPTOwn):
        check(OPTOwn)
    assert checks.check_static_build.__name__ in {c.__name__ for c in
                                                  checks.protocol_checks(OPTOwn)}


def test_forward_topic_is_the_default_and_unlabelled():
    from hedgerow.protocols.baselines.opt import OPT

    p = get_protocol("opt", cycles=4)
    assert (OPT.forwarding, OPT.labels_links) == ("topic", False)
    assert (p.forward, p.forwarding, p.labels_links) == ("topic", "topic", False)
    p.build(_hub_instance(5), seed=2)
    assert not hasattr(p, "link_topics_") and "link_topic_rows" not in p.stats_
