"""GossipSub v1.1 peer scoring: worked examples of the specification's formula, computed by hand.

Each example sets one term alone (the other weights 0) unless it says otherwise; the
expected values are written out as the arithmetic of the specification's formula
(``gossipsub-v1.1.md``, "The Score Function" and "Topic Parameter Calculation and Decay").
"""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols.gossipsub.scoring import (
    PeerScoreParams,
    PeerScoreThresholds,
    ScoreCounters,
    TopicScoreParams,
    add_penalty,
    decay,
    decay_convergence,
    decay_factor,
    disconnect,
    first_delivery,
    graft,
    group_median,
    invalid_delivery,
    mesh_delivery,
    opportunistic_graft,
    prune,
    refresh,
    score,
    threshold_masks,
    topic_scores,
)

OFF = dict(time_in_mesh_weight=0.0, first_deliveries_weight=0.0, mesh_deliveries_weight=0.0,
           mesh_failure_penalty_weight=0.0, invalid_deliveries_weight=0.0)
PEER_OFF = dict(topic_score_cap=0.0, app_specific_weight=0.0, ip_colocation_factor_weight=0.0,
                behaviour_penalty_weight=0.0)


def topic(**kw) -> TopicScoreParams:
    return TopicScoreParams(**{"topic_weight": 1.0, **OFF, **kw})


def peer(*topics, **kw) -> PeerScoreParams:
    return PeerScoreParams(topics=tuple(topics), **{**PEER_OFF, **kw})


def one_slot(n_conns: int = 1) -> ScoreCounters:
    """Node 0's view of ``n_conns`` peers, one slot each on topic 0."""
    return ScoreCounters.empty(slot_conn=np.arange(n_conns), slot_topic=np.zeros(n_conns, int),
                               conn_node=np.zeros(n_conns, int))


# --------------------------------------------------------------------------- P1
def test_p1_time_in_mesh_is_time_over_quantum_capped():
    params = peer(topic(time_in_mesh_weight=0.5, time_in_mesh_quantum_ms=1000.0,
                        time_in_mesh_cap=10.0))
    c = one_slot(2)
    graft(c, np.array([0]), now_ms=1000.0)
    assert score(c, params, now_ms=5500.0).tolist() == [0.5 * 4.5, 0.0]   # not in mesh: 0
    assert score(c, params, now_ms=60_000.0).tolist() == [0.5 * 10.0, 0.0]  # capped
    # read lazily: nothing until a refresh brings time in mesh up to date
    assert score(c, params).tolist() == [0.0, 0.0]
    refresh(c, params, now_ms=3000.0)
    assert score(c, params).tolist() == [0.5 * 2.0, 0.0]


def test_p1_stops_when_pruned():
    params = peer(topic(time_in_mesh_weight=1.0, time_in_mesh_quantum_ms=1000.0,
                        time_in_mesh_cap=100.0))
    c = one_slot()
    graft(c, np.array([0]), now_ms=0.0)
    refresh(c, params, now_ms=7000.0)
    prune(c, params, np.array([0]))
    assert score(c, params).tolist() == [0.0]
    assert score(c, params, now_ms=9000.0).tolist() == [0.0]


# --------------------------------------------------------------------------- P2
def test_p2_first_deliveries_weighted_and_capped_at_increment():
    params = peer(topic(first_deliveries_weight=2.0, first_deliveries_cap=4.0))
    c = one_slot(2)
    first_delivery(c, params, np.array([0, 0, 0, 1]))
    assert score(c, params).tolist() == [2.0 * 3, 2.0 * 1]
    first_delivery(c, params, np.array([0, 0, 0]))
    assert c.first_deliveries.tolist() == [4.0, 1.0]          # 6 capped at 4 when added
    assert score(c, params).tolist() == [2.0 * 4, 2.0 * 1]


