"""Vitis and RVR under churn (IPDPS 2011 section IV-F, Fig. 12): hit ratio, overhead, delay.

The paper replays 4,000 Skype superpeers (RT 15, uniform rates) and reports, under a flash
crowd, RVR's hit ratio falling to 87% and Vitis's worst case near 99%, measuring each node's
hit ratio from 10 s after it joins.  We have no Skype trace: the controls are

* ``--control flash``: 2,000 nodes online, 2,000 more join within 5 cycles after ``--at``
  cycles, then on/off churn (Exp(λ) online, Exp(λ/4) offline; ``--lifetime`` λ in cycles);
* ``--control trace --trace DIR``: a replayed join/leave trace (``hedgerow ingest churn``,
  e.g. the Google 2011 machine events) at ``--speedup`` trace seconds per cycle.

Workload: Vitis IV-A's correlated subscriptions (``--correlation``, 5,000 topics, 50 per
node).  One row per sample (every ``--every`` cycles): online, measured (joined >= 10 cycles
ago), ring correctness, hit ratio, overhead, delay.

Usage::

    python benchmarks/bench_vitis_churn.py                              # flash crowd, both
    python benchmarks/bench_vitis_churn.py --protocols rvr --cycles 160 --json out.json
    python benchmarks/bench_vitis_churn.py --control trace --trace results/google4000
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hedgerow.model.rng import RngStreams
from hedgerow.scenarios.churn import flash_crowd
from hedgerow.scenarios.gossip_churn import run_gossip_churn
from hedgerow.scenarios.traces import load_events, trace_churn
from hedgerow.workloads.correlated import correlated_instance

PAPER_WORST = {"vitis": 0.99, "rvr": 0.87}


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default="vitis,rvr")
    ap.add_argument("--control", choices=("flash", "trace"), default="flash")
    ap.add_argument("--trace", default=None, help="hedgerow ingest churn output folder")
    ap.add_argument("--speedup", type=float, default=60.0)
    ap.add_argument("--nodes", type=int, default=4000)
    ap.add_argument("--correlation", default="high")
    ap.add_argument("--cycles", type=int, default=160)
    ap.add_argument("--at", type=float, default=100.0)
    ap.add_argument("--lifetime", type=float, default=600.0)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--rt", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    inst = correlated_instance(args.nodes, correlation=args.correlation, seed=args.seed)
    if args.control == "flash":
        online0, events = flash_crowd(args.nodes, args.lifetime, float(args.cycles),
                                      RngStreams(args.seed).stream("churn"), at=args.at)
    else:
        if not args.trace:
            raise SystemExit("--control trace needs --trace DIR (hedgerow ingest churn output)")
        online0, events = trace_churn(load_events(args.trace), args.nodes,
                                      speedup=args.speedup, duration=float(args.cycles))
    out = {}
    for name in [p for p in args.protocols.split(",") if p]:
        t0 = time.perf_counter()
        c0 = time.process_time()
        rows = run_gossip_churn(name, inst, online0, events, duration=args.cycles,
                                sample_every=args.every, seed=args.seed,
                                params={"rt": args.rt, "cycles": 1} if name == "vitis"
                                else {"rt": args.rt})
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        hits = [r["hit_ratio"] for r in rows if r["hit_ratio"] is not None]
        after = [r["hit_ratio"] for r in rows if r["cycle"] > args.at and r["hit_ratio"]]
        print(f"{name}: {args.control}, {args.nodes} nodes, RT {args.rt}, {args.cycles} cycles "
              f"({wall:.0f} s wall, {cpu:.0f} s cpu)")
        for r in rows:
            print(f"  cycle {r['cycle']:4d} online {r['online']:5d} measured {r['measured']:5d} "
                  f"ring {_f(r['ring_correct'])} hit {_f(r['hit_ratio'])} "
                  f"overhead {_f(r['overhead'])} delay {_f(r['delay_hops'])}")
        print(f"  worst hit ratio {min(hits):.4f} (after the crowd {min(after or [np.nan]):.4f});"
              f" paper: {PAPER_WORST.get(name)}")
        out[name] = rows
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
