"""The completion objective (Goldfish eq. 1-2) and two numba solvers.

Variables: ``a_v`` for every estimable cell ``v = (r, u)`` and one offset
``c_r`` per row.  For each neighbour ``o`` of ``v`` (its K nearest rows), the
term is the Euclidean norm of the difference between the offset-aligned rows,
restricted to the peers both rows observed plus the column ``u`` (eq. 2):

.. math::

    \\|S_{v,o} \\odot [(T_o + c_o) - (T_r + c_r) - (a_v - c_r) e_u]\\|_2 .

At the common columns the bracket is ``(T_ol - T_rl) + (c_o - c_r)``; at
``u`` it is ``T_ou + c_o - a_v``.  With ``n`` common columns, ``S1`` the sum
and ``S2`` the sum of squares of ``T_ol - T_rl`` and ``δ = c_o - c_r``, the
squared norm is ``n δ² + 2 δ S1 + S2 + (T_ou + c_o - a_v)²``, so one term
costs O(1) whatever the number of peers.  The loss (eq. 1) is

.. math::

    L(A, C) = \\sum_v \\sum_{o \\in N(v)} \\omega_{v,o} \\|\\cdot\\|_2 + \\|A\\|_2 + \\|C\\|_2

with ``ω = w(v, o)`` (softmax weights), divided by the number of estimable
cells of the row when ``row_normalise`` (the authors' code; eq. 1 has no
such factor).  Every term is a norm of an affine function, so **L is convex**
(§IV-B3 calls it non-convex): every local minimum is global.

Solvers
-------
``adam`` (§IV-B4, §V-A): Adam, learning rate 1e-2, at most 2000 steps, from a
uniform ``[0, 1)`` start; early stop when the change of ``L / s`` stayed
within ``1e-3`` at 3 steps, the last two less than 10 steps apart (the
authors' stopping rule), with a **fresh** stopping state per completion.

``mm`` (default): majorise-minimise (iteratively reweighted least squares) on
the exact objective: each norm ``‖y‖`` is majorised by
``‖y‖²/(2‖y_k‖) + ‖y_k‖/2``, so every step solves one linear system (the
``a_v`` block is diagonal and is eliminated; the Schur complement is
``p × p``).  The norms are smoothed, ``sqrt(‖y‖² + ε²)``, with ``ε`` shrunk
every step (×0.2) from 1e-2 down to 1e-10 (a majoriser at ``y = 0`` would freeze the
variables), starting from ``c = 0`` and ``a_v`` the weighted mean of its
neighbours' values; the best iterate is kept.  It stops once ``ε`` reached its floor and a
step lowered the loss by less than ``tol = 1e-5`` (relative): on real and planted windows
that is within 1e-4 of a long converged solve (the acceptance bound is 1e-3).

The ``p × p`` system has a fixed sparsity pattern (``(r, o)`` of every term, and the pairs of
neighbours of one cell): about 5 nonzeros a row.  Its rows are numbered once per solve by
reverse Cuthill-McKee and it is factored within its envelope (Cholesky fills nothing outside
it), about 20,000 multiply-adds on a 120-row window instead of the dense ``p³/6`` (288,000);
``envelope=False`` keeps the dense factorisation (same iterates up to rounding).  On windows of
more than ``SPARSE_ROWS`` rows (a world of 1,000 messages an epoch gives 3,000) the pattern
defeats that order (an envelope of 0.5-1.4 million entries): they are factored by an up-looking
sparse Cholesky in a minimum-degree order (:func:`min_degree_order`), whose factor holds
16,000-76,000 nonzeros, its dense trailing block (:func:`dense_tail`) by dot products over rows;
the same iterates up to rounding (losses within 1e-8).

Examples
--------
>>> import numpy as np
>>> from hedgerow.protocols.goldfish.matrix import classify, window_matrix
>>> e1 = np.array([[0, 5, 9], [np.inf, 0, np.inf], [0, 6, 8], [3, 7, 0]])
>>> e2 = np.array([[np.inf, 0, np.inf], [0, 4, 2], [0, 4, 5], [np.inf, 0, 1]])
>>> wm = window_matrix([np.array([1, 2, 4]), np.array([1, 2, 3])], [e1, e2])
>>> prob = build_problem(wm, classify(wm, k=2))
>>> sol_mm = solve(prob, method="mm")
>>> sol_adam = solve(prob, method="adam", rng=np.random.default_rng(0), max_steps=20000,
...                  early_stop=False)
>>> bool(abs(sol_adam.loss - sol_mm.loss) < 1e-2 * sol_mm.loss)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.sorted_search import lower_bound
from hedgerow.protocols.goldfish.csr import bucket
from hedgerow.protocols.goldfish.matrix import Classified, WindowMatrix
from hedgerow.protocols.goldfish.order import md_order

__all__ = [
    "DENSE_TAIL",
    "FAST_MM",
    "ORDERS",
    "SPARSE_ROWS",
    "Problem",
    "Solution",
    "build_problem",
    "completed",
    "dense_tail",
    "loss",
    "min_degree_order",
    "solve",
]


@dataclass
class Problem:
    """The loss of one window matrix as flat term arrays (one entry per (cell, neighbour)).

    Attributes
    ----------
    n_vars, n_rows : int
        ``s`` estimable cells and ``p`` rows.
    var, row, nbr : numpy.ndarray
        ``(t,)`` the term's variable ``v``, its row ``r`` and neighbour row ``o``.
    weight, n_common, s1, s2, x_o : numpy.ndarray
        ``(t,)`` ``ω``, the number of common observed columns, ``S1``, ``S2``
        and ``T_ou`` (all on max-normalised values).
    cells : numpy.ndarray
        ``(s, 2)`` (row, column) of each variable.
    scale : float
        ``max_time`` (ms per unit).
    """

    n_vars: int
    n_rows: int
    var: np.ndarray
    row: np.ndarray
    nbr: np.ndarray
    weight: np.ndarray
    n_common: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    x_o: np.ndarray
    cells: np.ndarray
    scale: float


@dataclass
class Solution:
    """Completion result: ``a`` (``(s,)``), ``c`` (``(p,)``), the loss and the steps taken."""

    a: np.ndarray
    c: np.ndarray
    loss: float
    steps: int


@numba.njit(cache=True, nogil=True)
def _terms(x, obs, cells, nbrs, wts, row_normalise):
    s, k = nbrs.shape
    p = x.shape[0]
    q = x.shape[1]
    per_row = np.zeros(p)
    for v in range(s):
        per_row[cells[v, 0]] += 1.0
    t = 0
    for v in range(s):
        for j in range(k):
            if nbrs[v, j] >= 0:
                t += 1
    var = np.empty(t, dtype=np.int64)
    row = np.empty(t, dtype=np.int64)
    nbr = np.empty(t, dtype=np.int64)
    w = np.empty(t)
    nc = np.empty(t)
    s1 = np.empty(t)
    s2 = np.empty(t)
    xo = np.empty(t)
    i = 0
    for v in range(s):
        r = cells[v, 0]
        u = cells[v, 1]
        for j in range(k):
            o = nbrs[v, j]
            if o < 0:
                continue
            cnt = 0.0
            a1 = 0.0
            a2 = 0.0
            for col in range(q):
                if obs[r, col] and obs[o, col]:
                    d = x[o, col] - x[r, col]
                    cnt += 1.0
                    a1 += d
                    a2 += d * d
            var[i] = v
            row[i] = r
            nbr[i] = o
            w[i] = wts[v, j] / per_row[r] if row_normalise else wts[v, j]
            nc[i] = cnt
            s1[i] = a1
            s2[i] = a2
            xo[i] = x[o, u]
            i += 1
    return var, row, nbr, w, nc, s1, s2, xo


def build_problem(wm: WindowMatrix, cl: Classified, *, row_normalise: bool = True) -> Problem:
    """The term arrays of eq. (1) for a classified window matrix."""
    x = np.ascontiguousarray(wm.values / cl.scale)
    var, row, nbr, w, nc, s1, s2, xo = _terms(
        x, np.ascontiguousarray(wm.observed), cl.cells, cl.neighbours, cl.weights,
        bool(row_normalise),
    )
    return Problem(len(cl.cells), x.shape[0], var, row, nbr, w, nc, s1, s2, xo, cl.cells,
                   cl.scale)


@numba.njit(cache=True, inline="always")
def _sq(nc, s1, s2, xo, d, a, co):
    e = xo + co - a
    v = nc * d * d + 2.0 * d * s1 + s2 + e * e
    return v if v > 0.0 else 0.0


@numba.njit(cache=True, nogil=True)
def _loss(a, c, var, row, nbr, w, nc, s1, s2, xo):
    tot = 0.0
    for i in range(len(var)):
        co = c[nbr[i]]
        tot += w[i] * np.sqrt(_sq(nc[i], s1[i], s2[i], xo[i], co - c[row[i]], a[var[i]], co))
    return tot + np.sqrt(np.sum(a * a)) + np.sqrt(np.sum(c * c))


def loss(prob: Problem, a: np.ndarray, c: np.ndarray) -> float:
    """``L(A, C)`` of eq. (1) (on max-normalised values)."""
    return float(_loss(np.asarray(a, dtype=np.float64), np.asarray(c, dtype=np.float64),
                       prob.var, prob.row, prob.nbr, prob.weight, prob.n_common, prob.s1,
                       prob.s2, prob.x_o))


@numba.njit(cache=True)
def _grad(a, c, ga, gc, var, row, nbr, w, nc, s1, s2, xo):
    ga[:] = 0.0
    gc[:] = 0.0
    tot = 0.0
    for i in range(len(var)):
        o = nbr[i]
        r = row[i]
        v = var[i]
        co = c[o]
        d = co - c[r]
        e = xo[i] + co - a[v]
        sq = nc[i] * d * d + 2.0 * d * s1[i] + s2[i] + e * e
        if sq <= 0.0:
            continue
        nrm = np.sqrt(sq)
        tot += w[i] * nrm
        f = w[i] / nrm
        gd = f * (nc[i] * d + s1[i])
        gc[o] += gd + f * e
        gc[r] -= gd
        ga[v] -= f * e
    na = np.sqrt(np.sum(a * a))
    ncn = np.sqrt(np.sum(c * c))
    if na > 0.0:
        ga += a / na
    if ncn > 0.0:
        gc += c / ncn
    return tot + na + ncn


@numba.njit(cache=True, nogil=True)
def _adam(a, c, var, row, nbr, w, nc, s1, s2, xo, lr, max_steps, early_stop, exit_diff):
    s = len(a)
    p = len(c)
    ga = np.zeros(s)
    gc = np.zeros(p)
    ma = np.zeros(s)
    va = np.zeros(s)
    mc = np.zeros(p)
    vc = np.zeros(p)
    b1 = 0.9
    b2 = 0.999
    eps = 1e-8
    prev = np.nan
    n_sig = 0
    last_sig = -1
    prev_sig = -1
    step = 0
    per = max(s, 1)
    for step in range(1, max_steps + 1):
        cur = _grad(a, c, ga, gc, var, row, nbr, w, nc, s1, s2, xo)
        if early_stop:
            if not np.isnan(prev) and abs(cur / per - prev / per) <= exit_diff:
                n_sig += 1
                prev_sig = last_sig
                last_sig = step
                if n_sig >= 3 and last_sig - prev_sig < 10:
                    break
            prev = cur
        bc1 = 1.0 - b1**step
        bc2 = 1.0 - b2**step
        for i in range(s):
            ma[i] = b1 * ma[i] + (1 - b1) * ga[i]
            va[i] = b2 * va[i] + (1 - b2) * ga[i] * ga[i]
            a[i] -= lr * (ma[i] / bc1) / (np.sqrt(va[i] / bc2) + eps)
        for i in range(p):
            mc[i] = b1 * mc[i] + (1 - b1) * gc[i]
            vc[i] = b2 * vc[i] + (1 - b2) * gc[i] * gc[i]
            c[i] -= lr * (mc[i] / bc1) / (np.sqrt(vc[i] / bc2) + eps)
    return step


@numba.njit(cache=True, nogil=True)
def _var_terms(var, s):
    """Terms grouped by variable: ``(start, order)``, the terms of ``v`` being
    ``order[start[v]:start[v + 1]]``."""
    return bucket(var, s)


@numba.njit(cache=True)
def _envelope_order(row, nbr, var, start, order, p, reorder):
    """Row order and envelope of the MM system.

    The pattern of the ``p x p`` system is fixed by the terms: ``(r, o)`` for every term and
    ``(o1, o2)`` for two neighbours of the same cell.  With ``reorder``, rows are numbered by
    reverse Cuthill-McKee (per connected component, from a least-connected row), which keeps
    the nonzeros near the diagonal; ``first[i]`` is the first column of row ``i``'s envelope
    (Cholesky fills nothing outside it).  Returns ``(pos, first)``: ``pos[r]`` is the new
    index of row ``r``.  Without ``reorder`` the order is the identity and the envelope is the
    whole lower triangle (a dense Cholesky).
    """
    pos = np.arange(p)
    first = np.zeros(p, dtype=np.int64)
    if not reorder:
        return pos, first
    # edge list (both directions), then CSR adjacency
    ea, eb = _pattern_edges(row, nbr, var, start, order)
    k = len(ea)
    ptr, by_row = bucket(ea, p)
    adj = eb[by_row]
    deg = np.zeros(p, dtype=np.int64)
    for i in range(p):
        deg[i] = ptr[i + 1] - ptr[i]
    # Cuthill-McKee: breadth first from a least-connected unvisited row, neighbours by degree
    seen = np.zeros(p, dtype=np.bool_)
    cm = np.empty(p, dtype=np.int64)
    by_deg = np.argsort(deg, kind="mergesort")
    head = 0
    tail = 0
    buf = np.empty(p, dtype=np.int64)
    for root in by_deg:
        if seen[root]:
            continue
        seen[root] = True
        cm[tail] = root
        tail += 1
        while head < tail:
            u = cm[head]
            head += 1
            nb = 0
            for j in range(ptr[u], ptr[u + 1]):
                w = adj[j]
                if not seen[w]:
                    seen[w] = True
                    buf[nb] = w
                    nb += 1
            if nb:
                srt = np.argsort(deg[buf[:nb]], kind="mergesort")
                for j in range(nb):
                    cm[tail] = buf[srt[j]]
                    tail += 1
    for i in range(p):
        pos[cm[p - 1 - i]] = i
    for i in range(p):
        first[i] = i
    for j in range(k):
        a = pos[ea[j]]
        b = pos[eb[j]]
        if b < a and b < first[a]:
            first[a] = b
    return pos, first


@numba.njit(cache=True)
def _env_chol_solve(m, first, b, x):
    """Solve ``m x = b`` for a symmetric positive definite ``m`` whose lower triangle is held
    in ``m`` within the envelope ``first`` (row ``i`` spans columns ``first[i] .. i``).  The
    Cholesky factor overwrites that envelope (it has no fill outside it).  Plain loops: at
    these sizes they beat a BLAS call."""
    n = m.shape[0]
    for i in range(n):
        fi = first[i]
        for j in range(fi, i):
            lo = max(fi, first[j])
            v = m[i, j]
            for k in range(lo, j):
                v -= m[i, k] * m[j, k]
            m[i, j] = v / m[j, j]
        d = m[i, i]
        for k in range(fi, i):
            d -= m[i, k] * m[i, k]
        m[i, i] = np.sqrt(d) if d > 0.0 else 1e-300
    for i in range(n):
        v = b[i]
        for k in range(first[i], i):
            v -= m[i, k] * x[k]
        x[i] = v / m[i, i]
    for i in range(n - 1, -1, -1):
        xi = x[i] / m[i, i]
        x[i] = xi
        for k in range(first[i], i):
            x[k] -= m[i, k] * xi


@numba.njit(cache=True, nogil=True)
def _pattern_edges(row, nbr, var, start, order):
    """The off-diagonal pattern of the MM system as an edge list (both directions): ``(r, o)``
    of every term and ``(o1, o2)`` of two neighbours of the same cell."""
    t = len(row)
    s = len(start) - 1
    n_e = 2 * t
    for v in range(s):
        m = start[v + 1] - start[v]
        n_e += m * (m - 1)
    ea = np.empty(n_e, dtype=np.int64)
    eb = np.empty(n_e, dtype=np.int64)
    k = 0
    for i in range(t):
        if row[i] != nbr[i]:
            ea[k] = row[i]
            eb[k] = nbr[i]
            ea[k + 1] = nbr[i]
            eb[k + 1] = row[i]
            k += 2
    for v in range(s):
        for x1 in range(start[v], start[v + 1]):
            for x2 in range(start[v], start[v + 1]):
                o1 = nbr[order[x1]]
                o2 = nbr[order[x2]]
                if o1 != o2:
                    ea[k] = o1
                    eb[k] = o2
                    k += 1
    return ea[:k], eb[:k]


@numba.njit(cache=True)
def _lower_pattern(ea, eb, pos, p):
    """CSR of the strictly lower triangle of the system in the order ``pos`` (sorted, unique
    columns per row).  Two counting sorts, by column then by row, so each row's columns come
    out in increasing order without sorting row by row."""
    m = len(ea)
    n = 0
    for j in range(m):
        if pos[eb[j]] < pos[ea[j]]:
            n += 1
    ra = np.empty(n, dtype=np.int64)  # the lower entries: row, column
    cb = np.empty(n, dtype=np.int64)
    n = 0
    for j in range(m):
        a = pos[ea[j]]
        b = pos[eb[j]]
        if b < a:
            ra[n] = a
            cb[n] = b
            n += 1
    _ccnt, bycol = bucket(cb, p)  # by column, then (stable) by row
    rows = ra[bycol]
    rcnt, byrow = bucket(rows, p)
    raw = cb[bycol][byrow]
    ptr = np.zeros(p + 1, dtype=np.int64)
    idx = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(p):
        last = -1
        for x in range(rcnt[i], rcnt[i + 1]):
            b = raw[x]
            if b != last:
                idx[k] = b
                k += 1
                last = b
        ptr[i + 1] = k
    return ptr, idx[:k].copy()


@numba.njit(cache=True)
def _ereach(aptr, aidx, k, parent, flag, stack):
    """Row ``k``'s pattern in the Cholesky factor (columns ``< k``), in topological order
    ``stack[top:]`` (CSparse's ``cs_ereach``); returns ``top``."""
    p = len(parent)
    top = p
    flag[k] = k
    for x in range(aptr[k], aptr[k + 1]):
        i = aidx[x]
        ln = 0
        while flag[i] != k:
            stack[ln] = i
            ln += 1
            flag[i] = k
            i = parent[i]
        while ln > 0:
            top -= 1
            ln -= 1
            stack[top] = stack[ln]
    return top


@numba.njit(cache=True)
def _slot(i, j, p, sparse, aptr, aidx):
    """Where entry ``(i, j)``, ``i >= j``, of the MM system is kept (see :func:`_mm`)."""
    if not sparse:
        return i * p + j
    if i == j:
        return i
    return p + lower_bound(aidx, aptr[i], aptr[i + 1], j)


@numba.njit(cache=True)
def _sparse_slots(op, rp, start, order, p, aptr, aidx, so, sr, sx, pslot):
    """The slots :func:`_slot` gives in the sparse system, for every term (``so, sr, sx``) and
    every pair of neighbours of one cell (``pslot``), found row by row: the off-diagonal
    entries asked for are sorted by row (a counting sort), and each row's pattern is
    scattered once into a column-to-slot map that answers them (a binary search per entry
    before; the same slots)."""
    t = len(op)
    s = len(start) - 1
    n_q = 0
    for i in range(t):
        so[i] = op[i]
        sr[i] = rp[i]
        sx[i] = -1
        if op[i] != rp[i]:
            n_q += 1
    for v in range(s):
        for x1 in range(start[v], start[v + 1]):
            oi = op[order[x1]]
            for x2 in range(start[v], start[v + 1]):
                if op[order[x2]] < oi:
                    n_q += 1
    # queries: (row, column, where the answer goes: a term i, or t + the pair's index)
    qr = np.empty(n_q, dtype=np.int64)
    qc = np.empty(n_q, dtype=np.int64)
    qd = np.empty(n_q, dtype=np.int64)
    n = 0
    for i in range(t):
        o = op[i]
        r = rp[i]
        if o != r:
            qr[n] = max(o, r)
            qc[n] = min(o, r)
            qd[n] = i
            n += 1
    k = 0
    for v in range(s):
        for x1 in range(start[v], start[v + 1]):
            oi = op[order[x1]]
            for x2 in range(start[v], start[v + 1]):
                oj = op[order[x2]]
                if oj == oi:
                    pslot[k] = oi
                elif oj < oi:
                    qr[n] = oi
                    qc[n] = oj
                    qd[n] = t + k
                    n += 1
                k += 1
    cnt, by_row = bucket(qr, p)
    where = np.empty(p, dtype=np.int64)
    for i in range(p):
        if cnt[i] == cnt[i + 1]:
            continue
        for q in range(aptr[i], aptr[i + 1]):
            where[aidx[q]] = p + q
        for x in range(cnt[i], cnt[i + 1]):
            j = by_row[x]
            d = qd[j]
            if d < t:
                sx[d] = where[qc[j]]
            else:
                pslot[d - t] = where[qc[j]]


@numba.njit(cache=True)
def _sparse_symbolic(aptr, aidx, p):
    """Elimination tree, column pointers and row patterns of the Cholesky factor of a pattern
    (strictly lower CSR ``aptr, aidx``).  Column ``j`` of the factor holds its diagonal first;
    row ``k``'s pattern (columns ``< k``, in :func:`_ereach`'s topological order) is
    ``ridx[rptr[k]:rptr[k + 1]]``, found once (one pass of :func:`_ereach` per row) and reused
    by every factorisation."""
    parent = np.full(p, -1, dtype=np.int64)
    anc = np.full(p, -1, dtype=np.int64)
    for k in range(p):
        for x in range(aptr[k], aptr[k + 1]):
            r = aidx[x]
            while r != -1 and r < k:
                nxt = anc[r]
                anc[r] = k
                if nxt == -1:
                    parent[r] = k
                r = nxt
    cnt = np.ones(p, dtype=np.int64)
    flag = np.full(p, -1, dtype=np.int64)
    stack = np.empty(p, dtype=np.int64)
    rptr = np.zeros(p + 1, dtype=np.int64)
    ridx = np.empty(max(4 * len(aidx), p), dtype=np.int64)  # grown when full
    for k in range(p):
        top = _ereach(aptr, aidx, k, parent, flag, stack)
        at = rptr[k]
        rptr[k + 1] = at + p - top
        if rptr[k + 1] > len(ridx):
            grown = np.empty(max(2 * len(ridx), rptr[k + 1]), dtype=np.int64)
            grown[:at] = ridx[:at]
            ridx = grown
        for t in range(top, p):
            cnt[stack[t]] += 1
            ridx[at + t - top] = stack[t]
    ridx = ridx[: rptr[p]]
    lp = np.zeros(p + 1, dtype=np.int64)
    for j in range(p):
        lp[j + 1] = lp[j] + cnt[j]
    return parent, lp, rptr, ridx


@numba.njit(cache=True, fastmath=True)
def _dot(u, v, n):
    """``u[:n] . v[:n]`` (summed in any order: it vectorises)."""
    tot = 0.0
    for i in range(n):
        tot += u[i] * v[i]
    return tot


@numba.njit(cache=True)
def _dense_tail(lp, dense, fill=1.0):
    """:func:`dense_tail` inside the solver (``p`` unless ``dense``)."""
    p = len(lp) - 1
    if not dense:
        return p
    n1 = p
    while n1 > 0 and lp[n1] - lp[n1 - 1] == p - n1 + 1:
        n1 -= 1
    if p - n1 < DENSE_TAIL:
        return p
    if fill < 1.0:
        while n1 > 0 and lp[n1] - lp[n1 - 1] >= fill * (p - n1 + 1):
            n1 -= 1
    return n1


def dense_tail(lp: np.ndarray, fill: float = 1.0) -> int:
    """The first row of the factor's dense trailing block: every column from there on is full
    below its diagonal (column counts ``lp``, :func:`_sparse_symbolic`); ``p`` when that block
    has fewer than :data:`DENSE_TAIL` rows.  With ``fill < 1`` the block then grows back over
    the columns at least ``fill`` full below their diagonal (``solve(fill=...)``).

    Examples
    --------
    >>> dense_tail(np.array([0, 2, 3, 4, 5]))  # a diagonal matrix: no dense block
    4
    >>> lp = np.cumsum([0, 1, 5, 8, 7, 6, 5, 4, 3, 2, 1])  # 8 full columns, one 5 of 9 full
    >>> dense_tail(lp), dense_tail(lp, fill=0.5)
    (2, 1)
    """
    return int(_dense_tail(np.asarray(lp, dtype=np.int64), True, float(fill)))


@numba.njit(cache=True)
def _sparse_chol_solve(vals, aptr, aidx, rptr, ridx, lp, li, lx, b, x, work, nxt, n1, ld,
                       paired=0):
    """Solve ``m x = b`` by an up-looking sparse Cholesky (CSparse's ``cs_chol``): ``vals``
    holds the diagonal of ``m`` (``p`` values) then its lower triangle at the pattern ``aptr,
    aidx``; the factor's columns go to ``li, lx`` at ``lp``, row ``k`` reading the pattern
    ``ridx[rptr[k]:rptr[k + 1]]`` (:func:`_sparse_symbolic`).

    Rows ``n1 ..`` (:func:`dense_tail`) form a dense block of the factor: their entries in
    those columns are kept in ``ld`` and found by dot products over rows (contiguous, so they
    vectorise) once the sparse columns' updates are in; with ``n1 = p`` every operation is the
    plain up-looking one.  ``paired`` (2 or 4): the dense block is gathered first, then factored
    that many rows at a time (:func:`_dense_pairs`, :func:`_dense_quads`); 0: row by row as
    the rows come in."""
    p = len(lp) - 1
    for j in range(p):
        nxt[j] = lp[j]
    for k in range(p):
        work[k] = 0.0
        for q in range(aptr[k], aptr[k + 1]):
            work[aidx[q]] = vals[p + q]
        d = vals[k]
        for t in range(rptr[k], rptr[k + 1]):
            i = ridx[t]
            if i >= n1:
                continue
            lki = work[i] / lx[lp[i]]
            work[i] = 0.0
            for q in range(lp[i] + 1, nxt[i]):
                work[li[q]] -= lx[q] * lki
            d -= lki * lki
            q = nxt[i]
            nxt[i] += 1
            li[q] = k
            lx[q] = lki
        if k < n1:
            q = nxt[k]
            nxt[k] += 1
            li[q] = k
            lx[q] = np.sqrt(d) if d > 0.0 else 1e-300
        elif paired:  # the dense block's Schur complement row, factored below
            kk = k - n1
            row = ld[kk]
            for ii in range(kk):
                row[ii] = work[n1 + ii]
                work[n1 + ii] = 0.0
            row[kk] = d
        else:
            kk = k - n1
            row = ld[kk]
            for ii in range(kk):
                v = work[n1 + ii] - _dot(row, ld[ii], ii)
                work[n1 + ii] = 0.0
                lki = v / ld[ii, ii]
                row[ii] = lki
                d -= lki * lki
            ld[kk, kk] = np.sqrt(d) if d > 0.0 else 1e-300
    if paired == 4 and n1 < p:
        _dense_quads(ld)
    elif paired and n1 < p:
        _dense_pairs(ld)
    _sparse_solve(lp, li, lx, n1, ld, b, x)


@numba.njit(cache=True, fastmath=True)
def _dot_rows2(u0, u1, v, n):
    """``u0[:n] . v[:n]`` and ``u1[:n] . v[:n]`` at once (each ``v[i]`` loaded once)."""
    s0 = 0.0
    s1 = 0.0
    for i in range(n):
        vi = v[i]
        s0 += u0[i] * vi
        s1 += u1[i] * vi
    return s0, s1


@numba.njit(cache=True)
def _dense_pairs(ld):
    """Cholesky factor, in place, of the dense block whose lower triangle (row-major) ``ld``
    holds: up-looking, two rows at a time, so each earlier row is read once for both (about
    twice as fast as one row at a time on 150-300 rows); the same factor up to rounding."""
    n = ld.shape[0]
    kk = 0
    while kk < n:
        r0 = ld[kk]
        d0 = r0[kk]
        if kk + 1 == n:
            for ii in range(kk):
                lki = (r0[ii] - _dot(r0, ld[ii], ii)) / ld[ii, ii]
                r0[ii] = lki
                d0 -= lki * lki
            r0[kk] = np.sqrt(d0) if d0 > 0.0 else 1e-300
            break
        r1 = ld[kk + 1]
        d1 = r1[kk + 1]
        for ii in range(kk):
            s0, s1 = _dot_rows2(r0, r1, ld[ii], ii)
            dg = ld[ii, ii]
            l0 = (r0[ii] - s0) / dg
            l1 = (r1[ii] - s1) / dg
            r0[ii] = l0
            r1[ii] = l1
            d0 -= l0 * l0
            d1 -= l1 * l1
        r0[kk] = np.sqrt(d0) if d0 > 0.0 else 1e-300
        l1 = (r1[kk] - _dot(r1, r0, kk)) / r0[kk]
        r1[kk] = l1
        d1 -= l1 * l1
        r1[kk + 1] = np.sqrt(d1) if d1 > 0.0 else 1e-300
        kk += 2


@numba.njit(cache=True, fastmath=True)
def _dot_rows4(ld, k0, v, n):
    """``ld[k0 + a, :n] . v[:n]`` for ``a = 0 .. 3`` at once (each ``v[i]`` loaded once)."""
    u0 = ld[k0]
    u1 = ld[k0 + 1]
    u2 = ld[k0 + 2]
    u3 = ld[k0 + 3]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(n):
        vi = v[i]
        s0 += u0[i] * vi
        s1 += u1[i] * vi
        s2 += u2[i] * vi
        s3 += u3[i] * vi
    return s0, s1, s2, s3


@numba.njit(cache=True)
def _dense_quads(ld):
    """:func:`_dense_pairs` four rows at a time: each earlier row is read once for four rows
    (1.4-1.9x faster than two at a time on 300-840 rows, the blocks of 10,000-node windows),
    then the four rows' own 4 x 4 corner row by row; the rows left over (fewer than four) one
    at a time.  The same factor up to rounding."""
    n = ld.shape[0]
    kk = 0
    ds = np.empty(4)
    while kk + 4 <= n:
        for a in range(4):
            ds[a] = ld[kk + a, kk + a]
        for ii in range(kk):
            s0, s1, s2, s3 = _dot_rows4(ld, kk, ld[ii], ii)
            dg = ld[ii, ii]
            l0 = (ld[kk, ii] - s0) / dg
            l1 = (ld[kk + 1, ii] - s1) / dg
            l2 = (ld[kk + 2, ii] - s2) / dg
            l3 = (ld[kk + 3, ii] - s3) / dg
            ld[kk, ii] = l0
            ld[kk + 1, ii] = l1
            ld[kk + 2, ii] = l2
            ld[kk + 3, ii] = l3
            ds[0] -= l0 * l0
            ds[1] -= l1 * l1
            ds[2] -= l2 * l2
            ds[3] -= l3 * l3
        for a in range(4):
            ra = ld[kk + a]
            da = ds[a]
            for b in range(a):
                rb = ld[kk + b]
                lab = (ra[kk + b] - _dot(ra, rb, kk + b)) / rb[kk + b]
                ra[kk + b] = lab
                da -= lab * lab
            ra[kk + a] = np.sqrt(da) if da > 0.0 else 1e-300
        kk += 4
    while kk < n:
        r0 = ld[kk]
        d0 = r0[kk]
        for ii in range(kk):
            lki = (r0[ii] - _dot(r0, ld[ii], ii)) / ld[ii, ii]
            r0[ii] = lki
            d0 -= lki * lki
        r0[kk] = np.sqrt(d0) if d0 > 0.0 else 1e-300
        kk += 1


@numba.njit(cache=True)
def _sparse_solve(lp, li, lx, n1, ld, b, x):
    """Solve ``m x = b`` with the factor :func:`_sparse_chol_solve` left in ``li, lx`` (sparse
    columns) and ``ld`` (the dense trailing block from row ``n1``)."""
    p = len(lp) - 1
    for i in range(p):
        x[i] = b[i]
    for j in range(n1):
        x[j] /= lx[lp[j]]
        xj = x[j]
        for q in range(lp[j] + 1, lp[j + 1]):
            x[li[q]] -= lx[q] * xj
    m = p - n1
    if m:
        xd = x[n1:]
        for ii in range(m):
            xd[ii] = (xd[ii] - _dot(ld[ii], xd, ii)) / ld[ii, ii]
        for ii in range(m - 1, -1, -1):
            xd[ii] /= ld[ii, ii]
            xi = xd[ii]
            row = ld[ii]
            for jj in range(ii):
                xd[jj] -= row[jj] * xi
    for j in range(n1 - 1, -1, -1):
        v = x[j]
        for q in range(lp[j] + 1, lp[j + 1]):
            v -= lx[q] * x[li[q]]
        x[j] = v / lx[lp[j]]


@numba.njit(cache=True)
def _symv(vals, aptr, aidx, x, y):
    """``y = m x`` for the system held as :func:`_sparse_chol_solve` reads it (the diagonal, then
    the lower triangle at the pattern ``aptr, aidx``)."""
    p = len(x)
    for i in range(p):
        y[i] = vals[i] * x[i]
    for i in range(p):
        xi = x[i]
        acc = 0.0
        for q in range(aptr[i], aptr[i + 1]):
            j = aidx[q]
            v = vals[p + q]
            acc += v * x[j]
            y[j] += v * xi
        y[i] += acc


@numba.njit(cache=True)
def _pcg(vals, aptr, aidx, lp, li, lx, n1, ld, b, x, iters, r, z, d, q):
    """``iters`` conjugate-gradient steps on ``m x = b`` from ``x``, preconditioned by an
    earlier factor (:func:`_sparse_solve`).  Every step lowers the quadratic
    ``x m x / 2 - b x``, so an MM step that ends here still lowers the majoriser."""
    p = len(x)
    _symv(vals, aptr, aidx, x, q)
    for i in range(p):
        r[i] = b[i] - q[i]
    _sparse_solve(lp, li, lx, n1, ld, r, z)
    rz = 0.0
    for i in range(p):
        d[i] = z[i]
        rz += r[i] * z[i]
    for it in range(iters):
        if rz <= 0.0:
            return
        _symv(vals, aptr, aidx, d, q)
        dq = 0.0
        for i in range(p):
            dq += d[i] * q[i]
        if not dq > 0.0:
            return
        alpha = rz / dq
        for i in range(p):
            x[i] += alpha * d[i]
            r[i] -= alpha * q[i]
        if it == iters - 1:
            return
        _sparse_solve(lp, li, lx, n1, ld, r, z)
        rz1 = 0.0
        for i in range(p):
            rz1 += r[i] * z[i]
        beta = rz1 / rz
        rz = rz1
        for i in range(p):
            d[i] = z[i] + beta * d[i]


@numba.njit(cache=True)
def _loss_norms(a, c, var, row, nbr, w, nc, s1, s2, xo, nrm):
    """:func:`_loss`, keeping every term's norm in ``nrm``."""
    tot = 0.0
    for i in range(len(var)):
        co = c[nbr[i]]
        nrm[i] = np.sqrt(_sq(nc[i], s1[i], s2[i], xo[i], co - c[row[i]], a[var[i]], co))
        tot += w[i] * nrm[i]
    return tot + np.sqrt(np.sum(a * a)) + np.sqrt(np.sum(c * c))


@numba.njit(cache=True)
def _loss_line(a, c, a0, c0, var, row, nbr, w, nc, s1, s2, xo, nrm, qa, qb, qc):
    """:func:`_loss_norms` at ``(a, c)``, and every term's square along the line from ``(a0,
    c0)`` through ``(a, c)``: ``qa + 2 qb f + qc f^2`` at ``(a0, c0) + f ((a, c) - (a0, c0))``
    (with ``d = c_o - c_r`` and ``e = x_o + c_o - a_v`` affine in ``f``)."""
    tot = 0.0
    for i in range(len(var)):
        o = nbr[i]
        r = row[i]
        v = var[i]
        co = c[o]
        d1 = co - c[r]
        nrm[i] = np.sqrt(_sq(nc[i], s1[i], s2[i], xo[i], d1, a[v], co))
        tot += w[i] * nrm[i]
        co0 = c0[o]
        d0 = co0 - c0[r]
        e0 = xo[i] + co0 - a0[v]
        dd = d1 - d0
        de = (xo[i] + co - a[v]) - e0
        qa[i] = nc[i] * d0 * d0 + 2.0 * d0 * s1[i] + s2[i] + e0 * e0
        qb[i] = nc[i] * d0 * dd + dd * s1[i] + e0 * de
        qc[i] = nc[i] * dd * dd + de * de
    return tot + np.sqrt(np.sum(a * a)) + np.sqrt(np.sum(c * c))


@numba.njit(cache=True, nogil=True, inline="always")
def _step_moments(new, prev, d, n):
    """The step ``d = new - prev`` (written) and its moments ``(d·d, prev·d, prev·prev)``
    over the first ``n`` entries: the norm of ``prev + f d`` is a quadratic in ``f``."""
    d2 = 0.0
    pd = 0.0
    p2 = 0.0
    for i in range(n):
        d[i] = new[i] - prev[i]
        d2 += d[i] * d[i]
        pd += prev[i] * d[i]
        p2 += prev[i] * prev[i]
    return d2, pd, p2


@numba.njit(cache=True, fastmath=True)
def _line_at(f, w, qa, qb, qc):
    """The terms' part of the loss at ``f`` along the line of :func:`_loss_line` (summed in
    any order: it vectorises)."""
    tot = 0.0
    for i in range(len(w)):
        sq = qa[i] + f * (2.0 * qb[i] + f * qc[i])
        tot += w[i] * np.sqrt(sq if sq > 0.0 else 0.0)
    return tot


@numba.njit(cache=True, nogil=True)
def _mm(a, c, var, row, nbr, w, nc, s1, s2, xo, max_steps, tol, floor, eps0, shrink, reorder,
        spos, dense, relax, tries, reuse, inner, fill, paired, start, order, ea, eb, line,
        early=0):
    """Majorise-minimise; returns the steps taken.  ``a``/``c`` hold the start and the result.

    With ``relax > 1``, from the second step on, the point ``relax`` times as far along the
    step is tried too and kept when its loss is lower (over-relaxation; ``relax = 1``: the plain
    steps, bit for bit).

    With ``spos`` (a row order of length ``p``) the system is factored by a sparse Cholesky in
    that order, its dense trailing block (:func:`dense_tail`) as dense rows when ``dense``;
    otherwise (``spos`` empty) within the envelope of :func:`_envelope_order`.  ``start, order``
    are the terms by variable (:func:`_var_terms`), ``ea, eb`` the pattern's edges
    (:func:`_pattern_edges`; read with ``spos`` only).  ``early > 0``: when the factor's dense
    block has at least ``early`` rows, the factor is reused (``reuse``) from the second step
    on instead of once ``ε`` is at its floor."""
    s = len(a)
    p = len(c)
    t = len(var)
    sparse = len(spos) == p
    if sparse:
        pos = spos.copy()
        first = np.zeros(p, dtype=np.int64)
        aptr, aidx = _lower_pattern(ea, eb, pos, p)
        _parent, lp, rptr, ridx = _sparse_symbolic(aptr, aidx, p)
        n1 = _dense_tail(lp, dense, fill)
        soon = early > 0 and p - n1 >= early
    else:
        soon = False
        pos, first = _envelope_order(row, nbr, var, start, order, p, reorder)
        aptr = np.zeros(p + 1, dtype=np.int64)
        aidx = np.zeros(0, dtype=np.int64)
        lp = np.zeros(p + 1, dtype=np.int64)
        rptr = np.zeros(p + 1, dtype=np.int64)
        ridx = np.zeros(0, dtype=np.int64)
        n1 = p
    ld = np.zeros((p - n1, p - n1))
    li = np.empty(lp[p], dtype=np.int64)
    lx = np.empty(lp[p])
    work = np.zeros(p)
    nxt = np.empty(p, dtype=np.int64)
    rp = np.empty(t, dtype=np.int64)
    op = np.empty(t, dtype=np.int64)
    for i in range(t):
        rp[i] = pos[row[i]]
        op[i] = pos[nbr[i]]
    cp = np.empty(p)
    for r in range(p):
        cp[pos[r]] = c[r]
    om = np.empty(t)
    nrm = np.empty(t)
    prev = _loss_norms(a, cp, var, rp, op, w, nc, s1, s2, xo, nrm)
    hdiag = np.empty(s)
    ba = np.empty(s)
    # the system's entries: the dense lower triangle (row-major) or, sparse, the diagonal then
    # the pattern's entries; every term's and every neighbour pair's slot is found once
    if sparse:
        big = np.zeros((1, 1))
        vals = np.zeros(p + len(aidx))
    else:
        big = np.zeros((p, p))
        vals = big.reshape(p * p)
    so = np.empty(t, dtype=np.int64)
    sr = np.empty(t, dtype=np.int64)
    sx = np.empty(t, dtype=np.int64)
    n_pairs = 0
    for v in range(s):
        n_pairs += (start[v + 1] - start[v]) ** 2
    pslot = np.full(n_pairs, -1, dtype=np.int64)
    if sparse:
        _sparse_slots(op, rp, start, order, p, aptr, aidx, so, sr, sx, pslot)
    else:
        for i in range(t):
            o = op[i]
            r = rp[i]
            so[i] = _slot(o, o, p, sparse, aptr, aidx)
            sr[i] = _slot(r, r, p, sparse, aptr, aidx)
            sx[i] = _slot(max(o, r), min(o, r), p, sparse, aptr, aidx) if o != r else -1
        k = 0
        for v in range(s):
            for x1 in range(start[v], start[v + 1]):
                oi = op[order[x1]]
                for x2 in range(start[v], start[v + 1]):
                    oj = op[order[x2]]
                    if oj <= oi:
                        pslot[k] = _slot(oi, oj, p, sparse, aptr, aidx)
                    k += 1
    # the pairs with a slot, in the same order: their slot, first entry, second term
    n_kept = 0
    for k in range(n_pairs):
        if pslot[k] >= 0:
            n_kept += 1
    kslot = np.empty(n_kept, dtype=np.int64)
    kx1 = np.empty(n_kept, dtype=np.int64)
    kt2 = np.empty(n_kept, dtype=np.int64)
    j = 0
    k = 0
    for v in range(s):
        for x1 in range(start[v], start[v + 1]):
            for x2 in range(start[v], start[v + 1]):
                if pslot[k] >= 0:
                    kslot[j] = pslot[k]
                    kx1[j] = x1
                    kt2[j] = order[x2]
                    j += 1
                k += 1
    fx = np.empty(t)
    rhs = np.empty(p)
    # over-relaxation: the previous point, the point further along, its norms
    cprev = np.empty(p)
    aprev = np.empty(s)
    ce = np.empty(p)
    ae = np.empty(s)
    nrm2 = np.empty(t)
    dc = np.empty(p)
    da = np.empty(s)
    # each term's square along the step (line): qa + 2 qb f + qc f^2
    qa = np.empty(t if line else 0)
    qb = np.empty(t if line else 0)
    qc = np.empty(t if line else 0)
    # conjugate gradients between factorisations (reuse > 0)
    since = 0
    pr = np.empty(p)
    pz = np.empty(p)
    pd = np.empty(p)
    pq = np.empty(p)
    best_a = a.copy()
    best_c = cp.copy()
    best = prev
    eps = eps0
    step = 0
    for step in range(1, max_steps + 1):
        e2 = eps * eps
        for i in range(t):
            om[i] = w[i] / np.sqrt(nrm[i] * nrm[i] + e2)
        na = np.sqrt(np.sum(a * a))
        ncn = np.sqrt(np.sum(cp * cp))
        la = 1.0 / np.sqrt(na * na + e2)
        lc = 1.0 / np.sqrt(ncn * ncn + e2)
        # normal equations of sum_i om_i/2 * q_i(z) + la/2 |a|^2 + lc/2 |c|^2, lower triangle
        hdiag[:] = la
        ba[:] = 0.0
        rhs[:] = 0.0
        if sparse:
            vals[:p] = lc
            vals[p:] = 0.0
        else:
            for i in range(p):
                for j in range(first[i], i):
                    big[i, j] = 0.0
                big[i, i] = lc
        for i in range(t):
            o = op[i]
            r = rp[i]
            v = var[i]
            f = om[i]
            # n (c_o - c_r)^2 + 2 (c_o - c_r) S1
            if o != r:
                g = f * nc[i]
                vals[so[i]] += g
                vals[sr[i]] += g
                vals[sx[i]] -= g
                rhs[o] -= f * s1[i]
                rhs[r] += f * s1[i]
            # (x_o + c_o - a_v)^2
            vals[so[i]] += f
            rhs[o] -= f * xo[i]
            hdiag[v] += f
            ba[v] += f * xo[i]
        # eliminate a: a_v = (ba_v + sum_{i in v} f_i c_o) / hdiag_v
        for i in range(t):
            v = var[i]
            rhs[op[i]] += om[i] * ba[v] / hdiag[v]
        for v in range(s):
            hv = hdiag[v]
            for x1 in range(start[v], start[v + 1]):
                fx[x1] = om[order[x1]] / hv
        for j in range(n_kept):
            vals[kslot[j]] -= fx[kx1[j]] * om[kt2[j]]
        if relax > 1.0:
            cprev[:] = cp
            aprev[:] = a
        if sparse and reuse > 0 and since < reuse and (eps <= floor or soon) and step > 1:
            _pcg(vals, aptr, aidx, lp, li, lx, n1, ld, rhs, cp, inner, pr, pz, pd, pq)
            since += 1
        elif sparse:
            _sparse_chol_solve(vals, aptr, aidx, rptr, ridx, lp, li, lx, rhs, cp, work, nxt, n1,
                               ld, paired)
            since = 0
        else:
            _env_chol_solve(big, first, rhs, cp)
        a[:] = ba
        for i in range(t):
            a[var[i]] += om[i] * cp[op[i]]
        for v in range(s):
            a[v] /= hdiag[v]
        if line and relax > 1.0 and step > 1:
            # the loss along the step in closed form: each term's square is a quadratic in
            # how far along the step, found in the pass that evaluates the MM point
            cur = _loss_line(a, cp, aprev, cprev, var, rp, op, w, nc, s1, s2, xo, nrm, qa,
                             qb, qc)
            dc2, pc, c02 = _step_moments(cp, cprev, dc, p)
            da2, pa, a02 = _step_moments(a, aprev, da, s)
            f = relax
            took = 0.0
            for _try in range(tries):
                far = _line_at(f, w, qa, qb, qc)
                na2 = a02 + 2.0 * f * pa + f * f * da2
                nc2 = c02 + 2.0 * f * pc + f * f * dc2
                far += np.sqrt(na2 if na2 > 0.0 else 0.0) + np.sqrt(nc2 if nc2 > 0.0 else 0.0)
                if not far < cur:
                    break
                took = f
                cur = far
                f *= 2.0
            if took > 0.0:
                for r in range(p):
                    cp[r] = cprev[r] + took * dc[r]
                for v in range(s):
                    a[v] = aprev[v] + took * da[v]
                for i in range(t):
                    sq = qa[i] + took * (2.0 * qb[i] + took * qc[i])
                    nrm[i] = np.sqrt(sq) if sq > 0.0 else 0.0
        else:
            cur = _loss_norms(a, cp, var, rp, op, w, nc, s1, s2, xo, nrm)
        if relax > 1.0 and step > 1 and not line:
            f = relax
            for _try in range(tries):
                for r in range(p):
                    ce[r] = cprev[r] + f * (cp[r] - cprev[r]) if _try == 0 else (
                        cprev[r] + f * dc[r])
                for v in range(s):
                    ae[v] = aprev[v] + f * (a[v] - aprev[v]) if _try == 0 else (
                        aprev[v] + f * da[v])
                far = _loss_norms(ae, ce, var, rp, op, w, nc, s1, s2, xo, nrm2)
                if not far < cur:
                    break
                if _try == 0 and tries > 1:  # the step itself, for the next tries
                    for r in range(p):
                        dc[r] = cp[r] - cprev[r]
                    for v in range(s):
                        da[v] = a[v] - aprev[v]
                cp[:] = ce
                a[:] = ae
                nrm[:] = nrm2
                cur = far
                f *= 2.0
        if cur < best:
            best = cur
            best_a[:] = a
            best_c[:] = cp
        if eps <= floor and prev - cur <= tol * max(abs(cur), 1e-300):
            break
        prev = cur
        eps = max(eps * shrink, floor)
    a[:] = best_a
    for r in range(p):
        c[r] = best_c[pos[r]]
    return step


METHODS = ("mm", "adam")
#: the sparse factor's row orders: SuperLU's multiple minimum degree, or :func:`md_order`
ORDERS = ("mmd", "md")
#: :func:`solve`'s settings in Goldfish's ``completion="mm-fast"``: the stopping step 1e-4
#: (default 1e-5), ``ε`` times 0.03 a step down to 1e-7 (default 0.2, down to
#: 1e-10), over-relaxed steps (up to 3 points a step, each twice as far), the numba row order,
#: at most 2 steps in a row on 3 conjugate-gradient steps preconditioned by the last factor, and
#: the factor's dense block grown over the columns at least 35 % full below their diagonal and
#: factored four rows at a time, the points along a step scored in closed form (``line``), and
#: the factor reused from the second step on when its dense block has 300 rows or more
#: (``early``: the factorisation then costs far more than a conjugate-gradient step)
FAST_MM: dict[str, Any] = {"tol": 1e-4, "floor": 1e-7, "shrink": 0.03, "relax": 1.8, "order": "md",
                           "tries": 3, "reuse": 2, "inner": 3, "fill": 0.35, "paired": True,
                           "quads": True, "line": True, "early": 300}

#: windows with more rows than this are factored by the sparse Cholesky (``solve(sparse=None)``)
SPARSE_ROWS = 600
#: the fewest rows of a dense trailing block worth factoring as dense rows (:func:`dense_tail`)
DENSE_TAIL = 8


def min_degree_order(prob: Problem, order: str = "mmd") -> np.ndarray:
    """A fill-reducing row order of the MM system: ``pos[r]`` is row ``r``'s new index.

    ``order="mmd"``: SuperLU's multiple minimum degree on the system's (fixed) pattern;
    ``"md"``: :func:`~hedgerow.protocols.goldfish.order.md_order` (a plain minimum degree in one
    numba kernel, about a third of the time, a factor of about the same size).  On the 3,000-row
    windows of a 1,000-message world it leaves 16,000-76,000 nonzeros in the Cholesky factor
    where the reverse Cuthill-McKee envelope holds 0.5-1.4 million.

    Examples
    --------
    >>> from hedgerow.protocols.goldfish.matrix import classify, window_matrix
    >>> e1 = np.array([[0, 5, 9], [np.inf, 0, np.inf], [0, 6, 8], [3, 7, 0]])
    >>> wm = window_matrix([np.array([1, 2, 4])], [e1])
    >>> sorted(min_degree_order(build_problem(wm, classify(wm))).tolist())
    [0, 1, 2, 3]
    >>> sorted(min_degree_order(build_problem(wm, classify(wm)), order="md").tolist())
    [0, 1, 2, 3]
    """
    start, terms = _var_terms(prob.var, prob.n_vars)
    ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, terms)
    return _order_of_edges(ea, eb, prob.n_rows, order)


