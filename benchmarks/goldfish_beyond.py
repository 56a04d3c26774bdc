"""Goldfish and Perigee beyond the paper: withholding fast relays, churn, static baselines.

Runs, on the same worlds (one per seed):

* ``goldfish-withhold`` with ``attack=withhold`` and its honest control ``attack=relay``;
* ``goldfish-churn`` (on/off churn) and ``goldfish-random`` (no churn);

for Goldfish, Perigee (``preset=goldfish``), the GossipSub-style mesh and the
random graph (the static baselines build once and report one epoch, and are
not run under churn: the epoch loop's churn is for adaptive protocols).  Every
epoch row goes to ``--out`` (JSON lines, resumable: finished runs are
skipped); the summary table is printed at the end::

    python benchmarks/goldfish_beyond.py --seeds 1 2 3 --epochs 100 --out results/gf-beyond.jsonl

Summary columns, per (case, protocol), means over seeds: the last epoch's
``wasted_latency_mean_ms``, ``wasted_latency_p50_ms``, ``t50_ms``, ``t90_ms``;
for the relay cases the least and the mean over epochs of
``honest_exploit_peer_share``, the mean ``attacker_exploit_share`` and the
tenure of attackers in exploitation slots; for churn the connection churn per
node per epoch (refill dials + selection dials) and the dead peers selected.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.run import make_protocol
from hedgerow.scenarios.world import make_world

CASES = {
    "withhold": ("goldfish-withhold", {"attack": "withhold"}),
    "relay": ("goldfish-withhold", {"attack": "relay"}),
    "churn": ("goldfish-churn", {}),
    "no-churn": ("goldfish-random", {}),
}
#: static baselines: one build, one epoch (not run under churn)
STATIC = ("gossipsub-split", "random-graph")
PROTOCOLS = {
    "goldfish": {},
    "perigee": {"preset": "goldfish"},
    "gossipsub-split": {},
    "random-graph": {},
}


def run_one(case: str, protocol: str, seed: int, epochs: int,
            attackers: int | None = None) -> list[dict]:
    scenario, kw = CASES[case]
    kw = dict(kw)
    if attackers is not None and "attack" in kw:
        kw["attackers"] = attackers
    world = make_world(scenario, seed=seed, epochs=epochs, **kw)
    proto = make_protocol(protocol, world, PROTOCOLS[protocol])
    t0 = time.perf_counter()
    rows = run_protocol(proto, world).rows
    wall = time.perf_counter() - t0
    label = case if attackers is None or "attack" not in kw else f"{case}-{attackers}"
    for r in rows:
        r.update(case=label, protocol=protocol, seed=seed, world=world.fingerprint())
    rows[-1]["seconds"] = round(wall, 2)
    rows[-1]["load_average"] = os.getloadavg()[0]
    return rows


def _mean(xs: list) -> float | None:
    v = [x for x in xs if x is not None]
    return float(np.mean(v)) if v else None


def summarise(rows: list[dict]) -> list[dict]:
    runs: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        runs[(r["case"], r["protocol"], r["seed"])].append(r)
    per: dict[tuple, list[dict]] = defaultdict(list)
    for (case, proto, _seed), rr in runs.items():
        rr.sort(key=lambda r: r["epoch"])
        last = rr[-1]
        s = {k: last.get(k) for k in ("wasted_latency_mean_ms", "wasted_latency_p50_ms",
                                       "t50_ms", "t90_ms", "attacker_tenure_mean_epochs",
                                       "attacker_tenure_max_epochs")}
        # latency averaged over the second half of the run (less noise than one epoch)
        half = rr[len(rr) // 2:]
        s["t50_late_ms"] = _mean([r.get("t50_ms") for r in half])
        s["t90_late_ms"] = _mean([r.get("t90_ms") for r in half])
        s["wasted_late_ms"] = _mean([r.get("wasted_latency_mean_ms") for r in half])
        share = [r.get("honest_exploit_peer_share") for r in rr]
        if any(x is not None for x in share):
            s["honest_peer_min"] = min(x for x in share if x is not None)
            s["honest_peer_mean"] = _mean(share)
            s["attacker_share_mean"] = _mean([r.get("attacker_exploit_share") for r in rr])
        if "online_nodes" in last:
            s["refill_dials"] = _mean([r.get("churn_dials_per_node") for r in rr])
            s["select_dials"] = _mean([r.get("dials_per_node") for r in rr])
            s["dead_selected"] = sum(r.get("dead_peers_selected") or 0 for r in rr)
        elif "dials_per_node" in last:
            s["select_dials"] = _mean([r.get("dials_per_node") for r in rr])
        s["seconds"] = last.get("seconds")
        s["load_average"] = last.get("load_average")
        per[(case, proto)].append(s)
    out = []
    for (case, proto), ss in sorted(per.items()):
        row = {"case": case, "protocol": proto, "seeds": len(ss)}
        for k in ss[0]:
            vals = [s.get(k) for s in ss]
            row[k] = _mean(vals) if k != "attacker_tenure_max_epochs" else max(
                (v for v in vals if v is not None), default=None)
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    ap.add_argument("--attackers", type=int, default=None,
                    help="relays in the withhold/relay cases (default: the scenario's 8)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rows: list[dict] = []
    if args.out.exists():
        rows = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
    done = {(r["case"], r["protocol"], r["seed"]) for r in rows if "seconds" in r}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for case in args.cases:
            for proto in args.protocols:
                label = case
                if args.attackers is not None and case in ("withhold", "relay"):
                    label = f"{case}-{args.attackers}"
                if (label, proto, seed) in done:
                    continue
                if case == "churn" and proto in STATIC:
                    continue  # a static overlay has no per-epoch churn rule here
                new = run_one(case, proto, seed, args.epochs, args.attackers)
                with args.out.open("a") as f:
                    for r in new:
                        f.write(json.dumps(r) + "\n")
                rows.extend(new)
                print(f"{case:9s} {proto:12s} seed {seed}: {new[-1]['seconds']} s "
                      f"(load {new[-1]['load_average']:.2f})", flush=True)
    keep = [r for r in rows if r["epoch"] < args.epochs and r["seed"] in args.seeds
            and not (r["case"] == "churn" and r["protocol"] in STATIC)
            and any(r["case"].startswith(c) for c in args.cases)]
    for r in summarise(keep):
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}))


if __name__ == "__main__":
    main()
