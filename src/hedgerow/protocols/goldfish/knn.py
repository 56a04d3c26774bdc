"""K nearest rows: the differential-variance distance and softmax weights (Goldfish §IV-B2, §IV-B3).

The distance between rows ``r`` and ``i`` is the unbiased variance of their
difference over the peers both observed (§IV-B2):
``g(r, i) = Var({m_r[j] - m_i[j] : B_rj = B_ij = 1})``, defined with at least
2 common peers.  A common offset cancels, which is why relative times
suffice.  The weights of the ``K`` nearest rows are the softmax of ``-g``
(§IV-B3: "normalize the k weight ... using softmax").  Ties in ``g`` are
broken by row index (the authors break them with tiny random noise; a fixed
order keeps a run reproducible from its seed alone).

Examples
--------
>>> import numpy as np
>>> x = np.array([[0.0, 0.2, 0.5], [0.1, 0.3, 0.6], [0.0, 0.5, 0.0]])
>>> g = row_distances(x, np.ones((3, 3), dtype=bool))
>>> round(float(g[0, 1]), 12), round(float(g[0, 2]), 4)
(0.0, 0.1633)
"""

from __future__ import annotations

import math

import numba
import numpy as np

from hedgerow.protocols.goldfish.csr import bucket

__all__ = ["MASK_COLUMNS", "classify_cells", "classify_dense", "row_distances", "unique_rows"]

_OBS, _DAG, _INF, _EST, _AMB = 0, 1, 2, 3, 4

#: :func:`classify_cells` keeps a row's columns in one 64-bit word: windows of more columns
#: take :func:`classify_dense`
MASK_COLUMNS = 62
#: rows of a window are cut into blocks of at most this many rows for the distance sweeps
BLOCK_ROWS = 1024


@numba.njit(cache=True, nogil=True)
def row_distances(x, obs):
    """``(p, p)`` differential variances (ddof 1) over common observed columns; ``nan`` if < 2."""
    p, q = x.shape
    g = np.full((p, p), np.nan)
    # row r's observed columns once; the pair's differences kept for the second pass
    cols = np.empty(q, dtype=np.int64)
    diff = np.empty(q)
    for r in range(p):
        nr = 0
        for j in range(q):
            if obs[r, j]:
                cols[nr] = j
                nr += 1
        if nr < 2:
            continue
        for i in range(r + 1, p):
            cnt = 0
            s1 = 0.0
            for t in range(nr):
                j = cols[t]
                if obs[i, j]:
                    d = x[r, j] - x[i, j]
                    diff[cnt] = d
                    cnt += 1
                    s1 += d
            if cnt < 2:
                continue
            mean = s1 / cnt
            ss = 0.0
            for t in range(cnt):
                d = diff[t] - mean
                ss += d * d
            v = ss / (cnt - 1)
            g[r, i] = v
            g[i, r] = v
    return g


@numba.njit(cache=True, nogil=True)
def _write_cell(cells, nbrs, wts, s, r, u, bi, bg, take):
    """Estimated cell ``s`` = (r, u): its ``take`` nearest rows ``bi`` and their weights,
    ``exp(-(g - g_min))`` over the rows' distances ``bg``, normalised to sum 1."""
    cells[s, 0] = r
    cells[s, 1] = u
    gmin = bg[0]
    tot = 0.0
    for t in range(take):
        nbrs[s, t] = bi[t]
        e = np.exp(-(bg[t] - gmin))
        wts[s, t] = e
        tot += e
    for t in range(take):
        wts[s, t] /= tot


