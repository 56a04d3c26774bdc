"""Goldfish's matrix constructor, cell classes and row distances (§IV-A, §IV-B, Table I)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from hedgerow.protocols.goldfish.knn import classify_dense, row_distances
from hedgerow.protocols.goldfish.matrix import (
    AMBIGUOUS,
    DAGGER,
    ESTIMABLE,
    INFEASIBLE,
    OBSERVED,
    WindowMatrix,
    classify,
    window_matrix,
)

INF = np.inf


@pytest.fixture
def table1():
    """Table I(a): epoch 1 peers n1 n2 n4, epoch 2 peers n1 n2 n3; t42 - t41 = t62 = t72."""
    e1 = np.array([[0, 5, 9], [INF, 0, INF], [0, 6, 8], [3, 7, 0]], dtype=float)
    e2 = np.array([[INF, 0, INF], [0, 4, 2], [0, 4, 5], [INF, 0, 1]], dtype=float)
    return window_matrix([np.array([1, 2, 4]), np.array([1, 2, 3])], [e1, e2])


def test_table1_cell_classes(table1):
    """Table I(b): a1..a5 estimable, m2[3], m5[4], m8[4] infeasible, † where (a) has †."""
    o, d, x, a = OBSERVED, DAGGER, INFEASIBLE, ESTIMABLE
    want = np.array([
        [o, o, a, o],
        [d, o, x, d],
        [o, o, a, o],
        [o, o, a, o],
        [d, o, d, x],
        [o, o, o, a],
        [o, o, o, a],
        [d, o, o, x],
    ])
    cl = classify(table1, k=2)
    assert table1.peers.tolist() == [1, 2, 3, 4]
    np.testing.assert_array_equal(cl.classes, want)
    assert cl.cells.tolist() == [[0, 2], [2, 2], [3, 2], [5, 3], [6, 3]]


def test_table1_zero_distance_rows(table1):
    """§IV-B2's example: g(m4, m6) = g(m4, m7) = 0, so m4, m6, m7 are grouped."""
    cl = classify(table1, k=2)
    g = cl.distance
    assert g[3, 5] == pytest.approx(0.0, abs=1e-15)
    assert g[3, 6] == pytest.approx(0.0, abs=1e-15)
    assert g[3, 0] > 0.0
    # m6[4] and m7[4] (a4, a5) take m4 among their nearest rows, with the largest weight
    for v in (3, 4):
        assert cl.neighbours[v, 0] == 3
        assert cl.weights[v, 0] >= cl.weights[v, 1]
    np.testing.assert_allclose(cl.weights.sum(axis=1), 1.0)
    # rows with one common observed peer have no distance
    assert np.isnan(g[1, 7])


def test_a_dagger_among_the_nearest_rows_makes_the_cell_ambiguous():
    """Row 0 misses peer 3; its nearest row got the block from us at peer 3 (†): ‡."""
    e1 = np.array([[0, 2, 4]], dtype=float)  # peers 1, 2, 3(missing)
    e2 = np.array([[0, 2, 4, INF], [0, 7, 1, 5]], dtype=float)  # peers 1, 2, 4, 3
    wm = window_matrix([np.array([1, 2, 4]), np.array([1, 2, 4, 3])], [e1, e2])
    cl = classify(wm, k=1)
    assert wm.peers.tolist() == [1, 2, 3, 4]
    assert cl.classes[0, 2] == AMBIGUOUS
    cl2 = classify(wm, k=2)  # the tie rule: the † row is nearest, still ambiguous with K=2
    assert cl2.classes[0, 2] == AMBIGUOUS


def test_values_and_masks_of_the_window_matrix(table1):
    assert table1.values.shape == (8, 4)
    assert table1.observed.sum() == 19 and table1.dagger.sum() == 5
    assert not (table1.observed & table1.dagger).any()
    assert table1.values[3].tolist() == [3.0, 7.0, 0.0, 0.0]


