"""The identifier ring: successors, predecessors, coordinator, predecessor range."""

from __future__ import annotations

import numpy as np

from hedgerow.protocols.omen.coordinator import Ring


def test_ring_matches_brute_force():
    rng = np.random.default_rng(4)
    ids = rng.random(40)
    ring = Ring(ids)
    live = set()
    for _step in range(300):
        v = int(rng.integers(40))
        if v in live:
            ring.remove(v)
            live.discard(v)
        else:
            ring.add(v)
            live.add(v)
        order = sorted(live, key=lambda x: ids[x])
        assert ring.order() == order
        if not order:
            continue
        q = int(rng.integers(40))
        # clockwise after q's position
        after = [x for x in order if ids[x] > ids[q]] + [x for x in order if ids[x] <= ids[q]]
        after = [x for x in after if x != q]
        assert ring.successors(q, 3) == after[:3]
        assert ring.coordinator(q) == (after[0] if after else -1)
        before = [x for x in reversed(order) if ids[x] < ids[q]]
        before += [x for x in reversed(order) if ids[x] >= ids[q]]
        before = [x for x in before if x != q]
        assert ring.predecessors(q, 2) == before[:2]
        for c in order:
            assert ring.in_pred_range(q, c, 2) == (c in after[:2])
