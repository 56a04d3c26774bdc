"""How every registered protocol scales: time and peak memory from 1,000 nodes up.

One world family for all: the ``unit-square`` scenario (nodes uniform in the unit square,
500 ms across, 100 topics at 20% interest, d = 6, 1,000 messages per epoch, TTL 1) with its
``nodes`` setting raised.  A static protocol builds once and disseminates one epoch; an
adaptive one runs ``--epochs`` epochs (default 3); a maintained-only one (OMen) builds its
overlay on the event core and disseminates one epoch.  Each run is a fresh process (its peak
resident memory is the process's) that first runs the same protocol on a 100-node world, so
compilation and caches stay out of the timed part.

A run is stopped at ``--cap`` CPU seconds (or ``--wall-cap`` wall seconds, or
``--mem-cap`` GiB resident); a protocol's larger sizes are then skipped, and so is a size
whose time, extrapolated from the last two with their growth exponent, would exceed the cap.
While a run works, a sampler thread reads its stack every 20 ms: the innermost function of
the package on the stack (a compiled kernel shows as the function calling it) is counted,
and the most sampled one at the largest size is named as the dominant cost.

Usage::

    python benchmarks/bench_scaling.py                                   # every protocol
    python benchmarks/bench_scaling.py --protocols spidercast,gm --sizes 1000,3000,10000
    python benchmarks/bench_scaling.py --cap 300 --json scaling.jsonl --markdown scaling.md
    python benchmarks/bench_scaling.py --table-from scaling.jsonl more.jsonl   # one table
                                                     # (a protocol's rows in a later file win)

The growth exponent is the least-squares slope of log(time) (and of log(peak memory)) on
log(nodes) over the sizes that finished; it needs two sizes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

SIZES = (1000, 3000, 10000, 30000, 100000)


# ---------------------------------------------------------------- child side
class StackSampler:
    """Counts the innermost frame of the package on the main thread's stack."""

    def __init__(self, period: float = 0.02) -> None:
        self.period = period
        self.counts: Counter[str] = Counter()
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import hedgerow

        root = str(Path(hedgerow.__file__).parent)
        while not self._stop.wait(self.period):
            frame = sys._current_frames().get(self._main)
            while frame is not None and not frame.f_code.co_filename.startswith(root):
                frame = frame.f_back
            if frame is not None:
                rel = frame.f_code.co_filename[len(root) + 1 :].removesuffix(".py")
                self.counts[f"{rel.replace('/', '.')}:{frame.f_code.co_name}"] += 1

    def __enter__(self) -> StackSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def one_run(protocol: str, nodes: int, epochs: int, seed: int) -> dict:
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.base import capabilities
    from hedgerow.scenarios.run import simulate

    adaptive = "adaptive" in capabilities(type(get_protocol(protocol)))
    n_epochs = epochs if adaptive else 1
    simulate(protocol, "unit-square", seed=seed, nodes=100, epochs=n_epochs)  # warm-up
    c0, t0 = time.process_time(), time.perf_counter()
    with StackSampler() as sampler:
        result = simulate(protocol, "unit-square", seed=seed, nodes=nodes, epochs=n_epochs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    row = result.rows[-1]
    total = sum(sampler.counts.values()) or 1
    top = sampler.counts.most_common(3)
    import resource

    return {
        "protocol": protocol,
        "nodes": nodes,
        "epochs": n_epochs,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "receive_rate": row.get("receive_rate"),
        "hot": [(name, round(c / total, 3)) for name, c in top],
    }


# ---------------------------------------------------------------- parent side
def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def run_capped(protocol: str, nodes: int, args: argparse.Namespace) -> dict:
    """One run in a child process, stopped at the CPU, wall or memory cap."""
    cmd = [sys.executable, __file__, "--child", protocol, str(nodes), str(args.epochs),
           str(args.seed)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped, peak = "", 0.0
    while proc.poll() is None:
        time.sleep(0.25)
        peak = max(peak, _rss_mib(proc.pid))
        if _cpu_s(proc.pid) > args.cap + 30:  # the warm-up's share
            stopped = f"cpu > {args.cap:.0f} s"
        elif time.perf_counter() - t0 > args.wall_cap:
            stopped = f"wall > {args.wall_cap:.0f} s"
        elif peak > args.mem_cap * 1024:
            stopped = f"memory > {args.mem_cap:g} GiB"
        if stopped:
            proc.kill()
            proc.wait()
            return {"protocol": protocol, "nodes": nodes, "stopped": stopped,
                    "peak_mib": peak}
    out, err = proc.communicate()
    if proc.returncode != 0:
        last = (err.strip().splitlines() or ["?"])[-1]
        return {"protocol": protocol, "nodes": nodes, "stopped": f"error: {last}"}
    row = json.loads(out.strip().splitlines()[-1])
    row["over_cap"] = row["cpu_s"] > args.cap
    return row


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sxx


def summarise(protocol: str, rows: list[dict], sizes: list[int] | None = None) -> dict:
    done = [r for r in rows if "stopped" not in r]
    out: dict = {"protocol": protocol, "sizes": [r["nodes"] for r in done]}
    for r in done:
        out[f"cpu_{r['nodes']}"] = r["cpu_s"]
        out[f"mib_{r['nodes']}"] = r["peak_mib"]
    if len(done) >= 2:
        xs = [r["nodes"] for r in done]
        out["time_exponent"] = slope(xs, [r["cpu_s"] for r in done])
        out["memory_exponent"] = slope(xs, [r["peak_mib"] for r in done])
    if done:
        out["hot"] = done[-1]["hot"]
    stops = [r for r in rows if "stopped" in r]
    if stops:
        out["stopped"] = f"{stops[0]['nodes']:,}: {stops[0]['stopped']}"
    elif done and done[-1].get("over_cap"):
        out["stopped"] = f"after {done[-1]['nodes']:,} (over the cap)"
    elif done and sizes and done[-1]["nodes"] < max(sizes):
        out["stopped"] = "next size skipped: extrapolated over the cap"
    return out


def markdown(summaries: list[dict], sizes: list[int]) -> str:
    head = ["protocol"] + [f"{n:,}" for n in sizes] + ["time exp.", "memory exp.",
                                                      "dominant cost (largest size)", "stopped"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        cells = [s["protocol"]]
        for n in sizes:
            if f"cpu_{n}" in s:
                cells.append(f"{s[f'cpu_{n}']:.1f} s / {s[f'mib_{n}']:.0f} MiB")
            else:
                cells.append("—")
        cells.append(f"{s['time_exponent']:.2f}" if "time_exponent" in s else "—")
        cells.append(f"{s['memory_exponent']:.2f}" if "memory_exponent" in s else "—")
        hot = s.get("hot") or []
        cells.append(f"`{hot[0][0]}` ({hot[0][1]:.0%})" if hot else "—")
        cells.append(s.get("stopped", ""))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        protocol, nodes, epochs, seed = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
        print(json.dumps(one_run(protocol, nodes, epochs, seed)), flush=True)
        return 0
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--protocols", help="comma-separated (default: every registered protocol)")
    ap.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    ap.add_argument("--epochs", type=int, default=3, help="epochs of an adaptive protocol")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cap", type=float, default=300.0, help="CPU seconds per run")
    ap.add_argument("--wall-cap", type=float, default=900.0,
                    help="wall seconds per run, warm-up included")
    ap.add_argument("--mem-cap", type=float, default=16.0, help="GiB resident per run")
    ap.add_argument("--json", metavar="FILE", help="append every row and summary (JSON lines)")
    ap.add_argument("--markdown", metavar="FILE", help="write the table")
    ap.add_argument("--table-from", nargs="+", metavar="JSONL",
                    help="only print the table of rows written earlier with --json")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    if args.table_from:
        by_protocol: dict[str, list[dict]] = {}
        for path in args.table_from:  # a protocol's rows in a later file replace earlier ones
            in_file: dict[str, list[dict]] = {}
            for line in Path(path).read_text().splitlines():
                r = json.loads(line)
                if "summary" not in r:
                    in_file.setdefault(r["protocol"], []).append(r)
            by_protocol.update(in_file)
        print(markdown([summarise(k, v, sizes) for k, v in by_protocol.items()], sizes))
        return 0
    from hedgerow.protocols import protocol_names

    names = args.protocols.split(",") if args.protocols else list(protocol_names())
    summaries = []
    for name in names:
        rows: list[dict] = []
        for n in sizes:
            done = [r for r in rows if "stopped" not in r]
            if len(done) >= 2:
                e = slope([r["nodes"] for r in done[-2:]], [r["cpu_s"] for r in done[-2:]])
                guess = done[-1]["cpu_s"] * (n / done[-1]["nodes"]) ** max(e, 1.0)
                if guess > args.cap:
                    skip = {"protocol": name, "nodes": n,
                            "stopped": f"skipped: extrapolated {guess:.0f} s > cap"}
                    rows.append(skip)
                    if args.json:
                        with open(args.json, "a") as f:
                            f.write(json.dumps(skip) + "\n")
                    break
            r = run_capped(name, n, args)
            rows.append(r)
            print(json.dumps(r), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            if "stopped" in r or r.get("over_cap"):
                break
        s = summarise(name, rows, sizes)
        summaries.append(s)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps({"summary": s}) + "\n")
    table = markdown(summaries, sizes)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