def test_the_window_matrix_kernel_fills_as_numpy_did():
    """window_matrix fills each epoch in one kernel: the same values and masks as numpy's fancy
    assignments, on 300 random windows (empty slots, unsorted peers, nan, † and strided
    observation tables as the protocol slices them)."""
    rng = np.random.default_rng(27)
    for _ in range(300):
        peers, rels = [], []
        for _e in range(int(rng.integers(1, 4))):
            width = int(rng.integers(1, 6))
            pe = rng.choice(12, width, replace=False)
            pe[rng.random(width) < 0.2] = -1
            big = rng.uniform(0, 50, (int(rng.integers(0, 6)), 3, width))
            big[rng.random(big.shape) < 0.2] = np.inf
            big[rng.random(big.shape) < 0.2] = np.nan
            peers.append(pe)
            rels.append(big[:, 1])  # one node's observations: a strided view
        if all((p < 0).all() for p in peers):
            continue
        wm = window_matrix(peers, rels)
        cols = np.unique(np.concatenate([p[p >= 0] for p in peers]))
        assert wm.peers.tolist() == cols.tolist()
        r0 = 0
        for pe, re in zip(peers, rels, strict=True):
            ok = pe >= 0
            c = np.searchsorted(cols, pe[ok])
            block = re[:, ok]
            sl = slice(r0, r0 + len(re))
            assert np.array_equal(wm.values[sl][:, c], np.where(np.isfinite(block), block, 0.0))
            assert np.array_equal(wm.observed[sl][:, c], np.isfinite(block))
            assert np.array_equal(wm.dagger[sl][:, c], np.isposinf(block))
            rest = np.setdiff1d(np.arange(len(cols)), c)
            assert not wm.observed[sl][:, rest].any() and not wm.dagger[sl][:, rest].any()
            assert not wm.values[sl][:, rest].any()
            r0 += len(re)
        assert r0 == wm.values.shape[0]


def test_fewer_than_k_peering_rows_follow_the_authors_code():
    """One peering row (row 1) for cell (0, 3), and a † at column 3 in a row that is not a
    peering row (row 2 shares one observed peer with row 0): ambiguous, as the authors'
    completer classifies it (checked by running it); without that † it is estimable."""
    values = np.array([[0, 5, 7, 0], [0, 4, 6, 3], [0, 0, 0, 0]], dtype=float)
    observed = np.array([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=bool)
    dagger = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 1]], dtype=bool)
    peers = np.array([1, 2, 3, 4])
    cl = classify(WindowMatrix(values, observed, dagger, peers), k=2)
    assert cl.classes[0, 3] == AMBIGUOUS
    dagger[2, 3] = False
    cl = classify(WindowMatrix(values, observed, dagger, peers), k=2)
    assert cl.classes[0, 3] == ESTIMABLE
    assert cl.neighbours.tolist() == [[1, -1]]



@numba.njit
def _classify_sorted(x, obs, dag, k):
    """The classifier as it was (verbatim): every missing cell sorts all its peering rows
    (mergesort, ties by row index).  The reference for the one-pass K-nearest scan."""
    p, q = x.shape
    g = row_distances(x, obs)
    classes = np.empty((p, q), dtype=np.int8)
    nobs = np.zeros(p, dtype=np.int64)
    for r in range(p):
        for j in range(q):
            if obs[r, j]:
                nobs[r] += 1
    cells = np.empty((p * q, 2), dtype=np.int64)
    nbrs = np.full((p * q, k), -1, dtype=np.int64)
    wts = np.zeros((p * q, k))
    s = 0
    cand = np.empty(p, dtype=np.int64)
    cg = np.empty(p)
    for r in range(p):
        for u in range(q):
            if obs[r, u]:
                classes[r, u] = OBSERVED
                continue
            if dag[r, u]:
                classes[r, u] = DAGGER
                continue
            if nobs[r] <= 1:
                classes[r, u] = INFEASIBLE
                continue
            # peering rows: u observed or dagger there, >= 2 common observed peers with r
            nc = 0
            for i in range(p):
                if i != r and (obs[i, u] or dag[i, u]) and not np.isnan(g[r, i]):
                    cand[nc] = i
                    cg[nc] = g[r, i]
                    nc += 1
            if nc == 0:
                classes[r, u] = INFEASIBLE
                continue
            order = np.argsort(cg[:nc], kind="mergesort")  # stable: ties by row index
            take = min(k, nc)
            gk = cg[order[take - 1]]
            amb = False
            if nc < k:
                # fewer than K peering rows: a † anywhere in the column makes it ambiguous
                for i in range(p):
                    if dag[i, u]:
                        amb = True
                        break
            for t in range(nc):
                i = cand[order[t]]
                if amb or cg[order[t]] > gk:
                    break
                if dag[i, u]:
                    amb = True
                    break
            if amb:
                classes[r, u] = AMBIGUOUS
                continue
            classes[r, u] = ESTIMABLE
            cells[s, 0] = r
            cells[s, 1] = u
            gmin = cg[order[0]]
            tot = 0.0
            for t in range(take):
                nbrs[s, t] = cand[order[t]]
                e = np.exp(-(cg[order[t]] - gmin))
                wts[s, t] = e
                tot += e
            for t in range(take):
                wts[s, t] /= tot
            s += 1
    return classes, cells[:s].copy(), nbrs[:s].copy(), wts[:s].copy(), g

