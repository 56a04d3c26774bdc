"""The synthetic follower graph at scale (1M users by default) on the embedded Spark.

Usage::

    python benchmarks/pipeline_follower_graph.py [--users 1000000] [--master local[2]] [--out DIR]

Runs :func:`hedgerow.pipeline.ingest.follower_graph.ingest_follower_graph`
(exponent 1.65, mean 88: Vitis' Twitter statistics) and prints one JSON
object: wall time, the peak resident memory of the whole process tree (the
Python driver, the JVM and its Python workers, sampled every 0.5 s from
``/proc``), the fitted in- and out-degree exponents (target 1.65 ± 0.05), the
edge count and the machine's load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

from hedgerow.pipeline.ingest.follower_graph import ingest_follower_graph
from hedgerow.pipeline.session import get_spark


def tree_rss_mib(root: int) -> float:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/status") as fh:
                kb = next((int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:")), 0)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = kb
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total / 1024


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="hedgerow-followers-")) / "graph"
    peak = [0.0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mib(os.getpid()))
            done.wait(0.5)

    load_before = load()
    threading.Thread(target=watch, daemon=True).start()
    t0 = time.perf_counter()
    spark = get_spark(args.master, app_name="bench-follower-graph",
                      log_file=out.parent / "spark.log")  # fmt: skip
    meta = ingest_follower_graph(spark, out, users=args.users, seed=0)
    wall = time.perf_counter() - t0
    done.set()
    spark.stop()
    print(json.dumps({
        "users": args.users, "wall_seconds": round(wall, 1), "peak_rss_mib": round(peak[0]),
        "meta": meta, "load_before": load_before, "load_after": load(), "out": str(out),
    }, indent=1, default=str))  # fmt: skip


if __name__ == "__main__":
    main()
