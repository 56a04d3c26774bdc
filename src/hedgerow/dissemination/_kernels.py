"""numba kernels of the dissemination engine (see :mod:`hedgerow.dissemination.engine`).

One message is a label-setting (Dijkstra-like) propagation over the CSR
adjacency with an indexed 4-ary heap keyed by ``(arrival time, CSR entry of
the copy)``; the lexicographic key makes "the first copy" unique and matches
an event loop that processes copy arrivals in ``(time, entry)`` order.  A
batch runs its messages in parallel (``prange``); every message owns its
scratch arrays, so no state is shared between threads.
"""

from __future__ import annotations

import numba
import numpy as np

POLICY_TTL = 0
POLICY_FLOOD = 1
POLICY_TOPIC = 2


@numba.njit(cache=True, inline="always")
def _below(ta, ea, tb, eb):
    """Whether key ``(ta, ea)`` is lexicographically below ``(tb, eb)``."""
    return ta < tb or (ta == tb and ea < eb)


@numba.njit(cache=True, inline="always")
def _put(h_t, h_e, h_v, pos, i, t, e, v):
    """Store key ``(t, e)`` and node ``v`` in heap slot ``i``; record the slot of ``v``."""
    h_t[i] = t
    h_e[i] = e
    h_v[i] = v
    pos[v] = i


@numba.njit(cache=True, inline="always")
def _sift_up(h_t, h_e, h_v, pos, i):
    """Move slot ``i`` up; keys live in the heap arrays (no indirection)."""
    t = h_t[i]
    e = h_e[i]
    v = h_v[i]
    while i > 0:
        par = (i - 1) >> 2
        if _below(t, e, h_t[par], h_e[par]):
            _put(h_t, h_e, h_v, pos, i, h_t[par], h_e[par], h_v[par])
            i = par
        else:
            break
    _put(h_t, h_e, h_v, pos, i, t, e, v)


@numba.njit(cache=True, inline="always")
def _sift_down(h_t, h_e, h_v, pos, i, size):
    """Move slot ``i`` down a 4-ary heap of ``size`` slots."""
    t = h_t[i]
    e = h_e[i]
    v = h_v[i]
    while True:
        c = 4 * i + 1
        if c >= size:
            break
        best = c
        bt = h_t[c]
        be = h_e[c]
        last = min(c + 4, size)
        for k in range(c + 1, last):
            if _below(h_t[k], h_e[k], bt, be):
                best = k
                bt = h_t[k]
                be = h_e[k]
        if _below(bt, be, t, e):
            _put(h_t, h_e, h_v, pos, i, bt, be, h_v[best])
            i = best
        else:
            break
    _put(h_t, h_e, h_v, pos, i, t, e, v)