@pytest.mark.parametrize("seed", range(30))
def test_one_pass_nearest_rows_match_the_sorting_classifier(seed):
    """Cell classes, neighbours and weights equal the sort-per-cell classifier's, bit for bit,
    on random windows with ties (rounded values), daggers and sparse observations."""
    from hedgerow.protocols.goldfish.knn import classify_cells, classify_dense

    rng = np.random.default_rng(seed)
    p, q, k = int(rng.integers(3, 40)), int(rng.integers(2, 10)), int(rng.integers(1, 4))
    x = np.round(rng.uniform(0, 1, (p, q)), int(rng.integers(1, 3)))
    kind = rng.random((p, q))
    obs = kind < rng.uniform(0.3, 0.9)
    dag = ~obs & (kind > rng.uniform(0.85, 1.0))
    x = np.where(obs, x, 0.0)
    got = classify_cells(x, obs, dag, k)
    ref = _classify_sorted(x, obs, dag, k)
    for a, b in zip(got, ref[:4], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(classify_dense(x, obs, dag, k)[4], ref[4])  # nan == nan


def _epoch_window(rng, epochs, rows, peers, q):
    """A window shaped like the protocol's: every row of an epoch peers the same columns (each
    observed or †), the others missing; rounded values make ties."""
    obs, dag = np.zeros((epochs * rows, q), bool), np.zeros((epochs * rows, q), bool)
    for e in range(epochs):
        cols = rng.choice(q, size=min(peers, q), replace=False)
        sl = slice(e * rows, (e + 1) * rows)
        d = rng.random((rows, len(cols))) < rng.uniform(0.0, 0.4)
        obs[sl, cols] = ~d
        dag[sl, cols] = d
    x = np.where(obs, np.round(rng.uniform(0, 1, obs.shape), int(rng.integers(1, 4))), 0.0)
    return x, obs, dag


@pytest.mark.parametrize("seed", range(12))
def test_the_row_sweep_equals_the_dense_classifier(seed):
    """The masked row sweep (blocks of rows skipped, per-group K nearest merged) gives the
    dense classifier's classes, neighbours and weights bit for bit: on epoch-shaped windows
    of several blocks and on random ones with many groups; above MASK_COLUMNS columns the
    dense path is taken."""
    from hedgerow.protocols.goldfish.knn import BLOCK_ROWS, MASK_COLUMNS, classify_cells

    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(1, 4))
    if seed % 3 == 0:
        x, obs, dag = _epoch_window(rng, 3, int(rng.integers(200, 500)), 8, 14)
    elif seed % 3 == 1:
        x, obs, dag = _epoch_window(rng, 2, BLOCK_ROWS + int(rng.integers(1, 60)), 5, 9)
    else:
        p, q = int(rng.integers(60, 300)), int(rng.integers(3, 20))
        x = np.round(rng.uniform(0, 1, (p, q)), 1)
        kind = rng.random((p, q))
        obs = kind < 0.6
        dag = ~obs & (kind > 0.9)
        x = np.where(obs, x, 0.0)
    got = classify_cells(x, obs, dag, k)
    ref = classify_dense(x, obs, dag, k)
    assert len(got[1]) > 0
    for a, b in zip(got, ref[:4], strict=True):
        np.testing.assert_array_equal(a, b)
    if seed == 0:
        wide = np.zeros((x.shape[0], MASK_COLUMNS + 2))
        wide[:, : x.shape[1]] = x
        wo = np.zeros(wide.shape, bool)
        wo[:, : x.shape[1]] = obs
        wd = np.zeros(wide.shape, bool)
        wd[:, : x.shape[1]] = dag
        classes, cells, nbrs, w = classify_cells(wide, wo, wd, k)  # the dense path
        np.testing.assert_array_equal(classes[:, : x.shape[1]], ref[0])
        assert (classes[:, x.shape[1]:] == INFEASIBLE).all()  # columns nobody peers
        for a, b in zip((cells, nbrs, w), ref[1:4], strict=True):
            np.testing.assert_array_equal(a, b)


