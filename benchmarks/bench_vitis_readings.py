"""Vitis's ambiguous readings (A1-A6, relay forwarding, sampler, k): one run per switch.

Each run is bench_vitis's setting with one parameter changed from the defaults; the table
gives ring correctness (and the cycle reaching 99%), hit ratio, node-based overhead, delay in
hops, mean lookup hops, gateways, clusters and build seconds, so docs/vitis.md can state the
measured effect of every switch.

Usage::

    python benchmarks/bench_vitis_readings.py --nodes 2000 --workload random
    python benchmarks/bench_vitis_readings.py --nodes 10000 --workload high --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vitis import measure, workload
from hedgerow.protocols import get_protocol

SWITCHES = [
    {},
    {"include_self": False},
    {"sw_direction": "clockwise"},
    {"lookup_links": "rt"},
    {"sw_direction": "clockwise", "lookup_links": "rt"},
    {"hop_limit": "text"},
    {"loop_rule": "printed"},
    {"relay_links": "paths"},
    {"sampler": "uniform"},
    {"sampler": "cyclon"},
    {"k": 9},
    {"partner": "uniform"},
    {"psi": 2},
    {"psi": 8},
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--topics", type=int, default=5000)
    ap.add_argument("--subs", type=int, default=50)
    ap.add_argument("--workload", choices=("random", "low", "high"), default="random")
    ap.add_argument("--rt", type=int, default=15)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="append one JSON line per run here")
    ap.add_argument("--only", help="comma-separated row numbers of SWITCHES to run (0 = defaults)")
    args = ap.parse_args()
    inst = workload(args.workload, args.nodes, args.topics, args.subs, args.seed)
    keys = ("ring_correct", "ring_99_cycle", "hit_ratio", "overhead", "delay_hops",
            "lookup_hops_mean", "gateways", "clusters", "seconds")
    print("switch | " + " | ".join(keys))
    rows = (SWITCHES if args.only is None
            else [SWITCHES[int(i)] for i in args.only.split(",")])
    for sw in rows:
        t = time.perf_counter()
        proto = get_protocol("vitis", rt=args.rt, cycles=args.cycles, **sw)
        proto.build(inst, seed=args.seed)
        row = {**{k: v for k, v in proto.stats_.items() if not k.endswith("curve")},
               **measure(inst, proto, args.seed), "seconds": time.perf_counter() - t,
               "switch": sw or "defaults", "workload": args.workload, "nodes": args.nodes,
               "rt": args.rt, "cycles": args.cycles, "load": os.getloadavg()[0]}
        cells = [f"{row[k]:.4g}" if isinstance(row[k], float) else str(row[k]) for k in keys]
        print(f"{sw or 'defaults'} | " + " | ".join(cells), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row, default=float) + "\n")


if __name__ == "__main__":
    main()
