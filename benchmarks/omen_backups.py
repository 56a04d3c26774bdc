"""OMen section 6.3, Figures 3-4: backup sets built greedily vs by primal-dual.

OMen-G's setting: every node's backup set drawn from all other nodes (global
candidates), lambda = 3, on the synthetic 2K workloads (2,000 nodes, 200
topics, power-law subscription sizes in [10, 90], exponent 2; topic
popularity uniform, Zipf(2) or exponential).  Prints, per builder: mean
backup-set size (% of nodes; paper: PD 2.8 %, greedy 1.1 % under Unif), the
Pearson correlation of set size with subscription size (paper: "linearly
proportional"), in-degree range, share of nodes with in-degree < 5 (paper
greedy: 42.9 / 89.8 / 95.2 % for Unif / Zipf / Expo) and nodes with
in-degree > 100 and the share of nodes they serve (paper greedy: ~1 %,
35.8 / 50 / 66.9 %); PD's in-degrees 21-59 (Unif).

Builders: ``greedy``; ``pd`` (the default primal-dual: a random uncovered
topic's dual is raised until a subscriber priced ``1 + backup load`` is tight,
the tight one with most uncovered topics joins; reading R-5); ``pd-random``
(a uniform random subscriber of the random topic) and ``pd-max-gain`` (the
literal sentence with unit prices).  Sets are built node by node in a random
order; ``--passes`` rebuilds every set that many times (each rebuild priced by
the other sets of that moment, as the gossip refreshes do).

Usage::

    python benchmarks/omen_backups.py [--nodes 2000] [--lam 3] [--seed 1] [--passes 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hedgerow.model import Instance, RngStreams
from hedgerow.protocols.omen.backups import backup_set
from hedgerow.workloads.popularity import popularity


def powerlaw_instance(n, topics, lo, hi, alpha, law, rng):
    k = np.arange(lo, hi + 1)
    p = k ** -float(alpha)
    sizes = rng.choice(k, size=n, p=p / p.sum())
    probs = np.asarray(popularity(law, topics), dtype=np.float64)
    probs = probs / probs.sum()
    subs = [np.sort(rng.choice(topics, size=int(s), replace=False, p=probs)) for s in sizes]
    return Instance.from_lists(subs, n_topics=topics)


_BUILDERS = {
    "greedy": ("greedy", "random"),
    "pd": ("pd", "dual"),
    "pd-random": ("pd", "random"),
    "pd-max-gain": ("pd", "max-gain"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--topics", type=int, default=200)
    ap.add_argument("--lam", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--cover", default="multi", choices=["multi", "repeat"])
    ap.add_argument("--builders", nargs="+", default=["greedy", "pd", "pd-random"],
                    choices=["greedy", "pd", "pd-random", "pd-max-gain"])
    a = ap.parse_args()
    streams = RngStreams(a.seed)
    for pop in ("uniform", "zipf2", "nyse"):
        inst = powerlaw_instance(a.nodes, a.topics, 10, 90, 2.0, pop,
                                 streams.stream(f"workload:{pop}"))
        everyone = np.arange(inst.n_nodes)
        for builder in a.builders:
            rng = streams.stream(f"backups:{pop}:{builder}")
            kind, pick = _BUILDERS[builder]
            t = time.perf_counter()
            indeg = np.zeros(inst.n_nodes, dtype=np.int64)
            chosen = [np.zeros(0, dtype=np.int64)] * inst.n_nodes
            for _ in range(a.passes):
                for v in rng.permutation(inst.n_nodes).tolist():
                    indeg[chosen[v]] -= 1
                    b = backup_set(inst.sub_indptr, inst.sub_topics, v, everyone, a.lam, kind,
                                   rng, pick=pick, n_topics=inst.n_topics,
                                   load=indeg if pick == "dual" else None, cover=a.cover)
                    indeg[b] += 1
                    chosen[v] = b
            sizes = np.array([len(b) for b in chosen], dtype=np.float64)
            hubs = np.flatnonzero(indeg > 100)
            served = np.mean([np.isin(b, hubs).any() for b in chosen]) if len(hubs) else 0.0
            print(json.dumps({
                "popularity": pop, "builder": builder, "cover": a.cover,
                "mean_size_pct": round(100 * sizes.mean() / a.nodes, 3),
                "size_vs_subs_pearson": round(float(np.corrcoef(sizes, inst.n_subs)[0, 1]), 3),
                "indeg_min": int(indeg.min()), "indeg_max": int(indeg.max()),
                "indeg_mean": round(float(indeg.mean()), 1),
                "indeg_below5_pct": round(100 * float((indeg < 5).mean()), 1),
                "hubs_over100_pct": round(100 * len(hubs) / a.nodes, 2),
                "hubs_serve_pct": round(100 * float(served), 1),
                "seconds": round(time.perf_counter() - t, 2),
            }), flush=True)


if __name__ == "__main__":
    main()
