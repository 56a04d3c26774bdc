"""Delivery measures on hand-made dissemination arrays and on disseminated batches."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, disseminate, edge_delays
from hedgerow.latency import unit_square
from hedgerow.metrics import delay_percentiles, delivery_stats, duplicates_per_message, relay_share
from hedgerow.model import Instance, Overlay, RngStreams, interest_matrix, pack_sets
from hedgerow.model.outlinks import closure_csr, random_out_neighbours
from hedgerow.workloads import draw_messages, interest_instance

INF = np.inf

# 5 nodes, 2 topics: topic 0 = {0, 1, 2, 3}, topic 1 = {1, 4}
INTEREST = np.array(
    [
        [True, False],
        [True, True],
        [True, False],
        [True, False],
        [False, True],
    ]
)
# message 0: topic 0 from node 0; node 3 never gets it, node 4 (uninterested) relays at 1 ms
# message 1: topic 1 from node 4; node 1 gets it at 50 ms
# message 2: topic 0 from node 2; everybody at 5 ms
ARRIVAL = np.array(
    [
        [0.0, 10.0, 30.0, INF, 1.0],
        [7.0, 50.0, INF, INF, 0.0],
        [5.0, 5.0, 0.0, 5.0, 5.0],
    ]
)
PUBLISHER = np.array([0, 4, 2])
TOPIC = np.array([0, 1, 0])


def test_rate_averages_per_message_and_delay_over_pairs():
    rate, delay = delivery_stats(ARRIVAL, PUBLISHER, TOPIC, INTEREST)
    # per message: 2/3, 1/1, 3/3 -> mean 8/9 (pooled over pairs it would be 6/7)
    assert rate == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert rate != pytest.approx(6 / 7)
    # pairs reached: 10, 30 | 50 | 5, 5, 5
    assert delay == pytest.approx((10 + 30 + 50 + 5 + 5 + 5) / 6)


def test_publisher_is_excluded_even_when_it_subscribes():
    # the publisher's own arrival (0 ms) would pull the delay down and the rate up
    arr = np.array([[0.0, INF, 20.0, INF, INF]])
    rate, delay = delivery_stats(arr, np.array([0]), np.array([0]), INTEREST)
    assert rate == pytest.approx(1 / 3) and delay == 20.0
    assert delay_percentiles(arr, np.array([0]), np.array([0]), INTEREST, q=(0,)).tolist() == [
        20.0
    ]


def test_receivers_restrict_the_wanted_pairs():
    honest = np.array([True, True, False, True, True])  # node 2 is an attacker
    rate, delay = delivery_stats(ARRIVAL, PUBLISHER, TOPIC, INTEREST, receivers=honest)
    # message 0: {1, 3} -> 1/2; message 1: {1} -> 1; message 2: {0, 1, 3} -> 1
    assert rate == pytest.approx((0.5 + 1 + 1) / 3)
    assert delay == pytest.approx((10 + 50 + 5 + 5 + 5) / 5)
    q = delay_percentiles(ARRIVAL, PUBLISHER, TOPIC, INTEREST, q=(0, 50, 100), receivers=honest)
    assert q.tolist() == [5.0, 5.0, 50.0]


def test_messages_without_wanted_receivers_are_skipped_and_none_gives_nan():
    # topic 1 published by node 1 with only node 4 as other subscriber, node 4 not a receiver
    receivers = np.array([True, True, True, True, False])
    arr = np.array([[INF, 0.0, INF, INF, 3.0], [0.0, 4.0, INF, 6.0, INF]])
    rate, delay = delivery_stats(
        arr, np.array([1, 0]), np.array([1, 0]), INTEREST, receivers=receivers
    )
    assert rate == pytest.approx(2 / 3) and delay == 5.0  # only message 1 counts
    one = (arr[:1], np.array([1]), np.array([1]), INTEREST)
    rate, delay = delivery_stats(*one, receivers=receivers)
    assert np.isnan(rate) and np.isnan(delay)
    nothing = np.array([[0.0, INF, INF, INF, INF]])
    assert np.isnan(delay_percentiles(nothing, np.array([0]), np.array([0]), INTEREST)).all()
    assert delay_percentiles(nothing, np.array([0]), np.array([0]), INTEREST).shape == (3,)


def test_delay_percentiles_over_pairs():
    q = delay_percentiles(ARRIVAL, PUBLISHER, TOPIC, INTEREST)
    pairs = np.array([10.0, 30.0, 50.0, 5.0, 5.0, 5.0])
    np.testing.assert_allclose(q, np.percentile(pairs, [50, 90, 99]))
    # hop counts go through the same function
    hops = np.array([[0, 1, 2, -1, 1], [1, 2, -1, -1, 0], [1, 1, 0, 1, 1]])
    hq = delay_percentiles(np.where(hops >= 0, hops, INF), PUBLISHER, TOPIC, INTEREST, q=(100,))
    assert hq.tolist() == [2.0]


def test_relay_share_and_duplicates_on_hand_made_counters():
    copies = np.array([6, 2, 8])
    relay = np.array([1, 0, 2])
    assert relay_share(copies, relay) == pytest.approx(3 / 16)
    assert np.isnan(relay_share(np.zeros(2, dtype=int), np.zeros(2, dtype=int)))
    # first receptions (publisher excluded): 3, 2, 4 -> duplicates 3, 0, 4
    assert duplicates_per_message(copies, ARRIVAL, PUBLISHER) == pytest.approx(7 / 3)
    assert np.isnan(duplicates_per_message(np.zeros(0), np.zeros((0, 5)), np.zeros(0, dtype=int)))


def test_relay_share_and_duplicates_agree_with_the_engine():
    streams = RngStreams(3)
    n = 60
    inst = interest_instance(n, 8, 0.2, streams.stream("workload"))
    indptr, indices = closure_csr(random_out_neighbours(n, 3, streams.stream("init")), n)
    ed = edge_delays(indptr, indices, unit_square(n, streams.stream("latency")))
    pub, top = draw_messages(inst, 80, streams.stream("messages"))
    d = disseminate(
        indptr, indices, ed, np.full(n, 2.0), inst.masks, MessageBatch.create(pub, top, 1)
    )
    assert duplicates_per_message(d.copies, d.arrival, d.publisher) == pytest.approx(
        d.duplicates.mean()
    )
    share = relay_share(d.copies, d.relay_copies)
    assert 0 < share < 1 and share == pytest.approx(d.relay_copies.sum() / d.copies.sum())


# ---------------------------------------------------------------- worked dissemination examples
def _path_batch(publishers, ttls):
    """Path 0 - 1 - 2 - 3 with 10 ms links and 1 ms processing; topic 0 subscribers 0, 1, 3."""
    inst = Instance.from_lists([[0], [0], [], [0]], n_topics=1)
    a = Overlay.from_edges(4, [(0, 1), (1, 2), (2, 3)]).undirected_csr()
    batch = MessageBatch.create(publishers, [0] * len(publishers), ttls)
    d = disseminate(a.indptr, a.indices, np.full(a.nnz, 10.0), np.ones(4), inst.masks, batch)
    return d, interest_matrix(inst.masks, 1)


def test_receive_rate_and_avg_delay_of_a_disseminated_batch():
    # message 0 (TTL 0 from 0): reaches 1 only; message 1 (TTL 2 from 3): 2 at 10,
    # 1 at 21, 0 at 32
    d, interest = _path_batch([0, 3], [0, 2])
    assert d.arrival.tolist() == [[0.0, 10.0, INF, INF], [32.0, 21.0, 10.0, 0.0]]
    per_message = [
        delivery_stats(d.arrival[i : i + 1], d.publisher[i : i + 1], d.topic[i : i + 1], interest)
        for i in range(2)
    ]
    assert [r for r, _ in per_message] == [0.5, 1.0]
    assert [dl for _, dl in per_message] == [10.0, 26.5]
    rate, delay = delivery_stats(d.arrival, d.publisher, d.topic, interest)
    assert rate == pytest.approx(3 / 4)
    assert delay == pytest.approx((10 + 32 + 21) / 3)


def test_rate_is_nan_without_other_subscribers():
    inst = Instance.from_lists([[0], []], n_topics=1)
    d = disseminate(
        np.array([0, 1, 2]),
        np.array([1, 0]),
        np.ones(2),
        np.ones(2),
        inst.masks,
        MessageBatch.create([0], [0], 1),
    )
    rate, delay = delivery_stats(d.arrival, d.publisher, d.topic, interest_matrix(inst.masks, 1))
    assert np.isnan(rate) and np.isnan(delay)


def test_former_engine_examples():
    """The examples the engine's receive-rate and delay helpers carried, now on the measures."""
    masks = pack_sets(np.array([0, 1, 2, 3]), np.array([0, 0, 0]), 1)  # 3 nodes on topic 0
    interest = interest_matrix(masks, 1)
    batch = MessageBatch.create([0], [0], 1)
    # directed 0 -> 1, 1 -> 0, 2 -> 1: node 2 is never reached
    ip, ix = np.array([0, 1, 2, 3]), np.array([1, 0, 1])
    d = disseminate(ip, ix, np.ones(3), np.ones(3), masks, batch)
    assert delivery_stats(d.arrival, d.publisher, d.topic, interest)[0] == 0.5
    # path 0 - 1 - 2 with 5 and 7 ms links and 2 ms processing
    d = disseminate(
        np.array([0, 1, 3, 4]),
        np.array([1, 0, 2, 1]),
        np.array([5.0, 5, 7, 7]),
        np.full(3, 2.0),
        masks,
        batch,
    )
    assert d.arrival.tolist() == [[0.0, 5.0, 14.0]]
    assert delivery_stats(d.arrival, d.publisher, d.topic, interest)[1] == 9.5


