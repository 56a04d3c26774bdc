"""Broadcast propagation metrics against brute-force definitions (Goldfish section V-C)."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest

from hedgerow.metrics.propagation import (
    arrival_percentiles,
    connection_churn,
    duplicates_per_node,
    exploit_distances,
    pooled_percentiles,
    wasted_latency,
    wasted_summary,
)


def _arrival_reference(out, lat, proc, src):
    """Event-by-event arrival of a message from ``src``: relays pay their node delay."""
    n = len(lat)
    adj = [set() for _ in range(n)]
    for u in range(n):
        for v in out[u]:
            if v >= 0 and v != u:
                adj[u].add(int(v))
                adj[int(v)].add(u)
    best = [math.inf] * n
    best[src] = 0.0
    heap = [(0.0, src)]
    while heap:
        t, u = heapq.heappop(heap)
        if t > best[u]:
            continue
        send = t + (0.0 if u == src else proc[u])
        for v in adj[u]:
            if send + lat[u][v] < best[v]:
                best[v] = send + lat[u][v]
                heapq.heappush(heap, (best[v], v))
    return best


def _wasted_reference(out, lat, proc, probs, q):
    n = len(lat)
    res = []
    for i in range(n):
        vals = []
        for m in range(n):
            if probs[m] > 0:
                w = 0.0 if m == i else _arrival_reference(out, lat, proc, m)[i] - lat[m][i]
                vals.append((w, probs[m]))
        vals.sort(key=lambda x: x[0])
        acc, val = 0.0, math.inf
        for w, p in vals:
            acc += p
            if acc > q + 1e-12:
                val = w
                break
        res.append(val)
    return res


@pytest.mark.parametrize("seed", range(20))
def test_wasted_latency_matches_event_reference(seed):
    rng = np.random.default_rng(seed)
    n = 12
    pos = rng.random((n, 2)) * 500
    lat = np.sqrt(((pos[:, None] - pos[None]) ** 2).sum(-1))
    proc = rng.uniform(0, 30, n)
    out = np.array([rng.choice(np.delete(np.arange(n), i), 2, replace=False) for i in range(n)])
    out[rng.random((n, 2)) < 0.2] = -1
    probs = rng.random(n) * (rng.random(n) < 0.6)
    probs[0] += 0.1
    probs /= probs.sum()
    got = wasted_latency(out, lat, proc, probs, 0.9)
    want = _wasted_reference(out, lat, proc, probs, 0.9)
    np.testing.assert_allclose(got, want, atol=1e-6)
    dist = exploit_distances(out, lat, proc)
    for m in range(3):
        np.testing.assert_allclose(dist[m], _arrival_reference(out, lat, proc, m), atol=1e-6)


def test_wasted_latency_zero_on_complete_graph_and_direct_links():
    # with every node linked to every other, and triangle inequality, no latency is wasted
    rng = np.random.default_rng(3)
    pos = rng.random((8, 2))
    lat = np.sqrt(((pos[:, None] - pos[None]) ** 2).sum(-1)) * 500
    out = np.array([[v for v in range(8) if v != u] for u in range(8)])
    w = wasted_latency(out, lat, np.full(8, 20.0), np.full(8, 1 / 8))
    np.testing.assert_allclose(w, 0.0, atol=1e-9)


def test_wasted_summary_uses_ceil_index_like_the_authors():
    s = wasted_summary(np.arange(1.0, 11.0))
    assert (s["p25"], s["p50"], s["p75"], s["mean"]) == (3.0, 5.0, 8.0, 5.5)


def test_arrival_percentiles_by_count_and_weight():
    a = np.array([[0.0, 10, 20, 30, np.inf]])
    assert arrival_percentiles(a, (0.2, 0.6, 0.8)).tolist() == [[0.0, 20.0, 30.0]]
    w = np.array([0.0, 0, 0, 1, 0])
    assert arrival_percentiles(a, (0.5,), weights=w).tolist() == [[30.0]]
    # pooled = the time at which the round's mean informed fraction reaches q
    b = np.array([[0.0, 10, 20, 30], [0, 40, 50, 60]])
    t = pooled_percentiles(b, (0.5, 0.9))
    for q, tq in zip((0.5, 0.9), t, strict=True):
        assert (b <= tq).mean() >= q and (b < tq).mean() < q


def test_duplicates_and_churn():
    # a triangle flooded from 0: 1 and 2 each get a first copy and a duplicate from each other,
    # and 0 gets nothing back (a node never sends back to whom it got it from... but 1 and 2 do
    # send to 0 as it is not their parent's... here: entries to 0 carry no copy)
    er = np.array([[1.0, 1.0, 3.0, 3.0, np.inf, np.inf]])
    recv = np.array([1, 2, 2, 1, 0, 0])
    arrival = np.array([[0.0, 1.0, 1.0]])
    assert duplicates_per_node(er, recv, arrival, np.array([0]), 3).tolist() == [0.0, 1.0, 1.0]
    dials, drops = connection_churn(np.array([[1, 2], [2, 0]]), np.array([[1, 2], [0, 3]]))
    assert dials.tolist() == [0, 1] and drops.tolist() == [0, 1]
