"""Perigee as the Goldfish baseline: its Table II columns, ours beside the paper's.

Runs ``perigee`` with ``preset=goldfish`` on ``goldfish-random`` / ``goldfish-real``
(100 nodes, 100 epochs of 40 messages, 20 ms node delay) for the given rows and
seeds, and prints the wasted latency at 90 % of publishing probability at the
final epoch (25th / 50th / 75th percentile and mean over the adaptive nodes,
each averaged over the seeds, as the authors' extraction script does) beside
the paper's values.  Usage::

    python benchmarks/bench_perigee_goldfish.py                 # 4 rows x 10 seeds
    python benchmarks/bench_perigee_goldfish.py --seeds 3 --rows random-exp-32
    python benchmarks/bench_perigee_goldfish.py --exact         # integer grid with ceil
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world

#: row -> (scenario, publishers, adaptive, paper's Perigee 25th, 50th, 75th, mean)
ROWS = {
    "random-exp-10": ("goldfish-random", "exp:100", 10, (262, 319, 370, 323)),
    "random-exp-32": ("goldfish-random", "exp:100", 32, (237, 296, 356, 306)),
    "random-exp-64": ("goldfish-random", "exp:100", 64, (188, 227, 270, 235)),
    "random-exp-100": ("goldfish-random", "exp:100", 100, (151, 173, 201, 178)),
    "random-unif32-32": ("goldfish-random", "unif:32", 32, (255, 293, 330, 298)),
    "real-exp-32": ("goldfish-real", "exp:100", 32, (128, 152, 193, 165)),
    "real-exp-100": ("goldfish-real", "exp:100", 100, (98, 111, 130, 120)),
}
KEYS = ("wasted_latency_p25_ms", "wasted_latency_p50_ms", "wasted_latency_p75_ms",
        "wasted_latency_mean_ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rows", default="random-exp-32,random-exp-100,real-exp-32,real-exp-100")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--exact", action="store_true",
                    help="the authors' inputs: integer grid with ceil on the plane")
    args = ap.parse_args(argv)
    print("| row | ours 25th / 50th / 75th / mean (ms) | paper | ratio of means | s per run |")
    print("|---|---|---|---|---|")
    for name in args.rows.split(","):
        scenario, pubs, adaptive, paper = ROWS[name]
        extra = {}
        if args.exact and scenario == "goldfish-random":
            extra["latency_kw"] = {"grid": 500, "ceil": True}
        vals, secs = [], []
        for seed in range(15, 15 + args.seeds):
            w = make_world(scenario, seed=seed, publishers=pubs, adaptive=adaptive,
                           epochs=args.epochs, **extra)
            t0 = time.perf_counter()
            last = run_protocol(get_protocol("perigee", preset="goldfish"), w).rows[-1]
            secs.append(time.perf_counter() - t0)
            vals.append([last[k] for k in KEYS])
        ours = np.mean(vals, axis=0)
        print(f"| {name} | {' / '.join(f'{x:.0f}' for x in ours)} | "
              f"{' / '.join(str(x) for x in paper)} | {ours[3] / paper[3]:.3f} | "
              f"{np.median(secs):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
