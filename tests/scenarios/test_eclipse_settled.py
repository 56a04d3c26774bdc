"""Topiary under the eclipse attack (V-D2): the settled acceptance, at reduced size.

Full size (1,000 nodes, 300 clique attackers, 150 epochs) is measured by
``hedgerow run topiary --scenario eclipse`` (docs/topiary.md, "Settled acceptance"); here 300
nodes of which 90 attackers, 60 epochs of 300 messages, on the same world with and without
attackers.
"""

from __future__ import annotations

import statistics

import pytest

from hedgerow.scenarios import simulate


@pytest.fixture(scope="module")
def runs():
    attacked = simulate(
        "topiary", "eclipse", seed=1, nodes=300, attackers=90, epochs=60, messages=300
    )
    clean = simulate("topiary", "unit-square", seed=1, nodes=300, interest=0.4, epochs=60,
                     messages=300)
    return attacked, clean


def test_attackers_hold_some_but_not_all_honest_slots(runs):
    attacked, _ = runs
    shares = [r["attacker_slot_share"] for r in attacked.rows[-30:]]
    assert 0.30 < min(shares) and max(shares) < 0.90


def test_delay_no_worse_than_without_attackers(runs):
    attacked, clean = runs
    with_attack = statistics.mean(r["delay_mean_ms"] for r in attacked.rows[-10:])
    without = statistics.mean(r["delay_mean_ms"] for r in clean.rows[-10:])
    assert with_attack <= without
    assert attacked.rows[-1]["receive_rate"] >= 0.99


def test_no_honest_node_eclipsed_for_more_than_five_epochs(runs):
    attacked, _ = runs
    last = attacked.rows[-1]
    assert last["eclipse_streak_max"] <= 5
    assert last["eclipse_streak_p99"] <= last["eclipse_streak_max"]
    assert "eclipse_streak_max" not in attacked.rows[-2]  # reported once, on the last row
