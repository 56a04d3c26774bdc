"""Goldfish's observations (§III) against an independent event-by-event reference."""

from __future__ import annotations

import heapq

import numpy as np

from hedgerow.dissemination import MessageBatch, disseminate
from hedgerow.model.outlinks import closure_csr
from hedgerow.protocols.goldfish.observe import observe_chunk, peer_entries


def reference(adj, delay, proc, src):
    """Plain-Python §III: first copy relayed to every peer but its sender; copies per (u -> v)."""
    n = len(adj)
    first = [None] * n
    parent = [-1] * n
    copies = {}
    events = [(0.0, 0, -1, src)]
    seq = 1
    while events:
        t, _, frm, v = heapq.heappop(events)
        if frm >= 0:
            copies[(frm, v)] = t
        if first[v] is not None:
            continue
        first[v] = t
        parent[v] = frm
        send = t if v == src else t + proc[v]
        for w in adj[v]:
            if w != frm:
                heapq.heappush(events, (send + delay[v][w], seq, v, w))
                seq += 1
    return copies


def expected(adj, copies, v, src, width):
    row = np.full(width, np.nan)
    if v == src:
        row[: len(adj[v])] = np.inf
        return row
    got = [copies.get((u, v)) for u in adj[v]]
    if all(t is None for t in got):
        return row  # never reached: no information
    t0 = min(t for t in got if t is not None)
    for j, t in enumerate(got):
        row[j] = np.inf if t is None else t - t0
    return row


def test_observations_equal_an_event_by_event_reference_on_500_graphs():
    rng = np.random.default_rng(2023)
    checked = 0
    for _ in range(500):
        n = int(rng.integers(4, 12))
        d = int(rng.integers(1, 4))
        out = np.full((n, d), -1, dtype=np.int64)
        for v in range(n):
            others = np.delete(np.arange(n), v)
            out[v, :] = rng.choice(others, size=min(d, n - 1), replace=False)
        indptr, indices = closure_csr(out, n)
        pos = rng.random((n, 2)) * 500
        delay = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
        proc = rng.uniform(5, 30, n)
        rows = np.repeat(np.arange(n), np.diff(indptr))
        ed = delay[rows, indices]
        pubs = rng.integers(0, n, 6)
        masks = np.zeros((n, 1), dtype=np.uint64)
        dl = disseminate(indptr, indices, ed, proc, masks,
                         MessageBatch.create(pubs, np.zeros(6, dtype=np.int64)),
                         policy="flood", record_edges=True)
        nodes = np.arange(n)
        width = int(np.diff(indptr).max())
        peers, rev = peer_entries(indptr, indices, nodes, width)
        got = observe_chunk(dl.arrival, dl.edge_recv, np.arange(len(indices)), rev, nodes, pubs)
        adj = [indices[indptr[v]:indptr[v + 1]].tolist() for v in range(n)]
        for v in range(n):
            assert peers[v, : len(adj[v])].tolist() == adj[v]
        want = np.empty_like(got)
        for m, src in enumerate(pubs.tolist()):
            copies = reference(adj, delay, proc, src)
            for v in range(n):
                want[m, v] = expected(adj, copies, v, src, width)
                checked += 1
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert checked > 500 * 4 * 6 - 1


def test_dagger_marks_peers_that_got_the_block_from_the_node():
    """A path 0 - 1 - 2 published by 0: node 1 sees 0 at 0 ms and 2 as † (2 got it from 1)."""
    out = np.array([[1], [2], [-1]])
    indptr, indices = closure_csr(out, 3)
    ed = np.full(len(indices), 10.0)
    dl = disseminate(indptr, indices, ed, np.full(3, 20.0), np.zeros((3, 1), dtype=np.uint64),
                     MessageBatch.create([0], [0]), policy="flood", record_edges=True)
    peers, rev = peer_entries(indptr, indices, np.array([1]), 2)
    rel = observe_chunk(dl.arrival, dl.edge_recv, np.arange(len(indices)), rev, np.array([1]),
                        np.array([0]))
    assert peers.tolist() == [[0, 2]]
    assert rel[0, 0, 0] == 0.0 and np.isposinf(rel[0, 0, 1])


def _codes_with_numpy(arrival, edge_recv, entry_map, rev, nodes, publisher):
    """observe_chunk as numpy passes over (messages, nodes, slots), as it was before its kernel."""
    m = arrival.shape[0]
    slot = rev >= 0
    col = np.where(slot, entry_map[np.maximum(rev, 0)], -1)
    if edge_recv.shape[1]:
        recv = edge_recv[:, np.maximum(col, 0)]
    else:
        recv = np.full((m, *col.shape), np.inf)
    recv = np.where((col >= 0)[None, :, :], recv, np.inf)
    first = recv.min(axis=2, initial=np.inf)
    with np.errstate(invalid="ignore"):
        rel = recv - first[:, :, None]
    got = np.isfinite(arrival[:, nodes])
    own = publisher[:, None] == nodes[None, :]
    rel = np.where(np.isfinite(recv), rel, np.inf)
    rel[~got | ~np.isfinite(first)] = np.nan
    rel[own] = np.inf
    rel[:, ~slot] = np.nan
    return rel


def test_the_observation_kernel_gives_numpys_codes():
    """observe_chunk's kernel against the numpy passes it replaced, on 500 random chunks with
    unreached nodes, copies never sent, nan copies, empty slots, unused entries and a node's
    own messages: the same codes, nan for nan."""
    rng = np.random.default_rng(29)
    for _ in range(500):
        m, n = int(rng.integers(1, 6)), int(rng.integers(5, 9))
        a, w, nnz = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(0, 7))
        arrival = rng.uniform(0, 10, (m, n))
        arrival[rng.random((m, n)) < 0.2] = np.inf
        edge_recv = rng.uniform(0, 10, (m, nnz))
        edge_recv[rng.random((m, nnz)) < 0.3] = np.inf
        if nnz and rng.random() < 0.1:
            edge_recv[rng.random((m, nnz)) < 0.1] = np.nan
        entry_map = rng.integers(-1, max(nnz, 1), 20) if nnz else np.full(20, -1)
        rev = rng.integers(-1, 20, (a, w))
        nodes = np.sort(rng.choice(n, a, replace=False))
        publisher = rng.integers(0, n, m)
        got = observe_chunk(arrival, edge_recv, entry_map, rev, nodes, publisher)
        want = _codes_with_numpy(arrival, edge_recv, entry_map, rev, nodes, publisher)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
