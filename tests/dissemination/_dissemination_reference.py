"""An independent, event-by-event reference simulator of message dissemination (tests only).

Plain Python with a ``heapq`` of copy-arrival events keyed ``(time, csr_entry)``:
the straightforward reading of Topiary section II-A that the numba kernels of
``hedgerow.dissemination`` must reproduce exactly.  Nothing in the simulator
is shared with the kernels; :func:`assert_agrees` runs the engine on a batch
and compares it with the simulator message by message,
:func:`random_symmetric_csr` / :func:`random_masks` / :func:`random_net` draw
the random inputs the tests share, and :func:`assert_chunks_agree` compares a
chunked run with one whole call.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from hedgerow.dissemination import disseminate, edge_delays
from hedgerow.latency import unit_square
from hedgerow.model import RngStreams, pack_sets
from hedgerow.model.outlinks import closure_csr, random_out_neighbours
from hedgerow.workloads import draw_messages, interest_instance


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


def assert_agrees(indptr, indices, ed, pd, masks, batch, policy, record=True):
    """Run ``disseminate`` on ``batch`` and assert every field equals the simulator's."""
    got = disseminate(indptr, indices, ed, pd, masks, batch, policy=policy, record_edges=record)
    for i in range(len(batch)):
        ref = simulate(
            indptr,
            indices,
            ed,
            pd,
            masks,
            int(batch.publisher[i]),
            int(batch.topic[i]),
            int(batch.ttl[i]),
            policy,
        )
        ctx = f"policy={policy} message={i}"
        assert got.arrival[i].tolist() == ref["arrival"], ctx
        assert got.hops[i].tolist() == ref["hops"], ctx
        assert got.parent[i].tolist() == ref["parent"], ctx
        if record:
            assert got.edge_recv[i].tolist() == ref["edge_recv"], ctx
        assert int(got.copies[i]) == ref["copies"], ctx
        assert int(got.relay_copies[i]) == ref["relay"], ctx
        assert int(got.duplicates[i]) == ref["duplicates"], ctx
    return got


def random_symmetric_csr(rng, n, p_edge):
    """``(indptr, indices)`` of a random undirected graph, each pair linked with ``p_edge``."""
    adj = np.triu(rng.random((n, n)) < p_edge, 1)
    adj = adj | adj.T
    rows, cols = np.nonzero(adj)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    return indptr, cols.astype(np.int64)


def random_masks(rng, n, n_topics, rate):
    """Bit-packed subscriptions: each node takes each topic with probability ``rate``."""
    subs = [np.flatnonzero(rng.random(n_topics) < rate) for _ in range(n)]
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in subs])])
    return pack_sets(ptr, np.concatenate(subs) if n else np.zeros(0, int), n_topics)


def random_net(n=40, d=3, seed=2, n_topics=6, messages=50):
    """``d`` random out-links per node (closure), unit-square delays, 5 ms processing.

    Subscriptions at 30% interest over ``n_topics``; ``messages`` drawn messages.
    Returns ``(inst, indptr, indices, ed, proc, pub, top)``.
    """
    streams = RngStreams(seed)
    inst = interest_instance(n, n_topics, 0.3, streams.stream("workload"))
    indptr, indices = closure_csr(random_out_neighbours(n, d, streams.stream("init")), n)
    ed = edge_delays(indptr, indices, unit_square(n, streams.stream("latency")))
    pub, top = draw_messages(inst, messages, streams.stream("messages"))
    return inst, indptr, indices, ed, np.full(n, 5.0), pub, top


def assert_chunks_agree(chunks, whole, n_messages, nnz):
    """Each chunk equals the rows of ``whole`` it selects (entry map the identity), and every
    message is in exactly one chunk.  Returns the chunks' selections."""
    sels = []
    for sel, dl, emap in chunks:
        np.testing.assert_array_equal(emap, np.arange(nnz))
        np.testing.assert_array_equal(dl.arrival, whole.arrival[sel])
        np.testing.assert_array_equal(dl.edge_recv, whole.edge_recv[sel])
        np.testing.assert_array_equal(dl.copies, whole.copies[sel])
        sels.append(sel)
    assert sorted(i for sel in sels for i in sel.tolist()) == list(range(n_messages))
    return sels
