"""Goldfish's completion (eq. 1-2): planted recovery, convergence, the paper's Adam."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols.goldfish.complete import build_problem, completed, loss, solve
from hedgerow.protocols.goldfish.matrix import INFEASIBLE, classify, window_matrix


def planted(seed, n_pub=3, q=8, width=5, per_epoch=40, epochs=3):
    """Rows from ``n_pub`` publishers, each a fixed per-peer delay profile seen relative to its
    fastest observed peer: a row's unknown cells follow from any row of the same publisher."""
    rng = np.random.default_rng(seed)
    prof = rng.uniform(0, 300, (n_pub, q))
    peers, rels, truth = [], [], []
    for _ in range(epochs):
        cols = np.sort(rng.choice(q, width, replace=False))
        pubs = rng.integers(0, n_pub, per_epoch)
        y = prof[pubs][:, cols]
        low = y.min(axis=1, keepdims=True)
        peers.append(cols + 100)
        rels.append(y - low)
        truth.append(prof[pubs] - low)
    return window_matrix(peers, rels), np.vstack(truth)


@pytest.mark.parametrize("seed", range(12))
def test_planted_matrices_are_recovered_within_1ms(seed):
    wm, truth = planted(seed)
    cl = classify(wm, k=2)
    assert len(cl.cells) > 0
    sol = solve(build_problem(wm, cl))
    rel = (sol.a - sol.c[cl.cells[:, 0]]) * cl.scale  # estimate in the row's own frame
    want = truth[cl.cells[:, 0], wm.peers[cl.cells[:, 1]] - 100]
    assert np.abs(rel - want).max() < 1.0
    # the completed matrix keeps every observed difference within a row
    t_hat = completed(wm, cl, sol)
    r = cl.cells[0, 0]
    o = np.flatnonzero(wm.observed[r])
    np.testing.assert_allclose(np.diff(t_hat[r, o]), np.diff(wm.values[r, o]), atol=1e-6)


def noisy(seed):
    wm, _ = planted(seed, n_pub=5)
    rng = np.random.default_rng(seed + 100)
    wm.values[wm.observed] += rng.uniform(0, 15, wm.observed.sum())
    return wm


@pytest.mark.parametrize("seed", range(2))
def test_mm_loss_within_0_1_percent_of_a_long_solve(seed):
    """The objective is convex; the long solve is 20,000 Adam steps with a decaying rate."""
    wm = noisy(seed)
    cl = classify(wm, k=2)
    prob = build_problem(wm, cl)
    mm = solve(prob)
    rng = np.random.default_rng(seed)
    long = solve(prob, method="adam", rng=rng, max_steps=10000, early_stop=False, lr=1e-2)
    from hedgerow.protocols.goldfish import complete as C

    a, c = long.a.copy(), long.c.copy()
    C._adam(a, c, prob.var, prob.row, prob.nbr, prob.weight, prob.n_common, prob.s1, prob.s2,
            prob.x_o, 1e-4, 10000, False, 1e-3)
    ref = min(long.loss, loss(prob, a, c))
    assert mm.loss <= ref * 1.001
    assert mm.loss >= ref * (1 - 1e-3)  # both reach the same optimum


def test_paper_adam_uses_a_fresh_stopper_and_at_most_2000_steps():
    wm = noisy(7)
    prob = build_problem(wm, classify(wm, k=2))
    a = solve(prob, method="adam", rng=np.random.default_rng(1))
    b = solve(prob, method="adam", rng=np.random.default_rng(1))
    assert 3 <= a.steps <= 2000 and a.steps == b.steps and a.loss == b.loss
    full = solve(prob, method="adam", rng=np.random.default_rng(1), early_stop=False)
    assert full.steps == 2000
    assert solve(prob).loss <= a.loss


def test_infeasible_cells_stay_unknown_in_the_completed_matrix():
    wm, _ = planted(3)
    wm.observed[0] = False
    wm.observed[0, np.flatnonzero(wm.values[0] == 0)[:1]] = True
    cl = classify(wm, k=2)
    t_hat = completed(wm, cl, solve(build_problem(wm, cl)))
    assert (cl.classes[0] == INFEASIBLE).sum() == wm.values.shape[1] - 1
    assert np.isinf(t_hat[0][cl.classes[0] == INFEASIBLE]).all()


