"""OMen-G with every live node as backups repairs exactly as LowODA-Inc (one engine, one rule)."""

from __future__ import annotations

import numpy as np

from hedgerow.engine import Simulator
from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol
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
            via_csc = shadow_repair(inst.masks, adj, deg, shadow, topics, rho=2.0,
                                    rng=np.random.default_rng(trial), components=comps,
                                    subscribers=(inst.topic_indptr, inst.topic_nodes))
            assert np.array_equal(via_csc, want), (trial, comps)
