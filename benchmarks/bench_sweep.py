"""Time a 16-run sweep on Spark against the same runs one after another in-process.

Usage::

    python benchmarks/bench_sweep.py [--master local[2]] [--json out.json]

The runs: SpiderCast (3,0) and similarity(10,0) on 4,000 and 6,000 nodes, 100
topics, 10 subscriptions, RSS, 4 seeds (16 runs of a few seconds each, no
diameters).  The Spark session is started and warmed with a 16-run sweep of
tiny runs (Python workers up, numba caches loaded, the JVM's JIT past its
first compilations) before anything is timed, then

* ``sequential``: :func:`hedgerow.experiment.run_one` on each run, one after another;
* ``sweep``: :func:`hedgerow.pipeline.sweep.run_sweep` into a fresh directory.

Acceptance (2 cores): ``sweep <= 0.65 x sequential``.  Both give the same
metrics (checked).  With ``--repeat R`` the two phases alternate R times
(sequential, sweep, sequential, ...) so that load from other processes hits
both alike; the medians are compared.  Each phase also records the CPU seconds
of this process tree (driver, JVM, Python workers, from ``/proc``) and the
machine's CPU pressure, to tell Spark overhead from a busy machine.  Prints
one JSON object; ``--json`` also writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from hedgerow.experiment import parse_spec, run_one
from hedgerow.pipeline.session import get_spark
from hedgerow.pipeline.store import row_files
from hedgerow.pipeline.sweep import run_sweep

SPEC = {
    "experiment": "bench-sweep",
    "scenario": {
        "protocol": "spidercast",
        "params": {"kg": 3, "kr": 0},
        "workload": {"nodes": 4000, "topics": 100, "subs": 10, "popularity": "rss"},
        "diameter": False,
    },
    "sweep": {
        "grid": {"scenario.workload.nodes": [4000, 6000]},
        "seeds": [0, 1, 2, 3],
        "variants": [
            {"label": "SpiderCast(3,0)", "protocol": "spidercast", "params": {"kg": 3, "kr": 0}},
            {
                "label": "similarity(10,0)",
                "protocol": "similarity",
                "params": {"similar": 10, "random": 0},
            },
        ],
    },
}

WARMUP = {
    "experiment": "bench-warmup",
    "scenario": {
        "protocol": "spidercast",
        "params": {"kg": 3, "kr": 0},
        "workload": {"nodes": 100, "topics": 20, "subs": 3},
        "diameter": False,
    },
    "sweep": {
        "seeds": [0, 1, 2, 3, 4, 5, 6, 7],
        "variants": [
            {"label": "s", "protocol": "spidercast", "params": {"kg": 3}},
            {"label": "m", "protocol": "similarity", "params": {"similar": 5, "random": 0}},
        ],
    },
}

METRICS = ("avg_degree", "max_degree", "topic_components", "partitioned_topics", "control_messages")


def tree_cpu_seconds(root: int | None = None) -> float:
    """User + system CPU seconds of ``root`` (default: this process) and all its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    root = os.getpid() if root is None else root
    total, todo = 0.0, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


def cpu_pressure() -> float | None:
    """``some avg10`` of /proc/pressure/cpu: % of time runnable tasks waited for a CPU."""
    try:
        with open("/proc/pressure/cpu") as fh:
            return float(fh.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


def main() -> None:
    """Run the benchmark and print its numbers as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    ap.add_argument(
        "--repeat", type=int, default=1, help="alternate the two phases this many times"
    )
    args = ap.parse_args()

    t0 = time.perf_counter()
    spark = get_spark(args.master, app_name="bench-sweep", parallelism=2)
    session_s = time.perf_counter() - t0

    spec = parse_spec(SPEC)
    runs = spec.expand()
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up: Python workers started, numba caches loaded, in-process kernels loaded
        t0 = time.perf_counter()
        run_sweep(parse_spec(WARMUP), Path(tmp) / "warm", spark=spark, progress=False)
        for r in parse_spec(WARMUP).expand()[:2]:
            run_one(r)
        warm_s = time.perf_counter() - t0

        seq_times, sweep_times, seq_cpu, sweep_cpu, pressure = [], [], [], [], []
        same = True
        run_seconds: list[float] = []
        for rep in range(args.repeat):
            c0, t0 = tree_cpu_seconds(), time.perf_counter()
            local = {r.run_id: run_one(r)[0] for r in runs}
            seq_times.append(time.perf_counter() - t0)
            seq_cpu.append(tree_cpu_seconds() - c0)
            assert all(row["status"] == "ok" for row in local.values())

            out = Path(tmp) / f"sweep{rep}"
            c0, t0 = tree_cpu_seconds(), time.perf_counter()
            res = run_sweep(spec, out, spark=spark, progress=False)
            sweep_times.append(time.perf_counter() - t0)
            sweep_cpu.append(tree_cpu_seconds() - c0)
            pressure.append(cpu_pressure())
            assert res.ok == len(runs), res.summary()
            rows = [r for f in row_files(out) for r in pq.read_table(f).to_pylist()]
            same = same and all(row[m] == local[row["run_id"]][m] for row in rows for m in METRICS)
            run_seconds = sorted(round(row["wall_seconds"], 2) for row in rows)
        sequential_s = statistics.median(seq_times)
        sweep_s = statistics.median(sweep_times)

    result = {
        "runs": len(runs),
        "master": args.master,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "session_start_s": round(session_s, 1),
        "warmup_s": round(warm_s, 1),
        "sequential_s": round(sequential_s, 1),
        "sweep_s": round(sweep_s, 1),
        "sequential_each_s": [round(x, 1) for x in seq_times],
        "sweep_each_s": [round(x, 1) for x in sweep_times],
        "sequential_cpu_s": [round(x, 1) for x in seq_cpu],
        "sweep_cpu_s": [round(x, 1) for x in sweep_cpu],
        "cpu_pressure_avg10": pressure,
        "ratio": round(sweep_s / sequential_s, 3),
        "accept_ratio_le": 0.65,
        "accepted": sweep_s <= 0.65 * sequential_s,
        "identical_metrics": same,
        "spark_run_wall_seconds_last": run_seconds,
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
