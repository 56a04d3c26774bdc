"""A plain-Python, event-by-event simulator of the contended network model.

Written from the model in ``docs/network.md`` without the kernel's code: a
``heapq`` of ``(time, kind, id, message)`` events, and uplinks as explicit FIFO
queues of copies that a node drains one copy at a time (an UPLINK event when a
copy has left), where the kernel schedules a whole message's copies at once.
Control messages join the same queues (a CONTROL event at their send instant, or
when the request they answer has been received), leave one at a time with the
data copies, and are received by a CONTROL_RECEIVED event.  Both must give the
same times.  Only the per-copy uniform (loss, jitter) is a
shared *definition* (splitmix64 of the copy's counter), re-implemented here
with Python integers.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

MASK = (1 << 64) - 1
READY, RECEIVED, AT_DOWNLINK = 0, 1, 2
UPLINK = -1  # bookkeeping event of this reference only: a node's uplink is free
CONTROL_RECEIVED = -0.75  # a control message is off its last queue (answers are sent now)
CONTROL = -0.5  # a control message joins its sender's uplink, ahead of data ready at once


def uniform(key: int, m: int, e: int) -> float:
    """splitmix64 of ``key + (m * 2**32 + e) * golden``, as a float in [0, 1)."""
    x = (key + ((m << 32) | e) * 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    x ^= x >> 31
    return (x >> 11) * (1.0 / 9007199254740992.0)


def likes(masks, node: int, topic: int) -> bool:
    return bool((int(masks[node, topic >> 6]) >> (topic & 63)) & 1)


def simulate(
    indptr, indices, edge_delay, proc_delay, masks, publisher, topic, ttl, published, size,
    up_mbps, down_mbps, *, down_queues, val_ms, val_per_byte, loss, loss_key, jitter, jitter_key,
    policy, labels=None, control=None,
):
    """Every message of the batch together.  Returns a dict of plain-Python results.

    ``labels`` (mesh) is a list, per CSR entry, of the topics it serves (-1 = all).
    ``control`` is ``(sender, receiver, at, nbytes, delay, answers)`` lists: a
    message with ``answers[c] = r >= 0`` is sent ``at[c]`` ms after ``r`` is received.
    """
    n = len(indptr) - 1
    nnz = len(indices)
    n_msg = len(publisher)
    sender = [0] * nnz
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            sender[e] = v
    up = [float(b) * 125.0 for b in up_mbps]
    down = [float(b) * 125.0 for b in down_mbps]
    inf = float("inf")
    arrival = [[inf] * n for _ in range(n_msg)]
    hops = [[-1] * n for _ in range(n_msg)]
    parent = [[-1] * n for _ in range(n_msg)]
    ttl_of = [[0] * n for _ in range(n_msg)]
    qdelay = [[0.0] * n for _ in range(n_msg)]
    edge_recv = [[inf] * nnz for _ in range(n_msg)]
    res = {
        "copies": [0] * n_msg, "relay": [0] * n_msg, "dups": [0] * n_msg, "lost": [0] * n_msg,
        "qwait": [0.0] * n_msg, "sent": [0.0] * n, "recv": [0.0] * n, "dupb": [0.0] * n,
        "busy": [0.0] * n, "csent": [0.0] * n, "crecv": [0.0] * n,
    }
    c_snd, c_rcv, c_at, c_bytes, c_delay, c_ans = control or ([], [], [], [], [], [])
    reply_of = {r: c for c, r in enumerate(c_ans) if r >= 0}
    queue = [deque() for _ in range(n)]  # (message, entry, queued at)
    busy_until = [-inf] * n
    down_free = [-inf] * n
    events = []
    for m in range(n_msg):
        p = int(publisher[m])
        arrival[m][p] = float(published[m])
        hops[m][p] = 0
        ttl_of[m][p] = int(ttl[m])
        heapq.heappush(events, (float(published[m]), READY, p, m))
    for c in range(len(c_snd)):
        if c_ans[c] < 0:
            heapq.heappush(events, (float(c_at[c]), CONTROL, c, -1))

    def send_next(v: int, now: float) -> None:
        """Start the copy at the head of ``v``'s queue, if the uplink is free."""
        while queue[v] and busy_until[v] <= now:
            m, e, queued = queue[v].popleft()
            if m == "control":
                c = e
                start = max(queued, busy_until[v])
                tx = float(c_bytes[c]) / up[v]
                done = start + tx
                busy_until[v] = done
                res["csent"][v] += float(c_bytes[c])
                res["busy"][v] += tx
                at = done + float(c_delay[c])
                if down_queues:
                    heapq.heappush(events, (at, AT_DOWNLINK, nnz + c, -1))
                else:
                    heapq.heappush(events, (at, CONTROL_RECEIVED, c, -1))
                if done > now:
                    heapq.heappush(events, (done, UPLINK, v, -1))
                    return
                continue
            s = float(size[m])
            start = max(queued, busy_until[v])
            tx = s / up[v]
            done = start + tx
            busy_until[v] = done
            res["copies"][m] += 1
            w = int(indices[e])
            if not likes(masks, w, int(topic[m])):
                res["relay"][m] += 1
            res["sent"][v] += s
            res["busy"][v] += tx
            res["qwait"][m] += start - queued
            if loss > 0 and uniform(loss_key, m, e) < loss:
                res["lost"][m] += 1
            else:
                jit = jitter * uniform(jitter_key, m, e) if jitter > 0 else 0.0
                at = done + float(edge_delay[e])
                if jitter > 0:
                    at += jit
                kind = AT_DOWNLINK if down_queues else RECEIVED
                payload = (start - queued, tx, jit)
                heapq.heappush(events, (at, kind, e, m, payload))
            if done > now:
                heapq.heappush(events, (done, UPLINK, v, -1))
                return

    last = -inf
    while events:
        ev = heapq.heappop(events)
        t, kind, ident, m = ev[:4]
        last = max(last, t)
        if kind == UPLINK:
            send_next(ident, t)
            continue
        if kind == CONTROL:
            v = int(c_snd[ident])
            queue[v].append(("control", ident, t))
            send_next(v, t)
            continue
        if kind == CONTROL_RECEIVED:
            res["crecv"][int(c_rcv[ident])] += float(c_bytes[ident])
            if ident in reply_of:
                a = reply_of[ident]
                heapq.heappush(events, (t + float(c_at[a]), CONTROL, a, -1))
            continue
        if kind == AT_DOWNLINK and ident >= nnz:
            c = ident - nnz
            w = int(c_rcv[c])
            start = max(t, down_free[w])
            done = start + float(c_bytes[c]) / down[w]
            down_free[w] = done
            heapq.heappush(events, (done, CONTROL_RECEIVED, c, -1))
            continue
        if kind == READY:
            v = ident
            tp = int(topic[m])
            tv = ttl_of[m][v]
            if policy == "ttl":
                if tv < 0:
                    continue
                only_liked = tv == 0
            else:
                only_liked = policy == "topic"
            for e in range(indptr[v], indptr[v + 1]):
                w = int(indices[e])
                if w == parent[m][v]:
                    continue
                if only_liked and not likes(masks, w, tp):
                    continue
                if policy == "mesh" and not any(x in (-1, tp) for x in labels[e]):
                    continue
                queue[v].append((m, e, t))
            send_next(v, t)
        elif kind == AT_DOWNLINK:
            e = ident
            w = int(indices[e])
            s = float(size[m])
            start = max(t, down_free[w])
            done = start + s / down[w]
            down_free[w] = done
            res["qwait"][m] += start - t
            up_wait, tx, jit = ev[4]
            heapq.heappush(events, (done, RECEIVED, e, m, (up_wait + (start - t), tx, jit)))
        else:
            e = ident
            v, w = sender[e], int(indices[e])
            s = float(size[m])
            res["recv"][w] += s
            edge_recv[m][e] = t
            if arrival[m][w] != inf:
                res["dups"][m] += 1
                res["dupb"][w] += s
                continue
            arrival[m][w] = t
            parent[m][w] = v
            hops[m][w] = hops[m][v] + 1
            tv = ttl_of[m][v]
            ttl_of[m][w] = tv if likes(masks, w, int(topic[m])) else tv - 1
            qdelay[m][w] = qdelay[m][v] + ev[4][0]
            ready = (t + float(proc_delay[w])) + (val_ms + val_per_byte * s)
            heapq.heappush(events, (ready, READY, w, m))
    for m in range(n_msg):
        for v in range(n):
            arrival[m][v] -= float(published[m])
        for e in range(nnz):
            edge_recv[m][e] -= float(published[m])
    res.update(arrival=arrival, hops=hops, parent=parent, qdelay=qdelay, edge_recv=edge_recv,
               last=last)
    return res


def as_arrays(res: dict) -> dict:
    return {k: np.asarray(v) for k, v in res.items()}