def _distances_two_pass(x, obs):
    """The row distances as they were computed: two passes over the common columns."""
    p, q = x.shape
    g = np.full((p, p), np.nan)
    for r in range(p):
        for i in range(r + 1, p):
            common = [j for j in range(q) if obs[r, j] and obs[i, j]]
            if len(common) < 2:
                continue
            s1 = 0.0
            for j in common:
                s1 += x[r, j] - x[i, j]
            mean = s1 / len(common)
            ss = 0.0
            for j in common:
                d = x[r, j] - x[i, j] - mean
                ss += d * d
            g[r, i] = g[i, r] = ss / (len(common) - 1)
    return g


@pytest.mark.parametrize("seed", range(10))
def test_row_distances_match_the_two_pass_formula_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    p, q = int(rng.integers(2, 30)), int(rng.integers(1, 12))
    x = np.round(rng.uniform(0, 1, (p, q)), int(rng.integers(1, 4)))
    obs = rng.random((p, q)) < rng.uniform(0.2, 1.0)
    np.testing.assert_array_equal(row_distances(x, obs), _distances_two_pass(x, obs))


def _publisher_window(rng, epochs, rows, peers, q, publishers):
    """An epoch-shaped window whose blocks come from a few publishers: every block of one
    publisher in an epoch has the same row, as on the protocol's worlds (a block reaches a node
    along its publisher's paths)."""
    x, obs, dag = _epoch_window(rng, epochs, publishers, peers, q)
    pick = np.concatenate([e * publishers + rng.integers(0, publishers, rows)
                           for e in range(epochs)])
    return (np.ascontiguousarray(x[pick]), np.ascontiguousarray(obs[pick]),
            np.ascontiguousarray(dag[pick]))


