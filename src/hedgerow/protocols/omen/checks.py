"""OMen's invariants, checked on an engine once an event's life cycle is over.

What the paper guarantees, made checkable (``docs/omen.md``, "Invariants"):

1. **TCO** (Lemma 1b, section 5): every topic connected among its online
   subscribers.
2. **Edges**: no self-loop, duplicate or link to an offline node; the
   adjacency table symmetric and its degrees equal to its rows.
3. **Repairs**: every edge an event added joins two members of that event's
   shadow set (``E_new ⊆ S × S``, checked while the engine runs).
4. **Backups** (eqs. 1-3): ``v' ∉ B(v')``; every member shares a topic with
   ``v'`` (eq. 2); a ready entry covers every topic of ``v'`` that another
   live node holds (eq. 1).
5. **Storage**: no node holds entries for more than ``2L`` predecessors.
6. **Coordination**: every event done; no ``exeQ`` / ``standbyL`` left.

Examples
--------
>>> import numpy as np
>>> from hedgerow.protocols import get_protocol
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=50, topics=6, subs="2:3", popularity="rss", seed=2)
>>> proto = get_protocol("omen", coverage=2, warmup_cycles=3)
>>> eng = proto.maintenance_engine(inst, proto.streams(0))
>>> eng.start(np.ones(50, dtype=bool)); eng.leave(3); _ = eng.settle()
>>> omen_violations(eng)
[]
"""

from __future__ import annotations

import numpy as np

from hedgerow.metrics import topic_components
from hedgerow.protocols.omen.engine import OmenEngine

__all__ = ["omen_hook", "omen_violations", "partitioned_online_topics"]


def partitioned_online_topics(engine: OmenEngine) -> int:
    """Topics whose online subscribers are split into several components."""
    comps = topic_components(engine.overlay(), engine.subscriptions(), measured=engine.online)
    return int((comps > 1).sum())


def omen_violations(engine: OmenEngine, *, settled: bool = True) -> list[str]:
    """Every invariant of the module docstring that ``engine`` breaks (``[]`` when sound).

    ``settled=False`` skips the checks that hold only once every life cycle
    ended (TCO and coordination).
    """
    out: list[str] = []
    n, on = engine.n, engine.online
    deg, adj, masks = engine.deg, engine.adj, engine.masks
    cols = np.arange(adj.shape[1])[None, :]
    used = cols < deg[:, None]
    if (adj[~used] != -1).any():
        out.append("adjacency rows hold entries past their degrees")
    rows = np.repeat(np.arange(n), deg)
    nbrs = adj[used]
    if (rows == nbrs).any():
        out.append(f"self-loop at node {int(rows[rows == nbrs][0])}")
    bad = ~(on[rows] & on[nbrs])
    for u, v in np.stack([rows[bad], nbrs[bad]], axis=1)[:5].tolist():
        out.append(f"link {u}-{v} touches an offline node")
    key = rows * n + nbrs
    if len(np.unique(key)) != len(key):
        out.append("duplicate link")
    if not np.array_equal(np.sort(key), np.sort(nbrs * n + rows)):
        out.append("a link is one-sided")
    for ev in engine.events:
        if ev.edges and ev.shadow_set is not None:
            edges = np.asarray(ev.edges, dtype=np.int64)
            if not np.isin(edges, ev.shadow_set).all():
                out.append(f"event {ev.id}: an edge leaves its shadow set")
    live_subs = engine.live_subs
    for c in np.flatnonzero(on).tolist():
        ent = engine.entries[c]
        if len(ent) > 2 * engine.L:
            out.append(f"node {c} holds {len(ent)} entries > 2L = {2 * engine.L}")
        for v, e in ent.items():
            b = e.backups
            if not len(b):
                continue
            if (b == v).any():
                out.append(f"node {c}: B({v}) contains {v}")
            if not (masks[b] & masks[v]).any(axis=1).all():
                out.append(f"node {c}: a backup of {v} shares no topic with it (eq. 2)")
            if e.ready and on[v] and engine.lam > 0 and not e.dirty and on[b].all():
                held = np.bitwise_or.reduce(masks[b], axis=0)
                vt = engine.topics_of(v)
                words, bits = vt >> 6, (vt & 63).astype(np.uint64)
                covered = ((held[words] >> bits) & np.uint64(1)).astype(bool)
                missing = vt[(live_subs[vt] - 1 > 0) & ~covered]
                if len(missing):
                    out.append(f"node {c}: ready B({v}) misses topics {missing[:3].tolist()}")
    if settled:
        split = partitioned_online_topics(engine)
        if split:
            out.append(f"{split} topics partitioned among online subscribers")
        for ev in engine.events:
            if not ev.done:
                out.append(f"event {ev.id} ({ev.type} of {ev.node}) not done")
        for c in range(n):
            if engine.exeq[c] or engine.standby[c] or engine.busy[c] is not None:
                out.append(f"node {c}: exeQ/standbyL not empty at quiescence")
    return out


def omen_hook(engine: OmenEngine, event: object = None) -> dict[str, int]:
    """Invariant hook for the per-event churn driver: violations by kind.

    ``backups`` (eqs. 1-2, ``v' ∉ B(v')``), ``storage`` (<= 2L entries),
    ``shadow`` (``E_new ⊆ S × S``), ``coordination`` (every life cycle ended,
    queues empty); links and TCO are the driver's own checks.
    """
    found = omen_violations(engine)
    kinds = {"backups": 0, "storage": 0, "shadow": 0, "coordination": 0}
    for line in found:
        if "entries >" in line:
            kinds["storage"] += 1
        elif "shadow set" in line:
            kinds["shadow"] += 1
        elif "B(" in line or "backup" in line:
            kinds["backups"] += 1
        elif "not done" in line or "exeQ" in line:
            kinds["coordination"] += 1
    return kinds