@numba.njit(cache=True)
def propagate_one(
    indptr,
    indices,
    edge_delay,
    proc_delay,
    masks,
    src,
    topic,
    ttl0,
    policy,
    arrival,
    hops,
    parent,
    edge_recv,
    record,
    si,
    flags,
    h_t,
):
    """Propagate one message; fills the row views ``arrival``/``hops``/``parent``/``edge_recv``.

    Returns ``(copies, relay_copies, duplicates)``.  Scratch arrays:
    ``si`` int32 ``(5, N)`` (rows: key entry of the best copy, TTL, heap
    entry keys, heap nodes, heap slot of each node), ``flags`` int8 ``(N,)``
    (bits 0-1: 0 unseen / 1 queued / 2 settled; bit 2: interested in the
    topic), ``h_t`` float64 ``(N,)`` heap times.
    """
    n = len(indptr) - 1
    key_e = si[0]
    node_ttl = si[1]
    h_e = si[2]
    h_v = si[3]
    pos = si[4]
    word = topic >> 6
    bit = np.uint64(topic & 63)
    for v in range(n):
        arrival[v] = np.inf
        hops[v] = -1
        parent[v] = -1
        flags[v] = np.int8(((masks[v, word] >> bit) & np.uint64(1)) << np.uint64(2))
    if record:
        for e in range(len(edge_recv)):
            edge_recv[e] = np.inf
    arrival[src] = 0.0
    hops[src] = 0
    key_e[src] = -1
    node_ttl[src] = ttl0
    h_t[0] = 0.0
    h_e[0] = -1
    h_v[0] = src
    pos[src] = 0
    flags[src] |= 1
    size = 1
    copies = 0
    relay = 0
    reached = 0
    while size > 0:
        v = h_v[0]
        size -= 1
        if size > 0:
            h_t[0] = h_t[size]
            h_e[0] = h_e[size]
            h_v[0] = h_v[size]
            _sift_down(h_t, h_e, h_v, pos, 0, size)
        flags[v] = (flags[v] & 4) | 2
        reached += 1
        # what v forwards, and to whom
        tv = node_ttl[v]
        if policy == POLICY_FLOOD:
            only_interested = False
        elif policy == POLICY_TOPIC:
            only_interested = True
        else:
            if tv < 0:
                continue  # unreachable under the paper's rule; kept as "expired"
            only_interested = tv == 0
        send = 0.0 if v == src else arrival[v] + proc_delay[v]
        p = parent[v]
        hv = hops[v] + 1
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if w == p:
                continue
            fw = flags[w]
            w_int = fw >= 4
            if only_interested and not w_int:
                continue
            ta = send + edge_delay[e]
            copies += 1
            if not w_int:
                relay += 1
            if record:
                edge_recv[e] = ta
            sw = fw & 3
            if sw == 2:
                continue
            if sw == 0 or ta < arrival[w] or (ta == arrival[w] and e < key_e[w]):
                arrival[w] = ta
                key_e[w] = e
                parent[w] = v
                hops[w] = hv
                node_ttl[w] = tv if w_int else tv - 1
                if sw == 0:
                    flags[w] = fw | 1
                    i = size
                    size += 1
                else:
                    i = pos[w]
                h_t[i] = ta
                h_e[i] = e
                h_v[i] = w
                _sift_up(h_t, h_e, h_v, pos, i)
    return copies, relay, copies - (reached - 1)


@numba.njit(cache=True)
def _one_of_batch(m, graph, batch, policy, record, out):
    """Message ``m`` of a batch, on scratch arrays of its own.

    ``graph`` is ``(indptr, indices, edge_delay, proc_delay, masks)``,
    ``batch`` ``(publisher, topic, ttl)`` and ``out`` ``(arrival, hops,
    parent, edge_recv, copies, relay, dups)``: the arguments travel as three
    tuples so the serial and the parallel loop share one call.  It is a real
    call, not ``inline="always"``: inlined into the ``prange`` loop, the
    writes through the unpacked ``out`` arrays were lost (numba 0.68; the
    parallel-path test in ``tests/dissemination`` catches it).
    """
    indptr, indices, edge_delay, proc_delay, masks = graph
    publisher, topic, ttl = batch
    arrival, hops, parent, edge_recv, copies, relay, dups = out
    n = len(indptr) - 1
    si = np.empty((5, n), dtype=np.int32)
    flags = np.empty(n, dtype=np.int8)
    h_t = np.empty(n, dtype=np.float64)
    er = edge_recv[m] if record else edge_recv[0]
    c, r, d = propagate_one(
        indptr,
        indices,
        edge_delay,
        proc_delay,
        masks,
        publisher[m],
        topic[m],
        ttl[m],
        policy,
        arrival[m],
        hops[m],
        parent[m],
        er,
        record,
        si,
        flags,
        h_t,
    )
    copies[m] = c
    relay[m] = r
    dups[m] = d


@numba.njit(cache=True, parallel=True)
def propagate_batch(graph, batch, policy, record, out):
    """Propagate every message of a batch (messages run in parallel).

    ``graph``, ``batch`` and ``out`` are the tuples of :func:`_one_of_batch`.
    """
    for m in numba.prange(len(batch[0])):
        _one_of_batch(m, graph, batch, policy, record, out)


@numba.njit(cache=True)
def propagate_batch_serial(graph, batch, policy, record, out):
    """Same as :func:`propagate_batch` on one thread (no launch overhead for small batches)."""
    for m in range(len(batch[0])):
        _one_of_batch(m, graph, batch, policy, record, out)
