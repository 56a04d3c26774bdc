"""Build times and degrees of GM / MinMaxODA / LowODA(ρ) on the OMen workloads.

Targets (issue): FB 1K ≤ 1 s for GM/LowODA; OMen's synthetic 2K ≤ 2 s for any ρ; the GenODA
setting (1,000 nodes, 100 topics, Zipf; Java GenODA 3.823 s in 2012) ≤ 0.5 s; Twitter-like 10K
≤ 30 s for GM and ρ ≤ 2, ≤ 120 s for any ρ, peak memory ≤ 2 GiB.  Each build runs in a fresh
process after a warm-up build (so JIT compilation is excluded, and peak RSS is the build's);
wall and CPU seconds are both printed (the CPU time is the one to compare on a loaded machine).
Also prints the ρ trade-off table (means over the seeds; ``tco_rho_trend.py`` reports the
maximum degree's trend seed by seed).

Usage::

    python benchmarks/tco_build.py                          # every setting, seed 1
    python benchmarks/tco_build.py --settings fb1k,syn2k-unif --seeds 1,2,3 --rhos 1,2,4,sqrt
    python benchmarks/tco_build.py --json out.json
    # before/after in one run: the same builds with another checkout's sources, edge digests
    git archive main src | tar -x -C /tmp/tco-base
    python benchmarks/tco_build.py --settings tw10k --rhos 2 --baseline-src /tmp/tco-base/src
    # a head-to-head world at any size: WORLD@NODES (the world of `hedgerow run -s WORLD`)
    python benchmarks/tco_build.py --settings unit-square@30000 --rules gm,lowoda --rhos 2

The social settings read the inputs of the churn scenarios (prepare them once with
``hedgerow churn lowoda-inc --scenario fb1k-google --events 1`` or ``hedgerow ingest``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import subprocess
import sys
import time

SETTINGS = ("fb1k", "syn2k-unif", "syn2k-zipf", "syn2k-expo", "genoda", "fb4k", "tw1k", "tw10k")


def instance(setting: str, seed: int):
    if "@" in setting:  # WORLD@NODES: a named world's workload at that size
        from hedgerow.scenarios.world import make_world

        world, nodes = setting.split("@")
        return make_world(world, seed=seed, nodes=int(nodes)).instance
    from hedgerow.scenarios.inputs import prepared_folder
    from hedgerow.workloads import make_instance
    from hedgerow.workloads.powerlaw import powerlaw_instance
    from hedgerow.workloads.social import load_instance

    if setting.startswith("syn2k-"):
        pop = {"unif": "uniform", "zipf": "zipf2", "expo": "nyse"}[setting[6:]]
        return powerlaw_instance(popularity=pop, seed=seed)
    if setting == "genoda":
        return make_instance(nodes=1000, topics=100, subs="10:40", popularity="zipf1", seed=seed)
    return load_instance(prepared_folder(setting))


def one(setting: str, rule: str, rho: float, seed: int) -> dict:
    """One build in this process: a warm-up on a tiny instance, then the timed build."""
    import numpy as np

    from hedgerow.model import RngStreams
    from hedgerow.protocols.tco.engine import tco_augment
    from hedgerow.workloads import make_instance

    small = make_instance(nodes=50, topics=10, subs=3, seed=0)
    for r in ("gm", "lowoda", "minmaxoda"):
        for rr in (1.0, 2.0):
            tco_augment(small.masks, None, np.zeros((0, 2), np.int64), rule=r, rho=rr,
                        rng=np.random.default_rng(0))
    inst = instance(setting, seed)
    stats: dict = {}
    t0 = time.perf_counter()
    c0 = time.process_time()
    e = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule=rule, rho=rho,
                    rng=RngStreams(seed).child("protocol:tco").stream("ties"), stats=stats)
    sec = time.perf_counter() - t0
    cpu = time.process_time() - c0
    deg = np.bincount(e.ravel(), minlength=inst.n_nodes)
    return {
        "setting": setting, "rule": rule, "rho": rho, "seed": seed, "nodes": inst.n_nodes,
        "topics": inst.n_topics, "seconds": round(sec, 3), "cpu_seconds": round(cpu, 3),
        "edges": len(e), "edges_sha1": hashlib.sha1(e.tobytes()).hexdigest()[:12],
        "max_degree": int(deg.max()), "avg_degree": round(float(deg.mean()), 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load1": round(os.getloadavg()[0], 2),
        **stats,
    }


def _child(src: str | None, setting: str, rule: str, rho: float, seed: int) -> dict | None:
    """One build in a fresh process (``src``: another source tree on PYTHONPATH)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    cmd = [sys.executable, __file__, "--child", f"{setting}:{rule}:{rho}:{seed}"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        print(res.stderr.strip().splitlines()[-1], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def _line(row: dict, tag: str) -> None:
    print(f"{row['setting']:17s} {row['rule']:9s} rho={row['rho']:7.3f} seed={row['seed']} "
          f"{row['seconds']:8.3f} s (cpu {row.get('cpu_seconds', 0):7.3f} s)"
          f"  edges {row['edges']:7d}  max {row['max_degree']:5d}"
          f"  avg {row['avg_degree']:6.2f}  peak {row['peak_rss_mib']:7.1f} MiB"
          f"  load {row.get('load1', 0):5.2f}  sha {row.get('edges_sha1', '-')}"
          f"  scans {row.get('scans', 0)}{tag}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--rhos", default="1,2,4,sqrt", help="LowODA ρ values; 'sqrt' = √n")
    ap.add_argument("--rules", default="gm,minmaxoda,lowoda", help="rules to run")
    ap.add_argument("--json", default=None)
    ap.add_argument("--baseline-src", default=None,
                    help="also run every build with this source tree (PYTHONPATH), interleaved; "
                         "prints the time ratio and whether the edge sequences agree")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        setting, rule, rho, seed = a.child.split(":")
        print(json.dumps(one(setting, rule, float(rho), int(seed))))
        return
    out = []
    for setting in a.settings.split(","):
        n = {"fb1k": 1000, "fb4k": 4039, "tw1k": 1000, "tw10k": 10000}.get(setting, 2000)
        if "@" in setting:
            n = int(setting.split("@")[1])
        if setting == "genoda":
            n = 1000
        rules = a.rules.split(",")
        runs = [(r, 1.0) for r in ("gm", "minmaxoda") if r in rules]
        if "lowoda" in rules:
            for r in a.rhos.split(","):
                runs.append(("lowoda", math.sqrt(n) if r == "sqrt" else float(r)))
        for seed in [int(s) for s in a.seeds.split(",")]:
            for rule, rho in runs:
                base = _child(a.baseline_src, setting, rule, rho, seed) if a.baseline_src else None
                row = _child(None, setting, rule, rho, seed)
                if row is None:
                    continue
                out.append(row)
                _line(row, "")
                if base is not None:
                    base["baseline"] = True
                    out.append(base)
                    _line(base, "  [baseline]")
                    cpu_ratio = base["cpu_seconds"] / max(row["cpu_seconds"], 1e-9)
                    print(f"{'':17s} ratio cpu {cpu_ratio:.2f}x"
                          f"  wall {base['seconds'] / max(row['seconds'], 1e-9):.2f}x"
                          f"  same edges: {base['edges_sha1'] == row['edges_sha1']}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