def test_first_delivery_counts_for_p3_only_in_the_mesh():
    params = peer(topic(first_deliveries_weight=1.0, mesh_deliveries_weight=-1.0,
                        mesh_deliveries_threshold=5.0, mesh_deliveries_cap=6.0))
    c = one_slot(2)
    graft(c, np.array([1]), now_ms=0.0)
    first_delivery(c, params, np.array([0, 1, 1]))
    assert c.mesh_deliveries.tolist() == [0.0, 2.0]
    mesh_delivery(c, params, np.array([0, 1, 1, 1, 1, 1, 1]))   # near-first: mesh only
    assert c.mesh_deliveries.tolist() == [0.0, 6.0]              # 8 capped at 6
    assert c.first_deliveries.tolist() == [1.0, 2.0]


# --------------------------------------------------------------------------- P3, activation
def p3_params(**kw) -> PeerScoreParams:
    return peer(topic(**{"mesh_deliveries_weight": -1.0, "mesh_deliveries_threshold": 4.0,
                         "mesh_deliveries_cap": 10.0, "mesh_deliveries_decay": 0.5,
                         "mesh_deliveries_activation_ms": 2000.0, **kw}))


def test_p3_deficit_squared_only_after_the_activation_window():
    params = p3_params()
    c = one_slot()
    graft(c, np.array([0]), now_ms=1000.0)
    first_delivery(c, params, np.array([0]))                  # 1 mesh delivery
    assert score(c, params, now_ms=2500.0).tolist() == [0.0]  # in mesh 1.5 s
    assert score(c, params, now_ms=3000.0).tolist() == [0.0]  # exactly 2 s: not yet (">")
    assert score(c, params, now_ms=3001.0).tolist() == [-(4.0 - 1.0) ** 2]
    # the implementations' tick: decay first (1 -> 0.5), then activation
    refresh(c, params, now_ms=3001.0)
    assert bool(c.mesh_deliveries_active[0])
    assert score(c, params).tolist() == [-(4.0 - 0.5) ** 2]


def test_p3_is_zero_at_or_above_the_threshold():
    params = p3_params()
    c = one_slot()
    graft(c, np.array([0]), now_ms=0.0)
    first_delivery(c, params, np.array([0, 0, 0, 0]))
    assert score(c, params, now_ms=10_000.0).tolist() == [0.0]


def test_p3b_sticky_penalty_on_prune_with_deficit():
    params = peer(topic(mesh_deliveries_weight=-1.0, mesh_deliveries_threshold=4.0,
                        mesh_deliveries_cap=10.0, mesh_deliveries_decay=0.5,
                        mesh_deliveries_activation_ms=1000.0, mesh_failure_penalty_weight=-2.0,
                        mesh_failure_penalty_decay=0.5))
    c = one_slot(2)
    graft(c, np.array([0, 1]), now_ms=0.0)
    first_delivery(c, params, np.array([0, 1, 1, 1, 1, 1]))    # slot 0: 1, slot 1: 5
    refresh(c, params, now_ms=1500.0)                            # decay -> 0.5 and 2.5; active
    prune(c, params, np.array([0, 1]))
    assert c.mesh_failure_penalty.tolist() == [(4.0 - 0.5) ** 2, (4.0 - 2.5) ** 2]
    # out of the mesh: P3 no longer applies (JS), P3b does
    assert score(c, params).tolist() == [-2.0 * 3.5**2, -2.0 * 1.5**2]
    # a prune before activation adds nothing
    c2 = one_slot()
    graft(c2, np.array([0]), now_ms=0.0)
    prune(c2, params, np.array([0]))
    assert c2.mesh_failure_penalty.tolist() == [0.0]


def test_graft_resets_time_in_mesh_and_activation():
    params = p3_params()
    c = one_slot()
    graft(c, np.array([0]), now_ms=0.0)
    refresh(c, params, now_ms=5000.0)
    assert bool(c.mesh_deliveries_active[0])
    prune(c, params, np.array([0]))
    graft(c, np.array([0]), now_ms=6000.0)
    assert not c.mesh_deliveries_active[0] and c.mesh_time_ms[0] == 0.0
    assert score(c, params).tolist() == [0.0]   # P3 inactive again (P3b weight 0 here)


# --------------------------------------------------------------------------- P4
def test_p4_invalid_messages_squared():
    params = peer(topic(topic_weight=0.5, invalid_deliveries_weight=-3.0))
    c = one_slot(2)
    invalid_delivery(c, params, np.array([0, 0, 1, 0]))
    assert score(c, params).tolist() == [0.5 * -3.0 * 3**2, 0.5 * -3.0 * 1**2]