@numba.njit(cache=True, nogil=True)
def classify_dense(x, obs, dag, k):
    """:func:`classify_cells` over the full ``(p, p)`` distance matrix, one scan of the column's
    rows per missing cell.  The path for windows of more than :data:`MASK_COLUMNS` columns, and
    the reference of the tests; returns ``g`` as a fifth value.
    """
    p, q = x.shape
    g = row_distances(x, obs)
    classes = np.empty((p, q), dtype=np.int8)
    nobs = np.zeros(p, dtype=np.int64)
    for r in range(p):
        for j in range(q):
            if obs[r, j]:
                nobs[r] += 1
    coldag = np.zeros(q, dtype=np.bool_)
    for r in range(p):
        for j in range(q):
            if dag[r, j]:
                coldag[j] = True
    # per column, the rows where it is observed or a dagger (the peering candidates), in order
    cptr = np.zeros(q + 1, dtype=np.int64)
    for r in range(p):
        for j in range(q):
            if obs[r, j] or dag[r, j]:
                cptr[j + 1] += 1
    for j in range(q):
        cptr[j + 1] += cptr[j]
    crow = np.empty(cptr[q], dtype=np.int64)
    cfill = cptr[:-1].copy()
    for r in range(p):
        for j in range(q):
            if obs[r, j] or dag[r, j]:
                crow[cfill[j]] = r
                cfill[j] += 1
    cells = np.empty((p * q, 2), dtype=np.int64)
    nbrs = np.full((p * q, k), -1, dtype=np.int64)
    wts = np.zeros((p * q, k))
    s = 0
    # the K nearest peering rows so far, by (distance, row index): one pass, no sort
    bg = np.empty(k)
    bi = np.empty(k, dtype=np.int64)
    for r in range(p):
        for u in range(q):
            if obs[r, u]:
                classes[r, u] = _OBS
                continue
            if dag[r, u]:
                classes[r, u] = _DAG
                continue
            if nobs[r] <= 1:
                classes[r, u] = _INF
                continue
            # peering rows: u observed or dagger there, >= 2 common observed peers with r
            nc = 0
            cnt = 0
            for ci in range(cptr[u], cptr[u + 1]):
                i = crow[ci]
                if i != r and not np.isnan(g[r, i]):
                    nc += 1
                    gi = g[r, i]
                    if cnt < k:
                        j = cnt
                        cnt += 1
                    elif gi < bg[k - 1]:
                        j = k - 1
                    else:
                        continue
                    # ties keep the lower row index first (a stable order)
                    while j > 0 and bg[j - 1] > gi:
                        bg[j] = bg[j - 1]
                        bi[j] = bi[j - 1]
                        j -= 1
                    bg[j] = gi
                    bi[j] = i
            if nc == 0:
                classes[r, u] = _INF
                continue
            take = cnt
            gk = bg[take - 1]
            amb = False
            if coldag[u]:
                if nc < k:
                    # fewer than K peering rows: a † anywhere in the column makes it ambiguous
                    amb = True
                else:
                    # a † among the nearest rows, those tied with the K-th included
                    for ci in range(cptr[u], cptr[u + 1]):
                        i = crow[ci]
                        if (i != r and dag[i, u] and not np.isnan(g[r, i])
                                and g[r, i] <= gk):
                            amb = True
                            break
            if amb:
                classes[r, u] = _AMB
                continue
            classes[r, u] = _EST
            _write_cell(cells, nbrs, wts, s, r, u, bi, bg, take)
            s += 1
    return classes, cells[:s].copy(), nbrs[:s].copy(), wts[:s].copy(), g


@numba.njit(cache=True, nogil=True)
def _block_distances(x_t, b_t, xr, cols, ncols, i0, i1, s1, cnt, ss, g):
    """``g[i0:i1]``: the distances of one row (values ``xr``, observed columns ``cols[:ncols]``)
    to rows ``i0 .. i1 - 1``, the same two passes as :func:`row_distances`.

    ``x_t`` and ``b_t`` are the window transposed: values and observed (1.0) per column.  A
    column a row did not observe adds ``+0`` to its sums, which leaves them bit for bit as the
    pair's own loop over its common columns does; the loops run over rows, so they vectorise.
    """
    n = i1 - i0
    s1v = s1[i0:i1]
    cv = cnt[i0:i1]
    sv = ss[i0:i1]
    s1v[:] = 0.0
    cv[:] = 0.0
    sv[:] = 0.0
    for t in range(ncols):
        j = cols[t]
        a = xr[j]
        xj = x_t[j, i0:i1]
        bj = b_t[j, i0:i1]
        for i in range(n):
            d = a - xj[i]
            s1v[i] += d * bj[i]
            cv[i] += bj[i]
    for i in range(n):
        c = cv[i]
        s1v[i] = s1v[i] / c if c > 0.0 else 0.0
    for t in range(ncols):
        j = cols[t]
        a = xr[j]
        xj = x_t[j, i0:i1]
        bj = b_t[j, i0:i1]
        for i in range(n):
            d = a - xj[i] - s1v[i]
            e = d * d
            sv[i] += e * bj[i]
    gv = g[i0:i1]
    for i in range(n):
        c = cv[i]
        gv[i] = sv[i] / (c - 1.0) if c >= 2.0 else np.nan


@numba.njit(cache=True, nogil=True)
def _row_masks(obs, dag):
    """Each row's observed-cell count and its column masks: observed (``om``), observed or
    dagger, i.e. the columns the row is a peering row of (``odm``), dagger (``dgm``); and
    which columns hold a dagger cell."""
    p, q = obs.shape
    one = np.int64(1)
    nobs = np.zeros(p, dtype=np.int64)
    om = np.zeros(p, dtype=np.int64)
    odm = np.zeros(p, dtype=np.int64)
    dgm = np.zeros(p, dtype=np.int64)
    coldag = np.zeros(q, dtype=np.bool_)
    for r in range(p):
        for j in range(q):
            if obs[r, j]:
                nobs[r] += 1
                om[r] |= one << j
            if dag[r, j]:
                coldag[j] = True
                dgm[r] |= one << j
            if obs[r, j] or dag[r, j]:
                odm[r] |= one << j
    return nobs, om, odm, dgm, coldag


