"""Synthetic workloads with power-law subscription sizes (OMen §6.1).

OMen's synthetic instances: ``|V| = 2000`` nodes, ``|T| = 200`` topics,
``|v.topics| ∈ [10, 90]`` following a power law, topics drawn from an
exponential (NYSE), Zipf (α = 2) or uniform popularity.  The paper does not
give the power law's exponent; we take ``α = 2`` on the integers of
``[10, 90]`` (``P(s) ∝ s^-α``), mean ≈ 24 subscriptions, documented in
``docs/tco.md``.  Each node's topics are then drawn without replacement with
the popularity weights (:func:`hedgerow.workloads.subscriptions.draw_subscriptions`).

Examples
--------
>>> inst = powerlaw_instance(nodes=300, topics=100, popularity="zipf2", seed=1)
>>> int(inst.n_subs.min()) >= 10, int(inst.n_subs.max()) <= 90, inst.n_nodes
(True, True, 300)
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.workloads.popularity import popularity as popularity_vector
from hedgerow.workloads.subscriptions import draw_subscriptions

__all__ = ["powerlaw_instance", "powerlaw_sizes"]


def powerlaw_sizes(n: int, lo: int, hi: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` integers in ``[lo, hi]`` with ``P(s) ∝ s^-alpha``.

    Examples
    --------
    >>> s = powerlaw_sizes(10000, 10, 90, 2.0, np.random.default_rng(0))
    >>> bool(20 < s.mean() < 28), int(s.min()), int(s.max()) <= 90
    (True, 10, True)
    """
    if not (1 <= lo <= hi):
        raise ParameterError(f"subscription sizes need 1 <= lo <= hi, got {lo}:{hi}")
    s = np.arange(lo, hi + 1, dtype=np.float64)
    w = s ** (-float(alpha))
    return rng.choice(s.astype(np.int64), size=int(n), p=w / w.sum())


def powerlaw_instance(*, nodes: int = 2000, topics: int = 200, popularity: str = "uniform",
                      lo: int = 10, hi: int = 90, alpha: float = 2.0, seed: int = 0) -> Instance:
    """OMen's synthetic instance: power-law subscription sizes, the given topic popularity.

    ``popularity``: ``uniform``, ``zipf2`` or ``nyse`` (the paper's Unif, Zipf
    and Expo), or any name of :func:`hedgerow.workloads.popularity.popularity`.
    """
    if hi > topics:
        raise ParameterError(f"subscription sizes up to {hi} exceed the {topics} topics")
    probs = popularity_vector(popularity, int(topics))
    rng = RngStreams(seed).stream("workload")
    sizes = powerlaw_sizes(nodes, lo, hi, alpha, rng)
    rows: list[np.ndarray] = [np.zeros(0, np.int64)] * int(nodes)
    for k in np.unique(sizes):
        who = np.flatnonzero(sizes == k)
        ptr, flat = draw_subscriptions(len(who), probs, (int(k), int(k)), rng)
        for i, v in enumerate(who):
            rows[v] = flat[ptr[i]:ptr[i + 1]]
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    flat = np.concatenate(rows).astype(np.int64) if nodes else np.zeros(0, np.int64)
    meta = {"popularity": popularity, "popularity_vector": probs,
            "subs": f"powerlaw:{alpha:g}:{lo}:{hi}", "seed": int(seed)}
    return Instance(int(nodes), int(topics), indptr, flat, meta=meta)