# --------------------------------------------------------------------------- topics
def test_topic_weights_sum_over_a_peers_topics():
    t0 = topic(topic_weight=0.5, first_deliveries_weight=1.0)
    t1 = topic(topic_weight=2.0, first_deliveries_weight=3.0)
    params = peer(t0, t1)
    # connection 0 has slots on topics 0 and 1; connection 1 only on topic 1
    c = ScoreCounters.empty(slot_conn=[0, 0, 1], slot_topic=[0, 1, 1], conn_node=[0, 0])
    first_delivery(c, params, np.array([0, 0, 1, 2, 2, 2]))
    assert score(c, params).tolist() == [0.5 * 1.0 * 2 + 2.0 * 3.0 * 1, 2.0 * 3.0 * 3]
    assert topic_scores(c, params).tolist() == [1.0, 6.0, 18.0]


def test_unscored_topics_contribute_nothing_and_never_count():
    params = peer(None, topic(first_deliveries_weight=1.0))
    c = ScoreCounters.empty(slot_conn=[0, 0, 0], slot_topic=[0, 1, 5], conn_node=[0])
    first_delivery(c, params, np.array([0, 1, 2]))
    invalid_delivery(c, params, np.array([0, 2]))
    assert c.first_deliveries.tolist() == [0.0, 1.0, 0.0]
    assert c.invalid_deliveries.tolist() == [0.0, 0.0, 0.0]
    assert score(c, params).tolist() == [1.0]
    c.first_deliveries[:] = [0.01, 0.01, 0.01]
    decay(c, params)                       # only the scored topic decays (and drops to 0)
    assert c.first_deliveries.tolist() == [0.01, 0.0, 0.01]


def test_topic_score_cap_caps_the_topic_sum_only():
    t = topic(first_deliveries_weight=10.0, first_deliveries_cap=100.0,
              invalid_deliveries_weight=-1.0)
    params = peer(t, topic_score_cap=25.0, app_specific_weight=1.0)
    c = one_slot(3)
    first_delivery(c, params, np.array([0, 0, 0, 1, 1]))     # 30 and 20
    invalid_delivery(c, params, np.array([2] * 6))           # -36: a negative sum is not capped
    c.app_score[:] = [5.0, 5.0, 0.0]
    assert score(c, params).tolist() == [min(30.0, 25.0) + 5.0, 20.0 + 5.0, -36.0]
    # no cap when 0
    uncapped = peer(t, app_specific_weight=1.0)
    assert score(c, uncapped).tolist() == [35.0, 25.0, -36.0]


# --------------------------------------------------------------------------- P5-P7
def test_p5_application_score():
    params = peer(app_specific_weight=2.0)
    c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=[0, 0])
    c.app_score[:] = [-3.0, 4.0]
    assert score(c, params).tolist() == [-6.0, 8.0]


def test_p6_colocated_peers_surplus_squared_per_scoring_node():
    params = peer(ip_colocation_factor_weight=-10.0, ip_colocation_factor_threshold=3)
    # node 0 sees five peers in group 1 and one in group 2; node 1 sees two in group 1;
    # a peer with group -1 shares no address
    conn_node = [0, 0, 0, 0, 0, 0, 1, 1, 0]
    ip_group = [1, 1, 1, 1, 1, 2, 1, 1, -1]
    c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=conn_node, ip_group=ip_group)
    surplus = 5 - 3
    expected = [-10.0 * surplus**2] * 5 + [0.0, 0.0, 0.0, 0.0]
    assert score(c, params).tolist() == expected


def test_p7_squared_excess_over_threshold():
    spec = peer(behaviour_penalty_weight=-1.0, behaviour_penalty_decay=0.5)
    with_threshold = peer(behaviour_penalty_weight=-1.0, behaviour_penalty_decay=0.5,
                          behaviour_penalty_threshold=2.0)
    c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=[0, 0, 0])
    add_penalty(c, np.array([0, 0, 0, 0, 0, 1, 1]))
    assert c.behaviour_penalty.tolist() == [5.0, 2.0, 0.0]
    assert score(c, spec).tolist() == [-25.0, -4.0, 0.0]              # the specification's P7²
    assert score(c, with_threshold).tolist() == [-(5.0 - 2.0) ** 2, 0.0, 0.0]