@numba.njit(cache=True, nogil=True)
def _groups(odm):
    """Rows grouped by their peering columns: each row's group id (groups in increasing mask
    order), each group's mask, and the number of groups."""
    p = odm.shape[0]
    srt = np.argsort(odm, kind="mergesort")
    gid = np.empty(p, dtype=np.int64)
    godm = np.empty(p, dtype=np.int64)
    ng = 0
    for t in range(p):
        i = srt[t]
        if t == 0 or odm[i] != odm[srt[t - 1]]:
            godm[ng] = odm[i]
            ng += 1
        gid[i] = ng - 1
    return gid, godm, ng


@numba.njit(cache=True, nogil=True)
def _classify_masks(x, obs, dag, k):
    """:func:`classify_cells` on windows of at most :data:`MASK_COLUMNS` columns."""
    p, q = x.shape
    one = np.int64(1)
    classes = np.empty((p, q), dtype=np.int8)
    nobs, om, odm, dgm, coldag = _row_masks(obs, dag)
    # candidate groups: the rows peering the same columns (one per epoch of a window); each
    # keeps its own K nearest rows, merged per missing column
    gid, godm, ng = _groups(odm)
    # blocks of rows: a new one where the peering columns change (past 64 rows) or at
    # BLOCK_ROWS; a row's sweep skips the blocks that peer none of its missing columns
    bstart = np.empty(p + 1, dtype=np.int64)
    nb = 0
    for r in range(p):
        if r == 0 or r - bstart[nb - 1] >= BLOCK_ROWS or (
                r - bstart[nb - 1] >= 64 and odm[r] != odm[r - 1]):
            bstart[nb] = r
            nb += 1
    bstart[nb] = p
    bobs = np.zeros(nb, dtype=np.int64)
    bod = np.zeros(nb, dtype=np.int64)
    bdg = np.zeros(nb, dtype=np.int64)  # the † columns of the block's rows
    bgid = np.full(nb, -1, dtype=np.int64)  # the block's group when all its rows share one
    x_t = np.ascontiguousarray(x.T)
    b_t = np.zeros((q, p))
    dag_t = np.ascontiguousarray(dag.T)
    for b in range(nb):
        bgid[b] = gid[bstart[b]]
        for r in range(bstart[b], bstart[b + 1]):
            bdg[b] |= dgm[r]
            if gid[r] != bgid[b]:
                bgid[b] = -1
            if nobs[r] >= 2:  # a row with fewer observed peers has no distance
                bobs[b] |= om[r]
                bod[b] |= odm[r]
                for j in range(q):
                    if obs[r, j]:
                        b_t[j, r] = 1.0
    cells = np.empty((p * q, 2), dtype=np.int64)
    nbrs = np.full((p * q, k), -1, dtype=np.int64)
    wts = np.zeros((p * q, k))
    s = 0
    bg = np.empty(k)
    bi = np.empty(k, dtype=np.int64)
    cols = np.empty(q, dtype=np.int64)
    bcols = np.empty(q, dtype=np.int64)
    s1 = np.empty(p)
    cnt = np.empty(p)
    ss = np.empty(p)
    g = np.full(p, np.nan)
    tg = np.empty((ng, k))
    ti = np.empty((ng, k), dtype=np.int64)
    tn = np.zeros(ng, dtype=np.int64)
    dmin = np.empty(q)
    for r in range(p):
        miss = np.int64(0)
        for u in range(q):
            if obs[r, u]:
                classes[r, u] = _OBS
            elif dag[r, u]:
                classes[r, u] = _DAG
            elif nobs[r] <= 1:
                classes[r, u] = _INF
            else:
                miss |= one << u
        if miss == 0:
            continue
        nr = 0
        for j in range(q):
            if obs[r, j]:
                cols[nr] = j
                nr += 1
        tn[:] = 0
        dmin[:] = np.inf
        for b in range(nb):
            if bod[b] & miss == 0:
                continue
            nbc = 0
            for t in range(nr):
                if bobs[b] >> cols[t] & 1:
                    bcols[nbc] = cols[t]
                    nbc += 1
            i0 = bstart[b]
            i1 = bstart[b + 1]
            _block_distances(x_t, b_t, x[r], bcols, nbc, i0, i1, s1, cnt, ss, g)
            # the peering rows of any missing column, in row order: each group's K nearest
            # (ties keep the lower row), its count, and per column the nearest † row
            gr = bgid[b]
            if gr >= 0:
                # one group (the usual block, part of an epoch): tight loops over the block
                valid = 0
                for i in range(i0, i1):
                    if g[i] == g[i]:
                        valid += 1
                if i0 <= r < i1 and g[r] == g[r]:
                    valid -= 1
                fill = min(tn[gr], k)
                tn[gr] += valid
                top = tg[gr, k - 1] if fill >= k else np.inf
                for i in range(i0, i1):
                    gi = g[i]
                    if gi < top and i != r:  # nan never enters
                        if fill < k:
                            j = fill
                            fill += 1
                        else:
                            j = k - 1
                        while j > 0 and tg[gr, j - 1] > gi:
                            tg[gr, j] = tg[gr, j - 1]
                            ti[gr, j] = ti[gr, j - 1]
                            j -= 1
                        tg[gr, j] = gi
                        ti[gr, j] = i
                        top = tg[gr, k - 1] if fill >= k else np.inf
                dm = bdg[b] & miss
                u = 0
                while dm:
                    if dm & 1:
                        du = dmin[u]
                        for i in range(i0, i1):  # r has no † at its missing column u
                            if dag_t[u, i] and g[i] < du:
                                du = g[i]
                        dmin[u] = du
                    dm >>= 1
                    u += 1
                continue
            for i in range(i0, i1):
                if odm[i] & miss == 0 or i == r:
                    continue
                gi = g[i]
                if np.isnan(gi):
                    continue
                gr = gid[i]
                n_ = tn[gr]
                tn[gr] = n_ + 1
                if n_ < k:
                    j = n_
                elif gi < tg[gr, k - 1]:
                    j = k - 1
                else:
                    j = -1
                if j >= 0:
                    while j > 0 and tg[gr, j - 1] > gi:
                        tg[gr, j] = tg[gr, j - 1]
                        ti[gr, j] = ti[gr, j - 1]
                        j -= 1
                    tg[gr, j] = gi
                    ti[gr, j] = i
                dm = dgm[i] & miss
                u = 0
                while dm:
                    if dm & 1 and gi < dmin[u]:
                        dmin[u] = gi
                    dm >>= 1
                    u += 1
        for u in range(q):
            if not (miss >> u & 1):
                continue
            # the K nearest peering rows of column u: the groups' lists merged by (g, row)
            nc = 0
            cnt_ = 0
            for gr in range(ng):
                if not (godm[gr] >> u & 1) or tn[gr] == 0:
                    continue
                nc += tn[gr]
                for t in range(min(k, tn[gr])):
                    gi = tg[gr, t]
                    i = ti[gr, t]
                    if cnt_ < k:
                        j = cnt_
                        cnt_ += 1
                    elif gi < bg[k - 1] or (gi == bg[k - 1] and i < bi[k - 1]):
                        j = k - 1
                    else:
                        break  # the group's list is sorted: nothing after it enters
                    while j > 0 and (bg[j - 1] > gi or (bg[j - 1] == gi and bi[j - 1] > i)):
                        bg[j] = bg[j - 1]
                        bi[j] = bi[j - 1]
                        j -= 1
                    bg[j] = gi
                    bi[j] = i
            if nc == 0:
                classes[r, u] = _INF
                continue
            take = cnt_
            gk = bg[take - 1]
            # fewer than K peering rows: a † anywhere in the column; else a † row among the
            # nearest, those tied with the K-th included
            if coldag[u] and (nc < k or dmin[u] <= gk):
                classes[r, u] = _AMB
                continue
            classes[r, u] = _EST
            _write_cell(cells, nbrs, wts, s, r, u, bi, bg, take)
            s += 1
    return classes, cells[:s].copy(), nbrs[:s].copy(), wts[:s].copy()


