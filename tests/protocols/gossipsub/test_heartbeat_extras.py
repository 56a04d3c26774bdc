"""Opportunistic grafting and peer exchange in the heartbeat (``docs/gossipsub.md``).

Both follow go-libp2p-pubsub's ``gossipsub.go`` (``heartbeat``, ``makePrune``,
``handlePrune``).  The scores are set by hand (a score function that returns
fixed values per connection, some changing at a given instant), so each worked
example knows which peers are above the mesh's median, which are backed off
and which pruners may offer peers.
"""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination.contended import Network
from hedgerow.errors import ParameterError
from hedgerow.protocols.gossipsub import Connections, GossipSubEngine, Publications
from hedgerow.protocols.gossipsub.engine import settings

HB = 1000.0


def _og_world(*, threshold=5.0, ticks=3, peers=2, change_ms=2500.0, seed=4, d_hi=6):
    """Node 0 connected to 1..12; nodes 1..29 on a random graph of about 8 connections each;
    node 30 connected to 0, 1 and 2 only (so it grafts all three at the first heartbeat).

    Node 0's view: peers 1..5 score 1 throughout; every other peer -1 until ``change_ms``,
    then 3 (an even node) or 0.5 (an odd one).  Every other view scores 0.  So node 0's mesh
    forms from 1..5, node 30's GRAFT to it is refused while 30 scores -1 (a backoff of 60 s),
    and at the third heartbeat the mesh median is 1 < ``threshold``.
    """
    rng = np.random.default_rng(seed)
    edges = [(0, w) for w in range(1, 13)] + [(30, 0), (30, 1), (30, 2)]
    for v in range(1, 30):
        for w in rng.choice(np.arange(1, 30), size=4, replace=False):
            if w != v:
                edges.append((v, int(w)))
    conn = Connections.from_edges(31, np.array(edges))
    n = conn.n
    subs = np.ones((n, 1), dtype=bool)
    pubs = Publications.create([3], [0], [20000.0], [500.0])
    mine = conn.row_of == 0
    peer = conn.indices

    def score_fn(counters, now):
        s = np.zeros(conn.nnz)
        low = mine & (peer >= 1) & (peer <= 5)
        s[low] = 1.0
        rest = mine & ~low
        if now < change_ms:
            s[rest] = -1.0
        else:
            s[rest] = np.where(peer[rest] % 2 == 0, 3.0, 0.5)
        return s

    s = {"d": 4, "d_lo": 3, "d_hi": d_hi, "d_score": 2, "d_out": 0, "scoring": True,
         "opportunistic_graft_ticks": ticks, "opportunistic_graft_peers": peers,
         "opportunistic_graft_threshold": threshold}
    eng = GossipSubEngine(subs, conn, np.full(conn.nnz, 10.0), np.zeros(n),
                          Network.uniform(n), pubs, s, np.random.default_rng(seed),
                          score_fn=score_fn, log=20000)
    return eng, score_fn


def _grafts_by(eng, v, t):
    log = eng.sent_log()
    return sorted(int(r) for k, s, r, ts in zip(log["kind"], log["sender"], log["receiver"],
                                                log["t_send"], strict=True)
                  if k == "graft" and s == v and ts == t)


