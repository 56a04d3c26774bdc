"""Numba kernels of the TCO augmentation engine (:mod:`hedgerow.protocols.tco.engine`).

Layout shared by the kernels:

* *slots*: one slot per (node, relevant topic) pair, for every node of the
  instance (a CSR ``ptr``/``top`` over nodes, topics ascending); a
  union-find over slots (``parent``) holds the components of every topic
  subgraph ``G_t`` of the current overlay;
* the working subset ``S`` is indexed ``0..s-1`` (``glob`` maps back); its
  slots are kept, per component root, in a singly linked member list
  (``head``/``tail``/``nxt``), so merging two components of ``t`` visits
  exactly the ``|A ∩ S| · |B ∩ S|`` pairs whose contribution falls by one;
* ``C`` is the dense symmetric ``s × s`` contribution matrix: ``C[a, b]`` is
  the number of relevant topics both subscribe to whose components of ``a``
  and ``b`` differ.  Contributions only fall, degrees only rise.

Selection uses lazily validated binary min-heaps over rows of ``C`` (one
entry per row; a stored key is the row's best key when it was computed, so a
lower bound of its current best; the popped entry is re-scanned and taken
only if its key did not change).  Keys are ``(k1 int64, k2 uint64)``
compared lexicographically; ``k2`` is the seeded pair hash (the tie rule).
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.metrics._kernels import _find

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_SHIFT = np.int64(1) << np.int64(32)
_BIGC = np.int64(1) << np.int64(31)

MODE_GM = 0  # key (-c, h)
MODE_MAXC_MINDEG = 1  # key (-c, maxdeg, h): LowODA with rho = 1
MODE_THRESHOLD = 2  # key (maxdeg, -c, h) over c >= theta: LowODA rho > 1, MinMaxODA


@numba.njit(cache=True, inline="always")
def pair_hash(seed: np.uint64, a: int, b: int) -> np.uint64:  # pragma: no cover - jitted
    """Seeded 64-bit hash of the unordered pair of global ids ``{a, b}`` (splitmix64)."""
    lo = a if a < b else b
    hi = b if a < b else a
    x = seed + np.uint64(lo) * _M1 + np.uint64(hi) * _M2
    x = x ^ (x >> _S30)
    x = x * _M2
    x = x ^ (x >> _S27)
    x = x * _M3
    x = x ^ (x >> _S31)
    return x


@numba.njit(cache=True, inline="always")
def _kept_topics(masks, r, keep, out, p, write):  # pragma: no cover - jitted
    """Walk the topics (bits of ``masks[r]``) that ``keep`` marks, ascending.

    Writes them to ``out[p:]`` when ``write``; returns ``p`` plus their number.
    """
    nt = keep.shape[0]
    for k in range(masks.shape[1]):
        word = masks[r, k]
        if word == 0:
            continue
        for b in range(64):
            if (word >> np.uint64(b)) & np.uint64(1):
                t = k * 64 + b
                if t < nt and keep[t]:
                    if write:
                        out[p] = t
                    p += 1
    return p


@numba.njit(cache=True)
def node_topic_csr(masks, rows, keep):  # pragma: no cover - jitted
    """CSR of the topics (bits of ``masks``) of ``rows`` that ``keep`` marks, ascending."""
    ptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for i in range(rows.shape[0]):
        ptr[i + 1] = _kept_topics(masks, rows[i], keep, none, ptr[i], False)
    top = np.empty(ptr[-1], dtype=np.int64)
    for i in range(rows.shape[0]):
        _kept_topics(masks, rows[i], keep, top, ptr[i], True)
    return ptr, top


@numba.njit(cache=True)
def union_edges(ptr, top, parent, size, eu, ev):  # pragma: no cover - jitted
    """Union, per shared topic, the slots of the endpoints of every edge ``(eu, ev)``."""
    for e in range(eu.shape[0]):
        i = ptr[eu[e]]
        ie = ptr[eu[e] + 1]
        j = ptr[ev[e]]
        je = ptr[ev[e] + 1]
        while i < ie and j < je:
            if top[i] < top[j]:
                i += 1
            elif top[i] > top[j]:
                j += 1
            else:
                a = _find(parent, i)
                b = _find(parent, j)
                if a != b:
                    if size[a] < size[b]:
                        a, b = b, a
                    parent[b] = a
                    size[a] += size[b]
                i += 1
                j += 1


@numba.njit(cache=True)
def init_contributions(ptr, top, parent, glob, n_topics, C, head, tail, nxt,
                       slot_loc):  # pragma: no cover - jitted
    """Member lists of the subset's slots per component root, and the initial ``C``.

    Returns the potential ``Φ₀ = Σ_t (components of t among the subset - 1)``,
    an upper bound on the number of edges any run can add.
    """
    s = glob.shape[0]
    # count subset slots per topic, then group them by topic
    cnt = np.zeros(n_topics + 1, dtype=np.int64)
    for a in range(s):
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            cnt[top[p] + 1] += 1
    for t in range(n_topics):
        cnt[t + 1] += cnt[t]
    fill = cnt[:-1].copy()
    by_topic = np.empty(cnt[-1], dtype=np.int64)
    for a in range(s):
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            slot_loc[p] = a
            t = top[p]
            by_topic[fill[t]] = p
            fill[t] += 1
            r = _find(parent, p)
            if head[r] < 0:
                head[r] = p
            else:
                nxt[tail[r]] = p
            tail[r] = p
    roots = np.empty(cnt[-1], dtype=np.int64)
    for q in range(cnt[-1]):
        roots[q] = _find(parent, by_topic[q])
    loc = np.empty(cnt[-1], dtype=np.int64)
    for q in range(cnt[-1]):
        loc[q] = slot_loc[by_topic[q]]
    stamp = np.full(parent.shape[0], -1, dtype=np.int64)
    split = np.zeros(n_topics, dtype=np.bool_)
    phi = 0
    for t in range(n_topics):
        k = 0
        for x in range(cnt[t], cnt[t + 1]):
            if stamp[roots[x]] != t:
                stamp[roots[x]] = t
                k += 1
        if k > 1:
            phi += k - 1
            split[t] = True
    # one row of C at a time (a sparse product row by row): the row stays in cache while
    # every topic of its node adds the members of the other components
    for a in range(s):
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            t = top[p]
            if not split[t]:
                continue
            r = _find(parent, p)
            for x in range(cnt[t], cnt[t + 1]):
                if roots[x] != r:
                    C[a, loc[x]] += 1
    return phi


@numba.njit(cache=True)
def _add_edge(a, b, glob, ptr, top, parent, size, head, tail, nxt, slot_loc, C,
              deg):  # pragma: no cover - jitted
    """Add edge ``(a, b)`` (subset indices): degrees, component merges, decrements."""
    deg[a] += 1
    deg[b] += 1
    ga = glob[a]
    gb = glob[b]
    i = ptr[ga]
    ie = ptr[ga + 1]
    j = ptr[gb]
    je = ptr[gb + 1]
    dec = 0
    while i < ie and j < je:
        if top[i] < top[j]:
            i += 1
        elif top[i] > top[j]:
            j += 1
        else:
            ra = _find(parent, i)
            rb = _find(parent, j)
            if ra != rb:
                # two row-major passes (rows of A, then rows of B): the inner loop of each
                # stays in one row of C instead of striding down a column
                x = head[ra]
                while x >= 0:
                    u = slot_loc[x]
                    y = head[rb]
                    while y >= 0:
                        C[u, slot_loc[y]] -= 1
                        dec += 1
                        y = nxt[y]
                    x = nxt[x]
                y = head[rb]
                while y >= 0:
                    v = slot_loc[y]
                    x = head[ra]
                    while x >= 0:
                        C[v, slot_loc[x]] -= 1
                        x = nxt[x]
                    y = nxt[y]
                if size[ra] < size[rb]:
                    ra, rb = rb, ra
                parent[rb] = ra
                size[ra] += size[rb]
                if head[rb] >= 0:
                    if head[ra] < 0:
                        head[ra] = head[rb]
                    else:
                        nxt[tail[ra]] = head[rb]
                    tail[ra] = tail[rb]
                head[rb] = -1
            i += 1
            j += 1
    return dec


@numba.njit(cache=True)
def _scan(mode, u, theta, C, deg, glob, seed):  # pragma: no cover - jitted
    """Best key of row ``u`` under ``mode`` (and ``theta``); also the row maximum.

    Two passes: the first reduces the row to its best rule key without the hash
    (a branch-free loop the compiler vectorises), the second hashes only the
    entries that reach it.  Returns ``(found, k1, k2, v, rowmax)``.
    """
    s = C.shape[0]
    row = C[u]
    du = np.int64(deg[u])
    gu = glob[u]
    rowmax = np.int64(0)
    if mode == 0:
        for v in range(s):
            c = np.int64(row[v])
            rowmax = c if c > rowmax else rowmax
        if rowmax <= 0:
            return False, np.int64(0), np.uint64(0), -1, rowmax
        target = rowmax
    elif mode == 1:
        # best = largest c, then smallest max(du, d(v)): maximise c * 2^32 - maxdeg
        best = np.int64(0)
        for v in range(s):
            c = np.int64(row[v])
            rowmax = c if c > rowmax else rowmax
            d = np.int64(deg[v])
            d = du if du > d else d
            k = c * _SHIFT - d
            k = k if c > 0 else np.int64(0)
            best = k if k > best else best
        if rowmax <= 0:
            return False, np.int64(0), np.uint64(0), -1, rowmax
        target = best
    else:
        # best = smallest max(du, d(v)), then largest c, over c >= theta:
        # minimise maxdeg * 2^32 + (2^31 - c)
        big = np.int64(0x7FFFFFFFFFFFFFFF)
        best = big
        for v in range(s):
            c = np.int64(row[v])
            rowmax = c if c > rowmax else rowmax
            d = np.int64(deg[v])
            d = du if du > d else d
            k = d * _SHIFT + (_BIGC - c)
            k = k if c >= theta else big
            best = k if k < best else best
        if best == big:
            return False, np.int64(0), np.uint64(0), -1, rowmax
        target = best
    best_h = np.uint64(0)
    best_v = -1
    for v in range(s):
        c = np.int64(row[v])
        if mode == 0:
            if c != target:
                continue
        elif mode == 1:
            if c <= 0:
                continue
            d = np.int64(deg[v])
            d = du if du > d else d
            if c * _SHIFT - d != target:
                continue
        else:
            if c < theta:
                continue
            d = np.int64(deg[v])
            d = du if du > d else d
            if d * _SHIFT + (_BIGC - c) != target:
                continue
        h = pair_hash(seed, gu, glob[v])
        if best_v < 0 or h < best_h:
            best_h = h
            best_v = v
    if mode == 0:
        k1 = -target
    elif mode == 1:
        # the stored key orders (-c, maxdeg): -c * 2^32 + maxdeg == -(c * 2^32 - maxdeg)
        k1 = -target
    else:
        k1 = target
    return True, k1, best_h, best_v, rowmax


@numba.njit(cache=True, inline="always")
def _less(k1, k2, i, j):  # pragma: no cover - jitted
    return k1[i] < k1[j] or (k1[i] == k1[j] and k2[i] < k2[j])


@numba.njit(cache=True)
def _sift_down(k1, k2, row, n, i):  # pragma: no cover - jitted
    while True:
        l = 2 * i + 1
        if l >= n:
            return
        m = l
        r = l + 1
        if r < n and _less(k1, k2, r, l):
            m = r
        if _less(k1, k2, m, i):
            k1[i], k1[m] = k1[m], k1[i]
            k2[i], k2[m] = k2[m], k2[i]
            row[i], row[m] = row[m], row[i]
            i = m
        else:
            return


@numba.njit(cache=True)
def _heapify(k1, k2, row, n):  # pragma: no cover - jitted
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(k1, k2, row, n, i)


@numba.njit(cache=True)
def _pop_top(k1, k2, row, n):  # pragma: no cover - jitted
    n -= 1
    k1[0] = k1[n]
    k2[0] = k2[n]
    row[0] = row[n]
    _sift_down(k1, k2, row, n, 0)
    return n


@numba.njit(cache=True)
def _theta(w, rho):  # pragma: no cover - jitted
    """Smallest integer ``c >= 1`` with ``c * rho >= w`` (the LowODA threshold)."""
    c = np.int64(np.ceil(w / rho))
    if c < 1:
        c = 1
    while c > 1 and (c - 1) * rho >= w:
        c -= 1
    while c * rho < w:
        c += 1
    return c


@numba.njit(cache=True)
def run_engine(mode, rho, fixed_theta, seed, C, deg, glob, ptr, top, parent, size, head, tail, nxt,
               slot_loc, out):  # pragma: no cover - jitted
    """Add edges until every contribution is 0; writes subset index pairs into ``out``.

    ``mode`` 0 = GM, 1 = max contribution then min degree (LowODA rho = 1),
    2 = threshold rule (``fixed_theta > 0``: MinMaxODA with that threshold;
    otherwise LowODA with ``theta = ceil(W / rho)``).  Returns
    ``(n_added, n_decrements, n_scans)``.
    """
    s = C.shape[0]
    k1 = np.empty(s, dtype=np.int64)
    k2 = np.empty(s, dtype=np.uint64)
    row = np.empty(s, dtype=np.int64)
    m = 0
    dec = 0
    scans = 0
    if mode != 2:
        n = 0
        for u in range(s):
            ok, a1, a2, v, rm = _scan(mode, u, 0, C, deg, glob, seed)
            scans += 1
            if ok:
                k1[n] = a1
                k2[n] = a2
                row[n] = u
                n += 1
        _heapify(k1, k2, row, n)
        while n > 0:
            u = row[0]
            ok, a1, a2, v, rm = _scan(mode, u, 0, C, deg, glob, seed)
            scans += 1
            if not ok:
                n = _pop_top(k1, k2, row, n)
                continue
            if a1 == k1[0] and a2 == k2[0]:
                out[m, 0] = u
                out[m, 1] = v
                m += 1
                dec += _add_edge(u, v, glob, ptr, top, parent, size, head, tail, nxt,
                                 slot_loc, C, deg)
            else:
                k1[0] = a1
                k2[0] = a2
                _sift_down(k1, k2, row, n, 0)
        return m, dec, scans
    # threshold rule: W heap (row maxima) and selection heap
    rmax = np.zeros(s, dtype=np.int64)
    w1 = np.empty(s, dtype=np.int64)
    w2 = np.zeros(s, dtype=np.uint64)
    wrow = np.empty(s, dtype=np.int64)
    nw = 0
    for u in range(s):
        r = np.int64(0)
        for v in range(s):
            c = np.int64(C[u, v])
            if c > r:
                r = c
        rmax[u] = r
        if r > 0:
            w1[nw] = -r
            wrow[nw] = u
            nw += 1
    _heapify(w1, w2, wrow, nw)
    theta = np.int64(-1)
    n = 0
    while True:
        # validate W = the largest contribution
        while nw > 0:
            u = wrow[0]
            r = np.int64(0)
            for v in range(s):
                c = np.int64(C[u, v])
                if c > r:
                    r = c
            scans += 1
            rmax[u] = r
            if r == 0:
                nw = _pop_top(w1, w2, wrow, nw)
            elif -r == w1[0]:
                break
            else:
                w1[0] = -r
                _sift_down(w1, w2, wrow, nw, 0)
        if nw == 0:
            break
        big_w = -w1[0]
        th = fixed_theta if fixed_theta > 0 else _theta(big_w, rho)
        if th != theta:
            theta = th
            n = 0
            for u in range(s):
                if rmax[u] >= theta:
                    ok, a1, a2, v, rm = _scan(2, u, theta, C, deg, glob, seed)
                    scans += 1
                    rmax[u] = rm
                    if ok:
                        k1[n] = a1
                        k2[n] = a2
                        row[n] = u
                        n += 1
            _heapify(k1, k2, row, n)
        found = False
        while n > 0:
            u = row[0]
            ok, a1, a2, v, rm = _scan(2, u, theta, C, deg, glob, seed)
            scans += 1
            rmax[u] = rm
            if not ok:
                n = _pop_top(k1, k2, row, n)
                continue
            if a1 == k1[0] and a2 == k2[0]:
                out[m, 0] = u
                out[m, 1] = v
                m += 1
                dec += _add_edge(u, v, glob, ptr, top, parent, size, head, tail, nxt,
                                 slot_loc, C, deg)
                found = True
                break
            k1[0] = a1
            k2[0] = a2
            _sift_down(k1, k2, row, n, 0)
        if not found:  # cannot happen: the row holding W is eligible
            break
    return m, dec, scans
