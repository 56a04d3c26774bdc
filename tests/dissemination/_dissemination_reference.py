"""An independent, event-by-event reference simulator of message dissemination (tests only).

Plain Python with a ``heapq`` of copy-arrival events keyed ``(time, csr_entry)``:
the straightforward reading of Topiary section II-A that the numba kernels of
``hedgerow.dissemination`` must reproduce exactly.  Nothing here is shared
with the kernels.
"""

from __future__ import annotations

import heapq
import math


def interested(masks, node: int, topic: int) -> bool:
    return bool((int(masks[node][topic // 64]) >> (topic % 64)) & 1)


def simulate(indptr, indices, edge_delay, proc_delay, masks, publisher, topic, ttl, policy):
    """One message.  Returns a dict of per-node lists and per-edge arrival times plus counters."""
    n = len(indptr) - 1
    nnz = len(indices)
    arrival = [math.inf] * n
    hops = [-1] * n
    parent = [-1] * n
    edge_recv = [math.inf] * nnz
    have = [False] * n
    counters = {"copies": 0, "relay": 0, "duplicates": 0}
    events: list[tuple[float, int, int, int, int, int]] = []

    def forward(v: int, send_time: float, came_from: int, ttl_v: int, hop_v: int) -> None:
        if policy == "flood":
            targets_interested_only = False
        elif policy == "topic":
            targets_interested_only = True
        else:
            if ttl_v < 0:
                return
            targets_interested_only = ttl_v == 0
        for e in range(indptr[v], indptr[v + 1]):
            w = int(indices[e])
            if w == came_from:
                continue
            w_interested = interested(masks, w, topic)
            if targets_interested_only and not w_interested:
                continue
            t = send_time + float(edge_delay[e])
            counters["copies"] += 1
            if not w_interested:
                counters["relay"] += 1
            edge_recv[e] = t
            # the copy carries the sender's TTL; the receiver applies its own rule on receipt
            heapq.heappush(events, (t, e, w, v, ttl_v, hop_v + 1))

    # the publisher: has the message at time 0, sends without processing delay, keeps its TTL
    have[publisher] = True
    arrival[publisher] = 0.0
    hops[publisher] = 0
    forward(publisher, 0.0, -1, int(ttl), 0)

    while events:
        t, _entry, w, sender, ttl_copy, hop = heapq.heappop(events)
        if have[w]:
            counters["duplicates"] += 1
            continue
        have[w] = True
        arrival[w] = t
        hops[w] = hop
        parent[w] = sender
        ttl_w = ttl_copy if interested(masks, w, topic) else ttl_copy - 1
        forward(w, t + float(proc_delay[w]), sender, ttl_w, hop)

    return {
        "arrival": arrival,
        "hops": hops,
        "parent": parent,
        "edge_recv": edge_recv,
        **counters,
    }
