"""One incremental engine for the centralized TCO algorithms (GM, MinMaxODA, LowODA).

All three are greedy: start from a set of existing edges and add one edge at a
time until every topic subgraph ``G_t`` is connected (a topic-connected
overlay, TCO).  They differ only in which edge they add.  The central quantity
is the **contribution** of a potential edge ``(u, v)``: the number of topics
``t`` both subscribe to whose components of ``u`` and ``v`` in ``G_t`` differ,
i.e. the number of topic components adding the edge merges.  Adding an edge
sets its own contribution to 0 and only ever lowers the others (components only
merge); the overlay is a TCO iff every contribution is 0.

Selection rules (``W`` = the largest contribution, ``d(u)`` the current degree
of ``u`` in the whole overlay, including the starting edges):

``gm``
    Greedy Merge (Chockler, Melamed, Tock, Vitenberg, PODC 2007): the edge of
    largest contribution.  At most ``(1 + ln Φ₀)`` times the fewest edges of any
    TCO completing the start (``Φ₀ = Σ_t (components_t − 1)``), the greedy
    set-cover bound.
``minmaxoda``
    MinMaxODA (Onus & Richa, INFOCOM 2009): among edges with contribution > 0,
    the one minimising ``max(d(u), d(v))``, ties by larger contribution.
``lowoda``
    LowODA (Onus & Richa, ICDCS 2010) with ``ρ ≥ 1``: among the edges whose
    contribution ``c`` satisfies ``c · ρ ≥ W``, the one minimising
    ``max(d(u), d(v))``, ties by larger contribution.  The selection rule of
    that paper is not reproduced in the OMen paper (which only cites it, with
    the trade-off of its Table 1: average degree ``O(ρ log |V||T|)``, maximum
    degree ``O((|V|/ρ) log |V||T|)``); this threshold reading is ours.  It has
    the properties the trade-off needs, pinned by tests: ρ = 1 picks only
    maximum-contribution edges (GM, ties by lower degree), ρ ≥ W behaves as
    MinMaxODA, and over seeds the average degree does not fall as ρ grows while
    the maximum degree falls from ρ = 1 to 2 to 4 and stays within a degree of
    MinMaxODA's (the paper states only asymptotic bounds; beyond ρ ≈ 3 the
    greedy's maximum moves in steps of about one degree either way).

**Tie rule** (all rules, documented and seeded): after the rule's own keys, the
pair with the smallest 64-bit splitmix hash of ``(seed, min id, max id)`` wins,
where ``seed`` is one draw from the ``rng`` handed in and ids are the nodes'
global ids.  The hash is uniform and symmetric, so ties spread over nodes
instead of piling onto one low-numbered node.

**Subsets and starting edges.**  The engine works on a node subset ``S``
(``nodes``) and starting edges ``E``: only pairs inside ``S`` are added; the
components of ``G_t`` are those of the *whole* current overlay ``E`` (paths may
leave ``S``; "true components"), so a topic counts as repaired when its
subscribers in ``S`` are connected in ``G_t``; degrees are whole-overlay
degrees (counted from ``E``, or given).  ``topics`` restricts the topics that
must be connected (a churned node's topics in a repair).

**Cost.**  Initial contributions ``Σ_t |V_t ∩ S|²``; every (pair, topic) is
decremented at most once over a run (``Σ_t C(|V_t ∩ S|, 2)`` in all), over flat
member arrays of the two merged components, each row when it is next read
(its pending columns are two ranges of its component's array per slot: the
tail appended to it, and the array it was appended to), so the writes go to
one row at a time instead of one entry to each of many rows.  Selection
pops a lazily validated heap over the rows of the dense contribution matrix
(stored keys are lower bounds: contributions only fall and degrees only rise).
Each row caches the ``K`` best entries of its last scan; a popped row whose
cache proves its best (the best current cached key does not exceed the
``K``-th key of that scan) costs ``O(K)``, and only a row whose cached entries
all worsened past that bound is scanned again (``O(|S|)``).  LowODA with
ρ > 1 re-keys its heap when the threshold ``⌈W/ρ⌉`` falls (at most ``W₀``
times), each row by a lower bound kept from its last scan (the smaller of its
cached best and its best entry below the old threshold), so a row is looked
at only when it reaches the top, and its cache still answers when its best
beats every formerly ineligible entry.  Keys of the threshold rule are int32
when exact (contributions below 32,767, degrees below 65,535).  Memory: the ``|S|²``
contribution matrix, four bits a cell while fewer than 127 topics are involved (50 MB at
10,000 nodes, 4.7 GiB at 100,000), with a table of the pairs sharing 15 or more topics (a cell
at 15 says "look in the table"; about one pair in 100,000 at 100 topics), listed before the
matrix is allocated; one byte a cell when that table would pass ``|S|² / 256`` entries
(:func:`~hedgerow.workloads.memory.tco_four_bits`); int16 below 32,767 topics, int32 above;
plus ``24 K`` bytes per subset node for the row caches.  The layouts read the same values, so
they add the same edges (:mod:`hedgerow.protocols.tco._kernels` says why four bits).

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0, 1], [0, 1], [1], [0]], n_topics=2)
>>> rng = np.random.default_rng(1)
>>> tco_augment(inst.masks, None, np.empty((0, 2), np.int64), rule="gm", rng=rng).tolist()
[[0, 1], [1, 3], [1, 2]]
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.bitset import pack_bool
from hedgerow.params import check_memory
from hedgerow.protocols.tco import _kernels as K
from hedgerow.workloads.memory import tco_four_bits, tco_matrix_bytes, tco_overflow_cap

__all__ = ["RULES", "naive_tco_augment", "tco_augment"]

#: the selection rules the engine implements
RULES = ("gm", "minmaxoda", "lowoda")

_MASK64 = (1 << 64) - 1

#: best entries cached per row of the contribution matrix (a heap pop whose row cache proves
#: its best costs O(K) instead of a scan of the row)
_CACHE_K = 32
#: int32 threshold keys when they are exact (off: always int64; the tests run both)
_COMPACT = True
#: from no start edges, the initial contributions by popcounts of the topic bit sets when
#: that is the cheaper way (off: always the per-topic sums; the tests run both)
_POPCOUNT_START = True
#: four bits a cell below 127 topics when the table of pairs at 15 or more stays small
#: (off: one byte a cell, the layout before; the tests run both)
_PACKED = True


def _prepare(masks, nodes, edges, rule, rho, topics, degrees):
    """Validated inputs: masks, subset, edges, topic mask, base degrees."""
    if rule not in RULES:
        raise ParameterError(f"rule must be one of {', '.join(RULES)}, got {rule!r}", key="rule")
    try:
        rho = float(rho)
    except (TypeError, ValueError):
        raise ParameterError(f"rho must be a number >= 1, got {rho!r}", key="rho") from None
    if not rho >= 1.0 or not np.isfinite(rho):
        raise ParameterError(f"rho must be >= 1 (LowODA's trade-off), got {rho}", key="rho")
    masks = np.ascontiguousarray(masks, dtype=np.uint64)
    if masks.ndim != 2:
        raise ParameterError(f"masks must be (n, words) uint64, got shape {masks.shape}",
                             key="masks")
    n = masks.shape[0]
    if nodes is None:
        nodes = np.arange(n, dtype=np.int64)
    else:
        nodes = np.unique(np.asarray(nodes, dtype=np.int64))
        if nodes.size and (nodes[0] < 0 or nodes[-1] >= n):
            raise ParameterError(
                f"nodes must lie in [0, {n}), got {int(nodes[0])}..{int(nodes[-1])}", key="nodes")
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ParameterError(f"edges must join nodes in [0, {n})", key="edges")
    if edges.size and np.any(edges[:, 0] == edges[:, 1]):
        raise ParameterError("edges must not contain self-loops", key="edges")
    n_bits = masks.shape[1] * 64
    keep = np.zeros(n_bits, dtype=np.bool_)
    if topics is None:
        keep[:] = True
    else:
        t = np.asarray(topics, dtype=np.int64).ravel()
        if t.size and (t.min() < 0 or t.max() >= n_bits):
            raise ParameterError(f"topics must lie in [0, {n_bits})", key="topics")
        keep[t] = True
    if degrees is None:
        deg = np.bincount(edges.ravel(), minlength=n).astype(np.int64)
    else:
        deg = np.asarray(degrees, dtype=np.int64)
        if deg.shape != (n,):
            raise ParameterError(f"degrees must have shape ({n},), got {deg.shape}",
                                 key="degrees")
    return masks, nodes, edges, rho, keep, deg


@numba.njit(cache=True)
def select_compiled(mode, rho, fixed, seed, mat, deg, nodes, ptr, top, parent, size, n_topics,
                    cache_k, compact_ok, filled=False):  # pragma: no cover - jitted
    """The selection on a prepared input, compiled: ``(chosen pairs, Φ₀, decrements, counters)``.

    ``mat`` is the zeroed ``(s, s)`` contribution matrix as a layout tuple
    (:func:`_kernels.dense` of an ``int8``/``int16``/``int32`` array, or
    :func:`_kernels.packed`, four bits a cell), ``deg`` the subset's
    degrees (updated in place), ``ptr``/``top`` the slots indexed by node id and
    ``parent``/``size`` their union-find after the starting edges.  The member
    arrays of each component root are built here (the start takes twice the
    members; merges grow a component in place until it has doubled).  Threshold
    keys are ``int32`` when ``compact_ok`` (contributions below 32,767) and no
    degree can reach 65,535 (a node gains at most ``s - 1`` edges).  ``filled``:
    the matrix already holds the initial contributions (:func:`_kernels.shared_counts`).
    Shared by :func:`tco_augment` (through :func:`_select`) and OMen's shadow repair, so
    both run one engine.
    """
    n_slots = top.shape[0]
    s = nodes.shape[0]
    astart = np.full(n_slots, -1, dtype=np.int64)
    alen = np.zeros(n_slots, dtype=np.int64)
    acap = np.zeros(n_slots, dtype=np.int64)
    n_members = 0
    dmax = 0
    for i in range(s):
        n_members += ptr[nodes[i] + 1] - ptr[nodes[i]]
        dmax = max(dmax, deg[i])
    pool = np.empty(4 * n_members + 64, dtype=np.int32)
    phi0, pool_top = K.init_contributions(ptr, top, parent, nodes, n_topics, mat, astart, alen,
                                          acap, pool, not filled)
    out = np.empty((max(phi0, 1), 2), dtype=np.int64)
    ctr = np.array([pool_top], dtype=np.int64)
    m, dec, cnt = K.run_engine(mode, rho, fixed, seed, mat, deg, nodes, ptr, top, parent, size,
                               astart, alen, acap, pool, ctr, out, cache_k,
                               compact_ok and dmax + s < 65535)
    return out[:m], phi0, dec, cnt


def _select(mode, rho, fixed, seed, mat, deg, nodes, ptr, top, parent, size, n_topics,
            filled=False):
    """:func:`select_compiled` with this module's settings; ``(pairs, counters)``.

    ``mat``: a layout tuple, or a dense matrix (wrapped by :func:`_kernels.dense`).
    """
    if isinstance(mat, np.ndarray):
        mat = K.dense(mat)
    small = mat[1].shape[0] > 0 or mat[0].dtype in (np.int8, np.int16)
    out, phi0, dec, cnt = select_compiled(
        mode, rho, fixed, np.uint64(seed), mat, deg, nodes, ptr, top, parent, size, n_topics,
        _CACHE_K, bool(_COMPACT and small), filled)
    counts = dict(phi0=int(phi0), decrements=int(dec), scans=int(cnt[0]),
                  cache_hits=int(cnt[1]), max_scans=int(cnt[2]), thresholds=int(cnt[3]))
    return out, counts


def _layout(sub, n_rel, active_counts):
    """The contribution matrix's layout for the subset's relevant bit sets ``sub``.

    Returns ``(bits, overflow, table)``: ``bits`` 4 (packed, with ``table`` =
    ``(optr, ocol, oval)`` of the pairs sharing 15 or more relevant topics,
    :func:`_kernels.overflow_pairs`), else 8, 16 or 32 (one cell of that many
    bits, ``table`` None); ``overflow`` the table's entries (-1: past
    :func:`~hedgerow.workloads.memory.tco_overflow_cap`, not counted further).
    Only the nodes holding 15 or more relevant topics can be in such a pair.
    """
    s = sub.shape[0]
    wide = 8 if n_rel < 127 else 16 if n_rel < 32767 else 32
    if not _PACKED or not tco_four_bits(s, n_rel, 0):
        return wide, 0, None
    cand = np.flatnonzero(active_counts >= 15).astype(np.int64)
    if cand.shape[0] < 2:
        return 4, 0, (np.zeros(s + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    cap = tco_overflow_cap(s)
    overflow, optr, ocol, oval = K.overflow_pairs(sub, cand, cap)
    if not tco_four_bits(s, n_rel, overflow):
        return wide, int(overflow), None
    return 4, int(overflow), (optr, ocol, oval)


def _draw_seed(rng) -> int:
    """The tie-rule seed: one draw from ``rng`` (the same in the engine and the reference)."""
    if rng is None or not hasattr(rng, "integers"):
        raise ParameterError("rng must be a numpy Generator (from RngStreams)", key="rng")
    return int(rng.integers(0, 2**63 - 1))


def tco_augment(masks, nodes, edges, *, rule, rho=1.0, rng, topics=None, degrees=None,
                stats=None) -> np.ndarray:
    """Add edges until every topic's subscribers among ``nodes`` are connected.

    Parameters
    ----------
    masks : (n, w) uint64 array
        Topic bitmasks of all nodes (``Instance.masks``).
    nodes : int64 array or None
        The node subset to work on (sorted); ``None`` for all nodes.  Added
        edges join two nodes of the subset.
    edges : (k, 2) int64 array
        Existing undirected edges: kept, counted in degrees and components.
    rule : {'gm', 'minmaxoda', 'lowoda'}
        The selection rule (module docstring).
    rho : float
        LowODA's ρ ≥ 1 (ignored by the other rules, but still checked).
    rng : numpy.random.Generator
        One draw seeds the tie rule.
    topics : int array, optional
        Only these topics must be connected (default: all).
    degrees : (n,) int64 array, optional
        Current degrees of all nodes, when they differ from the degrees in
        ``edges`` (e.g. when only part of the overlay is handed in).
    stats : dict, optional
        Filled with ``phi0`` (initial potential), ``decrements`` and ``scans``, and the
        matrix's layout: ``cell_bits`` (4, 8, 16 or 32) and ``overflow`` (the four-bit
        layout's table entries; -1 when past its cap).

    Returns
    -------
    (m, 2) int64 array
        The added edges ``(min id, max id)``, in the order chosen.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[3], [3], [1], [2]], dtype=np.uint64)   # topics {0,1}, {0,1}, {0}, {1}
    >>> tco_augment(m, None, [[0, 1]], rule="lowoda", rho=2.0,
    ...             rng=np.random.default_rng(0)).shape[0]
    2
    """
    masks, nodes, edges, rho, keep, deg_all = _prepare(
        masks, nodes, edges, rule, rho, topics, degrees)
    seed = _draw_seed(rng)
    s = nodes.shape[0]
    if s < 2:
        return np.empty((0, 2), dtype=np.int64)
    n = masks.shape[0]
    # relevant topics: kept and subscribed by >= 2 subset nodes
    sptr, stop = K.node_topic_csr(masks, nodes, keep)
    counts = np.bincount(stop, minlength=keep.shape[0])
    relevant = keep & (counts[: keep.shape[0]] >= 2)
    n_rel = int(relevant.sum())
    if n_rel == 0:
        return np.empty((0, 2), dtype=np.int64)
    # a node with no relevant topic has contribution 0 with everyone: leave it out (same
    # result, the tie rule hashes global ids; a repair touching few topics stays small)
    owner = np.repeat(np.arange(s), np.diff(sptr))
    n_rel_of = np.bincount(owner[relevant[stop]], minlength=s)
    active = n_rel_of > 0
    nodes = nodes[active]
    s = nodes.shape[0]
    if s < 2:
        return np.empty((0, 2), dtype=np.int64)
    # slots over every node that subscribes a relevant topic (paths may leave the subset)
    ptr, top = K.node_topic_csr(masks, np.arange(n, dtype=np.int64), relevant)
    n_slots = top.shape[0]
    parent = np.arange(n_slots, dtype=np.int64)
    size = np.ones(n_slots, dtype=np.int64)
    if edges.shape[0]:
        K.union_edges(ptr, top, parent, size, edges[:, 0].copy(), edges[:, 1].copy())
    # a contribution counts topics, at most n_rel: four bits a cell below 127 topics (with a
    # table of the pairs at 15 or more), one byte when that table would be large; the layout
    # is decided, and checked against the memory, before the matrix is allocated
    sub = masks[nodes] & pack_bool(relevant[None, :])[0]
    bits, overflow, table = _layout(sub, n_rel, n_rel_of[active])
    check_memory(f"{rule} on {s:,} nodes (its {s:,} x {s:,} contribution matrix)",
                 tco_matrix_bytes(s, n_rel, overflow if _PACKED else -1))
    # with no start edges every component is one node, so the initial contribution of a pair
    # is the number of relevant topics both subscribe to: a popcount of their bit sets,
    # cheaper than the per-topic sums when the sets are a few words and the topics large
    filled = bool(edges.shape[0] == 0 and _POPCOUNT_START
                  and s * s * masks.shape[1] <= 2 * int((counts[relevant] ** 2).sum()))
    if bits == 4:
        optr, ocol, oval = table
        mat = K.packed(s, optr, ocol, oval)
        if filled:
            K.shared_counts_packed(sub, mat[1])
            mat[5][:] = np.diff(optr)  # the table's counts are the initial ones, all >= 15
    else:
        C = np.zeros((s, s), dtype={8: np.int8, 16: np.int16, 32: np.int32}[bits])
        if filled:
            K.shared_counts(sub, C)
        mat = K.dense(C)
    del sub
    deg = deg_all[nodes].copy()
    if rule == "gm":
        mode, fixed = K.MODE_GM, 0
    elif rule == "minmaxoda":
        mode, fixed = K.MODE_THRESHOLD, 1
    elif rho == 1.0:
        mode, fixed = K.MODE_MAXC_MINDEG, 0
    else:
        mode, fixed = K.MODE_THRESHOLD, 0
    out, counts = _select(mode, rho, fixed, seed, mat, deg, nodes, ptr, top, parent, size,
                          keep.shape[0], filled)
    if stats is not None:
        stats.update(counts, cell_bits=bits, overflow=overflow)
    res = nodes[out]
    return np.sort(res, axis=1)


# ---------------------------------------------------------------------------
# plain reference (tests only)


def _py_hash(seed: int, a: int, b: int) -> int:
    """The engine's pair hash in plain Python integers."""
    lo, hi = (a, b) if a < b else (b, a)
    x = (seed + lo * 0x9E3779B97F4A7C15 + hi * 0xBF58476D1CE4E5B9) & _MASK64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK64
    x ^= x >> 31
    return x