def test_all_terms_together():
    t = TopicScoreParams(topic_weight=0.5, time_in_mesh_weight=0.1, time_in_mesh_quantum_ms=1000.0,
                         time_in_mesh_cap=100.0, first_deliveries_weight=1.0,
                         first_deliveries_decay=0.5, first_deliveries_cap=50.0,
                         mesh_deliveries_weight=-0.5, mesh_deliveries_decay=0.5,
                         mesh_deliveries_cap=20.0, mesh_deliveries_threshold=6.0,
                         mesh_deliveries_activation_ms=1000.0, mesh_failure_penalty_weight=-0.25,
                         mesh_failure_penalty_decay=0.5, invalid_deliveries_weight=-2.0,
                         invalid_deliveries_decay=0.5)
    params = PeerScoreParams(topics=(t,), topic_score_cap=0.0, app_specific_weight=1.5,
                             ip_colocation_factor_weight=-1.0, ip_colocation_factor_threshold=1,
                             behaviour_penalty_weight=-0.5, behaviour_penalty_threshold=1.0,
                             behaviour_penalty_decay=0.5)
    c = ScoreCounters.empty(slot_conn=[0], slot_topic=[0], conn_node=[0, 0], ip_group=[4, 4])
    graft(c, np.array([0]), now_ms=0.0)
    first_delivery(c, params, np.array([0, 0]))          # P2 = 2, mesh deliveries 2
    invalid_delivery(c, params, np.array([0]))            # P4 = 1
    c.mesh_failure_penalty[0] = 3.0                       # P3b from an earlier prune
    c.app_score[0] = 2.0
    add_penalty(c, np.array([0]), 4)
    topic_part = 0.5 * (0.1 * 10.0 + 1.0 * 2 - 0.5 * (6.0 - 2.0) ** 2 - 0.25 * 3.0 - 2.0 * 1.0)
    expected = topic_part + 1.5 * 2.0 - 1.0 * (2 - 1) ** 2 - 0.5 * (4.0 - 1.0) ** 2
    assert score(c, params, now_ms=10_000.0)[0] == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------- disconnection
def test_disconnect_forgets_positive_peers_and_retains_the_others_with_p3b():
    params = peer(topic(first_deliveries_weight=1.0, mesh_deliveries_weight=-1.0,
                        mesh_deliveries_threshold=4.0, mesh_deliveries_cap=10.0,
                        mesh_deliveries_decay=0.5, mesh_deliveries_activation_ms=1000.0,
                        mesh_failure_penalty_weight=-1.0, mesh_failure_penalty_decay=0.5))
    c = one_slot(3)
    graft(c, np.array([0, 1, 2]), now_ms=0.0)
    first_delivery(c, params, np.array([0, 0, 0, 0, 0, 1, 2]))    # 5, 1, 1
    refresh(c, params, now_ms=2000.0)                                # 2.5, 0.5, 0.5; active
    before = score(c, params)
    assert before.tolist() == [2.5 - 1.5**2, 0.5 - 3.5**2, 0.5 - 3.5**2]
    kept = disconnect(c, params, np.array([1, 0]))
    assert kept.tolist() == [False, True]            # connection 0 (score 0.25) forgotten
    assert c.first_deliveries.tolist() == [0.0, 0.0, 0.5]
    assert c.mesh_failure_penalty.tolist() == [0.0, 3.5**2, 0.0]
    assert c.in_mesh.tolist() == [False, False, True]
    # the retained peer is still negative when it comes back: -P3b, no P3 out of the mesh
    assert score(c, params)[1] == -(3.5**2)
    assert score(c, params)[0] == 0.0


