"""The flash-crowd churn control (stand-in for Vitis section IV-F's Skype trace)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.scenarios.churn import flash_crowd
from hedgerow.scenarios.traces import JOIN, LEAVE


def test_half_online_then_the_rest_join_within_five_cycles():
    on, ev = flash_crowd(4000, 300.0, 400.0, np.random.default_rng(1))
    assert int(on.sum()) == 2000
    first = {}
    for t, v, e in ev:
        first.setdefault(int(v), (float(t), int(e)))
    crowd = np.flatnonzero(~on)
    assert all(first[v][1] == JOIN and 100.0 <= first[v][0] <= 105.0 for v in crowd)
    # after the crowd: moderate churn, every node alternating leave / join, never twice the same
    state = on.copy()
    for _, v, e in ev:
        assert state[v] == (e == LEAVE)
        state[v] = e == JOIN
    leaves = ev[ev["event"] == LEAVE]
    assert len(leaves) and leaves["time_s"].min() >= 105.0


def test_same_seed_same_control_and_bad_settings():
    a = flash_crowd(100, 50.0, 200.0, np.random.default_rng(3), initial=20)
    b = flash_crowd(100, 50.0, 200.0, np.random.default_rng(3), initial=20)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ParameterError, match="initial"):
        flash_crowd(100, 50.0, 200.0, np.random.default_rng(3), initial=100)
    with pytest.raises(ParameterError, match="lifetime"):
        flash_crowd(100, -1.0, 200.0, np.random.default_rng(3))
