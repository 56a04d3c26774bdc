"""GossipSub runs pinned bit for bit, so that work on the kernel's event path keeps them.

Each case runs the engine (or Lean Gossip's world) and hashes what a run
produces: every first arrival, hop count, parent and queueing delay, the
per-message and per-node counters, the control counts, the meshes, backoffs
and scoring counters, the log of every message sent where one is kept, and
the kernel's own counts (events scheduled and pending, copies served, bound
violations).  Only the id buffer's fill level is left out: when it compacts
is a matter of its capacity, not of the run.  The digests were taken from the
kernel as it was before its event loop was reorganised for speed; a change
that moves any of them changes a result.
"""

from __future__ import annotations

import hashlib

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
from hedgerow.protocols.gossipsub import _kernel as K
from hedgerow.protocols.gossipsub.engine import EngineAttack
from hedgerow.protocols.gossipsub.params import HARDENING_THRESHOLDS, score_preset
from hedgerow.protocols.gossipsub.protocol import EngineScore

#: ``S`` scalars when the digests were taken (``S_HEAP`` ... ``S_LIVE_PEAK``)
_PINNED_SCALARS = 12


def _digest(eng: GossipSubEngine) -> str:
    h = hashlib.sha256()

    def add(a: object) -> None:
        h.update(np.ascontiguousarray(a).tobytes())

    if eng.keep_arrivals:
        for a in (eng.arrival, eng.hops, eng.parent, eng.queue_delay):
            add(a)
    else:
        s = eng.delivery_summary()
        add(np.array([s[k] for k in sorted(s)], dtype=np.float64))
        add(eng._M[K.M_FOLD])
    for a in (eng.copies, eng.duplicates, eng.queue_wait, eng.lost):
        add(a)
    for _, v in sorted(eng.byte_counters().items()):
        add(v)
    add(eng._W[5])
    # the per-slot arrays as the table of every connection x every topic they were pinned as
    slot_fill = {0: 0, 3: -np.inf, 5: np.nan, 6: 0.0, 7: 0.0}
    for i in (0, 2, 3, 5, 6, 7, 8, 11, 12, 13, 16):
        add(eng._dense(eng._X[i], slot_fill[i]) if i in slot_fill else eng._X[i])
    add(eng.mesh_rows())
    scalars = eng._S.copy()
    scalars[K.S_IDS] = 0
    ready = eng._GR[5][5]  # events pending: those in the heap and in the READY queue
    scalars[K.S_HEAP] += ready[1] - ready[0]
    # the scalars there were when the digests were taken; later ones (opportunistic grafts,
    # peer exchange) count what none of these runs does
    add(scalars[:_PINNED_SCALARS])
    assert not scalars[_PINNED_SCALARS:].any()
    add(eng._F[:3])
    if len(eng._W[9]):
        log = eng.sent_log()
        for k in ("t_send", "t_arrive", "sender", "receiver", "what"):
            add(log[k])
        h.update(",".join(log["kind"]).encode())
        for ids in log["ids"]:
            add(ids)
    return h.hexdigest()[:16]


def _engine(*, n=60, topics=2, peers=16, share=0.7, messages=40, size=2000.0, upload=50.0,
            seed=1, start=5000.0, spread=10000.0, keep_arrivals=True, log=0, net=None,
            score=False, attack=None, **params):
    rng = np.random.default_rng(seed)
    subs = rng.random((n, topics)) < share
    conn = random_connections(n, peers, np.random.default_rng(seed + 1))
    topic = rng.integers(0, topics, messages)
    publisher = np.array([rng.choice(np.flatnonzero(subs[:, t])) for t in topic])
    when = start + np.sort(rng.random(messages)) * spread
    pubs = Publications.create(publisher, topic, when, size)
    delay = 5.0 + 20.0 * np.random.default_rng(seed + 2).random(conn.nnz)
    delay = (delay + delay[conn.rev]) / 2
    network = Network.uniform(n, upload=upload, **(net or {}))
    score_fn = None
    if score:
        sp, thr = score_preset("v1.1", topics)
        score_fn = EngineScore(sp)
        params.update(scoring=True, gossip_threshold=thr.gossip, publish_threshold=thr.publish)
    proc = np.random.default_rng(seed + 4).random(n) * 3.0
    return GossipSubEngine(subs, conn, delay, proc, network, pubs, params,
                           np.random.default_rng(seed + 3), log=log,
                           keep_arrivals=keep_arrivals, score_fn=score_fn, attack=attack)