@pytest.mark.parametrize("seed", range(12))
def test_copies_of_a_row_are_swept_once_with_the_same_classes(seed):
    """Windows whose rows repeat (a few publishers per epoch, rounded values for ties between
    distinct rows too): the sweep over the distinct rows gives the dense classifier's classes,
    neighbours and weights bit for bit, ties between copies of one row and other rows broken
    by row index as before."""
    from hedgerow.protocols.goldfish.knn import classify_cells, classify_dense, unique_rows

    rng = np.random.default_rng(300 + seed)
    k = int(rng.integers(1, 4))
    if seed % 2:
        x, obs, dag = _publisher_window(rng, 3, int(rng.integers(60, 400)), 6, 10,
                                        int(rng.integers(2, 30)))
    else:
        p, q = int(rng.integers(40, 200)), int(rng.integers(3, 12))
        base = np.round(rng.uniform(0, 1, (p // 3 + 1, q)), 1)
        kind = rng.random(base.shape)
        bobs = kind < 0.7
        bdag = ~bobs & (kind > 0.85)
        pick = rng.integers(0, len(base), p)
        x = np.ascontiguousarray(np.where(bobs, base, 0.0)[pick])
        obs, dag = np.ascontiguousarray(bobs[pick]), np.ascontiguousarray(bdag[pick])
    cls, rep, mptr, mrow = unique_rows(x, obs, dag)
    assert len(rep) < x.shape[0]  # copies there are
    for c in range(len(rep)):
        rows = mrow[mptr[c]:mptr[c + 1]]
        assert rows[0] == rep[c] and (np.diff(rows) > 0).all() and (cls[rows] == c).all()
        assert (x[rows] == x[rep[c]]).all() and (obs[rows] == obs[rep[c]]).all()
        assert (dag[rows] == dag[rep[c]]).all()
    assert len({(x[r].tobytes(), obs[r].tobytes(), dag[r].tobytes()) for r in rep}) == len(rep)
    got = classify_cells(x, obs, dag, k)
    ref = classify_dense(x, obs, dag, k)
    assert len(got[1]) > 0
    for a, b in zip(got, ref[:4], strict=True):
        np.testing.assert_array_equal(a, b)


def test_ties_between_copies_of_rows_in_several_groups():
    """Many small windows of a few distinct rows with values 0 or 0.5: distances tie across
    rows, copies and groups, so a cell's K nearest mix copies of one row with other rows met
    between them; classes, neighbours and weights stay the dense classifier's."""
    from hedgerow.protocols.goldfish.knn import classify_cells, classify_dense

    rng = np.random.default_rng(7)
    for _ in range(1500):
        p, q, nb = int(rng.integers(6, 60)), int(rng.integers(3, 7)), int(rng.integers(2, 8))
        base = rng.integers(0, 2, size=(nb, q)) / 2
        bobs = rng.random((nb, q)) < 0.7
        bdag = ~bobs & (rng.random((nb, q)) < 0.2)
        pick = rng.integers(0, nb, size=p)
        x = np.ascontiguousarray(np.where(bobs, base, 0.0)[pick])
        obs, dag = np.ascontiguousarray(bobs[pick]), np.ascontiguousarray(bdag[pick])
        k = int(rng.integers(2, 4))
        for a, b in zip(classify_cells(x, obs, dag, k), classify_dense(x, obs, dag, k)[:4],
                        strict=True):
            np.testing.assert_array_equal(a, b)


def test_real_windows_classify_as_the_dense_classifier():
    """Windows of a small ``unit-square`` run (epochs of several groups, copies of rows, †
    cells): the pair sweep's classes, neighbours and weights are the dense classifier's bit for
    bit, for K from 1 to 4 (lists with free slots and full ones)."""
    from hedgerow.protocols.goldfish import Goldfish
    from hedgerow.protocols.goldfish.knn import classify_cells, unique_rows
    from hedgerow.scenarios.epochs import run_protocol
    from hedgerow.scenarios.world import make_world

    g = Goldfish()
    g.mode = lambda epoch: "acc"  # fill the window only
    run_protocol(g, make_world("unit-square", seed=3, epochs=g.window, nodes=120, messages=240))
    swept = 0
    for v in g.nodes_[:8].tolist():
        wm = g.node_matrix(v)
        obs = np.ascontiguousarray(wm.observed)
        x = np.ascontiguousarray(wm.values / wm.values[obs].max())
        dag = np.ascontiguousarray(wm.dagger)
        swept += len(unique_rows(x, obs, dag)[1]) < x.shape[0]
        for k in (1, 2, 3, 4):
            got = classify_cells(x, obs, dag, k)
            ref = classify_dense(x, obs, dag, k)
            assert len(got[1]) > 0
            for a, b in zip(got, ref[:4], strict=True):
                np.testing.assert_array_equal(a, b)
    assert swept > 0  # copies of rows were merged


@pytest.mark.parametrize("seed", range(6))
def test_lists_with_free_slots_count_the_copies_of_their_rows(seed):
    """Few distinct rows per epoch, many copies, K up to 5: a group's list of K nearest holds
    fewer distinct rows than K while its copies reach or pass K, and a † column makes the
    cell ambiguous only when fewer than K peering rows (copies counted) there are; the classes
    stay the dense classifier's."""
    from hedgerow.protocols.goldfish.knn import classify_cells

    rng = np.random.default_rng(500 + seed)
    for _ in range(40):
        x, obs, dag = _publisher_window(rng, int(rng.integers(2, 4)), int(rng.integers(4, 30)),
                                        4, 7, int(rng.integers(1, 3)))
        k = int(rng.integers(2, 6))
        for a, b in zip(classify_cells(x, obs, dag, k), classify_dense(x, obs, dag, k)[:4],
                        strict=True):
            np.testing.assert_array_equal(a, b)
