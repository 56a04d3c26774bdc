"""Correlated subscriptions and skewed publication rates (Vitis, IPDPS 2011, section IV-A, IV-D).

Paper: F. Rahimian, S. Girdzijauskas, A. H. Payberah, S. Haridi, "Vitis: A
Gossip-based Hybrid Overlay for Internet-scale Publish/Subscribe", IPDPS
2011.  Section IV-A (after Wong et al., INFOCOM 2000) defines three
subscription patterns over 5,000 topics, 50 subscriptions per node:

* ``random``: "nodes select 50 out of 5000 topics uniformly at random";
* ``low``: "nodes group 5000 topics into 100 buckets and select 50 topics
  uniformly at random from 5 different buckets (10 topics from each bucket)";
* ``high``: "... from 2 buckets (25 topics from each bucket)".

In all three the expected popularity of every topic is the same (the paper:
"the average topic popularity ... is uniform"); only the interest correlation
differs.  Readings chosen: bucket ``b`` holds the contiguous topic ids
``b * size .. (b + 1) * size - 1`` (topic ids are hashed onto the ring, so
contiguity carries no meaning there); a node's buckets are distinct and drawn
uniformly, its topics inside a bucket distinct and uniform.  ``random`` is
the one-bucket case (all topics in one bucket).

Section IV-D: "a power-law function, with a parameter alpha, to define the
distribution of events rate on different topics" (alpha 0.3 .. 3).  Reading:
the topic of rank ``r`` (1 = hottest) has rate ``r ** -alpha``; ranks are a
seeded random permutation of the topics, so hot topics are spread over the
buckets instead of all sitting in bucket 0.  Rates are normalised to sum to
the number of topics (mean 1), so ``alpha = 0`` is the uniform setting.

Section IV-E (Twitter): every user is a topic, published on by that user
(reading A9 of ``docs/vitis.md``); :func:`with_owner_subscriptions` makes each
user a member of its own topic so that the publisher is in its topic's group.

Examples
--------
>>> inst = correlated_instance(200, correlation="high", seed=1)
>>> inst.n_nodes, inst.n_topics, set(inst.n_subs.tolist())
(200, 5000, {50})
>>> len(np.unique(inst.topics_of(0) // 50))
2
>>> r = power_law_rates(5, 1.0, np.random.default_rng(0))
>>> round(float(r.sum()), 6), sorted(np.round(r / r.max(), 3).tolist())
(5.0, [0.2, 0.25, 0.333, 0.5, 1.0])
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import as_float, as_int, check_memory

__all__ = [
    "CORRELATIONS",
    "correlated_instance",
    "correlation_buckets",
    "power_law_rates",
    "with_owner_subscriptions",
]

#: correlation level -> buckets each node draws from (section IV-A, 50 subscriptions)
CORRELATIONS = {"random": 0, "low": 5, "high": 2}


def correlation_buckets(correlation: str, subs: int, buckets: int) -> tuple[int, int]:
    """``(buckets per node, topics per chosen bucket)`` of a correlation level.

    ``random`` draws from one bucket holding every topic.

    Examples
    --------
    >>> correlation_buckets("low", 50, 100), correlation_buckets("high", 50, 100)
    ((5, 10), (2, 25))
    >>> correlation_buckets("random", 50, 100)
    (1, 50)
    """
    if correlation not in CORRELATIONS:
        raise ParameterError(
            f"unknown correlation {correlation!r}; allowed: {', '.join(CORRELATIONS)}",
            key="correlation",
        )
    per_node = CORRELATIONS[correlation]
    if per_node == 0:
        return 1, subs
    if subs % per_node:
        raise ParameterError(
            f"correlation {correlation!r} splits subscriptions over {per_node} buckets; "
            f"subs must be a multiple of {per_node}, got {subs}",
            key="subs",
        )
    if per_node > buckets:
        raise ParameterError(
            f"correlation {correlation!r} needs {per_node} buckets, got {buckets}", key="buckets"
        )
    return per_node, subs // per_node


def _pick(rng: np.random.Generator, rows: int, pool: int, k: int) -> np.ndarray:
    """``(rows, k)`` distinct uniform draws from ``range(pool)`` per row, sorted."""
    keys = rng.random((rows, pool))
    return np.sort(np.argpartition(keys, k - 1, axis=1)[:, :k], axis=1)


def correlated_instance(
    nodes: int,
    *,
    topics: int = 5000,
    buckets: int = 100,
    subs: int = 50,
    correlation: str = "random",
    alpha: float = 0.0,
    seed: int = 0,
    chunk: int = 1024,
) -> Instance:
    """A random / low / high correlation workload of Vitis section IV-A.

    Parameters
    ----------
    nodes : int
        Number of nodes (10,000 in the paper).
    topics, buckets, subs : int
        5,000 topics in 100 buckets, 50 subscriptions per node (the paper's).
    correlation : {"random", "low", "high"}
        Buckets per node: ``random`` none (all topics uniform), ``low`` 5,
        ``high`` 2.
    alpha : float
        Publication-rate skew (:func:`power_law_rates`); ``0`` = uniform.
    seed : int
        Draws from the ``"workload"`` stream (and ``"rates"`` for the ranks).

    Returns
    -------
    Instance
        With ``topic_rates`` set and ``meta`` naming the setting.

    Examples
    --------
    >>> inst = correlated_instance(50, topics=100, buckets=10, subs=10, correlation="low",
    ...                            seed=3)
    >>> sorted(np.bincount(inst.topics_of(7) // 10, minlength=10).tolist())[-5:]
    [2, 2, 2, 2, 2]
    >>> correlated_instance(5, correlation="medium")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: unknown correlation 'medium'; allowed: random, low, high
    """
    nodes = as_int("correlated workload", "nodes", nodes, minimum=1)
    topics = as_int("correlated workload", "topics", topics, minimum=1)
    buckets = as_int("correlated workload", "buckets", buckets, minimum=1)
    subs = as_int("correlated workload", "subs", subs, minimum=1)
    seed = as_int("correlated workload", "seed", seed, minimum=0)
    alpha = as_float("correlated workload", "alpha", alpha, low=0.0, high=100.0)
    if topics % buckets:
        raise ParameterError(
            f"correlated workload: {topics} topics do not split into {buckets} equal buckets",
            key="buckets",
        )
    per_node, per_bucket = correlation_buckets(correlation, subs, buckets)
    size = topics if correlation == "random" else topics // buckets
    if per_bucket > size:
        raise ParameterError(
            f"correlated workload: {per_bucket} topics per bucket exceed its {size} topics",
            key="subs",
        )
    check_memory(
        f"a correlated workload of {nodes:,} nodes and {topics:,} topics",
        8.0 * min(nodes, chunk) * max(size * per_node, buckets) + 24.0 * nodes * subs,
    )
    rng = RngStreams(seed).stream("workload")
    out = np.empty((nodes, subs), dtype=np.int32)
    for start in range(0, nodes, chunk):
        rows = min(nodes, start + chunk) - start
        if correlation == "random":
            out[start : start + rows] = _pick(rng, rows, topics, subs)
            continue
        chosen = _pick(rng, rows, buckets, per_node)  # (rows, per_node)
        inner = _pick(rng, rows * per_node, size, per_bucket).reshape(rows, per_node, per_bucket)
        out[start : start + rows] = (chosen[:, :, None] * size + inner).reshape(rows, subs)
    indptr = np.arange(nodes + 1, dtype=np.int64) * subs
    rates = power_law_rates(topics, alpha, RngStreams(seed).stream("rates"))
    meta = {
        "workload": "correlated",
        "correlation": correlation,
        "buckets": buckets,
        "subs": subs,
        "alpha": alpha,
        "seed": seed,
    }
    return Instance(nodes, topics, indptr, out.reshape(-1), topic_rates=rates, meta=meta)


def power_law_rates(topics: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Publication rate per topic: rank ``r`` gets ``r ** -alpha``, ranks a random permutation.

    Normalised to mean 1 (sum = ``topics``).  Section IV-D: at ``alpha = 3``
    "almost all the events are published on a single topic".

    Examples
    --------
    >>> r = power_law_rates(5000, 3.0, np.random.default_rng(0))
    >>> round(float(r.max() / r.sum()), 2)
    0.83
    >>> power_law_rates(4, 0.0, np.random.default_rng(0)).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    rank = rng.permutation(topics) + 1.0
    w = rank ** -float(alpha)
    return w * (topics / w.sum())


def with_owner_subscriptions(instance: Instance) -> Instance:
    """Every user of a social instance (node ``i`` = topic ``i``) subscribed to its own topic.

    Vitis section IV-E: "both topics and nodes refer to the users"; the owner
    of a topic publishes on it (reading A9), so it belongs to its group.

    Examples
    --------
    >>> inst = Instance.from_lists([[1], [0], [0, 2]], n_topics=3)
    >>> [with_owner_subscriptions(inst).topics_of(i).tolist() for i in range(3)]
    [[0, 1], [0, 1], [0, 2]]
    """
    n = instance.n_nodes
    if instance.n_topics != n:
        raise ParameterError(
            f"owner subscriptions need one topic per user, got {n} nodes and "
            f"{instance.n_topics} topics"
        )
    m = instance.matrix.tolil()
    m.setdiag(1)
    return Instance.from_matrix(m.tocsr(), topic_rates=instance.topic_rates,
                                meta={**instance.meta, "owner_subscribed": True})
