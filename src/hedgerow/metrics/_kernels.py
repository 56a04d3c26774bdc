"""numba kernels shared by the metric functions (CSR overlays, bit-packed topics)."""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.model.bitset import popcount64


def topic_kernel_args(overlay, instance) -> tuple:
    """The arrays the per-topic kernels take: undirected CSR, topic CSC, masks, ``n``."""
    a = overlay.undirected_csr()
    return (
        a.indptr.astype(np.int64),
        a.indices.astype(np.int32),
        instance.topic_indptr,
        instance.topic_nodes,
        instance.masks,
        instance.n_nodes,
    )


@numba.njit(cache=True, inline="always")
def has_topic(masks: np.ndarray, v: int, t: int) -> bool:
    return (masks[v, t >> 6] >> np.uint64(t & 63)) & np.uint64(1) != np.uint64(0)


@numba.njit(cache=True)
def _find(parent: np.ndarray, x: int) -> int:
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@numba.njit(cache=True)
def _union_topic(indptr, indices, t_nodes, masks, parent, t, a, b):  # pragma: no cover
    """Union-find over ``G_t`` (subscribers ``t_nodes[a:b]``); returns the number of merges."""
    for i in range(a, b):
        parent[t_nodes[i]] = t_nodes[i]
    merges = 0
    for i in range(a, b):
        u = t_nodes[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if has_topic(masks, v, t):
                ru = _find(parent, u)
                rv = _find(parent, v)
                if ru != rv:
                    parent[ru] = rv
                    merges += 1
    return merges


@numba.njit(cache=True)
def topic_component_counts(indptr, indices, t_indptr, t_nodes, masks, n_nodes):
    """Connected components of each topic-induced subgraph (union-find)."""
    n_topics = len(t_indptr) - 1
    out = np.zeros(n_topics, dtype=np.int64)
    parent = np.arange(n_nodes)
    for t in range(n_topics):
        a, b = t_indptr[t], t_indptr[t + 1]
        out[t] = (b - a) - _union_topic(indptr, indices, t_nodes, masks, parent, t, a, b)
    return out


@numba.njit(cache=True)
def measured_component_counts(indptr, indices, t_indptr, t_nodes, masks, n_nodes, measured):
    """Per topic, the components of ``G_t`` that hold at least one ``measured`` subscriber.

    ``G_t`` is induced by *all* subscribers of ``t``; only the count is restricted.
    Topics without a measured subscriber give 0.
    """
    n_topics = len(t_indptr) - 1
    out = np.zeros(n_topics, dtype=np.int64)
    parent = np.arange(n_nodes)
    seen = np.full(n_nodes, -1, dtype=np.int64)
    for t in range(n_topics):
        a, b = t_indptr[t], t_indptr[t + 1]
        _union_topic(indptr, indices, t_nodes, masks, parent, t, a, b)
        comps = 0
        for i in range(a, b):
            u = t_nodes[i]
            if measured[u]:
                r = _find(parent, u)
                if seen[r] != t:
                    seen[r] = t
                    comps += 1
        out[t] = comps
    return out


@numba.njit(cache=True)
def _bfs(lptr, lidx, src, dist, queue):
    """BFS on a local CSR from ``src``; ``dist`` must be -1 on the component.

    Returns ``(eccentricity of src, number of nodes reached)``; ``queue[:n]``
    holds the reached nodes.
    """
    dist[src] = 0
    queue[0] = src
    head, tail, far = 0, 1, 0
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u]
        for j in range(lptr[u], lptr[u + 1]):
            v = lidx[j]
            if dist[v] < 0:
                dist[v] = du + 1
                far = du + 1
                queue[tail] = v
                tail += 1
    return far, tail


@numba.njit(cache=True)
def _component_diameter(lptr, lidx, members, dist, queue, lo, hi, done):
    """Exact diameter of one connected component by eccentricity bounds.

    The BoundingDiameters scheme (Takes and Kosters, 2011): after a BFS from
    ``v``, every node ``w`` has ``max(d(v,w), ecc(v) - d(v,w)) <= ecc(w) <=
    ecc(v) + d(v,w)``.  BFS runs alternately from the node with the largest
    upper bound and the one with the smallest lower bound, until the largest
    lower bound equals the largest upper bound: that value is the diameter.
    Typically a handful of BFS instead of one per node.
    """
    m = len(members)
    if m <= 1:
        return 0
    for i in range(m):
        lo[members[i]] = 0
        hi[members[i]] = 1 << 30
        done[members[i]] = False
    dl = 0
    pick_high = True
    while True:
        du = 0
        v = -1
        best_hi = -1
        best_lo = 1 << 30
        vh = -1
        vl = -1
        for i in range(m):
            w = members[i]
            if hi[w] > du:
                du = hi[w]
            if done[w] or hi[w] <= dl:
                continue
            if hi[w] > best_hi:
                best_hi = hi[w]
                vh = w
            if lo[w] < best_lo:
                best_lo = lo[w]
                vl = w
        if dl >= du or vh < 0:
            return dl
        v = vh if pick_high or vl < 0 else vl
        pick_high = not pick_high
        for i in range(m):
            dist[members[i]] = -1
        ecc, _ = _bfs(lptr, lidx, v, dist, queue)
        done[v] = True
        for i in range(m):
            w = members[i]
            d = dist[w]
            low = d if d > ecc - d else ecc - d
            if low > lo[w]:
                lo[w] = low
            if ecc + d < hi[w]:
                hi[w] = ecc + d
            if lo[w] > dl:
                dl = lo[w]


