"""GossipSub's declared parameters, the rules across them, and the presets with their sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols.gossipsub.params import (
    ETHEREUM_TOPIC_KINDS,
    PARAMS,
    PRESETS,
    check_gossipsub,
    ethereum_score_params,
    preset,
    preset_sources,
    presets_reference,
    score_preset,
)
from hedgerow.protocols.gossipsub.scoring import PeerScoreParams, PeerScoreThresholds

CASE_KEYS = ("D", "D_lo", "D_hi", "D_lazy", "D_score", "D_out", "heartbeat_ms", "mcache_len",
             "mcache_gossip", "gossip_factor", "fanout_ttl_ms", "seen_ttl_ms", "prune_backoff_ms",
             "gossip_retransmission", "flood_publish", "idontwant_threshold", "variant", "scoring")


def test_the_case_format_keys_are_declared():
    assert set(CASE_KEYS) <= set(PARAMS)
    for name, p in PARAMS.items():
        assert p.name == name and p.doc


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_satisfy_the_constraints_and_name_a_source_for_every_value(name):
    values = preset(name)
    assert set(values) == set(PARAMS)
    assert check_gossipsub(values) == values          # nothing changed, nothing derived
    sources = preset_sources(name)
    assert set(sources) == set(PARAMS) and all(s.strip() for s in sources.values())


def test_the_specification_defaults():
    v10 = preset("v1.0")
    assert (v10["D"], v10["D_lo"], v10["D_hi"], v10["D_lazy"]) == (6, 4, 12, 6)
    assert (v10["heartbeat_ms"], v10["fanout_ttl_ms"], v10["seen_ttl_ms"]) == \
        (1000.0, 60_000.0, 120_000.0)
    assert (v10["mcache_len"], v10["mcache_gossip"]) == (5, 3)
    assert not v10["flood_publish"] and not v10["scoring"] and v10["idontwant_threshold"] is None
    v11 = preset("v1.1")
    assert (v11["D_score"], v11["D_out"], v11["gossip_factor"]) == (4, 2, 0.25)
    assert (v11["prune_backoff_ms"], v11["unsubscribe_backoff_ms"]) == (60_000.0, 10_000.0)
    assert v11["flood_publish"] and v11["gossip_retransmission"] == 3
    assert preset("v1.2")["idontwant_threshold"] == 1024


def test_the_ethereum_consensus_layer_settings():
    eth = preset("ethereum")
    assert (eth["D"], eth["D_lo"], eth["D_hi"], eth["D_lazy"]) == (8, 6, 12, 6)
    assert eth["heartbeat_ms"] == 700.0 and eth["fanout_ttl_ms"] == 60_000.0
    assert (eth["mcache_len"], eth["mcache_gossip"]) == (6, 3)
    assert eth["seen_ttl_ms"] == 12_000 * 32 * 2          # SLOT_DURATION_MS * SLOTS_PER_EPOCH * 2
    assert eth["scoring"] and eth["connections"] == 100
    assert eth["idontwant_threshold"] == 16_829
    assert "consensus-specs" in preset_sources("ethereum")["heartbeat_ms"]


def test_preset_returns_a_copy():
    preset("v1.1")["D"] = 99
    assert preset("v1.1")["D"] == 6


# --------------------------------------------------------------------------- rules across
@pytest.mark.parametrize(("change", "key"), [
    ({"D": 3}, "D"),                                  # below D_lo = 4
    ({"D": 13}, "D"),                                 # above D_hi = 12
    ({"D_lo": 7}, "D"),
    ({"D_score": 7, "D_hi": 12}, "D_score"),          # more kept by score than D
    ({"D_out": 4}, "D_out"),                          # not below D_lo
    ({"D": 7, "D_lo": 7, "D_out": 4}, "D_out"),       # 4 > 7 / 2
    ({"mcache_gossip": 6}, "mcache_gossip"),          # more than mcache_len = 5
    ({"variant": "v1.0", "flood_publish": True}, "flood_publish"),
    ({"variant": "v1.0", "flood_publish": False, "scoring": True}, "scoring"),
    ({"idontwant_threshold": 100}, "idontwant_threshold"),     # v1.1 has no IDONTWANT
])
def test_cross_parameter_rules(change, key):
    with pytest.raises(ParameterError) as e:
        check_gossipsub({**preset("v1.1"), **change})
    assert e.value.key == key and "\n" not in str(e.value)


def test_rules_that_hold_at_their_bound():
    base = preset("v1.1")
    assert check_gossipsub({**base, "D_out": 3})["D_out"] == 3          # D / 2 with D = 6
    assert check_gossipsub({**base, "D_score": 6})["D_score"] == 6
    assert check_gossipsub({**base, "D": 4})["D"] == 4
    assert check_gossipsub({**base, "mcache_gossip": 5})["mcache_gossip"] == 5
    # v1.0 ignores D_score and D_out
    assert check_gossipsub({**preset("v1.0"), "D_out": 5})["D_out"] == 5


def test_bootstrapper_setting_is_allowed():
    # gossipsub-v1.1.md, Recommendations for Network Operators: D = D_lo = D_hi = D_out = 0
    values = check_gossipsub({**preset("v1.1"), "D": 0, "D_lo": 0, "D_hi": 0, "D_out": 0,
                              "D_score": 0})
    assert values["D"] == 0


def test_v12_derives_the_idontwant_threshold():
    assert check_gossipsub({"variant": "v1.2"})["idontwant_threshold"] == 1024
    zero = check_gossipsub({"variant": "v1.2", "idontwant_threshold": 0})
    assert zero["idontwant_threshold"] == 0


@pytest.mark.parametrize("name", list(PARAMS))
def test_every_declared_parameter_refuses_its_invalid_values(name):
    for bad in PARAMS[name].invalid_values():
        with pytest.raises(ParameterError) as e:
            check_gossipsub({name: bad})
        assert e.value.key == name


def test_unknown_parameter_and_preset():
    with pytest.raises(ParameterError, match="unknown parameter 'd_low'"):
        check_gossipsub({"d_low": 4})
    with pytest.raises(ParameterError, match="unknown preset 'eth'") as e:
        preset("eth")
    assert e.value.key == "preset"


# --------------------------------------------------------------------------- scoring presets
TOL = 5e-5


def test_ethereum_scoring_equals_lodestar_and_teku_reference_values():
    """Lodestar's test of computeGossipPeerScoreParams (after Teku's), mainnet genesis count."""
    kinds = ["voluntary_exit", "attester_slashing", "beacon_aggregate_and_proof",
             "beacon_block", "beacon_attestation"]
    for slot, active in ((10_000, True), (0, False)):
        p = ethereum_score_params(kinds, active_validators=16_384, current_slot=slot)
        exit_, slashing, agg, block, att = p.topics
        for t in p.topics:
            assert t.time_in_mesh_quantum_ms == 12_000 and t.time_in_mesh_cap == 300.0
            assert t.time_in_mesh_weight == pytest.approx(0.03333, abs=TOL)
            assert t.invalid_deliveries_decay == pytest.approx(0.99713, abs=TOL)
        assert exit_.topic_weight == 0.05
        assert exit_.first_deliveries_weight == pytest.approx(1.8407, abs=TOL)
        assert exit_.first_deliveries_decay == pytest.approx(0.99856, abs=TOL)
        assert exit_.first_deliveries_cap == pytest.approx(21.73035, abs=TOL)
        assert exit_.invalid_deliveries_weight == pytest.approx(-2200.0, abs=TOL)
        assert (exit_.mesh_deliveries_weight, exit_.mesh_failure_penalty_weight) == (0.0, 0.0)
        assert slashing.first_deliveries_weight == pytest.approx(36.81486, abs=TOL)
        assert slashing.first_deliveries_cap == pytest.approx(1.08652, abs=TOL)
        assert agg.first_deliveries_weight == pytest.approx(0.33509, abs=TOL)
        assert agg.first_deliveries_decay == pytest.approx(0.86596, abs=TOL)
        assert agg.first_deliveries_cap == pytest.approx(119.3712, abs=TOL)
        assert agg.invalid_deliveries_weight == pytest.approx(-220.0, abs=TOL)
        assert agg.mesh_deliveries_decay == pytest.approx(0.930572, abs=TOL)
        assert agg.mesh_deliveries_cap == pytest.approx(68.6255, abs=TOL)
        assert agg.mesh_deliveries_activation_ms == 384_000
        assert agg.mesh_deliveries_window_ms == 12_000
        assert agg.mesh_failure_penalty_weight == pytest.approx(-0.7474, abs=TOL)
        assert block.first_deliveries_weight == pytest.approx(1.14716, abs=TOL)
        assert block.first_deliveries_decay == pytest.approx(0.99283, abs=TOL)
        assert block.first_deliveries_cap == pytest.approx(34.8687, abs=TOL)
        assert block.mesh_deliveries_decay == pytest.approx(0.97163, abs=TOL)
        assert block.mesh_deliveries_cap == pytest.approx(2.0547574, abs=TOL)
        assert block.mesh_failure_penalty_weight == pytest.approx(-468.9689, abs=TOL)
        assert att.topic_weight == 0.015625
        assert att.first_deliveries_weight == pytest.approx(2.6807, abs=TOL)
        assert att.first_deliveries_cap == pytest.approx(14.9214, abs=TOL)
        assert att.invalid_deliveries_weight == pytest.approx(-7040.0, abs=TOL)
        assert att.mesh_deliveries_decay == pytest.approx(0.96466, abs=TOL)
        assert att.mesh_deliveries_cap == pytest.approx(69.88248, abs=TOL)
        assert att.mesh_deliveries_activation_ms == 204_000
        assert att.mesh_failure_penalty_weight == pytest.approx(-369.0421, abs=TOL)
        if active:
            assert agg.mesh_deliveries_weight == pytest.approx(-0.7474, abs=TOL)
            assert agg.mesh_deliveries_threshold == pytest.approx(17.15638, abs=TOL)
            assert block.mesh_deliveries_weight == pytest.approx(-468.9689, abs=TOL)
            assert block.mesh_deliveries_threshold == pytest.approx(0.68491, abs=TOL)
            assert att.mesh_deliveries_weight == pytest.approx(-369.0421, abs=TOL)
            assert att.mesh_deliveries_threshold == pytest.approx(4.367655, abs=TOL)
        else:
            for t in (agg, block, att):
                assert (t.mesh_deliveries_weight, t.mesh_deliveries_threshold) == (0.0, 0.0)


def test_ethereum_peer_level_parameters():
    p = ethereum_score_params(list(ETHEREUM_TOPIC_KINDS))
    assert p.topic_score_cap == pytest.approx(55.0)        # half of (10 + 40) * 2.2
    assert p.ip_colocation_factor_weight == pytest.approx(-55.0)
    assert p.ip_colocation_factor_threshold == 3 and p.app_specific_weight == 1.0
    assert p.decay_interval_ms == 12_000 and p.decay_to_zero == 0.01
    assert p.retain_score_ms == 12_000 * 32 * 100
    assert p.behaviour_penalty_threshold == 6.0
    assert p.behaviour_penalty_decay == pytest.approx(0.01 ** (1 / 320))
    # Lighthouse's weight: gossip threshold / (converged counter - threshold)²
    target = (10 / 32) / (1 - p.behaviour_penalty_decay) - 6.0
    assert p.behaviour_penalty_weight == pytest.approx(-4000.0 / target**2)


def test_score_presets():
    params, thresholds = score_preset("ethereum", 3)
    assert len(params.topics) == 3 and params.topics[0] == params.topics[2]
    assert params.topics[0].topic_weight == 0.5                  # beacon_block
    assert thresholds == PeerScoreThresholds(gossip=-4000.0, publish=-8000.0,
                                             graylist=-16000.0, accept_px=100.0,
                                             opportunistic_graft=5.0)
    params, thresholds = score_preset("v1.2", 2)
    assert params == PeerScoreParams(topics=(params.topics[0],) * 2)
    assert thresholds == PeerScoreThresholds()
    kinds = ["beacon_block", "beacon_attestation"]
    params, _ = score_preset("ethereum", 2, topic_kinds=kinds)
    assert params.topics[1].topic_weight == 1 / 64


@pytest.mark.parametrize(("args", "kw", "key"), [
    (("v1.0", 2), {}, "preset"),
    (("nope", 2), {}, "preset"),
    (("ethereum", -1), {}, "n_topics"),
    (("ethereum", 2), {"topic_kinds": ["beacon_block"]}, "topic_kinds"),
    (("ethereum", 1), {"topic_kinds": ["blocks"]}, "topic_kinds"),
    (("ethereum", 1), {"active_validators": 0}, "active_validators"),
])
def test_score_preset_refusals(args, kw, key):
    with pytest.raises(ParameterError) as e:
        score_preset(*args, **kw)
    assert e.value.key == key


def test_docs_carry_the_presets_table():
    """docs/gossipsub.md holds presets_reference() verbatim (paste it after changing a preset)."""
    docs = (Path(__file__).resolve().parents[3] / "docs" / "gossipsub.md").read_text()
    assert presets_reference() in docs
