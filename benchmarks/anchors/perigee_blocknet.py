"""Perigee-subset side by side with the blocknet Java simulator (PeerNet) on the Perigee matrix.

Setting (blocknet's shipped ``cfg/perigee_subset_scor.cfg`` in its header-only,
pure-latency mode): 1,000 nodes on the Perigee one-way latency matrix, 8 scored
+ 2 random outgoing links (the 2 weakest replaced every round), no incoming
limit, one block per cycle from a uniform miner, a calibration round every 99
blocks, header-only dissemination with 5 + 50 ms validation before forwarding,
``deltaQ`` transport (pure latency), no spot latency, 400 blocks.  Hedgerow
runs ``perigee`` with ``preset=blocknet`` on the ``perigee-matrix`` scenario
(4 epochs of 99 blocks, 55 ms node delay).

Metric: per round, the pooled t50 / t90 of every (block, node) delivery, which
is where blocknet's vertical average of uninformed nodes (``.times.avg``)
crosses ``N (1 - q)``.  blocknet stamps a delivery after the node's own
validation (its ``hookReceivedBody`` fires when forwarding); Hedgerow's
arrival is before it, so Hedgerow's values are shifted by the node delay
(exact: the miner's 0 is below every other delivery in both codes).

The anchor is found through ``HEDGEROW_ANCHOR_BLOCKNET``: a checkout of
``evangelos-kolyvas/blocknet`` compiled into ``out/production/blocknet``
(``javac -cp lib/peernet.jar:lib/jep-2.3.0.jar:lib/djep-1.0.0.jar -d
out/production/blocknet $(find src -name '*.java')``).  Usage::

    HEDGEROW_ANCHOR_BLOCKNET=/path/to/blocknet python benchmarks/anchors/perigee_blocknet.py
    ... --seeds 1-5 --blocks 400 --json out.json

Times: wall clock and CPU seconds of each run (the anchor's JVM process
included; Hedgerow after one warm-up run that compiles its numba kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world

ENV = "HEDGEROW_ANCHOR_BLOCKNET"
#: blocknet's node delay in this setting: header (5 ms) + body (50 ms) validation
VALIDATION_MS = 55.0
ROUND_BLOCKS = 99


def anchor_dir() -> Path:
    """The compiled blocknet checkout, or exit with a clear message."""
    where = os.environ.get(ENV)
    if not where:
        sys.exit(f"{ENV} is not set: point it at a compiled evangelos-kolyvas/blocknet checkout "
                 "(see this script's docstring); nothing was run")
    path = Path(where)
    if not (path / "out" / "production" / "blocknet").is_dir() or not (path / "lib").is_dir():
        sys.exit(f"{ENV}={where}: no compiled blocknet there (out/production/blocknet and lib/ "
                 "are needed); nothing was run")
    return path


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def round_percentiles(avg_file: Path, n_nodes: int) -> list[tuple[float, float]]:
    """Per round, (t50, t90) from blocknet's ``.times.avg`` (vertical average of uninformed)."""
    rounds: list[list[tuple[float, float]]] = []
    for line in avg_file.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            rounds.append([])
            continue
        t, u = line.split()
        rounds[-1].append((float(t), float(u)))
    out = []
    for pts in rounds:
        vals = []
        for q in (0.5, 0.9):
            hit = [t for t, u in pts if u <= n_nodes * (1 - q) + 1e-9]
            vals.append(hit[0] if hit else float("nan"))
        out.append((vals[0], vals[1]))
    return out


def run_blocknet(root: Path, seed: int, blocks: int, workdir: Path) -> dict[str, Any]:
    """One anchor run; returns wall/CPU seconds and the per-round (t50, t90)."""
    cp = ":".join(str(root / p) for p in ("out/production/blocknet", "lib/jep-2.3.0.jar",
                                           "lib/djep-1.0.0.jar", "lib/peernet.jar"))
    log = workdir / f"bn_s{seed}"
    cmd = [
        "java", "-Xmx4g", "-ea", "-cp", cp, "peernet.Simulator", "cfg/perigee_subset_scor.cfg",
        "init.latencies_matrix.file=latencies/perigee_latencies_weight1_oneway.dat",
        f"BLOCKS={blocks}", "protocol.diss.header_only=true", "protocol.diss.transport=deltaQ",
        "SPOT_LATENCY=0", f"random.seed={seed}", f"LOGFILE={log}",
    ]
    c0, t0 = _cpu_children(), time.perf_counter()
    subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
    return {"wall": wall, "cpu": cpu,
            "rounds": round_percentiles(Path(f"{log}.times.avg"), 1000)}


