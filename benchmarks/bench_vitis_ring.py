"""How fast gossip builds the id ring, by ring slots per side and network size (no pub/sub).

Vitis's table (IPDPS 2011, §IV-A: RT 15, k 3) gives the ring only two of its 15 slots: one
successor and one predecessor.  T-Man's O(log N) ring convergence (Jelasity and Babaoglu)
assumes views that keep several nearest ids on each side: an exchange partner near the node
then hands over the node's own neighbourhood.  This benchmark isolates that effect with
T-Man's ring (``ring_select``) over Newscast (cache 20): ``--views`` ring views of ``R`` slots
(``R / 2`` per side; ``R = 2`` is Vitis's succ + pred), partner uniform in the view, at each
``--nodes``.  It prints the share of nodes holding both true ring neighbours
(``ring_correct``) every 10 cycles and the first cycle at 99%, with CPU seconds and the load.

Usage::

    python benchmarks/bench_vitis_ring.py                                 # 10K, 30K, 100K
    python benchmarks/bench_vitis_ring.py --nodes 10000 --views 2,20 --cycles 60
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from hedgerow.gossip import PeerSampling, TMan, ring_select
from hedgerow.model import RngStreams
from hedgerow.protocols.vitis.ring import node_ids, ring_correct


def curve(n: int, view: int, cache: int, cycles: int, seed: int) -> dict:
    """Ring correctness after every cycle for one network size and ring view size."""
    rng = RngStreams(seed).stream("ring")
    ids = node_ids(n, seed)
    ps = PeerSampling(n, cache)
    ps.bootstrap(np.ones(n, bool), rng)
    tm = TMan(view, ring_select(ids))
    v = tm.empty_view(n)
    c0 = time.process_time()
    out = []
    for _ in range(cycles):
        ps.cycle(rng)
        tm.cycle(v, ps, rng)
        out.append(ring_correct(v, ids))
    hit = next((i + 1 for i, x in enumerate(out) if x >= 0.99), None)
    return {"nodes": n, "view": view, "curve": out, "cycle_99": hit,
            "cpu_s": time.process_time() - c0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="10000,30000,100000", help="comma-separated N")
    ap.add_argument("--views", default="2,4,20", help="comma-separated ring view sizes R")
    ap.add_argument("--cache", type=int, default=20, help="Newscast cache size")
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the curves here")
    args = ap.parse_args()
    res = []
    for n in (int(x) for x in args.nodes.split(",")):
        for r in (int(x) for x in args.views.split(",")):
            load = os.getloadavg()[0]
            c = curve(n, r, args.cache, args.cycles, args.seed)
            c["load"] = load
            res.append(c)
            every = " ".join(f"{x:.3f}" for x in c["curve"][9::10])
            print(f"N={n:>7} R={r:>2}  every 10 cycles: {every}  99% at cycle {c['cycle_99']}"
                  f"  ({c['cpu_s']:.1f} s CPU, load {load:.1f})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    main()
