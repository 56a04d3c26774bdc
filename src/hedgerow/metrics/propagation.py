"""Broadcast propagation metrics (Goldfish section V-C; Perigee; blocknet; CPPerigee).

Plain functions of arrays; none mutates its inputs.

Wasted latency (Goldfish section V-C)
    "we use only exploitation edges to compute the weighted shortest distance
    to all publishing sources.  The broadcast latency is identified as the
    distance to reach 90% of the publishing probability ... we subtract each
    node's topological latency with their direct connection latency".
    :func:`wasted_latency` computes, for every node ``i`` and publisher ``m``,
    ``w(i, m) = path(m -> i) - delay(m, i)`` where ``path`` is the arrival time
    of a message over the exploitation graph (undirected; each link costs its
    delay, each relay its node delay, the publisher and the receiver none:
    the engine's timing).  Node ``i``'s value is the smallest ``w`` at which
    the publishing probability of the publishers within ``w`` (``i`` itself at
    0) exceeds ``q = 0.9``; publishers ``i`` cannot reach count as ``inf``.
    The authors' code adds the publisher's node delay to both terms, which
    cancels.  :func:`wasted_summary` takes the 25/50/75th percentile (index
    ``ceil(n q) - 1`` of the sorted values, as the authors' extraction script)
    and the mean over a set of nodes (the adaptive ones).

Arrival percentiles
    :func:`arrival_percentiles` per message: the time by which a fraction ``q``
    of the nodes (publisher included, at 0) hold the message, or by which the
    informed nodes hold ``q`` of the publishing weight (CPPerigee's time to a
    fraction of hash power).  :func:`pooled_percentiles` pools every (message,
    node) arrival of a round: this equals blocknet's per-round curve of the
    average number of uninformed nodes crossing ``N (1 - q)``.

Duplicates and churn
    :func:`duplicates_per_node` counts copies a node receives beyond its first
    per message; :func:`connection_churn` counts, per node, the out-links an
    epoch dialled and dropped.

Examples
--------
>>> import numpy as np
>>> lat = np.array([[0, 10, 30], [10, 0, 10], [30, 10, 0.]])
>>> out = np.array([[1], [2], [-1]])          # a line 0 - 1 - 2
>>> w = wasted_latency(out, lat, np.full(3, 5.0), np.array([1.0, 0, 0]))
>>> w.tolist()                                # node 2 hears 0 after 10 + 5 + 10, direct 30
[0.0, 0.0, -5.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

__all__ = [
    "arrival_percentiles",
    "connection_churn",
    "duplicates_per_node",
    "exploit_distances",
    "pooled_percentiles",
    "wasted_latency",
    "wasted_summary",
    "weighted_quantile",
]


def exploit_distances(out: np.ndarray, latency: np.ndarray, proc: np.ndarray) -> np.ndarray:
    """``(n, n)`` arrival time of a message from ``m`` (row) at ``i`` (column) over ``out``.

    ``out`` is an ``(n, d)`` out-link table (``-1`` padded) whose links carry
    traffic both ways; every relay adds its node delay, the endpoints none.
    Unreachable pairs are ``inf``.

    Examples
    --------
    >>> lat = np.array([[0, 10, 30], [10, 0, 10], [30, 10, 0.]])
    >>> exploit_distances(np.array([[1], [2], [-1]]), lat, np.full(3, 5.0))[0].tolist()
    [0.0, 10.0, 25.0]
    """
    out = np.asarray(out, dtype=np.int64)
    n = out.shape[0]
    proc = np.asarray(proc, dtype=np.float64)
    src = np.repeat(np.arange(n), out.shape[1])
    dst = out.reshape(-1)
    ok = (dst >= 0) & (dst != src)
    a, b = src[ok], dst[ok]
    # symmetric weights l + (delta_u + delta_v) / 2: a path's sum is the arrival plus
    # half the node delays of its two endpoints
    w = np.asarray(latency, dtype=np.float64)[a, b] + 0.5 * (proc[a] + proc[b])
    w = np.maximum(w, 1e-12)  # csgraph drops explicit zeros
    dist = dijkstra(_min_dedup(a, b, w, n), directed=False)
    dist = dist - 0.5 * proc[:, None] - 0.5 * proc[None, :]
    np.fill_diagonal(dist, 0.0)
    return dist


def _min_dedup(a: np.ndarray, b: np.ndarray, w: np.ndarray, n: int) -> csr_matrix:
    """An upper-triangular sparse graph with one entry per undirected link."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = lo * n + hi
    order = np.lexsort((w, key))
    key, w = key[order], w[order]
    first = np.r_[True, key[1:] != key[:-1]]
    k = key[first]
    return csr_matrix((w[first], (k // n, k % n)), shape=(n, n))


@numba.njit(cache=True)
def _wasted_rows(dist: np.ndarray, lat: np.ndarray, probs: np.ndarray, q: float) -> np.ndarray:
    n = dist.shape[0]
    out = np.empty(n)
    pubs = np.flatnonzero(probs > 0)
    vals = np.empty(len(pubs))
    for i in range(n):
        for k in range(len(pubs)):
            m = pubs[k]
            vals[k] = 0.0 if m == i else dist[m, i] - lat[m, i]
        order = np.argsort(vals, kind="mergesort")
        acc = 0.0
        res = np.inf
        for k in range(len(order)):
            acc += probs[pubs[order[k]]]
            if acc > q + 1e-12:
                res = vals[order[k]]
                break
        out[i] = res
    return out


def wasted_latency(
    out: np.ndarray,
    latency: np.ndarray,
    proc: np.ndarray,
    probs: np.ndarray,
    q: float = 0.9,
) -> np.ndarray:
    """Per-node wasted latency (ms) at ``q`` of the publishing probability.

    Parameters
    ----------
    out : numpy.ndarray
        ``(n, d)`` exploitation out-links (``-1`` padded), links used both ways.
    latency : numpy.ndarray
        ``(n, n)`` link delays (ms).
    proc : numpy.ndarray
        ``(n,)`` node delays (ms).
    probs : numpy.ndarray
        ``(n,)`` publishing probabilities (sum 1).
    q : float, default 0.9
        Fraction of the publishing probability.

    Examples
    --------
    >>> lat = np.array([[0, 10, 15], [10, 0, 10], [15, 10, 0.]])
    >>> out = np.array([[1], [2], [-1]])
    >>> wasted_latency(out, lat, np.zeros(3), np.array([0.5, 0, 0.5]), q=0.4).tolist()
    [0.0, 0.0, 0.0]
    >>> wasted_latency(out, lat, np.zeros(3), np.array([0.5, 0, 0.5]), q=0.9).tolist()
    [5.0, 0.0, 5.0]
    """
    dist = exploit_distances(out, latency, proc)
    lat = np.asarray(latency, dtype=np.float64)
    return _wasted_rows(dist, lat, np.asarray(probs, dtype=np.float64), float(q))


def wasted_summary(values: np.ndarray, nodes: np.ndarray | None = None) -> dict[str, float]:
    """25/50/75th percentile (index ``ceil(n q) - 1``) and mean of ``values[nodes]``.

    Examples
    --------
    >>> wasted_summary(np.array([4.0, 1, 3, 2]))
    {'p25': 1.0, 'p50': 2.0, 'p75': 3.0, 'mean': 2.5}
    """
    v = np.asarray(values, dtype=np.float64)
    if nodes is not None:
        v = v[np.asarray(nodes)]
    if not len(v):
        return {"p25": math.nan, "p50": math.nan, "p75": math.nan, "mean": math.nan}
    s = np.sort(v)
    n = len(s)

    def at(qq: float) -> float:
        return float(s[max(math.ceil(n * qq) - 1, 0)])

    return {"p25": at(0.25), "p50": at(0.5), "p75": at(0.75), "mean": float(np.mean(s))}


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Smallest value at which the cumulative weight of values ``<=`` it reaches ``q`` of the total.

    Examples
    --------
    >>> weighted_quantile(np.array([3.0, 1, 2]), np.array([1.0, 1, 2]), 0.5)
    2.0
    """
    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    order = np.argsort(v, kind="stable")
    cw = np.cumsum(w[order])
    if not len(cw) or cw[-1] <= 0:
        return math.nan
    k = int(np.searchsorted(cw, q * cw[-1] - 1e-12 * cw[-1], side="left"))
    return float(v[order][min(k, len(v) - 1)])


def _count_rank(q: float, n: int) -> int:
    """0-based index of the ``q``-quantile of ``n`` sorted values by count: the ``ceil(q n)``-th."""
    return max(math.ceil(q * n - 1e-9) - 1, 0)


def arrival_percentiles(
    arrival: np.ndarray, qs: Sequence[float] = (0.5, 0.9, 0.99), weights: np.ndarray | None = None
) -> np.ndarray:
    """``(m, len(qs))`` per message: time by which ``q`` of the nodes (or of ``weights``) hold it.

    ``arrival`` is ``(m, n)`` (``inf`` = never, the publisher at 0).  By node
    count the ``q``-quantile is the ``ceil(q n)``-th smallest arrival; with
    ``weights`` (e.g. publishing probabilities) it is :func:`weighted_quantile`.

    Examples
    --------
    >>> arrival_percentiles(np.array([[0.0, 10, 20, 30]]), (0.5, 1.0)).tolist()
    [[10.0, 30.0]]
    """
    a = np.asarray(arrival, dtype=np.float64)
    m, n = a.shape
    out = np.empty((m, len(qs)))
    if weights is None:
        s = np.sort(a, axis=1)
        for j, q in enumerate(qs):
            out[:, j] = s[:, _count_rank(q, n)]
        return out
    for i in range(m):
        for j, q in enumerate(qs):
            out[i, j] = weighted_quantile(a[i], weights, q)
    return out


def pooled_percentiles(
    arrival: np.ndarray, qs: Sequence[float] = (0.5, 0.9, 0.99), weights: np.ndarray | None = None
) -> np.ndarray:
    """``(len(qs),)`` quantiles of every (message, node) arrival of a round pooled.

    By node count, or weighting node ``v``'s arrivals by ``weights[v]``.  This
    is the time at which the round's average fraction of informed nodes (or
    informed weight) reaches ``q``: blocknet's per-round t50/t90.

    Examples
    --------
    >>> pooled_percentiles(np.array([[0.0, 10], [0, 30]]), (0.5, 0.75)).tolist()
    [0.0, 10.0]
    >>> a = np.array([[0.0, 10], [0, 30]])
    >>> pooled_percentiles(a, (0.5,), weights=np.array([0, 1.0])).tolist()
    [10.0]
    """
    a = np.asarray(arrival, dtype=np.float64)
    flat = a.reshape(-1)
    if weights is None:
        s = np.sort(flat)
        return np.array([s[_count_rank(q, len(s))] for q in qs])
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64)[None, :], a.shape).reshape(-1)
    order = np.argsort(flat, kind="stable")
    cw = np.cumsum(w[order])
    if not len(cw) or cw[-1] <= 0:
        return np.full(len(qs), math.nan)
    ks = np.searchsorted(cw, np.asarray(qs) * cw[-1] * (1 - 1e-12), side="left")
    return flat[order][np.minimum(ks, len(flat) - 1)]


def duplicates_per_node(
    edge_recv: np.ndarray,
    receiver: np.ndarray,
    arrival: np.ndarray,
    publisher: np.ndarray,
    n_nodes: int,
) -> np.ndarray:
    """``(n,)`` copies each node received beyond its first, per message (mean over messages).

    A node that got a message from a peer counts one first copy; every copy a
    publisher receives back of its own message is a duplicate.

    Parameters
    ----------
    edge_recv : numpy.ndarray
        ``(m, e)`` arrival of the copy sent along each recorded graph entry
        (``inf`` = no copy).
    receiver : numpy.ndarray
        ``(e,)`` the node each entry delivers to.
    arrival : numpy.ndarray
        ``(m, n)`` first arrivals.
    publisher : numpy.ndarray
        ``(m,)`` the publisher of each message.
    n_nodes : int
        Nodes.

    Examples
    --------
    >>> er = np.array([[1.0, 2.0, np.inf]])
    >>> duplicates_per_node(er, np.array([1, 1, 0]), np.array([[0.0, 1.0]]), np.array([0]), 2)
    array([0., 1.])
    """
    er = np.asarray(edge_recv)
    m = er.shape[0]
    got = np.isfinite(er).sum(axis=0).astype(np.float64)
    copies = np.bincount(np.asarray(receiver, dtype=np.int64), weights=got, minlength=n_nodes)
    first = np.isfinite(np.asarray(arrival)).sum(axis=0).astype(np.float64)
    first -= np.bincount(np.asarray(publisher, dtype=np.int64), minlength=n_nodes)
    return (copies - first) / max(m, 1)


def connection_churn(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: out-links dialled (in ``after`` only) and dropped (in ``before`` only).

    Examples
    --------
    >>> d, x = connection_churn(np.array([[1, 2], [0, -1]]), np.array([[1, 3], [0, 2]]))
    >>> d.tolist(), x.tolist()
    ([1, 1], [1, 0])
    """
    b = np.asarray(before, dtype=np.int64)
    a = np.asarray(after, dtype=np.int64)
    n = b.shape[0]
    width = max(int(b.max(initial=-1)), int(a.max(initial=-1))) + 1
    eb = np.zeros((n, width + 1), dtype=bool)
    ea = np.zeros((n, width + 1), dtype=bool)
    rows_b = np.repeat(np.arange(n), b.shape[1])
    rows_a = np.repeat(np.arange(n), a.shape[1])
    eb[rows_b, np.where(b.reshape(-1) >= 0, b.reshape(-1), width)] = True
    ea[rows_a, np.where(a.reshape(-1) >= 0, a.reshape(-1), width)] = True
    eb[:, width] = ea[:, width] = False
    return (ea & ~eb).sum(axis=1), (eb & ~ea).sum(axis=1)
