"""What a first run costs: each protocol's first run on a fresh install against the same run again.

Hedgerow's kernels are compiled by numba on first use and kept on disk (``cache=True``), so a
user's first run of a protocol pays for compiling every kernel it reaches, once per
installation (and again after an upgrade: the cache is keyed on the source files). This script
measures that price protocol by protocol. Each protocol runs in its own fresh process,

    hedgerow compare --scenario S --nodes N --epochs E --protocols P --json --no-diameter

twice: first with ``NUMBA_CACHE_DIR`` pointed at a new, empty folder (every kernel the run
reaches is compiled, then written), then again on the same folder (every kernel loaded). It
prints each protocol's wall and CPU time (the child's user + system, from the kernel's
accounting) cold and warm, and the difference, which is the compilation.

Examples
--------
Every registered protocol on a 200-node ``unit-square``, 3 epochs for the adaptive ones::

    python benchmarks/first_run.py --nodes 200 --epochs 3 --json first_run.json

Two protocols only::

    python benchmarks/first_run.py --protocols spidercast,gossipsub
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parallel_efficiency import run_copies  # one process's wall and CPU


@dataclass
class FirstRun:
    """One protocol's run on an empty numba cache (``cold``) and again on the filled one."""

    protocol: str
    cold_wall_s: float
    cold_cpu_s: float
    warm_wall_s: float
    warm_cpu_s: float

    @property
    def compile_cpu_s(self) -> float:
        """CPU the first run spends beyond the second: compiling and writing the kernels."""
        return self.cold_cpu_s - self.warm_cpu_s


def command(protocol: str, scenario: str, nodes: int, epochs: int) -> list[str]:
    """The measured command: one protocol's ``hedgerow compare`` row as JSON."""
    exe = shutil.which("hedgerow")
    if exe is None:
        raise SystemExit("the hedgerow command is not on PATH: install the package first "
                         "(python3 -m pip install -e .)")
    return [exe, "compare", "--scenario", scenario, "--nodes", str(nodes), "--epochs",
            str(epochs), "--protocols", protocol, "--json", "--no-diameter"]


def first_run(protocol: str, scenario: str, nodes: int, epochs: int) -> FirstRun:
    """Run ``protocol`` on an empty numba cache, then again on the cache the first run left."""
    cmd = command(protocol, scenario, nodes, epochs)
    saved = os.environ.get("NUMBA_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="hedgerow-first-run-") as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        try:
            cold = run_copies(cmd, 1)
            warm = run_copies(cmd, 1)
        finally:
            if saved is None:
                del os.environ["NUMBA_CACHE_DIR"]
            else:
                os.environ["NUMBA_CACHE_DIR"] = saved
    return FirstRun(protocol, cold.wall_s, cold.cpu_s[0], warm.wall_s, warm.cpu_s[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default=None,
                    help="comma-separated names (default: every registered protocol)")
    ap.add_argument("--scenario", default="unit-square", help="named scenario (unit-square)")
    ap.add_argument("--nodes", type=int, default=200, help="nodes of the world (200)")
    ap.add_argument("--epochs", type=int, default=3, help="epochs of adaptive protocols (3)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args()
    if args.protocols:
        names = [p.strip() for p in args.protocols.split(",") if p.strip()]
    else:
        from hedgerow.protocols import protocol_names

        names = protocol_names()
    load0 = os.getloadavg()[0]
    rows: list[FirstRun] = []
    print(f"{'protocol':<16} {'cold wall':>10} {'cold CPU':>9} {'warm wall':>10} "
          f"{'warm CPU':>9} {'compile CPU':>12}", flush=True)
    for name in names:
        r = first_run(name, args.scenario, args.nodes, args.epochs)
        rows.append(r)
        print(f"{name:<16} {r.cold_wall_s:>9.1f}s {r.cold_cpu_s:>8.1f}s {r.warm_wall_s:>9.1f}s "
              f"{r.warm_cpu_s:>8.1f}s {r.compile_cpu_s:>11.1f}s", flush=True)
    load1 = os.getloadavg()[0]
    total = sum(r.compile_cpu_s for r in rows)
    print(f"compilation, all protocols each on its own empty cache: {total:.1f} CPU s; "
          f"1-minute load before {load0:.2f}, after {load1:.2f}; {os.cpu_count()} cores")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scenario": args.scenario, "nodes": args.nodes, "epochs": args.epochs,
                       "load": [load0, load1],
                       "rows": [asdict(r) | {"compile_cpu_s": r.compile_cpu_s} for r in rows]},
                      f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
