"""Attack measures on out-links (``hedgerow.metrics.attack``)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.metrics import slot_stats


def _links(pairs):
    a = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return a[:, 0], a[:, 1]


def test_attacker_share_counts_only_honest_out_links():
    honest = np.array([True, True, True, False, False])
    # honest out-links: 0->3, 0->1, 1->4, 2->1 (2 of 4 to attackers); attackers' own links ignored
    src, dst = _links([(0, 3), (0, 1), (1, 4), (2, 1), (3, 0), (4, 2), (3, 4)])
    share, out, link = slot_stats(src, dst, honest)
    assert share == pytest.approx(0.5)
    assert out == pytest.approx(2 / 3)  # 0 and 2 have an honest out-neighbour, 1 does not
    assert link == pytest.approx(1.0)  # 1 has an incoming honest link (0 -> 1, 2 -> 1)


def test_eclipsed_node_has_no_honest_link_in_either_direction():
    honest = np.array([True, True, True, False])
    # node 2 points only at the attacker and nobody honest points at it
    src, dst = _links([(0, 1), (1, 0), (2, 3), (3, 2)])
    share, out, link = slot_stats(src, dst, honest)
    assert share == pytest.approx(1 / 3)
    assert out == pytest.approx(2 / 3)
    assert link == pytest.approx(2 / 3)
    # an attacker's link to node 2 does not count as an honest link
    src2, dst2 = _links([(0, 1), (1, 0), (2, 3), (3, 2), (3, 2)])
    assert slot_stats(src2, dst2, honest)[2] == pytest.approx(2 / 3)
    # one honest link into node 2 is enough
    src3, dst3 = _links([(0, 1), (1, 2), (2, 3)])
    assert slot_stats(src3, dst3, honest) == pytest.approx((1 / 3, 2 / 3, 1.0))


def test_no_honest_out_links():
    honest = np.array([True, True, False])
    share, out, link = slot_stats(*_links([(2, 0), (2, 1)]), honest)
    assert (share, out, link) == (0.0, 0.0, 0.0)
    empty = np.zeros(0, dtype=np.int64)
    assert slot_stats(empty, empty, honest) == (0.0, 0.0, 0.0)
