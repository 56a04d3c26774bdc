"""Shadow-based overlay repair: OMen's Algorithm 1 with the LowODA rule (section 4.1).

``repairTcoOnChurn(S, T_chev, I_S, E_cur)`` adds edges among the shadow set
``S`` until every topic of ``T_chev`` is connected among the members of ``S``
that hold it, choosing each edge by the LowODA rule.  The selection is the
project's one TCO engine (the kernels of
:func:`hedgerow.protocols.tco.engine.tco_augment`: the LowODA rule, its
threshold reading of ``rho`` and its seeded tie rule), run on the node
subset ``S`` from the current edges, so OMen, OMen-G and
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

Cost
----
The engine's choices depend only on the contributions among ``S``, i.e. on
how each topic's components partition the members of ``S`` that hold it,
and on degrees and the seeded hash of global ids.  So the repair hands the
engine slots for ``S`` alone (one per member and topic of ``T_chev`` held by
two members or more), in a CSR over the global ids, with a union-find that
already joins the slots of one component of ``G_t``.  The components come
from a breadth-first search in ``G_t`` per topic, started at a member and
stopped once every member holding ``t`` is reached.  A call costs the
shadow's topics plus the part of ``G_t`` the searches visit (at most the
subscribers of ``T_chev`` and their links), plus a few ``O(n)`` array fills,
instead of a cut-down copy of the masks of every subscriber of ``T_chev``
and a union-find over all their links.  The edges are those of the engine on
the whole overlay, draw for draw (``tests/protocols/omen/test_equivalence.py``).

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

from hedgerow.errors import ParameterError
from hedgerow.protocols.tco import _kernels as K
from hedgerow.protocols.tco import engine as _engine
from hedgerow.protocols.tco.engine import _draw_seed, _select, select_compiled

__all__ = ["add_edge", "current_edges", "holds_topics", "remove_node", "shadow_repair"]

_EMPTY = np.zeros((0, 2), dtype=np.int64)
#: a call with fewer distinct topics runs as one compiled call (:func:`_repair_fused`, ``int16``
#: contributions); more, as the selection's two-call path with ``int32`` ones when needed
_FUSED_TOPICS = 32767


def current_edges(adj: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """``(m, 2)`` links of the table, ``u < v``."""
    used = np.arange(adj.shape[1])[None, :] < deg[:, None]
    rows = np.repeat(np.arange(adj.shape[0], dtype=np.int64), deg)
    e = np.stack([rows, adj[used]], axis=1)
    return e[e[:, 0] < e[:, 1]]


@njit(cache=True)
def _shadow_slots(masks, topics, adj, deg, S, local):  # pragma: no cover - jitted
    """The engine's slots for the shadow alone, each topic's components found by search.

    Bit ``j`` stands for ``topics[j]`` (``T_chev``, distinct).  A topic is
    *relevant* when at least two members of ``S`` (sorted) hold it; a member
    is *active* when it holds a relevant topic.  Every active member gets one
    slot per relevant topic, ``j`` ascending, in a CSR over the global ids
    (``ptr``: ``n + 1`` entries, empty rows for everyone else), so the
    engine's rows and its tie hash keep the global ids.  The union-find over
    the slots (``parent``, ``size``, flat: every slot points at the first slot
    of its component) holds the components of ``G_t`` among the slots: a
    breadth-first search in ``G_t`` (the links whose both ends hold ``t``;
    ``local``: and lie in ``S``) from every member holding ``t``, the searches
    grown one node each in turn and merged where they meet, stopped when at
    most one is still growing (the others ran dry: each is a whole component,
    so the last one holds all the remaining members).  A round visits only
    the searches still growing (``live``: dry and merged ones drop out as they
    are met, so a round costs its pops, not ``|S|``); the order does not
    matter, because the partition into components is unique.  A topic the
    overlay connects costs the searches until they meet; a split one its
    pieces but the largest.  The engine needs nothing else: only the partition of the
    shadow's slots into components enters contributions and merges.

    Returns ``(nodes, ptr, top, parent, size, n_rel)``: the active members
    (global ids, ascending), the slot CSR, the union-find and the number of
    relevant topics.
    """
    n = masks.shape[0]
    k = S.shape[0]
    m = topics.shape[0]
    sub = np.zeros((k, m), dtype=np.bool_)
    cnt = np.zeros(m, dtype=np.int64)
    for a in range(k):
        v = S[a]
        for j in range(m):
            t = topics[j]
            if (masks[v, t >> 6] >> np.uint64(t & 63)) & np.uint64(1):
                sub[a, j] = True
                cnt[j] += 1
    n_rel = 0
    for j in range(m):
        if cnt[j] >= 2:
            n_rel += 1
    # slots of the active members, topics ascending
    slot = np.full((k, m), -1, dtype=np.int64)
    rows = np.zeros(k, dtype=np.int64)
    s = 0
    for a in range(k):
        for j in range(m):
            if sub[a, j] and cnt[j] >= 2:
                rows[a] += 1
        if rows[a]:
            s += 1
    nodes = np.empty(s, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    i = 0
    for a in range(k):
        if rows[a]:
            nodes[i] = S[a]
            ptr[S[a] + 1] = rows[a]
            i += 1
    for g in range(n):
        ptr[g + 1] += ptr[g]
    top = np.empty(ptr[n], dtype=np.int64)
    for a in range(k):
        q = ptr[S[a]]
        for j in range(m):
            if sub[a, j] and cnt[j] >= 2:
                top[q] = j
                slot[a, j] = q
                q += 1
    n_slots = top.shape[0]
    parent = np.arange(n_slots, dtype=np.int64)
    size = np.ones(n_slots, dtype=np.int64)
    if n_rel == 0 or s < 2:
        return nodes, ptr, top, parent, size, n_rel
    # components: one search per member, all grown in turn, merged where they meet
    pos = np.full(n, -1, dtype=np.int64)
    for a in range(k):
        pos[S[a]] = a
    seen = np.full(n, -1, dtype=np.int64)  # topic index j of the last search to claim the node
    who = np.empty(n, dtype=np.int64)  # the member whose search claimed it
    qnext = np.empty(n, dtype=np.int64)  # queues: linked lists through the nodes
    qhead = np.full(k, -1, dtype=np.int64)
    qtail = np.full(k, -1, dtype=np.int64)
    grp = np.arange(k, dtype=np.int64)  # union-find of the searches that met
    first = np.empty(k, dtype=np.int64)
    live = np.empty(k, dtype=np.int64)
    for j in range(m):
        if cnt[j] < 2:
            continue
        t = topics[j]
        word = t >> 6
        bit = np.uint64(t & 63)
        for a in range(k):
            grp[a] = a
            if sub[a, j]:
                seen[S[a]] = j
                who[S[a]] = a
                qnext[S[a]] = -1
                qhead[a] = S[a]
                qtail[a] = S[a]
        nl = 0  # live[:nl]: the searches that may still grow
        for a in range(k):
            if sub[a, j]:
                live[nl] = a
                nl += 1
        while nl > 1:
            i = 0
            while i < nl:
                a = live[i]
                if grp[a] != a or qhead[a] < 0:  # merged into another, or ran dry
                    nl -= 1
                    live[i] = live[nl]
                    continue
                i += 1
                u = qhead[a]
                qhead[a] = qnext[u]
                if qhead[a] < 0:
                    qtail[a] = -1
                for x in range(deg[u]):
                    w = adj[u, x]
                    if not (masks[w, word] >> bit) & np.uint64(1):
                        continue
                    if local and pos[w] < 0:
                        continue
                    if seen[w] != j:
                        seen[w] = j
                        who[w] = a
                        qnext[w] = -1
                        if qtail[a] < 0:
                            qhead[a] = w
                        else:
                            qnext[qtail[a]] = w
                        qtail[a] = w
                        continue
                    r = who[w]
                    while grp[r] != r:
                        r = grp[r]
                    if r != a:  # two searches met: one component; a takes r's queue
                        grp[r] = a
                        if qhead[r] >= 0:
                            if qtail[a] < 0:
                                qhead[a] = qhead[r]
                            else:
                                qnext[qtail[a]] = qhead[r]
                            qtail[a] = qtail[r]
                            qhead[r] = -1
                            qtail[r] = -1
        # the slots of one component point at the slot of its first member
        for a in range(k):
            first[a] = -1
            qhead[a] = -1
            qtail[a] = -1
        for a in range(k):
            if sub[a, j]:
                r = a
                while grp[r] != r:
                    r = grp[r]
                if first[r] < 0:
                    first[r] = a
                else:
                    root = slot[first[r], j]
                    parent[slot[a, j]] = root
                    size[root] += 1
    return nodes, ptr, top, parent, size, n_rel


@njit(cache=True)
def _repair_input(masks, topics, adj, deg, shadow, local):  # pragma: no cover - jitted
    """:func:`_shadow_slots` on ``unique(shadow)`` and ``unique(topics)``, and their degrees.

    ``status``: 0 ready, 1 nothing to connect (fewer than two nodes or no
    topic: no tie draw), 2 a node out of range, 3 a topic out of range.
    Returns ``(status, nodes, ptr, top, parent, size, n_rel, n_topics,
    degrees of nodes)``.
    """
    S = np.unique(shadow)
    T = np.unique(topics)
    z = np.zeros(0, dtype=np.int64)
    status = 0
    if S.shape[0] < 2 or T.shape[0] == 0:
        status = 1
    elif S[0] < 0 or S[-1] >= masks.shape[0]:
        status = 2
    elif T[0] < 0 or T[-1] >= 64 * masks.shape[1]:
        status = 3
    if status:
        return status, z, z, z, z, z, 0, 0, z
    nodes, ptr, top, parent, size, n_rel = _shadow_slots(masks, T, adj, deg, S, local)
    dn = np.empty(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        dn[i] = deg[nodes[i]]
    return 0, nodes, ptr, top, parent, size, n_rel, T.shape[0], dn


@njit(cache=True)
def _repair_status(n, w, shadow, topics):  # pragma: no cover - jitted
    """``(status, distinct topics)`` of a call, as :func:`_repair_input` reports it."""
    S = np.unique(shadow)
    T = np.unique(topics)
    if S.shape[0] < 2 or T.shape[0] == 0:
        return 1, T.shape[0]
    if S[0] < 0 or S[-1] >= n:
        return 2, T.shape[0]
    if T[0] < 0 or T[-1] >= 64 * w:
        return 3, T.shape[0]
    return 0, T.shape[0]


@njit(cache=True)
def _repair_fused(masks, topics, adj, deg, shadow, local, mode, rho, seed, cache_k,
                  compact_ok):  # pragma: no cover - jitted
    """:func:`_repair_input` then the engine's selection, in one compiled call.

    The same steps as the two-call path of :func:`shadow_repair` (the slots
    and component searches, then the engine's compiled selection
    :func:`~hedgerow.protocols.tco.engine.select_compiled` with the ``int16``
    contribution matrix), so the same edges; a repair is a handful
    of microseconds of compiled work on a shadow of a dozen nodes, and the
    interpreter's calls and allocations between the steps cost more than
    that.  The caller has checked the status and drawn ``seed``.  Returns
    the ``(e, 2)`` global pairs ``(min, max)`` in the order chosen.
    """
    _, nodes, ptr, top, parent, size, n_rel, n_topics, dn = _repair_input(
        masks, topics, adj, deg, shadow, local)
    s = nodes.shape[0]
    if n_rel == 0 or s < 2:
        return np.zeros((0, 2), dtype=np.int64)
    C = np.zeros((s, s), dtype=np.int16)
    out, _, _, _ = select_compiled(mode, rho, 0, seed, K.dense(C), dn, nodes, ptr, top, parent,
                                   size, n_topics, cache_k, compact_ok)
    m = out.shape[0]
    res = np.empty((m, 2), dtype=np.int64)
    for i in range(m):
        a = nodes[out[i, 0]]
        b = nodes[out[i, 1]]
        res[i, 0] = min(a, b)
        res[i, 1] = max(a, b)
    return res


def _check_rho(rho: float) -> float:
    try:
        rho = float(rho)
    except (TypeError, ValueError):
        raise ParameterError(f"rho must be a number >= 1, got {rho!r}", key="rho") from None
    if not 1.0 <= rho < float("inf"):
        raise ParameterError(f"rho must be >= 1 (LowODA's trade-off), got {rho}", key="rho")
    return rho


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
) -> np.ndarray:
    """Algorithm 1: the edges to add among ``shadow`` so every topic of ``topics`` is connected.

    The edges (and the one draw from ``rng``) are those of
    :func:`~hedgerow.protocols.tco.engine.tco_augment` with rule ``lowoda`` on
    the node subset ``shadow`` from every current link, restricted to
    ``topics``, with the overlay's degrees (``components="true"``), or from
    the links among ``shadow`` only (``"local"``).  The input is built for
    the shadow alone: its slots, and the components of each topic among them
    found by a search in ``G_t`` that stops once every member holding ``t`` is
    reached (:func:`_shadow_slots`), so the cost follows the event's topics
    and their subgraphs, not ``n``.

    Parameters
    ----------
    masks : numpy.ndarray
        ``(n, w)`` uint64 topic masks.
    adj, deg : numpy.ndarray
        Current overlay: ``adj[v, :deg[v]]`` are ``v``'s neighbours.
    shadow : numpy.ndarray
        ``S``, online nodes.
    topics : numpy.ndarray
        ``T_chev`` (a set: repeats count once).
    rng : numpy.random.Generator
        The tie rule's seed (one draw when ``S`` has two nodes and ``topics`` one topic).
    rho : float
        LowODA's trade-off (>= 1).
    components : {"true", "local"}
        Reading R-1 (module docstring).

    Returns
    -------
    numpy.ndarray
        ``(e, 2)`` int64 node pairs ``(min, max)`` in the order chosen (not yet added).
    """
    masks, topics = _as(masks, np.uint64), _as(topics, np.int64).ravel()
    adj, deg, shadow = _as(adj, np.int64), _as(deg, np.int64), _as(shadow, np.int64).ravel()
    status, n_t = _repair_status(masks.shape[0], masks.shape[1], shadow, topics)
    if status == 1:
        return _EMPTY.copy()
    rho = _check_rho(rho)
    if status == 2:
        raise ParameterError(f"shadow must lie in [0, {masks.shape[0]})", key="shadow")
    if status == 3:
        raise ParameterError(f"topics must lie in [0, {64 * masks.shape[1]})", key="topics")
    seed = _draw_seed(rng)
    mode = K.MODE_MAXC_MINDEG if rho == 1.0 else K.MODE_THRESHOLD
    local = components == "local"
    if n_t < _FUSED_TOPICS:  # int16 contributions: one compiled call
        return _repair_fused(masks, topics, adj, deg, shadow, local, mode, rho,
                             np.uint64(seed), _engine._CACHE_K, _engine._COMPACT)
    _, nodes, ptr, top, parent, size, n_rel, n_topics, dn = _repair_input(
        masks, topics, adj, deg, shadow, local)
    s = nodes.shape[0]
    if n_rel == 0 or s < 2:
        return _EMPTY.copy()
    C = np.zeros((s, s), dtype=np.int16 if n_rel < 32767 else np.int32)
    out, _ = _select(mode, rho, 0, seed, C, dn, nodes, ptr, top, parent, size, n_topics)
    res = nodes[out]
    res.sort(axis=1)
    return res


def _as(x, dtype) -> np.ndarray:
    """``x`` as a C-contiguous array of ``dtype`` (no copy when it already is one)."""
    if type(x) is np.ndarray and x.dtype == dtype and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype=dtype)


@njit(cache=True)
def holds_topics(masks, nodes, skip, topics, live):  # pragma: no cover - jitted
    """Whether ``nodes`` but ``skip`` hold every topic ``t`` of ``topics`` with ``live[t] > 1``.

    A join's check that its shadow still covers it: the topics of the
    joining node ``skip`` that another live node holds (``live``: live
    subscribers per topic, the node itself included).

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[3], [1], [2]], dtype=np.uint64)    # topics {0, 1}, {0}, {1}
    >>> live = np.array([3, 2])
    >>> bool(holds_topics(m, np.array([0, 1]), 0, np.array([0, 1]), live))
    False
    >>> bool(holds_topics(m, np.array([0, 1, 2]), 0, np.array([0, 1]), live))
    True
    """
    for t in topics:
        if live[t] - 1 <= 0:
            continue
        w = t >> 6
        b = np.uint64(t & 63)
        found = False
        for v in nodes:
            if v != skip and (masks[v, w] >> b) & np.uint64(1):
                found = True
                break
        if not found:
            return False
    return True


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
