"""Out-link tables of the adaptive protocols: random start, CSR closure, entry lookup, overlay."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.model.outlinks import closure_csr, entry_index, random_out_neighbours


def test_random_start_and_entry_lookup():
    out = random_out_neighbours(30, 5, np.random.default_rng(0))
    assert ((out >= 0).sum(axis=1) == 5).all()
    assert (out != np.arange(30)[:, None]).all()
    indptr, indices = closure_csr(out, 30)
    e = entry_index(indptr, indices, out.reshape(-1), np.repeat(np.arange(30), 5))
    assert (e >= 0).all()
    rows = np.repeat(np.arange(30), np.diff(indptr))
    np.testing.assert_array_equal(rows[e], out.reshape(-1))
    np.testing.assert_array_equal(indices[e], np.repeat(np.arange(30), 5))


@pytest.mark.parametrize(("n", "d", "block_bytes"), [
    (1, 1, 8), (2, 3, 8), (5, 2, 8), (50, 6, 56), (300, 8, 7200), (1000, 6, 136005),
    (400, 500, 64),
])
def test_random_out_neighbours_in_blocks_are_the_whole_matrix_draw(monkeypatch, n, d, block_bytes):
    """Keys drawn a block of rows at a time: the (n, n) draw's picks and the rng left as it left."""
    import hedgerow.model.outlinks as outlinks_module

    def whole(rng):
        keys = rng.random((n, n))
        np.fill_diagonal(keys, -1.0)
        take = min(d, max(n - 1, 0))
        out = np.full((n, d), -1, dtype=np.int64)
        if take > 0:
            out[:, :take] = np.sort(np.argpartition(-keys, take - 1, axis=1)[:, :take], axis=1)
        return out

    monkeypatch.setattr(outlinks_module, "_KEY_BLOCK_BYTES", block_bytes)
    r1, r2 = np.random.default_rng(n), np.random.default_rng(n)
    np.testing.assert_array_equal(random_out_neighbours(n, d, r2), whole(r1))
    assert r1.random() == r2.random()
