"""numba kernel of the contended dissemination engine (see :mod:`hedgerow.dissemination.contended`).

All messages of a batch run as ONE discrete-event simulation, since they share
the nodes' uplinks and downlinks.  Events live in a growable 4-ary heap keyed
by ``(time, key)`` where the integer key packs ``(kind, id, message)``:

``kind`` 0 = CONTROL
    control message ``id`` joins its sender's uplink (at its send instant, or
    when the request it answers has been received).
``kind`` 1 = READY
    node ``id`` has message ``m`` and is ready to forward it (the publisher
    at the publication instant; any other node after its processing and
    validation delays): its copies join its uplink's FIFO queue.
``kind`` 2 = RECEIVED
    the copy sent along CSR entry ``id`` is fully received by its target.
``kind`` 3 = AT_DOWNLINK
    (download queues on) the copy along CSR entry ``id`` reaches the target's
    downlink and queues there; ``id >= nnz`` is control message ``id - nnz``.

At one instant CONTROL events come first (by control message), then READY,
then RECEIVED, then AT_DOWNLINK; within a kind by ``id`` (control message,
node, or CSR entry, control messages after every CSR entry), then by message.
Control messages occupy the uplinks and downlinks in the same FIFO queues as
the data copies, are never forwarded, lost or jittered, and their receipt
changes nothing but the counters (and sends the answer, if any).  With no
control message the events and their order are those of a batch of data alone.  With unlimited
bandwidth, no validation, loss, jitter and every message published at 0 this
is exactly the ``(arrival time, CSR entry)`` order of
:mod:`hedgerow.dissemination._kernels` (a READY at time ``t`` is handled before
any copy arriving at ``t``, as that kernel sends a node's copies the moment its
first copy is settled).

An uplink is FIFO, so the schedule of a copy is known when it is queued: it
starts when the uplink has finished every copy queued before it and occupies it
for ``size / rate``.  The kernel therefore schedules a node's copies of a
message at its READY event (one heap event per copy, none per uplink slot);
a pending event costs 16 bytes.  A copy sent to a node that already has the
message (without download queues) can only be a duplicate: it is counted at
once and never enters the heap.

Loss and jitter are counter-based: the uniform of copy ``(m, e)`` is
``splitmix64`` of ``key + (m * 2**32 + e) * 0x9E3779B97F4A7C15``, where ``key``
is drawn once from the caller's generator, so a copy's fate does not depend on
the order events are handled in.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.dissemination._kernels import POLICY_FLOOD, POLICY_TOPIC

POLICY_MESH = 3

CONTROL = 0
READY = 1
RECEIVED = 2
AT_DOWNLINK = 3

KIND_SHIFT = 61
ID_SHIFT = 30
#: messages per batch (the key's low bits)
MAX_MESSAGES = 1 << ID_SHIFT
#: nodes or CSR entries (the key's middle bits)
MAX_IDS = 1 << (KIND_SHIFT - ID_SHIFT)

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_ID_MASK = (1 << (KIND_SHIFT - ID_SHIFT)) - 1
_M_MASK = (1 << ID_SHIFT) - 1


@numba.njit(cache=True, inline="always")
def copy_uniform(key, m, e):
    """The uniform in ``[0, 1)`` of the copy of message ``m`` along CSR entry ``e``."""
    x = key + ((np.uint64(m) << _S32) | np.uint64(e)) * _GAMMA
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    x = x ^ (x >> _S31)
    return np.float64(x >> _S11) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, inline="always")
def _below(ta, ka, tb, kb):
    return ta < tb or (ta == tb and ka < kb)


@numba.njit(cache=True)
def _push(h_t, h_k, size, t, k):
    """Insert ``(t, k)`` in a 4-ary heap of ``size`` slots (capacity checked by the caller)."""
    i = size
    while i > 0:
        par = (i - 1) >> 2
        if _below(t, k, h_t[par], h_k[par]):
            h_t[i] = h_t[par]
            h_k[i] = h_k[par]
            i = par
        else:
            break
    h_t[i] = t
    h_k[i] = k


@numba.njit(cache=True)
def _pop_fix(h_t, h_k, size):
    """Remove the root of a heap that now has ``size`` slots (the last one moves down)."""
    if size == 0:
        return
    t = h_t[size]
    k = h_k[size]
    i = 0
    while True:
        c = 4 * i + 1
        if c >= size:
            break
        best = c
        bt = h_t[c]
        bk = h_k[c]
        last = min(c + 4, size)
        for j in range(c + 1, last):
            if _below(h_t[j], h_k[j], bt, bk):
                best = j
                bt = h_t[j]
                bk = h_k[j]
        if _below(bt, bk, t, k):
            h_t[i] = bt
            h_k[i] = bk
            i = best
        else:
            break
    h_t[i] = t
    h_k[i] = k


@numba.njit(cache=True, inline="always")
def _interested(masks, w, topic):
    return ((masks[w, topic >> 6] >> np.uint64(topic & 63)) & np.uint64(1)) != 0


@numba.njit(cache=True, inline="always")
def _serves(lab_ptr, lab_topics, e, topic):
    for j in range(lab_ptr[e], lab_ptr[e + 1]):
        lt = lab_topics[j]
        if lt == -1 or lt == topic:
            return True
    return False


@numba.njit(cache=True)
def _grown(h_t, h_k, size_h, need):
    """The heap's arrays with room for ``need`` slots (the same arrays when they have it)."""
    cap = len(h_t)
    if need <= cap:
        return h_t, h_k
    while cap < need:
        cap *= 2
    nt = np.empty(cap, dtype=np.float64)
    nk = np.empty(cap, dtype=np.int64)
    nt[:size_h] = h_t[:size_h]
    nk[:size_h] = h_k[:size_h]
    return nt, nk


