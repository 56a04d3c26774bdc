"""lower_bound against numpy's searchsorted on random sorted slices."""

import numpy as np
import pytest

from hedgerow.model.sorted_search import lower_bound


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lower_bound_is_searchsorted_left(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        a = rng.integers(-5, 20, size=n + 6)
        lo = int(rng.integers(0, 3))
        hi = lo + n
        a[lo:hi] = np.sort(a[lo:hi])
        for v in rng.integers(-7, 22, size=8).tolist():
            want = lo + int(np.searchsorted(a[lo:hi], v, side="left"))
            assert lower_bound(a, lo, hi, v) == want


def test_lower_bound_finds_every_member_of_a_csr_row() -> None:
    indptr = np.array([0, 3, 3, 7])
    indices = np.array([1, 4, 9, 0, 2, 5, 8])
    for u in range(3):
        for i in range(indptr[u], indptr[u + 1]):
            assert lower_bound(indices, indptr[u], indptr[u + 1], indices[i]) == i
    assert lower_bound(indices, indptr[1], indptr[2], 4) == indptr[1]  # an empty row
