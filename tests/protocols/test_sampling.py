"""Weighted sampling without replacement (``hedgerow.protocols._sampling``)."""

from __future__ import annotations

import numpy as np

from hedgerow.protocols._sampling import weighted_sample


def test_weighted_sample_respects_allowed_and_weights():
    rng = np.random.default_rng(0)
    w = np.tile(np.array([0.0, 1.0, 9.0, 0.0, 4.0, 0.0]), (2000, 1))
    allowed = np.ones_like(w, dtype=bool)
    allowed[:, 4] = False
    picks = weighted_sample(w, allowed, np.full(2000, 1), rng)[:, 0]
    # never a forbidden column, never a zero-weight column while positive ones remain
    assert set(picks.tolist()) <= {1, 2}
    share = (picks == 2).mean()
    assert 0.86 < share < 0.94  # 9 / 10
    # asking for more than the positive-weight columns fills with zero-weight allowed ones
    many = weighted_sample(w[:5], allowed[:5], np.full(5, 4), rng)
    for row in many:
        assert set(row[:2].tolist()) == {1, 2}
        assert set(row[2:].tolist()) <= {0, 3, 5}
        assert len(set(row.tolist())) == 4
    # and never more than the allowed columns
    few = weighted_sample(w[:1], allowed[:1], np.array([6]), rng)
    assert sorted(x for x in few[0].tolist() if x >= 0) == [0, 1, 2, 3, 5]