def varied(seed):
    """Planted windows with noise, of varied shape (publishers, peers, width, rows)."""
    rng = np.random.default_rng(1000 + seed)
    wm, _ = planted(seed, n_pub=int(rng.integers(2, 9)), q=int(rng.integers(6, 14)),
                    width=int(rng.integers(4, 7)), per_epoch=int(rng.integers(10, 41)))
    wm.values[wm.observed] += rng.uniform(0, 30, wm.observed.sum())
    return wm


def test_mm_default_stop_within_0_1_percent_of_a_converged_solve_on_many_windows():
    """The default stopping rule against a long solve (tolerance 1e-14, ε down to 1e-13, dense
    Cholesky): within 0.1% on every window, and within 1e-4 (its measured margin) too."""
    worst = 0.0
    for seed in range(40):
        wm = varied(seed)
        prob = build_problem(wm, classify(wm, k=2))
        if prob.n_vars == 0:
            continue
        fast = solve(prob)
        ref = solve(prob, tol=1e-14, floor=1e-13, shrink=0.5, max_steps=3000, envelope=False)
        assert fast.loss <= ref.loss * 1.001
        worst = max(worst, fast.loss / ref.loss - 1)
    assert worst < 1e-4


def test_envelope_cholesky_solves_the_same_system_as_the_dense_one():
    """Reordering the rows (reverse Cuthill-McKee) and factoring within the envelope changes
    only rounding: the same iterates, step for step."""
    for seed in range(8):
        wm = varied(seed)
        prob = build_problem(wm, classify(wm, k=2))
        for steps in (1, 3, 8):
            env = solve(prob, max_steps=steps)
            dense = solve(prob, max_steps=steps, envelope=False)
            assert env.steps == dense.steps
            np.testing.assert_allclose(env.loss, dense.loss, rtol=1e-9)
            np.testing.assert_allclose(env.c, dense.c, atol=1e-6)


def test_sparse_cholesky_solves_the_same_system_as_the_envelope():
    """The minimum-degree order and the sparse Cholesky change only rounding: the same iterates
    step by step, and the converged solve within 1e-8 of the envelope's loss."""
    for seed in range(8):
        wm = varied(seed)
        prob = build_problem(wm, classify(wm, k=2))
        for steps in (1, 3, 8, 500):
            sp = solve(prob, max_steps=steps, sparse=True)
            env = solve(prob, max_steps=steps, sparse=False)
            np.testing.assert_allclose(sp.loss, env.loss, rtol=1e-8)
            np.testing.assert_allclose(sp.c, env.c, atol=1e-5)
            if steps < 500:
                assert sp.steps == env.steps


