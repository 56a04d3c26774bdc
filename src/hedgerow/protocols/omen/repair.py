"""Shadow-based overlay repair: OMen's Algorithm 1 with the LowODA rule (section 4.1).

``repairTcoOnChurn(S, T_chev, I_S, E_cur)`` adds edges among the shadow set
``S`` until every topic of ``T_chev`` is connected among the members of ``S``
that hold it, choosing each edge by the LowODA rule.  The selection is the
project's one TCO engine (:func:`hedgerow.protocols.tco.engine.tco_augment`:
the LowODA rule, its threshold reading of ``rho`` and its seeded tie rule), run
on the node subset ``S`` from the current edges, so OMen, OMen-G and
LowODA-Inc differ only in the node set they hand it.  Our engine keeps the
overlay as a dynamic adjacency table (``adj``: one row of neighbours per
node, ``deg`` of them used).

Readings (``docs/omen.md``)
---------------------------
* **Components seen by the repair** (R-1, ``components``).  ``"true"`` (the
  default): two shadow nodes of topic ``t`` count as connected when the
  current overlay connects them inside ``G_t``, through any subscribers of
  ``t``.  ``"local"`` (the literal Alg. 1, ``G = (S, E_new ∪ E_cur)``): only
  links among ``S`` count.  The literal reading wires together backups that
  the rest of the overlay already connects (on every join, all backups of
  each topic), so it adds redundant edges; the true-component reading adds
  only edges that merge topic components, as LowODA-Inc does on all nodes.
* **Degrees** (R-8) in the rule are degrees in the whole overlay, not inside ``S``.

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0], [0, 1], [1]], n_topics=2)
>>> adj = np.full((4, 4), -1, dtype=np.int64); deg = np.zeros(4, dtype=np.int64)
>>> e = shadow_repair(inst.masks, adj, deg, np.arange(4), np.array([0, 1]),
...                   rng=np.random.default_rng(0))
>>> len(e), sorted(set(e.ravel().tolist()))
(3, [0, 1, 2, 3])
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hedgerow.protocols.tco.engine import tco_augment

__all__ = ["add_edge", "current_edges", "remove_node", "shadow_repair"]

_NO_CSC = np.zeros(0, dtype=np.int64)


def current_edges(adj: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """``(m, 2)`` links of the table, ``u < v``."""
    used = np.arange(adj.shape[1])[None, :] < deg[:, None]
    rows = np.repeat(np.arange(adj.shape[0], dtype=np.int64), deg)
    e = np.stack([rows, adj[used]], axis=1)
    return e[e[:, 0] < e[:, 1]]


@njit(cache=True)
def _compact(masks, topics, adj, deg, in_s, local, t_indptr, t_nodes):
    """Masks restricted to ``topics`` (bit j = topics[j]) and the links that can matter.

    A link counts when both ends hold a common topic of ``topics`` (``local``:
    and both ends are in ``in_s``).  Rows keep the global node ids, so the
    engine's tie rule (a hash of global ids) is unchanged.  With a topic ->
    subscribers CSC (``t_indptr``, ``t_nodes``; empty = absent) only the
    subscribers of ``topics`` are visited instead of every node's mask.
    """
    n = masks.shape[0]
    m = len(topics)
    w = (m + 63) // 64
    out = np.zeros((n, w), np.uint64)
    rel = np.zeros(n, np.bool_)
    if len(t_indptr):
        for j in range(m):
            t = topics[j]
            for x in range(t_indptr[t], t_indptr[t + 1]):
                v = t_nodes[x]
                out[v, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
                rel[v] = True
    else:
        for v in range(n):
            for j in range(m):
                t = topics[j]
                if (masks[v, t >> 6] >> np.uint64(t & 63)) & np.uint64(1):
                    out[v, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
                    rel[v] = True
    cnt = 0
    for u in range(n):
        if not rel[u] or (local and not in_s[u]):
            continue
        for x in range(deg[u]):
            v = adj[u, x]
            if v > u and rel[v] and (not local or in_s[v]):
                for k in range(w):
                    if out[u, k] & out[v, k]:
                        cnt += 1
                        break
    e = np.empty((cnt, 2), np.int64)
    i = 0
    for u in range(n):
        if not rel[u] or (local and not in_s[u]):
            continue
        for x in range(deg[u]):
            v = adj[u, x]
            if v > u and rel[v] and (not local or in_s[v]):
                for k in range(w):
                    if out[u, k] & out[v, k]:
                        e[i, 0] = u
                        e[i, 1] = v
                        i += 1
                        break
    return out, e


def shadow_repair(
    masks: np.ndarray,
    adj: np.ndarray,
    deg: np.ndarray,
    shadow: np.ndarray,
    topics: np.ndarray,
    *,
    rng: np.random.Generator,
    rho: float = 1.0,
    components: str = "true",
    subscribers: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Algorithm 1: the edges to add among ``shadow`` so every topic of ``topics`` is connected.

    Parameters
    ----------
    masks : numpy.ndarray
        ``(n, w)`` uint64 topic masks.
    adj, deg : numpy.ndarray
        Current overlay: ``adj[v, :deg[v]]`` are ``v``'s neighbours.
    shadow : numpy.ndarray
        ``S``, online nodes.
    topics : numpy.ndarray
        ``T_chev``.
    rng : numpy.random.Generator
        The tie rule's seed.
    rho : float
        LowODA's trade-off (>= 1).
    components : {"true", "local"}
        Reading R-1 (module docstring).
    subscribers : tuple of numpy.ndarray, optional
        ``(indptr, nodes)``: topic -> subscribers CSC matching ``masks``; the
        cut-down input is then built from the subscribers of ``topics`` alone
        (the same input, without a pass over every node).

    Returns
    -------
    numpy.ndarray
        ``(e, 2)`` int64 node pairs in the order chosen (not yet added).
    """
    S = np.unique(np.asarray(shadow, dtype=np.int64))
    topics = np.asarray(topics, dtype=np.int64)
    if len(S) < 2 or not len(topics):
        return np.zeros((0, 2), dtype=np.int64)
    in_s = np.zeros(adj.shape[0], dtype=np.bool_)
    in_s[S] = True
    # the repair only looks at T_chev: masks cut down to those topics, and only
    # the links inside some G_t, t in T_chev, which alone can connect shadow nodes
    t_indptr, t_nodes = subscribers if subscribers is not None else (_NO_CSC, _NO_CSC)
    cmasks, e = _compact(masks, topics, adj, deg, in_s, components == "local",
                         np.ascontiguousarray(t_indptr, dtype=np.int64),
                         np.ascontiguousarray(t_nodes, dtype=np.int64))
    return tco_augment(cmasks, S, e, rule="lowoda", rho=rho, rng=rng, degrees=deg)


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
