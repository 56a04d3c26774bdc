"""T-Man's compiled kernels: the partner rules, the batch pairing, the buffers, the ranking.

The generic path of :meth:`hedgerow.gossip.TMan.cycle` calls them once per
batch (:func:`_pick_batch`, :func:`_gather`, then the selection hook); the fused
ring cycle (:mod:`hedgerow.gossip._ring_fused`) inlines the same partner rules,
pairing and union, so both paths draw, pair and build buffers alike.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.gossip._prefetch import prefetch_row
from hedgerow.model.bitset import popcount64


@numba.njit(cache=True, inline="always")
def _random_alive(row, alive, u):  # pragma: no cover - compiled
    """An alive entry of ``row`` drawn by the uniform ``u`` (the sampling fallback), or -1."""
    k = 0
    for x in row:
        if x >= 0 and alive[x]:
            k += 1
    if k == 0:
        return -1
    pick = min(int(u * k), k - 1)
    for x in row:
        if x >= 0 and alive[x]:
            if pick == 0:
                return x
            pick -= 1
    return -1


@numba.njit(cache=True)
def _uniform_partner(nodes, view, sample, alive, u):  # pragma: no cover - compiled
    out = np.full(nodes.shape[0], -1, np.int64)
    R = view.shape[1]
    for i in range(nodes.shape[0]):
        if i + 8 < nodes.shape[0]:
            prefetch_row(view, nodes[i + 8])  # the nodes come in random order
        p = nodes[i]
        k = 0
        for j in range(R):
            if view[p, j] >= 0:
                k += 1
        if k > 0:
            pick = min(int(u[i] * k), k - 1)
            for j in range(R):
                if view[p, j] >= 0:
                    if pick == 0:
                        out[i] = view[p, j]
                        break
                    pick -= 1
            continue
        out[i] = _random_alive(sample[p], alive, u[i])
    return out


@numba.njit(cache=True)
def _ring_partner(nodes, view, sample, alive, u, ids, psi):  # pragma: no cover - compiled
    out = np.full(nodes.shape[0], -1, np.int64)
    R = view.shape[1]
    best_d = np.empty(psi, np.uint64)
    best_x = np.empty(psi, np.int64)
    for i in range(nodes.shape[0]):
        if i + 8 < nodes.shape[0]:
            prefetch_row(view, nodes[i + 8])  # the nodes come in random order
        p = nodes[i]
        me = ids[p]
        k = 0
        for j in range(R):
            x = view[p, j]
            if x < 0:
                continue
            d1 = ids[x] - me
            d2 = me - ids[x]
            d = d1 if d1 < d2 else d2
            if k < psi or d < best_d[psi - 1]:
                if k < psi:
                    k += 1
                h = k - 1
                while h > 0 and best_d[h - 1] > d:
                    best_d[h] = best_d[h - 1]
                    best_x[h] = best_x[h - 1]
                    h -= 1
                best_d[h] = d
                best_x[h] = x
        if k > 0:
            out[i] = best_x[min(int(u[i] * k), k - 1)]
            continue
        out[i] = _random_alive(sample[p], alive, u[i])
    return out


@numba.njit(cache=True)
def _pick_batch(nodes, partners, alive, busy, stamp):  # pragma: no cover - compiled
    """Greedy disjoint pairs in order; returns (taken mask, deferred mask)."""
    m = nodes.shape[0]
    take = np.zeros(m, np.bool_)
    defer = np.zeros(m, np.bool_)
    for i in range(m):
        p = nodes[i]
        q = partners[i]
        if q < 0 or q == p or not alive[q]:
            continue  # no exchange this cycle (none known, or a timeout)
        if busy[p] == stamp or busy[q] == stamp:
            defer[i] = True
            continue
        busy[p] = stamp
        busy[q] = stamp
        take[i] = True
    return take, defer


@numba.njit(cache=True, inline="always")
def _union(p, q, view, sample, allowed, include_self, mark, s, union,
           every=False):  # pragma: no cover
    """The union of ``p``'s and ``q``'s buffers into ``union``; returns its length.

    Each side's own descriptor (with ``include_self``), its view, then its peer
    sample, first occurrence kept (``mark[x] == s``: already in); only
    ``allowed`` nodes enter (``every``: the caller knows every node is allowed,
    and ``allowed`` is not read).  Shared by the batch gather and the fused ring
    cycle, so both build the same buffers in the same order.
    """
    R = view.shape[1]
    c = sample.shape[1]
    k = 0
    for side in range(2):
        r = p if side == 0 else q
        if include_self:
            if mark[r] != s:
                mark[r] = s
                union[k] = r
                k += 1
        # written in place and kept by a conditional increment: whether an entry is
        # new is data-dependent, a branch on it would be mispredicted often (marking a
        # duplicate again changes nothing; a node not allowed stays unmarked, as it may
        # still enter as the other side's own descriptor)
        for j in range(R):
            x = view[r, j]
            if x >= 0:
                ok = every or allowed[x]
                fresh = (mark[x] != s) & ok
                mark[x] = s if ok else mark[x]
                union[k] = x
                k += fresh
        for j in range(c):
            x = sample[r, j]
            if x >= 0:
                ok = every or allowed[x]
                fresh = (mark[x] != s) & ok
                mark[x] = s if ok else mark[x]
                union[k] = x
                k += fresh
    return k


@numba.njit(cache=True)
def _gather(ps, qs, view, sample, allowed, include_self, mark, stamp):  # pragma: no cover
    """Buffers of a batch: rows (p0, q0, p1, q1, ...), CSR of candidates."""
    b = ps.shape[0]
    R = view.shape[1]
    c = sample.shape[1]
    cap = 2 * b * (2 * R + 2 * c + 2)
    cand = np.empty(cap, np.int32)
    indptr = np.zeros(2 * b + 1, np.int64)
    rows = np.empty(2 * b, np.int64)
    union = np.empty(2 * R + 2 * c + 2, np.int32)
    k_out = 0
    for i in range(b):
        if i + 4 < b:  # as the fused cycle: the rows of the exchange four ahead
            prefetch_row(view, ps[i + 4])
            prefetch_row(view, qs[i + 4])
            prefetch_row(sample, ps[i + 4])
            prefetch_row(sample, qs[i + 4])
        p = ps[i]
        q = qs[i]
        stamp[0] += 1
        k = _union(p, q, view, sample, allowed, include_self, mark, stamp[0], union)
        for side in range(2):
            r = p if side == 0 else q
            rows[2 * i + side] = r
            for t in range(k):
                if union[t] != r:
                    cand[k_out] = union[t]
                    k_out += 1
            indptr[2 * i + side + 1] = k_out
    return rows, indptr, cand[:k_out]


@numba.njit(cache=True)
def _keep_best(rows, indptr, cand, score, view):  # pragma: no cover - compiled
    R = view.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        a = indptr[i]
        b = indptr[i + 1]
        m = b - a
        idx = np.empty(m, np.int64)
        for t in range(m):
            idx[t] = a + t
        for j in range(R):
            if j >= m:
                view[r, j] = -1
                continue
            best = j
            for t in range(j + 1, m):
                st = score[idx[t]]
                sb = score[idx[best]]
                if st > sb or (st == sb and cand[idx[t]] < cand[idx[best]]):
                    best = t
            tmp = idx[j]
            idx[j] = idx[best]
            idx[best] = tmp
            view[r, j] = cand[idx[j]]


@numba.njit(cache=True)
def _jaccard_scores(rows, indptr, cand, masks):  # pragma: no cover - compiled
    out = np.empty(cand.shape[0], np.float64)
    w = masks.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for t in range(indptr[i], indptr[i + 1]):
            if t + 2 < cand.shape[0]:  # the mask row of the candidate two ahead
                prefetch_row(masks, cand[t + 2])
            x = cand[t]
            inter = 0
            union = 0
            for j in range(w):
                a = masks[r, j]
                b = masks[x, j]
                inter += popcount64(a & b)
                union += popcount64(a | b)
            out[t] = inter / union if union > 0 else 0.0
    return out
