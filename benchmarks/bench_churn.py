"""SpiderCast under churn (DEBS'07 section 3.8, Figure 11), ours beside the paper's numbers.

Each node is online for Exp(λ) s and offline for Exp(λ/4) s, and rejoins with a new interest;
RSS popularity, 100 topics, 10 subscriptions per node, (3,0)-coverage, 1,000 s, a snapshot every
200 s of the nodes online for more than 2 s.  The paper: every topic connected in every snapshot;
average degree not affected by λ (about 13 with 1,250 nodes and 12 with 2,500); 38 and 34 control
messages per join/leave operation.

Usage::

    python benchmarks/bench_churn.py                                  # 1250, 2500 x λ 100..500
    python benchmarks/bench_churn.py --nodes 1250 --lifetimes 100 --seeds 1,2,3
    python benchmarks/bench_churn.py -p ties=uniform --json out.json  # any protocol parameter
"""

from __future__ import annotations

import argparse
import json
import time

from hedgerow.scenarios.churn import run_churn
from hedgerow.workloads import make_instance

PAPER_DEGREE = {1250: 13, 2500: 12}
PAPER_MESSAGES = {1250: 38, 2500: 34}


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _param(text: str) -> tuple[str, object]:
    import yaml

    name, _, value = text.partition("=")
    return name, yaml.safe_load(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_ints, default=[1250, 2500])
    ap.add_argument("--lifetimes", type=_ints, default=[100, 200, 300, 400, 500])
    ap.add_argument("--seeds", type=_ints, default=[1])
    ap.add_argument("--duration", type=float, default=1000.0)
    ap.add_argument("-p", dest="params", action="append", type=_param, default=[])
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    # (3,0) with sequential ties, as in the tables, whatever the protocol's defaults
    params = {"kg": 3, "kr": 0, "ties": "sequential", **dict(args.params)}
    out = []
    for n in args.nodes:
        for lam in args.lifetimes:
            for seed in args.seeds:
                inst = make_instance(nodes=n, topics=100, subs=10, popularity="rss", seed=seed)
                t0 = time.perf_counter()
                res = run_churn(
                    "spidercast",
                    inst,
                    lifetime=float(lam),
                    duration=args.duration,
                    snapshot_every=args.duration / 5,
                    seed=seed,
                    params=params,
                )
                wall = time.perf_counter() - t0
                s = res.summary
                parts = [r["partitioned_topics"] for r in res.rows]
                rec = {
                    "nodes": n,
                    "lifetime": lam,
                    "seed": seed,
                    "partitioned_per_snapshot": parts,
                    "avg_degree": s["mean_avg_degree"],
                    "paper_degree": PAPER_DEGREE.get(n),
                    "messages_per_op": s["messages_per_op"],
                    "paper_messages_per_op": PAPER_MESSAGES.get(n),
                    "online_mean": sum(r["online"] for r in res.rows) / len(res.rows),
                    "undercovered_max": max(r["undercovered_nodes"] for r in res.rows),
                    "join_seconds_median": s["join_seconds_median"],
                    "join_seconds_p99": s["join_seconds_p99"],
                    "joins": s["joins"],
                    "leaves": s["leaves"],
                    "wall_seconds": wall,
                }
                out.append(rec)
                print(
                    f"n={n:5d} λ={lam:4d} seed={seed} partitioned/snapshot={parts}"
                    f" degree={rec['avg_degree']:.2f} (paper ~{rec['paper_degree']})"
                    f" msgs/op={rec['messages_per_op']:.1f} (paper {rec['paper_messages_per_op']})"
                    f" online={rec['online_mean']:.0f} join p50/p99="
                    f"{rec['join_seconds_median']:.2f}/{rec['join_seconds_p99']:.2f} s"
                    f" ops={rec['joins'] + rec['leaves']} t={wall:.1f}s",
                    flush=True,
                )
    bad = sum(1 for r in out for p in r["partitioned_per_snapshot"] if p)
    total = sum(len(r["partitioned_per_snapshot"]) for r in out)
    print(f"snapshots with a partitioned topic: {bad} of {total} (paper: 0)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
