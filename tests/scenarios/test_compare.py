"""``hedgerow.compare``: protocols side by side on one world, and the sanity of the table.

The head-to-head runs on ``unit-square`` seed 1 with 500 messages per epoch
and 20 Topiary epochs (about 12 s).  Measured there (receive rate, mean delay
in ms): complete 1.0000 / 262, Topiary 0.9952 / 487, SpiderCast 1.0000 / 615,
scribe-random 0.0109 / 639, scribe-topic 0.9702 / 723, gossipsub-split 0.9931 / 786,
random-graph 0.9776 / 834.  Topiary beats the four Topiary baselines at equal
or better receive rate from epoch 5 on (at every epoch up to 150); 20 epochs
leave a margin of 0.002 in receive rate and 150 ms in delay.
"""

from __future__ import annotations

import pytest

from hedgerow.errors import ParameterError
from hedgerow.scenarios import compare
from hedgerow.scenarios.run import COMPARE_KEYS

PROTOCOLS = [
    "spidercast",
    "complete",
    "random-graph",
    "gossipsub-split",
    "scribe-random",
    "scribe-topic",
    "topiary",
]
TOPIARY_BASELINES = ["random-graph", "gossipsub-split", "scribe-random", "scribe-topic"]


@pytest.fixture(scope="module")
def unit_square():
    rows = compare(PROTOCOLS, "unit-square", seed=1, messages=500, epochs=20)
    return {r["protocol"]: r for r in rows}


def test_rows_share_one_world_and_have_every_key(unit_square):
    assert list(unit_square) == PROTOCOLS
    assert len({r["world"] for r in unit_square.values()}) == 1
    for r in unit_square.values():
        assert set(COMPARE_KEYS) <= set(r), set(COMPARE_KEYS) - set(r)
        assert 0.0 <= r["receive_rate"] <= 1.0
    assert unit_square["topiary"]["epochs"] == 20 and unit_square["spidercast"]["epochs"] == 1


def test_spidercast_delivers_everything_without_relays(unit_square):
    """Topic-connected overlay under topic-only forwarding: no message needs a non-subscriber."""
    sc = unit_square["spidercast"]
    assert sc["receive_rate"] == 1.0 and sc["relay_share"] == 0
    assert sc["partitioned_topics"] == 0 and sc["control_messages"] > 0


def test_complete_graph_has_the_lowest_delay(unit_square):
    delays = {p: r["delay_mean_ms"] for p, r in unit_square.items()}
    assert min(delays, key=delays.get) == "complete"
    assert unit_square["complete"]["receive_rate"] == 1.0


def test_topiary_beats_its_baselines_on_delay_at_equal_or_better_receive_rate(unit_square):
    top = unit_square["topiary"]
    for name in TOPIARY_BASELINES:
        base = unit_square[name]
        assert top["receive_rate"] >= base["receive_rate"], name
        assert top["delay_mean_ms"] < base["delay_mean_ms"], name


def test_similarity_leaves_topics_split_where_spidercast_delivers_all():
    """SpiderCast's RSS workload (section 3.9.1): similarity(10,0) partitions topics, so some
    subscribers never receive; SpiderCast's topic connectivity delivers to all."""
    rows = compare(
        ["spidercast", "similarity"],
        "rss-unit-square",
        seed=1,
        messages=200,
        params={"similarity": {"similar": 10, "random": 0}},
        diameter=False,
    )
    sc, sim = rows
    assert sc["world"] == sim["world"]
    assert sc["receive_rate"] == 1.0 and sc["partitioned_topics"] == 0
    assert sim["receive_rate"] < 1.0 and sim["partitioned_topics"] > 0


@pytest.fixture(scope="module")
def cities_later_papers():
    """The TCO algorithms OMen builds on and Vitis with its baselines, on one cities world."""
    rows = compare(["gm", "lowoda", "minmaxoda", "vitis", "rvr", "opt"], "cities", seed=1,
                   messages=200)
    return {r["protocol"]: r for r in rows}


def test_tco_algorithms_deliver_everything_among_subscribers(cities_later_papers):
    """GM, LowODA and MinMaxODA build topic-connected overlays (OMen section 2): every topic
    connected, every subscriber reached, no message through a non-subscriber."""
    rows = cities_later_papers
    for name in ("gm", "lowoda", "minmaxoda"):
        r = rows[name]
        assert r["partitioned_topics"] == 0, name
        assert r["receive_rate"] == 1.0 and r["relay_share"] == 0, name
    # MinMaxODA and LowODA bound the maximum degree that GM leaves free (Table 1)
    assert rows["minmaxoda"]["max_degree"] <= rows["gm"]["max_degree"]
    assert rows["lowoda"]["max_degree"] <= rows["gm"]["max_degree"]
    # GM minimises the average degree
    assert rows["gm"]["avg_degree"] <= min(rows["lowoda"]["avg_degree"],
                                           rows["minmaxoda"]["avg_degree"])


def test_vitis_and_rvr_reach_everyone_and_vitis_relays_less(cities_later_papers):
    """Vitis section IV: Vitis and RVR reach every subscriber (rendezvous routing), Vitis with
    less relay traffic than RVR; OPT has no relay traffic at all."""
    v, rvr, opt = (cities_later_papers[p] for p in ("vitis", "rvr", "opt"))
    assert v["world"] == rvr["world"] == opt["world"]
    assert v["receive_rate"] == 1.0 and rvr["receive_rate"] == 1.0
    assert v["relay_share"] < rvr["relay_share"]
    assert opt["relay_share"] == 0


def test_same_seed_same_rows_but_seconds():
    kw = dict(topics=10, messages=50, epochs=2, seed=3)
    a = compare(["ringpt", "topiary"], "cities", **kw)
    b = compare(["ringpt", "topiary"], "cities", **kw)
    for r in a + b:
        r.pop("seconds")
    assert a == b


def test_bad_calls_are_refused_before_any_run():
    with pytest.raises(ParameterError, match="at least one protocol"):
        compare([], "cities")
    with pytest.raises(ParameterError, match="unknown protocol 'nope'"):
        compare(["ringpt", "nope"], "cities")
    with pytest.raises(ParameterError, match="not compared"):
        compare(["ringpt"], "cities", params={"topiary": {"eta": 2}})
    with pytest.raises(ParameterError, match="unknown scenario"):
        compare(["ringpt"], "moon")


def test_a_forwarding_policy_is_checked_against_the_configured_protocol():
    """OPT labels its links only with ``forward=own``: mesh forwarding is refused without it,
    before any run, and accepted with it (its events then stay on each topic's own ring)."""
    with pytest.raises(ParameterError, match="opt does not label its links"):
        compare(["opt"], "cities", forwarding="mesh")
    own = {"opt": {"forward": "own", "cycles": 10}}
    mesh, = compare(["opt"], "cities", seed=1, messages=50, forwarding="mesh", params=own,
                    diameter=False)
    default, = compare(["opt"], "cities", seed=1, messages=50, params=own, diameter=False)
    assert mesh["world"] == default["world"]
    assert mesh["hops_mean"] == default["hops_mean"]  # forward=own already forwards by mesh
