"""T-Man: gossip-based topology construction with a pluggable neighbour selection.

Jelasity and Babaoglu, "T-Man: gossip-based overlay topology management"
(ESOA 2005).  Every node keeps a view of at most ``R`` node ids (``view``,
``(n, R)`` int32, ``-1`` = empty slot).  Each cycle every live node ``p``, in a
random order, picks a partner ``q`` (by default uniformly among its view
entries, or from its peer sample while the view is empty); both build the same
buffer, the union of both views, both peer samples (``getSampleNodes()``) and
both descriptors, and each replaces its view by ``select`` over that buffer
(minus itself).  This is the exchange of Vitis's Algorithms 2-3 and of OMen's
view maintenance.

Batches instead of one call per exchange
    Exchanges run in *batches of disjoint pairs*: a pass over the nodes still
    to act (in the cycle's random order) takes every ``(p, q)`` whose two ends
    are not yet busy in the batch; the others wait for the next batch and pick
    their partner again from their (then current) view.  Exchanges of one batch
    touch disjoint views, so the batch equals running them one after the other,
    and each batch sees every earlier one: the cycle is a serial schedule, as
    in PeerSim's cycle-driven engine.  A cycle takes about 10 batches at 10,000
    nodes, each one numba call to gather the buffers and one call of the
    selection over all of the batch's rows.

The fused ring cycle
    With ``ring_select`` (distinct ids) and ``uniform_partner`` or
    ``ring_partner``, :meth:`TMan.cycle` runs the whole cycle in one numba call
    (``_ring_cycle``): the same batches, draws and pairs, each exchange's union
    built once and ranked for both ends straight away, ring coordinates as
    32-bit ranks.  Views, counters and the generator state come out bit for bit
    as through the hooks (pinned by a test); wrapping either hook in a plain
    function turns the fusion off.

The selection hook
    ``select(rows, indptr, cand, view)`` is any Python callable (normally a thin
    wrapper around the caller's own ``numba.njit(cache=True)`` kernel, which
    closes over the caller's context: ids, masks, rates, per-node state):

    - ``rows``: int64 node ids whose view is to be replaced;
    - ``cand[indptr[i]:indptr[i+1]]``: int32 candidates of ``rows[i]``
      (duplicates removed, ``rows[i]`` itself excluded, ``-1`` never present);
    - ``view``: the ``(n, R)`` view array, to be written in place for every
      row (fill unused slots with ``-1``).

    Nothing requires a ranking: a selection may keep per-node state of its own
    (e.g. slot kinds, ages) and choose by any rule.  A *ranking* selection only
    scores candidates: :func:`rank_select` turns a score callable
    ``score(rows, indptr, cand) -> float64[len(cand)]`` into a selection that
    keeps the ``R`` best (ties to the lower id).  :func:`ring_select` (T-Man's
    ring on circular 64-bit ids) and :func:`jaccard_select` (similarity of
    subscription bit masks) are given.

The partner hook
    ``partner(nodes, view, sample, alive, u) -> int64 partners`` (``-1``: no
    exchange this cycle).  :func:`uniform_partner` is the default: uniform
    among view entries (dead ones included: the exchange then fails, as a
    timeout would), or among the live sample entries when the view is empty.

Examples
--------
>>> import numpy as np
>>> from hedgerow.gossip import PeerSampling, TMan, ring_select
>>> n = 300
>>> rng = np.random.default_rng(0)
>>> ids = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
>>> ps = PeerSampling(n, 10, kind="uniform")
>>> ps.bootstrap(np.ones(n, bool), rng)
>>> tm = TMan(4, ring_select(ids))
>>> view = tm.empty_view(n)
>>> for _ in range(25):
...     ps.cycle(rng)
...     tm.cycle(view, ps, rng)
>>> order = np.argsort(ids)
>>> succ = np.empty(n, np.int64); succ[order] = np.roll(order, -1)
>>> float(np.mean((view == succ[:, None]).any(axis=1)))
1.0
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.gossip._prefetch import prefetch_row

__all__ = [
    "TMan",
    "jaccard_select",
    "rank_select",
    "ring_partner",
    "ring_select",
    "uniform_partner",
]

Select = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
Partner = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


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


def uniform_partner(nodes: np.ndarray, view: np.ndarray, sample: np.ndarray,
                    alive: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Partner uniform among the view's entries, else among the live peer sample.

    Examples
    --------
    >>> import numpy as np
    >>> view = np.array([[1, -1], [-1, -1], [0, 1]], np.int32)
    >>> sample = np.array([[2], [2], [0]], np.int32)
    >>> uniform_partner(np.arange(3), view, sample, np.ones(3, bool), np.full(3, .9)).tolist()
    [1, 2, 1]
    """
    return _uniform_partner(np.asarray(nodes, np.int64), view, sample, alive, u)


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


