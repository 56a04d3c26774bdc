"""The named scenarios, :func:`run_scenario` and ``hedgerow run``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError
from hedgerow.scenarios import PROTOCOLS, SCENARIOS, run_scenario, simulate

BASE_KEYS = {"epoch", "receive_rate", "avg_delay_ms", "avg_score", "relay_copies"}
ATTACK_KEYS = {"attacker_slot_share", "honest_with_honest_neighbour", "honest_with_honest_link"}


def test_registry_names():
    assert list(PROTOCOLS) == [
        "topiary",
        "random",
        "complete",
        "gossipsub",
        "scribe-random",
        "scribe-topic",
    ]
    assert sorted(SCENARIOS) == ["cities", "eclipse", "topic-attack", "unit-square"]
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
@pytest.mark.parametrize("protocol", ["random", "gossipsub", "scribe-random", "scribe-topic"])
def test_static_baselines_report_one_epoch(protocol):
    rows = run_scenario(protocol, "cities", topics=20, epochs=5, params={"messages": 60})
    assert len(rows) == 1 and set(rows[0]) == BASE_KEYS
    assert rows[0]["avg_score"] is None
    assert 0.0 < rows[0]["receive_rate"] <= 1.0
    json.dumps(rows)


@pytest.mark.data
def test_complete_graph_is_the_delay_lower_bound():
    kw = dict(topics=20, params={"messages": 100})
    comp = run_scenario("complete", "cities", **kw)[0]
    rand = run_scenario("random", "cities", **kw)[0]
    assert comp["receive_rate"] == 1.0
    assert comp["avg_delay_ms"] < rand["avg_delay_ms"]


def test_topic_attack_rows():
    res = simulate(
        "topiary", "topic-attack", epochs=2, topics=20, attackers=500, params={"messages": 60}
    )
    assert len(res.rows) == 2
    for row in res.rows:
        assert set(row) == BASE_KEYS | ATTACK_KEYS | {"victim_receive_rate", "victim_avg_delay_ms"}
        assert 0 <= row["attacker_slot_share"] <= 1
    assert res.meta["attackers"] == 500 and int((~res.honest).sum()) == 500
    assert res.scores.shape == (2, 1000)
    json.dumps(res.rows)


def test_eclipse_rows_and_attacker_links():
    res = simulate("topiary", "eclipse", epochs=1, topics=20, params={"messages": 50})
    row = res.rows[0]
    assert set(row) == BASE_KEYS | ATTACK_KEYS
    # attackers only hold their clique; honest nodes keep <= d out-links
    deg = res.overlay.degree()
    assert (deg[res.honest] <= 6).all()
    assert (deg[~res.honest] == 299).all()
    assert np.isnan(res.scores[0, ~res.honest]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            dict(protocol="perigee", scenario="unit-square"),
            "unknown protocol 'perigee'; allowed: topiary",
        ),
        (
            dict(protocol="topiary", scenario="moon"),
            "allowed: cities, eclipse, topic-attack, unit-square",
        ),
        (dict(protocol="topiary", scenario="unit-square", attackers=5), "has no attackers"),
        (
            dict(protocol="topiary", scenario="unit-square", params={"alpha": 1}),
            "unknown parameter 'alpha'; allowed: d, eta, keep, messages, ttl, wc, wd, ww",
        ),
        (
            dict(protocol="complete", scenario="unit-square", params={"d": 3}),
            "complete: unknown parameter 'd'; allowed: messages, ttl",
        ),
        (
            dict(protocol="scribe-topic", scenario="unit-square", params={"groups": "random"}),
            "unknown parameter 'groups'",
        ),
        (dict(protocol="topiary", scenario="unit-square", interest=1.5), "interest must be in"),
        (dict(protocol="topiary", scenario="unit-square", topics=0), "topics must be >= 1"),
    ],
)
def test_bad_names_and_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(")):
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
            "-p",
            "messages=40",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.strip().splitlines()]
    assert [r["epoch"] for r in lines] == [0, 1]
    res = runner.invoke(
        cli, ["run", "random", "--scenario", "cities", "--topics", "10", "-p", "messages=40"]
    )
    assert res.exit_code == 0
    assert "receive rate" in res.stdout and "avg delay (ms)" in res.stdout


def test_cli_errors_exit_2():
    runner = CliRunner()
    res = runner.invoke(cli, ["run", "nope", "--scenario", "unit-square"])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "error: unknown protocol 'nope'; allowed: topiary, random, complete, gossipsub, "
        "scribe-random, scribe-topic"
    ]
    res = runner.invoke(cli, ["run", "topiary", "--scenario", "unit-square", "-p", "eta=1"])
    assert res.exit_code == 2 and res.stderr.startswith("error: topiary: parameter eta")
