"""Where a heavy head-to-head run's peak memory goes: resident memory stage by stage.

Runs one cell of ``experiments/head-to-head-100k.yaml`` (a protocol on one of its worlds) at a
smaller number of nodes, in a fresh process per size, exactly as a sweep's worker runs it
(:func:`hedgerow.experiment.run.run_one`), with named stages (the world, the protocol's build,
the engine's construction, its run, the metrics) wrapped: at every stage boundary the kernel's
high-water mark (``VmHWM``) is read and reset, so each stage reports the resident memory when
it starts, its own peak (nested stages included) and what it leaves held when it ends. The
peaks are those of the kernel's counter, so memory allocated inside compiled kernels is seen
too (``tracemalloc`` would miss it).  A fit over the sizes gives each stage's growth exponent.

Usage::

    python benchmarks/mem_stages.py gossipsub --nodes 10000,20000,30000
    python benchmarks/mem_stages.py gm --nodes 10000,20000 --world rss-unit-square --json out.json

Each size prints one table (MiB): stage, calls, resident at its first start, peak, resident at
its last end; then the run's peak, CPU seconds and, over the sizes, each stage's peak growth
exponent (``log`` peak increase over the resident memory at the start vs ``log`` nodes).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "experiments" / "head-to-head-100k.yaml"

#: the stages wrapped for every run: ``module:attribute`` (a class's method as ``Class.name``)
COMMON = (
    "hedgerow.experiment.run:execute",
    "hedgerow.scenarios.world.make:make_world",
    "hedgerow.scenarios.epochs:run_protocol",
    "hedgerow.scenarios.observers:EpochRow.observe",
    "hedgerow.scenarios.run:structure",
)
#: the stages wrapped by protocol family
STAGES = {
    "gossipsub": (
        "hedgerow.protocols.gossipsub.protocol:GossipSub.clock_engine",
        "hedgerow.protocols.gossipsub.engine:random_connections",
        "hedgerow.dissemination.engine:edge_delays",
        "hedgerow.protocols.gossipsub.engine:GossipSubEngine.__init__",
        "hedgerow.protocols.gossipsub._kernel:slot_map",
        "hedgerow.protocols.gossipsub._kernel:candidate_lists",
        "hedgerow.protocols.gossipsub.engine:GossipSubEngine.run_until",
        "hedgerow.protocols.gossipsub.engine:GossipSubEngine.delivery",
        "hedgerow.protocols.gossipsub.engine:GossipSubEngine.overlay",
        "hedgerow.scenarios.observers:ClockMeasures.observe",
        "hedgerow.scenarios.observers:EpochDelivery.add",
    ),
    "tco": (
        "hedgerow.protocols.tco.engine:tco_augment",
        "hedgerow.protocols.tco._kernels:overflow_pairs",
        "hedgerow.protocols.tco._kernels:shared_counts",
        "hedgerow.protocols.tco._kernels:shared_counts_packed",
        "hedgerow.protocols.tco.engine:select_compiled",
        "hedgerow.dissemination.chunks:disseminate_chunks",
    ),
}
TCO = ("gm", "minmaxoda", "lowoda", "lowoda-inc", "lowoda-re", "omen-g", "omen")


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class Tracker:
    """Stage peaks by resetting the kernel's high-water mark at every boundary."""

    def __init__(self) -> None:
        self.open: list[str] = []
        self.table: dict[str, dict[str, float]] = {}

    def _boundary(self) -> int:
        hwm = _status("VmHWM:")
        for name in self.open:
            row = self.table[name]
            row["peak"] = max(row["peak"], hwm)
        _reset_peak()
        return _status("VmRSS:")

    def enter(self, name: str) -> None:
        rss = self._boundary()
        row = self.table.setdefault(name, {"calls": 0, "start": rss, "peak": rss, "end": rss})
        row["calls"] += 1
        self.open.append(name)

    def leave(self, name: str) -> None:
        self._boundary()
        self.open.remove(name)
        self.table[name]["end"] = _status("VmRSS:")