@numba.njit(cache=True)
def simulate(graph, msgs, net, policy, record, out, ctrl):
    """Run the batch; fills ``out`` in place and returns ``(first event time, last event time)``.

    ``graph`` = ``(indptr, indices, row_of, edge_delay, proc_delay, masks,
    lab_ptr, lab_topics)``; ``msgs`` = ``(publisher, topic, ttl, published,
    size)``; ``net`` = ``(up_rate, down_rate, down_queues, val_ms,
    val_ms_per_byte, loss, loss_key, jitter_ms, jitter_key)`` (rates in bytes
    per ms, ``inf`` = unlimited); ``out`` = ``(arrival, hops, parent,
    node_ttl, queue_delay, edge_recv, copies, relay, dups, lost, queue_wait,
    sent_bytes, recv_bytes, dup_bytes, up_busy)``.  ``arrival`` and
    ``edge_recv`` come back in absolute time.  ``ctrl`` = ``(sender, receiver,
    at, nbytes, delay, answer, first, ctrl_sent, ctrl_recv)``: the control
    messages (``first[c]``: sent at the instant ``at[c]``; otherwise ``at[c]``
    ms after the message it answers is received; ``answer[c]`` the message
    sent in answer to ``c``, ``-1`` none) and their per-node byte counters.
    """
    indptr, indices, row_of, edge_delay, proc_delay, masks, lab_ptr, lab_topics = graph
    publisher, topic, ttl0, published, size = msgs
    up_rate, down_rate, down_queues, val_ms, val_per_byte, loss, loss_key, jit_ms, jit_key = net
    (arrival, hops, parent, node_ttl, qdelay, edge_recv, copies, relay, dups, lost, qwait,
     sent_b, recv_b, dup_b, busy) = out
    c_sender, c_receiver, c_at, c_bytes, c_delay, c_answer, c_first, c_sent, c_recv = ctrl
    n = len(indptr) - 1
    nnz = len(indices)
    n_msg = len(publisher)
    n_ctrl = len(c_sender)
    up_free = np.full(n, -np.inf)
    down_free = np.full(n, -np.inf)
    cap = max(16, 2 * n_msg + n_ctrl)
    h_t = np.empty(cap, dtype=np.float64)
    h_k = np.empty(cap, dtype=np.int64)
    size_h = 0
    arrival[:, :] = np.inf
    hops[:, :] = -1
    parent[:, :] = -1
    qdelay[:, :] = 0.0
    if record:
        edge_recv[:, :] = np.inf
    t_first = np.inf
    t_last = -np.inf
    for m in range(n_msg):
        p = publisher[m]
        arrival[m, p] = published[m]
        hops[m, p] = 0
        node_ttl[m, p] = ttl0[m]
        _push(h_t, h_k, size_h, published[m],
              (np.int64(READY) << KIND_SHIFT) | (np.int64(p) << ID_SHIFT) | m)
        size_h += 1
        t_first = min(t_first, published[m])
    for c in range(n_ctrl):
        if c_first[c]:
            _push(h_t, h_k, size_h, c_at[c], np.int64(c) << ID_SHIFT)
            size_h += 1
            t_first = min(t_first, c_at[c])
    arr_kind = AT_DOWNLINK if down_queues else RECEIVED
    while size_h > 0:
        t = h_t[0]
        k = h_k[0]
        size_h -= 1
        _pop_fix(h_t, h_k, size_h)
        if t > t_last:
            t_last = t
        kind = k >> KIND_SHIFT
        ident = (k >> ID_SHIFT) & _ID_MASK
        m = k & _M_MASK
        if kind == CONTROL or (kind == AT_DOWNLINK and ident >= nnz):
            # a control message: on the sender's uplink (CONTROL), or on the
            # receiver's downlink; received once it is off the last queue
            c = ident if kind == CONTROL else ident - nnz
            if kind == CONTROL:
                v = c_sender[c]
                tx = c_bytes[c] / up_rate[v]
                start = t if t > up_free[v] else up_free[v]
                fin = start + tx
                up_free[v] = fin
                c_sent[v] += c_bytes[c]
                busy[v] += tx
                done = fin + c_delay[c]
                if fin > t_last:
                    t_last = fin
                if down_queues:
                    h_t, h_k = _grown(h_t, h_k, size_h, size_h + 1)
                    cap = len(h_t)
                    _push(h_t, h_k, size_h, done, (np.int64(AT_DOWNLINK) << KIND_SHIFT)
                          | (np.int64(nnz + c) << ID_SHIFT))
                    size_h += 1
                    continue
            else:
                w = c_receiver[c]
                start = t if t > down_free[w] else down_free[w]
                done = start + c_bytes[c] / down_rate[w]
                down_free[w] = done
            c_recv[c_receiver[c]] += c_bytes[c]
            if done > t_last:
                t_last = done
            a = c_answer[c]
            if a >= 0:
                h_t, h_k = _grown(h_t, h_k, size_h, size_h + 1)
                cap = len(h_t)
                _push(h_t, h_k, size_h, done + c_at[a], np.int64(a) << ID_SHIFT)
                size_h += 1
            continue
        s_m = size[m]
        tp = topic[m]
        if kind == READY:
            v = ident
            tv = node_ttl[m, v]
            only_int = policy == POLICY_TOPIC
            if policy != POLICY_FLOOD and policy != POLICY_TOPIC and policy != POLICY_MESH:
                if tv < 0:
                    continue
                only_int = tv == 0
            tx = s_m / up_rate[v]
            p = parent[m, v]
            free = up_free[v]
            lo = indptr[v]
            hi = indptr[v + 1]
            need = size_h + (hi - lo)
            if need > cap:
                h_t, h_k = _grown(h_t, h_k, size_h, need)
                cap = len(h_t)
            for e in range(lo, hi):
                w = indices[e]
                if w == p:
                    continue
                w_int = _interested(masks, w, tp)
                if only_int and not w_int:
                    continue
                if policy == POLICY_MESH and not _serves(lab_ptr, lab_topics, e, tp):
                    continue
                start = t if t > free else free
                fin = start + tx
                free = fin
                copies[m] += 1
                if not w_int:
                    relay[m] += 1
                sent_b[v] += s_m
                busy[v] += tx
                qwait[m] += start - t
                if loss > 0.0 and copy_uniform(loss_key, m, e) < loss:
                    lost[m] += 1
                    continue
                ta = fin + edge_delay[e]
                if jit_ms > 0.0:
                    ta += jit_ms * copy_uniform(jit_key, m, e)
                if not down_queues and arrival[m, w] != np.inf:
                    # w already has m, so this copy is a duplicate whenever it
                    # arrives (at ta >= t) and nothing else depends on it: count
                    # it now instead of queueing an event
                    recv_b[w] += s_m
                    dups[m] += 1
                    dup_b[w] += s_m
                    if record:
                        edge_recv[m, e] = ta
                    if ta > t_last:
                        t_last = ta
                    continue
                _push(h_t, h_k, size_h, ta,
                      (np.int64(arr_kind) << KIND_SHIFT) | (np.int64(e) << ID_SHIFT) | m)
                size_h += 1
            up_free[v] = free
            if free > t_last:
                t_last = free
        elif kind == AT_DOWNLINK:
            e = ident
            w = indices[e]
            txd = s_m / down_rate[w]
            start = t if t > down_free[w] else down_free[w]
            fin = start + txd
            down_free[w] = fin
            qwait[m] += start - t
            if size_h >= cap:
                h_t, h_k = _grown(h_t, h_k, size_h, size_h + 1)
                cap = len(h_t)
            _push(h_t, h_k, size_h, fin,
                  (np.int64(RECEIVED) << KIND_SHIFT) | (np.int64(e) << ID_SHIFT) | m)
            size_h += 1
        else:  # RECEIVED
            e = ident
            v = row_of[e]
            w = indices[e]
            recv_b[w] += s_m
            if record:
                edge_recv[m, e] = t
            if arrival[m, w] != np.inf:
                dups[m] += 1
                dup_b[w] += s_m
                continue
            arrival[m, w] = t
            parent[m, w] = v
            hops[m, w] = hops[m, v] + 1
            tv = node_ttl[m, v]
            w_int = _interested(masks, w, tp)
            node_ttl[m, w] = tv if w_int else tv - 1
            # time queueing on the way: this hop's share of the delay beyond
            # transmission, latency and jitter
            ready_v = published[m] if v == publisher[m] else (
                arrival[m, v] + proc_delay[v]) + (val_ms + val_per_byte * s_m)
            base = s_m / up_rate[v] + edge_delay[e]
            if jit_ms > 0.0:
                base += jit_ms * copy_uniform(jit_key, m, e)
            if down_queues:
                base += s_m / down_rate[w]
            wait = (t - ready_v) - base
            qdelay[m, w] = qdelay[m, v] + (wait if wait > 0.0 else 0.0)
            ready = (t + proc_delay[w]) + (val_ms + val_per_byte * s_m)
            if size_h >= cap:
                h_t, h_k = _grown(h_t, h_k, size_h, size_h + 1)
                cap = len(h_t)
            _push(h_t, h_k, size_h, ready,
                  (np.int64(READY) << KIND_SHIFT) | (np.int64(w) << ID_SHIFT) | m)
            size_h += 1
    return t_first, t_last
