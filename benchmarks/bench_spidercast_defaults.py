"""Which SpiderCast setting keeps the topic-connectivity promise on small workloads.

SpiderCast (Chockler et al., DEBS'07) promises an overlay in which every topic subgraph is
connected. This benchmark builds the paper's candidate settings on a grid of small workloads
and counts the runs and topics left partitioned, to choose the setting a user gets when no
``-p`` is given.

Settings (all from the paper), each with ``ties=sequential`` and ``ties=uniform``:

* ``(3,0)``    — greedy coverage only, ``kg=3, kr=0`` (Figure 12);
* ``(3,1)``    — greedy plus one random coverage, ``kg=3, kr=1`` (section 3.3);
* ``adaptive`` — ``kg=3``, ``kr`` from 0 raised per node (section 3.3.1).

Workloads: nodes in {200, 500, 1000} x topics in {10, 20, 50} x subscriptions in {2, 3, 5}
x popularity in {rss, uniform} x ``--seeds`` (default 1, 2: 108 workloads); combinations with
more subscriptions than topics are skipped. The workload seed is also the build seed.

Per setting it reports: runs with at least one partitioned topic, total partitioned topics,
the most partitioned topics in one run, mean average degree, mean maximum degree and mean
build seconds — over all workloads and over the 1,000-node ones.

Usage::

    python benchmarks/bench_spidercast_defaults.py                       # the full grid
    python benchmarks/bench_spidercast_defaults.py --seeds 1             # half the grid
    python benchmarks/bench_spidercast_defaults.py --nodes 200 --limit 4 # a timing probe
    python benchmarks/bench_spidercast_defaults.py --json out.json       # also every row

Timings are wall-clock seconds of ``StaticProtocol.build`` (workload generation and metrics
excluded), after a warm-up build that loads the numba kernels. Diameters are not computed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

from hedgerow.metrics import overlay_summary
from hedgerow.protocols import get_protocol
from hedgerow.workloads import make_instance

#: the paper's candidate settings; adaptive=true requires kg=3, kr=0 (kr is then per node)
SETTINGS = {
    "(3,0)": {"kg": 3, "kr": 0},
    "(3,1)": {"kg": 3, "kr": 1},
    "adaptive": {"kg": 3, "kr": 0, "adaptive": True},
}
TIES = ("sequential", "uniform")
NODES = (200, 500, 1000)
TOPICS = (10, 20, 50)
SUBS = (2, 3, 5)
POPULARITY = ("rss", "uniform")


def settings() -> list[tuple[str, dict]]:
    """The six (label, params) pairs: each setting with each tie rule."""
    return [
        (f"{name} {ties}", {**params, "ties": ties})
        for name, params in SETTINGS.items()
        for ties in TIES
    ]


def workloads(nodes, topics, subs, popularity, seeds) -> list[dict]:
    """The grid, skipping combinations with more subscriptions than topics."""
    return [
        {"nodes": n, "topics": t, "subs": s, "popularity": p, "seed": seed}
        for n, t, s, p, seed in itertools.product(nodes, topics, subs, popularity, seeds)
        if s <= t
    ]


def run_one(params: dict, inst, seed: int) -> dict:
    proto = get_protocol("spidercast", **params)
    t0 = time.perf_counter()
    ov = proto.build(inst, seed=seed)
    seconds = time.perf_counter() - t0
    row = overlay_summary(ov, inst, diameter=False)
    row.update(
        build_seconds=seconds,
        quiescent=proto.stats_.get("quiescent", True),
        kr_final_mean=proto.stats_.get("kr_final_mean", 0.0),
    )
    return row


def aggregate(rows: list[dict], label: str) -> dict:
    mine = [r for r in rows if r["setting"] == label]
    n = len(mine)
    part = [r["partitioned_topics"] for r in mine]
    return {
        "setting": label,
        "runs": n,
        "split_runs": sum(p > 0 for p in part),
        "split_topics": sum(part),
        "topics": sum(r["topics"] for r in mine),
        "worst": max(part, default=0),
        "avg_degree": sum(r["avg_degree"] for r in mine) / n if n else float("nan"),
        "max_degree": sum(r["max_degree"] for r in mine) / n if n else float("nan"),
        "seconds": sum(r["build_seconds"] for r in mine) / n if n else float("nan"),
        "not_quiescent": sum(not r["quiescent"] for r in mine),
    }


def table(rows: list[dict], title: str) -> str:
    labels = [label for label, _ in settings()]
    aggs = [aggregate(rows, label) for label in labels]
    n = aggs[0]["runs"] if aggs else 0
    out = [
        f"{title}",
        "",
        f"| setting | runs split (of {n}) | topics split (of {aggs[0]['topics'] if aggs else 0})"
        " | worst run | avg degree | max degree | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in aggs:
        out.append(
            f"| {a['setting']} | {a['split_runs']} | {a['split_topics']} | {a['worst']}"
            f" | {a['avg_degree']:.2f} | {a['max_degree']:.1f} | {a['seconds']:.2f} |"
        )
    stuck = sum(a["not_quiescent"] for a in aggs)
    if stuck:
        out.append("")
        out.append(f"({stuck} builds hit max_rounds before quiescence)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    ap.add_argument("--seeds", type=ints, default=[1, 2], help="workload/build seeds (1,2)")
    ap.add_argument("--nodes", type=ints, default=list(NODES), help="node counts")
    ap.add_argument("--topics", type=ints, default=list(TOPICS), help="topic counts")
    ap.add_argument("--subs", type=ints, default=list(SUBS), help="subscriptions per node")
    ap.add_argument(
        "--popularity", default=",".join(POPULARITY), help="popularity laws (rss,uniform)"
    )
    ap.add_argument("--limit", type=int, default=0, help="only the first N workloads (probe)")
    ap.add_argument("--json", metavar="OUT", help="also write every row as JSON")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per build")
    args = ap.parse_args(argv)

    grid = workloads(args.nodes, args.topics, args.subs, args.popularity.split(","), args.seeds)
    if args.limit:
        grid = grid[: args.limit]
    run_one({"kg": 3, "kr": 0}, make_instance(nodes=200, topics=20, subs=4, seed=0), 0)  # warm-up
    rows: list[dict] = []
    t_start = time.perf_counter()
    for i, w in enumerate(grid, 1):
        inst = make_instance(**w)
        for label, params in settings():
            r = run_one(params, inst, w["seed"])
            r.update(setting=label, **w)
            rows.append(r)
            if args.verbose or r["partitioned_topics"]:
                print(
                    f"  n={w['nodes']:5d} t={w['topics']:3d} s={w['subs']} {w['popularity']:8s}"
                    f" seed={w['seed']} {label:20s} part={r['partitioned_topics']:2d}"
                    f" deg={r['avg_degree']:6.2f} max={r['max_degree']:3d}"
                    f" t={r['build_seconds']:5.2f}s",
                    file=sys.stderr,
                    flush=True,
                )
        if i % 9 == 0 or i == len(grid):
            print(
                f"[{i}/{len(grid)} workloads, {time.perf_counter() - t_start:.0f} s]",
                file=sys.stderr,
                flush=True,
            )
    wall = time.perf_counter() - t_start
    print(table(rows, f"All workloads ({len(grid)}; seeds {args.seeds})"))
    big = max(args.nodes)
    big_rows = [r for r in rows if r["nodes"] == big]
    if big_rows and len(args.nodes) > 1:
        print()
        print(table(big_rows, f"{big}-node workloads ({len(big_rows) // len(settings())})"))
    print()
    print(f"grid wall time: {wall:.0f} s ({len(rows)} builds)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
