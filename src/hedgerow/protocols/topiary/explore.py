"""Topiary's exploration by topics: eq. (10)'s draws in ``O(n · d · |σ^+|)``, no ``n x n`` table.

Eq. (10) draws each node's new peers with probability proportional to
``ω[v, u] = |σ_u ∩ σ_v^+|``, without replacement, among the allowed candidates
(not ``v``, not linked to ``v`` in either direction, not already an
out-neighbour), the rest uniformly among the allowed candidates once no
candidate with ``ω > 0`` is left.  The table sampler
(:func:`hedgerow.protocols.topiary._explore`) computes ``ω`` for every pair,
``n^2 T`` work an epoch.  Since ``ω[v, u]`` counts the topics ``t ∈ σ_v^+``
that ``u`` subscribes to, ``ω[v, ·]`` is the multiplicity of ``u`` among the
pairs ``(t, u)`` with ``t ∈ σ_v^+`` and ``u`` a subscriber of ``t``: one
uniform pair (a topic with probability ``∝ |subscribers(t)|``, then a
subscriber uniformly) is a draw ``∝ ω`` over *all* nodes, and redrawing it
until the node is allowed and not yet drawn is a draw ``∝ ω`` over the
allowed ones.  Draw after draw this is successive sampling, the law of the
table sampler (:func:`hedgerow.protocols._sampling.weighted_sample`).

When a row's pairs are mostly taken (after :data:`MAX_TRIES` rejected pairs
in a row, e.g. every subscriber of ``σ_v^+`` already linked), its remaining
draws count ``ω`` exactly over the subscribers of ``σ_v^+`` (a few topics'
lists) and sample from the counts; when no allowed candidate has ``ω > 0``
the rest are uniform among the allowed nodes, as in the table sampler.  The
draws read the run's ``numpy.random.Generator``; they differ from the table
sampler's (which reads one uniform per draw from a pre-drawn table), so the
two give the same *distribution* of peers, not the same peers.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.model.instance import Instance

__all__ = ["MAX_TRIES", "explore_topics"]

#: rejected (topic, subscriber) pairs in a row before a node's remaining draws count ω exactly
MAX_TRIES = 32


@numba.njit(cache=True)
def _topic_draws(plus_indptr, plus_topics, topic_indptr, topic_nodes, link_indptr,
                 link_indices, out, n_take, rng, max_tries, fresh):  # pragma: no cover - compiled
    """Every row's draws (see :func:`explore_topics`); fills ``fresh`` in place."""
    n = n_take.shape[0]
    stamp = np.zeros(n, dtype=np.int64)  # stamp[u] == v + 1: u may not be drawn by v
    weight = np.zeros(n, dtype=np.int64)  # ω[v, u] of the exact pass, zeroed after each row
    touched = np.empty(n, dtype=np.int64)
    width = 1
    for v in range(n):
        width = max(width, plus_indptr[v + 1] - plus_indptr[v])
    cum = np.empty(width, dtype=np.int64)
    for v in range(n):
        take = n_take[v]
        if take <= 0:
            continue
        mark = v + 1
        stamp[v] = mark
        blocked = 1
        for e in range(link_indptr[v], link_indptr[v + 1]):
            u = link_indices[e]
            if stamp[u] != mark:
                stamp[u] = mark
                blocked += 1
        for j in range(out.shape[1]):
            u = out[v, j]
            if u >= 0 and stamp[u] != mark:
                stamp[u] = mark
                blocked += 1
        a = plus_indptr[v]
        b = plus_indptr[v + 1]
        total = 0
        for i in range(a, b):
            t = plus_topics[i]
            total += topic_indptr[t + 1] - topic_indptr[t]
            cum[i - a] = total
        k = 0
        # rejection: a uniform (topic, subscriber) pair is a draw ∝ ω over every node
        while k < take and total > 0:
            chosen = -1
            for _ in range(max_tries):
                x = int(rng.random() * total)
                if x >= total:
                    x = total - 1
                i = 0
                while cum[i] <= x:
                    i += 1
                t = plus_topics[a + i]
                before = cum[i - 1] if i > 0 else 0
                u = topic_nodes[topic_indptr[t] + x - before]
                if stamp[u] != mark:
                    chosen = u
                    break
            if chosen < 0:
                break
            stamp[chosen] = mark
            blocked += 1
            fresh[v, k] = chosen
            k += 1
        if k >= take:
            continue
        # exact: ω counted over the subscribers of σ+, then successive sampling from the counts
        m = 0
        wsum = 0
        for i in range(a, b):
            t = plus_topics[i]
            for e in range(topic_indptr[t], topic_indptr[t + 1]):
                u = topic_nodes[e]
                if stamp[u] != mark:
                    if weight[u] == 0:
                        touched[m] = u
                        m += 1
                    weight[u] += 1
                    wsum += 1
        n_zero = n - blocked - m  # allowed nodes with ω = 0
        while k < take:
            chosen = -1
            if wsum > 0:
                x = int(rng.random() * wsum)
                if x >= wsum:
                    x = wsum - 1
                acc = 0
                for i in range(m):
                    u = touched[i]
                    if stamp[u] != mark:
                        acc += weight[u]
                        if acc > x:
                            chosen = u
                            break
                wsum -= weight[chosen]
            elif n_zero > 0:
                if 8 * n_zero >= n:
                    while chosen < 0:
                        u = int(rng.random() * n)
                        if u < n and stamp[u] != mark and weight[u] == 0:
                            chosen = u
                else:
                    target = int(rng.random() * n_zero)
                    if target >= n_zero:
                        target = n_zero - 1
                    seen = 0
                    for u in range(n):
                        if stamp[u] != mark and weight[u] == 0:
                            if seen == target:
                                chosen = u
                                break
                            seen += 1
                n_zero -= 1
            else:
                break
            stamp[chosen] = mark
            blocked += 1
            fresh[v, k] = chosen
            k += 1
        for i in range(m):
            weight[touched[i]] = 0


