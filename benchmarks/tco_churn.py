"""LowODA-Inc / LowODA-Re (and any maintained protocol) under a named churn scenario.

Per protocol and seed: events replayed, violations (expected 0 for the LowODA variants),
maximum / average degree averaged over the churn sequence, start degrees, median repair CPU
time per event, messages.  OMen's Fig. 9 / Fig. 10 quantities for the central baselines; OMen
itself and SpiderCast run through the same driver.

Usage::

    python benchmarks/tco_churn.py --scenario fb1k-google --protocols lowoda-inc,lowoda-re
    python benchmarks/tco_churn.py --scenario tw1k-google --seeds 1,2,3 --events 300
    python benchmarks/tco_churn.py --scenario fb1k-google --protocols spidercast -p kg=3 -p kr=1
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="fb1k-google")
    ap.add_argument("--protocols", default="lowoda-inc,lowoda-re")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--events", type=int, default=None)
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    from hedgerow.pipeline.inputs import ensure_inputs
    from hedgerow.scenarios.events import CHURN_SCENARIOS, load_churn_scenario, run_events

    ensure_inputs(CHURN_SCENARIOS[a.scenario].inputs())
    params = {}
    for text in a.params:
        k, _, v = text.partition("=")
        params[k] = float(v) if "." in v else int(v)
    out = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        inst, online0, ev = load_churn_scenario(a.scenario, seed=seed)
        for proto in a.protocols.split(","):
            c0 = time.process_time()
            res = run_events(proto, inst, online0, ev, seed=seed, params=dict(params),
                             n_events=a.events)
            s = res.summary
            row = {k: s[k] for k in ("protocol", "seed", "events", "joins", "leaves", "violations",
                                     "start_max_degree", "start_avg_degree", "mean_max_degree",
                                     "mean_avg_degree", "repair_seconds_median",
                                     "repair_cpu_seconds_median", "messages")}
            row["scenario"] = a.scenario
            row["final_max_degree"] = res.rows[-1]["max_degree"] if res.rows else None
            row["cpu_seconds"] = round(time.process_time() - c0, 2)
            out.append(row)
            print(json.dumps(row), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
