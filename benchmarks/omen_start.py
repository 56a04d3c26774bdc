"""OMen's whole start (initial LowODA build + warm-up gossip), this tree against another.

Each start runs in a fresh process: the churn scenario's workload and initial
population (default TW 10K x Google 10K), OMen with its defaults (as
``hedgerow churn omen`` runs it, seed 1), a small start first so the compiled
kernels are loaded before the clock starts, then ``engine.start(online0)``
timed in wall and CPU seconds, split into the initial LowODA build and the
rest (the warm-up gossip), with the 1-minute load average before and after
and the peak resident memory.  ``--baseline-src DIR`` runs the same start with
that source tree (``PYTHONPATH``), alternating with this one, and prints the
CPU and wall ratios and whether the two settled engines have the same state
digest (``OmenEngine.state_digest``: links, entries, backup loads, messages,
random streams).

Usage::

    python benchmarks/omen_start.py [--scenario tw10k-google] [--seed 1] [--cycles 100]
        [--repeat 1] [--baseline-src OLD/src] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np


def _digest(eng: Any) -> str:
    """``OmenEngine.state_digest``, for source trees that predate it (the same bytes)."""
    if hasattr(eng, "state_digest"):
        return eng.state_digest()
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(eng.edges(), dtype=np.int64).tobytes())
    for v, ent in enumerate(eng.entries):
        for u, e in ent.items():
            h.update(repr((v, u, e.backups.tolist(), e.neighbours.tolist(), bool(e.ready),
                           bool(e.dirty))).encode())
    h.update(np.ascontiguousarray(eng.backup_load, dtype=np.int64).tobytes())
    h.update(repr(sorted(eng.messages.items())).encode())
    h.update(repr((eng.cycles, eng.lost)).encode())
    for g in (eng.rng_gossip, eng.rng_backups, eng.rng_sampling, eng.rng_ties):
        h.update(repr(g.bit_generator.state).encode())
    h.update(np.ascontiguousarray(eng.sampling.cache).tobytes())
    return h.hexdigest()[:16]


def one(scenario: str, seed: int, cycles: int) -> dict:
    """One timed start in this process (the child's work)."""
    from hedgerow.engine import Simulator
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.omen import engine as omen_engine
    from hedgerow.scenarios.events import load_churn_scenario
    from hedgerow.workloads import make_instance

    small = make_instance(nodes=80, topics=12, subs="2:5", seed=0)
    proto = get_protocol("omen", warmup_cycles=3)
    proto.maintenance_engine(small, proto.streams(0), sim=Simulator()).start(
        np.ones(small.n_nodes, dtype=bool))
    inst, online0, _ = load_churn_scenario(scenario, seed=seed)
    proto = get_protocol("omen", warmup_cycles=cycles)
    eng = proto.maintenance_engine(inst, proto.streams(seed), sim=Simulator())
    build = {"wall": 0.0, "cpu": 0.0}
    augment = omen_engine.tco_augment

    def timed_augment(*args: Any, **kw: Any) -> np.ndarray:
        t0, c0 = time.perf_counter(), time.process_time()
        out = augment(*args, **kw)
        build["wall"] += time.perf_counter() - t0
        build["cpu"] += time.process_time() - c0
        return out

    omen_engine.tco_augment = timed_augment
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    eng.start(online0)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    views = eng.view_sizes()[eng.online]
    return {
        "scenario": scenario, "seed": seed, "nodes": inst.n_nodes,
        "online": int(online0.sum()), "cycles": cycles,
        "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "build_wall_s": round(build["wall"], 2), "build_cpu_s": round(build["cpu"], 2),
        "warmup_wall_s": round(wall - build["wall"], 2),
        "warmup_cpu_s": round(cpu - build["cpu"], 2),
        "mean_view": round(float(views.mean()), 2) if len(views) else 0.0,
        "digest": _digest(eng),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load1_before": round(load0, 2), "load1_after": round(os.getloadavg()[0], 2),
    }


def _child(src: str | None, scenario: str, seed: int, cycles: int) -> dict | None:
    """One start in a fresh process (``src``: another source tree on ``PYTHONPATH``)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    cmd = [sys.executable, __file__, "--child", f"{scenario}:{seed}:{cycles}"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        print(res.stderr.strip().splitlines()[-1], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def _line(row: dict, tag: str) -> None:
    print(f"{row['scenario']} seed={row['seed']} cycles={row['cycles']}: start "
          f"{row['wall_s']:.1f} s wall / {row['cpu_s']:.1f} s CPU (LowODA build "
          f"{row['build_wall_s']:.1f} / {row['build_cpu_s']:.1f}, warm-up "
          f"{row['warmup_wall_s']:.1f} / {row['warmup_cpu_s']:.1f}), mean view "
          f"{row['mean_view']}, peak {row['peak_rss_mib']:.0f} MiB, load "
          f"{row['load1_before']:.1f}-{row['load1_after']:.1f}, digest {row['digest']}{tag}",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="tw10k-google")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cycles", type=int, default=100, help="warm-up cycles (OMen's default)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--baseline-src", default=None,
                    help="also run every start with this source tree, alternating; prints "
                         "the ratios and whether the settled states agree")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        scenario, seed, cycles = a.child.split(":")
        print(json.dumps(one(scenario, int(seed), int(cycles))))
        return
    out = []
    for _ in range(a.repeat):
        base = _child(a.baseline_src, a.scenario, a.seed, a.cycles) if a.baseline_src else None
        row = _child(None, a.scenario, a.seed, a.cycles)
        if row is None:
            continue
        out.append(row)
        _line(row, "")
        if base is not None:
            out.append({**base, "baseline": True})
            _line(base, "  [baseline]")
            print(f"  baseline / this: CPU {base['cpu_s'] / max(row['cpu_s'], 1e-9):.2f}x, "
                  f"wall {base['wall_s'] / max(row['wall_s'], 1e-9):.2f}x, warm-up CPU "
                  f"{base['warmup_cpu_s'] / max(row['warmup_cpu_s'], 1e-9):.2f}x; same state: "
                  f"{base['digest'] == row['digest']}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