# --------------------------------------------------------------------------- decay
def test_decay_specification_example_and_decay_to_zero():
    params = peer(topic(first_deliveries_weight=1.0, first_deliveries_decay=0.97,
                        invalid_deliveries_weight=-1.0, invalid_deliveries_decay=0.5),
                  decay_to_zero=0.1, behaviour_penalty_weight=-1.0,
                  behaviour_penalty_decay=0.5)
    c = one_slot(2)
    c.first_deliveries[:] = [120.0, 0.1]
    c.invalid_deliveries[:] = [4.0, 0.19]
    c.behaviour_penalty[:] = [3.0, 0.15]
    decay(c, params)
    assert c.first_deliveries[0] == pytest.approx(116.4)       # 120 * 0.97, the spec's example
    assert c.first_deliveries[1] == 0.0                         # 0.097 < 0.1
    assert c.invalid_deliveries.tolist() == [2.0, 0.0]          # 0.095 < 0.1
    assert c.behaviour_penalty.tolist() == [1.5, 0.0]           # 0.075 < 0.1


def test_p3b_decays_and_refresh_only_touches_mesh_time_in_mesh():
    params = peer(topic(mesh_failure_penalty_weight=-1.0, mesh_failure_penalty_decay=0.25,
                        mesh_deliveries_activation_ms=1000.0))
    c = one_slot(2)
    c.mesh_failure_penalty[:] = [8.0, 0.3]
    graft(c, np.array([0]), now_ms=100.0)
    refresh(c, params, now_ms=400.0)
    assert c.mesh_failure_penalty.tolist() == [2.0, 0.0]
    assert c.mesh_time_ms.tolist() == [300.0, 0.0]


def test_decay_helpers_match_go_libp2p_pubsub():
    # ScoreParameterDecay(10s) with a 1 s interval and DecayToZero 0.01
    assert decay_factor(10_000, 1000, 0.01) == pytest.approx(0.01 ** 0.1)
    f = decay_factor(10_000, 1000, 0.01)
    x = 1.0
    for _ in range(10):
        x *= f
    assert x == pytest.approx(0.01)
    # a counter gaining 1 a tick and decaying by 0.9 settles at 10
    assert decay_convergence(0.9, 1.0) == pytest.approx(10.0)


# --------------------------------------------------------------------------- vectorised = the loop
def reference_score(c: ScoreCounters, params: PeerScoreParams) -> list[float]:
    """go-libp2p-pubsub / JS computeScore, one peer at a time (JS readings: P1 real quotient)."""
    out = []
    for conn in range(c.n_conns):
        s = 0.0
        for slot in np.flatnonzero(c.slot_conn == conn):
            t = int(c.slot_topic[slot])
            if t >= len(params.topics) or params.topics[t] is None:
                continue
            tp = params.topics[t]
            ts = 0.0
            if c.in_mesh[slot]:
                p1 = c.mesh_time_ms[slot] / tp.time_in_mesh_quantum_ms
                ts += tp.time_in_mesh_weight * min(p1, tp.time_in_mesh_cap)
            ts += tp.first_deliveries_weight * min(c.first_deliveries[slot],
                                                   tp.first_deliveries_cap)
            if c.mesh_deliveries_active[slot] and \
                    c.mesh_deliveries[slot] < tp.mesh_deliveries_threshold:
                ts += tp.mesh_deliveries_weight * (tp.mesh_deliveries_threshold
                                                   - c.mesh_deliveries[slot]) ** 2
            ts += tp.mesh_failure_penalty_weight * c.mesh_failure_penalty[slot]
            ts += tp.invalid_deliveries_weight * c.invalid_deliveries[slot] ** 2
            s += ts * tp.topic_weight
        if params.topic_score_cap > 0 and s > params.topic_score_cap:
            s = params.topic_score_cap
        s += c.app_score[conn] * params.app_specific_weight
        if c.ip_group[conn] >= 0:
            same = np.sum((c.conn_node == c.conn_node[conn]) & (c.ip_group == c.ip_group[conn]))
            if same > params.ip_colocation_factor_threshold:
                s += params.ip_colocation_factor_weight * (
                    same - params.ip_colocation_factor_threshold) ** 2
        if c.behaviour_penalty[conn] > params.behaviour_penalty_threshold:
            s += params.behaviour_penalty_weight * (
                c.behaviour_penalty[conn] - params.behaviour_penalty_threshold) ** 2
        out.append(s)
    return out


