"""The named scenarios, :func:`simulate` / :func:`run_scenario` and ``hedgerow run``.

Scenario settings (``epochs, topics, interest, attackers, messages, ttl``) are
the world's and go to :func:`simulate` as keywords; ``params`` are the
protocol's own.
"""

from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError
from hedgerow.protocols import REGISTRY, capabilities, protocol_names
from hedgerow.scenarios import SCENARIOS, run_scenario, simulate

BASE_KEYS = {
    "epoch",
    "receive_rate",
    "delay_mean_ms",
    "delay_p50_ms",
    "delay_p90_ms",
    "delay_p99_ms",
    "hops_mean",
    "relay_copies",
    "relay_share",
    "duplicates_per_message",
    "avg_score",
}
ATTACK_KEYS = {"attacker_slot_share", "honest_with_honest_neighbour", "honest_with_honest_link"}
#: Topiary and its section V-A baselines
TOPIARY_BASELINES = ("random-graph", "complete", "gossipsub-split", "scribe-random", "scribe-topic")


def test_registry_names():
    assert set(TOPIARY_BASELINES) | {"topiary"} <= set(REGISTRY)
    assert capabilities(REGISTRY["topiary"]) == ("adaptive",)
    for name in TOPIARY_BASELINES:
        assert capabilities(REGISTRY[name]) == ("static",)
    # the named worlds these tests use are registered (no pin of how many exist)
    used = {"cities", "eclipse", "eth-blocks", "goldfish-churn", "goldfish-fig2",
            "goldfish-random", "goldfish-real", "goldfish-withhold", "gs-baseline",
            "gs-broken-promises", "gs-censor", "gs-cold-boot", "gs-covert-flash", "gs-dawn",
            "gs-eclipse", "lean-gossip", "perigee-matrix", "rss-unit-square", "topic-attack",
            "unit-square", "unit-square-bw", "vitis-high", "vitis-low", "vitis-random",
            "vitis-twitter", "cities-placed"}
    assert used <= set(SCENARIOS)
    us = SCENARIOS["unit-square"]
    assert (us.nodes, us.d, us.topics, us.interest, us.ttl, us.epochs, us.messages) == (
        1000,
        6,
        100,
        0.2,
        1,
        150,
        1000,
    )
    assert (SCENARIOS["cities"].nodes, SCENARIOS["cities"].d) == (246, 5)
    assert SCENARIOS["topic-attack"].attackers == SCENARIOS["eclipse"].attackers == 300


@pytest.mark.data
@pytest.mark.parametrize("protocol",
                         ["random-graph", "gossipsub-split", "scribe-random", "scribe-topic"])
def test_static_baselines_report_one_epoch(protocol):
    rows = run_scenario(protocol, "cities", topics=20, epochs=5, messages=60)
    assert len(rows) == 1 and set(rows[0]) == BASE_KEYS | RAN_STATIC
    assert rows[0]["params"]["d"] == 5  # the scenario's budget, stated for this protocol
    assert rows[0]["avg_score"] is None
    assert 0.0 < rows[0]["receive_rate"] <= 1.0
    json.dumps(rows)


@pytest.mark.data
def test_complete_graph_is_the_delay_lower_bound():
    kw = dict(topics=20, messages=100)
    comp = run_scenario("complete", "cities", **kw)[0]
    rand = run_scenario("random-graph", "cities", **kw)[0]
    assert comp["receive_rate"] == 1.0
    assert comp["delay_mean_ms"] < rand["delay_mean_ms"]


def test_every_protocol_gets_the_same_traffic():
    """The world draws the messages: epoch ``e`` is the ``e``-th draw, whatever the protocol."""
    a = simulate("topiary", "cities", epochs=2, topics=10, messages=40).world
    b = simulate("random-graph", "cities", epochs=2, topics=10, messages=40).world
    assert a.fingerprint() == b.fingerprint()
    for (pa, ta), (pb, tb) in islice(zip(a.traffic(), b.traffic(), strict=True), 3):
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(ta, tb)


STREAK_KEYS = {"eclipse_streak_max", "eclipse_streak_p99"}
#: what every row records of the protocol (scenarios.run.ran_with)
RAN_STATIC = {"params"}
RAN_ADAPTIVE = {"params", "out_degree", "in_limit"}


