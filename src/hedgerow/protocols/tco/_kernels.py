"""Numba kernels of the TCO augmentation engine (:mod:`hedgerow.protocols.tco.engine`).

Layout shared by the kernels:

* *slots*: one slot per (node, relevant topic) pair, for every node of the
  instance (a CSR ``ptr``/``top`` over nodes, topics ascending); a
  union-find over slots (``parent``) holds the components of every topic
  subgraph ``G_t`` of the current overlay;
* the working subset ``S`` is indexed ``0..s-1`` (``glob`` maps back); the
  subset indices of a component's members lie contiguously in one int32
  ``pool`` (``astart``/``alen``/``acap`` per union-find root), so merging two
  components of ``t`` walks two flat arrays while lowering exactly the
  ``|A ∩ S| · |B ∩ S|`` pairs whose contribution falls by one, each row when
  it is next read (``pre``/``cur``, the pending ranges of a slot in its
  component's array; :func:`sync_row`);
* ``C`` is the dense symmetric ``s × s`` contribution matrix: ``C[a, b]`` is
  the number of relevant topics both subscribe to whose components of ``a``
  and ``b`` differ.  Contributions only fall, degrees only rise.  The kernels
  take it as a layout tuple ``mat = (C, P, optr, ocol, oval, olive, tmp)``:
  :func:`dense` (one ``int8``, ``int16`` or ``int32`` cell per entry, ``C``
  itself) or :func:`packed` (four bits a cell, two cells per byte in the same
  row layout, ``P``).  Four bits were chosen over the upper triangle (a row
  read would become half a column read, and the two rows of a pair are
  lowered at different times) and over no matrix (each scan recomputing its
  row from the topic bit sets, several times longer): the rows stay
  contiguous and are lowered one at a time, so the engine's access pattern is
  unchanged.  A cell holds 0-14; 15 (:data:`_NIB`) marks a pair sharing 15 or
  more topics, whose count is in a table listed before the matrix is
  allocated (:func:`overflow_pairs`): such pairs are about one in 100,000 at
  100 topics.  Reads go through :func:`read_row` (a scan unpacks the row into
  the scratch row ``tmp``), :func:`read_cell` and :func:`row_max_of`; writes
  through :func:`sync_row`.

Selection uses lazily validated binary min-heaps over rows of ``C`` (one
entry per row; a stored key is a lower bound of the row's current best).
Keys are ``(k1 int64, k2 uint64)`` compared lexicographically; ``k2`` is the
seeded pair hash (the tie rule).  Every row keeps a cache of its ``K`` best
entries of its last scan: keys only rise, so when the best current key among
the cached entries is not above the ``K``-th key of that scan, it is the
row's best, and a heap pop costs ``O(K)`` instead of an ``O(s)`` scan of the
row.  Only a row whose ``K`` cached entries all worsened past that bound is
scanned again.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.metrics._kernels import _find
from hedgerow.model.bitset import popcount64
from hedgerow.model.sorted_search import lower_bound

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_SHIFT = np.int64(1) << np.int64(32)
_BIGC = np.int64(1) << np.int64(31)
#: the four-bit layout's cell for "15 or more: the count is in the table"
_NIB = np.uint8(15)

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
def init_contributions(ptr, top, parent, glob, n_topics, mat, astart, alen, acap,
                       pool, fill_c=True):  # pragma: no cover - jitted
    """Member arrays of the subset's slots per component root, and the initial ``C``.

    The subset indices of a root's members lie contiguously in ``pool`` at
    ``astart[r] : astart[r] + alen[r]`` (capacity ``acap[r]``, twice the first
    size, so a component absorbs others in place until it has doubled).
    Returns ``(Φ₀, pool top)``: the potential ``Φ₀ = Σ_t (components of t
    among the subset - 1)``, an upper bound on the number of edges any run can
    add, and the first free position of ``pool``.  ``fill_c=False`` leaves the
    matrix ``mat`` (:func:`dense` or :func:`packed`) as given (already filled by
    :func:`shared_counts` or :func:`shared_counts_packed`); packed, each row is
    summed in the scratch row, then packed (:func:`_pack_row`).
    """
    s = glob.shape[0]
    # count subset slots per topic and per root
    cnt = np.zeros(n_topics + 1, dtype=np.int64)
    for a in range(s):
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            cnt[top[p] + 1] += 1
            alen[_find(parent, p)] += 1
    for t in range(n_topics):
        cnt[t + 1] += cnt[t]
    # one pool range per root, and topic-major copies of (root, subset index)
    fill = cnt[:-1].copy()
    roots = np.empty(cnt[-1], dtype=np.int64)
    loc = np.empty(cnt[-1], dtype=np.int64)
    top_p = np.int64(0)
    for a in range(s):
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            r = _find(parent, p)
            if astart[r] < 0:
                astart[r] = top_p
                acap[r] = 2 * alen[r]
                top_p += acap[r]
                alen[r] = 0
            pool[astart[r] + alen[r]] = a
            alen[r] += 1
            t = top[p]
            roots[fill[t]] = r
            loc[fill[t]] = a
            fill[t] += 1
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
    if not fill_c:
        return phi, top_p
    # one row of C at a time (a sparse product row by row): the row stays in cache while
    # every topic of its node adds the members of the other components
    C, P, tmp = mat[0], mat[1], mat[6]
    packed = P.shape[0] > 0
    for a in range(s):
        row = tmp if packed else C[a]
        if packed:
            row[:] = 0
        g = glob[a]
        for p in range(ptr[g], ptr[g + 1]):
            t = top[p]
            if not split[t]:
                continue
            r = _find(parent, p)
            for x in range(cnt[t], cnt[t + 1]):
                if roots[x] != r:
                    row[loc[x]] += 1
        if packed:
            _pack_row(mat, a)
    return phi, top_p


@numba.njit(cache=True, inline="always")
def _dec_range(row, pool, lo, hi):  # pragma: no cover - jitted
    """Lower ``row`` by one at the subset columns ``pool[lo:hi]``."""
    for x in range(lo, hi):
        row[pool[x]] -= 1


@numba.njit(cache=True, inline="always")
def _dec_range_packed(row, pool, lo, hi):  # pragma: no cover - jitted
    """Lower packed ``row`` by one at the subset columns ``pool[lo:hi]`` (no cell at 15)."""
    for x in range(lo, hi):
        v = pool[x]
        row[v >> 1] -= np.uint8(1 + 15 * (v & 1))


@numba.njit(cache=True)
def _dec_range_checked(row, pool, lo, hi, mat, u):  # pragma: no cover - jitted
    """:func:`_dec_range_packed` for a row with cells at 15: those are lowered in the table.

    A cell leaves the table when its count falls to 14 (its nibble is written again).
    """
    optr, ocol, oval, olive = mat[2], mat[3], mat[4], mat[5]
    for x in range(lo, hi):
        v = pool[x]
        j = v >> 1
        sh = (v & 1) << 2
        b = row[j]
        if ((b >> sh) & _NIB) == _NIB:
            e = lower_bound(ocol, optr[u], optr[u + 1], v)
            oval[e] -= 1
            if oval[e] >= 15:
                continue
            olive[u] -= 1
        row[j] = b - np.uint8(1 + 15 * (v & 1))


@numba.njit(cache=True)
def sync_row(u, glob, ptr, parent, astart, alen, pool, pre, cur, mat):  # pragma: no cover - jitted
    """Apply row ``u``'s pending decrements, so that ``C[u]`` is exact.

    For each slot ``p`` of ``u`` (one per relevant topic), the members of
    ``u``'s component at positions ``[0, pre[p])`` and ``[cur[p], end)`` of its
    member array joined it after row ``u`` was last brought up to date (the
    first range: components it was appended to; the second: components
    appended to it; :func:`_add_edge`): their columns are lowered by one, then
    ``pre[p] = 0`` and ``cur[p]`` moves to the end.  The writes stay in one
    row, which is what makes the deferral pay.  Returns the number of entries
    lowered.
    """
    g = glob[u]
    C, P, olive = mat[0], mat[1], mat[5]
    packed = P.shape[0] > 0
    n = 0
    for p in range(ptr[g], ptr[g + 1]):
        r = _find(parent, p)
        end = alen[r]
        c0 = cur[p]
        p0 = pre[p]
        if c0 < end or p0 > 0:
            st = astart[r]
            if not packed:
                row = C[u]
                _dec_range(row, pool, st, st + p0)
                _dec_range(row, pool, st + c0, st + end)
            elif olive[u] == 0:
                row8 = P[u]
                _dec_range_packed(row8, pool, st, st + p0)
                _dec_range_packed(row8, pool, st + c0, st + end)
            else:
                row8 = P[u]
                _dec_range_checked(row8, pool, st, st + p0, mat, u)
                _dec_range_checked(row8, pool, st + c0, st + end, mat, u)
            n += p0 + end - c0
            pre[p] = 0
            cur[p] = end
    return n


@numba.njit(cache=True)
def shared_counts(m, C):  # pragma: no cover - jitted
    """``C[a, b] = |m[a] ∩ m[b]|`` for ``a ≠ b`` and ``C[a, a] = 0``: the initial
    contributions when every component is one node (no start edges), ``m`` the subset's topic
    bit sets restricted to the relevant topics; a popcount per word, row by row."""
    s = m.shape[0]
    w = m.shape[1]
    for a in range(s):
        row = C[a]
        if w == 2:  # the common case of up to 128 topics, unrolled so the loop vectorises
            x0 = m[a, 0]
            x1 = m[a, 1]
            for b in range(s):
                row[b] = popcount64(x0 & m[b, 0]) + popcount64(x1 & m[b, 1])
        else:
            for b in range(s):
                c = 0
                for k in range(w):
                    c += popcount64(m[a, k] & m[b, k])
                row[b] = c
        row[a] = 0


@numba.njit(cache=True)
def dense(C):  # pragma: no cover - jitted
    """The matrix tuple of the one-cell-per-entry layout: ``C`` itself, no packed cells.

    ``(C, P, optr, ocol, oval, olive, tmp)`` with ``P`` empty: every kernel reads
    and lowers ``C[u]`` directly (:func:`packed` for the four-bit layout).
    """
    return (C, np.zeros((0, 0), dtype=np.uint8), np.zeros(1, dtype=np.int64),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=C.dtype))


def packed(s: int, optr: np.ndarray, ocol: np.ndarray, oval: np.ndarray) -> tuple:
    """The matrix tuple of the four-bit layout over ``s`` nodes, all cells 0.

    ``P`` holds row ``u``'s entry ``v`` in the low (``v`` even) or high (``v`` odd)
    four bits of ``P[u, v // 2]``; a cell at 15 (:data:`_NIB`) means "15 or more,
    exact in the table": ``ocol[optr[u]:optr[u + 1]]`` are the columns of row
    ``u`` whose initial count may reach 15 (ascending), ``oval`` their counts
    while at 15 or more, ``olive[u]`` how many are still there.  ``tmp`` is the
    scratch row a scan unpacks into (:func:`read_row`).  ``C`` is a ``1 x 1``
    ``int8`` placeholder (the kernels read ``P`` when it has rows).

    Examples
    --------
    >>> mat = packed(5, np.zeros(6, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    >>> mat[1].shape, mat[1].dtype.name, read_row(mat, 0).tolist()
    ((5, 3), 'uint8', [0, 0, 0, 0, 0])
    """
    return (np.zeros((1, 1), dtype=np.int8), np.zeros((s, (s + 1) // 2), dtype=np.uint8),
            optr, ocol, oval, np.zeros(s, dtype=np.int64), np.zeros(s, dtype=np.int8))


@numba.njit(cache=True)
def _pack_row(mat, a):  # pragma: no cover - jitted
    """Pack the scratch row (row ``a``'s exact counts) into ``P[a]``; its counts of 15 or
    more go to the table (each such column is one of the row's table columns)."""
    P, optr, ocol, oval, olive, tmp = mat[1], mat[2], mat[3], mat[4], mat[5], mat[6]
    row = P[a]
    s = tmp.shape[0]
    h = s >> 1
    for j in range(h):
        lo = tmp[2 * j]
        hi = tmp[2 * j + 1]
        lo = lo if lo < 15 else 15
        hi = hi if hi < 15 else 15
        row[j] = np.uint8(lo) | (np.uint8(hi) << np.uint8(4))
    if s & 1:
        lo = tmp[s - 1]
        row[h] = np.uint8(lo if lo < 15 else 15)
    live = 0
    for x in range(optr[a], optr[a + 1]):
        c = np.int64(tmp[ocol[x]])
        oval[x] = c
        live += c >= 15
    olive[a] = live


@numba.njit(cache=True)
def read_row(mat, u):  # pragma: no cover - jitted
    """Row ``u`` of the contribution matrix as a dense array.

    Dense layout: ``C[u]`` itself.  Packed: unpacked into the scratch row (two
    cells per byte, a loop the compiler vectorises), then the row's cells at
    15 replaced by their counts from the table; valid until the next call.
    """
    C, P, optr, ocol, oval, olive, tmp = mat
    if P.shape[0] == 0:
        return C[u]
    src = P[u]
    s = tmp.shape[0]
    h = s >> 1
    for j in range(h):
        b = src[j]
        tmp[2 * j] = b & _NIB
        tmp[2 * j + 1] = b >> np.uint8(4)
    if s & 1:
        tmp[s - 1] = src[h] & _NIB
    if olive[u] > 0:
        for x in range(optr[u], optr[u + 1]):
            v = ocol[x]
            if tmp[v] == 15:
                tmp[v] = oval[x]
    return tmp


@numba.njit(cache=True, inline="always")
def read_cell(mat, u, v):  # pragma: no cover - jitted
    """The contribution ``C[u, v]`` (int64) in either layout."""
    C, P, optr, ocol, oval = mat[0], mat[1], mat[2], mat[3], mat[4]
    if P.shape[0] == 0:
        return np.int64(C[u, v])
    c = np.int64((P[u, v >> 1] >> np.uint8((v & 1) << 2)) & _NIB)
    if c == 15:
        return oval[lower_bound(ocol, optr[u], optr[u + 1], v)]
    return c


@numba.njit(cache=True)
def row_max_of(mat, u):  # pragma: no cover - jitted
    """The largest contribution of row ``u`` (0 when none is positive), either layout.

    Packed: the largest nibble over the row's bytes; when it is 15 the largest
    is the largest count the row still has in the table.
    """
    C, P, optr, ocol, oval = mat[0], mat[1], mat[2], mat[3], mat[4]
    if P.shape[0] == 0:
        return row_max(C[u], 0, C.shape[1])
    src = P[u]
    r = np.uint8(0)
    for j in range(src.shape[0]):
        b = src[j]
        lo = b & _NIB
        hi = b >> np.uint8(4)
        r = lo if lo > r else r
        r = hi if hi > r else r
    if r < 15:
        return np.int64(r)
    best = np.int64(15)
    for x in range(optr[u], optr[u + 1]):
        v = ocol[x]
        if ((src[v >> 1] >> np.uint8((v & 1) << 2)) & _NIB) == _NIB and oval[x] > best:
            best = oval[x]
    return best


@numba.njit(cache=True)
def shared_counts_packed(m, P):  # pragma: no cover - jitted
    """:func:`shared_counts` into the four-bit layout: each count capped at 15 (the pairs
    at 15 or more are in the table, :func:`overflow_pairs`)."""
    s = m.shape[0]
    w = m.shape[1]
    h = s >> 1
    for a in range(s):
        row = P[a]
        if w == 2:
            x0 = m[a, 0]
            x1 = m[a, 1]
            for j in range(h):
                c0 = np.int64(popcount64(x0 & m[2 * j, 0]) + popcount64(x1 & m[2 * j, 1]))
                c1 = np.int64(popcount64(x0 & m[2 * j + 1, 0]) + popcount64(x1 & m[2 * j + 1, 1]))
                c0 = c0 if c0 < 15 else 15
                c1 = c1 if c1 < 15 else 15
                row[j] = np.uint8(c0 | (c1 << 4))
            if s & 1:
                c0 = np.int64(popcount64(x0 & m[s - 1, 0]) + popcount64(x1 & m[s - 1, 1]))
                row[h] = np.uint8(c0 if c0 < 15 else 15)
        else:
            for j in range((s + 1) >> 1):
                b = np.uint8(0)
                for e in range(2):
                    v = 2 * j + e
                    if v >= s:
                        break
                    c = _shared(m, a, v)
                    b |= np.uint8((c if c < 15 else 15) << (4 * e))
                row[j] = b
        # the diagonal is 0
        row[a >> 1] &= np.uint8(0xF0) if (a & 1) == 0 else np.uint8(0x0F)


@numba.njit(cache=True)
def _shared(m, a, b):  # pragma: no cover - jitted
    """``|m[a] ∩ m[b]|`` (int64)."""
    c = np.int64(0)
    for k in range(m.shape[1]):
        c += np.int64(popcount64(m[a, k] & m[b, k]))
    return c


@numba.njit(cache=True)
def overflow_pairs(m, cand, cap):  # pragma: no cover - jitted
    """The pairs whose shared count ``|m[a] ∩ m[b]|`` is 15 or more, as the table of the
    four-bit layout: ``(entries, optr, ocol, oval)``.

    Only pairs of ``cand`` (the rows holding 15 or more bits, ascending) are
    counted, each unordered pair once (a branch-free count per row, then the
    rows that have any are walked again to list them).  The table holds both
    orders: row ``a``'s columns at ``ocol[optr[a]:optr[a + 1]]``, ascending,
    with their counts.  Stops when the entries (both orders) would pass
    ``cap``: ``entries = -1`` (the caller keeps one byte a cell).
    """
    s = m.shape[0]
    nc = cand.shape[0]
    w = m.shape[1]
    ea = np.empty(16, dtype=np.int64)
    eb = np.empty(16, dtype=np.int64)
    ec = np.empty(16, dtype=np.int64)
    ne = 0
    for i in range(nc):
        a = cand[i]
        k = 0
        if w == 2:
            x0 = m[a, 0]
            x1 = m[a, 1]
            for j in range(i + 1, nc):
                b = cand[j]
                c = np.int64(popcount64(x0 & m[b, 0]) + popcount64(x1 & m[b, 1]))
                k += 1 if c >= 15 else 0
        else:
            for j in range(i + 1, nc):
                k += 1 if _shared(m, a, cand[j]) >= 15 else 0
        if k == 0:
            continue
        if 2 * (ne + k) > cap:
            none = np.zeros(0, dtype=np.int64)
            return -1, np.zeros(s + 1, dtype=np.int64), none, none.copy()
        if ne + k > ea.shape[0]:
            size = max(2 * ea.shape[0], ne + k)
            ea2 = np.empty(size, dtype=np.int64)
            eb2 = np.empty(size, dtype=np.int64)
            ec2 = np.empty(size, dtype=np.int64)
            ea2[:ne] = ea[:ne]
            eb2[:ne] = eb[:ne]
            ec2[:ne] = ec[:ne]
            ea, eb, ec = ea2, eb2, ec2
        for j in range(i + 1, nc):
            b = cand[j]
            c = _shared(m, a, b)
            if c >= 15:
                ea[ne] = a
                eb[ne] = b
                ec[ne] = c
                ne += 1
    # both orders, by row: row r gets its columns below r (from earlier rows, ascending)
    # before its own columns above r (ascending), so each row's columns come out sorted
    optr = np.zeros(s + 1, dtype=np.int64)
    for e in range(ne):
        optr[ea[e] + 1] += 1
        optr[eb[e] + 1] += 1
    for r in range(s):
        optr[r + 1] += optr[r]
    pos = optr[:-1].copy()
    ocol = np.empty(2 * ne, dtype=np.int64)
    oval = np.empty(2 * ne, dtype=np.int64)
    for e in range(ne):
        a = ea[e]
        b = eb[e]
        ocol[pos[a]] = b
        oval[pos[a]] = ec[e]
        pos[a] += 1
        ocol[pos[b]] = a
        oval[pos[b]] = ec[e]
        pos[b] += 1
    return 2 * ne, optr, ocol, oval


@numba.njit(cache=True)
def _add_edge(a, b, glob, ptr, top, parent, size, astart, alen, acap, pool, ctr, deg, pre,
              cur):  # pragma: no cover - jitted
    """Add edge ``(a, b)`` (subset indices): degrees, component merges, decrements.

    A merge of components ``A`` and ``B`` of a topic lowers ``C[u, v]`` and
    ``C[v, u]`` by one for every ``u ∈ A ∩ S``, ``v ∈ B ∩ S``; here no row is
    written.  The shorter member array is appended to the longer (in place
    while it has room, else both move, in order, to a fresh range of twice the
    size at the pool's top ``ctr[0]``).  For a member of the longer side the
    new columns are the appended tail, past its cursor ``cur``; for a member
    of the shorter side they are the longer array, now the prefix, so its
    ``pre`` and ``cur`` shift by that array's length.  Each row takes its
    pending entries when it is next read (:func:`sync_row`): a merge of a
    large component with a small one no longer writes one entry in each of
    many rows.  Returns ``(decrements, pool)``, the decrements counting the
    pairs lowered (``pool`` grows when full).
    """
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
                la = alen[ra]
                lb = alen[rb]
                dec += la * lb
                # the longer member array absorbs the shorter
                if la >= lb:
                    big, small = ra, rb
                else:
                    big, small = rb, ra
                sbig = astart[big]
                lbig = alen[big]
                ssmall = astart[small]
                lsmall = alen[small]
                n_all = lbig + lsmall
                # the shorter side's members move behind the longer side's: their
                # pending ranges shift by its length, and the longer side itself is
                # pending for them (a prefix); no row is written here
                for y in range(ssmall, ssmall + lsmall):
                    q = _slot_of(pool[y], top[i], glob, ptr, top)
                    pre[q] += lbig
                    cur[q] += lbig
                if n_all <= acap[big]:
                    start = sbig
                    cap = acap[big]
                    w = start + lbig
                else:
                    cap = 2 * n_all
                    start = ctr[0]
                    if start + cap > pool.shape[0]:
                        grown = np.empty(max(2 * pool.shape[0], start + cap), dtype=np.int32)
                        grown[:start] = pool[:start]
                        pool = grown
                    ctr[0] = start + cap
                    w = start
                    for x in range(sbig, sbig + lbig):
                        pool[w] = pool[x]
                        w += 1
                for x in range(ssmall, ssmall + lsmall):
                    pool[w] = pool[x]
                    w += 1
                if size[ra] < size[rb]:
                    ra, rb = rb, ra
                parent[rb] = ra
                size[ra] += size[rb]
                astart[ra] = start
                alen[ra] = n_all
                acap[ra] = cap
            i += 1
            j += 1
    return dec, pool


@numba.njit(cache=True, inline="always")
def _slot_of(w, t, glob, ptr, top):  # pragma: no cover - jitted
    """The slot of subset member ``w`` for topic ``t`` (a binary search of its topics)."""
    return lower_bound(top, ptr[glob[w]], ptr[glob[w] + 1], t)


_BIG = np.int64(0x7FFFFFFFFFFFFFFF)
_BIG32 = np.int32(0x7FFFFFFF)
_I32_15 = np.int32(15)
_I32_C = np.int32(32767)
_I32_0 = np.int32(0)


@numba.njit(cache=True, inline="always")
def key_consts(compact):  # pragma: no cover - jitted
    """``(shift, bias)`` of the threshold rule's key ``maxdeg · 2^shift + bias - c``.

    Wide: ``(2³², 2³¹)``, any int32 contribution and int64 degree.  Compact:
    ``(2¹⁵, 32767)``, exact while contributions stay below 32,767 (int16
    ``C``) and degrees below 65,535, so a row's keys are int32 and its scan
    runs twice as many lanes per instruction.  Both orders are the same.
    """
    if compact:
        return np.int64(1) << np.int64(15), np.int64(32767)
    return _SHIFT, _BIGC


@numba.njit(cache=True)
def _keys_threshold32(row, deg32, du, theta, kb32):  # pragma: no cover - jitted
    """Compact threshold-rule keys of one row into ``kb32`` (ineligible: ``_BIG32``).

    Returns ``(rowmax, lb)``: the row's largest contribution and its best key
    over the entries not yet eligible, ``1 ≤ c < theta`` (``_BIG32`` when none).
    """
    th = np.int32(theta)
    rm = _I32_0
    lb = _BIG32
    for v in range(row.shape[0]):
        c = np.int32(row[v])
        rm = c if c > rm else rm
        d = deg32[v]
        d = du if du > d else d
        kk = (d << _I32_15) + (_I32_C - c)
        k0 = kk if c > _I32_0 and c < th else _BIG32
        lb = k0 if k0 < lb else lb
        kb32[v] = kk if c >= th else _BIG32
    return np.int64(rm), np.int64(lb)


@numba.njit(cache=True)
def _keys_wide(mode, row, deg, du, theta, kb):  # pragma: no cover - jitted
    """Wide int64 keys of one row into ``kb`` (mode 1, or mode 2 when not compact)."""
    rowmax = np.int64(0)
    lb = _BIG
    if mode == 1:
        for v in range(row.shape[0]):
            c = np.int64(row[v])
            rowmax = c if c > rowmax else rowmax
            d = np.int64(deg[v])
            d = du if du > d else d
            kb[v] = d - c * _SHIFT if c > 0 else _BIG
    else:
        for v in range(row.shape[0]):
            c = np.int64(row[v])
            rowmax = c if c > rowmax else rowmax
            d = np.int64(deg[v])
            d = du if du > d else d
            kk = d * _SHIFT + (_BIGC - c)
            k0 = kk if c > 0 and c < theta else _BIG
            lb = k0 if k0 < lb else lb
            kb[v] = kk if c >= theta else _BIG
    return rowmax, lb


@numba.njit(cache=True, inline="always")
def row_max(row, lo, hi):  # pragma: no cover - jitted
    """The largest of ``row[lo:hi]`` (0 when empty or all ≤ 0) as int64, reduced in the row's
    own type so the loop runs as many lanes as its bytes allow."""
    r = row[lo] if hi > lo else row.dtype.type(0)
    for v in range(lo + 1, hi):
        x = row[v]
        r = x if x > r else r
    r64 = np.int64(r)
    return r64 if r64 > 0 else np.int64(0)


@numba.njit(cache=True)
def _topk(mode, src, none, seed, gu, glob, u, ck1, ck2, cv):  # pragma: no cover - jitted
    """The ``K`` smallest ``(k1, hash, v)`` of one row, sorted into ``ck1/ck2/cv[u]``.

    ``src`` is the row of ``C`` itself in mode 0 (key ``-c``, ineligible when
    ``c ≤ 0``), else the row's keys (ineligible when equal to ``none``).  Only
    entries at or below the current ``K``-th key are hashed.  Returns
    ``(n, over)``: entries kept, and whether an eligible entry was left out.
    """
    K = ck1.shape[1]
    n = 0
    thr = _BIG - 1
    over = False
    for v in range(src.shape[0]):
        x = np.int64(src[v])
        if mode == 0:
            k = -x if x > 0 else _BIG
        else:
            k = x if x != none else _BIG
        if k > thr:
            over |= k != _BIG
            continue
        h = pair_hash(seed, gu, glob[v])
        if n == K:
            over = True
            if k == ck1[u, K - 1] and h >= ck2[u, K - 1]:
                continue
            j = K - 1
        else:
            j = n
            n += 1
        while j > 0 and (k < ck1[u, j - 1] or (k == ck1[u, j - 1] and h < ck2[u, j - 1])):
            ck1[u, j] = ck1[u, j - 1]
            ck2[u, j] = ck2[u, j - 1]
            cv[u, j] = cv[u, j - 1]
            j -= 1
        ck1[u, j] = k
        ck2[u, j] = h
        cv[u, j] = v
        if n == K:
            thr = ck1[u, K - 1]
    return n, over


@numba.njit(cache=True)
def _scan(mode, u, theta, mat, deg, deg32, compact, glob, seed, kb, kb32, ck1, ck2, cv, cn,
          cfull):  # pragma: no cover - jitted
    """Full scan of row ``u``: its ``K`` best entries go to the row's cache.

    The rule key of an entry ``(u, v)`` is one int64 ``k1`` (mode 0: ``-c``;
    mode 1: ``-(c·2³² - maxdeg)``; mode 2: ``maxdeg·2^shift + bias - c`` over
    ``c ≥ theta``, :func:`key_consts`), then the pair hash ``k2``, then ``v``:
    a total order.  The first pass reduces the row (mode 0: its maximum;
    else every key into ``kb``/``kb32``, a branch-free loop the compiler
    vectorises); the second keeps the ``K`` smallest keys (:func:`_topk`);
    ``cfull[u]`` says whether the row had more eligible entries than ``K``.
    Returns ``(found, k1, k2, v, rowmax, lb)``: the row's best, its largest
    contribution and (mode 2) the best key over the entries not yet eligible
    (``1 ≤ c < theta``), a lower bound of those under any later threshold.
    """
    row = read_row(mat, u)
    gu = glob[u]
    lb = _BIG
    if mode == 0:
        rowmax = row_max(row, 0, row.shape[0])
        if rowmax <= 0:
            cn[u] = 0
            cfull[u] = False
            return False, np.int64(0), np.uint64(0), -1, rowmax, lb
        n, over = _topk(0, row, _BIG, seed, gu, glob, u, ck1, ck2, cv)
    elif mode == 2 and compact:
        rowmax, lb32 = _keys_threshold32(row, deg32, deg32[u], theta, kb32)
        if lb32 != np.int64(_BIG32):
            lb = lb32
        n, over = _topk(2, kb32, np.int64(_BIG32), seed, gu, glob, u, ck1, ck2, cv)
    else:
        rowmax, lb = _keys_wide(mode, row, deg, np.int64(deg[u]), theta, kb)
        n, over = _topk(mode, kb, _BIG, seed, gu, glob, u, ck1, ck2, cv)
    cn[u] = n
    cfull[u] = over
    if n == 0:
        return False, np.int64(0), np.uint64(0), -1, rowmax, lb
    return True, ck1[u, 0], ck2[u, 0], cv[u, 0], rowmax, lb


@numba.njit(cache=True)
def _probe(mode, u, theta, mat, deg, compact, ck1, ck2, cv, cn, cfull):  # pragma: no cover
    """The row's best from its cache alone, when the cache proves it.

    Keys only rise (contributions fall, degrees rise, ``theta`` is fixed
    between scans), so every entry outside the cache is still above the
    ``K``-th cached key of the last scan: the best current key among the
    cached entries is the row's best when it does not exceed that old key (or
    when the cache held every eligible entry).  Returns
    ``(proven, found, k1, k2, v)``.
    """
    n = cn[u]
    du = np.int64(deg[u])
    sh, bias = key_consts(compact)
    bk1 = _BIG
    bk2 = np.uint64(0)
    bv = -1
    for j in range(n):
        v = cv[u, j]
        c = read_cell(mat, u, v)
        if mode == 0:
            if c <= 0:
                continue
            k = -c
        else:
            d = np.int64(deg[v])
            d = du if du > d else d
            if mode == 1:
                if c <= 0:
                    continue
                k = d - c * _SHIFT
            else:
                if c < theta:
                    continue
                k = d * sh + (bias - c)
        h = ck2[u, j]
        if bv < 0 or k < bk1 or (k == bk1 and (h < bk2 or (h == bk2 and v < bv))):
            bk1 = k
            bk2 = h
            bv = v
    if not cfull[u]:
        return True, bv >= 0, bk1, bk2, bv
    if bv < 0:
        return False, False, bk1, bk2, bv
    o1 = ck1[u, n - 1]
    o2 = ck2[u, n - 1]
    ov = cv[u, n - 1]
    if bk1 < o1 or (bk1 == o1 and (bk2 < o2 or (bk2 == o2 and bv <= ov))):
        return True, True, bk1, bk2, bv
    return False, False, bk1, bk2, bv


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
def _best(mode, u, theta, mat, deg, deg32, compact, glob, seed, kb, kb32, ck1, ck2, cv, cn, cfull,
          cth, rmax, lbk, cnt, lazy):  # pragma: no cover - jitted
    """The exact best key of row ``u``: from its cache when that proves it, else a scan.

    ``cth[u]`` is the threshold the cache was built under.  Under the same
    threshold the cache proves the best as :func:`_probe` says.  Under a lower
    one (LowODA's threshold only falls) the entries eligible now are the
    cached ones, the uncached ones of that scan (above its ``K``-th key) and
    entries that were below the old threshold, whose keys are at least
    ``lbk[u]`` (their best key at that scan): the cache still proves its best
    when that is also below ``lbk[u]``.  ``cnt`` counts (scans, cache
    answers).  ``lazy`` holds what :func:`sync_row` needs to bring row ``u``
    up to date first.  Returns ``(found, k1, k2, v)``.
    """
    glob_, ptr, parent, astart, alen, pool, pre, cur = lazy
    sync_row(u, glob_, ptr, parent, astart, alen, pool, pre, cur, mat)
    if cth[u] >= theta and cth[u] != _BIG:
        proven, ok, a1, a2, v = _probe(mode, u, theta, mat, deg, compact, ck1, ck2, cv, cn,
                                       cfull)
        if proven and cth[u] != theta:
            proven = ok and a1 < lbk[u]
        if proven:
            cnt[1] += 1
            return ok, a1, a2, v
    ok, a1, a2, v, rm, lb = _scan(mode, u, theta, mat, deg, deg32, compact, glob, seed, kb, kb32,
                                  ck1, ck2, cv, cn, cfull)
    cnt[0] += 1
    cth[u] = theta
    rmax[u] = rm
    lbk[u] = lb
    return ok, a1, a2, v


@numba.njit(cache=True)
def run_engine(mode, rho, fixed_theta, seed, mat, deg, glob, ptr, top, parent, size, astart, alen,
               acap, pool, ctr, out, cache_k, compact):  # pragma: no cover - jitted
    """Add edges until every contribution is 0; writes subset index pairs into ``out``.

    ``mode`` 0 = GM, 1 = max contribution then min degree (LowODA rho = 1),
    2 = threshold rule (``fixed_theta > 0``: MinMaxODA with that threshold;
    otherwise LowODA with ``theta = ceil(W / rho)``).  ``cache_k`` entries per
    row are cached (:func:`_scan`); ``compact``: threshold keys fit int32
    (:func:`key_consts`).  Returns ``(n_added, n_decrements,
    counters)``, counters = (row scans, cache answers, row-maximum scans,
    threshold changes).
    """
    s = glob.shape[0]
    k1 = np.empty(s, dtype=np.int64)
    k2 = np.empty(s, dtype=np.uint64)
    row = np.empty(s, dtype=np.int64)
    kb = np.empty(s, dtype=np.int64)
    kb32 = np.empty(s if compact else 0, dtype=np.int32)
    deg32 = deg.astype(np.int32) if compact else np.empty(0, dtype=np.int32)
    ck1 = np.empty((s, cache_k), dtype=np.int64)
    ck2 = np.empty((s, cache_k), dtype=np.uint64)
    cv = np.empty((s, cache_k), dtype=np.int64)
    cn = np.zeros(s, dtype=np.int64)
    cfull = np.zeros(s, dtype=np.bool_)
    cth = np.full(s, _BIG, dtype=np.int64)
    rmax = np.zeros(s, dtype=np.int64)
    lbk = np.full(s, _BIG, dtype=np.int64)
    cnt = np.zeros(4, dtype=np.int64)
    # every row is exact after the start: its cursors at the ends of its member arrays
    pre = np.zeros(parent.shape[0], dtype=np.int64)
    cur = np.zeros(parent.shape[0], dtype=np.int64)
    for u in range(s):
        g = glob[u]
        for p in range(ptr[g], ptr[g + 1]):
            cur[p] = alen[_find(parent, p)]
    lazy = (glob, ptr, parent, astart, alen, pool, pre, cur)
    m = 0
    dec = 0
    if mode != 2:
        n = 0
        for u in range(s):
            ok, a1, a2, v = _best(mode, u, 0, mat, deg, deg32, compact, glob, seed, kb, kb32, ck1,
                                  ck2, cv, cn, cfull, cth, rmax, lbk, cnt, lazy)
            if ok:
                k1[n] = a1
                k2[n] = a2
                row[n] = u
                n += 1
        _heapify(k1, k2, row, n)
        while n > 0:
            u = row[0]
            ok, a1, a2, v = _best(mode, u, 0, mat, deg, deg32, compact, glob, seed, kb, kb32, ck1,
                                  ck2, cv, cn, cfull, cth, rmax, lbk, cnt, lazy)
            if not ok:
                n = _pop_top(k1, k2, row, n)
                continue
            if a1 == k1[0] and a2 == k2[0]:
                out[m, 0] = u
                out[m, 1] = v
                m += 1
                d, pool = _add_edge(u, v, glob, ptr, top, parent, size, astart, alen, acap,
                                    pool, ctr, deg, pre, cur)
                lazy = (glob, ptr, parent, astart, alen, pool, pre, cur)
                dec += d
                if compact:
                    deg32[u] += 1
                    deg32[v] += 1
            else:
                k1[0] = a1
                k2[0] = a2
                _sift_down(k1, k2, row, n, 0)
        return m, dec, cnt
    # threshold rule: W heap (row maxima) and selection heap
    w1 = np.empty(s, dtype=np.int64)
    w2 = np.zeros(s, dtype=np.uint64)
    wrow = np.empty(s, dtype=np.int64)
    nw = 0
    for u in range(s):
        r = row_max_of(mat, u)
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
            sync_row(u, glob, ptr, parent, astart, alen, pool, pre, cur, mat)
            r = row_max_of(mat, u)
            cnt[2] += 1
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
            # the threshold fell: every row whose maximum reaches it goes back in, keyed by
            # a lower bound of its best (the smaller of its cached best and its best entry
            # below the old threshold at its last scan; 0 when never scanned); a popped row's
            # cache may still prove its best (_best), else it is scanned
            theta = th
            cnt[3] += 1
            n = 0
            for u in range(s):
                if rmax[u] < theta:
                    continue
                if cth[u] == _BIG:  # never scanned
                    k1[n] = np.int64(0)
                    k2[n] = np.uint64(0)
                elif cn[u] > 0 and ck1[u, 0] < lbk[u]:
                    k1[n] = ck1[u, 0]
                    k2[n] = ck2[u, 0]
                elif lbk[u] < _BIG:
                    k1[n] = lbk[u]
                    k2[n] = np.uint64(0)
                else:  # nothing positive at its last scan
                    continue
                row[n] = u
                n += 1
            _heapify(k1, k2, row, n)
        found = False
        while n > 0:
            u = row[0]
            ok, a1, a2, v = _best(2, u, theta, mat, deg, deg32, compact, glob, seed, kb, kb32, ck1,
                                  ck2, cv, cn, cfull, cth, rmax, lbk, cnt, lazy)
            if not ok:
                n = _pop_top(k1, k2, row, n)
                continue
            if a1 == k1[0] and a2 == k2[0]:
                out[m, 0] = u
                out[m, 1] = v
                m += 1
                d, pool = _add_edge(u, v, glob, ptr, top, parent, size, astart, alen, acap,
                                    pool, ctr, deg, pre, cur)
                lazy = (glob, ptr, parent, astart, alen, pool, pre, cur)
                dec += d
                if compact:
                    deg32[u] += 1
                    deg32[v] += 1
                found = True
                break
            k1[0] = a1
            k2[0] = a2
            _sift_down(k1, k2, row, n, 0)
        if not found:  # cannot happen: the row holding W is eligible
            break
    return m, dec, cnt