def test_vectorised_score_equals_the_per_peer_loop():
    rng = np.random.default_rng(7)
    n_nodes, n_conns, n_topics = 6, 40, 4
    conn_node = rng.integers(0, n_nodes, n_conns)
    slot_conn = np.repeat(np.arange(n_conns), 2)
    slot_topic = rng.integers(0, n_topics + 1, len(slot_conn))       # topic 4 unscored
    c = ScoreCounters.empty(slot_conn=slot_conn, slot_topic=slot_topic, conn_node=conn_node,
                            ip_group=rng.integers(-1, 3, n_conns))
    topics = (TopicScoreParams(), None, TopicScoreParams(topic_weight=1.5, time_in_mesh_cap=7.0),
              TopicScoreParams(topic_weight=0.2, mesh_deliveries_threshold=3.0,
                               mesh_deliveries_cap=5.0))
    params = PeerScoreParams(topics=topics, topic_score_cap=30.0, ip_colocation_factor_threshold=2,
                             behaviour_penalty_threshold=1.0)
    n = c.n_slots
    c.in_mesh[:] = rng.random(n) < 0.6
    c.mesh_time_ms[:] = rng.uniform(0, 10_000, n)
    c.first_deliveries[:] = rng.uniform(0, 30, n)
    c.mesh_deliveries[:] = rng.uniform(0, 30, n)
    c.mesh_deliveries_active[:] = rng.random(n) < 0.5
    c.mesh_failure_penalty[:] = rng.uniform(0, 5, n)
    c.invalid_deliveries[:] = rng.uniform(0, 3, n)
    c.app_score[:] = rng.normal(0, 2, n_conns)
    c.behaviour_penalty[:] = rng.uniform(0, 4, n_conns)
    assert score(c, params) == pytest.approx(reference_score(c, params), rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- heartbeat helpers
def test_threshold_masks_follow_the_five_thresholds():
    th = PeerScoreThresholds(gossip=-10.0, publish=-50.0, graylist=-80.0, accept_px=10.0,
                             opportunistic_graft=20.0)
    m = threshold_masks(np.array([-90.0, -60.0, -20.0, -10.0, 0.0, 9.9, 10.0]), th)
    assert m.negative.tolist() == [True, True, True, True, False, False, False]
    assert m.below_gossip.tolist() == [True, True, True, False, False, False, False]
    assert m.below_publish.tolist() == [True, True, False, False, False, False, False]
    assert m.below_graylist.tolist() == [True, False, False, False, False, False, False]
    assert m.accept_px.tolist() == [False, False, False, False, False, False, True]


def test_group_median_is_the_implementations_median():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 9, 200)
    values = rng.normal(0, 10, 200)
    med = group_median(values, groups, 10)
    for g in range(10):
        v = np.sort(values[groups == g])
        if len(v) == 0:
            assert np.isnan(med[g])
        else:
            assert med[g] == v[len(v) // 2]       # JS: sorted[floor(n / 2)]


def test_opportunistic_graft_needs_more_than_one_peer_and_a_low_median():
    th = PeerScoreThresholds(opportunistic_graft=5.0)
    need, med = opportunistic_graft(np.array([1.0, 2.0, 3.0, 6.0, 7.0, 1.0]),
                                    np.array([0, 0, 0, 1, 1, 2]), 4, th)
    assert need.tolist() == [True, False, False, False]
    assert med[:3].tolist() == [2.0, 7.0, 1.0] and np.isnan(med[3])


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("field", "value"), [
    ("topic_weight", -0.1),
    ("time_in_mesh_weight", -1.0),
    ("time_in_mesh_quantum_ms", 0.0),
    ("time_in_mesh_cap", 0.0),
    ("first_deliveries_weight", -1.0),
    ("first_deliveries_decay", 0.0),
    ("first_deliveries_decay", 1.0),
    ("first_deliveries_cap", -1.0),
    ("mesh_deliveries_weight", 0.5),
    ("mesh_deliveries_decay", 1.5),
    ("mesh_deliveries_threshold", 0.0),
    ("mesh_deliveries_cap", 10.0),            # below the threshold of 20
    ("mesh_deliveries_activation_ms", 999.0),
    ("mesh_deliveries_window_ms", -1.0),
    ("mesh_failure_penalty_weight", 1.0),
    ("mesh_failure_penalty_decay", 0.0),
    ("invalid_deliveries_weight", 0.1),
    ("invalid_deliveries_decay", 1.0),
    ("topic_weight", float("nan")),
    ("topic_weight", "1"),
    ("topic_weight", True),
])
def test_topic_params_refused_with_the_field_named(field, value):
    with pytest.raises(ParameterError) as e:
        TopicScoreParams(**{field: value})
    assert e.value.key == field
    assert field in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("field", "value"), [
    ("first_deliveries_cap", -1.0),           # a cap is never negative, used or not
    ("mesh_deliveries_threshold", -1.0),
    ("mesh_failure_penalty_decay", 1.5),      # an unused decay still in [0, 1]
    ("time_in_mesh_cap", -1.0),
])
def test_unused_terms_still_take_sane_values(field, value):
    with pytest.raises(ParameterError) as e:
        TopicScoreParams(**{**OFF, field: value})       # every weight 0
    assert e.value.key == field


