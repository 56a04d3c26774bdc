"""Topiary's two explorations side by side: CPU seconds per epoch and per selection, peak memory.

Runs ``topiary`` on a ``unit-square`` world (or ``--scenario``; 100 topics at 20 % interest,
1,000 messages per epoch, TTL 1) of ``--nodes`` nodes for ``--epochs`` epochs, once per
``--exploration`` value, each in a fresh process (so the peak resident memory is that run's),
and prints one line per run: CPU seconds of the whole run (world included), per epoch, of the
selections alone (the end of each epoch: scores and exploration), the peak resident memory,
and the last epoch's receive rate, mean delay and degree.  The first process also runs a
200-node world so compilation stays out of the times.  ``docs/performance.md`` ("Topiary")
has the numbers.

Usage::

    python benchmarks/bench_topiary_explore.py --nodes 10000 --epochs 3
    python benchmarks/bench_topiary_explore.py --nodes 30000 --epochs 2 --exploration topics
    python benchmarks/bench_topiary_explore.py --nodes 100000 --epochs 2 --exploration topics \\
        --json rows.jsonl
    python benchmarks/bench_topiary_explore.py --nodes 1000 --epochs 30 --seeds 1 2 3 4
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_run(nodes: int, epochs: int, exploration: str, seed: int,
            scenario: str = "unit-square") -> dict:
    """One run in this process; the row of the table."""
    import numpy as np

    from hedgerow.model.outlinks import closure_csr
    from hedgerow.protocols.topiary import Topiary
    from hedgerow.scenarios.epochs import run_protocol
    from hedgerow.scenarios.world import make_world
    from hedgerow.scenarios.world.catalogue import protocol_params

    warm = make_world(scenario, seed=seed, nodes=200, epochs=2, messages=50)
    run_protocol(Topiary(exploration=exploration), warm)
    selections: list[float] = []
    select = Topiary.select

    def timed(self, *args, **kw):
        t = _cpu()
        try:
            return select(self, *args, **kw)
        finally:
            selections.append(_cpu() - t)

    Topiary.select = timed  # type: ignore[method-assign]
    t0, w0 = _cpu(), time.perf_counter()
    world = make_world(scenario, seed=seed, nodes=nodes, epochs=epochs)
    t_world = _cpu() - t0
    marks: list[float] = []
    # the world's bound values (d: 5 on the cities, 6 on the unit square), as a spec's run has
    proto = Topiary(**protocol_params(world.scenario, "topiary", {"exploration": exploration}))
    res = run_protocol(proto, world, keep_outs=True, on_epoch=lambda row: marks.append(_cpu()))
    total = _cpu() - t0
    per_epoch = [b - a for a, b in zip([t0 + t_world, *marks[:-1]], marks, strict=True)]
    last = res.rows[-1]
    return {
        "scenario": scenario, "nodes": nodes, "epochs": epochs, "exploration": exploration,
        "seed": seed,
        "cpu_s": round(total, 1), "world_cpu_s": round(t_world, 1),
        "epoch_cpu_s": [round(x, 1) for x in per_epoch],
        "select_cpu_s": [round(x, 1) for x in selections],
        "wall_s": round(time.perf_counter() - w0, 1),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "receive_rate": round(float(last["receive_rate"]), 4),
        "delay_mean_ms": round(float(last["delay_mean_ms"]), 1),
        # distinct neighbours, links in either direction (the head-to-head's degree)
        "avg_degree": round(float(np.diff(closure_csr(res.outs[-1] if res.outs else
                                                      proto.out_, nodes)[0]).mean()), 2),
        "rows": [{k: row[k] for k in ("epoch", "receive_rate", "delay_mean_ms") if k in row}
                 for row in res.rows],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, nargs="+",
                    help="several seeds, one run each; prints the mean of the last 5 epochs")
    ap.add_argument("--scenario", default="unit-square",
                    help="a sized world (the 100K head-to-head's: unit-square, cities-placed, "
                         "rss-unit-square)")
    ap.add_argument("--exploration", nargs="+", default=["table", "topics"],
                    choices=["table", "topics"])
    ap.add_argument("--json", help="append one JSON line per run to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(one_run(a.nodes, a.epochs, a.exploration[0], a.seed, a.scenario)))
        return
    seeds = a.seeds or [a.seed]
    settled: dict[str, list[tuple[float, float]]] = {}
    for how in a.exploration:
        for seed in seeds:
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--nodes", str(a.nodes), "--epochs",
                 str(a.epochs), "--seed", str(seed), "--exploration", how,
                 "--scenario", a.scenario],
                check=True, capture_output=True, text=True,
            ).stdout.strip().splitlines()[-1]
            row = json.loads(out)
            print(f"{a.scenario} {how:7s} {a.nodes:>7,} nodes, {a.epochs} epochs, seed {seed}: "
                  f"{row['cpu_s']} CPU s (world {row['world_cpu_s']}; epochs "
                  f"{row['epoch_cpu_s']}; selections {row['select_cpu_s']}), {row['wall_s']} s "
                  f"wall, peak {row['peak_mib']} MiB, receive {row['receive_rate']}, delay "
                  f"{row['delay_mean_ms']} ms, degree {row['avg_degree']}", flush=True)
            tail = row["rows"][-5:]
            settled.setdefault(how, []).append(
                (statistics.mean(r["delay_mean_ms"] for r in tail),
                 statistics.mean(r["receive_rate"] for r in tail)))
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
    if len(seeds) > 1:  # the law shows in the results: mean of the last 5 epochs over the seeds
        for how, runs in settled.items():
            delays = [d for d, _ in runs]
            print(f"{how}: last 5 epochs over seeds {seeds}: delay "
                  f"{statistics.mean(delays):.1f} ± {statistics.stdev(delays):.1f} ms, receive "
                  f"{statistics.mean(r for _, r in runs):.4f}")

if __name__ == "__main__":
    main()