def explore_topics(plus: np.ndarray, instance: Instance, links: tuple[np.ndarray, np.ndarray],
                   out: np.ndarray, n_take: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw each node's ``n_take`` exploration peers ``∝ ω`` (eq. 10) through its topics.

    Parameters
    ----------
    plus : numpy.ndarray
        ``(n, T)`` bool, ``σ_v^+`` of every node.
    instance : Instance
        Subscriptions; its subscriber lists (``topic_indptr``, ``topic_nodes``) are read.
    links : tuple of numpy.ndarray
        ``(indptr, indices)``, a CSR of the links in either direction (a node is never drawn
        by a node it is linked to).
    out : numpy.ndarray
        ``(n, d)`` current out-links, ``-1`` padded (never drawn either).
    n_take : numpy.ndarray
        ``(n,)`` draws per node.
    rng : numpy.random.Generator
        The exploration stream.

    Returns
    -------
    numpy.ndarray
        ``(n, max(n_take))`` drawn peers in the order drawn, ``-1`` padded (fewer when fewer
        nodes are allowed).

    Examples
    --------
    Node 0 explores by topic 1, which nodes 1 and 2 subscribe to; node 1 is already linked.

    >>> from hedgerow.model.instance import Instance
    >>> inst = Instance.from_lists([[0, 1], [1], [1], [0]], n_topics=2)
    >>> plus = np.array([[False, True]] + [[False, False]] * 3)
    >>> links = (np.array([0, 1, 2, 2, 2]), np.array([1, 0]))
    >>> out = np.array([[1], [-1], [-1], [-1]])
    >>> rng = np.random.default_rng(0)
    >>> explore_topics(plus, inst, links, out, np.array([2, 0, 0, 0]), rng)[0].tolist()
    [2, 3]

    Node 3, the only allowed node with ``ω = 0``, comes after node 2.
    """
    n = plus.shape[0]
    n_take = np.asarray(n_take, dtype=np.int64)
    width = int(n_take.max()) if n else 0
    fresh = np.full((n, max(width, 0)), -1, dtype=np.int64)
    if width <= 0:
        return fresh
    rows, cols = np.nonzero(plus)
    plus_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=plus_indptr[1:])
    _topic_draws(
        plus_indptr,
        cols.astype(np.int64),
        np.ascontiguousarray(instance.topic_indptr, dtype=np.int64),
        np.ascontiguousarray(instance.topic_nodes, dtype=np.int64),
        np.ascontiguousarray(links[0], dtype=np.int64),
        np.ascontiguousarray(links[1], dtype=np.int64),
        np.ascontiguousarray(out, dtype=np.int64),
        n_take,
        rng,
        MAX_TRIES,
        fresh,
    )
    return fresh