def test_a_low_median_grafts_the_right_peers_at_the_tick():
    eng, score_fn = _og_world()
    conn = eng.connections
    mine = np.flatnonzero(conn.row_of == 0)
    eng.run_until(2 * HB + 1.0)
    assert eng.opportunistic_grafts == 0  # not before the third heartbeat
    flags = eng.mesh_flags()[mine, 0]
    mesh = set(conn.indices[mine][flags].tolist())
    assert 3 <= len(mesh) <= 6 and mesh <= {1, 2, 3, 4, 5}  # no regular graft at hb 3
    scores = score_fn(None, 3 * HB)[mine]
    by_peer = dict(zip(conn.indices[mine].tolist(), scores.tolist(), strict=True))
    ranked = sorted(by_peer[p] for p in mesh)
    median = ranked[len(ranked) // 2]  # go: the score at index len // 2, sorted up
    assert median == 1.0
    backed = conn.indices[mine][eng.backoff_until()[mine, 0] > 3 * HB]
    assert 30 in backed.tolist()  # refused while it scored -1: backed off
    eligible = {p for p, sc in by_peer.items()
                if p not in mesh and sc > median and p not in backed}
    below = {p for p, sc in by_peer.items() if p not in mesh and 0 <= sc <= median}
    assert by_peer[30] > median and len(eligible) > 2 and below  # a test that can fail
    eng.run_until(3 * HB + 1.0)
    got = _grafts_by(eng, 0, 3 * HB)
    assert len(got) == 2 == eng.opportunistic_grafts
    assert set(got) <= eligible  # above the median, not in the mesh, not backed off
    flags = eng.mesh_flags()[mine, 0]
    assert set(got) <= set(conn.indices[mine][flags].tolist())
    eng.run_until(5 * HB + 1.0)
    assert eng.opportunistic_grafts == 2  # the next tick is the sixth heartbeat


def test_no_opportunistic_graft_when_the_median_is_at_the_threshold_or_off():
    for kw in ({"threshold": 1.0}, {"peers": 0}):
        eng, _ = _og_world(**kw)
        eng.run_until(3 * HB + 1.0)
        assert eng.opportunistic_grafts == 0 and _grafts_by(eng, 0, 3 * HB) == []


def test_opportunistic_graft_needs_scoring():
    eng, _ = _og_world()  # the same world without scoring grafts nothing opportunistically
    conn = eng.connections
    s = {"d": 4, "d_lo": 3, "d_hi": 6, "d_score": 2, "d_out": 0,
         "opportunistic_graft_ticks": 3, "opportunistic_graft_threshold": 5.0}
    plain = GossipSubEngine(np.ones((conn.n, 1), dtype=bool), conn, np.full(conn.nnz, 10.0),
                            np.zeros(conn.n), Network.uniform(conn.n),
                            Publications.create([3], [0], [20000.0], [500.0]), s,
                            np.random.default_rng(4))
    plain.run_until(7 * HB)
    assert plain.opportunistic_grafts == 0


# ---------------------------------------------------------------- peer exchange

def _px_world(*, px=True, prune_peers=4, accept=10.0, seed=2):
    """A star: leaves 1..16 each dialed node 0 and one neighbour leaf; node 0 also dialed 17..19.
    Every leaf grafts node 0 at the first heartbeat, so node 0's mesh fills to D_hi and it
    answers the other (inbound) GRAFTs with a PRUNE, with peer records when ``px``.

    Node 0 scores 17 and 18 at -1 (never offered, and their GRAFTs are refused without
    PX); a leaf scores node 0 at 20 (an even
    leaf: at least ``accept``) or 5 (an odd one: below).
    """
    edges = [(w, 0) for w in range(1, 17)] + [(0, 17), (0, 18), (0, 19)]
    edges += [(w, w + 1) for w in range(1, 16)]
    conn = Connections.from_edges(20, np.array(edges))
    n = conn.n
    peer, row = conn.indices, conn.row_of

    def score_fn(counters, now):
        s = np.zeros(conn.nnz)
        s[(row == 0) & ((peer == 17) | (peer == 18))] = -1.0
        toward0 = peer == 0
        s[toward0] = np.where(row[toward0] % 2 == 0, 20.0, 5.0)
        return s

    s = {"d": 4, "d_lo": 3, "d_hi": 6, "d_score": 2, "d_out": 0, "scoring": True,
         "peer_exchange": px, "prune_peers": prune_peers, "accept_px_threshold": accept,
         "opportunistic_graft_peers": 0}
    eng = GossipSubEngine(np.ones((n, 1), dtype=bool), conn, np.full(conn.nnz, 10.0),
                          np.zeros(n), Network.uniform(n),
                          Publications.create([3], [0], [20000.0], [500.0]), s,
                          np.random.default_rng(seed), score_fn=score_fn, log=20000)
    return eng, score_fn


def _prunes(eng):
    log = eng.sent_log()
    return [(int(s), int(r), ids.tolist()) for k, s, r, ids in
            zip(log["kind"], log["sender"], log["receiver"], log["ids"], strict=True)
            if k == "prune"]


def test_prunes_of_a_full_mesh_offer_peers_scored_at_least_zero_and_not_the_pruned():
    eng, _ = _px_world()
    eng.run_until(2 * HB + 50.0)  # every PRUNE of the first two heartbeats has arrived
    from_hub = [(r, ids) for s, r, ids in _prunes(eng) if s == 0]
    assert from_hub  # the hub refused GRAFTs beyond D_hi
    hub_peers = set(eng.connections.indices[eng.connections.row_of == 0].tolist())
    assert {r for r, _ in from_hub} >= {17, 18}
    for r, ids in from_hub:
        if r in (17, 18):  # refused for a negative score: a PRUNE without PX (go)
            assert ids == []
            continue
        assert len(ids) == 4 and len(set(ids)) == 4  # prune_peers of the 16 it may offer
        assert r not in ids and set(ids) <= hub_peers - {17, 18}  # negative scores: never
    px = eng.peer_exchange()
    assert px["offered"] == sum(len(ids) for _, _, ids in _prunes(eng))
    # taken only from a pruner the receiver scores at least accept_px_threshold (even leaves)
    taken = [(r, ids) for s, r, ids in _prunes(eng) if ids and s == 0 and r % 2 == 0]
    assert 0 < px["accepted"] == sum(len(ids) for _, ids in taken) < px["offered"]
    conn = eng.connections
    linked = {(int(a), int(b)) for a, b in zip(conn.row_of, conn.indices, strict=True)}
    assert px["new"] == sum((r, x) not in linked for r, ids in taken for x in ids)


def test_px_records_have_their_size_on_the_wire_and_are_off_by_default():
    with_px, _ = _px_world()
    without, _ = _px_world(px=False)
    for eng in (with_px, without):
        eng.run_until(1 * HB + 200.0)
    assert all(ids == [] for _, _, ids in _prunes(without))
    assert without.peer_exchange() == {"offered": 0, "accepted": 0, "new": 0}
    sizes = {}
    for name, eng in (("px", with_px), ("plain", without)):
        hub = eng.byte_counters()["control_sent"][0]
        sizes[name] = hub
    n_prunes = len([1 for s, _, _ in _prunes(with_px) if s == 0])
    assert n_prunes == len([1 for s, _, _ in _prunes(without) if s == 0]) > 0
    records = sum(len(ids) for s, _, ids in _prunes(with_px) if s == 0)
    # the same first heartbeat's control messages, plus the records (215 bytes each)
    assert sizes["px"] - sizes["plain"] == pytest.approx(records * 215.0)
    assert settings({})["peer_exchange"] is False


def test_prune_peers_zero_sends_no_records_and_bad_settings_are_named():
    eng, _ = _px_world(prune_peers=0)
    eng.run_until(2 * HB)
    assert all(ids == [] for _, _, ids in _prunes(eng))
    for key, value in (("prune_peers", -1), ("opportunistic_graft_ticks", 0),
                       ("opportunistic_graft_peers", 1.5), ("px_record_bytes", -1.0)):
        with pytest.raises(ParameterError, match=key):
            settings({key: value})


# ---------------------------------------------------------------- through the protocol

def _attack_run(**params):
    from hedgerow.scenarios import make_protocol, make_world, run_protocol
    from hedgerow.scenarios.world import resolve_scenario

    world = make_world(resolve_scenario("gs-covert-flash", nodes=150, attackers=30,
                                        messages=300), seed=1)
    proto = make_protocol("gossipsub", world, {"scoring": True, "warmup_ms": 5000.0,
                                               "drain_ms": 2000.0, **params})
    row = run_protocol(proto, world).rows[-1]
    return proto.engine_, row


def test_the_protocol_takes_the_threshold_from_the_score_parameters_or_its_own():
    # the evaluation's thresholds (0): every mesh peer scored below 0 is pruned first, so the
    # median is never below 0 and nothing is grafted opportunistically
    eng, _ = _attack_run(opportunistic_graft_ticks=2)
    assert eng.settings["opportunistic_graft_threshold"] == 0.0
    assert eng.opportunistic_grafts == 0
    eng, row = _attack_run(opportunistic_graft_ticks=2, opportunistic_graft_threshold=1e9)
    assert eng.settings["opportunistic_graft_threshold"] == 1e9
    assert eng.opportunistic_grafts > 0 and row["receive_rate"] == 1.0



def test_the_conformance_bound_allows_an_opportunistic_graft_beyond_d_hi_and_no_more():
    # D_hi = D = 4: node 0's mesh is at D_hi after the second heartbeat, and the third's
    # opportunistic grafts take it to D_hi + 2, which the protocol's bound allows until the
    # next heartbeat prunes it
    from hedgerow.protocols.gossipsub import GossipSub

    eng, _ = _og_world(d_hi=4)
    proto = GossipSub(D=4, D_lo=3, D_hi=4, D_score=2, D_out=0, scoring=True,
                      opportunistic_graft_ticks=3, opportunistic_graft_peers=2)
    beyond = []
    for k in range(1, 7):
        eng.run_until(k * HB)
        assert proto.heartbeat_bounds(eng) == [], k
        beyond.append(int(eng.mesh_degree()[0, 0]) - 4)
    assert eng.opportunistic_grafts >= 2 and beyond[2] == 2 and max(beyond) == 2
    strict = GossipSub(D=4, D_lo=3, D_hi=4, D_score=2, D_out=0, scoring=True,
                       opportunistic_graft_ticks=3, opportunistic_graft_peers=0)
    again, _ = _og_world(d_hi=4)
    again.run_until(3 * HB)
    assert any("> D_hi 4" in m for m in strict.heartbeat_bounds(again))