#: :func:`classify_cells` keeps every row's K nearest per group at once (the pair sweep) while
#: ``groups x rows`` stays below this; beyond, one row at a time (:func:`_classify_masks`)
PAIR_STATE = 4_000_000


@numba.njit(cache=True, nogil=True, inline="always")
def _take(tg, ti, gr, r, gi, i, k):
    """Insert row ``i`` at distance ``gi`` (below the K-th, ``tg[gr, k - 1, r]``) into row
    ``r``'s list of group ``gr`` (``tg[gr, :, r]``, ``ti``), sorted by distance; rows come in
    increasing order, so one of equal distance goes after them.  Free slots hold ``inf`` (the
    distances are finite) and are shifted like rows, so the list needs no count."""
    j = k - 1
    while j > 0 and tg[gr, j - 1, r] > gi:
        tg[gr, j, r] = tg[gr, j - 1, r]
        ti[gr, j, r] = ti[gr, j - 1, r]
        j -= 1
    tg[gr, j, r] = gi
    ti[gr, j, r] = i


@numba.njit(cache=True, nogil=True, inline="always")
def _same_row(x, obs, dag, r, i):
    """Rows ``r`` and ``i`` have the same observed and † cells and the same values (sign of
    zero included) at the observed ones."""
    for j in range(x.shape[1]):
        if obs[r, j] != obs[i, j] or dag[r, j] != dag[i, j]:
            return False
        if obs[r, j] and (x[r, j] != x[i, j]
                          or math.copysign(1.0, x[r, j]) != math.copysign(1.0, x[i, j])):
            return False
    return True


