"""Vitis and RVR under churn (IPDPS 2011 section IV-F, Fig. 12): hit ratio, overhead, delay.

The paper replays 4,000 Skype superpeers (RT 15, uniform rates) and reports, under a flash
crowd, RVR's hit ratio falling to 87% and Vitis's worst case near 99%, measuring each node's
hit ratio from 10 s after it joins.  We have no Skype trace: the controls are the named cycle
churn scenarios (``hedgerow.scenarios.events.CHURN_SCENARIOS``, shape ``cycle``):

* ``vitis-flash-crowd``: 2,000 of 4,000 nodes online, 2,000 more join within 5 cycles after
  cycle 100, then on/off churn (Exp(λ) online, Exp(λ/4) offline, λ = 600 cycles);
* ``vitis-trace``: the Google 2011 machine events of 4,039 machines (``google4k``, prepared
  by ``hedgerow churn --scenario vitis-trace`` or ``hedgerow ingest churn``) at 60 trace
  seconds per cycle.

Workload: Vitis IV-A's correlated subscriptions (high; 5,000 topics, 50 per node).  One row per
sample (every 5 cycles): online, measured (joined >= 10 cycles ago), ring correctness, hit
ratio, overhead, delay.  This script runs the same driver as ``hedgerow churn vitis
--scenario vitis-flash-crowd`` (:func:`hedgerow.scenarios.churn_drivers.run_churn_request`)
and adds the timings.

Usage::

    python benchmarks/bench_vitis_churn.py                              # flash crowd, both
    python benchmarks/bench_vitis_churn.py --protocols rvr --json out.json
    python benchmarks/bench_vitis_churn.py --scenario vitis-trace
    python benchmarks/bench_vitis_churn.py --nodes 1000                 # a reduced run
"""

from __future__ import annotations

import argparse
import json
import time

from hedgerow.scenarios.churn_drivers import ChurnRequest, run_churn_request
from hedgerow.scenarios.events import churn_scenario_names


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default="vitis,rvr")
    ap.add_argument("--scenario", default="vitis-flash-crowd",
                    choices=churn_scenario_names("cycle"))
    ap.add_argument("--nodes", type=int, default=None, help="reduce the scenario's nodes")
    ap.add_argument("--rt", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    out = {}
    for name in [p for p in args.protocols.split(",") if p]:
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = run_churn_request(name, ChurnRequest(scenario=args.scenario), seed=args.seed,
                                params={"rt": args.rt}, nodes=args.nodes)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        s = res.summary
        print(f"{name}: {args.scenario}, {s['nodes']} nodes, RT {args.rt}, {s['cycles']} cycles "
              f"({wall:.0f} s wall, {cpu:.0f} s cpu)")
        for r in res.rows:
            print(f"  cycle {r['cycle']:4d} online {r['online']:5d} measured {r['measured']:5d} "
                  f"ring {_f(r['ring_correct'])} hit {_f(r['hit_ratio'])} "
                  f"overhead {_f(r['overhead'])} delay {_f(r['delay_hops'])}")
        print(f"  worst hit ratio {_f(s['worst_hit_ratio'])} (after the crowd "
              f"{_f(s['worst_hit_ratio_after_crowd'])}); paper: {s['paper_worst_hit_ratio']}")
        out[name] = [{k: v for k, v in r.items()
                      if k not in ("epoch", "world", "nodes", "hit_ratio_min")}
                     for r in res.rows]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
