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

import numba
import numpy as np

__all__ = ["classify_cells", "row_distances"]

_OBS, _DAG, _INF, _EST, _AMB = 0, 1, 2, 3, 4


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def classify_cells(x, obs, dag, k):
    """Cell classes and the K nearest peering rows of every estimable cell.

    Returns ``(classes, cells, neighbours, weights, g)`` (see
    :class:`hedgerow.protocols.goldfish.matrix.Classified`).
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
            s += 1
    return classes, cells[:s].copy(), nbrs[:s].copy(), wts[:s].copy(), g
