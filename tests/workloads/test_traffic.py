"""Message traffic of an epoch: topic uniform, publisher uniform among the topic's subscribers."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import Instance
from hedgerow.workloads import draw_messages


def test_messages_follow_the_publishing_model():
    inst = Instance.from_lists([[0], [0, 1], [1], [2]], n_topics=4)  # topic 3 has nobody
    pub, top = draw_messages(inst, 4000, np.random.default_rng(0))
    assert set(top.tolist()) == {0, 1, 2}
    counts = np.bincount(top, minlength=4) / 4000
    np.testing.assert_allclose(counts[:3], 1 / 3, atol=0.03)
    for t in range(3):
        assert set(pub[top == t].tolist()) == set(inst.subscribers(t).tolist())


def test_no_publisher_at_all_raises():
    inst = Instance.from_lists([[], []], n_topics=2)
    with pytest.raises(ParameterError, match="nobody can publish"):
        draw_messages(inst, 3, np.random.default_rng(0))
