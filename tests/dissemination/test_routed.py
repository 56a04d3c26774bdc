"""The breadth-first pass over per-topic links equals the mesh kernel on hops and copies."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, disseminate_mesh, entry_topics
from hedgerow.dissemination.routed import TopicLinks
from hedgerow.errors import ParameterError
from hedgerow.model import Instance, Overlay


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_mesh_kernel(seed):
    rng = np.random.default_rng(seed)
    n, topics = 60, 6
    inst = Instance.from_lists([rng.choice(topics, 2, replace=False) for _ in range(n)],
                               n_topics=topics)
    e = rng.integers(0, n, size=(240, 2))
    e = e[e[:, 0] != e[:, 1]]
    ov = Overlay.from_edges(n, e)
    a = ov.undirected_csr()
    links = ov.edges()
    rows = np.column_stack([links[rng.integers(0, len(links), 200)],
                            rng.integers(0, topics, 200)])
    pub = rng.integers(0, n, 40)
    top = rng.integers(0, topics, 40)
    ref = disseminate_mesh(a.indptr, a.indices, np.ones(a.nnz), np.zeros(n), inst.masks,
                           MessageBatch.create(pub, top), entry_topics(a.indptr, a.indices, rows))
    hops, copies, relay = TopicLinks.from_rows(n, topics, rows).flood(pub, top, inst.masks)
    assert np.array_equal(hops, ref.hops)
    assert np.array_equal(copies, ref.copies)
    # relay copies can differ only by which equally short first copy is taken
    assert np.abs(relay - ref.relay_copies).max() <= 2


def test_on_a_tree_relay_copies_match_exactly():
    inst = Instance.from_lists([[0], [], [0], [], [0]], n_topics=1)
    rows = np.array([[0, 1, 0], [1, 2, 0], [1, 3, 0], [3, 4, 0]])
    a = Overlay.from_edges(5, rows[:, :2]).undirected_csr()
    ref = disseminate_mesh(a.indptr, a.indices, np.ones(a.nnz), np.zeros(5), inst.masks,
                           MessageBatch.create([2], [0]), entry_topics(a.indptr, a.indices, rows))
    hops, copies, relay = TopicLinks.from_rows(5, 1, rows).flood(np.array([2]), np.array([0]),
                                                                 inst.masks)
    assert hops.tolist() == ref.hops.tolist() == [[2, 1, 0, 2, 3]]
    assert copies.tolist() == ref.copies.tolist() == [4]
    assert relay.tolist() == ref.relay_copies.tolist() == [2]


def test_every_topic_rows_are_refused():
    with pytest.raises(ParameterError, match="every topic"):
        TopicLinks.from_rows(3, 1, np.array([[0, 1, -1]]))
