"""GossipSub under the attackers of the v1.1 evaluation (``docs/gossipsub.md``, "Attacks").

Small worlds: honest nodes on a random connection graph, sybils connected to
some of them (``EngineAttack``), each attacker's behaviour read from the
engine's state and its log of every message sent.
"""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination.contended import Network
from hedgerow.errors import ParameterError
from hedgerow.protocols.gossipsub import (
    Connections,
    GossipSubEngine,
    Publications,
    random_connections,
)
from hedgerow.protocols.gossipsub.engine import EngineAttack
from hedgerow.protocols.gossipsub.params import HARDENING_THRESHOLDS, hardening_score_params
from hedgerow.protocols.gossipsub.protocol import EngineScore
from hedgerow.protocols.gossipsub.scoring import PeerScoreParams, TopicScoreParams


def _score(*, activation_ms=3000.0, ips=None, colocation=False, p7=0.0, native=True):
    """The evaluation's score parameters with a short P3 activation (a small world's run)."""
    base = hardening_score_params(1, colocation=colocation)
    tp = base.topics[0]
    assert tp is not None
    fields = {k: getattr(tp, k) for k in tp.__dataclass_fields__}
    fields["mesh_deliveries_activation_ms"] = activation_ms
    fields["mesh_deliveries_threshold"] = 3.0
    params = PeerScoreParams(**{**{k: getattr(base, k) for k in (
        "topic_score_cap", "app_specific_weight", "ip_colocation_factor_weight",
        "ip_colocation_factor_threshold", "behaviour_penalty_weight", "behaviour_penalty_decay",
        "decay_interval_ms", "decay_to_zero", "retain_score_ms")},
        "topics": (TopicScoreParams(**fields),), "behaviour_penalty_weight": p7,
        "behaviour_penalty_decay": 0.9 if p7 else 0.0})
    return EngineScore(params, ips, native=native)


def _world(*, honest=40, sybils=6, degree=None, target=None, scoring=False, seed=1,
           messages=120, rate_ms=100.0, start=2000.0, join_ms=0.0, honest_join_ms=0.0,
           after_ms=0.0, censor=False, ips=0, log=0, target_dials=True, liar=False, p7=0.0,
           native=True, **params):
    """``honest`` nodes on random connections (12 each), then ``sybils`` each dialing
    ``degree`` uniform honest nodes (or only ``target``); one topic, every node subscribed.
    ``target_dials=False``: the target's honest peers dialed it (none is outbound for it)."""
    rng = np.random.default_rng(seed)
    inner = random_connections(honest, 12, np.random.default_rng(seed + 1))
    dialed = np.column_stack([inner.row_of, inner.indices])[inner.outbound.astype(bool)]
    if target is not None and not target_dials:
        dialed = np.where((dialed[:, :1] == target), dialed[:, ::-1], dialed)
    edges = [dialed]
    n = honest + sybils
    for s in range(honest, n):
        if target is not None and not censor:
            peers = np.array([target])
        else:
            peers = rng.choice(honest, size=degree or 10, replace=False)
        edges.append(np.column_stack([np.full(len(peers), s), peers]))
    conn = Connections.from_edges(n, np.concatenate(edges))
    subs = np.ones((n, 1), dtype=bool)
    publisher = rng.integers(0, honest, messages)
    if target is not None and censor:
        publisher[::3] = target
    pubs = Publications.create(publisher, np.zeros(messages, dtype=np.int64),
                               start + rate_ms * np.arange(messages), 500.0)
    is_sybil = np.arange(n) >= honest
    both = ~is_sybil[conn.row_of] & ~is_sybil[conn.indices]
    attack = EngineAttack(sybil=is_sybil, drop=is_sybil,
                          conn_up_ms=np.where(both, honest_join_ms, join_ms),
                          target=target if (censor and target is not None) else -1,
                          start_ms=after_ms, regraft_ms=2000.0, liar=is_sybil if liar else None)
    s = {"d": 6, "d_lo": 4, "d_hi": 10, "d_score": 4, "d_out": 2, "prune_backoff_ms": 5000.0,
         **params}
    score_fn = None
    if scoring:
        group = None
        if ips:
            g = np.full(n, -1, dtype=np.int64)
            g[is_sybil] = np.arange(sybils) % ips
            group = g[conn.indices]
        score_fn = _score(ips=group, colocation=bool(ips), p7=p7, native=native)
        s.update(scoring=True, gossip_threshold=HARDENING_THRESHOLDS.gossip,
                 publish_threshold=HARDENING_THRESHOLDS.publish, mesh_window_ms=5.0)
    delay = np.full(conn.nnz, 20.0)
    eng = GossipSubEngine(subs, conn, delay, np.zeros(n), Network.uniform(n), pubs, s,
                          np.random.default_rng(seed + 3), score_fn=score_fn, log=log,
                          attack=attack)
    return eng, is_sybil, pubs


def _sybil_slots(eng, is_sybil):
    """Bool per CSR entry: an honest node's mesh entry toward a sybil."""
    conn = eng.connections
    flags = eng.mesh_flags()[:, 0]
    return flags & ~is_sybil[conn.row_of] & is_sybil[conn.indices]