def ring_partner(ids: np.ndarray, psi: int) -> Partner:
    """T-Man's own peer choice for a ring: uniform among the ``psi`` view entries nearest in id.

    Jelasity and Babaoglu's ``selectPeer`` ranks the view by the node's own
    ranking function and picks at random among the ``psi`` best; for a ring the
    rank is the circular distance between 64-bit ids.  Falls back to the live
    peer sample while the view is empty, as :func:`uniform_partner`.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([0, 10, 20, 1000], np.uint64)
    >>> view = np.array([[3, 2, 1], [0, 2, 3], [3, 0, 1], [0, 1, 2]], np.int32)
    >>> part = ring_partner(ids, 1)
    >>> part(np.arange(4), view, np.zeros((4, 1), np.int32), np.ones(4, bool),
    ...      np.full(4, .5)).tolist()
    [1, 0, 1, 2]
    """
    ids = np.asarray(ids, np.uint64)
    if psi < 1:
        raise ParameterError(f"psi: must be >= 1, got {psi}", key="psi")
    psi = int(psi)

    def partner(nodes: np.ndarray, view: np.ndarray, sample: np.ndarray, alive: np.ndarray,
                u: np.ndarray) -> np.ndarray:
        return _ring_partner(np.asarray(nodes, np.int64), view, sample, alive,
                             np.asarray(u, np.float64), ids, psi)

    partner.ring = (ids, psi)  # type: ignore[attr-defined]  # for TMan.cycle's fused kernel
    return partner


