"""A sweep of 500 small runs on the embedded Spark: driver memory per run, and the report on it.

Usage::

    python benchmarks/pipeline_sweep_500.py [--runs 500] [--master local[2]] [--out DIR]

The runs: RingPT on 60 nodes, 10 topics, 3 subscriptions, seeds 0..R-1 (a run
takes milliseconds, so the sweep measures the pipeline, not the protocol).
After each committed run the driver's resident memory is sampled: the Python
driver (``VmRSS`` of this process) and the driver JVM (``VmRSS`` of the
gateway process).  The growth from run 50 to the last run is the per-run
leak, if any (target: under 200 MiB).  Then ``hedgerow report`` on the results
folder is timed, in process (the default engine) and as a command.  Prints one
JSON object with the machine's load (``/proc/loadavg``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hedgerow.experiment import parse_spec
from hedgerow.pipeline.report import aggregate
from hedgerow.pipeline.session import get_spark
from hedgerow.pipeline.sweep import run_sweep


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="hedgerow-sweep500-"))
    spec = parse_spec({
        "experiment": "sweep-500",
        "scenario": {"protocol": "ringpt", "diameter": False,
                     "workload": {"nodes": 60, "topics": 10, "subs": 3}},
        "sweep": {"seeds": list(range(args.runs))},
    })  # fmt: skip
    load_before = load()
    spark = get_spark(args.master, app_name="bench-sweep-500", parallelism=2,
                      log_file=out / "_logs" / "bench.log")  # fmt: skip
    jvm_pid = spark.sparkContext._gateway.proc.pid
    samples: dict[int, tuple[float, float]] = {}
    count = 0

    def sample(run, rows) -> None:
        nonlocal count
        count += 1
        if count in (1, 50, args.runs) or count % 50 == 0:
            samples[count] = (rss_mib(os.getpid()), rss_mib(jvm_pid))
            print(f"run {count}: python {samples[count][0]:.1f} MiB, jvm {samples[count][1]:.1f}"
                  f" MiB, {time.perf_counter() - t0:.0f}s, load {load()}",
                  file=sys.stderr, flush=True)  # fmt: skip

    t0 = time.perf_counter()
    res = run_sweep(spec, out, spark=spark, progress=False, on_result=sample)
    sweep_s = time.perf_counter() - t0
    spark.stop()
    t0 = time.perf_counter()
    rep = aggregate(None, out, "sweep-500", metrics=["avg_degree"])
    report_api_s = time.perf_counter() - t0
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get(
        "PYTHONPATH")) if p)}  # fmt: skip
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "import sys; from hedgerow.cli import main; sys.exit(main())",
           "report", str(out), "-e", "sweep-500"]  # fmt: skip
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    report_cli_s = time.perf_counter() - t0
    first, last = samples.get(50), samples.get(args.runs)
    print(json.dumps({
        "runs": res.total, "ok": res.ok, "failed": res.failed, "sweep_seconds": round(sweep_s, 1),
        "rss_mib_by_run": {k: [round(v[0], 1), round(v[1], 1)] for k, v in sorted(samples.items())},
        "python_driver_growth_mib_50_to_last": round(last[0] - first[0], 1) if first else None,
        "jvm_driver_growth_mib_50_to_last": round(last[1] - first[1], 1) if first else None,
        "report_in_process_seconds": round(report_api_s, 2),
        "report_command_seconds": round(report_cli_s, 2),
        "report_n": int(rep.table["n"].iloc[0]),
        "load_before": load_before, "load_after": load(), "out": str(out),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
