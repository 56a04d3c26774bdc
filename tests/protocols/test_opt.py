"""OPT, Vitis's overlay-per-topic baseline (section IV): greedy coverage, bounded and unbounded."""

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
    full = get_protocol("opt", unbounded=True, cycles=6, cache=inst.n_nodes, sampler="uniform",
                        coverage=1)
    ov = full.build(inst, seed=1)
    # node 0 needs one link per topic: 8 out-links, above any bound of 3
    assert ov.degree()[0] == 8
    assert full.stats_["uncovered_share"] == 0.0
    bounded = get_protocol("opt", rt=3, cycles=6, cache=inst.n_nodes, sampler="uniform")
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
        res = run_protocol(get_protocol("opt", rt=rt, unbounded=ub, cycles=15, cache=20,
                                        sampler="uniform"), world)
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
