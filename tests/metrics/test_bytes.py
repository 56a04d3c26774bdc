"""Byte and queue measures: hand-computed cases and the identities that bind them."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, Network, disseminate_contended
from hedgerow.metrics.bytes import (
    bytes_measures,
    bytes_per_node,
    copies_lost,
    duplicate_bytes,
    queueing_share,
    uplink_utilisation,
)
from hedgerow.model import Instance, Overlay

S, LAT = 1000.0, 10.0  # 1,000 bytes at 8 Mbit/s: 1 ms on the wire


def triangle_run(**net):
    inst = Instance.from_lists([[0]] * 3, n_topics=1)
    a = Overlay.from_edges(3, [(0, 1), (1, 2), (0, 2)]).undirected_csr()
    d = disseminate_contended(
        a.indptr, a.indices, np.full(a.nnz, LAT), np.zeros(3), inst.masks,
        MessageBatch.create([0], [0]), Network.uniform(3, 8.0, **net), size=S, policy="flood",
        rng=np.random.default_rng(0),
    )
    return d, inst


def test_triangle_by_hand():
    """0 sends to 1 (arrives 11) then 2 (12); 1 forwards to 2 (22: duplicate), 2 to 1 (23)."""
    d, _ = triangle_run()
    assert d.arrival[0].tolist() == [0.0, 11.0, 12.0]
    assert d.sent_bytes.tolist() == [2 * S, S, S]
    assert d.received_bytes.tolist() == [0.0, 2 * S, 2 * S]
    assert duplicate_bytes(d) == {"duplicate_bytes": 2 * S, "duplicate_byte_share": 0.5}
    m = bytes_per_node(d)
    assert m["sent_payload_max"] == 2 * S and m["sent_payload_mean"] == 4 * S / 3
    assert m["received_control_max"] == 0.0
    # span: 0 .. 23 ms (the last duplicate); node 0 busy 2 ms
    assert d.span == (0.0, 23.0)
    assert uplink_utilisation(d)["uplink_utilisation_max"] == 2 / 23
    # node 2 waited 1 ms for node 0's uplink: 1 of the 11 + 12 ms of delay
    share = queueing_share(d.queue_delay, d.arrival, d.publisher, d.topic, np.ones((3, 1), bool))
    assert share == 1 / 23
    assert copies_lost(d) == {"copies_lost": 0, "lost_share": 0.0}


def test_identities_on_a_loaded_random_run():
    rng = np.random.default_rng(8)
    n, m = 60, 40
    adj = np.triu(rng.random((n, n)) < 0.1, 1)
    adj = adj | adj.T
    rows, cols = np.nonzero(adj)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    interest = rng.random((n, 3)) < 0.5
    inst = Instance.from_lists([np.flatnonzero(r).tolist() for r in interest], n_topics=3)
    batch = MessageBatch.create(rng.integers(0, n, m), rng.integers(0, 3, m), ttl=2)
    sizes = rng.integers(100, 5000, m).astype(float)
    net = Network.from_classes(n, {"home": (0.7, 2.0, 8.0), "dc": (0.3, 100.0, 100.0)}, rng,
                               download_queues=True, loss=0.05)
    d = disseminate_contended(
        indptr, cols, rng.random(len(cols)) * 20, np.ones(n), inst.masks, batch, net,
        size=sizes, publish_at=np.sort(rng.random(m) * 500), policy="ttl", rng=rng,
    )
    assert d.sent_bytes.sum() == (d.copies * sizes).sum()
    assert d.received_bytes.sum() == ((d.copies - d.lost) * sizes).sum()
    assert d.duplicate_bytes.sum() == (d.duplicates * sizes).sum()
    out = bytes_measures(d, interest)
    assert 0 < out["queueing_share"] < 1
    assert 0 < out["uplink_utilisation_max"] <= 1
    assert out["copies_lost"] == d.lost.sum() > 0
    assert out["delay_p50_ms"] <= out["delay_p90_ms"] <= out["delay_p99_ms"]
    assert np.isfinite(list(out.values())).all()


def test_no_queueing_without_bandwidth_limits():
    inst = Instance.from_lists([[0]] * 3, n_topics=1)
    a = Overlay.from_edges(3, [(0, 1), (1, 2), (0, 2)]).undirected_csr()
    d = disseminate_contended(
        a.indptr, a.indices, np.full(a.nnz, LAT), np.zeros(3), inst.masks,
        MessageBatch.create([0, 0], [0, 0]), Network.uniform(3), size=S, policy="flood",
    )
    out = bytes_measures(d, np.ones((3, 1), bool))
    assert out["queueing_share"] == 0.0 and out["uplink_utilisation_max"] == 0.0
    assert out["sent_payload_mean"] == 2 * (2 * S + S + S) / 3


@pytest.mark.parametrize("loss", [0.2, 0.6])
def test_lost_share_counts_sent_copies(loss):
    d, _ = triangle_run(loss=loss)
    out = copies_lost(d)
    assert out["lost_share"] == d.lost.sum() / d.copies.sum()
