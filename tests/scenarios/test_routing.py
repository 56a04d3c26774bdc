"""The Vitis scenarios (vitis-random/low/high/twitter): settings, events and routing rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hedgerow.errors import ParameterError
from hedgerow.scenarios.run import compare, simulate
from hedgerow.scenarios.world import make_world, resolve_scenario


def test_setting_s0():
    for level in ("random", "low", "high"):
        sc = resolve_scenario(f"vitis-{level}")
        assert (sc.nodes, sc.topics, sc.subs, sc.rt, sc.cycles, sc.d) == (
            10000, 5000, 50, 15, 100, 5)
        assert sc.correlation == level and sc.events == "per-topic"
    sc = resolve_scenario("vitis-low", rt=35, cycles=20, nodes=300, alpha=1.5)
    assert (sc.rt, sc.cycles, sc.nodes, sc.alpha) == (35, 20, 300, 1.5)


def test_bad_settings():
    with pytest.raises(ParameterError, match="alpha"):
        resolve_scenario("unit-square", alpha=1.0)
    with pytest.raises(ParameterError, match="rt"):
        resolve_scenario("vitis-high", rt=2)
    # the scenario names its graph: the named input vitis-tw10k unless --social replaces it
    assert resolve_scenario("vitis-twitter").social == "vitis-tw10k"
    assert resolve_scenario("vitis-twitter", social="my/graph").social == "my/graph"


def test_one_event_per_topic_from_a_subscriber():
    w = make_world("vitis-low", seed=2, nodes=200, alpha=2.0)
    pub, top, weight = w.routing_events()
    sizes = w.instance.topic_sizes
    assert top.tolist() == np.flatnonzero(sizes > 0).tolist()
    assert all(w.instance.intersection_size(p, p) and t in w.instance.topics_of(p)
               for p, t in zip(pub[:50], top[:50], strict=True))
    assert np.array_equal(weight, w.instance.topic_rates[top])
    # the traffic of per-topic worlds is those events, the same for every protocol
    p2, t2 = next(w.traffic())
    assert np.array_equal(p2, pub) and np.array_equal(t2, top)


def test_routing_row_and_budget_handed_to_the_protocol():
    res = simulate("opt", "vitis-high", seed=1, nodes=200, rt=4, cycles=3)
    row = res.rows[0]
    for key in ("hit_ratio", "overhead", "overhead_copies", "delay_hops", "delay_hops_max",
                "degree_mean", "degree_max", "share_degree_above_15"):
        assert key in row
    assert row["overhead"] == 0.0 and row["overhead_copies"] == 0.0  # OPT: subscribers only
    assert row["rt"] == 4 and row["out_degree_max"] <= 4
    assert 0.0 < row["hit_ratio"] <= 1.0


def test_compare_rows_carry_the_routing_measures():
    rows = compare(["complete", "opt"], "vitis-random", seed=0, nodes=120, cycles=2,
                   forwarding="topic", diameter=False)
    assert rows[0]["world"] == rows[1]["world"]
    assert rows[0]["hit_ratio"] == 1.0 and rows[0]["delay_hops"] == 1.0
    assert rows[1]["hit_ratio"] <= 1.0


@pytest.fixture()
def tiny_follower_graph(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    node = np.repeat(np.arange(n), 6)
    topic = rng.integers(0, n, size=len(node))
    keep = node != topic
    df = pd.DataFrame({"node": node[keep], "topic": topic[keep]}).drop_duplicates()
    (tmp_path / "users").mkdir()
    (tmp_path / "subscriptions").mkdir()
    pd.DataFrame({"node": np.arange(n)}).to_parquet(tmp_path / "users" / "p.parquet")
    df.to_parquet(tmp_path / "subscriptions" / "p.parquet")
    return str(tmp_path)


def test_twitter_like_owner_publishes_and_rows_say_synthetic(tiny_follower_graph):
    w = make_world("vitis-twitter", seed=0, social=tiny_follower_graph)
    pub, top, _ = w.routing_events()
    assert np.array_equal(pub, top)  # the user who is the topic publishes on it
    assert all(t in w.instance.topics_of(t) for t in range(w.n_nodes))  # and belongs to it
    row = simulate("opt", "vitis-twitter", social=tiny_follower_graph, cycles=3).rows[0]
    assert "synthetic" in row["note"]


def test_rows_carry_the_protocols_own_rt():
    row = simulate("opt", "vitis-high", seed=1, nodes=150, cycles=2, params={"rt": 5}).rows[0]
    assert row["rt"] == 5 and row["cycles"] == 2
