"""Shadow-based overlay repair: OMen's Algorithm 1 with the LowODA rule (section 4.1).

``repairTcoOnChurn(S, T_chev, I_S, E_cur)`` adds edges among the shadow set
``S`` until every topic of ``T_chev`` is connected among the members of ``S``
that hold it, choosing each edge by the LowODA rule.  Our engine keeps the
overlay as a dynamic adjacency table (``adj``: one row of neighbours per
node, ``deg`` of them used), so the repair reads the current links directly.

Readings (``docs/omen.md``)
---------------------------
* **Components seen by the repair** (R-1, ``components``).  ``"true"`` (the
  default): two shadow nodes of topic ``t`` count as connected when the
  current overlay connects them inside ``G_t``, through any subscribers of
  ``t``.  ``"local"`` (the literal Alg. 1): only links among ``S`` count.
  The literal reading wires together backups that the rest of the overlay
  already connects (on every join, all backups of each topic), so it adds
  redundant edges; the true-component reading adds only edges that merge
  topic components, as LowODA-Inc does on the whole node set.
* **The LowODA rule** (Alg. 1, line 3).  With ``W`` the largest contribution
  (number of topic components an edge would merge), the candidates are the
  edges of contribution at least ``W / rho``; among them the one whose
  endpoints' larger degree is smallest, then the larger contribution, then
  the lowest pair of node ids.  ``rho = 1`` picks only maximum-contribution
  edges (greedy merge).
* **Degrees** (R-8) are degrees in the whole overlay, not inside ``S``.

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0], [0, 1], [1]], n_topics=2)
>>> adj = np.full((4, 4), -1, dtype=np.int64); deg = np.zeros(4, dtype=np.int64)
>>> shadow_repair(inst.masks, adj, deg, np.arange(4), np.array([0, 1]), rho=1.0).tolist()
[[0, 1], [2, 3], [0, 2]]
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["add_edge", "remove_node", "shadow_repair", "topic_labels"]


@njit(cache=True)
def _holds(masks, v, t):
    return (masks[v, t >> 6] >> np.uint64(t & 63)) & np.uint64(1)


@njit(cache=True)
def _true_labels(masks, adj, deg, S, topics, stamp, posn):
    """labels[i, j]: component id (an index into S) of S[i] in G_{topics[j]}, -1 if not held."""
    k = len(S)
    m = len(topics)
    lab = np.full((k, m), -1, np.int64)
    for i in range(k):
        posn[S[i]] = i
    queue = np.empty(adj.shape[0], np.int64)
    mark = stamp[0]
    for j in range(m):
        t = topics[j]
        for i in range(k):
            if lab[i, j] >= 0 or _holds(masks, S[i], t) == 0:
                continue
            mark += 1
            head = 0
            tail = 1
            queue[0] = S[i]
            stamp[S[i] + 1] = mark
            while head < tail:
                u = queue[head]
                head += 1
                p = posn[u]
                if p >= 0:
                    lab[p, j] = i
                for x in range(deg[u]):
                    w = adj[u, x]
                    if stamp[w + 1] != mark and _holds(masks, w, t) != 0:
                        stamp[w + 1] = mark
                        queue[tail] = w
                        tail += 1
    stamp[0] = mark
    for i in range(k):
        posn[S[i]] = -1
    return lab


@njit(cache=True)
def _local_labels(masks, adj, deg, S, topics, posn):
    """As :func:`_true_labels`, counting only links among ``S`` (union-find)."""
    k = len(S)
    m = len(topics)
    lab = np.full((k, m), -1, np.int64)
    for i in range(k):
        posn[S[i]] = i
    parent = np.empty(k, np.int64)
    for j in range(m):
        t = topics[j]
        for i in range(k):
            parent[i] = i
        for i in range(k):
            u = S[i]
            if _holds(masks, u, t) == 0:
                continue
            for x in range(deg[u]):
                q = posn[adj[u, x]]
                if q >= 0 and _holds(masks, adj[u, x], t) != 0:
                    a = i
                    while parent[a] != a:
                        a = parent[a]
                    b = q
                    while parent[b] != b:
                        b = parent[b]
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        for i in range(k):
            if _holds(masks, S[i], t) != 0:
                a = i
                while parent[a] != a:
                    a = parent[a]
                lab[i, j] = a
    for i in range(k):
        posn[S[i]] = -1
    return lab


@njit(cache=True)
def _augment(S, lab, linked, deg, rho):
    """Algorithm 1 on labels ``lab`` (k x m); returns added pairs as indices into S."""
    k, m = lab.shape
    contrib = np.zeros((k, k), np.int64)
    for j in range(m):
        for a in range(k):
            if lab[a, j] < 0:
                continue
            for b in range(a + 1, k):
                if lab[b, j] >= 0 and lab[b, j] != lab[a, j]:
                    contrib[a, b] += 1
    d = deg.copy()
    out = np.empty((k * (k - 1) // 2 + 1, 2), np.int64)
    n_out = 0
    while True:
        w = 0
        for a in range(k):
            for b in range(a + 1, k):
                if not linked[a, b] and contrib[a, b] > w:
                    w = contrib[a, b]
        if w == 0:
            break
        thr = w / rho
        ba = -1
        bb = -1
        bd = 1 << 62
        bc = -1
        for a in range(k):
            for b in range(a + 1, k):
                c = contrib[a, b]
                if linked[a, b] or c <= 0 or c < thr:
                    continue
                dd = max(d[a], d[b])
                if dd < bd or (dd == bd and c > bc):
                    bd = dd
                    bc = c
                    ba = a
                    bb = b
        linked[ba, bb] = True
        linked[bb, ba] = True
        d[ba] += 1
        d[bb] += 1
        out[n_out, 0] = ba
        out[n_out, 1] = bb
        n_out += 1
        for j in range(m):
            la = lab[ba, j]
            lb = lab[bb, j]
            if la < 0 or lb < 0 or la == lb:
                continue
            # every (x in component la, y in component lb) pair loses one
            for x in range(k):
                if lab[x, j] != la:
                    continue
                for y in range(k):
                    if lab[y, j] == lb:
                        if x < y:
                            contrib[x, y] -= 1
                        else:
                            contrib[y, x] -= 1
            for y in range(k):
                if lab[y, j] == lb:
                    lab[y, j] = la
    return out[:n_out]


class _Scratch:
    def __init__(self, n: int) -> None:
        self.stamp = np.zeros(n + 1, dtype=np.int64)
        self.posn = np.full(n, -1, dtype=np.int64)


_SCRATCH: dict[int, _Scratch] = {}


def _scratch(n: int) -> _Scratch:
    s = _SCRATCH.get(n)
    if s is None:
        s = _SCRATCH[n] = _Scratch(n)
    return s


def topic_labels(
    masks: np.ndarray,
    adj: np.ndarray,
    deg: np.ndarray,
    shadow: np.ndarray,
    topics: np.ndarray,
    components: str = "true",
) -> np.ndarray:
    """Component ids ``(|S|, |T|)`` of the shadow nodes per topic (-1 where not subscribed)."""
    sc = _scratch(adj.shape[0])
    S = np.ascontiguousarray(shadow, dtype=np.int64)
    T = np.ascontiguousarray(topics, dtype=np.int64)
    if components == "true":
        return _true_labels(masks, adj, deg, S, T, sc.stamp, sc.posn)
    return _local_labels(masks, adj, deg, S, T, sc.posn)


def shadow_repair(
    masks: np.ndarray,
    adj: np.ndarray,
    deg: np.ndarray,
    shadow: np.ndarray,
    topics: np.ndarray,
    *,
    rho: float = 1.0,
    components: str = "true",
) -> np.ndarray:
    """Algorithm 1: the edges to add among ``shadow`` so every topic of ``topics`` is connected.

    Parameters
    ----------
    masks : numpy.ndarray
        ``(n, w)`` uint64 topic masks.
    adj, deg : numpy.ndarray
        Current overlay: ``adj[v, :deg[v]]`` are ``v``'s neighbours.
    shadow : numpy.ndarray
        ``S``, online nodes (sorted, distinct).
    topics : numpy.ndarray
        ``T_chev``.
    rho : float
        LowODA's trade-off (>= 1).
    components : {"true", "local"}
        Reading R-1 (module docstring).

    Returns
    -------
    numpy.ndarray
        ``(e, 2)`` int64 node pairs in the order chosen (not yet added).
    """
    S = np.unique(np.asarray(shadow, dtype=np.int64))
    if len(S) < 2 or not len(topics):
        return np.zeros((0, 2), dtype=np.int64)
    lab = topic_labels(masks, adj, deg, S, topics, components)
    k = len(S)
    linked = np.zeros((k, k), dtype=np.bool_)
    sc = _scratch(adj.shape[0])
    sc.posn[S] = np.arange(k)
    for i, u in enumerate(S.tolist()):
        nb = sc.posn[adj[u, : deg[u]]]
        linked[i, nb[nb >= 0]] = True
    sc.posn[S] = -1
    pairs = _augment(S, lab, linked, deg[S].astype(np.int64), float(rho))
    return S[pairs]


def add_edge(adj: np.ndarray, deg: np.ndarray, u: int, v: int) -> np.ndarray:
    """Add the link ``u-v`` (growing the table when a row is full); returns the table."""
    if max(deg[u], deg[v]) >= adj.shape[1]:
        grown = np.full((adj.shape[0], 2 * adj.shape[1]), -1, dtype=adj.dtype)
        grown[:, : adj.shape[1]] = adj
        adj = grown
    adj[u, deg[u]] = v
    deg[u] += 1
    adj[v, deg[v]] = u
    deg[v] += 1
    return adj


def remove_node(adj: np.ndarray, deg: np.ndarray, v: int) -> np.ndarray:
    """Drop every link of ``v``; returns its former neighbours."""
    nb = adj[v, : deg[v]].copy()
    for u in nb.tolist():
        row = adj[u, : deg[u]]
        i = int(np.flatnonzero(row == v)[0])
        last = deg[u] - 1
        adj[u, i] = adj[u, last]
        adj[u, last] = -1
        deg[u] = last
    adj[v, : deg[v]] = -1
    deg[v] = 0
    return nb