def test_delivery_measures_agree_with_the_single_measures():
    """The one-pass measures equal delivery_stats, delay_percentiles and the hop mean."""
    from hedgerow.metrics.delivery import delay_percentiles, delivery_measures, delivery_stats

    rng = np.random.default_rng(3)
    m, n, k = 60, 40, 5
    arrival = rng.random((m, n)) * 100
    arrival[rng.random((m, n)) < 0.2] = np.inf
    hops = rng.integers(0, 6, (m, n))
    publisher = rng.integers(0, n, m)
    topic = rng.integers(0, k, m)
    interest = rng.random((n, k)) < 0.4
    honest = rng.random(n) < 0.8
    got = delivery_measures(arrival, publisher, topic, interest, receivers=honest, hops=hops)
    rate, delay = delivery_stats(arrival, publisher, topic, interest, receivers=honest)
    pct = delay_percentiles(arrival, publisher, topic, interest, (50, 90, 99), receivers=honest)
    hop_arr = np.where(np.isfinite(arrival), hops, np.inf)
    _, hop_mean = delivery_stats(hop_arr, publisher, topic, interest, receivers=honest)
    assert got["receive_rate"] == rate
    assert got["delay_mean_ms"] == pytest.approx(delay, rel=1e-12)
    assert [got["delay_p50_ms"], got["delay_p90_ms"], got["delay_p99_ms"]] == list(pct)
    assert got["hops_mean"] == pytest.approx(hop_mean, rel=1e-12)
