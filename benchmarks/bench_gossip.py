"""The gossip layer alone: Newscast and T-Man cycles at N nodes, CPU and wall seconds per cycle.

Three T-Man selections: T-Man's ring (``ring_select``), a Jaccard ranking over subscription bit
masks (``jaccard_select``, the setting of a PeerSim Newscast + T-Man comparison) and Vitis's
Algorithm 4 (ring, small-world, eq. (1) friends).  Workload: ``--subs`` random topics of
``--topics`` per node (S0: 50 of 5,000).  Newscast and T-Man caches as PeerSim's usual 20.

Usage::

    python benchmarks/bench_gossip.py                      # 10,000 nodes, 20 cycles each
    python benchmarks/bench_gossip.py --nodes 100000 --cycles 5

``--against SRC`` instead times this checkout's gossip layer beside another one's (``SRC`` is
that checkout's ``src`` directory, e.g. ``git archive main src | tar -x -C OLD`` then
``--against OLD/src``) in the PeerSim comparison's setting (T-Man's ring, view 20, Newscast
cache 20, a uniform partner): ``--reps`` runs of ``--cycles`` cycles from the same seed, the two
alternated, CPU seconds of Newscast and T-Man (minimum and median), and whether both end with the
same views, caches, stamps and generator state::

    python benchmarks/bench_gossip.py --against OLD/src --cycles 20 --reps 5

With ``--parallel`` a third side runs this checkout's T-Man with ``parallel=True`` (each batch's
exchanges on numba's threads, ``OMP_WAIT_POLICY=PASSIVE`` unless set); wall seconds are reported
beside CPU seconds.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vitis import workload
from hedgerow.gossip import PeerSampling, TMan, jaccard_select, ring_select
from hedgerow.model import RngStreams
from hedgerow.protocols.vitis.kernels import vitis_select
from hedgerow.protocols.vitis.ring import harmonic_targets, node_ids


def _gossip_from(src: Path, tmp: Path) -> tuple:
    """The ``sampling`` and ``tman`` modules of the checkout whose ``src`` is ``src``.

    Every module of that checkout's ``hedgerow/gossip`` (its private kernels too: the fused
    ring cycle, the T-Man kernels, the prefetch) is copied into ``tmp`` as a package of its
    own, ``gossip_against``, with its imports of ``hedgerow.gossip`` pointed there, so both
    sides run their own kernels; numba's on-disk cache is per file and records the module's
    name, so the copies compile afresh instead of reusing (or spoiling) the other
    checkout's cache."""
    orig = src / "hedgerow" / "gossip"
    if not (orig / "tman.py").is_file():
        sys.exit(f"--against {src}: no {orig / 'tman.py'}")
    pkg = tmp / "gossip_against"
    pkg.mkdir()
    for path in sorted(orig.glob("*.py")):
        text = path.read_text().replace("from hedgerow.gossip.", "from gossip_against.")
        if path.name == "__init__.py":
            text = ""  # the package's own names are not needed, and would import both sides
        (pkg / path.name).write_text(text)
    sys.path.insert(0, str(tmp))
    try:
        return (importlib.import_module("gossip_against.sampling"),
                importlib.import_module("gossip_against.tman"))
    finally:
        sys.path.remove(str(tmp))


def compare(args: argparse.Namespace) -> None:
    """This checkout's Newscast + T-Man ring beside ``--against``'s, alternated."""
    from hedgerow.gossip import sampling, tman

    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this": (sampling, tman, {}),
                 "against": (*_gossip_from(Path(args.against), Path(tmp)), {})}
        if args.parallel:
            # idle OpenMP threads sleep instead of spinning through the serial parts (read
            # when numba first starts its threads, which happens below)
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            sides["this_parallel"] = (sampling, tman, {"parallel": True})
        _compare(args, sides)


def _compare(args: argparse.Namespace, sides: dict) -> None:
    n = args.nodes

    def run(side: str, m: int, cycles: int) -> tuple:
        smod, tmod, kw = sides[side]
        rng = RngStreams(args.seed).stream("gossip")
        ps = smod.PeerSampling(m, args.cache)
        ps.bootstrap(np.ones(m, bool), rng)
        tm = tmod.TMan(args.view, tmod.ring_select(node_ids(m, args.seed)), **kw)
        view = tm.empty_view(m)
        ns = tt = nw = tw = 0.0
        for _ in range(cycles):
            c0, w0 = time.process_time(), time.perf_counter()
            ps.cycle(rng)
            c1, w1 = time.process_time(), time.perf_counter()
            tm.cycle(view, ps, rng)
            tt += time.process_time() - c1
            tw += time.perf_counter() - w1
            ns += c1 - c0
            nw += w1 - w0
        return (ns, tt, nw, tw), (view, ps.cache, ps.stamp, rng.random())

    for side in sides:
        run(side, 64, 2)  # compile / load the kernels
    times: dict[str, list] = {side: [] for side in sides}
    ends = {}
    load0 = os.getloadavg()[0]
    names = list(sides)
    for r in range(args.reps):
        for side in (names if r % 2 == 0 else names[::-1]):
            row, ends[side] = run(side, n, args.cycles)
            times[side].append(row)
    a = ends["against"]
    same = all(all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3], strict=True))
               and a[3] == b[3] for b in ends.values())
    out = {"nodes": n, "view": args.view, "cache": args.cache, "cycles": args.cycles,
           "reps": args.reps, "load_before": load0, "identical": bool(same)}
    for side, rows in times.items():
        out[side] = {f"{what}_s_{stat}": f([row[i] for row in rows])
                     for i, what in enumerate(("newscast_cpu", "tman_cpu", "newscast_wall",
                                               "tman_wall"))
                     for stat, f in (("min", min), ("median", statistics.median))}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--topics", type=int, default=5_000)
    ap.add_argument("--subs", type=int, default=50)
    ap.add_argument("--view", type=int, default=20, help="T-Man view size")
    ap.add_argument("--cache", type=int, default=20, help="Newscast cache size")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", default=None,
                    help="another checkout's src directory: time both gossip layers side by side")
    ap.add_argument("--reps", type=int, default=5, help="with --against: runs of each side")
    ap.add_argument("--parallel", action="store_true",
                    help="with --against: also time T-Man with parallel=True")
    args = ap.parse_args()
    if args.against:
        compare(args)
        return
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
