"""Goldfish's selector: altruistic exploitation and the depleting pool (§IV, §V-B)."""

from __future__ import annotations

import numpy as np
import pytest

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


def _rank_reference(t_hat, dag, peers, n_select):
    """Steps 1-3 of the selector written out with Python sets, one subset at a time."""
    from itertools import combinations

    keep = np.isfinite(t_hat).any(axis=1)
    if not keep.any():
        return []
    th, dg = t_hat[keep], dag[keep]
    contrib = peers[np.argmin(th, axis=1)].tolist()
    ids = sorted(set(contrib))
    rank = {u: 0 for u in ids}
    cover = {u: set() for u in ids}
    weight = {u: 0 for u in ids}
    for r, u in enumerate(contrib):
        rank[u] += 1
        cover[u].update(peers[dg[r]].tolist())
        weight[u] += int(dg[r].sum())
    if len(ids) < n_select:
        return [tuple(sorted(ids, key=lambda u: -rank[u]))]
    scored = [(c, len(set().union(*(cover[u] for u in c))), sum(weight[u] for u in c),
               sum(rank[u] for u in c)) for c in combinations(ids, n_select)]
    scored.sort(key=lambda t: (-t[1], -t[2], -t[3]))
    return [t[0] for t in scored]


@pytest.mark.parametrize("seed", range(4))
def test_rank_subsets_equals_the_set_by_set_rule(seed):
    """The vectorised ranking gives exactly the rule's order (ties: lexicographic), also with
    repeated column ids (windows where the node was not observed)."""
    rng = np.random.default_rng(seed)
    for trial in range(200):
        rows, q = int(rng.integers(1, 60)), int(rng.integers(1, 12))
        t_hat = rng.integers(0, 5, (rows, q)).astype(float)
        t_hat[rng.random((rows, q)) < 0.4] = np.inf
        dag = np.isinf(t_hat) & (rng.random((rows, q)) < 0.5)
        if trial % 2:
            peers = np.sort(rng.choice(100, q, replace=False))
        else:
            peers = np.sort(rng.integers(-1, 20, q))
        k = int(rng.integers(1, 4))
        assert rank_subsets(t_hat, dag, peers, k) == _rank_reference(t_hat, dag, peers, k)


def _counted_with_numpy(t_hat, dag, peers, n_select):
    """The ranking's contributor counts as numpy computed them before the kernel (argmin, a
    one-hot matrix product), then the same subset order."""
    from itertools import combinations

    keep = np.isfinite(t_hat).any(axis=1)
    if not keep.any():
        return []
    th, dg = t_hat[keep], dag[keep]
    ids, who, rank = np.unique(peers[np.argmin(th, axis=1)], return_inverse=True,
                               return_counts=True)
    won = np.zeros((len(ids), len(th)), dtype=np.int64)
    won[who.ravel(), np.arange(len(th))] = 1
    per_col = won @ dg.astype(np.int64)
    weight = per_col.sum(axis=1)
    if np.all(peers[1:] > peers[:-1]):
        cover = per_col > 0
    else:
        uid, col = np.unique(peers, return_inverse=True)
        cover = np.zeros((len(ids), len(uid)), dtype=bool)
        for j in range(len(uid)):
            cover[:, j] = per_col[:, col.ravel() == j].any(axis=1)
    if len(ids) < n_select:
        return [tuple(ids[np.argsort(-rank, kind="stable")].tolist())]
    combs = np.array(list(combinations(range(len(ids)), n_select)), dtype=np.int64)
    size = cover[combs].any(axis=1).sum(axis=1)
    order = np.lexsort((-rank[combs].sum(axis=1), -weight[combs].sum(axis=1), -size))
    return list(map(tuple, ids[combs[order]].tolist()))


def test_the_contributor_counts_kernel_ranks_as_numpy_did():
    """rank_subsets counts each contributor's rows and †s in one kernel: the same ranking as
    numpy's argmin and one-hot product on 3,000 random tables (ties, rows without a value,
    nan cells, repeated and unsorted peer ids)."""
    rng = np.random.default_rng(32)
    for _ in range(3000):
        p, q = int(rng.integers(1, 12)), int(rng.integers(1, 7))
        t_hat = rng.integers(0, 4, (p, q)).astype(float)
        t_hat[rng.random((p, q)) < 0.3] = np.inf
        if rng.random() < 0.1:
            t_hat[rng.random((p, q)) < 0.1] = np.nan
        dag = rng.random((p, q)) < 0.4
        peers = rng.choice(10, q, replace=bool(rng.random() < 0.3))
        if rng.random() < 0.5:
            peers = np.sort(peers)
        for n in (1, 2, 3):
            assert rank_subsets(t_hat, dag, peers, n) == _counted_with_numpy(t_hat, dag, peers, n)