def test_large_windows_go_sparse_by_default_and_small_ones_keep_the_envelope():
    """Windows above SPARSE_ROWS rows take the sparse factor (same loss as the envelope within
    1e-8); the paper-sized windows keep the envelope, bit for bit."""
    from hedgerow.protocols.goldfish.complete import SPARSE_ROWS

    wm, _ = planted(5, n_pub=30, q=14, width=9, per_epoch=SPARSE_ROWS // 3 + 20)
    wm.values[wm.observed] += np.random.default_rng(5).uniform(0, 30, wm.observed.sum())
    prob = build_problem(wm, classify(wm, k=2))
    assert prob.n_rows > SPARSE_ROWS
    auto = solve(prob)
    sp = solve(prob, sparse=True)
    env = solve(prob, sparse=False)
    assert auto.loss == sp.loss and np.array_equal(auto.c, sp.c)
    np.testing.assert_allclose(auto.loss, env.loss, rtol=1e-8)
    small = build_problem(varied(3), classify(varied(3), k=2))
    assert small.n_rows <= SPARSE_ROWS
    a, b = solve(small), solve(small, sparse=False)
    assert a.loss == b.loss and np.array_equal(a.c, b.c) and np.array_equal(a.a, b.a)


def test_the_dense_trailing_block_changes_only_rounding():
    """The sparse factor's dense trailing rows (dot products over rows) against the plain
    up-looking factorisation: the same iterates step by step, losses within 1e-8, on windows
    above SPARSE_ROWS rows whose factor has such a tail."""
    from hedgerow.protocols.goldfish.complete import (
        DENSE_TAIL,
        SPARSE_ROWS,
        _lower_pattern,
        _pattern_edges,
        _sparse_symbolic,
        _var_terms,
        dense_tail,
        min_degree_order,
    )

    for seed in range(3):
        wm, _ = planted(seed, n_pub=30, q=14, width=9, per_epoch=SPARSE_ROWS // 3 + 20)
        wm.values[wm.observed] += np.random.default_rng(seed).uniform(0, 30, wm.observed.sum())
        prob = build_problem(wm, classify(wm, k=2))
        start, order = _var_terms(prob.var, prob.n_vars)
        ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, order)
        aptr, aidx = _lower_pattern(ea, eb, min_degree_order(prob), prob.n_rows)
        lp = _sparse_symbolic(aptr, aidx, prob.n_rows)[1]
        assert prob.n_rows - dense_tail(lp) >= DENSE_TAIL
        for steps in (1, 3, 500):
            fast = solve(prob, max_steps=steps, sparse=True)
            plain = solve(prob, max_steps=steps, sparse=True, dense=False)
            np.testing.assert_allclose(fast.loss, plain.loss, rtol=1e-8)
            np.testing.assert_allclose(fast.c, plain.c, atol=1e-6)
            if steps < 500:
                assert fast.steps == plain.steps


def _large(seed):
    """A window above SPARSE_ROWS rows (the sparse factor's), planted with noise."""
    from hedgerow.protocols.goldfish.complete import SPARSE_ROWS

    wm, _ = planted(seed, n_pub=30, q=14, width=9, per_epoch=SPARSE_ROWS // 3 + 20)
    wm.values[wm.observed] += np.random.default_rng(seed).uniform(0, 30, wm.observed.sum())
    return build_problem(wm, classify(wm, k=2))


def test_the_numba_minimum_degree_order_factors_like_superlus():
    """md_order is a permutation whose factor is within 25% of SuperLU's multiple minimum
    degree's, and solving in it changes only rounding: the same iterates step by step, the
    converged loss within 1e-8."""
    from hedgerow.protocols.goldfish.complete import (
        _lower_pattern,
        _pattern_edges,
        _sparse_symbolic,
        _var_terms,
        min_degree_order,
    )

    for seed in range(3):
        prob = _large(seed)
        start, terms = _var_terms(prob.var, prob.n_vars)
        ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, terms)
        nnz = {}
        for order in ("mmd", "md"):
            pos = min_degree_order(prob, order)
            assert sorted(pos.tolist()) == list(range(prob.n_rows))
            aptr, aidx = _lower_pattern(ea, eb, pos, prob.n_rows)
            nnz[order] = int(_sparse_symbolic(aptr, aidx, prob.n_rows)[1][-1])
        assert nnz["md"] <= 1.25 * nnz["mmd"]
        for steps in (1, 3, 8, 500):
            md = solve(prob, max_steps=steps, order="md")
            mmd = solve(prob, max_steps=steps)
            np.testing.assert_allclose(md.loss, mmd.loss, rtol=1e-8)
            if steps < 500:
                assert md.steps == mmd.steps
    with pytest.raises(ParameterError, match="order"):
        min_degree_order(_large(0), "amd")


def test_the_fast_completion_stays_within_2e_3_of_a_converged_solve():
    """completion="mm-fast" (FAST_MM: a looser stop, a faster ε schedule, over-relaxed steps,
    the numba order) against a long solve, on paper-sized and large windows: within 2e-3 of
    the converged loss (the default stop: within 1e-4)."""
    from hedgerow.protocols.goldfish.complete import FAST_MM

    probs = [build_problem(wm, classify(wm, k=2)) for wm in map(varied, range(30))]
    probs += [_large(seed) for seed in range(3)]
    worst = 0.0
    for prob in probs:
        if prob.n_vars == 0:
            continue
        fast = solve(prob, **FAST_MM)
        ref = solve(prob, tol=1e-14, floor=1e-13, shrink=0.5, max_steps=3000)
        worst = max(worst, fast.loss / ref.loss - 1)
    assert worst < 2e-3


def test_over_relaxation_off_is_the_plain_solver():
    """relax=1 is the plain MM, bit for bit; relax > 1 keeps a point only when it lowers the
    loss, so a relaxed solve never ends above its own first step."""
    prob = _large(1)
    plain = solve(prob)
    one = solve(prob, relax=1.0)
    assert plain.loss == one.loss and np.array_equal(plain.c, one.c)
    first = solve(prob, max_steps=1)
    assert solve(prob, relax=1.8).loss <= first.loss


def test_more_tries_and_reused_factors_keep_the_loss_falling():
    """tries=1 and reuse=0 are the over-relaxed solver as it was, bit for bit; further tries
    and steps on conjugate gradients preconditioned by an older factor keep every step's loss
    at or below the one before (each still lowers the majoriser) and end within 2e-3 of a
    converged solve."""
    from hedgerow.protocols.goldfish.complete import FAST_MM

    for seed in range(3):
        prob = _large(seed)
        base = {k: v for k, v in FAST_MM.items() if k not in ("tries", "reuse", "inner")}
        old = solve(prob, **base)
        same = solve(prob, **base, tries=1, reuse=0)
        assert old.loss == same.loss and np.array_equal(old.c, same.c) and old.steps == same.steps
        ref = solve(prob, tol=1e-14, floor=1e-13, shrink=0.5, max_steps=3000)
        fast = solve(prob, **FAST_MM)
        assert fast.loss / ref.loss - 1 < 2e-3
        losses = [solve(prob, **{**FAST_MM, "max_steps": m}).loss for m in range(1, fast.steps + 1)]
        assert all(b <= a for a, b in itertools.pairwise(losses))
        assert losses[-1] == fast.loss


def test_preconditioned_conjugate_gradients_lower_the_quadratic():
    """The reused-factor solve: from any start, each conjugate-gradient step lowers
    x m x / 2 - b x, and with enough steps it reaches the factor's solution."""
    from hedgerow.protocols.goldfish.complete import (
        _dense_tail,
        _lower_pattern,
        _pattern_edges,
        _pcg,
        _sparse_chol_solve,
        _sparse_symbolic,
        _symv,
        _var_terms,
        min_degree_order,
    )

    prob = _large(2)
    p = prob.n_rows
    start, order = _var_terms(prob.var, prob.n_vars)
    ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, order)
    aptr, aidx = _lower_pattern(ea, eb, min_degree_order(prob, "md"), p)
    _parent, lp, rptr, ridx = _sparse_symbolic(aptr, aidx, p)
    n1 = _dense_tail(lp, True)
    rng = np.random.default_rng(0)
    vals = np.concatenate([4.0 + rng.random(p), -0.3 * rng.random(len(aidx))])
    li, lx = np.empty(lp[p], dtype=np.int64), np.empty(lp[p])
    ld = np.zeros((p - n1, p - n1))
    b = rng.normal(size=p)
    exact = np.empty(p)
    _sparse_chol_solve(vals, aptr, aidx, rptr, ridx, lp, li, lx, b, exact, np.zeros(p),
                       np.empty(p, dtype=np.int64), n1, ld)
    # a factor of a different matrix (the diagonal scaled) as the preconditioner
    old = vals.copy()
    old[:p] *= 1.5
    _sparse_chol_solve(old, aptr, aidx, rptr, ridx, lp, li, lx, b, np.empty(p), np.zeros(p),
                       np.empty(p, dtype=np.int64), n1, ld)
    y = np.empty(p)

    def quad(x):
        _symv(vals, aptr, aidx, x, y)
        return 0.5 * x @ y - b @ x

    x0 = rng.normal(size=p)
    last = quad(x0)
    for iters in range(1, 6):
        x = x0.copy()
        _pcg(vals, aptr, aidx, lp, li, lx, n1, ld, b, x, iters, *(np.empty(p) for _ in range(4)))
        assert quad(x) < last
        last = quad(x)
    x = x0.copy()
    _pcg(vals, aptr, aidx, lp, li, lx, n1, ld, b, x, 60, *(np.empty(p) for _ in range(4)))
    np.testing.assert_allclose(x, exact, rtol=1e-8, atol=1e-10)