def _attack_engine(liar: bool, scoring: bool, **params: object) -> GossipSubEngine:
    honest, sybils, seed = 40, 8, 2
    rng = np.random.default_rng(seed)
    inner = random_connections(honest, 12, np.random.default_rng(seed + 1))
    edges = [np.column_stack([inner.row_of, inner.indices])[inner.outbound.astype(bool)]]
    n = honest + sybils
    for s in range(honest, n):
        peers = rng.choice(honest, size=10, replace=False)
        edges.append(np.column_stack([np.full(len(peers), s), peers]))
    conn = Connections.from_edges(n, np.concatenate(edges))
    pubs = Publications.create(rng.integers(0, honest, 150), np.zeros(150, dtype=np.int64),
                               2000.0 + 90.0 * np.arange(150), 500.0)
    is_sybil = np.arange(n) >= honest
    both = ~is_sybil[conn.row_of] & ~is_sybil[conn.indices]
    attack = EngineAttack(sybil=is_sybil, drop=is_sybil,
                          conn_up_ms=np.where(both, 0.0, 1500.0), start_ms=500.0,
                          regraft_ms=2000.0, liar=is_sybil if liar else None)
    s = {"d": 6, "d_lo": 4, "d_hi": 10, "d_score": 4, "d_out": 2, "prune_backoff_ms": 5000.0,
         **params}
    score_fn = None
    if scoring:
        sp, _ = score_preset("v1.1", 1)
        score_fn = EngineScore(sp)
        s.update(scoring=True, gossip_threshold=HARDENING_THRESHOLDS.gossip,
                 publish_threshold=HARDENING_THRESHOLDS.publish, mesh_window_ms=5.0)
    return GossipSubEngine(np.ones((n, 1), dtype=bool), conn, np.full(conn.nnz, 20.0),
                           np.zeros(n), Network.uniform(n), pubs, s,
                           np.random.default_rng(seed + 3), score_fn=score_fn, log=30000,
                           attack=attack)