def test_a_dropper_in_the_mesh_is_pruned_by_p3_with_scoring_and_stays_without():
    held = {}
    for scoring in (False, True):
        eng, is_sybil, _ = _world(scoring=scoring, messages=150)
        eng.run_until(3000.0)
        early = int(_sybil_slots(eng, is_sybil).sum())
        eng.run_until(17000.0)
        held[scoring] = (early, int(_sybil_slots(eng, is_sybil).sum()))
        if scoring:
            conn = eng.connections
            toward = ~is_sybil[conn.row_of] & is_sybil[conn.indices]
            assert (eng._X[8][toward] < 0).all()  # P3's deficit once active, then P3b
    # the sybils graft themselves in at once, both ways
    assert held[False][0] > 0 and held[True][0] > 0
    # without scoring they stay; with it every honest node has pruned them
    assert held[False][1] >= held[False][0] // 2
    assert held[True][1] == 0


def test_sybils_drop_everything_send_no_ihave_and_answer_no_iwant():
    eng, is_sybil, _ = _world(log=200000, messages=60)
    eng.run_until(12000.0)
    log = eng.sent_log()
    assert not log["full"]
    kinds = np.array(log["kind"])
    from_sybil = is_sybil[log["sender"]]
    assert from_sybil.any()  # their GRAFTs
    assert set(kinds[from_sybil].tolist()) == {"graft"}
    # every honest node still gets every message (flood publishing and the honest meshes)
    assert np.isfinite(eng.arrival[:, ~is_sybil]).all()


def test_an_eclipsed_target_gets_nothing_without_scoring_and_recovers_with_it():
    # the sybils connect to the target first (an attack at dawn on one node) and fill its mesh;
    # no gossip (D_lazy 0), so without scoring the target hears only what a mesh peer relays
    # and none of its honest peers is outbound for it (D_out cannot bring one in)
    got = {}
    for scoring in (False, True):
        eng, is_sybil, pubs = _world(scoring=scoring, sybils=12, target=0, honest_join_ms=3000.0,
                                     messages=200, d_lazy=0, gossip_factor=0.0,
                                     flood_publish=False, target_dials=False)
        eng.run_until(25000.0)
        late = (pubs.time_ms >= 14000.0) & (pubs.publisher != 0)
        got[scoring] = float(np.isfinite(eng.arrival[late, 0]).mean())
        mesh = eng.mesh_lists()[0][0]
        peers = eng.connections.indices[mesh]
        if scoring:
            assert not is_sybil[peers].any()
        else:
            assert is_sybil[peers].all()
    assert got[False] == 0.0
    assert got[True] == 1.0


def test_censoring_sybils_drop_the_target_publishers_messages_only():
    eng, is_sybil, pubs = _world(target=3, censor=True, degree=20, sybils=4, log=400000,
                                 messages=90)
    # the sybils connect to 20 honest nodes each, not only to the target
    eng.run_until(15000.0)
    log = eng.sent_log()
    assert not log["full"]
    kinds = np.array(log["kind"])
    data = (kinds == "data") & is_sybil[log["sender"]]
    relayed = pubs.publisher[log["what"][data]]
    assert len(relayed) > 0 and not (relayed == 3).any()


def test_covert_flash_relays_honestly_until_its_start_then_drops():
    eng, is_sybil, _ = _world(after_ms=8000.0, log=400000, messages=120)
    eng.run_until(16000.0)
    log = eng.sent_log()
    assert not log["full"]
    kinds = np.array(log["kind"])
    data = (kinds == "data") & is_sybil[log["sender"]]
    sent_at = log["t_send"][data]
    assert (sent_at < 8000.0).any()
    # a copy forwarded after the start was received (validated) before it
    received = np.array([eng.arrival[m, v] for m, v in zip(log["what"][data],
                                                           log["sender"][data], strict=True)])
    assert (received < 8000.0).all()


def test_nothing_crosses_a_connection_before_it_opens():
    eng, is_sybil, _ = _world(join_ms=4000.0, honest_join_ms=1500.0, log=400000, messages=40)
    eng.run_until(8000.0)
    log = eng.sent_log()
    assert not log["full"]
    conn = eng.connections
    s, r = log["sender"], log["receiver"]
    to_sybil = is_sybil[s] | is_sybil[r]
    assert (log["t_send"][to_sybil] >= 4000.0).all() and to_sybil.any()
    assert (log["t_send"][~to_sybil] >= 1500.0).all()
    assert conn.nnz > 0


def test_a_pruned_sybil_grafts_again_only_after_the_backoff():
    eng, is_sybil, _ = _world(scoring=True, log=400000, messages=150)
    eng.run_until(20000.0)
    log = eng.sent_log()
    assert not log["full"]
    kinds = np.array(log["kind"])
    pruned_at: dict[tuple[int, int], float] = {}
    regrafts = 0
    for k, t, s, r in zip(kinds.tolist(), log["t_send"].tolist(), log["sender"].tolist(),
                          log["receiver"].tolist(), strict=True):
        if k == "prune" and is_sybil[r]:
            pruned_at[(r, s)] = log_arrival = t + 20.0  # the link's delay
            del log_arrival
        elif k == "graft" and is_sybil[s] and (s, r) in pruned_at:
            assert t >= pruned_at[(s, r)] + 5000.0  # prune_backoff_ms
            regrafts += 1
    assert pruned_at and regrafts > 0


