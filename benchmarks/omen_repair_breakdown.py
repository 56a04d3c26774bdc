"""Where one OMen repair's time goes, and the same repairs under an earlier checkout.

A synthetic instance (``--nodes`` x 1,000 topics, 46 topics per node), its
LowODA overlay (ρ = 2) in the repair's adjacency table, then ``--calls``
leaves, each repaired on its own: a random node's links go, the shadow is its
former neighbours plus random nodes sharing a topic with it up to
``--shadow`` nodes (11 is the size of FB 1K's shadow sets), ``T_chev`` its
topics.  The same seeded calls are timed three ways:

* **total**: each ``shadow_repair`` call, CPU (thread) time, in a fresh
  process per side; with ``--baseline-src DIR`` the same calls also run on the
  package under ``DIR`` (e.g. an export of an earlier commit), the two sides
  alternate ``--rounds`` times, and both print a digest of every edge they
  chose, so the comparison also checks that the edges are the same;
* **stages** (this checkout): the steps of ``shadow_repair`` re-run by hand
  in its order (shadow set, the shadow's slots and component searches,
  allocations, ``select_compiled``: the contributions, members and engine).

The first call of each process (compilation) is dropped.  State the load.

Usage::

    python benchmarks/omen_repair_breakdown.py [--calls 200] [--nodes 1000]
        [--baseline-src /path/to/old/src] [--rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def _setup(nodes: int):
    from hedgerow.protocols.omen.repair import add_edge
    from hedgerow.protocols.tco.engine import tco_augment
    from hedgerow.workloads import make_instance

    inst = make_instance(nodes=nodes, topics=1000, subs=46, seed=1)
    n = inst.n_nodes
    E = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule="lowoda", rho=2.0,
                    rng=np.random.default_rng(0))
    adj = np.full((n, 8), -1, np.int64)
    deg = np.zeros(n, np.int64)
    for u, v in E.tolist():
        adj = add_edge(adj, deg, u, v)
    return inst, adj, deg


def _calls(inst, adj, deg, calls: int, shadow: int):
    """The seeded repair inputs, one leave each: ``(adj, deg, shadow, topics)`` per call.

    A random node leaves (its links go, on a copy of the table); the shadow is
    its former neighbours plus random nodes sharing one of its topics (its
    stand-in backups) up to ``shadow`` nodes, ``T_chev`` its topics.
    """
    from hedgerow.protocols.omen.repair import remove_node

    R = sp.csr_matrix(inst.matrix)
    r = np.random.default_rng(5)
    out = []
    while len(out) < calls + 1:
        v = int(r.integers(inst.n_nodes))
        if deg[v] == 0:
            continue
        topics = R.indices[R.indptr[v]:R.indptr[v + 1]].astype(np.int64)
        a, d = adj.copy(), deg.copy()
        nb = remove_node(a, d, v)
        share = np.flatnonzero((inst.masks & inst.masks[v]).any(axis=1))
        share = share[share != v]
        extra = r.choice(share, size=min(len(share), max(shadow - len(nb), 2)), replace=False)
        out.append((a, d, np.union1d(nb, extra), topics))
    return out


def total(a) -> None:
    """Time every call of this interpreter's ``shadow_repair``; print JSON."""
    from hedgerow.protocols.omen.repair import shadow_repair

    inst, adj0, deg0 = _setup(a.nodes)
    kw = {}
    if "subscribers" in inspect.signature(shadow_repair).parameters:  # the earlier input
        M = sp.csc_matrix(inst.matrix)
        kw["subscribers"] = (M.indptr.astype(np.int64), M.indices.astype(np.int64))
    h = hashlib.sha256()
    times = []
    for it, (adj, deg, S, topics) in enumerate(_calls(inst, adj0, deg0, a.calls, a.shadow)):
        t0 = time.thread_time()
        e = shadow_repair(inst.masks, adj, deg, S, topics, rng=np.random.default_rng(it),
                          rho=2.0, **kw)
        t1 = time.thread_time()
        h.update(np.ascontiguousarray(e, dtype=np.int64).tobytes())
        if it:
            times.append(t1 - t0)
    import hedgerow

    print(json.dumps({"src": str(Path(hedgerow.__file__).parents[1]), "times": times,
                      "digest": h.hexdigest()[:16]}))