def test_topic_attack_rows():
    res = simulate("topiary", "topic-attack", epochs=2, topics=20, attackers=500, messages=60)
    assert len(res.rows) == 2
    victim = {"victim_receive_rate", "victim_delay_mean_ms"}
    for row in res.rows[:-1]:
        assert set(row) == BASE_KEYS | ATTACK_KEYS | victim | RAN_ADAPTIVE
        assert 0 <= row["attacker_slot_share"] <= 1
    # the last row also carries the eclipse streaks of the run
    assert set(res.rows[-1]) == BASE_KEYS | ATTACK_KEYS | victim | STREAK_KEYS | RAN_ADAPTIVE
    assert res.world.scenario.attackers == 500 and int((~res.world.honest).sum()) == 500
    assert res.scores.shape == (2, 1000)
    json.dumps(res.rows)


def test_eclipse_rows_and_attacker_links():
    res = simulate("topiary", "eclipse", epochs=1, topics=20, messages=50)
    row = res.rows[0]
    assert set(row) == BASE_KEYS | ATTACK_KEYS | STREAK_KEYS | RAN_ADAPTIVE
    # attackers only hold their clique; honest nodes keep <= d out-links
    honest = res.world.honest
    deg = res.overlay.degree()
    assert (deg[honest] <= 6).all()
    assert (deg[~honest] == 299).all()
    assert np.isnan(res.scores[0, ~honest]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            dict(protocol="kademlia", scenario="unit-square"),
            f"unknown protocol 'kademlia'; allowed: {', '.join(protocol_names())}",
        ),
        (
            dict(protocol="topiary", scenario="moon"),
            f"unknown scenario 'moon'; allowed: {', '.join(sorted(SCENARIOS))}",
        ),
        (dict(protocol="topiary", scenario="unit-square", attackers=5), "has no attackers"),
        (
            dict(protocol="topiary", scenario="unit-square", params={"alpha": 1}),
            "unknown parameter 'alpha'; allowed: d, wc, wd, ww, eta, keep",
        ),
        (
            # messages and ttl are scenario settings now, not protocol parameters
            dict(protocol="topiary", scenario="unit-square", params={"messages": 10}),
            "topiary: unknown parameter 'messages'",
        ),
        (
            dict(protocol="complete", scenario="unit-square", params={"d": 3}),
            "complete: unknown parameter 'd'; allowed: (none)",
        ),
        (
            dict(protocol="scribe-topic", scenario="unit-square", params={"groups": "random"}),
            "unknown parameter 'groups'",
        ),
        (dict(protocol="topiary", scenario="unit-square", interest=1.5), "interest must be in"),
        (dict(protocol="topiary", scenario="unit-square", topics=0), "topics must be >= 1"),
        (dict(protocol="topiary", scenario="unit-square", messages=0), "messages must be >= 1"),
    ],
)
def test_bad_names_and_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_scenario(**kwargs)


@pytest.mark.data
def test_cli_json_and_table():
    runner = CliRunner()
    res = runner.invoke(
        cli,
        [
            "run",
            "topiary",
            "--scenario",
            "cities",
            "--topics",
            "10",
            "--epochs",
            "2",
            "--messages",
            "40",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.strip().splitlines()]
    assert [r["epoch"] for r in lines] == [0, 1]
    res = runner.invoke(
        cli, ["run", "random-graph", "--scenario", "cities", "--topics", "10", "--messages", "40"]
    )
    assert res.exit_code == 0, res.output
    assert "receive rate" in res.stdout and "delay (ms)" in res.stdout


def test_cli_errors_exit_2():
    runner = CliRunner()
    res = runner.invoke(cli, ["run", "nope", "--scenario", "unit-square"])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        f"error: unknown protocol 'nope'; allowed: {', '.join(protocol_names())}"
    ]
    res = runner.invoke(cli, ["run", "topiary", "--scenario", "unit-square", "-p", "eta=1"])
    assert res.exit_code == 2 and res.stderr.startswith("error: topiary: parameter eta")
    res = runner.invoke(cli, ["run", "topiary", "--scenario", "unit-square", "-p", "messages=40"])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: topiary: unknown parameter 'messages'")
