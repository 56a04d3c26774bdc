"""OPT, Vitis's overlay-per-topic baseline (section IV): per-topic rings or greedy coverage."""

from __future__ import annotations

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
