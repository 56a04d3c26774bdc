"""GossipSub under the attacks of the v1.1 evaluation, with peer scoring off and on (issue 29).

The worlds are the named scenarios ``gs-baseline``, ``gs-eclipse``,
``gs-censor``, ``gs-cold-boot``, ``gs-covert-flash``, ``gs-dawn`` and
``gs-broken-promises``
(:mod:`hedgerow.scenarios.world.catalogue`; ``docs/gossipsub.md``,
"Attacks"): 1,000 honest nodes and 250 sybils at the report's settings, 2 KiB
messages at 20 per second for 180 s after 30 s of warm-up.  Each world is run
with ``scoring`` off and on (the evaluation's score parameters,
``score_params=hardening``), through :func:`hedgerow.scenarios.run_scenario`,
as ``hedgerow run gossipsub --scenario gs-NAME -p scoring=true --json`` does.

Reported per run: delivery to the honest subscribers (``receive_rate``), the
delay percentiles over the honest deliveries, the victim's columns (the
censored publisher's messages; every message at the eclipsed target), the
sybils' share of the honest nodes' mesh links at the end
(``attacker_slot_share``), and the run's CPU and wall seconds with the load
average.

Usage::

    python benchmarks/gossipsub_attacks.py [--seed 1] [--only eclipse,censor] \
        [--nodes 1250 --attackers 250 --messages 3600] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any

from hedgerow.scenarios import run_scenario

WORLDS = ("baseline", "eclipse", "censor", "cold-boot", "covert-flash", "dawn", "broken-promises")
COLUMNS = ("receive_rate", "delay_p50_ms", "delay_p90_ms", "delay_p99_ms",
           "victim_receive_rate", "victim_delay_mean_ms", "attacker_slot_share",
           "mesh_degree_mean", "prune_per_node_heartbeat")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(world: str, scoring: bool, seed: int, **settings: Any) -> dict[str, Any]:
    """One run's row (the columns above, plus ``cpu_s``, ``wall_s``, ``load``)."""
    cpu, wall = _cpu(), time.perf_counter()
    row = run_scenario("gossipsub", f"gs-{world}", seed=seed, params={"scoring": scoring},
                       **settings)[-1]
    out = {"world": world, "scoring": scoring}
    out.update({k: row.get(k) for k in COLUMNS})
    out["cpu_s"] = round(_cpu() - cpu, 2)
    out["wall_s"] = round(time.perf_counter() - wall, 2)
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=",".join(WORLDS), help="worlds, comma-separated")
    ap.add_argument("--nodes", type=int, default=None, help="nodes, sybils included")
    ap.add_argument("--attackers", type=int, default=None)
    ap.add_argument("--messages", type=int, default=None)
    ap.add_argument("--json", default=None, help="write the rows to this file")
    a = ap.parse_args(argv)
    worlds = [w for w in a.only.split(",") if w]
    bad = [w for w in worlds if w not in WORLDS]
    if bad:
        ap.error(f"--only: unknown world {bad[0]!r}; allowed: {', '.join(WORLDS)}")
    settings = {k: v for k, v in (("nodes", a.nodes), ("attackers", a.attackers),
                                  ("messages", a.messages)) if v is not None}
    run_scenario("gossipsub", "gs-cold-boot", seed=0, nodes=60, attackers=10,
                 messages=20)  # compile the kernel once, outside the timings
    rows = []
    print("| world | scoring | " + " | ".join(COLUMNS) + " | CPU s | wall s | load |")
    print("|" + "---|" * (len(COLUMNS) + 5))
    for w in worlds:
        for scoring in (False, True):
            kw = dict(settings)
            if w == "baseline":
                kw.pop("attackers", None)
                if "nodes" in kw:  # the honest nodes alone
                    kw["nodes"] = kw["nodes"] - (a.attackers or 250)
            r = run(w, scoring, a.seed, **kw)
            rows.append(r)
            print(f"| {w} | {'on' if scoring else 'off'} | "
                  + " | ".join(_cell(r[k]) for k in COLUMNS)
                  + f" | {r['cpu_s']} | {r['wall_s']} | {r['load']} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