@numba.njit(cache=True, nogil=True)
def unique_rows(x, obs, dag):
    """The window's distinct rows: the same observed and † cells, the same observed values.

    Every block of one publisher reaches a node along the same paths, so its row repeats: a
    third of the rows of a ``unit-square`` window are copies of an earlier one.  Returns
    ``(cls, rep, mptr, mrow)``: row ``r`` is a copy of class ``cls[r]``; class ``c``'s first row
    is ``rep[c]`` (classes in the order of their first rows) and its rows are
    ``mrow[mptr[c]:mptr[c + 1]]``, in increasing order.

    Examples
    --------
    >>> x = np.array([[0.0, 0.5], [0.0, 0.2], [0.0, 0.5]])
    >>> obs = np.ones((3, 2), dtype=np.bool_)
    >>> cls, rep, mptr, mrow = unique_rows(x, obs, np.zeros((3, 2), dtype=np.bool_))
    >>> cls.tolist(), rep.tolist(), mptr.tolist(), mrow.tolist()
    ([0, 1, 0], [0, 1], [0, 2, 3], [0, 2, 1])
    """
    p, q = x.shape
    prime = np.uint64(1099511628211)
    h = np.empty(p, dtype=np.uint64)
    for r in range(p):
        v = np.uint64(14695981039346656037)
        for j in range(q):
            if obs[r, j]:
                f = min(max(x[r, j] * 1e9, -1e18), 1e18)
                v = (v ^ np.uint64(j + 1)) * prime
                v = (v ^ np.uint64(np.int64(f))) * prime
            elif dag[r, j]:
                v = (v ^ np.uint64(q + j + 1)) * prime
        h[r] = v
    srt = np.argsort(h, kind="mergesort")  # equal hashes keep the row order
    lead = np.full(p, -1, dtype=np.int64)  # each row's first equal row
    a = 0
    while a < p:
        b = a + 1
        while b < p and h[srt[b]] == h[srt[a]]:
            b += 1
        for t in range(a, b):
            r = srt[t]
            if lead[r] >= 0:
                continue
            lead[r] = r
            for t2 in range(t + 1, b):
                i = srt[t2]
                if lead[i] < 0 and _same_row(x, obs, dag, r, i):
                    lead[i] = r
        a = b
    cls = np.empty(p, dtype=np.int64)
    rep = np.empty(p, dtype=np.int64)
    nc = 0
    for r in range(p):
        if lead[r] == r:
            cls[r] = nc
            rep[nc] = r
            nc += 1
        else:
            cls[r] = cls[lead[r]]
    mptr, mrow = bucket(cls, nc)
    return cls, rep[:nc].copy(), mptr, mrow