@numba.njit(cache=True, inline="always")
def _draw_partners(nodes, view, sample, alive, rng, pids, psi):  # pragma: no cover - compiled
    """A batch's partners: one uniform per node from ``rng``, then T-Man's partner rule
    (uniform from the view for ``psi == 0``, else among the ``psi`` nearest on the ring)."""
    u = rng.random(nodes.shape[0])
    if psi == 0:
        return _uniform_partner(nodes, view, sample, alive, u)
    return _ring_partner(nodes, view, sample, alive, u, pids, psi)


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
def _union(p, q, view, sample, allowed, include_self, mark, s, union):  # pragma: no cover
    """The union of ``p``'s and ``q``'s buffers into ``union``; returns its length.

    Each side's own descriptor (with ``include_self``), its view, then its peer
    sample, first occurrence kept (``mark[x] == s``: already in); only
    ``allowed`` nodes enter.  Shared by the batch gather and the fused ring
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
                ok = allowed[x]
                fresh = (mark[x] != s) & ok
                mark[x] = s if ok else mark[x]
                union[k] = x
                k += fresh
        for j in range(c):
            x = sample[r, j]
            if x >= 0:
                ok = allowed[x]
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


def rank_select(score: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> Select:
    """A selection keeping the ``R`` best-scored candidates (ties to the lower id).

    ``score(rows, indptr, cand)`` returns one float per candidate (higher is better).

    Examples
    --------
    >>> import numpy as np
    >>> sel = rank_select(lambda rows, indptr, cand: -cand.astype(float))
    >>> view = np.full((3, 2), -1, np.int32)
    >>> sel(np.array([0]), np.array([0, 3]), np.array([2, 1, 2], np.int32), view)
    >>> view[0].tolist()
    [1, 2]
    """

    def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray, view: np.ndarray) -> None:
        _keep_best(rows, indptr, cand, np.asarray(score(rows, indptr, cand), np.float64), view)

    return select


@numba.njit(cache=True, inline="always")
def _ring_insert(v, ix, n, half, d, t):  # pragma: no cover - compiled
    """Insert distance ``d`` of candidate ``t`` into the sorted list ``v[:n]``, ``ix[:n]``
    (at most ``half`` long: a full list drops its largest); returns the new length."""
    if n < half:
        n += 1
    j = n - 1
    while j > 0 and v[j - 1] > d:
        v[j] = v[j - 1]
        ix[j] = ix[j - 1]
        j -= 1
    v[j] = d
    ix[j] = t
    return n


@numba.njit(cache=True, inline="always")
def _ring_side(r, me, cand, xs, m, half, v, ix, bound, sb, ns, ccw):  # pragma: no cover - compiled
    """The ``half`` nearest of ``cand[:m]`` one way round (counter-clockwise with ``ccw``),
    sorted into ``v`` (distances) and ``ix`` (candidate indices); returns how many.

    Without a bound (``bound == 2**63``) it is two passes of insertion: the
    first admits only the candidates on the list's own half of the circle
    (distance below ``2**63``), so a node's nearest predecessors never enter
    the successor list only to be pushed out again; the second, over the other
    half, runs only when the first left the list short.  With a ``bound`` below
    ``2**63`` that at least ``half`` candidates are known to lie within (the
    fused cycle takes it from the node's own view, or else bounds by the own half
    circle), only the candidates within it, ``sb[:ns]`` (picked out by the
    caller without a data-dependent branch), are inserted; should fewer than
    ``half`` lie within it, the list is made again without the bound.  Either
    way the list is the ``half`` smallest distances, ties in candidate order, and
    ``r`` itself (if among the candidates) is left out.
    """
    mid = np.uint64(0x8000000000000000)
    n = 0
    thr = mid
    if bound < mid:
        for h in range(ns):
            t = sb[h]
            d = me - xs[t] if ccw else xs[t] - me
            if d < thr:
                n = _ring_insert(v, ix, n, half, d, t)
                if n == half:
                    thr = v[half - 1]
        if n == half:
            return n
        n = 0  # fewer than half within the bound: the list again, without it
        thr = mid
    for t in range(m):
        d = me - xs[t] if ccw else xs[t] - me
        if d < thr and cand[t] != r:
            n = _ring_insert(v, ix, n, half, d, t)
            if n == half:
                thr = v[half - 1]
    if n < half:  # the other half circle
        for t in range(m):
            d = me - xs[t] if ccw else xs[t] - me
            if d >= mid and (n < half or d < v[half - 1]):
                n = _ring_insert(v, ix, n, half, d, t)
    return n


@numba.njit(cache=True, inline="always")
def _ring_row(r, me, cand, xs, m, half, view, cw_v, cw_i, cc_v, cc_i, done, chosen,
              ids, b_cw, b_cc, sb, same=False):  # pragma: no cover - compiled
    """One row of T-Man's ring: rank ``cand[:m]`` for node ``r``, keep in ``view[r]``.

    ``xs[:m]`` and ``me`` are ``uint64`` ring coordinates of the candidates and of
    ``r`` whose wrap-around differences order the ring: the ids themselves, or
    their ranks among all ids shifted to the top 32 bits (the same order both
    ways when the ids are distinct).  ``ids`` are the ids, for the distances of
    the remaining slots.  ``cand`` may hold ``r`` itself (the fused cycle ranks
    an exchange's whole union for both ends): it is never kept.  ``b_cw`` and
    ``b_cc`` are optional bounds of :func:`_ring_side` (``2**63``: none; with
    ``same``, bounds taken from a full view ``view[r]`` already in the order this
    function writes, which then stays unless another candidate lies within them), ``sb``
    scratch for the candidates within them (``(2, m)`` at least).

    Scores as a ranking would give them: the ``j``-th nearest clockwise and the
    ``j``-th nearest counter-clockwise (``j < half``) score ``2 half - j``, every
    other candidate ``-distance / 2**64``; the view keeps the ``R`` best, ties to
    the lower id.  The ``half`` nearest each way are kept in two short sorted
    lists (:func:`_ring_side`), so a row costs ``O(m half)`` at worst and about
    ``O(m)`` in practice instead of two argsorts and an ``O(m R)`` selection.
    When both lists are full and lie on disjoint arcs (no candidate in both:
    every network larger than ``R + 1`` once the views hold their neighbours),
    the view is the pairs ``(cw[j], cc[j])``, lower id first, without the general
    merge below.
    """
    R = view.shape[1]
    zero = np.uint64(0)
    one = np.uint64(1)
    mid = np.uint64(0x8000000000000000)
    n_sw = 0
    n_sc = 0
    if b_cw < mid or b_cc < mid:  # the candidates within the bounds, both ways in one pass
        for t in range(m):
            d = xs[t] - me
            sb[0, n_sw] = t
            sb[1, n_sc] = t
            if d - one < b_cw:  # compiled as conditional increments; r (d = 0) wraps
                n_sw += 1
            if (zero - d) - one < b_cc:
                n_sc += 1
    if same and n_sw == half and n_sc == half:
        # the bounds come from the view, which holds half candidates within each: no other
        # candidate lies within them, so the lists are the view's own entries and the row,
        # already in the ranking's order, stays as it is
        return
    n_cw = _ring_side(r, me, cand, xs, m, half, cw_v, cw_i, b_cw, sb[0], n_sw, False)
    n_cc = _ring_side(r, me, cand, xs, m, half, cc_v, cc_i, b_cc, sb[1], n_sc, True)
    if (n_cw == half and n_cc == half and 2 * half - 1 <= R <= 2 * half
            and cw_v[0] > zero and cc_v[0] > zero and cw_v[half - 1] < zero - cc_v[half - 1]):
        # disjoint arcs (me, me + cw_v[-1]] and [me - cc_v[-1], me): no candidate in both
        for j in range(half):
            a = cand[cw_i[j]]
            b = cand[cc_i[j]]
            view[r, 2 * j] = min(a, b)
            if 2 * j + 1 < R:
                view[r, 2 * j + 1] = max(a, b)
        return
    # the ranked candidates by (best rank, id): merge both lists, each entry once
    j = 0
    jw = 0
    jc = 0
    while j < R and (jw < n_cw or jc < n_cc):
        if jw < n_cw and chosen[cw_i[jw]]:
            jw += 1
            continue
        if jc < n_cc and chosen[cc_i[jc]]:
            jc += 1
            continue
        if jc >= n_cc or (jw < n_cw and (jw < jc or (
                jw == jc and cand[cw_i[jw]] <= cand[cc_i[jc]]))):
            t = cw_i[jw]
            jw += 1
        else:
            t = cc_i[jc]
            jc += 1
        chosen[t] = True
        done[j] = t
        view[r, j] = cand[t]
        j += 1
    # the remaining slots: nearest others (score -distance / 2**64, ties to the lower id);
    # with distinct coordinates both lists cover every candidate when they overlap, so
    # this runs only on ties
    while j < R:
        best = -1
        best_s = 0.0
        for t in range(m):
            if chosen[t] or cand[t] == r:
                continue
            x = ids[cand[t]]
            d1 = x - ids[r]
            d2 = ids[r] - x
            s = -float(d1 if d1 < d2 else d2) / 1.8446744073709552e19
            if best < 0 or s > best_s or (s == best_s and cand[t] < cand[best]):
                best = t
                best_s = s
        if best < 0:
            break
        chosen[best] = True
        done[j] = best
        view[r, j] = cand[best]
        j += 1
    for h in range(j):
        chosen[done[h]] = False
    while j < R:
        view[r, j] = -1
        j += 1


@numba.njit(cache=True, inline="always")
def _ring_scratch(half, R):  # pragma: no cover - compiled
    """Scratch of :func:`_ring_row`, allocated once per call: the two short sorted lists
    (distances and candidate indices, clockwise then counter-clockwise) and the kept slots."""
    return (np.empty(half, np.uint64), np.empty(half, np.int64), np.empty(half, np.uint64),
            np.empty(half, np.int64), np.empty(R, np.int64))


@numba.njit(cache=True, inline="always")
def _ring_bound(r, me, view, allowed, rank):  # pragma: no cover - compiled
    """Bounds for :func:`_ring_side` from ``r``'s own view, ``(clockwise, counter-clockwise)``.

    Every allowed entry of ``r``'s view is a candidate of ``r``'s exchange (the
    union holds both views), so when ``half`` or more of them lie on one half
    of the circle, the farthest of those bounds the ``half`` nearest that way.
    Returns the largest distance of each side's entries and their counts, and
    whether the row is in the order the ranking writes (see :func:`_ring_row`'s
    ``same``).
    """
    mid = np.uint64(0x8000000000000000)
    zero = np.uint64(0)
    n_cw = 0
    n_cc = 0
    b_cw = zero
    b_cc = zero
    for j in range(view.shape[1]):
        x = view[r, j]
        if x < 0 or not allowed[x]:
            continue
        d = (np.uint64(rank[x]) << np.uint64(32)) - me
        if zero < d < mid:
            n_cw += 1
            b_cw = max(b_cw, d)
        e = zero - d
        if zero < e < mid:
            n_cc += 1
            b_cc = max(b_cc, e)
    # whether the row is already what the ranking writes from these entries: a full view
    # of R = 2 half slots, pairs (j-th clockwise, j-th counter-clockwise), lower id first
    R = view.shape[1]
    half = R // 2
    same = R % 2 == 0 and n_cw == half and n_cc == half
    last_w = zero
    last_c = zero
    for j in range(half if same else 0):
        a = view[r, 2 * j]
        b = view[r, 2 * j + 1]
        da = (np.uint64(rank[a]) << np.uint64(32)) - me
        db = (np.uint64(rank[b]) << np.uint64(32)) - me
        dw = da if da < mid else db
        dc = zero - (db if da < mid else da)
        if not (a < b and (da < mid) != (db < mid) and last_w < dw < mid
                and last_c < dc < mid):
            same = False
            break
        last_w = dw
        last_c = dc
    return b_cw, n_cw, b_cc, n_cc, same


@numba.njit(cache=True)
def _ring_keep(rows, indptr, cand, ids, half, view):  # pragma: no cover - compiled
    """T-Man's ring over CSR candidate lists, one :func:`_ring_row` per row."""
    cw_v, cw_i, cc_v, cc_i, done = _ring_scratch(half, view.shape[1])
    max_m = 0
    for i in range(rows.shape[0]):
        max_m = max(max_m, indptr[i + 1] - indptr[i])
    chosen = np.zeros(max_m, np.bool_)
    xs = np.empty(max_m, np.uint64)
    sb = np.empty((2, max_m), np.int64)
    mid = np.uint64(0x8000000000000000)  # no bounds
    for i in range(rows.shape[0]):
        r = rows[i]
        a = indptr[i]
        m = indptr[i + 1] - a
        for t in range(m):  # independent loads first: their cache misses overlap
            xs[t] = ids[cand[a + t]]
        _ring_row(r, ids[r], cand[a:a + m], xs, m, half, view, cw_v, cw_i, cc_v, cc_i, done,
                  chosen, ids, mid, mid, sb)


@numba.njit(cache=True, inline="always")
def _ring_exchange(p, q, s, view, sample, allowed, include_self, ids, rank, half, mark, union,
                   uxs, cw_v, cw_i, cc_v, cc_i, done, chosen, sb, tally):  # pragma: no cover
    """One exchange of the fused ring cycle (``s``: its mark stamp, new in ``mark``).

    A side whose view is already in the ranking's order (``_ring_bound``'s ``same``)
    first counts the candidates within its view's bounds in a pass without stores
    (the compiler vectorises it); when they are the view's own entries, the row stays
    as it is without :func:`_ring_row` (whose own test it is).  The count costs a
    pass wherever it fails, as in the early cycles, so it is tried only while it
    has been paying: ``tally`` (two ints, the caller's) holds a credit, set to 8
    by a success and lowered by each failure, and a count of such rows; at no
    credit one row in 16 still tries.  Either way the views are the same.
    """
    mid = np.uint64(0x8000000000000000)  # bounds below: the own view's, or the own half
    one = np.uint64(1)
    # the union of both buffers, in the generic gather's order
    k = _union(p, q, view, sample, allowed, include_self, mark, s, union)
    for t in range(k):  # independent loads first: their cache misses overlap
        uxs[t] = np.uint64(rank[union[t]]) << np.uint64(32)
    # both ends rank the whole union (each skips itself), bounded by their own views
    for side in range(2):
        r = p if side == 0 else q
        me = np.uint64(rank[r]) << np.uint64(32)
        b_cw, n_cw, b_cc, n_cc, same = _ring_bound(r, me, view, allowed, rank)
        if same:
            tally[1] += 1
            if tally[0] > 0 or tally[1] % 16 == 0:
                # _ring_row's own test, first: count the candidates within the bounds in a
                # pass without stores (vectorised); the view's entries only: the row stays
                n_sw = 0
                n_sc = 0
                for t in range(k):
                    d = uxs[t] - me
                    n_sw += d - one < b_cw
                    n_sc += (np.uint64(0) - d) - one < b_cc
                if n_sw == half and n_sc == half:
                    tally[0] = 8
                    continue
                tally[0] = max(tally[0] - 1, 0)
        _ring_row(r, me, union, uxs, k, half, view, cw_v, cw_i, cc_v, cc_i, done,
                  chosen, ids, b_cw if n_cw >= half else mid - one,
                  b_cc if n_cc >= half else mid - one, sb, same)


@numba.njit(cache=True)
def _ring_cycle(remaining, view, sample, alive, allowed, include_self, ids, rank, half, pids,
                psi, rng):  # pragma: no cover - compiled
    """A whole T-Man cycle on the ring in one call: the batches of :meth:`TMan.cycle` fused.

    Same schedule and same draws as the generic path with ``ring_select(ids)``
    and ``uniform_partner`` (``psi == 0``) or ``ring_partner(pids, psi)``: per
    batch one uniform per node still to act (``rng.random``), the partners from
    the views as they stand, the greedy disjoint pairs in order.  An exchange of
    a batch reads and writes only its two views (and no exchange touches what the
    pairing reads), so the batch's pairs are taken first and its exchanges then
    run in their order, each asking for the view and sample rows of the exchange
    ``ahead`` of it (a prefetch: at 100,000 nodes those rows come from memory,
    and the loads of several exchanges then overlap).  The union of the two
    buffers is built once, its ids are loaded once, and both sides select from
    it directly (no CSR in between).  The
    ring coordinates are the ids' ranks (``rank``, ``uint32``: the same order
    for distinct ids, half the bytes of an id) and the per-node marks are
    ``int32``, which keeps the random loads of large networks in a smaller
    cache footprint.
    Returns ``(batches, exchanges)``.
    """
    n = view.shape[0]
    R = view.shape[1]
    c = sample.shape[1]
    cap = 2 * R + 2 * c + 2
    union = np.empty(cap, np.int32)
    uxs = np.empty(cap, np.uint64)
    cw_v, cw_i, cc_v, cc_i, done = _ring_scratch(half, R)
    chosen = np.zeros(cap, np.bool_)
    sb = np.empty((2, cap), np.int64)
    busy = np.zeros(n, np.int32)
    mark = np.zeros(n, np.int32)
    tally = np.zeros(2, np.int64)
    ahead = 4
    s = np.int32(0)
    batch = 0
    exchanges = 0
    while remaining.shape[0] > 0:
        batch += 1
        partners = _draw_partners(remaining, view, sample, alive, rng, pids, psi)
        take, later = _pick_batch(remaining, partners, alive, busy, batch)
        ps = remaining[take]
        qs = partners[take]
        nb = ps.shape[0]
        for e in range(nb):
            f = e + ahead
            if f < nb:
                prefetch_row(view, ps[f])
                prefetch_row(view, qs[f])
                prefetch_row(sample, ps[f])
                prefetch_row(sample, qs[f])
            s += np.int32(1)
            _ring_exchange(ps[e], qs[e], s, view, sample, allowed, include_self, ids, rank,
                           half, mark, union, uxs, cw_v, cw_i, cc_v, cc_i, done, chosen, sb,
                           tally)
        exchanges += nb
        remaining = remaining[later]
    return batch, exchanges


@numba.njit(cache=True, parallel=True)
def _ring_cycle_par(remaining, view, sample, alive, allowed, include_self, ids, rank, half,
                    pids, psi, rng, nt):  # pragma: no cover - compiled
    """:func:`_ring_cycle` with each batch's exchanges spread over the threads.

    The draws and the pairs of a batch are taken first, serially and in the same
    order; the batch's exchanges then run on ``numba.get_num_threads()`` threads,
    each on its own contiguous share of the pairs with its own scratch and marks.
    Exchanges of one batch read and write only their own two views (and read
    the samples, which no exchange writes), so the order in which they run does
    not matter: views, counters and the generator state are those of
    :func:`_ring_cycle` bit for bit.  Returns ``(batches, exchanges)``.
    """
    n = view.shape[0]
    R = view.shape[1]
    c = sample.shape[1]
    cap = 2 * R + 2 * c + 2
    mark = np.zeros((nt, n), np.int32)  # per thread; an exchange's stamp is its number
    busy = np.zeros(n, np.int32)
    batch = 0
    exchanges = 0
    while remaining.shape[0] > 0:
        batch += 1
        partners = _draw_partners(remaining, view, sample, alive, rng, pids, psi)
        take, later = _pick_batch(remaining, partners, alive, busy, batch)
        ps = remaining[take]
        qs = partners[take]
        nb = ps.shape[0]
        base = exchanges
        for t in numba.prange(nt):
            lo = t * nb // nt
            hi = (t + 1) * nb // nt
            if lo < hi:
                union = np.empty(cap, np.int32)
                uxs = np.empty(cap, np.uint64)
                cw_v, cw_i, cc_v, cc_i, done = _ring_scratch(half, R)
                chosen = np.zeros(cap, np.bool_)
                sb = np.empty((2, cap), np.int64)
                tally = np.zeros(2, np.int64)
                mk = mark[t]
                for e in range(lo, hi):
                    if e + 4 < hi:  # as the serial cycle: the rows of the exchange 4 ahead
                        prefetch_row(view, ps[e + 4])
                        prefetch_row(view, qs[e + 4])
                        prefetch_row(sample, ps[e + 4])
                        prefetch_row(sample, qs[e + 4])
                    _ring_exchange(ps[e], qs[e], np.int32(base + e + 1), view, sample, allowed,
                                   include_self, ids, rank, half, mk, union, uxs, cw_v, cw_i,
                                   cc_v, cc_i, done, chosen, sb, tally)
        exchanges += nb
        remaining = remaining[later]
    return batch, exchanges


def ring_select(ids: np.ndarray) -> Select:
    """T-Man's ring on circular ``uint64`` ids: half the view clockwise, half counter-clockwise.

    The ``ceil(R/2)`` nearest successors and predecessors rank first (alternating by
    rank), the remaining slots go to the nearest others.
    """
    ids = np.asarray(ids, np.uint64)

    def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray, view: np.ndarray) -> None:
        half = (view.shape[1] + 1) // 2
        _ring_keep(np.asarray(rows, np.int64), indptr, cand, ids, half, view)

    # for TMan.cycle's fused kernel: the ids and their ranks (distinct ids: same ring order)
    rank = np.empty(ids.size, np.uint32)
    rank[np.argsort(ids, kind="stable")] = np.arange(ids.size, dtype=np.uint32)
    select.ring_ids = ids  # type: ignore[attr-defined]
    select.ring_rank = (rank if np.unique(ids).size == ids.size  # type: ignore[attr-defined]
                        else None)
    return select


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
                inter += _popcount(a & b)
                union += _popcount(a | b)
            out[t] = inter / union if union > 0 else 0.0
    return out


