"""Where one OMen repair's time goes: the stages of ``shadow_repair`` timed one by one.

A 1,000-node x 1,000-topic synthetic instance (46 topics per node), its LowODA
overlay (ρ = 2) in the repair's adjacency table, then ``--calls`` repairs of an
11-node random shadow on one node's topics (the size of FB 1K's shadow sets).
Each stage is re-run by hand in the order ``shadow_repair`` and
``tco_augment`` run it and timed with ``perf_counter`` (wall, so state the
load); the first call (JIT) is dropped.

Usage: ``python benchmarks/omen_repair_breakdown.py [--calls 200] [--nodes 1000]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.sparse as sp

from hedgerow.protocols.omen.repair import _compact, add_edge, shadow_repair
from hedgerow.protocols.tco import _kernels as K
from hedgerow.protocols.tco.engine import _CACHE_K, _init_members, _prepare, tco_augment
from hedgerow.workloads import make_instance

STAGES = ["total", "shadow set", "_compact (cut-down masks + edges)", "_prepare (checks)",
          "subset topic CSR", "all-node topic CSR + union-find", "allocations",
          "init_contributions (+ member arrays)", "run_engine"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--shadow", type=int, default=11)
    a = ap.parse_args()
    inst = make_instance(nodes=a.nodes, topics=1000, subs=46, seed=1)
    n = inst.n_nodes
    E = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule="lowoda", rho=2.0,
                    rng=np.random.default_rng(0))
    adj = np.full((n, 8), -1, np.int64)
    deg = np.zeros(n, np.int64)
    for u, v in E.tolist():
        adj = add_edge(adj, deg, u, v)
    R = sp.csr_matrix(inst.matrix)
    M = sp.csc_matrix(inst.matrix)
    tptr, tnodes = M.indptr.astype(np.int64), M.indices.astype(np.int64)
    r = np.random.default_rng(5)
    T = dict.fromkeys(STAGES, 0.0)
    for it in range(a.calls + 1):
        v = int(r.integers(n))
        S = r.choice(n, a.shadow, replace=False)
        topics = R.indices[R.indptr[v]:R.indptr[v + 1]].astype(np.int64)
        t = [time.perf_counter()]
        shadow_repair(inst.masks, adj, deg, S, topics, rng=np.random.default_rng(it), rho=2.0,
                      subscribers=(tptr, tnodes))
        t.append(time.perf_counter())
        Su = np.unique(S)
        in_s = np.zeros(n, np.bool_)
        in_s[Su] = True
        t.append(time.perf_counter())
        cm, e = _compact(inst.masks, topics, adj, deg, in_s, False, tptr, tnodes)
        t.append(time.perf_counter())
        masks, nodes, edges, _, keep, deg_all = _prepare(cm, Su, e, "lowoda", 2.0, None, deg)
        t.append(time.perf_counter())
        sptr, stop = K.node_topic_csr(masks, nodes, keep)
        counts = np.bincount(stop, minlength=keep.shape[0])
        relevant = keep & (counts[: keep.shape[0]] >= 2)
        owner = np.repeat(np.arange(len(nodes)), np.diff(sptr))
        nodes = nodes[np.bincount(owner[relevant[stop]], minlength=len(nodes)) > 0]
        s = len(nodes)
        t.append(time.perf_counter())
        ptr, top = K.node_topic_csr(masks, np.arange(n, dtype=np.int64), relevant)
        ns = top.shape[0]
        parent = np.arange(ns, dtype=np.int64)
        size = np.ones(ns, np.int64)
        if edges.shape[0]:
            K.union_edges(ptr, top, parent, size, edges[:, 0].copy(), edges[:, 1].copy())
        t.append(time.perf_counter())
        C = np.zeros((s, s), np.int16)
        t.append(time.perf_counter())
        phi0, members = _init_members(ptr, top, parent, nodes, keep.shape[0], C)
        t.append(time.perf_counter())
        out = np.empty((max(phi0, 1), 2), np.int64)
        K.run_engine(K.MODE_THRESHOLD, 2.0, 0, np.uint64(7), C, deg_all[nodes].copy(), nodes,
                     ptr, top, parent, size, *members, out, _CACHE_K, True)
        t.append(time.perf_counter())
        if it == 0:
            continue
        T[STAGES[0]] += t[1] - t[0]
        for k in range(1, len(STAGES)):
            T[STAGES[k]] += t[k + 1] - t[k]
    print(f"n={n}, shadow={a.shadow}, calls={a.calls}, load={os.getloadavg()[0]:.1f}")
    for k, x in T.items():
        print(f"  {k:36s} {1e6 * x / a.calls:8.1f} us")


if __name__ == "__main__":
    main()
