"""Subscription draws: ``T`` topics per node without replacement, topic ``i`` w.p. ``p_i``.

SpiderCast section 3.1: each node subscribes to ``T`` topics, ``T`` fixed or
uniform in ``[min:max]``; each topic is chosen with probability ``p_i``
(successive sampling without replacement).  We draw all nodes at once with the
Efraimidis–Spirakis keys ``u^(1/p_i)`` (equivalently, the ``T`` largest
Gumbel-perturbed log-weights), which has exactly the law of successive
sampling without replacement, in one vectorised pass.
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import as_int, check_memory
from hedgerow.workloads.popularity import popularity as _popularity_vector


def parse_subs(subs) -> tuple[int, int]:
    """Parse ``10``, ``"10"``, ``"10:30"`` or ``(10, 30)`` into ``(min, max)``.

    Examples
    --------
    >>> parse_subs("10:30"), parse_subs(7)
    ((10, 30), (7, 7))
    """
    if isinstance(subs, (tuple, list)) and len(subs) == 2:
        lo, hi = subs
    elif isinstance(subs, str):
        parts = subs.split(":")
        if len(parts) not in (1, 2):
            raise ParameterError(f"subs {subs!r}: expected S or MIN:MAX")
        try:
            lo, hi = int(parts[0]), int(parts[-1])
        except ValueError:
            raise ParameterError(f"subs {subs!r}: expected whole numbers, S or MIN:MAX") from None
    else:
        lo = hi = subs
    try:
        lo = as_int("make_instance", "subs", lo, minimum=1)
        hi = as_int("make_instance", "subs", hi, minimum=1)
    except ParameterError:
        raise ParameterError(
            f"make_instance: parameter subs must be S or MIN:MAX with whole numbers, got {subs!r}"
        ) from None
    if lo < 1 or hi < lo:
        raise ParameterError(f"subs {subs!r}: need 1 <= MIN <= MAX")
    return lo, hi


def draw_subscriptions(
    n_nodes: int,
    probs: np.ndarray,
    subs: tuple[int, int],
    rng: np.random.Generator,
    *,
    chunk: int = 4096,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw each node's topics; returns CSR ``(indptr, topics)``.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    probs : ndarray
        Topic popularity ``p_i`` (positive entries, need not be normalised).
    subs : (int, int)
        Subscription-list size range ``[min, max]`` (inclusive).
    rng : numpy.random.Generator
        Source of randomness.

    Examples
    --------
    >>> import numpy as np
    >>> indptr, topics = draw_subscriptions(3, np.ones(5), (2, 2), np.random.default_rng(0))
    >>> np.diff(indptr).tolist()
    [2, 2, 2]
    """
    lo, hi = subs
    probs = np.asarray(probs, dtype=np.float64)
    n_topics = len(probs)
    positive = int((probs > 0).sum())
    if hi > positive:
        raise ParameterError(
            f"subs max {hi} exceeds the number of topics that can be drawn"
            f" ({positive} of {n_topics})"
        )
    sizes = rng.integers(lo, hi + 1, size=n_nodes) if hi > lo else np.full(n_nodes, lo)
    logw = np.full(n_topics, -np.inf)
    logw[probs > 0] = np.log(probs[probs > 0])
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    topics = np.empty(indptr[-1], dtype=np.int32)
    for start in range(0, n_nodes, chunk):
        stop = min(n_nodes, start + chunk)
        keys = logw + rng.gumbel(size=(stop - start, n_topics))
        order = np.argsort(-keys, axis=1, kind="stable")[:, :hi]
        for i, row in enumerate(order, start=start):
            topics[indptr[i] : indptr[i + 1]] = np.sort(row[: sizes[i]])
    return indptr, topics


def instance_bytes(nodes: int, topics: int, subs: int) -> float:
    """Estimated bytes of a workload: CSR + CSC, the bit masks, the draw's per-chunk keys.

    Examples
    --------
    >>> instance_bytes(1000, 100, 10) < 16 * 2**20
    True
    """
    csr = 2 * 8.0 * nodes * subs + 2 * 8.0 * (nodes + topics)
    masks = 8.0 * nodes * ((topics + 63) // 64)
    draw = 8.0 * 3 * topics * min(nodes, 4096) + 8.0 * 4 * topics
    return csr + masks + draw


def make_instance(
    *,
    nodes: int,
    topics: int,
    subs=10,
    popularity: str = "rss",
    seed: int = 0,
) -> Instance:
    """A synthetic instance as in SpiderCast section 3.1.

    Parameters
    ----------
    nodes : int
        Number of nodes.
    topics : int
        Number of topics.
    subs : int, str or (int, int)
        Subscriptions per node: ``S`` or ``MIN:MAX`` (uniform).
    popularity : str
        ``rss``, ``zipf1``, ``zipf2``, ``nyse``, ``uniform`` or ``zipf:ALPHA``.
    seed : int
        Seed; the draw uses the ``"workload"`` stream.

    Examples
    --------
    >>> inst = make_instance(nodes=100, topics=20, subs="3:5", popularity="nyse", seed=3)
    >>> inst.n_nodes, int(inst.n_subs.min()) >= 3, int(inst.n_subs.max()) <= 5
    (100, True, True)
    """
    nodes = as_int("make_instance", "nodes", nodes, minimum=1)
    topics = as_int("make_instance", "topics", topics, minimum=1)
    seed = as_int("make_instance", "seed", seed, minimum=0)
    lo, hi = parse_subs(subs)
    check_memory(
        f"a workload of {nodes:,} nodes, {topics:,} topics and {hi} subscriptions",
        instance_bytes(nodes, topics, hi),
    )
    if hi > topics:
        raise ParameterError(f"subs {hi} exceeds the number of topics {topics}")
    probs = _popularity_vector(popularity, int(topics))
    rng = RngStreams(seed).stream("workload")
    indptr, flat = draw_subscriptions(int(nodes), probs, (lo, hi), rng)
    meta = {
        "popularity": popularity,
        "popularity_vector": probs,
        "subs": f"{lo}:{hi}" if hi > lo else str(lo),
        "seed": int(seed),
    }
    return Instance(int(nodes), int(topics), indptr, flat, meta=meta)