def stages(a) -> None:
    from hedgerow.protocols.omen.repair import _shadow_slots, shadow_repair
    from hedgerow.protocols.tco._kernels import MODE_THRESHOLD
    from hedgerow.protocols.tco.engine import _CACHE_K, select_compiled

    names = ["total", "shadow set", "_shadow_slots (slots + component searches)",
             "allocations", "select_compiled (contributions, members, engine)"]
    inst, adj0, deg0 = _setup(a.nodes)
    T = dict.fromkeys(names, 0.0)
    for it, (adj, deg, S, topics) in enumerate(_calls(inst, adj0, deg0, a.calls, a.shadow)):
        t = [time.thread_time()]
        shadow_repair(inst.masks, adj, deg, S, topics, rng=np.random.default_rng(it), rho=2.0)
        t.append(time.thread_time())
        Su = np.unique(S)
        tp = np.unique(topics)
        t.append(time.thread_time())
        nodes, ptr, top, parent, size, _ = _shadow_slots(inst.masks, tp, adj, deg, Su, False)
        t.append(time.thread_time())
        s = len(nodes)
        C = np.zeros((s, s), np.int16)
        t.append(time.thread_time())
        select_compiled(MODE_THRESHOLD, 2.0, 0, np.uint64(7), C, deg[nodes].copy(), nodes, ptr,
                        top, parent, size, len(tp), _CACHE_K, True)
        t.append(time.thread_time())
        if it == 0:
            continue
        T[names[0]] += t[1] - t[0]
        for k in range(1, len(names)):
            T[names[k]] += t[k + 1] - t[k]
    print(f"stages of this checkout, CPU µs per call (n={a.nodes}, shadow={a.shadow}, "
          f"calls={a.calls}):")
    for k, x in T.items():
        print(f"  {k:44s} {1e6 * x / a.calls:8.1f}")


def _side(src: str, a) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, __file__, "--total-only", "--calls", str(a.calls), "--nodes",
           str(a.nodes), "--shadow", str(a.shadow)]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _fmt(x: np.ndarray) -> str:
    q = np.percentile(x, [50, 90]) * 1e6
    return f"median {q[0]:8.1f}  mean {x.mean() * 1e6:8.1f}  p90 {q[1]:8.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--shadow", type=int, default=11)
    ap.add_argument("--baseline-src", default=None,
                    help="a src/ folder holding an earlier hedgerow to time the same calls on")
    ap.add_argument("--rounds", type=int, default=2, help="alternations of the two sides")
    ap.add_argument("--total-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.total_only:
        total(a)
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    print(f"load average at start {os.getloadavg()[0]:.1f}")
    sides = {"this checkout": here}
    if a.baseline_src:
        sides = {"baseline": str(Path(a.baseline_src).resolve()), **sides}
    got: dict[str, list] = {k: [] for k in sides}
    digests: dict[str, set] = {k: set() for k in sides}
    for _ in range(a.rounds):
        for k, src in sides.items():
            r = _side(src, a)
            got[k] += r["times"]
            digests[k].add(r["digest"])
    print(f"whole shadow_repair call, CPU µs (n={a.nodes}, shadow={a.shadow}, "
          f"{a.rounds} x {a.calls} calls per side):")
    for k in sides:
        print(f"  {k:14s} {_fmt(np.array(got[k]))}  edges digest {','.join(sorted(digests[k]))}")
    if a.baseline_src:
        b, c = np.array(got["baseline"]), np.array(got["this checkout"])
        same = digests["baseline"] == digests["this checkout"]
        print(f"  ratio this / baseline: median {np.median(c) / np.median(b):.3f}, "
              f"mean {c.mean() / b.mean():.3f}; same edges: {same}")
    stages(a)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