@numba.njit(cache=True, inline="always")
def _popcount(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


def jaccard_select(masks: np.ndarray) -> Select:
    """Rank candidates by the Jaccard index of their bit masks (``uint64`` rows) with the node's."""
    masks = np.ascontiguousarray(masks, np.uint64)
    return rank_select(lambda rows, indptr, cand: _jaccard_scores(rows, indptr, cand, masks))


class TMan:
    """One T-Man overlay: view size, selection, partner rule (see the module docstring).

    Parameters
    ----------
    view_size : int
        ``R``, the view (routing-table) size.
    select : callable
        The neighbour selection hook, ``select(rows, indptr, cand, view)``.
    partner : callable, optional
        The partner hook; default :func:`uniform_partner`.
    include_self : bool
        Whether each side puts its own descriptor in the buffer (T-Man does;
        Vitis's Algorithms 2-3 are silent).
    live_only : bool
        Drop dead nodes from the buffers (a perfect failure detector); by
        default dead entries travel until the caller's ageing removes them.
    parallel : bool
        With the fused ring cycle, run each batch's exchanges on numba's threads
        (``numba.get_num_threads()``; their exchanges touch disjoint views, so the
        views, counters and generator state are the serial ones bit for bit).
        Off by default: it buys wall time only when a core is idle.  With numba's
        OpenMP layer, ``OMP_WAIT_POLICY=PASSIVE`` (set before numba first starts its
        threads) keeps the idle threads from spinning through the serial parts
        (Newscast, the pairing), which would otherwise double their CPU time.
        Other hooks ignore it.

    Attributes
    ----------
    batches_ : int
        Batches of the last cycle.
    exchanges_ : int
        Exchanges of the last cycle.
    """

    def __init__(self, view_size: int, select: Select, *, partner: Partner | None = None,
                 include_self: bool = True, live_only: bool = False,
                 parallel: bool = False) -> None:
        if view_size < 1:
            raise ParameterError(f"view_size: must be >= 1, got {view_size}", key="view_size")
        self.view_size = int(view_size)
        self.select = select
        self.partner = partner if partner is not None else uniform_partner
        self.include_self = bool(include_self)
        self.live_only = bool(live_only)
        self.parallel = bool(parallel)
        self.batches_ = 0
        self.exchanges_ = 0

    def _fused_ring(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        """``(ids, ranks, partner ids, psi)`` when the hooks are ``ring_select`` (distinct
        ids) with ``uniform_partner`` (``psi`` 0) or ``ring_partner``, else ``None``."""
        rank = getattr(self.select, "ring_rank", None)
        if rank is None:
            return None
        ids = self.select.ring_ids  # type: ignore[attr-defined]
        if self.partner is uniform_partner:
            return ids, rank, ids, 0
        ring = getattr(self.partner, "ring", None)
        return None if ring is None else (ids, rank, ring[0], ring[1])

    def empty_view(self, n: int) -> np.ndarray:
        """An ``(n, R)`` int32 view array with every slot empty (``-1``)."""
        return np.full((n, self.view_size), -1, np.int32)

    def cycle(self, view: np.ndarray, sampling, rng: np.random.Generator,
              alive: np.ndarray | None = None, candidates: np.ndarray | None = None) -> None:
        """One T-Man cycle over every live node, updating ``view`` in place.

        ``sampling`` is a :class:`~hedgerow.gossip.PeerSampling` (its ``cache`` is
        the sample, its ``alive`` the online nodes unless ``alive`` is given).
        ``candidates`` (bool mask) limits which nodes may enter a buffer, e.g.
        leaving out nodes whose descriptors are known to be stale; default:
        every node (the online ones with ``live_only``).
        """
        if view.shape[1] != self.view_size or view.dtype != np.int32:
            raise ParameterError(f"view: expected (n, {self.view_size}) int32, got "
                                 f"{view.shape} {view.dtype}", key="view")
        alive = sampling.alive if alive is None else np.asarray(alive, bool)
        if candidates is None:
            allowed = alive if self.live_only else np.ones(len(alive), bool)
        else:
            allowed = np.asarray(candidates, bool)
        sample = sampling.cache
        n = view.shape[0]
        remaining = rng.permutation(np.flatnonzero(alive)).astype(np.int64)
        fused = self._fused_ring()
        if fused is not None:  # the same cycle in one compiled call (see _ring_cycle)
            ids, rank, pids, psi = fused
            args = (remaining, view, sample, alive, allowed, self.include_self, ids, rank,
                    (self.view_size + 1) // 2, pids, psi, rng)
            if self.parallel:  # (one thread: the same kernel, one share)
                self.batches_, self.exchanges_ = _ring_cycle_par(*args, numba.get_num_threads())
            else:
                self.batches_, self.exchanges_ = _ring_cycle(*args)
            return
        busy = np.zeros(n, np.int64)
        mark = np.zeros(n, np.int64)
        stamp = np.zeros(1, np.int64)
        batch = 0
        exchanges = 0
        while remaining.size:
            batch += 1
            partners = np.asarray(
                self.partner(remaining, view, sample, alive, rng.random(remaining.size)),
                np.int64)
            take, defer = _pick_batch(remaining, partners, alive, busy, batch)
            ps = remaining[take]
            if ps.size:
                rows, indptr, cand = _gather(ps, partners[take], view, sample, allowed,
                                             self.include_self, mark, stamp)
                self.select(rows, indptr, cand, view)
                exchanges += ps.size
            remaining = remaining[defer]
        self.batches_ = batch
        self.exchanges_ = exchanges