@pytest.mark.parametrize(("field", "value"), [
    ("topic_score_cap", -1.0),
    ("app_specific_weight", -1.0),
    ("ip_colocation_factor_weight", 1.0),
    ("ip_colocation_factor_threshold", 0),
    ("ip_colocation_factor_threshold", 1.5),
    ("behaviour_penalty_weight", 0.5),
    ("behaviour_penalty_threshold", -1.0),
    ("behaviour_penalty_decay", 1.0),
    ("decay_interval_ms", 500.0),
    ("decay_to_zero", 0.0),
    ("decay_to_zero", 1.0),
    ("retain_score_ms", -1.0),
    ("retain_score_ms", float("inf")),
])
def test_peer_params_refused_with_the_field_named(field, value):
    with pytest.raises(ParameterError) as e:
        PeerScoreParams(**{field: value})
    assert e.value.key == field and "\n" not in str(e.value)


def test_a_bad_topic_is_named_by_its_index():
    bad = TopicScoreParams()
    object.__setattr__(bad, "first_deliveries_decay", 2.0)    # past its own check
    with pytest.raises(ParameterError, match=r"topics\[1\]\.first_deliveries_decay") as e:
        PeerScoreParams(topics=(TopicScoreParams(), bad))
    assert e.value.key == "topics[1].first_deliveries_decay"


def test_a_zero_weight_leaves_its_decay_unchecked():
    # Lodestar gives topics without a mesh-delivery penalty decay 0 and weight 0
    t = TopicScoreParams(mesh_deliveries_weight=0.0, mesh_deliveries_decay=0.0,
                         mesh_deliveries_threshold=0.0, mesh_deliveries_cap=0.0,
                         mesh_deliveries_activation_ms=0.0, mesh_failure_penalty_weight=0.0,
                         mesh_failure_penalty_decay=0.0)
    assert t.mesh_deliveries_decay == 0.0


@pytest.mark.parametrize(("field", "value"), [
    ("gossip", 1.0), ("publish", -5.0), ("graylist", -20.0), ("accept_px", -1.0),
    ("opportunistic_graft", -0.5), ("gossip", float("nan")),
])
def test_thresholds_refused_with_the_field_named(field, value):
    with pytest.raises(ParameterError) as e:
        PeerScoreThresholds(**{field: value})   # defaults: -10, -50, -80, 10, 20
    assert e.value.key == field


def test_counters_refuse_mismatched_arrays():
    c = one_slot(2)
    with pytest.raises(ParameterError, match="first_deliveries") as e:
        ScoreCounters(**{**c.__dict__, "first_deliveries": np.zeros(3)})
    assert e.value.key == "first_deliveries"
    with pytest.raises(ParameterError, match="slot_topic"):
        ScoreCounters.empty(slot_conn=[0], slot_topic=[-1], conn_node=[0])