@numba.njit(cache=True, nogil=True)
def _pairs_core(x, obs, dag, k, mptr, mrow):
    """:func:`_classify_pairs` on the window's distinct rows (:func:`unique_rows`): row ``c``
    of ``x`` stands for the rows ``mrow[mptr[c]:mptr[c + 1]]`` of the window.  The lists of K
    nearest hold distinct rows by ``(distance, distinct row)`` (the order of their first
    copies); a cell's K nearest rows are then found among the listed rows' copies: a row that
    is not among the K nearest distinct rows has K distinct rows, hence K copies, before it.
    No list is counted while the distances are offered: a list with a free slot holds every row
    offered to it, so the number of peering rows (copies counted), which only matters below K,
    is that of its rows' copies.  Returns ``ok = False`` (and nothing else
    of use) when the per-row lists would exceed :data:`PAIR_STATE`; else the distinct rows'
    classes, estimable cells (``(row, column)`` in the distinct rows), neighbours (rows of the
    window) and weights."""
    p, q = x.shape
    one = np.int64(1)
    nobs, om, odm, dgm, coldag = _row_masks(obs, dag)
    gid, godm, ng = _groups(odm)
    if ng * p > PAIR_STATE:
        z = np.zeros((0, k), dtype=np.int64)
        return False, np.empty((0, q), dtype=np.int8), z, z, np.zeros((0, k))
    classes = np.empty((p, q), dtype=np.int8)
    miss = np.zeros(p, dtype=np.int64)
    for r in range(p):
        for u in range(q):
            if obs[r, u]:
                classes[r, u] = _OBS
            elif dag[r, u]:
                classes[r, u] = _DAG
            elif nobs[r] <= 1:
                classes[r, u] = _INF
            else:
                miss[r] |= one << u
    bstart = np.empty(p + 1, dtype=np.int64)
    nb = 0
    for r in range(p):
        if r == 0 or r - bstart[nb - 1] >= BLOCK_ROWS or (
                r - bstart[nb - 1] >= 64 and odm[r] != odm[r - 1]):
            bstart[nb] = r
            nb += 1
    bstart[nb] = p
    bobs = np.zeros(nb, dtype=np.int64)
    bod = np.zeros(nb, dtype=np.int64)
    bmiss = np.zeros(nb, dtype=np.int64)
    x_t = np.ascontiguousarray(x.T)
    b_t = np.zeros((q, p))
    for b in range(nb):
        for r in range(bstart[b], bstart[b + 1]):
            bmiss[b] |= miss[r]
            if nobs[r] >= 2:  # a row with fewer observed peers has no distance
                bobs[b] |= om[r]
                bod[b] |= odm[r]
                for j in range(q):
                    if obs[r, j]:
                        b_t[j, r] = 1.0
    bgid = np.full(nb, -1, dtype=np.int64)  # the block's group when all its rows share one
    bdg = np.zeros(nb, dtype=np.int64)  # the † columns of the block's rows
    for b in range(nb):
        bgid[b] = gid[bstart[b]]
        for r in range(bstart[b], bstart[b + 1]):
            bdg[b] |= dgm[r]
            if gid[r] != bgid[b]:
                bgid[b] = -1
    # blocks whose rows with a distance all miss the same columns
    bsame = np.ones(nb, dtype=np.bool_)
    for b in range(nb):
        for r in range(bstart[b], bstart[b + 1]):
            if nobs[r] >= 2 and miss[r] != bmiss[b]:
                bsame[b] = False
    # per column its † rows in increasing order, and where each block's start in that list
    # (the † cells in row-major order, bucketed by column: each column's rows stay increasing)
    ndag = 0
    for r in range(p):
        for j in range(q):
            if dag[r, j]:
                ndag += 1
    dcol = np.empty(ndag, dtype=np.int64)
    dcell = np.empty(ndag, dtype=np.int64)
    t = 0
    for r in range(p):
        for j in range(q):
            if dag[r, j]:
                dcol[t] = j
                dcell[t] = r
                t += 1
    dptr, dorder = bucket(dcol, q)
    drow = dcell[dorder]
    dfirst = np.empty((nb, q), dtype=np.int64)
    for j in range(q):
        t = dptr[j]
        for b in range(nb):
            while t < dptr[j + 1] and drow[t] < bstart[b]:
                t += 1
            dfirst[b, j] = t
    # every row's K nearest per group (sorted by distance; the rows are offered in increasing
    # order; free slots inf, so an offer is one compare with the K-th and a list is never
    # counted), and per column its nearest † row
    tg = np.full((ng, k, p), np.inf)
    ti = np.empty((ng, k, p), dtype=np.int64)
    dmin = np.full((q, p), np.inf)
    cols = np.empty(q, dtype=np.int64)
    s1 = np.empty(p)
    cnt = np.empty(p)
    ss = np.empty(p)
    g = np.full(p, np.nan)
    for ba in range(nb):
        for bb in range(ba, nb):
            # the rows of bb peer a missing column of ba's rows, or the other way round
            if bod[bb] & bmiss[ba] == 0 and bod[ba] & bmiss[bb] == 0:
                continue
            i1 = bstart[bb + 1]
            gb = bgid[bb]
            for r in range(bstart[ba], bstart[ba + 1]):
                if nobs[r] < 2:
                    continue
                mr = miss[r]
                mine = mr & bod[bb] != 0
                our = odm[r]
                theirs = our & bmiss[bb] != 0
                if not (mine or theirs):
                    continue
                i0 = r + 1 if ba == bb else bstart[bb]
                if i0 >= i1:
                    continue
                nr = 0
                for j in range(q):
                    if obs[r, j] and bobs[bb] >> j & 1:
                        cols[nr] = j
                        nr += 1
                _block_distances(x_t, b_t, x[r], cols, nr, i0, i1, s1, cnt, ss, g)
                # both directions tight (the usual pair of epochs): one pass offers each distance
                # to r's list and to the later row's
                both = mine and gb >= 0 and theirs and bsame[bb]
                if both:
                    gr = gid[r]
                    kth = tg[gr, k - 1]
                    top = tg[gb, k - 1, r]
                    for i in range(i0, i1):
                        gi = g[i]
                        # the lists are r's (group gb) and i's (group gr): i != r, so neither
                        # offer moves the other's threshold
                        if gi < top:  # nan never enters
                            _take(tg, ti, gb, r, gi, i, k)
                            top = tg[gb, k - 1, r]
                        if gi < kth[i]:  # inf until K were offered
                            _take(tg, ti, gr, i, gi, r, k)
                if mine and gb >= 0:
                    # one group, every row of it peering a missing column of r: tight loops
                    if not both:
                        top = tg[gb, k - 1, r]
                        for i in range(i0, i1):
                            gi = g[i]
                            if gi < top:  # nan never enters
                                _take(tg, ti, gb, r, gi, i, k)
                                top = tg[gb, k - 1, r]
                    dm = bdg[bb] & mr
                    u = 0
                    while dm:
                        if dm & 1:
                            # the block's † rows of column u only (a min: any order)
                            du = dmin[u, r]
                            t = dfirst[bb, u]
                            end = dptr[u + 1]
                            while t < end and drow[t] < i1:
                                i = drow[t]
                                if i >= i0 and g[i] < du:
                                    du = g[i]
                                t += 1
                            dmin[u, r] = du
                        dm >>= 1
                        u += 1
                elif mine:
                    for i in range(i0, i1):
                        gi = g[i]
                        if gi != gi or odm[i] & mr == 0:
                            continue
                        gr = gid[i]
                        if gi < tg[gr, k - 1, r]:  # inf until K were offered
                            _take(tg, ti, gr, r, gi, i, k)
                        dm = dgm[i] & mr
                        u = 0
                        while dm:
                            if dm & 1 and gi < dmin[u, r]:
                                dmin[u, r] = gi
                            dm >>= 1
                            u += 1
                if theirs and bsame[bb]:
                    # every row of bb with a distance misses the same columns, one of them
                    # peered by r: tight loops
                    if not both:
                        kth = tg[gid[r], k - 1]
                        for i in range(i0, i1):
                            gi = g[i]
                            if gi < kth[i]:  # inf until K were offered
                                _take(tg, ti, gid[r], i, gi, r, k)
                    dm = dgm[r] & bmiss[bb]
                    u = 0
                    while dm:
                        if dm & 1:
                            du_ = dmin[u]
                            for i in range(i0, i1):
                                gi = g[i]
                                du_[i] = gi if gi < du_[i] else du_[i]
                        dm >>= 1
                        u += 1
                elif theirs:
                    # r offered to the later rows it peers a missing column of
                    gr = gid[r]
                    kth = tg[gr, k - 1]
                    for i in range(i0, i1):
                        gi = g[i]
                        if gi < kth[i] and our & miss[i] != 0:  # inf until K were offered
                            _take(tg, ti, gr, i, gi, r, k)
                    dm = dgm[r]
                    u = 0
                    while dm:
                        if dm & 1:
                            du_ = dmin[u]
                            for i in range(i0, i1):
                                if miss[i] >> u & 1 and g[i] < du_[i]:
                                    du_[i] = g[i]
                        dm >>= 1
                        u += 1
    cells = np.empty((p * q, 2), dtype=np.int64)
    nbrs = np.full((p * q, k), -1, dtype=np.int64)
    wts = np.zeros((p * q, k))
    s = 0
    bg = np.empty(k)
    bi = np.empty(k, dtype=np.int64)
    for r in range(p):
        mr = miss[r]
        if mr == 0:
            continue
        for u in range(q):
            if not (mr >> u & 1):
                continue
            nc = 0
            cnt_ = 0
            for gr in range(ng):
                if not (godm[gr] >> u & 1) or tg[gr, 0, r] == np.inf:  # no row offered
                    continue
                # the peering rows, copies counted: a list of fewer than K distinct rows holds
                # every row offered, a full one at least K rows
                for t in range(k):
                    if tg[gr, t, r] == np.inf:
                        break
                    c = ti[gr, t, r]
                    nc += mptr[c + 1] - mptr[c]
                for t in range(k):
                    gi = tg[gr, t, r]
                    if gi == np.inf:  # a free slot: the list holds fewer distinct rows
                        break
                    c = ti[gr, t, r]
                    # the distinct row's copies, in increasing order (later ones of the
                    # group's list may still come between them)
                    for x in range(mptr[c], min(mptr[c + 1], mptr[c] + k)):
                        i = mrow[x]
                        if cnt_ < k:
                            j = cnt_
                            cnt_ += 1
                        elif gi < bg[k - 1] or (gi == bg[k - 1] and i < bi[k - 1]):
                            j = k - 1
                        else:
                            break
                        while j > 0 and (bg[j - 1] > gi or (bg[j - 1] == gi
                                                             and bi[j - 1] > i)):
                            bg[j] = bg[j - 1]
                            bi[j] = bi[j - 1]
                            j -= 1
                        bg[j] = gi
                        bi[j] = i
                    else:
                        continue
                    if x == mptr[c]:  # its first copy stayed out: the list's later rows do
                        break
            if nc == 0:
                classes[r, u] = _INF
                continue
            take = cnt_
            gk = bg[take - 1]
            if coldag[u] and (nc < k or dmin[u, r] <= gk):
                classes[r, u] = _AMB
                continue
            classes[r, u] = _EST
            _write_cell(cells, nbrs, wts, s, r, u, bi, bg, take)
            s += 1
    return True, classes, cells[:s].copy(), nbrs[:s].copy(), wts[:s].copy()


