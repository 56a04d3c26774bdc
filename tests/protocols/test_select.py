"""The candidate-choice kernel: scores, eligibility and the two tie rules."""

import numpy as np
import pytest

from hedgerow.protocols._select import (
    GREEDY,
    RANDOM_NODE,
    TIES_SEQUENTIAL,
    TIES_UNIFORM,
    pick_candidate,
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
