"""The candidate-choice kernel: scores, eligibility and the two tie rules."""

import numpy as np
import pytest

from hedgerow.model.bitset import pack_sets
from hedgerow.protocols._select import (
    GREEDY,
    RANDOM_COVER,
    RANDOM_NODE,
    SIMILARITY,
    TIES_SEQUENTIAL,
    TIES_UNIFORM,
    bit_scratch_rows,
    pick_candidate,
    pick_candidate_bits,
    topic_bitsets,
)


@pytest.fixture
def four_ties():
    # node 0 picks; nodes 1-4 all share topic 0 with it, node 5 shares nothing
    masks = np.array([[1], [1], [1], [1], [1], [2]], dtype=np.uint64)
    return masks, np.array([1], dtype=np.uint64)


def _picks(masks, target, mode, rule, draws=4000):
    n = masks.shape[0]
    mark = np.zeros(n, dtype=np.int64)
    mark[0] = 1
    keys = np.zeros(n, dtype=np.int64)
    view = np.zeros(0, dtype=np.int64)
    us = np.random.default_rng(0).random(draws)
    out = [pick_candidate(mode, masks, target, view, True, n, mark, 1, u, keys, rule) for u in us]
    return np.bincount(out, minlength=n) / draws


def test_uniform_ties_are_uniform(four_ties):
    share = _picks(*four_ties, GREEDY, TIES_UNIFORM)
    assert share[0] == 0 and share[5] == 0
    assert np.allclose(share[1:5], 0.25, atol=0.03)


def test_sequential_ties_favour_late_candidates(four_ties):
    """One-pass argmax with a coin flip per tie: the last of 4 ties wins 1/2, then 1/4, 1/8, 1/8."""
    share = _picks(*four_ties, GREEDY, TIES_SEQUENTIAL)
    assert share[0] == 0 and share[5] == 0
    assert np.allclose(share[1:5], [0.125, 0.125, 0.25, 0.5], atol=0.03)


def test_random_selection_ignores_the_tie_rule(four_ties):
    masks, target = four_ties
    share = _picks(masks, target, RANDOM_NODE, TIES_SEQUENTIAL)
    assert np.allclose(share[1:6], 0.2, atol=0.03)


def test_greedy_returns_nothing_without_a_covering_candidate():
    masks = np.array([[1], [2], [4]], dtype=np.uint64)
    n = 3
    mark = np.zeros(n, dtype=np.int64)
    mark[0] = 1
    keys = np.zeros(n, dtype=np.int64)
    target = np.array([8], dtype=np.uint64)
    view = np.zeros(0, dtype=np.int64)
    for rule in (TIES_UNIFORM, TIES_SEQUENTIAL):
        assert pick_candidate(GREEDY, masks, target, view, True, n, mark, 1, 0.3, keys, rule) == -1


@pytest.mark.parametrize("n", [1, 63, 64, 65, 200, 333])
@pytest.mark.parametrize("n_topics", [5, 70, 130])
def test_the_bit_index_picks_what_the_scan_picks(n, n_topics):
    """Every mode and tie rule, marked nodes, empty and full targets, node counts across words."""
    rng = np.random.default_rng(n * 1000 + n_topics)
    subs = rng.integers(0, min(n_topics, 12) + 1, n)
    indptr = np.concatenate([[0], np.cumsum(subs)])
    topics = np.concatenate(
        [np.sort(rng.choice(n_topics, k, replace=False)) for k in subs] or [np.zeros(0, int)]
    ).astype(np.int64)
    masks = pack_sets(indptr, topics, n_topics)
    bits = topic_bitsets(n, n_topics, indptr, topics)
    scratch = np.zeros((bit_scratch_rows(1), bits.shape[1]), dtype=np.uint64)  # grown inside
    mark = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    view = np.zeros(0, dtype=np.int64)
    found = 0
    for trial in range(60):
        p = int(rng.integers(n))
        marked = np.concatenate([[p], rng.integers(0, n, int(rng.integers(0, n + 1)) // 3)])
        if trial % 10 == 9:
            marked = np.arange(n)  # nobody left
        stamp = trial + 1
        mark[marked] = stamp
        target = masks[p].copy()
        if trial % 3 == 1:  # a part of the interest, as an uncovered set
            target &= rng.integers(0, 2**63, target.shape[0], dtype=np.uint64)
        u = float(rng.random())
        for mode in (GREEDY, RANDOM_COVER, SIMILARITY, RANDOM_NODE):
            for rule in (TIES_UNIFORM, TIES_SEQUENTIAL):
                want = pick_candidate(mode, masks, target, view, True, n, mark, stamp, u, keys,
                                      rule)
                got = pick_candidate_bits(mode, bits, target, n, marked, u, rule, scratch)
                assert got == want, (mode, rule, trial)
                found += want >= 0
    assert found > 0 or n == 1  # a lone node has nobody to pick
