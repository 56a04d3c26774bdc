"""The gossip layer alone: Newscast and T-Man cycles at N nodes, CPU and wall seconds per cycle.

Three T-Man selections: T-Man's ring (``ring_select``), a Jaccard ranking over subscription bit
masks (``jaccard_select``, the setting of a PeerSim Newscast + T-Man comparison) and Vitis's
Algorithm 4 (ring, small-world, eq. (1) friends).  Workload: ``--subs`` random topics of
``--topics`` per node (S0: 50 of 5,000).  Newscast and T-Man caches as PeerSim's usual 20.

Usage::

    python benchmarks/bench_gossip.py                      # 10,000 nodes, 20 cycles each
    python benchmarks/bench_gossip.py --nodes 100000 --cycles 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vitis import workload
from hedgerow.gossip import PeerSampling, TMan, jaccard_select, ring_select
from hedgerow.model import RngStreams
from hedgerow.protocols.vitis.kernels import vitis_select
from hedgerow.protocols.vitis.ring import harmonic_targets, node_ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--topics", type=int, default=5_000)
    ap.add_argument("--subs", type=int, default=50)
    ap.add_argument("--view", type=int, default=20, help="T-Man view size")
    ap.add_argument("--cache", type=int, default=20, help="Newscast cache size")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = args.nodes
    inst = workload("random", n, args.topics, args.subs, args.seed)
    streams = RngStreams(args.seed)
    ids = node_ids(n, args.seed)
    kind = np.full((n, args.view), -1, np.int8)
    selections = {
        "ring": ring_select(ids),
        "jaccard": jaccard_select(inst.masks),
        "vitis": vitis_select(ids, harmonic_targets(ids, 1, streams.stream("sw")), kind,
                              inst.sub_indptr, inst.sub_topics, np.ones(inst.n_topics),
                              streams.stream("ties")),
    }
    out = {"nodes": n, "view": args.view, "cache": args.cache, "cycles": args.cycles,
           "load_before": os.getloadavg()[0]}
    for name, sel in selections.items():
        rng = streams.stream(f"gossip:{name}")
        ps = PeerSampling(n, args.cache)
        ps.bootstrap(np.ones(n, bool), rng)
        tm = TMan(args.view, sel)
        view = tm.empty_view(n)
        ps.cycle(rng)
        tm.cycle(view, ps, rng)  # compile / warm up
        ns_cpu = ns_wall = tm_cpu = tm_wall = 0.0
        for _ in range(args.cycles):
            c0, w0 = time.process_time(), time.perf_counter()
            ps.cycle(rng)
            c1, w1 = time.process_time(), time.perf_counter()
            tm.cycle(view, ps, rng)
            c2, w2 = time.process_time(), time.perf_counter()
            ns_cpu += c1 - c0
            ns_wall += w1 - w0
            tm_cpu += c2 - c1
            tm_wall += w2 - w1
        k = args.cycles
        out[name] = {"newscast_cpu_s": ns_cpu / k, "newscast_wall_s": ns_wall / k,
                     "tman_cpu_s": tm_cpu / k, "tman_wall_s": tm_wall / k,
                     "batches": tm.batches_}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
