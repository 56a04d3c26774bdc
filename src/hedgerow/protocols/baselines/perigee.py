"""Perigee: neighbour selection by observed block arrival times (subset, vanilla, UCB).

Paper: Y. Mao, S. Deb, S. Bojja Venkatakrishnan, S. Kannan and K. Srinivasan,
"Perigee: Efficient peer-to-peer network design for blockchains", PODC 2020;
used as the baseline of Goldfish (Xue et al., ICBC 2023, sections II-A and
V-C).  The PODC paper is not in our corpus: the rules below are those of the
public implementations, which agree on them (``evangelos-kolyvas/blocknet``
``PerigeeSubset``; ``FranciscoAliaga/CPPerigee-and-experiments``
``PerigeeVanilla`` and its greedy subset; the Mercury simulator's
``perigee_ubc``; the Goldfish authors' baseline in ``bx3/goldfish``).

Every node keeps ``d_out`` outgoing links and accepts at most ``in_limit``
incoming ones (0 = no limit); links carry blocks both ways.  A *round* is one
epoch of the world (``--messages`` blocks: 99 in blocknet, 40 in Goldfish).
For every block ``m`` it did not publish, node ``v`` records, for each
candidate peer ``u``, the relative time ``t_{u,m} - t_m`` at which ``u``'s
copy arrived, ``t_m`` being the first arrival over all peers
(``reference="all"``: Goldfish, CPPerigee) or over the outgoing peers
(``reference="outgoing"``: blocknet).  A peer that sent no copy (it got the
block from ``v``) has no observation (``+inf``).  At the end of a round each
adaptive node keeps ``d_out - explore`` peers and dials ``explore`` new
uniformly random peers that accept a connection:

``variant="subset"``
    keep the set ``S`` of ``d_out - explore`` candidates minimising the
    ``percentile``-th percentile over the round's blocks of
    ``min_{u in S} (t_{u,m} - t_m)``; ``subset_search="exhaustive"`` scores
    every subset (blocknet, Goldfish), ``"greedy"`` grows the set one best
    peer at a time (CPPerigee).
``variant="vanilla"``
    score each candidate alone by that percentile, keep the best
    ``d_out - explore``.
``variant="ucb"``
    keep every observation of each outgoing peer since it was dialled; with
    ``n`` observations and ``p`` their ``percentile``-th percentile, the
    bounds are ``p -/+ ucb_bias * sqrt(ln n / (2 n))``; when the largest
    lower bound exceeds the smallest upper bound the peer with the largest
    lower bound is dropped and one random peer dialled (Mercury's
    ``perigee_ubc``; ``explore`` is not used).

Readings chosen
---------------
1. **Blocks without an observation.**  A block no candidate delivered is not
   a row (blocknet creates a row at the first outgoing delivery; Goldfish
   skips such messages).  In a row, a subset none of whose members delivered
   scores ``+inf`` (``silent="inf"``: blocknet's 10000 sentinel, the
   percentile over all rows) or is skipped for that subset, whose percentile
   is then taken over the rows it delivered (``silent="skip"``: the Goldfish
   authors' selector, ``sim/sec_hop/selector.py`` ``Selector.get_score``,
   lines 125-162; a subset that delivered no block is not ranked).  A node
   without any row keeps its outgoing peers and only fills empty slots
   (blocknet).
2. **Percentile index.**  blocknet takes the ``floor(q n)``-th smallest value
   (0-based; ``quantile_index="floor"``); ``"round"`` takes the
   ``round(q n)``-th (1-based, halves up); ``"goldfish"`` is the Goldfish
   authors' exact rule: the ``round(q n)``-th (1-based, halves to even) when
   ``n >= 10`` and the ``floor(q n)``-th (0-based) below.  Default ``floor``.
3. **Candidates.**  ``"outgoing"`` (PODC, blocknet, CPPerigee) scores only the
   outgoing peers; ``"all"`` (the Goldfish baseline, section II-A: "all
   possible combination of exploitation subset from the current peers")
   also the incoming ones; a kept incoming peer becomes an outgoing link and
   must accept it (its in-degree below ``in_limit``).  Subsets are tried in
   increasing score order (ties: lexicographic) until one whose new members
   all accept.
4. **Order and refusal.**  Adaptive nodes update one at a time in a random
   permutation (stream ``perigee:order``), each against the current
   in-degrees (the Goldfish code's "oracle"; blocknet updates nodes one by
   one as well).  New peers are uniform over nodes that are not ``v``, not
   currently linked to ``v`` (either direction, before the drops) and below
   their incoming limit (stream ``perigee:explore``).
5. **Start.**  ``d_out`` rounds in which the nodes, in a random order, each
   dial one uniform peer that accepts (Goldfish's initial topology; blocknet's
   first calibration fills all slots at random the same way).
6. **Exploitation edges** (:meth:`Perigee.exploit_out`): the kept peers of
   adaptive nodes (the first ``d_out - explore`` slots) and every link of a
   static node (Goldfish section V-C).

Presets (``preset``): a named parameter set filling every parameter left at
its default (:data:`PRESETS`).

Examples
--------
>>> import numpy as np
>>> rel = np.array([[0.0, 5.0, 9.0], [4.0, 0.0, 9.0], [6.0, 7.0, 0.0]])
>>> scores = subset_scores(rel[None], np.array([[0, 1], [0, 2], [1, 2]]), 0.9, 0)
>>> scores.tolist()   # per subset: the 90th percentile of the per-block minima
[[6.0, 4.0, 5.0]]
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any, ClassVar

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import entry_index
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Float, Int, check_memory
from hedgerow.protocols.base import AdaptiveProtocol, EpochView

__all__ = ["PRESETS", "QINDEX", "SILENT", "Perigee", "greedy_subset", "quantile_index",
           "subset_scores"]

#: named parameter sets: Goldfish's baseline (section V-C, the authors' code), the
#: PODC'20 setting, and blocknet's shipped PerigeeSubset configuration
PRESETS: dict[str, dict[str, Any]] = {
    "goldfish": {
        "variant": "subset", "d_out": 4, "explore": 1, "in_limit": 8, "candidates": "all",
        "reference": "all", "subset_search": "exhaustive", "quantile_index": "goldfish",
        "silent": "skip",
    },
    "podc20": {
        "variant": "subset", "d_out": 8, "explore": 2, "in_limit": 20, "candidates": "outgoing",
        "reference": "all", "subset_search": "exhaustive", "quantile_index": "floor",
        "silent": "inf",
    },
    "blocknet": {
        "variant": "subset", "d_out": 10, "explore": 2, "in_limit": 0,
        "candidates": "outgoing", "reference": "outgoing", "subset_search": "exhaustive",
        "quantile_index": "floor", "silent": "inf",
    },
    "mercury": {
        "variant": "ucb", "d_out": 8, "explore": 1, "in_limit": 0, "candidates": "outgoing",
        "reference": "all", "silent": "inf",
    },
}

#: percentile index rules (reading 2): blocknet's, the rounded one, the Goldfish authors' exact one
QINDEX = {"floor": 0, "round": 1, "goldfish": 2}
#: how a block that no member of a subset delivered counts (reading 1)
SILENT = ("inf", "skip")


# --------------------------------------------------------------------------- kernels
@numba.njit(cache=True)
def _kth(a: np.ndarray, cnt: int, k: int) -> float:
    """The ``k``-th smallest (0-based) of ``a[:cnt]``, in place (Hoare's quickselect)."""
    lo, hi = 0, cnt - 1
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return a[k]
    return a[k]


@numba.njit(cache=True)
def _qindex(cnt: int, q: float, rule: int) -> int:
    """0-based index of the ``q``-quantile among ``cnt`` sorted values (reading 2).

    ``rule`` 0: ``floor(q cnt)``; 1: ``floor(q cnt + 1/2) - 1``; 2 (the Goldfish
    authors'): ``round(q cnt) - 1`` with halves rounded to even (their language's
    ``round``) when ``cnt >= 10``, ``floor(q cnt)`` below.
    """
    x = q * cnt
    if rule == 0 or (rule == 2 and cnt < 10):
        k = int(math.floor(x + 1e-9))  # noqa: RUF046 (numba)
    elif rule == 1:
        k = int(math.floor(x + 0.5)) - 1  # noqa: RUF046 (numba)
    else:
        r = math.floor(x + 0.5)
        if abs(x + 0.5 - r) < 1e-9 and r % 2 == 1:
            r -= 1  # an exact half goes to the even neighbour
        k = int(r) - 1
    return min(max(k, 0), cnt - 1)


def quantile_index(cnt: int, q: float, rule: str) -> int:
    """0-based index of the ``q``-quantile among ``cnt`` sorted values, by ``rule``.

    ``rule`` is a ``quantile_index`` value: ``"floor"`` (blocknet,
    ``floor(q n)``), ``"round"`` (``round(q n) - 1``, halves up) or
    ``"goldfish"`` (the authors' selector: ``round(q n) - 1`` with halves to
    even for ``n >= 10``, ``floor(q n)`` below).

    Examples
    --------
    >>> [quantile_index(n, 0.9, "goldfish") for n in (9, 10, 11, 20, 25)]
    [8, 8, 9, 17, 21]
    >>> [quantile_index(n, 0.9, "round") for n in (9, 10, 11, 20, 25)]
    [7, 8, 9, 17, 22]
    """
    if rule not in QINDEX:
        raise ParameterError(f"quantile_index must be one of {', '.join(QINDEX)}, got {rule!r}",
                             key="quantile_index")
    return int(_qindex(int(cnt), float(q), QINDEX[rule]))


@numba.njit(cache=True)
def _quantile(vals: np.ndarray, cnt: int, q: float, rule: int) -> float:
    """The ``q``-quantile of ``vals[:cnt]`` by the index rule (reading 2); reorders ``vals``."""
    if cnt == 0:
        return np.inf
    return _kth(vals, cnt, _qindex(cnt, q, rule))


@numba.njit(cache=True)
def _subset_scores_kernel(
    rel: np.ndarray, subsets: np.ndarray, valid: np.ndarray, q: float, rule: int, skip: bool
) -> np.ndarray:
    """rel (n, M, P); subsets (S, k) of candidate positions; valid (n, P).

    Per block the candidates are sorted once; a subset's minimum is the first
    sorted candidate it holds (a bitmask test), so large subsets cost about
    one step per block instead of ``k``.  ``skip``: a block none of the
    subset's members delivered is left out of that subset's percentile, whose
    index is then taken over the blocks it did deliver (reading 1).
    """
    n, m_count, p_count = rel.shape
    s_count, k = subsets.shape
    out = np.full((n, s_count), np.inf)
    masks = np.zeros(s_count, dtype=np.int64)
    for s in range(s_count):
        for j in range(k):
            masks[s] |= np.int64(1) << subsets[s, j]
    order = np.empty((m_count, p_count), dtype=np.int64)
    vals = np.empty(m_count)
    rows = np.empty(m_count, dtype=np.int64)
    for v in range(n):
        vmask = np.int64(0)
        for p in range(p_count):
            if valid[v, p]:
                vmask |= np.int64(1) << p
        n_rows = 0
        for m in range(m_count):
            row = False
            for p in range(p_count):
                if valid[v, p] and rel[v, m, p] < np.inf:
                    row = True
                    break
            if row:
                # insertion sort of the block's candidates (P is small; no allocation)
                for p in range(p_count):
                    x = rel[v, m, p]
                    t = p
                    while t > 0 and rel[v, m, order[n_rows, t - 1]] > x:
                        order[n_rows, t] = order[n_rows, t - 1]
                        t -= 1
                    order[n_rows, t] = p
                rows[n_rows] = m
                n_rows += 1
        if n_rows == 0:
            continue
        if skip:
            # the subset's own blocks only: gather its finite minima, select by their count
            for s in range(s_count):
                if masks[s] & ~vmask:
                    continue
                cnt = 0
                for r in range(n_rows):
                    for t in range(p_count):
                        p = order[r, t]
                        if (masks[s] >> p) & 1:
                            best = rel[v, rows[r], p]
                            if best < np.inf:
                                vals[cnt] = best
                                cnt += 1
                            break
                if cnt > 0:
                    out[v, s] = _kth(vals, cnt, _qindex(cnt, q, rule))
            continue
        # the quantile is the smallest of the (n_rows - kq) largest block minima: keep those
        # in a small ascending buffer while scanning the blocks (no full selection per subset)
        kq = _qindex(n_rows, q, rule)
        keep = n_rows - kq
        for s in range(s_count):
            if masks[s] & ~vmask:
                continue
            held = 0
            for r in range(n_rows):
                best = np.inf
                for t in range(p_count):
                    p = order[r, t]
                    if (masks[s] >> p) & 1:
                        best = rel[v, rows[r], p]
                        break
                if held < keep:
                    t = held
                    while t > 0 and vals[t - 1] > best:
                        vals[t] = vals[t - 1]
                        t -= 1
                    vals[t] = best
                    held += 1
                elif best > vals[0]:
                    t = 0
                    while t + 1 < keep and vals[t + 1] < best:
                        vals[t] = vals[t + 1]
                        t += 1
                    vals[t] = best
            out[v, s] = vals[0]
    return out


@numba.njit(cache=True)
def _observe_kernel(
    er: np.ndarray, col: np.ndarray, arrival: np.ndarray, n_ref: int, publisher: np.ndarray,
    rel: np.ndarray, sel: np.ndarray,
) -> None:
    """rel[v, sel[i], p] = er[i, col[v, p]] - ref (inf without a copy or at the publisher).

    ``ref`` is ``arrival[i, v]`` (``n_ref == 0``) or the first copy over the
    first ``n_ref`` candidate columns (the outgoing peers).
    """
    m_count = er.shape[0]
    n, p_count = col.shape
    for i in range(m_count):
        mm = sel[i]
        for v in range(n):
            if n_ref == 0:
                r = arrival[i, v]
            else:
                r = np.inf
                for p in range(n_ref):
                    c = col[v, p]
                    if c >= 0 and er[i, c] < r:
                        r = er[i, c]
            own = publisher[i] == v
            for p in range(p_count):
                c = col[v, p]
                x = np.inf
                if c >= 0 and not own and r < np.inf:
                    t = er[i, c]
                    if t < np.inf:
                        x = t - r
                rel[v, mm, p] = x


def subset_scores(rel: np.ndarray, subsets: np.ndarray, q: float, rule: int,
                  valid: np.ndarray | None = None, skip: bool = False) -> np.ndarray:
    """``(n, S)`` score of every subset: the ``q``-quantile of the per-block minima.

    ``rel`` is ``(n, M, P)`` relative times (``inf`` = no copy), ``subsets``
    ``(S, k)`` candidate positions, ``valid`` ``(n, P)`` which positions hold
    a peer (default all), ``rule`` a value of :data:`QINDEX`.  Blocks no
    valid candidate delivered are dropped; a subset with no row or an empty
    position scores ``inf``.  A block that no member of a subset delivered
    counts ``inf`` for it (``skip=False``, ``silent=inf``) or is left out of
    its percentile, taken over the blocks it delivered (``skip=True``,
    ``silent=skip``; a subset that delivered none scores ``inf``).

    Examples
    --------
    >>> rel = np.array([[[0.0, np.inf], [3.0, 0.0]]])
    >>> subset_scores(rel, np.array([[0], [1]]), 0.5, 0).tolist()
    [[3.0, inf]]
    >>> subset_scores(rel, np.array([[0], [1]]), 0.5, 0, skip=True).tolist()
    [[3.0, 0.0]]
    """
    r = np.ascontiguousarray(rel, dtype=np.float64)
    if valid is None:
        valid = np.ones((r.shape[0], r.shape[2]), dtype=np.bool_)
    return _subset_scores_kernel(r, np.ascontiguousarray(subsets, dtype=np.int64),
                                 np.ascontiguousarray(valid, dtype=np.bool_), float(q), int(rule),
                                 bool(skip))


@numba.njit(cache=True)
def _greedy_kernel(rel: np.ndarray, valid: np.ndarray, k: int, q: float, rule: int,
                   skip: bool) -> np.ndarray:
    n, m_count, p_count = rel.shape
    chosen = np.full((n, k), -1, dtype=np.int64)
    cur = np.empty(m_count)
    vals = np.empty(m_count)
    for v in range(n):
        rows = np.zeros(m_count, dtype=np.bool_)
        for m in range(m_count):
            for p in range(p_count):
                if valid[v, p] and rel[v, m, p] < np.inf:
                    rows[m] = True
                    break
        cur[:] = np.inf
        used = np.zeros(p_count, dtype=np.bool_)
        for j in range(k):
            best_p = -1
            best_s = np.inf
            for p in range(p_count):
                if used[p] or not valid[v, p]:
                    continue
                cnt = 0
                for m in range(m_count):
                    if rows[m]:
                        x = rel[v, m, p]
                        x = cur[m] if cur[m] < x else x
                        if skip and x == np.inf:
                            continue
                        vals[cnt] = x
                        cnt += 1
                sc = _quantile(vals, cnt, q, rule)
                if best_p < 0 or sc < best_s:
                    best_p, best_s = p, sc
            if best_p < 0:
                break
            used[best_p] = True
            chosen[v, j] = best_p
            for m in range(m_count):
                if rel[v, m, best_p] < cur[m]:
                    cur[m] = rel[v, m, best_p]
    return chosen


@numba.njit(cache=True)
def _chosen_scores(rel: np.ndarray, chosen: np.ndarray, valid: np.ndarray, q: float,
                   rule: int, skip: bool) -> np.ndarray:
    """Per node, the score of its own chosen positions (``inf`` when none)."""
    n, m_count, p_count = rel.shape
    out = np.full(n, np.inf)
    vals = np.empty(m_count)
    for v in range(n):
        if chosen[v, 0] < 0:
            continue
        cnt = 0
        for m in range(m_count):
            row = False
            for p in range(p_count):
                if valid[v, p] and rel[v, m, p] < np.inf:
                    row = True
                    break
            if not row:
                continue
            best = np.inf
            for j in range(chosen.shape[1]):
                c = chosen[v, j]
                if c >= 0 and rel[v, m, c] < best:
                    best = rel[v, m, c]
            if skip and best == np.inf:
                continue
            vals[cnt] = best
            cnt += 1
        out[v] = _quantile(vals, cnt, q, rule)
    return out


def greedy_subset(rel: np.ndarray, k: int, q: float, rule: int,
                  valid: np.ndarray | None = None, skip: bool = False) -> np.ndarray:
    """``(n, k)`` candidate positions chosen greedily: best single peer, then best addition.

    ``skip`` as in :func:`subset_scores` (``silent=skip``).

    Examples
    --------
    >>> rel = np.array([[[0.0, 1, 9], [9, 0, 1], [9, 1, 0]]])   # 3 blocks x 3 peers
    >>> greedy_subset(rel, 2, 0.9, 0).tolist()
    [[1, 0]]
    """
    r = np.ascontiguousarray(rel, dtype=np.float64)
    if valid is None:
        valid = np.ones((r.shape[0], r.shape[2]), dtype=np.bool_)
    return _greedy_kernel(r, np.ascontiguousarray(valid, dtype=np.bool_), int(k), float(q),
                          int(rule), bool(skip))


@numba.njit(cache=True)
def _start_kernel(n: int, d: int, in_limit: int, order: np.ndarray, draws: np.ndarray,
                  active: np.ndarray) -> np.ndarray:
    out = np.full((n, d), -1, dtype=np.int64)
    indeg = np.zeros(n, dtype=np.int64)
    pos = 0
    for r in range(d):
        for i in range(n):
            v = order[r, i]
            if not active[v]:
                continue
            for _ in range(64):
                u = draws[pos % len(draws)]
                pos += 1
                if u != v and not _linked(out, v, u) and (in_limit == 0 or indeg[u] < in_limit):
                    out[v, r] = u
                    indeg[u] += 1
                    break
            else:
                # rejection failed: scan from a drawn offset
                off = draws[pos % len(draws)]
                pos += 1
                for t in range(n):
                    u = (off + t) % n
                    if u != v and not _linked(out, v, u) and (in_limit == 0
                                                              or indeg[u] < in_limit):
                        out[v, r] = u
                        indeg[u] += 1
                        break
    # left-pack
    for v in range(n):
        j = 0
        for r in range(d):
            if out[v, r] >= 0:
                out[v, j] = out[v, r]
                j += 1
        for r in range(j, d):
            out[v, r] = -1
    return out


@numba.njit(cache=True)
def _linked(out: np.ndarray, v: int, u: int) -> bool:
    """Whether ``v`` and ``u`` are linked in ``out``: an out-link ``v -> u`` or ``u -> v``.

    Read from the two rows (``2 d`` reads) instead of an ``n x n`` table kept beside the
    out-links, which needed ``n**2`` bytes (9.3 GiB at 100,000 nodes) and an ``O(n d)``
    scan for the incoming links after every node's update.
    """
    for t in range(out.shape[1]):
        if out[v, t] == u or out[u, t] == v:
            return True
    return False


@numba.njit(cache=True)
def _dialable(u: int, v: int, alive: np.ndarray, out: np.ndarray, indeg: np.ndarray,
              in_limit: int, row: np.ndarray, fill: int) -> bool:
    """Whether ``v`` may dial ``u`` as an exploration peer.

    ``u`` must be another live node, not already linked to ``v`` in ``out`` (before ``v``'s
    drops: ``v``'s row there is still the old one), with a free incoming slot (when
    ``in_limit > 0``) and not among the ``fill`` peers already placed in ``row``.
    """
    if u == v or not alive[u] or _linked(out, v, u) or (in_limit > 0 and indeg[u] >= in_limit):
        return False
    for j in range(fill):
        if row[j] == u:
            return False
    return True


@numba.njit(cache=True)
def _apply_kernel(
    out: np.ndarray,
    peers: np.ndarray,
    ranked: np.ndarray,
    subsets: np.ndarray,
    keep_counts: np.ndarray,
    update: np.ndarray,
    order: np.ndarray,
    in_limit: int,
    draws: np.ndarray,
    alive: np.ndarray,
) -> np.ndarray:
    """Sequentially apply each updating node's choice against the current in-degrees.

    ``ranked[v]``: subset indices in preference order (``-1`` ends the list);
    ``keep_counts[v]``: how many slots node ``v`` keeps (0: keep nothing but
    the fallback; -1: keep every current out-link and only fill); ``alive[u]``
    false: ``u`` is offline (churn) and neither kept nor dialled.
    """
    n, d = out.shape
    new_out = out.copy()
    indeg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        for j in range(d):
            u = out[v, j]
            if u >= 0:
                indeg[u] += 1
    pos = 0
    kept = np.empty(d, dtype=np.int64)
    for i in range(len(order)):
        v = order[i]
        if not update[v]:
            continue
        n_kept = 0
        if keep_counts[v] < 0:
            for j in range(d):
                if new_out[v, j] >= 0 and alive[new_out[v, j]]:
                    kept[n_kept] = new_out[v, j]
                    n_kept += 1
        else:
            for r in range(ranked.shape[1]):
                s = ranked[v, r]
                if s < 0:
                    break
                ok = True
                for j in range(subsets.shape[1]):
                    u = peers[v, subsets[s, j]]
                    if u < 0 or not alive[u]:
                        ok = False
                        break
                    is_out = False
                    for t in range(d):
                        if new_out[v, t] == u:
                            is_out = True
                    if not is_out and in_limit > 0 and indeg[u] >= in_limit:
                        ok = False
                        break
                if ok:
                    for j in range(subsets.shape[1]):
                        kept[n_kept] = peers[v, subsets[s, j]]
                        n_kept += 1
                    break
        # drop current out-links that are not kept; dial kept peers that were not out-links
        for t in range(d):
            u = new_out[v, t]
            if u < 0:
                continue
            still = False
            for j in range(n_kept):
                if kept[j] == u:
                    still = True
            if not still:
                indeg[u] -= 1
        for j in range(n_kept):
            u = kept[j]
            was = False
            for t in range(d):
                if new_out[v, t] == u:
                    was = True
            if not was:
                indeg[u] += 1
        # explore: uniform peers not linked to v before the drops, accepting a connection
        fill = n_kept
        row = np.full(d, -1, dtype=np.int64)
        for j in range(n_kept):
            row[j] = kept[j]
        tries = 0
        while fill < d and tries < 64 * d:
            u = draws[pos % len(draws)]
            pos += 1
            tries += 1
            if _dialable(u, v, alive, new_out, indeg, in_limit, row, fill):
                row[fill] = u
                indeg[u] += 1
                fill += 1
        if fill < d:
            off = draws[pos % len(draws)]
            pos += 1
            for t in range(n):
                if fill >= d:
                    break
                u = (off + t) % n
                if _dialable(u, v, alive, new_out, indeg, in_limit, row, fill):
                    row[fill] = u
                    indeg[u] += 1
                    fill += 1
        for t in range(d):
            new_out[v, t] = row[t]
    return new_out


# --------------------------------------------------------------------------- protocol
class _Round:
    """One epoch's observations: relative times per (node, block, candidate)."""

    def __init__(self, peers: np.ndarray, n_messages: int, publisher: np.ndarray) -> None:
        n, p = peers.shape
        # the largest array of a Perigee run: 6.0 GiB at 100,000 nodes, 1,000 blocks, 8 peers
        check_memory(f"perigee's observations ({n:,} nodes x {n_messages:,} blocks x {p} "
                     "peers)", 8.0 * n * n_messages * p)
        self.peers = peers
        self.rel = np.full((n, n_messages, p), np.inf, dtype=np.float64)
        self.publisher = publisher
        self.entries: np.ndarray | None = None


class Perigee(AdaptiveProtocol):
    """Perigee (Mao et al., PODC 2020): keep the peers that deliver blocks fastest.

    See the module docstring for the variants, readings and presets.

    Examples
    --------
    >>> from hedgerow.scenarios.epochs import run_protocol
    >>> from hedgerow.scenarios.world import make_world
    >>> w = make_world("goldfish-random", seed=1, epochs=2)
    >>> res = run_protocol(Perigee(preset="goldfish"), w)
    >>> len(res.rows), res.rows[-1]["t50_ms"] > 0
    (2, True)
    """

    name = "perigee"
    paper = "Mao, Deb, Bojja Venkatakrishnan, Kannan, Srinivasan, Perigee, PODC 2020"
    forwarding: ClassVar[str] = "flood"
    #: none: its kernels read "linked" from the out-link rows (:func:`_linked`), not a table
    pair_bytes: ClassVar[int] = 0
    #: its selection does not read the loop's ``linked`` table
    needs_linked: ClassVar[bool] = False
    params = {
        "variant": Choice("subset", ("subset", "vanilla", "ucb"),
                          "subset (exhaustive/greedy set score), vanilla (per peer) or ucb"),
        "preset": Choice("none", ("none", *PRESETS),
                         "named parameter set for the parameters left at their defaults"),
        "d_out": Int(8, "outgoing links per node", low=1, unit="links"),
        "explore": Int(2, "outgoing links replaced by random peers each round", low=0,
                       unit="links"),
        "in_limit": Int(20, "incoming links a node accepts (0 = no limit)", low=0,
                        unit="links"),
        "percentile": Float(90.0, "percentile of the relative delays scored", low=0.0,
                            high=100.0),
        "quantile_index": Choice("floor", ("floor", "round", "goldfish"),
                                 "percentile index: floor(q n) 0-based (blocknet), "
                                 "round(q n) 1-based, or the Goldfish code's (round(q n) "
                                 "1-based, halves to even, for n >= 10; floor(q n) below)"),
        "silent": Choice("auto", ("auto", *SILENT),
                         "a block no member of a subset delivered: inf scores it +inf "
                         "(blocknet), skip leaves it out of that subset's percentile "
                         "(Goldfish code); auto = the preset's, inf without one"),
        "subset_search": Choice("exhaustive", ("exhaustive", "greedy"),
                                "subset variant: every subset, or grow one best peer at a time"),
        "candidates": Choice("outgoing", ("outgoing", "all"),
                             "peers scored: outgoing only, or incoming ones too (Goldfish)"),
        "reference": Choice("all", ("all", "outgoing"),
                            "relative times from the first copy over all peers or over the "
                            "outgoing ones (blocknet)"),
        "ucb_bias": Float(125.0, "ucb: confidence width factor (ms)", low=0.0, high=1e9),
    }
    quick_params: ClassVar[dict[str, Any]] = {"d_out": 3, "explore": 1, "in_limit": 0}

    # ------------------------------------------------------------- configuration
    def config(self) -> dict[str, Any]:
        """The effective parameters: the checked values with the preset filled in."""
        cfg = dict(self.checked())
        preset = cfg["preset"]
        if preset != "none":
            for k, v in PRESETS[preset].items():
                if cfg[k] == self.params[k].default:
                    cfg[k] = v
        if cfg["silent"] == "auto":
            cfg["silent"] = "inf"
        if cfg["variant"] != "ucb" and cfg["explore"] >= cfg["d_out"]:
            raise ParameterError(
                f"{self.name}: parameter explore must be below d_out ({cfg['d_out']}), "
                f"got {cfg['explore']}",
                key="explore",
            )
        return cfg

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        d = values["d_out"]
        if values["preset"] != "none" and d == self.params["d_out"].default:
            d = PRESETS[values["preset"]]["d_out"]
        if d >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: parameter d_out must be below the number of nodes "
                f"({instance.n_nodes}), got {d}",
                key="d_out",
            )

    def out_degree(self) -> int:
        return self.config()["d_out"]

    def incoming_limit(self) -> int:
        return int(self.config()["in_limit"])

    def _alive(self, n: int) -> np.ndarray:
        online = getattr(self, "online_", None)
        return np.ones(n, dtype=np.bool_) if online is None else np.asarray(online, np.bool_)

    def _draws(self, size: int, n: int) -> np.ndarray:
        """Uniform exploration draws; under churn (``set_online``) over the online nodes only."""
        online = getattr(self, "online_", None)
        if online is None:
            return self.explore_rng_.integers(0, n, size=size)
        ids = np.flatnonzero(online)
        return ids[self.explore_rng_.integers(0, len(ids), size=size)]

    def degree_bound(self, instance: Instance) -> int | np.ndarray | None:
        cfg = self.config()
        return cfg["d_out"] + (cfg["in_limit"] or instance.n_nodes)

    def keep(self) -> int:
        """Slots kept each round (``d_out - explore``; ``d_out - 1`` for ucb)."""
        cfg = self.config()
        return cfg["d_out"] - (1 if cfg["variant"] == "ucb" else cfg["explore"])

    def exploit_out(self, out: np.ndarray, adaptive: np.ndarray) -> np.ndarray:
        """Kept slots of adaptive nodes, every slot of static ones (reading 6)."""
        ex = np.array(out, copy=True)
        if self.config()["variant"] == "ucb":
            return ex
        ex[np.asarray(adaptive, dtype=bool), self.keep():] = -1
        return ex

    # ------------------------------------------------------------- adaptive interface
    def start(self, instance: Instance, streams: RngStreams, active: np.ndarray) -> np.ndarray:
        cfg = self._validate(instance)
        cfg = self.config()
        n, d = instance.n_nodes, cfg["d_out"]
        self.cfg_ = cfg
        self.explore_rng_ = streams.stream("perigee:explore")
        self.order_rng_ = streams.stream("perigee:order")
        rng = streams.stream("perigee:init")
        order = np.vstack([rng.permutation(n) for _ in range(d)])
        draws = rng.integers(0, n, size=max(64 * n * d, 1024))
        act = np.asarray(active, dtype=np.bool_)
        out = _start_kernel(n, d, int(cfg["in_limit"]), order, draws, act)
        k = self.keep()
        p = d if cfg["candidates"] == "outgoing" else d + (cfg["in_limit"] or n)
        self.max_candidates_ = p
        self.subsets_: np.ndarray | None = None
        if cfg["variant"] == "subset" and cfg["subset_search"] == "exhaustive":
            if math.comb(p, k) > 200_000:
                raise ParameterError(
                    f"{self.name}: {math.comb(p, k)} subsets of {p} candidates; use "
                    "subset_search=greedy or candidates=outgoing",
                    key="subset_search",
                )
        # ucb: per node, per current out-peer, its relative times since it was dialled
        self.hist_: list[dict[int, list[float]]] | None = None
        if cfg["variant"] == "ucb":
            self.hist_ = [{} for _ in range(n)]
        return out

    def _peers(self, out: np.ndarray) -> np.ndarray:
        """Candidate table ``(n, P)``: out-slots, then incoming peers (candidates=all)."""
        if self.cfg_["candidates"] == "outgoing":
            return np.array(out, dtype=np.int64)
        n, d = out.shape
        src = np.repeat(np.arange(n), d)
        dst = out.reshape(-1)
        ok = dst >= 0
        src, dst = src[ok], dst[ok]
        # an incoming peer that is also an outgoing one appears once (as outgoing)
        mutual = np.zeros(len(src), dtype=bool)
        outset = set(zip(src.tolist(), dst.tolist(), strict=True))
        for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
            mutual[i] = (b, a) in outset
        src, dst = src[~mutual], dst[~mutual]
        order = np.lexsort((src, dst))
        recv, snd = dst[order], src[order]
        cnt = np.bincount(recv, minlength=n)
        width = d + int(cnt.max(initial=0))
        peers = np.full((n, width), -1, dtype=np.int64)
        peers[:, :d] = out
        start = np.r_[0, np.cumsum(cnt)[:-1]]
        peers[recv, d + np.arange(len(recv)) - start[recv]] = snd
        return peers

    def begin_epoch(
        self, instance: Instance, out: np.ndarray, publisher: np.ndarray, topic: np.ndarray
    ) -> _Round:
        return _Round(self._peers(out), len(publisher), np.asarray(publisher, dtype=np.int64))

    def observe(self, state: _Round, view: EpochView) -> None:
        peers = state.peers
        n, p = peers.shape
        if state.entries is None:
            recv = np.repeat(np.arange(n), p)
            state.entries = entry_index(view.indptr, view.indices, peers.reshape(-1), recv)
        ent = state.entries
        col = np.where(ent >= 0, view.entry_map[np.maximum(ent, 0)], -1).reshape(n, p)
        er = np.ascontiguousarray(view.edge_recv, dtype=np.float64)
        n_ref = 0 if self.cfg_["reference"] == "all" else self.cfg_["d_out"]
        _observe_kernel(er, np.ascontiguousarray(col), np.asarray(view.arrival, dtype=np.float64),
                        n_ref, np.asarray(view.publisher, dtype=np.int64), state.rel,
                        np.asarray(view.sel, dtype=np.int64))

    def select(
        self,
        state: _Round,
        instance: Instance,
        out: np.ndarray,
        linked: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        cfg = self.cfg_
        n, d = out.shape
        q = cfg["percentile"] / 100.0
        rule = QINDEX[cfg["quantile_index"]]
        skip = cfg["silent"] == "skip"
        peers = state.peers
        valid = peers >= 0
        update = np.asarray(active, dtype=bool)
        k = self.keep()
        has_rows = (np.isfinite(state.rel) & valid[:, None, :]).any(axis=(1, 2))
        keep_counts = np.where(has_rows, k, -1).astype(np.int64)
        score = np.full(n, np.nan)
        if cfg["variant"] == "ucb":
            return self._select_ucb(state, out, update)
        if cfg["variant"] == "subset" and cfg["subset_search"] == "exhaustive":
            subsets = np.asarray(list(combinations(range(peers.shape[1]), k)), dtype=np.int64)
            subsets = subsets.reshape(len(subsets), k)
            sc = subset_scores(state.rel, subsets, q, rule, valid, skip)
            ranked = np.argsort(sc, axis=1, kind="stable")
            ranked = np.where(np.take_along_axis(sc, ranked, 1) < np.inf, ranked, -1)
            best = sc[np.arange(n), np.maximum(ranked[:, 0], 0)]
        else:
            if cfg["variant"] == "subset":
                chosen = greedy_subset(state.rel, k, q, rule, valid, skip)
            else:
                single = subset_scores(state.rel, np.arange(peers.shape[1])[:, None], q, rule,
                                       valid, skip)
                chosen = np.argsort(single, axis=1, kind="stable")[:, :k]
                chosen = np.where(np.take_along_axis(single, chosen, 1) < np.inf, chosen, -1)
            # one "subset" per node: its chosen positions (rows with -1 mean keep nothing)
            subsets = chosen
            ranked = np.where((chosen >= 0).all(axis=1), np.arange(n), -1)[:, None]
            best = _chosen_scores(state.rel, np.ascontiguousarray(chosen), valid, q, rule, skip)
        # no subset fits (e.g. fewer candidates than k): keep all current links
        keep_counts[(ranked[:, 0] < 0) & has_rows] = -1
        order = self.order_rng_.permutation(n)
        draws = self._draws(max(64 * d * int(update.sum()), 1024), n)
        new_out = _apply_kernel(
            np.asarray(out, dtype=np.int64), peers, np.ascontiguousarray(ranked),
            np.ascontiguousarray(subsets), keep_counts, update, order, int(cfg["in_limit"]),
            draws, self._alive(n),
        )
        score = np.where(update & has_rows, best, np.nan)
        score[~np.isfinite(score)] = np.nan
        return new_out, score

    def _select_ucb(
        self, state: _Round, out: np.ndarray, update: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        cfg = self.cfg_
        n, d = out.shape
        q = cfg["percentile"] / 100.0
        rule = QINDEX[cfg["quantile_index"]]
        hist = self.hist_
        assert hist is not None
        drop = np.full(n, -1, dtype=np.int64)
        score = np.full(n, np.nan)
        for v in np.flatnonzero(update):
            lcb = np.full(d, -np.inf)
            ucb = np.full(d, np.inf)
            for j in range(d):
                if out[v, j] < 0:
                    continue
                obs = state.rel[v, :, j]
                past = hist[v].setdefault(int(out[v, j]), [])
                past.extend(obs[np.isfinite(obs)].tolist())
                h = np.asarray(past)
                if len(h) < 2:
                    continue
                p = _quantile(h.copy(), len(h), q, rule)
                w = cfg["ucb_bias"] * math.sqrt(math.log(len(h)) / (2 * len(h)))
                lcb[j], ucb[j] = p - w, p + w
            j_worst = int(np.argmax(lcb))
            if np.isfinite(lcb[j_worst]) and lcb[j_worst] > ucb.min():
                drop[v] = j_worst
            if np.isfinite(ucb).any():
                score[v] = float(np.min(ucb[np.isfinite(ucb)]))
        # express as "keep every slot but the dropped one"
        k = d - 1
        subsets = np.zeros((n, k), dtype=np.int64)
        ranked = np.full((n, 1), -1, dtype=np.int64)
        keep_counts = np.full(n, -1, dtype=np.int64)
        for v in np.flatnonzero(drop >= 0):
            keepers = [j for j in range(d) if j != drop[v] and out[v, j] >= 0]
            subsets[v, : len(keepers)] = keepers
            if len(keepers) == k:
                ranked[v, 0] = v
                keep_counts[v] = k
        order = self.order_rng_.permutation(n)
        draws = self._draws(max(64 * d * int(update.sum()), 1024), n)
        peers = np.asarray(out, dtype=np.int64)
        new_out = _apply_kernel(peers, peers, ranked, subsets, keep_counts, update, order,
                                int(cfg["in_limit"]), draws, self._alive(n))
        # a dropped peer's history is forgotten; a new one starts empty
        for v in np.flatnonzero(update):
            now = set(new_out[v][new_out[v] >= 0].tolist())
            for u in [u for u in hist[v] if u not in now]:
                del hist[v][u]
        return new_out, score