def _md_reference(ea, eb, p):
    """Minimum degree on Python sets: eliminate a row of least degree (lowest row on ties),
    join its neighbours into a clique."""
    adj = [set() for _ in range(p)]
    for a, b in zip(ea.tolist(), eb.tolist(), strict=True):
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    alive, pos = set(range(p)), np.empty(p, dtype=np.int64)
    for k in range(p):
        v = min(alive, key=lambda r: (len(adj[r]), r))
        pos[v] = k
        alive.discard(v)
        nb = adj[v]
        for j in nb:
            adj[j] |= nb
            adj[j].discard(j)
            adj[j].discard(v)
    return pos


@pytest.mark.parametrize("seed", range(8))
def test_the_minimum_degree_order_is_the_plain_rule(seed):
    """md_order (rows kept by degree in bit rows) gives the order of the plain rule on sets, on
    random patterns with repeated entries, isolated rows and a dense core."""
    from hedgerow.protocols.goldfish.order import md_order

    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 300))
    m = int(rng.integers(0, 3 * p))
    ea, eb = rng.integers(0, p, m), rng.integers(0, p, m)
    core = rng.choice(p, size=min(p, 12), replace=False)
    ca, cb = np.meshgrid(core, core)
    ea = np.concatenate([ea, eb, ca.ravel()])
    eb = np.concatenate([eb, ea[:m], cb.ravel()])
    np.testing.assert_array_equal(md_order(ea, eb, p), _md_reference(ea, eb, p))


