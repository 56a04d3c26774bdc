"""The GossipSub v1.1 evaluation's attack worlds (``gs-*``) and their attack settings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.scenarios import SCENARIOS, make_world, run_protocol, run_scenario
from hedgerow.scenarios.run import make_protocol

SMALL = {"nodes": 150, "attackers": 30, "messages": 200}


def test_the_report_worlds_set_the_attacks_timing():
    sc = {name: SCENARIOS[f"gs-{name}"] for name in ("eclipse", "censor", "cold-boot",
                                                      "covert-flash", "dawn")}
    assert (sc["eclipse"].attack, sc["eclipse"].attack_degree, sc["eclipse"].attack_join_s) == (
        "sybil-eclipse", 1, 60.0)
    assert (sc["censor"].attack, sc["censor"].attack_degree) == ("sybil-censor", 100)
    assert sc["covert-flash"].attack_after_s == 120.0 and sc["dawn"].honest_join_s == 10.0
    assert all(s.nodes == 1250 and s.attackers == 250 for s in sc.values())
    assert SCENARIOS["gs-baseline"].attack is None


def test_sybils_are_subscribed_everywhere_never_publish_and_eclipse_a_publisher():
    w = make_world("gs-eclipse", seed=2, **SMALL)
    a = w.attack
    assert a is not None and a.sybil is not None
    assert (w.instance.n_subs[a.attackers] == w.instance.n_topics).all()
    assert (w.publishers.n_subs[a.attackers] == 0).all()
    assert a.honest[a.sybil.target] and w.publishers.n_subs[a.sybil.target] > 0
    assert int((w.publishers.n_subs > 0).sum()) == 12  # a tenth of the 120 honest nodes


def test_gossipsub_runs_a_sybil_world_and_reports_the_attack_columns():
    rows = run_scenario("gossipsub", "gs-censor", seed=1, params={"scoring": True},
                        attack_join_s=5.0, **SMALL)
    row = rows[-1]
    assert row["receive_rate"] > 0.99
    assert 0.0 <= row["victim_receive_rate"] <= 1.0  # the censored publisher's messages
    assert 0.0 < row["attacker_slot_share"] < 1.0


def test_gossipsub_runs_topiarys_topic_attack_and_refuses_its_clique_eclipse():
    rows = run_scenario("gossipsub", "topic-attack", seed=1, nodes=80, attackers=20, topics=5,
                        messages=60, params={"connections": 12, "warmup_ms": 3000.0,
                                             "drain_ms": 3000.0})
    assert "victim_receive_rate" in rows[-1]
    with pytest.raises(ParameterError, match=r"eclipse attackers are not modelled \(it models "
                                             r"topic, sybil"):
        run_scenario("gossipsub", "eclipse", seed=1, nodes=60, attackers=10, messages=20)


def test_attack_settings_apply_to_sybil_worlds_only():
    with pytest.raises(ParameterError, match="scenario 'cities' has no sybils"):
        make_world("cities", attack_degree=5)
    with pytest.raises(ParameterError, match="scenario 'topic-attack' has no sybils; "
                                             "attack_join_s applies to: gs-eclipse, gs-censor"):
        make_world("topic-attack", attack_join_s=5.0)
    w = make_world("gs-cold-boot", seed=1, attack_degree=7, attacker_ips=3, **SMALL)
    assert w.attack is not None and w.attack.sybil is not None
    assert (w.attack.sybil.degree, w.attack.sybil.ips) == (7, 3)


def test_a_static_protocol_sees_the_sybils_as_silent_on_every_topic():
    # the gs-* worlds publish over time (a contended world), where silent nodes are refused;
    # on the same world without that schedule, a static overlay loses what the sybils hold
    with pytest.raises(ParameterError, match="withhold"):
        run_scenario("random", "gs-cold-boot", seed=1, **SMALL)
    sc = replace(SCENARIOS["gs-cold-boot"], publication=None, size=None, jitter_ms=0.0,
                 nodes=150, attackers=60, messages=200, protocol_params={})
    world = make_world(sc, seed=1)
    assert not world.contended
    silent = run_protocol(make_protocol("random", world, None), world).rows[-1]
    a = world.attack
    assert a is not None
    relaying = replace(world, attack=replace(a, silent=np.zeros_like(a.silent)))
    honest = run_protocol(make_protocol("random", relaying, None), relaying).rows[-1]
    # the same overlay and messages: paths through sybils are gone, so arrivals come later
    assert silent["receive_rate"] <= honest["receive_rate"]
    assert silent["delay_mean_ms"] > honest["delay_mean_ms"]


def test_honest_meshes_keep_their_bounds_after_every_heartbeat_under_attack():
    from hedgerow.dissemination.contended import Network
    from hedgerow.protocols.engine_api import Publications

    world = make_world("gs-dawn", seed=3, nodes=120, attackers=30, messages=50)
    proto = make_protocol("gossipsub", world, {"scoring": True, "warmup_ms": 2000.0})
    pubs = Publications.create(np.flatnonzero(world.honest)[:50], np.zeros(50, dtype=np.int64),
                               2000.0 + 100.0 * np.arange(50), 2048.0)
    engine = proto.clock_engine(world.instance, Network.uniform(world.n_nodes), world.latency,
                                world.proc, pubs, proto.streams(3), attack=world.attack)
    v = proto.checked()
    honest = world.honest
    for k in range(1, 25):
        engine.run_until(k * engine.heartbeat_ms)
        out = proto.heartbeat_bounds(engine)
        if k < 10:  # the honest nodes see only sybils (unbounded, not checked) until 10 s
            assert out == [], k
        # never below D_lo with a peer it could graft; above D_hi only by the outbound quota:
        # a mesh of D_hi inbound sybils grafts D_out outbound peers once they connect (as go's
        # heartbeat does, with no check against D_hi)
        assert all("> D_hi" in m for m in out), out
        deg = engine.mesh_degree()[honest, 0]
        assert deg.max() <= v["D_hi"] + v["D_out"], k
