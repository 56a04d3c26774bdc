import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import (
    Instance,
    Overlay,
    RngStreams,
    interest_matrix,
    pack_bool,
    pack_sets,
    popcount_and,
)


def test_instance_two_views_agree(small_instance):
    inst = small_instance
    for t in range(inst.n_topics):
        for v in inst.subscribers(t):
            assert t in inst.topics_of(v)
    assert inst.topic_sizes.sum() == inst.n_subs.sum() == len(inst.sub_topics)


def test_masks_match_sets(small_instance):
    inst = small_instance
    for a in range(0, 50, 7):
        for b in range(1, 60, 11):
            expected = len(set(inst.topics_of(a)) & set(inst.topics_of(b)))
            assert inst.intersection_size(a, b) == expected
    scores = popcount_and(inst.masks, inst.masks[3])
    assert scores[3] == inst.n_subs[3]


def test_pack_sets_high_bits():
    m = pack_sets(np.array([0, 3]), np.array([0, 64, 129]), 130)
    assert m.shape == (1, 3)
    assert [int(x) for x in m[0]] == [1, 1, 2]


def test_interest_matrix_and_pack_bool_round_trip(small_instance):
    inst = small_instance
    dense = interest_matrix(inst.masks, inst.n_topics)
    assert dense.shape == (inst.n_nodes, inst.n_topics)
    for v in range(0, inst.n_nodes, 9):
        assert np.flatnonzero(dense[v]).tolist() == sorted(inst.topics_of(v).tolist())
    np.testing.assert_array_equal(pack_bool(dense), inst.masks)
    wide = np.zeros((2, 130), dtype=bool)
    wide[0, [0, 64, 129]] = True
    packed = pack_sets(np.array([0, 3, 3]), np.array([0, 64, 129]), 130)
    np.testing.assert_array_equal(pack_bool(wide), packed)
    np.testing.assert_array_equal(interest_matrix(pack_bool(wide), 130), wide)


def test_instance_is_immutable(small_instance):
    with pytest.raises(ValueError):
        small_instance.sub_topics[0] = 5
    with pytest.raises(AttributeError):
        small_instance.n_nodes = 3


def test_instance_rejects_bad_input():
    with pytest.raises(ParameterError):
        Instance.from_lists([[0, 5]], n_topics=3)
    with pytest.raises(ParameterError):
        Instance(2, 3, np.array([0, 2, 3]), np.array([1, 1, 0]))


def test_overlay_undirected_and_directed():
    ov = Overlay(3)
    ov.add_edge(0, 1)
    ov.add_edge(1, 0)
    assert ov.n_edges == 1 and ov.is_symmetric()
    with pytest.raises(ParameterError):
        ov.add_edge(2, 2)
    with pytest.raises(ParameterError):
        ov.add_edge(0, 7)
    d = Overlay(3, directed=True)
    d.add_edges([(0, 1), (0, 2)])
    assert d.degree().tolist() == [2, 0, 0]
    assert not d.is_symmetric()
    assert d.undirected_csr().toarray().sum() == 4
    d.remove_node_links(0)
    assert d.n_edges == 0


def test_overlay_csr_cache_invalidated():
    ov = Overlay.from_edges(3, [(0, 1)])
    assert ov.csr().nnz == 2
    ov.add_edge(1, 2)
    assert ov.csr().nnz == 4
    ov.remove_edge(0, 1)
    assert ov.edges().tolist() == [[1, 2]]


def test_rng_streams_named_and_reproducible():
    a = RngStreams(5).stream("x").random(3)
    b = RngStreams(5).stream("x").random(3)
    c = RngStreams(5).stream("y").random(3)
    d = RngStreams(6).stream("x").random(3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)
    assert RngStreams(5).child("p").seed == RngStreams(5).child("p").seed
    with pytest.raises(ValueError):
        RngStreams(-1)