@numba.njit(cache=True, nogil=True)
def _classify_pairs(x, obs, dag, k):
    """:func:`classify_cells` on windows of at most :data:`MASK_COLUMNS` columns, every pair of
    distinct rows once.

    :func:`_classify_masks` sweeps row by row, so a pair of rows that each peer a missing column
    of the other has its distance computed twice (in a window, almost every pair of rows of two
    epochs).  The distance of a pair is the same bit for bit from either side (the differences
    change sign exactly; a column only one row observed adds ``+0``), so here every pair of
    blocks is swept once, ``r`` against the later rows, and the distance is offered to both rows'
    K nearest, kept for all rows at once (per row and group, by ``(distance, row)``, which
    makes the order of the offers irrelevant).

    Copies of a row (:func:`unique_rows`) have the same distances to every row, the same
    classes and the same lists, and are never candidates of each other (a row peers none of
    its own missing columns): the sweep runs over the distinct rows only (:func:`_pairs_core`),
    whose lists are expanded into their copies when a cell's K nearest rows are merged, and
    every copy then takes its class's cells.  The same classes, neighbours and weights as the
    row sweep and as :func:`classify_dense`.  Windows with more than :data:`PAIR_STATE` groups
    x distinct rows take the row sweep.
    """
    p, q = x.shape
    cls, rep, mptr, mrow = unique_rows(x, obs, dag)
    ok, ucl, ucells, unbrs, uwts = _pairs_core(x[rep], obs[rep], dag[rep], k, mptr, mrow)
    if not ok:
        return _classify_masks(x, obs, dag, k)
    nu = len(rep)
    cptr = np.zeros(nu + 1, dtype=np.int64)
    for e in range(len(ucells)):
        cptr[ucells[e, 0] + 1] += 1
    for c in range(nu):
        cptr[c + 1] += cptr[c]
    s = 0
    for r in range(p):
        s += cptr[cls[r] + 1] - cptr[cls[r]]
    classes = np.empty((p, q), dtype=np.int8)
    cells = np.empty((s, 2), dtype=np.int64)
    nbrs = np.empty((s, k), dtype=np.int64)
    wts = np.empty((s, k))
    s = 0
    for r in range(p):
        c = cls[r]
        classes[r] = ucl[c]
        for e in range(cptr[c], cptr[c + 1]):
            cells[s, 0] = r
            cells[s, 1] = ucells[e, 1]
            nbrs[s] = unbrs[e]
            wts[s] = uwts[e]
            s += 1
    return classes, cells, nbrs, wts


