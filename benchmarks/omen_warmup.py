"""OMen's start: the warm-up gossip, batched (compiled) against the per-node loop, side by side.

Loads a churn scenario (default FB 1K x Google 1K), builds the initial LowODA
overlay once (ρ = 2, timed), then starts OMen on that overlay twice: with the
batched cycle (``batched_gossip=True``, the default) and with the per-node
Python loop (the reference), in one process, same seed.  Reports each start's
wall time (state the load: ``uptime``) and checks that both leave identical
views, backup loads and generator states.  The first batched start may include
numba compilation (cached afterwards); ``--repeat 2`` shows the cached time.

Usage: ``python benchmarks/omen_warmup.py [--scenario fb1k-google] [--seed 1]
[--cycles 100] [--repeat 1] [--no-reference]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from hedgerow.engine import Simulator
from hedgerow.model.rng import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.omen.engine import OmenEngine
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.scenarios.events import load_churn_scenario


def _start(inst, online0, edges, seed, cycles, batched):
    proto = get_protocol("omen", rho=2.0, warmup_cycles=cycles)
    values = proto._validate(inst)
    streams = RngStreams(seed).child("protocol:omen")
    eng = OmenEngine(inst, streams, Simulator(), **proto._engine_kwargs(values),
                     initial=lambda masks, nodes: edges, batched_gossip=batched)
    t0 = time.perf_counter()
    c0 = time.process_time()
    eng.start(online0)
    return eng, time.perf_counter() - t0, time.process_time() - c0


def _same(a, b) -> bool:
    if (a.messages != b.messages or not (a.backup_load == b.backup_load).all()
            or a.rng_gossip.bit_generator.state != b.rng_gossip.bit_generator.state
            or a.rng_backups.bit_generator.state != b.rng_backups.bit_generator.state):
        return False
    for ea, eb in zip(a.entries, b.entries, strict=True):
        if list(ea) != list(eb):
            return False
        for u, e in ea.items():
            f = eb[u]
            if (e.backups.tolist() != f.backups.tolist() or e.ready != f.ready
                    or e.neighbours.tolist() != f.neighbours.tolist()):
                return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="fb1k-google")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-reference", action="store_true")
    a = ap.parse_args()
    inst, online0, _ = load_churn_scenario(a.scenario, seed=a.seed)
    print(f"{a.scenario}: {inst.n_nodes} nodes, {int(online0.sum())} online, "
          f"{inst.n_topics} topics; load {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    edges = tco_augment(inst.masks, np.flatnonzero(online0), np.zeros((0, 2), np.int64),
                        rule="lowoda", rho=2.0, rng=np.random.default_rng(a.seed))
    print(f"initial LowODA build: {time.perf_counter() - t0:.1f} s wall ({len(edges)} links)")
    fast = None
    for r in range(a.repeat):
        fast, wall, cpu = _start(inst, online0, edges, a.seed, a.cycles, True)
        views = fast.view_sizes()[fast.online]
        print(f"batched start #{r + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"(mean view {views.mean():.1f}, load {os.getloadavg()[0]:.1f})")
    if not a.no_reference:
        ref, wall_r, cpu_r = _start(inst, online0, edges, a.seed, a.cycles, False)
        print(f"per-node start: {wall_r:.2f} s wall, {cpu_r:.2f} s CPU "
              f"(load {os.getloadavg()[0]:.1f})")
        print(f"per-node / batched CPU: {cpu_r / cpu:.1f}x; identical state: {_same(fast, ref)}")


if __name__ == "__main__":
    main()