def _order_of_edges(ea: np.ndarray, eb: np.ndarray, p: int, order: str) -> np.ndarray:
    """:func:`min_degree_order` of the pattern given as its edge list (:func:`_pattern_edges`)."""
    from scipy.sparse import csc_matrix, diags
    from scipy.sparse.linalg import splu

    if len(ea) == 0:
        return np.arange(p, dtype=np.int64)
    if order == "md":
        return cast(np.ndarray, md_order(ea, eb, p))
    if order != "mmd":
        raise ParameterError(
            f"goldfish: the row order must be one of {', '.join(ORDERS)}, got {order!r}",
            key="order",
        )
    pat = csc_matrix((np.full(len(ea), -1.0), (ea, eb)), shape=(p, p))
    pat = pat + diags(np.asarray(abs(pat).sum(axis=1)).ravel() + 1.0)
    lu = splu(csc_matrix(pat), permc_spec="MMD_AT_PLUS_A",
              options={"SymmetricMode": True})
    return np.asarray(lu.perm_c, dtype=np.int64)


def solve(
    prob: Problem,
    *,
    method: str = "mm",
    rng: np.random.Generator | None = None,
    lr: float = 1e-2,
    max_steps: int | None = None,
    early_stop: bool = True,
    exit_diff: float = 1e-3,
    tol: float = 1e-5,
    floor: float = 1e-10,
    eps0: float = 1e-2,
    shrink: float = 0.2,
    envelope: bool = True,
    sparse: bool | None = None,
    dense: bool = True,
    order: str = "mmd",
    relax: float = 1.0,
    tries: int = 1,
    reuse: int = 0,
    inner: int = 4,
    fill: float = 1.0,
    paired: bool = False,
    quads: bool = False,
    line: bool = False,
    early: int = 0,
) -> Solution:
    """Minimise eq. (1).

    Parameters
    ----------
    prob : Problem
        From :func:`build_problem`.
    method : {"mm", "adam"}
        Majorise-minimise (converged optimum) or the paper's Adam.
    rng : numpy.random.Generator, optional
        Adam's uniform start (required for ``"adam"``).
    lr, max_steps, early_stop, exit_diff
        Adam's learning rate, step budget (default 2000, §V-A) and stopping
        rule; ``max_steps`` bounds MM's iterations too (default 500).
    tol, floor, eps0, shrink : float
        MM stops when ``ε`` (from ``eps0``, times ``shrink`` each step, down to ``floor``)
        reached the floor and a step lowers the loss by less than ``tol`` (relative).
    envelope : bool
        MM factors its system in a reverse Cuthill-McKee order within the envelope (default),
        or densely (``False``: the reference for benchmarks and tests).
    sparse : bool, optional
        MM factors its system by a sparse Cholesky in a minimum-degree order
        (:func:`min_degree_order`) instead of the envelope; by default (``None``) when the
        window has more than :data:`SPARSE_ROWS` rows and ``envelope`` is on.  The same
        iterates up to rounding; the envelope keeps the paper-sized windows' results bit for
        bit.
    dense : bool
        The sparse factor takes its dense trailing block (:func:`dense_tail`: the last 150-250
        rows of a 3,000-row window, most of the work) as dense rows, the same factor up to
        rounding; ``False`` keeps the plain up-looking factorisation.
    order : {"mmd", "md"}
        The sparse factor's row order (:func:`min_degree_order`).
    relax : float
        From the second MM step on, the point ``relax`` times as far along the step is tried
        and kept when its loss is lower (``1``: the plain steps).
    tries : int
        With ``relax > 1``: while a tried point lowers the loss, the next one twice as far
        along the step is tried too, at most ``tries`` points a step (``1``: one point).
    reuse : int
        Once ``ε`` is at its floor, up to ``reuse`` MM steps in a row solve their system by
        ``inner`` conjugate-gradient steps preconditioned by the last factorisation, from the
        current point, instead of factoring it (``0``: every step factors).  Each such step
        still lowers the majoriser, so the loss still falls; the sparse factor only.
    inner : int
        Conjugate-gradient steps per reused factorisation.
    fill : float
        With ``dense``, the dense trailing block also takes the columns before it that are at
        least ``fill`` full below their diagonal (from the last one back, while they are): their
        updates to the rows below run as dense dot products instead of scattered ones.  ``1``:
        only the full columns (the factor of ``mm``, bit for bit); the same factor up to
        rounding.
    paired : bool
        The dense block is factored two rows at a time once its Schur complement is in (each
        earlier row read once for both rows), instead of row by row as the sparse rows' updates
        come in; the same factor up to rounding, about half the time on 150-300 rows.
    quads : bool
        With ``paired``, four rows at a time instead of two (each earlier row read once for
        four): the same factor up to rounding, 1.4-1.9x faster on the 300-840-row blocks of
        10,000-node windows.
    line : bool
        With ``relax > 1``, the points along the step are scored in closed form: every term's
        square is a quadratic in how far along the step, found once in the pass that scores
        the step's own point, so each further point costs one contiguous pass instead of a
        pass of gathers; the same losses up to rounding.
    early : int
        With ``reuse``, when the sparse factor's dense block has at least ``early`` rows, the
        factor is reused from the second MM step on instead of once ``ε`` is at its floor
        (``0``: never early).  Such a factorisation costs tens of times a conjugate-gradient
        step (a 600-row block: about 36 million multiply-adds against well under one); each
        reused step still lowers the majoriser.

    Examples
    --------
    The default settings, and those of ``completion="mm-fast"`` (:data:`FAST_MM`), on a
    3,000-row window of random planted rows: the fast one takes fewer factorisations and
    reaches a loss within 1e-3 of the default one's.

    >>> from hedgerow.protocols.goldfish.matrix import classify, window_matrix
    >>> rng = np.random.default_rng(3)
    >>> base = rng.uniform(0, 40, (60, 12))
    >>> rows = [base[rng.integers(0, 60, 1000)] + rng.normal(0, 1, (1000, 12))
    ...         for _ in range(3)]
    >>> peers = [np.sort(rng.choice(12, 6, replace=False)) for _ in range(3)]
    >>> wm = window_matrix([q for q in peers],
    ...                    [r[:, q] - r[:, q].min(axis=1, keepdims=True)
    ...                     for r, q in zip(rows, peers)])
    >>> prob = build_problem(wm, classify(wm))
    >>> ref, fast = solve(prob), solve(prob, **FAST_MM)
    >>> prob.n_rows, bool(abs(fast.loss - ref.loss) < 1e-3 * ref.loss)
    (3000, True)
    """
    s, p = prob.n_vars, prob.n_rows
    if early < 0:
        raise ParameterError(f"goldfish: early must be >= 0 rows, got {early}", key="early")
    if method == "adam":
        if rng is None:
            raise ParameterError("goldfish: the adam completion needs a random stream", key="rng")
        a = rng.random(s)
        c = rng.random(p)
        steps = _adam(a, c, prob.var, prob.row, prob.nbr, prob.weight, prob.n_common, prob.s1,
                      prob.s2, prob.x_o, float(lr), int(max_steps or 2000), bool(early_stop),
                      float(exit_diff))
    elif method == "mm":
        c = np.zeros(p)
        if s == 0:
            return Solution(np.zeros(0), c, 0.0, 0)
        # weighted: float64 (numpy's stubs say int)
        a = cast(np.ndarray, np.bincount(prob.var, prob.weight * prob.x_o, minlength=s))
        a /= np.maximum(np.bincount(prob.var, prob.weight, minlength=s), 1e-300)
        if sparse is None:
            sparse = bool(envelope) and p > SPARSE_ROWS
        # the terms by variable and the pattern's edges, found once for the order and the solve
        start, terms = _var_terms(prob.var, s)
        if sparse:
            ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, terms)
            spos = _order_of_edges(ea, eb, p, order)
        else:
            ea = eb = spos = np.zeros(0, dtype=np.int64)
        steps = _mm(a, c, prob.var, prob.row, prob.nbr, prob.weight, prob.n_common, prob.s1,
                    prob.s2, prob.x_o, int(max_steps or 500), float(tol), float(floor),
                    float(eps0), float(shrink), bool(envelope), spos, bool(dense),
                    float(relax), int(tries), int(reuse), int(inner), float(fill),
                    (4 if quads else 2) if paired else 0, start, terms, ea, eb, bool(line),
                    int(early))
    else:
        raise ParameterError(
            f"goldfish: completion method must be one of {', '.join(METHODS)}, got {method!r}",
            key="completion",
        )
    return Solution(a, c, loss(prob, a, c), int(steps))


def completed(wm: WindowMatrix, cl: Classified, sol: Solution) -> np.ndarray:
    """Table I(b) in ms: observed cells ``T + c_r``, estimable ``a_v``, every other cell ``inf``."""
    from hedgerow.protocols.goldfish.matrix import OBSERVED

    out = np.empty(wm.values.shape)
    _fill_completed(np.asarray(wm.values, dtype=np.float64), cl.classes, OBSERVED,
                    float(cl.scale), np.asarray(sol.c, dtype=np.float64), cl.cells,
                    np.asarray(sol.a, dtype=np.float64), out)
    return out


@numba.njit(cache=True, nogil=True)
def _fill_completed(values, classes, observed, scale, c, cells, a, out):
    """:func:`completed`'s cells: ``(T / scale + c_r) * scale`` where observed, ``a_v * scale``
    at the estimable cells, ``inf`` elsewhere (the same operations as elementwise numpy)."""
    p, q = values.shape
    for r in range(p):
        for u in range(q):
            if classes[r, u] == observed:
                out[r, u] = (values[r, u] / scale + c[r]) * scale
            else:
                out[r, u] = np.inf
    for v in range(len(cells)):
        out[cells[v, 0], cells[v, 1]] = a[v] * scale