def _run(eng: GossipSubEngine, end: float, churn: bool = False) -> str:
    if not churn:
        eng.run_until(end)
        return _digest(eng)
    rng = np.random.default_rng(11)
    for k in range(1, int(end // 500.0) + 1):
        eng.run_until(k * 500.0)
        if k % 3 == 0:
            eng.set_online(rng.choice(eng.n, 4, replace=False), False)
        if k % 3 == 1:
            eng.set_online(np.flatnonzero(eng.online == 0)[:3], True)
    return _digest(eng)


def _run_churn(eng: GossipSubEngine, end: float) -> str:
    """:func:`_run`'s churn as one schedule given to ``run_churn``."""
    rng = np.random.default_rng(11)
    on = np.ones(eng.n, dtype=bool)
    times, rows = [], []
    for k in range(1, int(end // 500.0) + 1):
        if k % 3 == 0:
            on[rng.choice(eng.n, 4, replace=False)] = False
        if k % 3 == 1:
            on[np.flatnonzero(~on)[:3]] = True
        times.append(k * 500.0)
        rows.append(on.copy())
    eng.run_churn(times, rows)
    return _digest(eng)


CASES = {
    "v1.1 defaults": (lambda **kw: _engine(**kw, messages=80, topics=3, share=0.6, n=80,
                                           spread=20000.0, start=3000.0), 40000.0, False),
    "v1.2 idontwant, graft on subscribe, big copies, logged": (
        lambda **kw: _engine(**kw, variant="v1.2", seed=3, graft_on_subscribe=True, size=100000.0,
                        upload=10.0, idontwant_threshold=1000.0, seen_ttl_ms=4000.0,
                        messages=60, spread=30000.0, log=60000), 40000.0, False),
    "v1.0 loss, jitter, validation, retransmission limit": (
        lambda **kw: _engine(**kw, variant="v1.0", seed=4, d=4, d_lo=3, d_hi=6, d_out=1, d_score=2,
                        gossip_retransmission=1, net={"loss": 0.05, "jitter_ms": 7.0,
                                                      "validation_ms": 2.0,
                                                      "validation_ms_per_byte": 1e-4},
                        messages=120, spread=30000.0), 40000.0, False),
    "v1.1 random phases, fanout": (
        lambda **kw: _engine(**kw, seed=5, heartbeat_phase="random", heartbeat_ms=700.0,
                        flood_publish=False, share=0.4, messages=90, spread=20000.0),
        30000.0, False),
    "v1.1 scoring, slots, churn": (
        lambda **kw: _engine(**kw, seed=6, n=80, score=True, keep_arrivals=False, size=30000.0,
                        upload=20.0, net={"loss": 0.03}, messages=150, spread=30000.0),
        36000.0, True),
    "v1.2 churn, max_prune, full rows": (
        lambda **kw: _engine(**kw, variant="v1.2", seed=7, d=3, d_lo=3, d_hi=5, d_out=0, d_score=1,
                        max_prune=2, idontwant_threshold=500.0, messages=100,
                        spread=25000.0, log=40000), 30000.0, True),
    "sybils, scoring": (lambda **kw: _attack_engine(False, True, **kw), 18000.0, False),
    "liars, no scoring": (lambda **kw: _attack_engine(True, False, **kw), 18000.0, False),
}

#: the digests of the runs with ``control_rpc="per-message"`` (each control message an RPC of
#: its own): the engine's only behaviour until per-peer RPCs came, so these are the digests taken
#: before the event loop was reorganised, and that path must keep them
PINNED = {
    "v1.1 defaults": "7b474fd695c258a7",
    "v1.2 idontwant, graft on subscribe, big copies, logged": "c921cc92b65ae227",
    "v1.0 loss, jitter, validation, retransmission limit": "1424b2ebd531df98",
    "v1.1 random phases, fanout": "98e1c2f45f75e6f5",
    "v1.1 scoring, slots, churn": "298e69993fd60216",
    "v1.2 churn, max_prune, full rows": "7c7458adf7fb6823",
    "sybils, scoring": "3d5204913cf4f50b",
    "liars, no scoring": "e3f17ba5c248a899",
}


#: the same runs with ``control_rpc="per-peer"``, the default since a heartbeat's control
#: messages to one peer leave as one RPC, as go-libp2p-pubsub and the JS implementation send them
#: (docs/gossipsub.md): fewer, larger control messages change the uplinks' schedules, the draws
#: of jitter and when IHAVEs are counted against max_ihave_messages, so the runs with more than
#: one topic moved.  Taken from the kernel that introduced per-peer RPCs; a change that moves any
#: of them changes a result.
PINNED_PER_PEER = {
    "v1.1 defaults": "85a819e23127ec5a",
    "v1.2 idontwant, graft on subscribe, big copies, logged": "eb396108ae9876fa",
    "v1.0 loss, jitter, validation, retransmission limit": "fe6977b4a653090c",
    "v1.1 random phases, fanout": "f292c2f70ccb270e",
    "v1.1 scoring, slots, churn": "0410af964bfec919",
    "v1.2 churn, max_prune, full rows": "25c14469661dc303",
    # one topic: a heartbeat sends one peer at most one control message, so each RPC holds one
    # part, of the same size as the message alone, and the runs are unchanged
    "sybils, scoring": "3d5204913cf4f50b",
    "liars, no scoring": "e3f17ba5c248a899",
}


@pytest.mark.parametrize("name", list(CASES))
def test_engine_runs_are_pinned(name):
    make, end, churn = CASES[name]
    assert _run(make(control_rpc="per-message"), end, churn) == PINNED[name]


@pytest.mark.parametrize("name", list(CASES))
def test_per_peer_runs_are_pinned(name):
    make, end, churn = CASES[name]
    assert _run(make(control_rpc="per-peer"), end, churn) == PINNED_PER_PEER[name]


def test_the_default_is_per_peer():
    make, end, churn = CASES["v1.1 defaults"]
    assert _run(make(), end, churn) == PINNED_PER_PEER["v1.1 defaults"]


@pytest.mark.parametrize("name", [k for k, v in CASES.items() if v[2]])
@pytest.mark.parametrize("mode", ["per-message", "per-peer"])
def test_a_churn_schedule_in_one_call_is_the_same_run(name, mode):
    make, end, _ = CASES[name]
    pinned = PINNED if mode == "per-message" else PINNED_PER_PEER
    assert _run_churn(make(control_rpc=mode), end) == pinned[name]


def test_run_churn_refuses_a_bad_schedule():
    eng = CASES["v1.1 defaults"][0]()
    with pytest.raises(ParameterError, match="churn: online must be"):
        eng.run_churn([1000.0], np.ones((2, eng.n), dtype=bool))
    with pytest.raises(ParameterError, match="must not decrease"):
        eng.run_churn([2000.0, 1000.0], np.ones((2, eng.n), dtype=bool))


def _lean_row(D: int, D_lazy: int, churn: float) -> tuple[object, ...]:
    from hedgerow.scenarios.lean_gossip import run_world, scenario_world

    world = scenario_world("lean-gossip", seed=3, ticks=400, warmup_ticks=100, nodes=300,
                           bimodal_churn=f"{churn}:0.01:0.05:100")
    row = run_world(world, D, D_lazy)
    keys = ("delivery_rate", "delivery_rate_settled", "p99_latency_sec",
            "p99_latency_sec_online", "late_deliveries", "p50_latency_sec", "avg_latency_sec",
            "bytes_per_delivery", "payload_bytes_MB", "control_bytes_MB", "total_deliveries",
            "offline_drops", "mesh_degree_mean", "messages_published")
    return tuple(row[k] for k in keys)


LEAN_PINNED: dict[tuple[int, int, float], tuple[object, ...]] = {
    (2, 1, 0.2): (0.9810666666666665, 0.9836842105263158, 3.4009059072000087, 2.7005464832, 150,
                  1.3044236799999962, 1.2947780601227439, 3004.6185735715258, 19.9306640625,
                  1.0815162658691406, 7333, 129, 2.5178861788617883, 25),
    (8, 7, 0.0): (1.0, 1.0, 0.6098304000000644, 0.6098304000000644, 0, 0.4073727999999937,
                  0.41178473079867994, 13040.412842809365, 85.6142578125, 7.347135543823242,
                  7475, 0, 8.746341463414634, 25),
    (60, 0, 0.3): (0.9521333333333334, 0.9540350877192983, 0.33145728000017116,
                   0.3299827200001964, 13, 0.22408447999997952, 0.2360174343339473,
                   92684.01573917932, 628.27880859375, 0.70703125, 7116, 2062,
                   58.3139837398374, 25),
}


@pytest.mark.parametrize("key", list(LEAN_PINNED))
def test_lean_gossip_rows_are_pinned(key):
    assert _lean_row(*key) == LEAN_PINNED[key]
