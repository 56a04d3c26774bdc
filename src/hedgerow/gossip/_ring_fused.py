"""T-Man's ring cycle fused into one compiled call (private to :mod:`hedgerow.gossip.tman`).

With :func:`~hedgerow.gossip.ring_select` (distinct ids) and the uniform or ring
partner, :meth:`~hedgerow.gossip.TMan.cycle` runs the whole cycle in one numba
call (:func:`_ring_cycle`, or :func:`_ring_cycle_par` over numba's threads):
the same batches, draws and pairs as the generic path, each exchange's union
built once and ranked for both ends straight away, ring coordinates as 32-bit
ranks, software prefetches of the rows of the exchanges ahead.  Views, counters
and the generator state come out bit for bit as through the hooks (pinned by a
test).  :func:`_ring_keep` is the ranking of ``ring_select``'s generic path.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.gossip._prefetch import prefetch_row
from hedgerow.gossip._tman_kernels import _pick_batch, _random_alive, _ring_partner, _union


@numba.njit(cache=True, inline="always")
def _next_batch(remaining, view, sample, alive, busy, batch, rng, pids,
                psi):  # pragma: no cover - compiled
    """The next batch of a cycle: ``(ps, qs, the nodes left for later)``.

    One uniform per node still to act (``rng.random``), T-Man's partner rule
    (uniform from the view for ``psi == 0``, else among the ``psi`` nearest on
    the ring ``pids``), then the greedy disjoint pairs in order, as the generic
    path of :meth:`~hedgerow.gossip.TMan.cycle` takes them.
    """
    u = rng.random(remaining.shape[0])
    if psi == 0:
        return _uniform_batch(remaining, view, sample, alive, busy, batch, u)
    partners = _ring_partner(remaining, view, sample, alive, u, pids, psi)
    take, later = _pick_batch(remaining, partners, alive, busy, batch)
    return remaining[take], partners[take], remaining[later]


@numba.njit(cache=True, inline="always")
def _uniform_batch(remaining, view, sample, alive, busy, batch, u):  # pragma: no cover
    """:func:`_uniform_partner` and :func:`_pick_batch` in one pass: each node's partner
    (uniform among its view's entries, else a live sample entry), then, in the same
    order, the pair taken, deferred or dropped as the two functions decide it.  The
    partners do not depend on the pairing, so one pass gives the same batch, without
    the two passes' intermediate arrays."""
    m = remaining.shape[0]
    R = view.shape[1]
    ps = np.empty(m, np.int64)
    qs = np.empty(m, np.int64)
    later = np.empty(m, np.int64)
    n_take = 0
    n_later = 0
    for i in range(m):
        if i + 8 < m:
            prefetch_row(view, remaining[i + 8])  # the nodes come in random order
        p = remaining[i]
        k = 0
        for j in range(R):
            k += view[p, j] >= 0
        q = -1
        if k > 0:
            pick = min(int(u[i] * k), k - 1)
            if k == R:  # a full view: the pick-th slot itself
                q = view[p, pick]
            else:
                for j in range(R):
                    if view[p, j] >= 0:
                        if pick == 0:
                            q = view[p, j]
                            break
                        pick -= 1
        else:
            q = _random_alive(sample[p], alive, u[i])
        if q < 0 or q == p or not alive[q]:
            continue  # no exchange this cycle (none known, or a timeout)
        if busy[p] == batch or busy[q] == batch:
            later[n_later] = p
            n_later += 1
            continue
        busy[p] = batch
        busy[q] = batch
        ps[n_take] = p
        qs[n_take] = q
        n_take += 1
    return ps[:n_take], qs[:n_take], later[:n_later]


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


@numba.njit(cache=True, inline="always")
def _ring_final(r, view, allowed, rank, half, every=False):  # pragma: no cover - compiled
    """Whether ``r``'s row is final: its ring neighbours in the ranking's order.

    That is a view of ``R = 2 half`` allowed entries whose ``j``-th pair holds
    the nodes ``j + 1`` ranks after and before ``r``, lower id first: what
    :func:`_ring_row` writes for lists on disjoint arcs (and what
    :func:`_ring_bound` calls ``same``, with both bounds at ``half`` ranks).  As
    ranks are distinct, no other node lies within those bounds, so whatever an
    exchange's union holds (it holds the view's own entries) the ranking writes
    the row as it stands.  Ranks are compared without wrapping round: the few
    rows whose neighbours wrap past rank 0 are never called final and take the
    ranking's path.  ``every``: every node is allowed (``allowed`` is not read).

    The first pair is tested on its own (most rows of the early cycles fail
    there); the other pairs are tested without a branch per pair, as a converged
    row passes them all.
    """
    if view.shape[1] != 2 * half:
        return False
    me = np.int64(rank[r])
    ok = True
    for j in range(half):
        a = view[r, 2 * j]
        b = view[r, 2 * j + 1]
        a0 = max(a, 0)  # an empty slot (-1) reads node 0, and fails a >= 0 below
        b0 = max(b, 0)
        ra = np.int64(rank[a0])
        rb = np.int64(rank[b0])
        up = me + j + 1
        dn = me - j - 1
        ok_j = ((a >= 0) & (b > a) & (every | (allowed[a0] & allowed[b0]))
                & (((ra == up) & (rb == dn)) | ((ra == dn) & (rb == up))))
        if j == 0 and not ok_j:
            return False
        ok &= ok_j
    return ok


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
                   uxs, cw_v, cw_i, cc_v, cc_i, done, chosen, sb, tally, fin,
                   every):  # pragma: no cover
    """One exchange of the fused ring cycle (``s``: its mark stamp, new in ``mark``).

    ``fin`` holds, per node, whether its row is final (:func:`_ring_final`), as the
    cycle found it (:func:`_final_rows`) and as this function keeps it: a final row
    is never rewritten, and a row the ranking rewrites is tested again afterwards.
    ``every``: every node is allowed (the union then reads no ``allowed``).

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
    # each end's bounds from its own view; an end whose view is its half nearest ranks each
    # way (its ring neighbours: a final row) keeps it whatever the union holds, and an
    # exchange between two such ends changes nothing
    final_p = fin[p]
    final_q = fin[q]
    # the union of both buffers, in the generic gather's order
    k = _union(p, q, view, sample, allowed, include_self, mark, s, union, every)
    for t in range(k):  # independent loads first: their cache misses overlap
        uxs[t] = np.uint64(rank[union[t]]) << np.uint64(32)
    # both ends rank the whole union (each skips itself), bounded by their own views
    for side in range(2):
        if final_p if side == 0 else final_q:
            continue
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
        fin[r] = _ring_final(r, view, allowed, rank, half, every)


@numba.njit(cache=True, inline="always")
def _exchanges(ps, qs, lo, hi, base, view, sample, allowed, include_self, ids, rank, half, mark,
               union, uxs, cw_v, cw_i, cc_v, cc_i, done, chosen, sb, tally,
               fin, every):  # pragma: no cover
    """The exchanges ``lo:hi`` of a batch's pairs, in order (exchange ``e``'s mark stamp is
    ``base + e + 1``), each asking for the view and sample rows of the exchange 4 ahead (a
    prefetch: at 100,000 nodes those rows come from memory, and the loads of several
    exchanges then overlap) unless both its ends are final (``fin``: it reads no row)."""
    for e in range(lo, hi):
        f = e + 4
        if f < hi and not (fin[ps[f]] and fin[qs[f]]):
            prefetch_row(view, ps[f])
            prefetch_row(view, qs[f])
            prefetch_row(sample, ps[f])
            prefetch_row(sample, qs[f])
        if fin[ps[e]] and fin[qs[e]]:
            continue  # both rows final: the exchange changes nothing (checked before the call,
            # which costs as much as the check again when inlined into the loop)
        _ring_exchange(ps[e], qs[e], np.int32(base + e + 1), view, sample, allowed, include_self,
                       ids, rank, half, mark, union, uxs, cw_v, cw_i, cc_v, cc_i, done, chosen,
                       sb, tally, fin, every)


@numba.njit(cache=True, inline="always")
def _final_rows(view, allowed, rank, half, every):  # pragma: no cover - compiled
    """Whether each row is final (:func:`_ring_final`), one pass in row order at the start of
    a cycle; the cycle's exchanges then keep the flags (:func:`_ring_exchange`).  ``every``:
    every node is allowed."""
    n = view.shape[0]
    fin = np.zeros(n, np.bool_)
    if view.shape[1] == 2 * half:
        for r in range(n):
            fin[r] = _ring_final(r, view, allowed, rank, half, every)
    return fin


@numba.njit(cache=True)
def _ring_cycle(remaining, view, sample, alive, allowed, include_self, ids, rank, half, pids,
                psi, rng):  # pragma: no cover - compiled
    """A whole T-Man cycle on the ring in one call: the batches of :meth:`TMan.cycle` fused.

    Same schedule and same draws as the generic path with ``ring_select(ids)``
    and ``uniform_partner`` (``psi == 0``) or ``ring_partner(pids, psi)``: per
    batch (:func:`_next_batch`) one uniform per node still to act
    (``rng.random``), the partners from the views as they stand, the greedy
    disjoint pairs in order.  An exchange of a batch reads and writes only its
    two views (and no exchange touches what the pairing reads), so the batch's
    pairs are taken first and its exchanges then run in their order
    (:func:`_exchanges`).  The union of the two buffers is built once, its ids
    are loaded once, and both sides select from it directly (no CSR in
    between).  The ring coordinates are the ids' ranks (``rank``, ``uint32``:
    the same order for distinct ids, half the bytes of an id) and the per-node
    marks are ``int32``, which keeps the random loads of large networks in a
    smaller cache footprint.  Returns ``(batches, exchanges)``.
    """
    n = view.shape[0]
    R = view.shape[1]
    cap = 2 * R + 2 * sample.shape[1] + 2
    union = np.empty(cap, np.int32)
    uxs = np.empty(cap, np.uint64)
    cw_v, cw_i, cc_v, cc_i, done = _ring_scratch(half, R)
    chosen = np.zeros(cap, np.bool_)
    sb = np.empty((2, cap), np.int64)
    tally = np.zeros(2, np.int64)
    busy = np.zeros(n, np.int32)
    mark = np.zeros(n, np.int32)
    every = np.all(allowed)
    fin = _final_rows(view, allowed, rank, half, every)
    batch = 0
    exchanges = 0
    while remaining.shape[0] > 0:
        batch += 1
        ps, qs, remaining = _next_batch(remaining, view, sample, alive, busy, batch, rng, pids,
                                        psi)
        _exchanges(ps, qs, 0, ps.shape[0], exchanges, view, sample, allowed, include_self, ids,
                   rank, half, mark, union, uxs, cw_v, cw_i, cc_v, cc_i, done, chosen, sb, tally,
                   fin, every)
        exchanges += ps.shape[0]
    return batch, exchanges


@numba.njit(cache=True, parallel=True)
def _ring_cycle_par(remaining, view, sample, alive, allowed, include_self, ids, rank, half,
                    pids, psi, rng, nt):  # pragma: no cover - compiled
    """:func:`_ring_cycle` with each batch's exchanges spread over the threads.

    The draws and the pairs of a batch are taken first, serially and in the same
    order; the batch's exchanges then run on ``nt`` threads, each on its own
    contiguous share of the pairs with its own scratch and marks.  Exchanges of
    one batch read and write only their own two views (and read the samples,
    which no exchange writes), so the order in which they run does not matter:
    views, counters and the generator state are those of :func:`_ring_cycle`
    bit for bit.  Returns ``(batches, exchanges)``.
    """
    n = view.shape[0]
    R = view.shape[1]
    cap = 2 * R + 2 * sample.shape[1] + 2
    mark = np.zeros((nt, n), np.int32)  # per thread; an exchange's stamp is its number
    busy = np.zeros(n, np.int32)
    every = np.all(allowed)
    fin = _final_rows(view, allowed, rank, half, every)  # an exchange writes only its two ends'
    # flags
    batch = 0
    exchanges = 0
    while remaining.shape[0] > 0:
        batch += 1
        ps, qs, remaining = _next_batch(remaining, view, sample, alive, busy, batch, rng, pids,
                                        psi)
        nb = ps.shape[0]
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
                _exchanges(ps, qs, lo, hi, exchanges, view, sample, allowed, include_self, ids,
                           rank, half, mark[t], union, uxs, cw_v, cw_i, cc_v, cc_i, done, chosen,
                           sb, tally, fin, every)
        exchanges += nb
    return batch, exchanges
