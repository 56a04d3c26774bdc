"""LowODA's maximum degree D(ρ) against ρ, seed by seed, beside MinMaxODA's (OMen Table 1).

The OMen paper states only asymptotic bounds for LowODA (Table 1, Lemma 1: maximum degree
``O((|V|/ρ) log |V||T|)``), so what a reproduction can report is the trend of a greedy:
D(1) against D(2) against D(4), every ρ against MinMaxODA's D (the ρ → ∞ end), and how far
D moves between neighbouring ρ beyond ρ ≈ 3.  Builds run in one process (the degrees do not
depend on it), seeded as ``hedgerow build lowoda --seed S`` seeds its ties.

Usage::

    python benchmarks/tco_rho_trend.py --settings fb1k,syn2k-unif,syn2k-zipf,syn2k-expo,genoda \\
        --seeds 1-10 --rhos 1,2,3,4,8,sqrt
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hedgerow.model import RngStreams
from hedgerow.protocols.tco.engine import tco_augment
from tco_build import instance


def max_degree(inst, rule: str, rho: float, seed: int) -> int:
    e = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule=rule, rho=rho,
                    rng=RngStreams(seed).child("protocol:tco").stream("ties"))
    return int(np.bincount(e.ravel(), minlength=inst.n_nodes).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default="fb1k,syn2k-unif,syn2k-zipf,syn2k-expo,genoda")
    ap.add_argument("--seeds", default="1-10", help="A-B or a comma list")
    ap.add_argument("--rhos", default="1,2,3,4,8,sqrt", help="'sqrt' = √n")
    a = ap.parse_args()
    if "-" in a.seeds:
        lo, hi = map(int, a.seeds.split("-"))
        seeds = list(range(lo, hi + 1))
    else:
        seeds = [int(s) for s in a.seeds.split(",")]
    print(f"seeds {seeds[0]}-{seeds[-1]}; D = maximum degree; mean over seeds, then per seed")
    for setting in a.settings.split(","):
        rows: dict[str, list[int]] = {}
        for seed in seeds:
            inst = instance(setting, seed)
            for r in a.rhos.split(","):
                rho = math.sqrt(inst.n_nodes) if r == "sqrt" else float(r)
                rows.setdefault(r, []).append(max_degree(inst, "lowoda", rho, seed))
            rows.setdefault("minmaxoda", []).append(max_degree(inst, "minmaxoda", 1.0, seed))
        d = {k: np.array(v) for k, v in rows.items()}
        means = ", ".join(f"D({k}) {v.mean():.2f}" for k, v in d.items())
        print(f"{setting}: {means}")
        n = len(seeds)
        if {"1", "2", "4"} <= set(d):
            chain = int(((d["1"] > d["2"]) & (d["2"] > d["4"])).sum())
            print(f"  D(1) > D(2) > D(4): {chain} of {n} seeds; D(1) > D(2): "
                  f"{int((d['1'] > d['2']).sum())}; D(2) > D(4): {int((d['2'] > d['4']).sum())}; "
                  f"D(2) = D(4): {int((d['2'] == d['4']).sum())}")
        lowoda = [k for k in d if k != "minmaxoda"]
        below = {k: int((d[k] < d["minmaxoda"]).sum()) for k in lowoda}
        gap = {k: int((d["minmaxoda"] - d[k]).max()) for k in lowoda}
        print("  D(ρ) < MinMaxODA's D (seeds; largest shortfall): "
              + ", ".join(f"ρ={k}: {below[k]} ({max(gap[k], 0)})" for k in lowoda))
        beyond = [k for k in lowoda if k not in ("1", "2")]
        for x, y in itertools.pairwise(beyond):
            step = d[y] - d[x]
            print(f"  ρ {x} → {y}: D rises on {int((step > 0).sum())} seeds, falls on "
                  f"{int((step < 0).sum())}, largest |step| {int(np.abs(step).max())}")


if __name__ == "__main__":
    main()
