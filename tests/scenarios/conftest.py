"""Fixtures shared by the scenario tests."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.scenarios.traces import EVENT_DTYPE, JOIN, LEAVE


@pytest.fixture
def rejoin_trace() -> np.ndarray:
    """0 and 1 online at 0; 1 leaves, rejoins 50 ms later, leaves again; 2 joins at 30 s."""
    return np.array(
        [
            (0.0, 0, JOIN),
            (0.0, 1, JOIN),
            (10.0, 1, LEAVE),
            (10.05, 1, JOIN),
            (10.1, 1, LEAVE),
            (30.0, 2, JOIN),
        ],
        dtype=EVENT_DTYPE,
    )