def run_hedgerow(seed: int, blocks: int) -> dict[str, Any]:
    """One Hedgerow run of the same setting."""
    epochs = max(blocks // ROUND_BLOCKS, 1)
    world = make_world("perigee-matrix", seed=seed, epochs=epochs, messages=ROUND_BLOCKS)
    proto = get_protocol("perigee", preset="blocknet")
    c0, t0 = time.process_time(), time.perf_counter()
    res = run_protocol(proto, world)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    shift = VALIDATION_MS
    return {"wall": wall, "cpu": cpu,
            "rounds": [(r["t50_ms"] + shift, r["t90_ms"] + shift) for r in res.rows]}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--blocks", type=int, default=400)
    ap.add_argument("--round", type=int, default=3, help="round whose t50/t90 are compared")
    ap.add_argument("--json", default=None, help="also write every number here")
    ap.add_argument("--anchor-json", default=None,
                    help="reuse the blocknet runs of an earlier --json file (same seeds and "
                    "blocks: the anchor's numbers do not depend on Hedgerow's code)")
    args = ap.parse_args(argv)
    seeds = _seeds(args.seeds)
    earlier: dict[int, Any] = {}
    if args.anchor_json:
        earlier = {row["seed"]: row["blocknet"]
                   for row in json.loads(Path(args.anchor_json).read_text())}
        missing = [s for s in seeds if s not in earlier]
        if missing:
            sys.exit(f"{args.anchor_json}: no blocknet run for seeds {missing}")
    else:
        root = anchor_dir()
    run_hedgerow(seeds[0], ROUND_BLOCKS)  # warm-up: numba compiles (or loads) its kernels
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in seeds:
            bn = earlier[s] if earlier else run_blocknet(root, s, args.blocks, Path(tmp))
            hr = run_hedgerow(s, args.blocks)
            rows.append({"seed": s, "blocknet": bn, "hedgerow": hr})
            r = args.round
            print(f"seed {s}: blocknet {bn['wall']:.1f} s wall / {bn['cpu']:.1f} s CPU, "
                  f"hedgerow {hr['wall']:.2f} s / {hr['cpu']:.2f} s; round {r} t50/t90 "
                  f"{bn['rounds'][r]} vs {hr['rounds'][r]}", flush=True)
    r = args.round

    def mean(code: str, key: str) -> float:
        return float(np.mean([row[code][key] for row in rows]))

    def tq(code: str, i: int) -> float:
        return float(np.mean([row[code]["rounds"][r][i] for row in rows]))

    print()
    print("| | blocknet | Hedgerow | ratio |")
    print("|---|---|---|---|")
    for key, label in (("wall", f"wall s per run (mean of {len(rows)})"), ("cpu", "CPU s per run")):
        a, b = mean("blocknet", key), mean("hedgerow", key)
        print(f"| {label} | {a:.1f} | {b:.2f} | {a / b:.0f}x |")
    for i, name in enumerate(("t50", "t90")):
        a, b = tq("blocknet", i), tq("hedgerow", i)
        print(f"| round {r} {name} ms (mean) | {a:.1f} | {b:.1f} | {b / a:.3f} |")
    n_rounds = min(len(row["blocknet"]["rounds"]) for row in rows)
    for k in range(min(n_rounds, len(rows[0]["hedgerow"]["rounds"]))):
        bn = [np.mean([row["blocknet"]["rounds"][k][i] for row in rows]) for i in (0, 1)]
        hr = [np.mean([row["hedgerow"]["rounds"][k][i] for row in rows]) for i in (0, 1)]
        print(f"| round {k} t50 / t90 | {bn[0]:.1f} / {bn[1]:.1f} | {hr[0]:.1f} / {hr[1]:.1f} | |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
