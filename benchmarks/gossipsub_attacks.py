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
(``attacker_slot_share``), the opportunistic grafts the run sent
(``og_grafts``; only with scoring, and only when a mesh's median score falls
below the threshold), and the run's CPU and wall seconds with the load
average.

``--oppgraft`` runs the test plans' opportunistic-grafting configurations
(``scripts/configs/1k-attack-*-oppgraft.json``): grafting every 10 heartbeats
(``opportunistic_graft_ticks``) with the threshold each sets
(``opportunistic_graft_threshold``: 1 for cold boot, 10 for covert flash and
attack at dawn; the saved plans without ``oppgraft`` use 60 and 0, our
worlds' values, under which a mesh of peers scored >= 0 never grafts
opportunistically); its covert flash is the plan's cold-boot covert flash
(honest nodes connect 10 s after the sybils).  ``--minutes`` sets the length
of the message schedule (the covert-flash plans run 5 minutes: the flash at
2 minutes, then 3 minutes of attack).

Usage::

    python benchmarks/gossipsub_attacks.py [--seed 1] [--only eclipse,censor] \
        [--nodes 1250 --attackers 250 --messages 3600 | --minutes 5] [--oppgraft] \
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any

from hedgerow.scenarios import make_protocol, make_world, run_protocol, run_scenario
from hedgerow.scenarios.world import resolve_scenario

WORLDS = ("baseline", "eclipse", "censor", "cold-boot", "covert-flash", "dawn", "broken-promises")
#: the plans' opportunistic-grafting configurations (``1k-attack-cold-boot-oppgraft.json``,
#: ``1k-attack-cold-boot-covert-flash-oppgraft.json``, ``1k-attack-dawn-oppgraft.json``):
#: GossipSub parameters, world settings
OPPGRAFT: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "cold-boot": ({"opportunistic_graft_ticks": 10, "opportunistic_graft_threshold": 1.0}, {}),
    "covert-flash": ({"opportunistic_graft_ticks": 10, "opportunistic_graft_threshold": 10.0},
                     {"honest_join_s": 10.0}),
    "dawn": ({"opportunistic_graft_ticks": 10, "opportunistic_graft_threshold": 10.0}, {}),
}
COLUMNS = ("receive_rate", "delay_p50_ms", "delay_p90_ms", "delay_p99_ms",
           "victim_receive_rate", "victim_delay_mean_ms", "attacker_slot_share",
           "mesh_degree_mean", "prune_per_node_heartbeat")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(world: str, scoring: bool, seed: int, params: dict[str, Any] | None = None,
        **settings: Any) -> dict[str, Any]:
    """One run's row (the columns above, plus ``og_grafts``, the peer-exchange counts
    ``px_offered``, ``px_accepted``, ``px_new``, and ``cpu_s``, ``wall_s``, ``load``).

    The same run as ``run_scenario("gossipsub", f"gs-{world}", seed=seed, params=...,
    **settings)``, built step by step to read the engine's opportunistic-graft count.
    """
    cpu, wall = _cpu(), time.perf_counter()
    w = make_world(resolve_scenario(f"gs-{world}", **settings), seed=seed)
    proto = make_protocol("gossipsub", w, {"scoring": scoring, **(params or {})})
    row = run_protocol(proto, w).rows[-1]
    out: dict[str, Any] = {"world": world, "scoring": scoring, **(params or {})}
    out.update({k: row.get(k) for k in COLUMNS})
    eng = proto.engine_  # type: ignore[attr-defined]
    out["og_grafts"] = eng.opportunistic_grafts
    out.update({f"px_{k}": v for k, v in eng.peer_exchange().items()})
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
    ap.add_argument("--minutes", type=float, default=None,
                    help="minutes of messages at the world's 20 per second (instead of "
                         "--messages)")
    ap.add_argument("--oppgraft", action="store_true",
                    help="the plans' opportunistic-grafting configurations (cold-boot, "
                         "covert-flash, dawn)")
    ap.add_argument("--json", default=None, help="write the rows to this file")
    a = ap.parse_args(argv)
    worlds = [w for w in a.only.split(",") if w]
    bad = [w for w in worlds if w not in WORLDS]
    if bad:
        ap.error(f"--only: unknown world {bad[0]!r}; allowed: {', '.join(WORLDS)}")
    if a.oppgraft:
        bad = [w for w in worlds if w not in OPPGRAFT]
        if bad:
            ap.error(f"--oppgraft: no plan for {bad[0]!r}; allowed: {', '.join(OPPGRAFT)}")
    if a.minutes is not None:
        if a.messages is not None:
            ap.error("--minutes and --messages: give one")
        a.messages = round(a.minutes * 60 * 20)
    settings = {k: v for k, v in (("nodes", a.nodes), ("attackers", a.attackers),
                                  ("messages", a.messages)) if v is not None}
    run_scenario("gossipsub", "gs-cold-boot", seed=0, nodes=60, attackers=10,
                 messages=20)  # compile the kernel once, outside the timings
    rows = []
    print("| world | scoring | " + " | ".join(COLUMNS) + " | og_grafts | CPU s | wall s | load |")
    print("|" + "---|" * (len(COLUMNS) + 6))
    for w in worlds:
        for scoring in (False, True):
            kw = dict(settings)
            if w == "baseline":
                kw.pop("attackers", None)
                if "nodes" in kw:  # the honest nodes alone
                    kw["nodes"] = kw["nodes"] - (a.attackers or 250)
            params: dict[str, Any] = {}
            if a.oppgraft:
                params, extra = OPPGRAFT[w]
                kw.update(extra)
            r = run(w, scoring, a.seed, params, **kw)
            rows.append(r)
            print(f"| {w} | {'on' if scoring else 'off'} | "
                  + " | ".join(_cell(r[k]) for k in COLUMNS)
                  + f" | {r['og_grafts']} | {r['cpu_s']} | {r['wall_s']} | {r['load']} |",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
