"""Out-link tables of the adaptive protocols: random start, CSR closure, entry lookup, overlay."""

from __future__ import annotations

import numpy as np

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
