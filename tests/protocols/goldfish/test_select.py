"""Goldfish's selector: altruistic exploitation and the depleting pool (§IV, §V-B)."""

from __future__ import annotations

import numpy as np

from hedgerow.protocols.goldfish.select import DepletingPool, choose_exploits, rank_subsets


def test_depleting_pool_explores_all_96_candidates_of_100_nodes_in_96_epochs():
    """§V-B: "a Goldfish has to spend at most 96 epochs to discover every peer once"."""
    rng = np.random.default_rng(5)
    pool = DepletingPool(100, me=7)
    exploits = [11, 42, 93]
    explored = []
    for _ in range(96):
        pool.mark(exploits)
        explored += pool.draw(rng, 1, exclude=exploits, accepts=lambda u: True)
    assert len(explored) == 96 == len(set(explored))
    assert set(explored) == set(range(100)) - {7, 11, 42, 93}
    assert pool.refills == 0
    # the 97th draw refills the pool (§IV: "resets itself until the pool is emptied")
    nxt = pool.draw(rng, 1, exclude=exploits, accepts=lambda u: True)
    assert pool.refills == 1 and nxt[0] not in (7, 11, 42, 93)


def test_depleting_pool_skips_refusing_nodes_and_seen_peers():
    pool = DepletingPool(6, me=0)
    pool.mark([1, 2])
    got = pool.draw(np.random.default_rng(0), 2, exclude=[], accepts=lambda u: u != 3)
    assert sorted(got) == [4, 5]


def test_altruistic_ranking_prefers_coverage_then_benefit_then_rows():
    inf = np.inf
    peers = np.array([1, 2, 3, 4, 5])
    # rows won by 1 (benefit {4, 5}), 2 (benefit {4}), 3 (benefit {4}), 3 (benefit {4})
    t_hat = np.array([
        [0.0, 5, 6, inf, inf],
        [4.0, 0, 6, inf, inf],
        [4.0, 5, 0, inf, inf],
        [4.0, 5, 0, inf, inf],
    ])
    dag = np.zeros_like(t_hat, dtype=bool)
    dag[0, [3, 4]] = True
    dag[1:, 3] = True
    assert rank_subsets(t_hat, dag, peers, 1) == [(1,), (3,), (2,)]
    assert rank_subsets(t_hat, dag, peers, 2)[0] == (1, 3)
    # fewer contributors than slots: all of them, most rows first
    assert rank_subsets(t_hat, dag, peers, 4) == [(3, 1, 2)]


def test_rows_without_a_value_are_dropped():
    inf = np.inf
    t_hat = np.array([[inf, inf], [0.0, 3.0]])
    dag = np.array([[True, True], [False, False]])
    assert rank_subsets(t_hat, dag, np.array([8, 9]), 1) == [(8,)]


def test_choose_exploits_skips_subsets_with_a_refusing_new_member():
    ranked = [(1, 2), (1, 3), (2, 3)]
    assert choose_exploits(ranked, 2, current={2}, accepts=lambda u: u != 1) == [2, 3]
    assert choose_exploits(ranked, 2, current={1}, accepts=lambda u: u != 2) == [1, 3]
    assert choose_exploits(ranked, 2, current=set(), accepts=lambda u: False) == []