@numba.njit(cache=True, parallel=True)
def topic_diameter_kernel(indptr, indices, t_indptr, t_nodes, masks, n_nodes):
    """Hop diameter of each topic-induced subgraph (max finite eccentricity).

    Per topic: a local CSR of the subgraph, its connected components, and the
    exact diameter of each by eccentricity bounds; topics run in parallel.
    """
    n_topics = len(t_indptr) - 1
    out = np.zeros(n_topics, dtype=np.int64)
    for t in numba.prange(n_topics):
        a, b = t_indptr[t], t_indptr[t + 1]
        m = b - a
        if m <= 1:
            continue
        local = np.full(n_nodes, -1, dtype=np.int64)
        for i in range(m):
            local[t_nodes[a + i]] = i
        lptr = np.zeros(m + 1, dtype=np.int64)
        for i in range(m):
            u = t_nodes[a + i]
            c = 0
            for j in range(indptr[u], indptr[u + 1]):
                if local[indices[j]] >= 0:
                    c += 1
            lptr[i + 1] = lptr[i] + c
        lidx = np.empty(lptr[m], dtype=np.int64)
        for i in range(m):
            u = t_nodes[a + i]
            k = lptr[i]
            for j in range(indptr[u], indptr[u + 1]):
                lv = local[indices[j]]
                if lv >= 0:
                    lidx[k] = lv
                    k += 1
        dist = np.full(m, -1, dtype=np.int64)
        seen = np.zeros(m, dtype=np.bool_)
        queue = np.empty(m, dtype=np.int64)
        lo = np.zeros(m, dtype=np.int64)
        hi = np.zeros(m, dtype=np.int64)
        done = np.zeros(m, dtype=np.bool_)
        best = 0
        for s in range(m):
            if seen[s]:
                continue
            _, count = _bfs(lptr, lidx, s, dist, queue)
            members = queue[:count].copy()
            for i in range(count):
                seen[members[i]] = True
            d = _component_diameter(lptr, lidx, members, dist, queue, lo, hi, done)
            if d > best:
                best = d
        out[t] = best
    return out


@numba.njit(cache=True)
def _bfs_reset(indptr, indices, src, dist, queue, last):
    """:func:`_bfs` from ``src`` after clearing the previous BFS.

    ``queue[:last]`` are the nodes the previous BFS reached (their ``dist`` is
    reset to -1 first).  Returns the number of nodes reached.
    """
    for i in range(last):
        dist[queue[i]] = -1
    _, reached = _bfs(indptr, indices, src, dist, queue)
    return reached


@numba.njit(cache=True, parallel=True)
def topic_overlay_diameter_kernel(indptr, indices, sub_indptr, masks, n_topics):
    """Largest overlay hop distance between two subscribers of each topic.

    Distances are in the whole overlay (paths may pass through non-subscribers).
    One BFS per node ``u``; the BFS queue is in nondecreasing distance, so
    scanning it from the back finds, for each topic of ``u``, the farthest
    subscriber first — the scan stops once every topic of ``u`` is found
    (usually within the last BFS layer).  Sources run in parallel blocks.
    """
    n = len(indptr) - 1
    w = masks.shape[1]
    blocks = min(n, 64)
    part = np.zeros((blocks, n_topics), dtype=np.int64)
    for blk in numba.prange(blocks):
        dist = np.full(n, -1, dtype=np.int64)
        queue = np.empty(n, dtype=np.int64)
        todo = np.empty(w, dtype=np.uint64)
        last = 0
        for u in range(blk, n, blocks):
            if sub_indptr[u + 1] == sub_indptr[u]:
                continue
            last = _bfs_reset(indptr, indices, u, dist, queue, last)
            left = 0
            for k in range(w):
                todo[k] = masks[u, k]
                left += popcount64(todo[k])
            i = last - 1
            while i > 0 and left > 0:
                v = queue[i]
                i -= 1
                for k in range(w):
                    common = todo[k] & masks[v, k]
                    while common != np.uint64(0):
                        low = common & (~common + np.uint64(1))
                        t = k * 64 + popcount64(low - np.uint64(1))  # index of the set bit
                        if dist[v] > part[blk, t]:
                            part[blk, t] = dist[v]
                        todo[k] &= ~low
                        common &= ~low
                        left -= 1
    out = np.zeros(n_topics, dtype=np.int64)
    for blk in range(blocks):
        for t in range(n_topics):
            if part[blk, t] > out[t]:
                out[t] = part[blk, t]
    return out


@numba.njit(cache=True, parallel=True)
def tdi_kernel(masks, sizes, d):
    """Per-node average of the top-``d`` pairwise intersection percentages."""
    n = masks.shape[0]
    w = masks.shape[1]
    out = np.zeros(n, dtype=np.float64)
    for u in numba.prange(n):
        vals = np.empty(n - 1, dtype=np.float64)
        k = 0
        for v in range(n):
            if v == u:
                continue
            c = 0
            for i in range(w):
                c += popcount64(masks[u, i] & masks[v, i])
            m = min(sizes[u], sizes[v])
            vals[k] = 100.0 * c / m if m > 0 else 0.0
            k += 1
        dd = min(d, n - 1)
        if dd <= 0:
            continue
        part = np.sort(vals)[::-1][:dd]
        out[u] = part.mean()
    return out