def _wrap(spec: str, tracker: Tracker) -> None:
    """Replace ``module:attr`` (``Class.method``) by a tracked wrapper everywhere it is bound."""
    mod_name, attr = spec.split(":")
    mod = importlib.import_module(mod_name)
    owner: Any = mod
    parts = attr.split(".")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    original = getattr(owner, parts[-1], None)
    if original is None:  # a stage another source tree does not have (a before/after run)
        return
    label = attr

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        tracker.enter(label)
        try:
            return original(*args, **kwargs)
        finally:
            tracker.leave(label)

    if owner is not mod:  # a method: the class attribute is looked up at call time
        setattr(owner, parts[-1], wrapped)
        return
    for m in list(sys.modules.values()):  # a function: every module that imported it
        d = getattr(m, "__dict__", None)
        if d is None:
            continue
        for k, v in list(d.items()):
            if v is original:
                setattr(m, k, wrapped)


def child(protocol: str, world: str, nodes: int) -> dict[str, Any]:
    """One run in this process; the stage table, peak and CPU."""
    from hedgerow.experiment import load_spec
    from hedgerow.experiment.run import run_one

    spec = load_spec(SPEC)
    run = next(r for r in spec.expand()
               if r.payload()["scenario"]["protocol"] == protocol
               and r.payload()["scenario"]["run"]["name"] == world)
    payload = run.payload()
    payload["scenario"]["run"]["nodes"] = nodes
    tracker = Tracker()
    family = "gossipsub" if protocol == "gossipsub" else "tco" if protocol in TCO else None
    for s in COMMON + STAGES.get(family, ()):
        _wrap(s, tracker)
    t0 = time.perf_counter()
    rows = run_one(payload)
    wall = time.perf_counter() - t0
    row = rows[0]
    mib = 2.0**20
    return {
        "protocol": protocol, "world": world, "nodes": nodes, "status": row["status"],
        "error": row.get("error"), "wall_s": wall, "cpu_s": row["cpu_seconds"],
        "peak_mib": tracker.table["execute"]["peak"] / mib,
        "receive_rate": row.get("receive_rate", row.get("metric_receive_rate")),
        "stages": {k: {"calls": v["calls"], "start_mib": v["start"] / mib,
                       "peak_mib": v["peak"] / mib, "end_mib": v["end"] / mib}
                   for k, v in tracker.table.items()},
    }


def _exponent(xs: list[float], ys: list[float]) -> float | None:
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("protocol")
    ap.add_argument("--nodes", default="10000,20000,30000")
    ap.add_argument("--world", default="unit-square")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.protocol, a.world, int(a.nodes))))
        return 0
    sizes = [int(x) for x in a.nodes.split(",")]
    results = []
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, a.protocol, "--world", a.world,
                              "--nodes", str(n), "--child"], check=True,
                             capture_output=True, text=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(res)
        print(f"\n{a.protocol} on {a.world}, {n:,} nodes: {res['status']}, "
              f"peak {res['peak_mib']:,.0f} MiB, {res['cpu_s']:.1f} CPU s, "
              f"{res['wall_s']:.1f} s wall, receive rate {res['receive_rate']}")
        print(f"{'stage':48s} {'calls':>5s} {'start':>8s} {'peak':>8s} {'end':>8s}")
        for k, v in res["stages"].items():
            print(f"{k:48s} {v['calls']:5d} {v['start_mib']:8.0f} {v['peak_mib']:8.0f} "
                  f"{v['end_mib']:8.0f}")
    if len(results) > 1:
        print("\ngrowth exponent of each stage's rise (peak - start) against nodes:")
        for k in results[0]["stages"]:
            ys = [r["stages"].get(k, {}).get("peak_mib", 0) - r["stages"].get(k, {}).get(
                "start_mib", 0) for r in results]
            e = _exponent([float(n) for n in sizes], ys)
            print(f"  {k:48s} " + " ".join(f"{y:8.0f}" for y in ys)
                  + ("" if e is None else f"   exponent {e:.2f}"))
        e = _exponent([float(n) for n in sizes], [r["peak_mib"] for r in results])
        print(f"  {'run peak':48s} " + " ".join(f"{r['peak_mib']:8.0f}" for r in results)
              + ("" if e is None else f"   exponent {e:.2f}"))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
