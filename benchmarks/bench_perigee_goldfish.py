"""Perigee as the Goldfish baseline: its Table II column, ours beside the paper's.

Runs ``perigee`` with ``preset=goldfish`` on ``goldfish-random`` / ``goldfish-real``
(100 nodes, 100 epochs of 40 messages, 20 ms node delay) for the given rows and
seeds, and prints the wasted latency at 90 % of publishing probability at the
final epoch (25th / 50th / 75th percentile and mean over the adaptive nodes,
each averaged over the seeds, as the authors' extraction script does) beside
the paper's Perigee values and, for the ratio, Goldfish's mean of the same
seeds measured by ``hedgerow sweep experiments/goldfish-table2.yaml``
(``docs/goldfish.md``).  ``--silent`` chooses how a block that no member of a
candidate subset delivered is scored (``skip``: the preset's default, the
authors' selector; ``inf``: the +inf sentinel with the ``round`` index, the
preset before ``silent`` existed); ``--plane grid`` places the random rows'
nodes on the authors' integer grid with delays rounded up to whole ms.
``--protocol goldfish`` runs Goldfish instead on the same worlds (its ratio
column then reads ours / the sweep's Goldfish), e.g. to pair both protocols on
the grid plane.  ``--out`` keeps one JSON line per run and skips the runs
already in it.
Usage::

    python benchmarks/bench_perigee_goldfish.py                       # 14 rows x 10 seeds, skip
    python benchmarks/bench_perigee_goldfish.py --silent inf --out inf.jsonl
    python benchmarks/bench_perigee_goldfish.py --plane grid --rows random
    python benchmarks/bench_perigee_goldfish.py --plane grid --rows random --protocol goldfish
    python benchmarks/bench_perigee_goldfish.py --seeds 3 --rows "random exp:100@32"
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from hedgerow.experiment.reference import get_reference
from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world

KEYS = ("wasted_latency_p25_ms", "wasted_latency_p50_ms", "wasted_latency_p75_ms",
        "wasted_latency_mean_ms")
#: Goldfish's mean wasted latency (ms) per row, seeds 1-10, from the Table II sweep
#: (docs/goldfish.md, "Table II, all 14 rows"); the ratio's numerator
GOLDFISH_SWEEP = {
    "random exp:100@10": 293.4, "random exp:100@32": 234.7, "random exp:100@64": 185.5,
    "random exp:100@100": 160.2, "random unif:32@10": 292.0, "random unif:32@32": 237.1,
    "random unif:32@64": 198.3, "random unif:64@10": 323.5, "random unif:64@32": 280.5,
    "random unif:64@64": 230.7, "real exp:100@10": 148.3, "real exp:100@32": 128.2,
    "real exp:100@64": 111.7, "real exp:100@100": 100.4,
}
ROWS = tuple(GOLDFISH_SWEEP)


def _paper(row: str, protocol: str = "perigee") -> tuple[float, ...]:
    label, adaptive = row.split("@")
    values = get_reference("goldfish-table2").values
    return tuple(values[k][f"{protocol} {label}"][int(adaptive)] for k in KEYS)


def _run(row: str, seed: int, silent: str, plane: str, epochs: int, protocol: str) -> dict:
    label, adaptive = row.split("@")
    topo, pubs = label.split()
    scenario = f"goldfish-{topo}"
    kw = {"plane": plane} if plane != "continuous" else {}
    w = make_world(scenario, seed=seed, publishers=pubs, adaptive=int(adaptive), epochs=epochs,
                   **kw)
    params: dict = {}
    if protocol == "perigee":
        params = {"preset": "goldfish", "silent": silent}
        if silent == "inf":
            params["quantile_index"] = "round"  # the preset's index before silent existed
    t0 = time.process_time()
    last = run_protocol(get_protocol(protocol, **params), w).rows[-1]
    return {"row": row, "seed": seed, "protocol": protocol, "silent": silent, "plane": plane,
            "epochs": epochs, "cpu_s": time.process_time() - t0, **{k: last[k] for k in KEYS}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (the sweep's)")
    ap.add_argument("--rows", default="all",
                    help="'all', 'random', 'real' or comma-separated rows such as "
                         "'random exp:100@32'")
    ap.add_argument("--silent", choices=("skip", "inf"), default="skip")
    ap.add_argument("--plane", choices=("continuous", "grid"), default="continuous")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--protocol", choices=("perigee", "goldfish"), default="perigee")
    ap.add_argument("--out", type=Path, help="JSON lines, one per run; runs in it are reused")
    args = ap.parse_args(argv)
    if args.rows in ("all", "random", "real"):
        rows = [r for r in ROWS if args.rows == "all" or r.startswith(args.rows)]
    else:
        rows = [r.strip() for r in args.rows.split(",")]
    if args.plane == "grid":
        rows = [r for r in rows if r.startswith("random")]  # the city network has no plane
    done: dict[tuple, dict] = {}
    if args.out and args.out.exists():
        for line in args.out.read_text().splitlines():
            rec = json.loads(line)
            done[(rec["row"], rec["seed"], rec.get("protocol", "perigee"), rec["silent"],
                  rec["plane"], rec["epochs"])] = rec
    print(f"{args.protocol} silent={args.silent} plane={args.plane}, seeds 1-{args.seeds}, "
          f"last of {args.epochs} epochs")
    print(f"| row | seeds | {args.protocol} 25th / 50th / 75th / mean (ms) | paper | ours / paper "
          "(mean) | Goldfish (sweep) / ours | CPU s per run |")
    print("|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"random": [], "real": []}
    for row in rows:
        recs = []
        for seed in range(1, args.seeds + 1):
            key = (row, seed, args.protocol, args.silent, args.plane, args.epochs)
            if key not in done:
                done[key] = _run(row, seed, args.silent, args.plane, args.epochs, args.protocol)
                if args.out:
                    with args.out.open("a") as fh:
                        fh.write(json.dumps(done[key]) + "\n")
            recs.append(done[key])
        ours = np.mean([[r[k] for k in KEYS] for r in recs], axis=0)
        paper = _paper(row, args.protocol)
        ratio = GOLDFISH_SWEEP[row] / ours[3]
        ratios[row.split()[0]].append(ratio)
        print(f"| {row} | {len(recs)} | {' / '.join(f'{x:.1f}' for x in ours)} | "
              f"{' / '.join(f'{x:.0f}' for x in paper)} | {ours[3] / paper[3]:.3f} | "
              f"{ratio:.3f} | {np.median([r['cpu_s'] for r in recs]):.1f} |", flush=True)
    for kind, rs in ratios.items():
        if rs and args.protocol == "perigee":
            print(f"{kind}: {len(rs)} rows, Goldfish below Perigee in {sum(r < 1 for r in rs)}, "
                  f"mean Goldfish/Perigee ratio {np.mean(rs):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
