"""Lean Gossip's world (``hedgerow.scenarios.lean_gossip``): its invariants and a small run.

The readings are those of ``docs/gossipsub.md``, "Lean Gossip's world".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.latency import latency_model
from hedgerow.latency.regions import REGION_MEANS_MS, REGION_NAMES, REGION_SHARES
from hedgerow.scenarios import make_world
from hedgerow.scenarios.lean_gossip import (
    EPOCH_S,
    lean_gossip_world,
    run_lean_gossip,
    run_world,
    scenario_world,
)
from hedgerow.scenarios.world import resolve_scenario
from hedgerow.scenarios.world.lean import BimodalChurn, parse_bimodal_churn, parse_peer_table


def test_region_shares_and_latencies():
    n = 3000
    m = latency_model("regions", n, np.random.default_rng(4))
    labels = np.array(m.labels)
    for name, share in zip(REGION_NAMES, REGION_SHARES, strict=True):
        assert abs((labels == name).mean() - share) < 0.03, name
    d = m.matrix()
    assert np.allclose(d, d.T) and (d[~np.eye(n, dtype=bool)] >= 10.0).all()
    idx = {r: np.flatnonzero(labels == r)[:300] for r in REGION_NAMES}
    for i, a in enumerate(REGION_NAMES):
        for j, b in enumerate(REGION_NAMES):
            block = d[np.ix_(idx[a], idx[b])]
            if a == b:
                block = block[~np.eye(len(idx[a]), dtype=bool)]
            mean = REGION_MEANS_MS[i][j]
            assert abs(block.mean() - mean) < 0.03 * mean, (a, b)
            assert abs(block.std() / mean - 0.3) < 0.05, (a, b)
    ticked = latency_model("regions", 200, np.random.default_rng(4), tick_ms=100.0).matrix()
    assert set(np.unique(ticked[~np.eye(200, dtype=bool)])) <= {100.0, 200.0, 300.0, 400.0,
                                                                500.0}


def test_bimodal_churn_schedule_shares():
    law = BimodalChurn(0.3, 0.01, 0.05)
    w = lean_gossip_world(1000, churn=law, seed=5, ticks=6000, warmup_ticks=0)
    assert abs(w.churny.mean() - 0.3) < 0.04
    on = w.online[1000:]  # past the start, every churny peer in its stationary regime
    assert on[:, ~w.churny].all()  # stable peers never leave
    share = on[:, w.churny].mean()
    assert abs(share - 0.05 / 0.06) < 0.02
    assert abs(on.mean() - law.online_share) < 0.015
    # sessions: mean offline 1 / 0.05 ticks, mean online 1 / 0.01 ticks
    x = w.online[:, w.churny].astype(np.int8)
    leaves = ((x[:-1] == 1) & (x[1:] == 0)).sum()
    joins = ((x[:-1] == 0) & (x[1:] == 1)).sum()
    ticks_on, ticks_off = x[:-1].sum(), (1 - x[:-1]).sum()
    assert abs(leaves / ticks_on - 0.01) < 0.001
    assert abs(joins / ticks_off - 0.05) < 0.005


def test_attestation_workload_rate_and_one_per_peer():
    w = lean_gossip_world(2000, seed=6, ticks=4000, warmup_ticks=0)
    pubs = w.publications
    assert len(np.unique(pubs.publisher)) == len(pubs)  # the bucket is never refilled
    expect = 2000 * (1 - math.exp(-400.0 / EPOCH_S))  # P(first attestation within 400 s)
    assert abs(len(pubs) - expect) < 4 * math.sqrt(expect)
    assert (pubs.size == 1536.0).all() and (pubs.time_ms % 100.0 == 0).all()
    early = (pubs.time_ms < 20_000).sum()  # the rate at the start: 2000 / 384 per s
    assert abs(early - 20 * 2000 / EPOCH_S) < 4 * math.sqrt(20 * 2000 / EPOCH_S)
    refill = lean_gossip_world(300, seed=6, ticks=20000, warmup_ticks=0, refill=True)
    assert len(refill.publications) > 300  # refilled: about 1 per 384 s per peer
    churny = lean_gossip_world(400, churny_fraction=1.0, seed=7, ticks=3000, warmup_ticks=0)
    t = (churny.publications.time_ms / 100.0).astype(int)
    assert churny.online[t, churny.publications.publisher].all()  # only online peers publish


def test_peer_tables_are_symmetric_connections():
    w = lean_gossip_world(300, seed=8, ticks=10, warmup_ticks=0)
    c = w.connections
    deg = np.diff(c.indptr)
    assert deg.min() >= 40 and deg.max() <= 299
    assert np.array_equal(c.row_of[c.rev], c.indices)  # both directions of every connection
    assert (w.edge_delay % 100.0 == 0).all()


def test_small_run_delivers_and_counts_like_lean_gossip():
    w = lean_gossip_world(150, seed=9, ticks=1200, warmup_ticks=300)
    row = run_world(w, 4, 3)
    assert row["delivery_rate_settled"] == 1.0  # all but the messages of the last seconds
    assert row["delivery_rate"] > 0.9
    assert row["messages_published"] == int((w.publications.time_ms >= w.warmup_ms).sum())
    assert 0.1 <= row["p50_latency_sec"] <= row["p99_latency_sec"] < 3.0
    # every delivery costs at least one 1536-byte copy
    assert row["bytes_per_delivery"] >= 1536.0
    assert row["total_deliveries"] <= row["messages_published"] * 149
    churned = run_world(lean_gossip_world(150, churny_fraction=0.3, seed=9, ticks=1200,
                                          warmup_ticks=300), 4, 3)
    assert 0.85 < churned["delivery_rate"] < row["delivery_rate"]
    assert churned["offline_drops"] >= 0 and churned["late_deliveries"] > 0


def test_named_world_and_its_settings():
    sc = resolve_scenario("lean-gossip")
    assert (sc.nodes, sc.latency, sc.peer_table, sc.bandwidth, sc.size) == (
        1000, "regions", "40:80", "25", "1536")
    assert parse_bimodal_churn(sc.bimodal_churn).churny_fraction == 0.0
    w = scenario_world(nodes=100, bimodal_churn="0.2:0.01:0.05", ticks=20, warmup_ticks=0)
    assert w.churn == BimodalChurn(0.2, 0.01, 0.05, 100.0) and w.n == 100
    with pytest.raises(ParameterError, match="bimodal_churn: LEAVE must be a probability"):
        resolve_scenario("lean-gossip", bimodal_churn="0.2:1.5:0.05")
    with pytest.raises(ParameterError, match="peer_table: expected LO:HI"):
        parse_peer_table("40")
    with pytest.raises(ParameterError, match="not by the epoch loop"):
        make_world("lean-gossip", nodes=50)
    with pytest.raises(ParameterError, match="not a Lean Gossip world"):
        scenario_world("unit-square")
    row = run_lean_gossip(3, 2, nodes=60, ticks=300, warmup_ticks=100, seed=3,
                          bimodal_churn="0.2:0.01:0.05")
    assert row["churny_fraction"] == 0.2 and row["delivery_rate"] > 0.8