@pytest.mark.parametrize("seed", range(4))
def test_the_minimum_degree_order_numbers_a_final_clique_by_index(seed):
    """A dense core of 40-80 rows reached last through a sparse periphery: md_order numbers the
    core at once when the rows left form a clique, which is the order of the plain rule."""
    from hedgerow.protocols.goldfish.order import md_order

    rng = np.random.default_rng(seed)
    p = int(rng.integers(150, 400))
    core = rng.choice(p, size=int(rng.integers(40, 80)), replace=False)
    ca, cb = np.meshgrid(core, core)
    rest = np.setdiff1d(np.arange(p), core)
    ea = np.concatenate([ca.ravel(), rest, rng.integers(0, p, p // 2)])
    eb = np.concatenate([cb.ravel(), rng.choice(core, len(rest)), rng.integers(0, p, p // 2)])
    pos = md_order(np.concatenate([ea, eb]), np.concatenate([eb, ea]), p)
    np.testing.assert_array_equal(pos, _md_reference(np.concatenate([ea, eb]),
                                                     np.concatenate([eb, ea]), p))


def test_the_slots_found_row_by_row_are_the_binary_searches():
    """_sparse_slots gives every term's and every neighbour pair's slot as _slot does."""
    from hedgerow.protocols.goldfish.complete import (
        _lower_pattern,
        _pattern_edges,
        _slot,
        _sparse_slots,
        _var_terms,
        min_degree_order,
    )

    for seed in range(2):
        prob = _large(seed)
        p, t = prob.n_rows, len(prob.var)
        start, order = _var_terms(prob.var, prob.n_vars)
        ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, order)
        pos = min_degree_order(prob, "md")
        aptr, aidx = _lower_pattern(ea, eb, pos, p)
        rp, op = pos[prob.row], pos[prob.nbr]
        n_pairs = int((np.diff(start) ** 2).sum())
        so, sr, sx = (np.empty(t, dtype=np.int64) for _ in range(3))
        pslot = np.full(n_pairs, -1, dtype=np.int64)
        _sparse_slots(op, rp, start, order, p, aptr, aidx, so, sr, sx, pslot)
        for i in range(t):
            o, r = int(op[i]), int(rp[i])
            assert so[i] == _slot(o, o, p, True, aptr, aidx)
            assert sr[i] == _slot(r, r, p, True, aptr, aidx)
            assert sx[i] == (_slot(max(o, r), min(o, r), p, True, aptr, aidx) if o != r else -1)
        k = 0
        for v in range(prob.n_vars):
            for x1 in range(start[v], start[v + 1]):
                for x2 in range(start[v], start[v + 1]):
                    oi, oj = int(op[order[x1]]), int(op[order[x2]])
                    assert pslot[k] == (_slot(oi, oj, p, True, aptr, aidx) if oj <= oi else -1)
                    k += 1


def test_a_grown_dense_block_changes_only_rounding():
    """solve(fill=...) grows the dense trailing block over the columns that are full enough: a
    larger block, the same iterates up to rounding, the same number of steps; fill=1 is the
    default factor.  (These small windows' columns before the full block are nearly empty, so
    a low fill is what grows it here; on 3,000-row windows mm-fast's 0.35 does.)"""
    from hedgerow.protocols.goldfish.complete import (
        _lower_pattern,
        _pattern_edges,
        _sparse_symbolic,
        _var_terms,
        dense_tail,
        min_degree_order,
    )

    for seed in range(3):
        prob = _large(seed)
        start, order = _var_terms(prob.var, prob.n_vars)
        ea, eb = _pattern_edges(prob.row, prob.nbr, prob.var, start, order)
        aptr, aidx = _lower_pattern(ea, eb, min_degree_order(prob), prob.n_rows)
        lp = _sparse_symbolic(aptr, aidx, prob.n_rows)[1]
        assert dense_tail(lp, fill=0.05) < dense_tail(lp) < prob.n_rows
        for steps in (1, 3, 500):
            grown = solve(prob, max_steps=steps, fill=0.05)
            plain = solve(prob, max_steps=steps)
            np.testing.assert_allclose(grown.loss, plain.loss, rtol=1e-8)
            np.testing.assert_allclose(grown.c, plain.c, atol=1e-6)
            if steps < 500:
                assert grown.steps == plain.steps
        one = solve(prob, max_steps=3, fill=1.0)
        assert np.array_equal(one.c, solve(prob, max_steps=3).c)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 41])
def test_the_dense_block_two_rows_at_a_time_is_the_cholesky_factor(n):
    """_dense_pairs factors an SPD block in place (odd and even sizes) as numpy does."""
    from hedgerow.protocols.goldfish.complete import _dense_pairs

    m = np.random.default_rng(n).normal(size=(n, n))
    a = m @ m.T + n * np.eye(n)
    ld = a.copy()
    _dense_pairs(ld)
    np.testing.assert_allclose(np.tril(ld), np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)


def test_a_paired_dense_block_changes_only_rounding():
    """solve(paired=True) (the Schur complement gathered, then factored two rows at a time)
    against the row-by-row dense block: the same steps, losses within 1e-8."""
    for seed in range(2):
        prob = _large(seed)
        for steps in (1, 3, 500):
            paired = solve(prob, max_steps=steps, paired=True, fill=0.05)
            plain = solve(prob, max_steps=steps, fill=0.05)
            np.testing.assert_allclose(paired.loss, plain.loss, rtol=1e-8)
            np.testing.assert_allclose(paired.c, plain.c, atol=1e-6)
            if steps < 500:
                assert paired.steps == plain.steps



@pytest.mark.parametrize("n", [1, 3, 4, 5, 9, 40, 43])
def test_the_dense_block_four_rows_at_a_time_is_the_cholesky_factor(n):
    """_dense_quads factors an SPD block in place (sizes below, at and past multiples of four)
    as numpy does, and as _dense_pairs does up to rounding."""
    from hedgerow.protocols.goldfish.complete import _dense_pairs, _dense_quads

    m = np.random.default_rng(n).normal(size=(n, n))
    a = m @ m.T + n * np.eye(n)
    quads = a.copy()
    _dense_quads(quads)
    np.testing.assert_allclose(np.tril(quads), np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    pairs = a.copy()
    _dense_pairs(pairs)
    np.testing.assert_allclose(np.tril(quads), np.tril(pairs), rtol=1e-12, atol=1e-12)


def test_a_dense_block_four_rows_at_a_time_changes_only_rounding():
    """solve(paired=True, quads=True) (mm-fast's) against two rows at a time: the same steps,
    losses within 1e-8; quads without paired is the row-by-row block, bit for bit."""
    for seed in range(2):
        prob = _large(seed)
        for steps in (1, 3, 500):
            quads = solve(prob, max_steps=steps, paired=True, quads=True, fill=0.05)
            pairs = solve(prob, max_steps=steps, paired=True, fill=0.05)
            np.testing.assert_allclose(quads.loss, pairs.loss, rtol=1e-8)
            np.testing.assert_allclose(quads.c, pairs.c, atol=1e-6)
            if steps < 500:
                assert quads.steps == pairs.steps
        alone = solve(prob, max_steps=3, quads=True, fill=0.05)
        assert np.array_equal(alone.c, solve(prob, max_steps=3, fill=0.05).c)


def test_early_reused_factors_keep_the_loss_falling():
    """solve(early=n) reuses the factor from the second step on when the dense block has at
    least n rows: every step's loss at or below the one before, within 2e-3 of a converged
    solve, its second step already on the old factor; a block below n rows (or early=0) is the
    solver as it was, bit for bit."""
    from hedgerow.protocols.goldfish.complete import DENSE_TAIL, FAST_MM

    for seed in range(3):
        prob = _large(seed)
        soon = {**FAST_MM, "early": DENSE_TAIL}
        late = {**FAST_MM, "early": 0}
        never = {**FAST_MM, "early": 10 * prob.n_rows}
        a, b = solve(prob, **late), solve(prob, **never)
        assert a.loss == b.loss and np.array_equal(a.c, b.c) and a.steps == b.steps
        fast = solve(prob, **soon)
        ref = solve(prob, tol=1e-14, floor=1e-13, shrink=0.5, max_steps=3000)
        assert fast.loss / ref.loss - 1 < 2e-3
        losses = [solve(prob, **{**soon, "max_steps": m}).loss for m in range(1, fast.steps + 1)]
        assert all(y <= x for x, y in itertools.pairwise(losses))
        assert losses[-1] == fast.loss
        # the second step already reuses the factor: it differs from the waiting solver's
        assert solve(prob, **{**soon, "max_steps": 2}).loss != solve(
            prob, **{**late, "max_steps": 2}).loss
    with pytest.raises(ParameterError, match="early"):
        solve(_large(0), early=-1)

def test_bucket_is_a_stable_counting_sort():
    """csr.bucket groups entries by key in their order (numpy's stable argsort), with the
    pointer of each key's run, empty keys included."""
    from hedgerow.protocols.goldfish.csr import bucket

    rng = np.random.default_rng(6)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        keys = rng.integers(0, n, int(rng.integers(0, 60)))
        ptr, order = bucket(keys, n)
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()
        assert ptr.tolist() == [0, *np.cumsum(np.bincount(keys, minlength=n)).tolist()]


def test_the_points_along_a_step_in_closed_form_change_only_rounding():
    """solve(line=True) (mm-fast's) scores the over-relaxed points from each term's quadratic
    along the step: the terms' squares at both ends equal the direct ones up to rounding, and
    the solve takes the same steps to losses within 1e-8 of the direct scoring's."""
    from hedgerow.protocols.goldfish.complete import FAST_MM, _loss_line, _loss_norms

    prob = _large(2)
    rng = np.random.default_rng(0)
    a0, c0 = rng.normal(size=prob.n_vars), rng.normal(size=prob.n_rows)
    a1, c1 = rng.normal(size=prob.n_vars), rng.normal(size=prob.n_rows)
    t = len(prob.var)
    args = (prob.var, prob.row, prob.nbr, prob.weight, prob.n_common, prob.s1, prob.s2,
            prob.x_o)
    nrm, qa, qb, qc = np.empty(t), np.empty(t), np.empty(t), np.empty(t)
    cur = _loss_line(a1, c1, a0, c0, *args, nrm, qa, qb, qc)
    at1, at0 = np.empty(t), np.empty(t)
    assert cur == _loss_norms(a1, c1, *args, at1)
    _loss_norms(a0, c0, *args, at0)
    np.testing.assert_allclose(np.sqrt(np.maximum(qa + 2 * qb + qc, 0)), at1, rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.maximum(qa, 0)), at0, rtol=1e-9, atol=1e-9)
    for seed in range(3):
        prob = _large(seed)
        for steps in (2, 5, 500):
            closed = solve(prob, **{**FAST_MM, "max_steps": steps})
            direct = solve(prob, **{**FAST_MM, "max_steps": steps, "line": False})
            np.testing.assert_allclose(closed.loss, direct.loss, rtol=1e-8)
            assert closed.steps == direct.steps


def test_the_completed_matrix_kernel_fills_as_numpy_did():
    """completed() fills Table I(b) in one kernel: the same cells as numpy's masked
    arithmetic, bit for bit, on paper-sized windows."""
    from hedgerow.protocols.goldfish.complete import completed
    from hedgerow.protocols.goldfish.matrix import OBSERVED

    for seed in range(10):
        wm = varied(seed)
        cl = classify(wm, k=2)
        sol = solve(build_problem(wm, cl))
        want = np.full(wm.values.shape, np.inf)
        obs = cl.classes == OBSERVED
        want[obs] = (wm.values / cl.scale + sol.c[:, None])[obs] * cl.scale
        if len(cl.cells):
            want[cl.cells[:, 0], cl.cells[:, 1]] = sol.a * cl.scale
        assert completed(wm, cl, sol).tobytes() == want.tobytes()
