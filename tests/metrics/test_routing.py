"""Hit ratio, traffic overhead and delay in hops (Vitis section IV), by hand on tiny graphs."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, disseminate
from hedgerow.metrics.routing import RoutingTally, node_overhead, routing_measures
from hedgerow.model import Instance, Overlay

# topic 0: subscribers 0, 1, 4 (nodes 2 and 3 relay); topic 1: subscribers 4 and 5 (5 unreachable)
INST = Instance.from_lists([[0], [0], [], [], [0, 1], [1]], n_topics=2)
EDGES = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4)]


def _flood(publisher, topic):
    a = Overlay.from_edges(6, EDGES).undirected_csr()
    batch = MessageBatch.create(publisher, topic)
    return disseminate(a.indptr, a.indices, np.ones(a.nnz), np.zeros(6), INST.masks, batch,
                       policy="flood")


def test_hand_computed_event():
    """Node 0 publishes on topic 0 over the path/triangle 0-1-2-0, 2-3-4.

    hops: 1 -> 1, 2 -> 1, 3 -> 2, 4 -> 3; receptions 1, 2, 3, 4 of which 2 and 3
    are relays: node-based overhead 2/4.  Copies: 0 sends to 1 and 2, 1 to 2,
    2 to 1 and 3, 3 to 4: 6 copies, of which 3 reach relays (two at node 2, one
    at node 3): copy-based overhead 3/6.  Delay: subscribers 1 and 4 at 1 and 3
    hops: mean 2, max 3.
    """
    dl = _flood([0], [0])
    assert dl.hops[0].tolist() == [0, 1, 1, 2, 3, -1]
    assert int(dl.copies[0]) == 6 and int(dl.relay_copies[0]) == 3
    m = routing_measures(dl.hops, [0], [0], INST.masks, copies=dl.copies,
                         relay_copies=dl.relay_copies)
    assert m["hit_ratio"] == 1.0
    assert m["overhead"] == pytest.approx(0.5)
    assert m["overhead_copies"] == pytest.approx(0.5)
    assert m["delay_hops"] == pytest.approx(2.0)
    assert m["delay_hops_max"] == pytest.approx(3.0)


def test_weights_pool_events_by_rate():
    """Event 2 (topic 1 from node 4, weight 3) misses node 5 and reaches 0-3 as relays."""
    dl = _flood([0, 4], [0, 1])
    w = [1.0, 3.0]
    m = routing_measures(dl.hops, [0, 4], [0, 1], INST.masks, weights=w)
    # wanted: 2 (event 1) + 3 x 1 (event 2); hit: 2 + 0
    assert m["hit_ratio"] == pytest.approx(2 / 5)
    # receptions: 4 + 3 x 4 (nodes 0-3); relays: 2 + 3 x 4
    assert m["overhead"] == pytest.approx(14 / 16)
    # delay only over reached subscriber pairs (event 1); max only over events that reached one
    assert m["delay_hops"] == pytest.approx(2.0)
    assert m["delay_hops_max"] == pytest.approx(3.0 / 4.0)
    assert np.isnan(m["overhead_copies"])  # no copy counters given


def test_per_node_overhead_distribution():
    dl = _flood([0, 4], [0, 1])
    per = node_overhead(dl.hops, [0, 4], [0, 1], INST.masks)
    # node 0 gets only topic 1 (uninteresting); 1 gets one of each; 2, 3 only relay; 4 only
    # its own topic-0 event; 5 nothing
    assert per[:5].tolist() == [1.0, 0.5, 1.0, 1.0, 0.0]
    assert np.isnan(per[5])


def test_tally_over_chunks_equals_one_batch():
    dl = _flood([0, 4, 1], [0, 1, 0])
    whole = routing_measures(dl.hops, [0, 4, 1], [0, 1, 0], INST.masks, copies=dl.copies,
                             relay_copies=dl.relay_copies)
    t = RoutingTally(6)
    for sel in ([0], [1, 2]):
        t.add(dl.hops[sel], np.array([0, 4, 1])[sel], np.array([0, 1, 0])[sel], INST.masks,
              copies=dl.copies[sel], relay_copies=dl.relay_copies[sel])
    assert t.measures() == whole


def test_no_subscriber_no_hit_ratio():
    inst = Instance.from_lists([[0], []], n_topics=1)
    m = routing_measures(np.array([[0, -1]], dtype=np.int32), [0], [0], inst.masks)
    assert np.isnan(m["hit_ratio"]) and np.isnan(m["overhead"])


def test_receivers_restrict_hit_ratio_and_delay_not_overhead():
    dl = _flood([0], [0])
    rec = np.array([True, False, True, True, True, True])  # node 1 joined too recently
    m = routing_measures(dl.hops, [0], [0], INST.masks, receivers=rec)
    assert m["delay_hops"] == pytest.approx(3.0)  # only subscriber 4 counts
    assert m["overhead"] == pytest.approx(0.5)