def test_colocated_sybils_score_below_zero_from_the_start_and_never_enter_a_mesh():
    eng, is_sybil, _ = _world(scoring=True, ips=1, sybils=6, messages=30)
    eng.run_until(2500.0)
    conn = eng.connections
    toward = ~is_sybil[conn.row_of] & is_sybil[conn.indices]
    # P6 is the scoring node's count of peers on the sybils' one address, less the threshold 1:
    # -10 x (k - 1)^2 for a node that sees k >= 2 of them, 0 for a node that sees one
    seen = np.bincount(conn.row_of[toward], minlength=eng.n)[conn.row_of]
    crowded = toward & (seen >= 2)
    assert crowded.any() and (eng._X[8][crowded] < 0).all()
    expect = -10.0 * (seen[crowded] - 1.0) ** 2
    assert np.all(eng._X[8][crowded] <= expect + 1.0)  # P1 (0.0027 a second) adds a little
    eng.run_until(6000.0)
    flags = eng.mesh_flags()[:, 0]
    assert not flags[crowded].any()


def test_attack_arrays_must_match_the_network():
    conn = Connections.from_edges(3, [(0, 1), (1, 2)])
    pubs = Publications.create([0], [0], [100.0], [10.0])
    bad = EngineAttack(sybil=np.zeros(2, dtype=bool), drop=np.zeros(2, dtype=bool))
    with pytest.raises(ParameterError, match="attack"):
        GossipSubEngine(np.ones((3, 1), dtype=bool), conn, 10.0, np.zeros(3),
                        Network.uniform(3), pubs, {"d": 1, "d_lo": 1, "d_hi": 2, "d_score": 1,
                                                   "d_out": 0}, np.random.default_rng(0),
                        attack=bad)


def test_liars_announce_serve_nothing_and_pay_p7_for_every_broken_promise():
    # the honest nodes' connections among themselves open at 8 s: until then a message reaches
    # them only through a liar's IHAVE, so the IWANTs they send it are promises it breaks
    eng, is_sybil, pubs = _world(scoring=True, liar=True, p7=-1.0, log=400000, messages=120,
                                 honest_join_ms=8000.0, iwant_followup_ms=1000.0)
    eng.run_until(16000.0)
    log = eng.sent_log()
    assert not log["full"]
    kinds = np.array(log["kind"])
    from_liar = is_sybil[log["sender"]]
    assert set(kinds[from_liar].tolist()) == {"ihave"}  # no GRAFT, no copy, no IWANT answer
    assert (is_sybil[log["receiver"]] & (kinds == "iwant")).any()
    conn = eng.connections
    toward = ~is_sybil[conn.row_of] & is_sybil[conn.indices]
    between = ~is_sybil[conn.row_of] & ~is_sybil[conn.indices]
    penalty = eng._X[11]
    assert penalty[toward].sum() > 0 and penalty[between].sum() == 0
    # P7 = -(count)^2: a peer that broke promises scores below zero
    assert (eng._X[8][toward & (penalty > 0)] < 0).all()
    # what was published once the honest connections were open reached every honest node
    late = pubs.time_ms >= 9000.0
    assert np.isfinite(eng.arrival[np.ix_(late, ~is_sybil)]).all()


def test_without_scoring_no_promise_is_tracked():
    eng, _, _ = _world(liar=True, messages=60)
    eng.run_until(10000.0)
    assert not eng._X[11].any()


@pytest.mark.parametrize("kw", [
    {"messages": 150},                                     # P3's deficit, then P3b on prune
    {"liar": True, "p7": -1.0, "ips": 1, "messages": 120,  # P6 and P7 (broken promises)
     "honest_join_ms": 8000.0, "iwant_followup_ms": 1000.0},
])
def test_scores_in_the_kernel_equal_the_python_path_under_attack(kw):
    # the kernel's scores against EngineScore's numpy path, heartbeat by heartbeat, bit for bit
    fast, _, _ = _world(scoring=True, **kw)
    ref, _, _ = _world(scoring=True, native=False, **kw)
    assert fast.score_in_kernel and not ref.score_in_kernel
    negative = 0
    for k in range(1, 25):
        fast.run_until(k * 1000.0)
        ref.run_until(k * 1000.0)
        assert np.array_equal(fast._X[8], ref._X[8]), k
        negative += int((fast._X[8] < 0).sum())
    assert negative > 0  # the penalties bit
    a, b = fast.score_counters(), ref.score_counters()
    for name in ("in_mesh", "mesh_deliveries_active", "first_deliveries", "mesh_deliveries",
                 "mesh_failure_penalty", "graft_ms", "behaviour_penalty"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(fast.copies, ref.copies)
    assert np.array_equal(fast.mesh_flags(), ref.mesh_flags())