def classify_cells(x, obs, dag, k):
    """Cell classes and the K nearest peering rows of every estimable cell.

    Returns ``(classes, cells, neighbours, weights)`` (see
    :class:`hedgerow.protocols.goldfish.matrix.Classified`).

    Every row with missing cells needs its distances to the rows that peer one of its missing
    columns (blocks of rows peering none are skipped: a window's epoch peers the same columns
    in every row, and a cell is missing where its epoch had no such peer); each group of rows
    peering the same columns keeps its K nearest, and per missing column the groups' lists
    are merged.  Every pair of blocks is swept once and each distance offered to both of its
    rows (:func:`_classify_pairs`; one row at a time, :func:`_classify_masks`, when the
    per-row lists would be too large).  Copies of a row (:func:`unique_rows`: the blocks of one
    publisher) are swept once.  The distances are those of :func:`row_distances` bit
    for bit, and classes, neighbours and weights equal :func:`classify_dense`'s (the tests
    hold both on random and real windows); no ``(p, p)`` matrix is built.

    Examples
    --------
    >>> x = np.array([[0.0, 0.2, 0.0], [0.1, 0.3, 0.6], [0.0, 0.5, 0.9]])
    >>> obs = np.array([[True, True, False], [True, True, True], [True, True, True]])
    >>> classes, cells, nbrs, w = classify_cells(x, obs, np.zeros((3, 3), dtype=bool), 2)
    >>> cells.tolist(), nbrs.tolist(), w.round(3).tolist()
    ([[0, 2]], [[1, 2]], [[0.511, 0.489]])
    """
    if x.shape[1] > MASK_COLUMNS:
        return classify_dense(x, obs, dag, k)[:4]
    return _classify_pairs(x, obs, dag, k)
