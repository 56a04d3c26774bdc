"""The numba kernels agree EXACTLY with the plain-Python event-by-event reference simulator.

1,200 random small graphs (directed and symmetric, disconnected ones, self-loops
and repeated entries included) x 3 policies x 4 messages = 14,400 messages;
delays are drawn to create ties (small integers, zeros) as well as distinct
floats; TTLs 0-3; random interests over 1-word and 2-word masks.
"""

from __future__ import annotations

import numpy as np
import pytest
from _dissemination_reference import assert_agrees, random_masks, random_symmetric_csr

from hedgerow.dissemination import MessageBatch, disseminate

N_GRAPHS = 1200
N_MESSAGES = 4
POLICIES = ("ttl", "flood", "topic")


def random_case(rng: np.random.Generator):
    n = int(rng.integers(1, 13))
    p_edge = rng.choice([0.1, 0.25, 0.5])
    adj = rng.random((n, n)) < p_edge
    if rng.random() < 0.7:  # symmetric (undirected closure), the usual input
        adj = np.triu(adj, 1)
        adj = adj | adj.T
    elif rng.random() < 0.8:
        np.fill_diagonal(adj, False)
    rows, cols = np.nonzero(adj)
    if len(rows) and rng.random() < 0.1:  # repeated CSR entries
        k = int(rng.integers(0, len(rows)))
        rows, cols = np.insert(rows, k, rows[k]), np.insert(cols, k, cols[k])
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    indptr = np.cumsum(indptr)
    indices = cols.astype(np.int64)
    nnz = len(indices)
    mode = rng.integers(0, 3)
    if mode == 0:  # many ties, zeros included
        ed = rng.integers(0, 3, nnz).astype(float)
        pd = rng.integers(0, 2, n).astype(float)
    elif mode == 1:  # ties but strictly positive processing (the paper's delta_v > 0)
        ed = rng.integers(1, 4, nnz).astype(float)
        pd = rng.integers(1, 3, n).astype(float)
    else:
        ed = rng.random(nnz) * 10
        pd = rng.random(n) * 2
    n_topics = int(rng.choice([1, 3, 70]))
    rate = rng.choice([0.2, 0.5, 0.8])
    masks = random_masks(rng, n, n_topics, rate)
    batch = MessageBatch(
        rng.integers(0, n, N_MESSAGES),
        rng.integers(0, n_topics, N_MESSAGES),
        rng.integers(0, 4, N_MESSAGES),
    )
    return indptr, indices, ed, pd, masks, batch


def test_kernels_match_reference_on_random_cases():
    rng = np.random.default_rng(20240611)
    n_cases = 0
    for _ in range(N_GRAPHS):
        case = random_case(rng)
        for policy in POLICIES:
            assert_agrees(*case, policy)
            n_cases += 1
    assert n_cases == N_GRAPHS * len(POLICIES) >= 1000


@pytest.mark.parametrize("policy", POLICIES)
def test_record_edges_does_not_change_results(policy):
    rng = np.random.default_rng(7)
    for _ in range(50):
        case = random_case(rng)
        a = disseminate(*case, policy=policy, record_edges=True)
        b = disseminate(*case, policy=policy, record_edges=False)
        assert b.edge_recv is None
        for f in ("arrival", "hops", "parent", "copies", "relay_copies", "duplicates"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_larger_graphs_match_reference():
    """A few 200-node graphs, to exercise deep heaps and decrease-key paths."""
    rng = np.random.default_rng(99)
    for _ in range(6):
        n = 200
        indptr, indices = random_symmetric_csr(rng, n, 0.03)
        ed = rng.integers(1, 20, len(indices)).astype(float)
        pd = rng.integers(1, 5, n).astype(float)
        masks = random_masks(rng, n, 5, 0.4)
        batch = MessageBatch(rng.integers(0, n, 5), rng.integers(0, 5, 5), rng.integers(0, 3, 5))
        for policy in POLICIES:
            assert_agrees(indptr, indices, ed, pd, masks, batch, policy)
