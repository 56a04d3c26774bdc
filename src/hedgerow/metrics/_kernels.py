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
def topic_component_counts(indptr, indices, t_indptr, t_nodes, masks, n_nodes):
    """Connected components of each topic-induced subgraph (union-find)."""
    n_topics = len(t_indptr) - 1
    out = np.zeros(n_topics, dtype=np.int64)
    parent = np.arange(n_nodes)
    for t in range(n_topics):
        a, b = t_indptr[t], t_indptr[t + 1]
        for i in range(a, b):
            parent[t_nodes[i]] = t_nodes[i]
        comps = b - a
        for i in range(a, b):
            u = t_nodes[i]
            for j in range(indptr[u], indptr[u + 1]):
                v = indices[j]
                if has_topic(masks, v, t):
                    ru = _find(parent, u)
                    rv = _find(parent, v)
                    if ru != rv:
                        parent[ru] = rv
                        comps -= 1
        out[t] = comps
    return out


@numba.njit(cache=True, parallel=True)
def topic_diameter_kernel(indptr, indices, t_indptr, t_nodes, masks, n_nodes):
    """Hop diameter of each topic-induced subgraph (max finite eccentricity).

    All-source BFS restricted to the topic's subscribers; topics run in parallel.
    """
    n_topics = len(t_indptr) - 1
    out = np.zeros(n_topics, dtype=np.int64)
    for t in numba.prange(n_topics):
        a, b = t_indptr[t], t_indptr[t + 1]
        dist = np.full(n_nodes, -1, dtype=np.int32)
        queue = np.empty(b - a, dtype=np.int32)
        best = 0
        for s in range(a, b):
            src = t_nodes[s]
            # reset only the nodes touched by the previous BFS
            for i in range(a, b):
                dist[t_nodes[i]] = -1
            dist[src] = 0
            head = 0
            tail = 1
            queue[0] = src
            while head < tail:
                u = queue[head]
                head += 1
                du = dist[u]
                for j in range(indptr[u], indptr[u + 1]):
                    v = indices[j]
                    if dist[v] < 0 and has_topic(masks, v, t):
                        dist[v] = du + 1
                        if du + 1 > best:
                            best = du + 1
                        queue[tail] = v
                        tail += 1
        out[t] = best
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
