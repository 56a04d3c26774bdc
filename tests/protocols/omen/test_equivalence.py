"""OMen-G with every live node as backups repairs exactly as LowODA-Inc (one engine, one rule)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hedgerow.engine import Simulator
from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.omen import repair
from hedgerow.protocols.omen.repair import add_edge, remove_node, shadow_repair
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.workloads import make_instance


def test_omen_g_with_all_backups_equals_lowoda_inc_edge_for_edge():
    inst = make_instance(nodes=120, topics=20, subs="2:6", popularity="rss", seed=8)
    streams = RngStreams(3).child("protocol:x")
    g = get_protocol("omen-g", backups="all", rho=2.0).maintenance_engine(
        inst, streams, sim=Simulator())
    inc = get_protocol("lowoda-inc", rho=2.0).maintenance_engine(inst, streams, sim=Simulator())
    on = np.ones(inst.n_nodes, dtype=bool)
    on[100:] = False
    g.start(on)
    inc.start(on)
    assert np.array_equal(g.edges(), np.unique(inc.edges(), axis=0))
    rng = np.random.default_rng(4)
    compared = 0
    for _ in range(60):
        if rng.random() < 0.5 and g.online.sum() > 60:
            p = int(rng.choice(np.flatnonzero(g.online)))
            g.leave(p)
            inc.leave(p)
        else:
            p = int(rng.choice(np.flatnonzero(~g.online)))
            g.join(p)
            inc.join(p)
        g.settle()
        inc.run_until(inc.sim.now + 100.0)
        ours = np.sort(np.asarray(g.events[-1].edges, dtype=np.int64).reshape(-1, 2), axis=1)
        theirs = np.sort(np.asarray(inc.last_added, dtype=np.int64).reshape(-1, 2), axis=1)
        assert np.array_equal(ours, theirs), p
        compared += len(inc.last_added)
        assert np.array_equal(g.edges(), np.unique(inc.edges(), axis=0))
    assert compared > 20


def test_local_repair_equals_the_engine_on_the_whole_overlay():
    """The repair's cut-down input (topics of the event, links inside them) changes nothing."""
    inst = make_instance(nodes=150, topics=25, subs="2:7", popularity="rss", seed=2)
    rng = np.random.default_rng(0)
    e = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule="lowoda", rho=2.0,
                    rng=rng)
    n = inst.n_nodes
    for trial in range(40):
        adj = np.full((n, 8), -1, dtype=np.int64)
        deg = np.zeros(n, dtype=np.int64)
        for u, v in e.tolist():
            adj = add_edge(adj, deg, u, v)
        gone = int(rng.integers(n))
        nb = remove_node(adj, deg, gone)
        shadow = np.union1d(nb, rng.choice(n, size=15, replace=False))
        shadow = shadow[shadow != gone]
        topics = inst.topics_of(gone)
        for comps in ("true", "local"):
            got = shadow_repair(inst.masks, adj, deg, shadow, topics, rho=2.0,
                                rng=np.random.default_rng(trial), components=comps)
            rows = np.repeat(np.arange(n), deg)
            full = np.stack([rows, adj[np.arange(adj.shape[1])[None, :] < deg[:, None]]], 1)
            full = full[full[:, 0] < full[:, 1]]
            if comps == "local":
                full = full[np.isin(full, shadow).all(axis=1)]
            want = tco_augment(inst.masks, shadow, full, rule="lowoda", rho=2.0,
                               rng=np.random.default_rng(trial), topics=topics, degrees=deg)
            assert np.array_equal(got, want), (trial, comps)


def _overlay(inst, rng, online_share):
    """A LowODA overlay on a random online set, then random departures and stray links."""
    n = inst.n_nodes
    on = rng.random(n) < online_share
    e = tco_augment(inst.masks, np.flatnonzero(on), np.zeros((0, 2), np.int64), rule="lowoda",
                    rho=2.0, rng=rng)
    adj = np.full((n, 4), -1, dtype=np.int64)
    deg = np.zeros(n, dtype=np.int64)
    for u, v in e.tolist():
        adj = add_edge(adj, deg, u, v)
    for _ in range(int(rng.integers(0, 12))):  # links that need not share a topic
        u, v = (int(x) for x in rng.choice(n, 2, replace=False))
        if v not in adj[u, : deg[u]]:
            adj = add_edge(adj, deg, u, v)
    gone = rng.choice(np.flatnonzero(on), size=int(rng.integers(1, 6)), replace=False)
    nbrs = [remove_node(adj, deg, int(g)) for g in gone.tolist()]
    return adj, deg, gone, np.unique(np.concatenate(nbrs))


