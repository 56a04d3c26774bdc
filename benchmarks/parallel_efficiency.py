"""What a second concurrent run costs: one command alone, then several copies of it at once.

A sweep runs ``--parallelism`` runs at once, and its wall time is its runs' CPU divided by the
cores only if a run's CPU does not grow when another runs beside it.  On a machine whose cores
share execution units (hardware threads of one physical core) or a memory bus, it grows, and a
run's CPU seconds measured alone no longer add up to the sweep's.  This script measures that
growth for any command: it runs ``COMMAND`` alone, then ``--copies`` copies at once, ``--reps``
times alternating, and reports for each the processes' CPU (user + system, from the kernel's
accounting of each child) and wall time, and

* the CPU growth: a copy's CPU beside the others over its CPU alone;
* the throughput: ``copies x (wall alone) / (wall of the copies at once)``, how many runs'
  worth of work the machine does in the time of one (``copies`` at best).

Examples
--------
The 10K head-to-head's Goldfish step (completions of 3,000-row windows), alone and two at once::

    python benchmarks/parallel_efficiency.py --copies 2 --reps 2 -- \\
        python benchmarks/goldfish_scale.py --sample 12 --nodes 10000 --completion mm-fast

An interpreter loop that stays in the first-level caches, to tell shared execution units
from a shared memory bus::

    python benchmarks/parallel_efficiency.py --copies 2 -- python -c \\
        "s = sum(i * i % 7 for i in range(3 * 10**7))"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass


@dataclass
class Trial:
    """One trial: ``copies`` processes started together."""

    copies: int
    wall_s: float
    cpu_s: list[float]


def run_copies(command: list[str], copies: int) -> Trial:
    """Start ``copies`` processes of ``command`` at once; their CPU and the trial's wall time."""
    t0 = time.perf_counter()
    # standard error goes to files, not pipes: a chatty copy cannot fill a pipe nobody reads yet
    errs = [tempfile.TemporaryFile() for _ in range(copies)]
    procs = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err) for err in errs]
    cpu: dict[int, float] = {}
    codes: dict[int, int] = {}
    while len(cpu) < copies:
        pid, status, usage = os.wait4(-1, 0)
        if any(p.pid == pid for p in procs):
            cpu[pid] = usage.ru_utime + usage.ru_stime
            codes[pid] = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    for p, err in zip(procs, errs, strict=True):
        p.returncode = codes[p.pid]
        err.seek(0)
        text = err.read().decode(errors="replace")
        err.close()
        if codes[p.pid] != 0:
            raise SystemExit(f"command failed (exit {codes[p.pid]}): {' '.join(command)}\n{text}")
    return Trial(copies, wall, [cpu[p.pid] for p in procs])


def summary(alone: list[Trial], together: list[Trial]) -> dict[str, float]:
    """Best-of-trials figures: the least wall and CPU alone and together."""
    wall_1 = min(t.wall_s for t in alone)
    cpu_1 = min(t.cpu_s[0] for t in alone)
    wall_n = min(t.wall_s for t in together)
    cpu_n = min(sum(t.cpu_s) / len(t.cpu_s) for t in together)
    n = together[0].copies
    return {
        "wall_alone_s": wall_1,
        "cpu_alone_s": cpu_1,
        "wall_together_s": wall_n,
        "cpu_per_copy_together_s": cpu_n,
        "cpu_growth": cpu_n / cpu_1,
        "throughput": n * wall_1 / wall_n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=2, help="processes at once (default 2)")
    ap.add_argument("--reps", type=int, default=2, help="trials of each, alternating")
    ap.add_argument("--json", default=None, help="also write the trials and summary here")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the command to run after --")
    if args.copies < 2 or args.reps < 1:
        ap.error("--copies must be at least 2 and --reps at least 1")
    load0 = os.getloadavg()[0]
    alone: list[Trial] = []
    together: list[Trial] = []
    for rep in range(args.reps):
        alone.append(run_copies(command, 1))
        print(f"rep {rep + 1}: alone    wall {alone[-1].wall_s:8.2f} s  "
              f"cpu {alone[-1].cpu_s[0]:8.2f} s", flush=True)
        together.append(run_copies(command, args.copies))
        cpus = " ".join(f"{c:.2f}" for c in together[-1].cpu_s)
        print(f"rep {rep + 1}: {args.copies} at once wall {together[-1].wall_s:8.2f} s  "
              f"cpu {cpus} s", flush=True)
    out = summary(alone, together)
    load1 = os.getloadavg()[0]
    print(f"1-minute load before {load0:.2f}, after {load1:.2f}; {os.cpu_count()} cores")
    print(f"CPU of a copy beside {args.copies - 1} other(s): {out['cpu_growth']:.2f}x its CPU "
          f"alone ({out['cpu_per_copy_together_s']:.2f} s against {out['cpu_alone_s']:.2f} s)")
    print(f"throughput: {out['throughput']:.2f} runs in the wall time of one "
          f"(at best {args.copies})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "load": [load0, load1], "summary": out,
                       "alone": [asdict(t) for t in alone],
                       "together": [asdict(t) for t in together]}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