def _py_theta(w: int, rho: float) -> int:
    c = max(1, int(np.ceil(w / rho)))
    while c > 1 and (c - 1) * rho >= w:
        c -= 1
    while c * rho < w:
        c += 1
    return c


def naive_tco_augment(masks, nodes, edges, *, rule, rho=1.0, rng, topics=None, degrees=None,
                      stats=None) -> np.ndarray:
    """Plain reference of :func:`tco_augment`: recomputes every contribution each step.

    Same arguments, same result; ``O(|S|² |T| · |E|)`` per added edge, for tests.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[3], [3], [1], [2]], dtype=np.uint64)
    >>> naive_tco_augment(m, None, [[0, 1]], rule="gm",
    ...                   rng=np.random.default_rng(0)).tolist()
    [[0, 3], [1, 2]]
    """
    masks, nodes, edges, rho, keep, deg_all = _prepare(
        masks, nodes, edges, rule, rho, topics, degrees)
    seed = _draw_seed(rng)
    n = masks.shape[0]
    n_bits = masks.shape[1] * 64
    subs = [
        [v for v in range(n) if (int(masks[v, t >> 6]) >> (t & 63)) & 1]
        for t in range(n_bits)
    ]
    topics_on = [t for t in range(n_bits) if keep[t] and len(subs[t]) > 1]
    sub_sets = {t: set(subs[t]) for t in topics_on}
    cur = [tuple(e) for e in edges.tolist()]
    deg = {int(v): int(deg_all[v]) for v in nodes}
    S = [int(v) for v in nodes]
    added: list[tuple[int, int]] = []
    while True:
        comp = {}
        for t in topics_on:
            par = {v: v for v in subs[t]}

            def find(x, par=par):
                while par[x] != x:
                    par[x] = par[par[x]]
                    x = par[x]
                return x

            for a, b in cur:
                if a in sub_sets[t] and b in sub_sets[t]:
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        par[ra] = rb
            comp[t] = {v: find(v) for v in subs[t]}
        cand = []
        for i, a in enumerate(S):
            for b in S[i + 1:]:
                c = sum(
                    1 for t in topics_on
                    if a in sub_sets[t] and b in sub_sets[t] and comp[t][a] != comp[t][b]
                )
                if c > 0:
                    cand.append((c, max(deg[a], deg[b]), _py_hash(seed, a, b), a, b))
        if not cand:
            break
        big_w = max(x[0] for x in cand)
        if rule == "gm":
            best = min(cand, key=lambda x: (-x[0], x[2]))
        elif rule == "lowoda" and rho == 1.0:
            best = min(cand, key=lambda x: (-x[0], x[1], x[2]))
        else:
            th = 1 if rule == "minmaxoda" else _py_theta(big_w, rho)
            best = min((x for x in cand if x[0] >= th), key=lambda x: (x[1], -x[0], x[2]))
        _, _, _, a, b = best
        cur.append((a, b))
        deg[a] += 1
        deg[b] += 1
        added.append((a, b))
    return np.array(added, dtype=np.int64).reshape(-1, 2)