@pytest.mark.parametrize("fused", [True, False], ids=["one-call", "two-call"])
@pytest.mark.parametrize(
    ("nodes", "topics", "subs", "popularity"),
    [(80, 12, "1:5", "uniform"), (200, 40, "2:9", "rss"), (120, 90, "3:14", "zipf1")],
)
def test_shadow_input_equals_the_whole_overlay_engine_on_random_repairs(
        nodes, topics, subs, popularity, fused, monkeypatch):
    """Many random repairs: the shadow-only input gives the engine's edges and draws.

    Both paths of the repair are checked: the one compiled call and the
    selection's two-call path it takes with very many topics.

    The reference is the engine on the whole overlay (every current link, the
    overlay's degrees), the input the repair used before it was cut to the
    shadow.  Overlays are left with split topics (departures, stray links),
    shadows mix the departed nodes' neighbours with random nodes, topic sets
    are a node's topics or random ones (more than 64 topics: several mask words).
    """
    if not fused:
        monkeypatch.setattr(repair, "_FUSED_TOPICS", 0)
    inst = make_instance(nodes=nodes, topics=topics, subs=subs, popularity=popularity, seed=7)
    rng = np.random.default_rng(nodes)
    n = inst.n_nodes
    added = compared = 0
    for _ in range(6):
        adj, deg, gone, nbrs = _overlay(inst, rng, 0.85)
        rows = np.repeat(np.arange(n), deg)
        full = np.stack([rows, adj[np.arange(adj.shape[1])[None, :] < deg[:, None]]], 1)
        full = full[full[:, 0] < full[:, 1]]
        for trial in range(30):
            k = int(rng.integers(0, 24))
            shadow = np.union1d(nbrs[rng.random(len(nbrs)) < 0.8], rng.choice(n, k))
            shadow = shadow[~np.isin(shadow, gone)]
            if rng.random() < 0.6:
                t = inst.topics_of(int(rng.choice(gone)))
            else:
                t = rng.choice(topics, size=int(rng.integers(1, topics)), replace=False)
            rho = float(rng.choice([1.0, 1.5, 2.0, 4.0]))
            for comps in ("true", "local"):
                seed = int(rng.integers(1 << 30))
                r_got, r_want = np.random.default_rng(seed), np.random.default_rng(seed)
                got = shadow_repair(inst.masks, adj, deg, shadow, t, rho=rho, rng=r_got,
                                    components=comps)
                ref = full if comps == "true" else full[np.isin(full, shadow).all(axis=1)]
                if len(shadow) >= 2 and len(t):
                    want = tco_augment(inst.masks, shadow, ref, rule="lowoda", rho=rho,
                                       rng=r_want, topics=t, degrees=deg)
                else:  # nothing to connect: no draw either
                    want = np.zeros((0, 2), dtype=np.int64)
                assert np.array_equal(got, want), (trial, comps, rho)
                assert r_got.integers(1 << 62) == r_want.integers(1 << 62)
                compared += 1
                added += len(got)
    assert compared == 360 and added > 150, added


def _run_digest(name: str, seed: int, events: int = 40) -> str:
    """sha256 (first 16 hex digits) of every event's type, node and chosen links, in order."""
    inst = make_instance(nodes=160, topics=24, subs="2:6", popularity="rss", seed=3)
    params = {"coverage": 3} if name == "omen-g" else {"coverage": 3, "warmup_cycles": 10}
    proto = get_protocol(name, **params)
    eng = proto.maintenance_engine(inst, proto.streams(seed), sim=Simulator())
    on = np.ones(inst.n_nodes, dtype=bool)
    on[128:] = False
    eng.start(on)
    rng = np.random.default_rng(seed + 10)
    for _ in range(events):
        if rng.random() < 0.5 and eng.online.sum() > eng.n // 3:
            eng.leave(int(rng.choice(np.flatnonzero(eng.online))))
        else:
            eng.join(int(rng.choice(np.flatnonzero(~eng.online))))
        eng.settle()
    h = hashlib.sha256()
    for ev in eng.events:
        h.update(repr((ev.type, ev.node, [tuple(map(int, e)) for e in ev.edges])).encode())
    h.update(eng.edges().tobytes())
    return h.hexdigest()[:16]


#: digests of the runs below with the repair's earlier input (the engine on every subscriber of
#: the event's topics and all their links); the shadow-only input must choose the same links
PINNED = {("omen", 1): "ead2ac45f59e5522", ("omen", 2): "db4a6ef8d8e5f58b",
          ("omen-g", 1): "278f6ab21bf91fdc", ("omen-g", 2): "094c14c4b983b57d"}


@pytest.mark.parametrize(("name", "seed"), sorted(PINNED))
def test_whole_runs_choose_the_links_they_chose_before(name, seed):
    assert _run_digest(name, seed) == PINNED[(name, seed)]
