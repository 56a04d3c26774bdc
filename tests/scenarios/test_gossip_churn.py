"""Gossip overlays under churn (Vitis section IV-F): the cycle driver with RVR."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import Instance
from hedgerow.scenarios.churn import flash_crowd
from hedgerow.scenarios.gossip_churn import run_gossip_churn, sample_events
from hedgerow.scenarios.traces import EVENT_DTYPE
from hedgerow.workloads.correlated import correlated_instance


@pytest.fixture(scope="module")
def inst():
    return correlated_instance(240, topics=100, buckets=10, subs=10, correlation="low", seed=3)


def test_no_churn_settles_to_a_full_hit_ratio(inst):
    rows = run_gossip_churn("rvr", inst, np.ones(240, bool), np.zeros(0, EVENT_DTYPE),
                            duration=40, sample_every=20, seed=2,
                            params={"rt": 6, "sampler": "uniform"})
    assert rows[-1]["ring_correct"] == 1.0 and rows[-1]["hit_ratio"] == 1.0
    assert rows[-1]["online"] == rows[-1]["measured"] == 240


def test_flash_crowd_counts_only_nodes_past_the_grace(inst):
    on, ev = flash_crowd(240, 1e9, 45.0, np.random.default_rng(1), at=30.0)
    rows = run_gossip_churn("rvr", inst, on, ev, duration=45, sample_every=5, grace=10,
                            seed=2, params={"rt": 6})
    by_cycle = {r["cycle"]: r for r in rows}
    assert by_cycle[30]["online"] == 120 and by_cycle[40]["online"] == 240
    # the crowd joined in cycles 31-35: not yet measured at 40, all measured at 45
    assert by_cycle[40]["measured"] == 120 and by_cycle[45]["measured"] == 240


def test_leaving_nodes_are_neither_publishers_nor_receivers(inst):
    ev = np.array([(5.0, v, -1) for v in range(120)], dtype=EVENT_DTYPE)
    rows = run_gossip_churn("rvr", inst, np.ones(240, bool), ev, duration=30, sample_every=30,
                            seed=1, params={"rt": 6})
    assert rows[0]["online"] == 120 and rows[0]["measured"] == 120
    pub, _, _ = sample_events(inst, np.arange(240) >= 120, np.random.default_rng(0))
    assert (pub >= 120).all()


def test_protocols_without_an_engine_are_refused():
    inst = Instance.from_lists([[0]] * 4, n_topics=1)
    with pytest.raises(ParameterError, match="cycle protocols: rvr, vitis"):
        run_gossip_churn("ringpt", inst, np.ones(4, bool), np.zeros(0, EVENT_DTYPE), duration=2)


def test_vitis_runs_under_the_same_driver(inst):
    on, ev = flash_crowd(240, 1e9, 40.0, np.random.default_rng(1), at=20.0)
    rows = run_gossip_churn("vitis", inst, on, ev, duration=40, sample_every=20, seed=2,
                            params={"rt": 6, "cycles": 1})
    assert [r["online"] for r in rows] == [120, 240]
    assert all(0.0 <= r["hit_ratio"] <= 1.0 for r in rows)
