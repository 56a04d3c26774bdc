"""Hand-computed examples for each policy and for every reading of Topiary section II-A."""

from __future__ import annotations

import numpy as np
import pytest
from _dissemination_reference import assert_agrees, random_masks, random_symmetric_csr, simulate

from hedgerow.dissemination import MessageBatch, disseminate, edge_delays
from hedgerow.dissemination import engine as engine_mod
from hedgerow.errors import ParameterError
from hedgerow.latency import from_matrix, unit_square
from hedgerow.model import Instance, Overlay, RngStreams

INF = float("inf")


def graph(n, weighted_edges, *, directed=False):
    """CSR arrays and per-entry delays from ``(u, v, ms)`` links."""
    delay = {}
    for u, v, w in weighted_edges:
        delay[(u, v)] = w
        if not directed:
            delay[(v, u)] = w
    ov = Overlay.from_edges(n, [(u, v) for u, v, _ in weighted_edges], directed=directed)
    a = ov.csr() if directed else ov.undirected_csr()
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    ed = np.array([delay[(int(u), int(v))] for u, v in zip(rows, a.indices, strict=True)])
    return a.indptr, a.indices, ed


def masks_of(subs, n_topics=1):
    return Instance.from_lists(subs, n_topics=n_topics).masks


def run(n, edges, subs, pub, ttl, policy, proc=1.0, topic=0, directed=False, n_topics=1):
    ip, ix, ed = graph(n, edges, directed=directed)
    pd = np.full(n, float(proc)) if np.isscalar(proc) else np.asarray(proc, dtype=float)
    return disseminate(
        ip,
        ix,
        ed,
        pd,
        masks_of(subs, n_topics),
        MessageBatch.create([pub], [topic], ttl),
        policy=policy,
        record_edges=True,
    )


# path 0 - 1 - 2 - 3, 10 ms links, 1 ms processing; only 0 and 3 subscribe to topic 0
PATH = [(0, 1, 10.0), (1, 2, 10.0), (2, 3, 10.0)]
PATH_SUBS = [[0], [], [], [0]]


class TestTTLPolicy:
    def test_ttl_decremented_by_uninterested_receivers(self):
        # TTL 1: node 1 (uninterested) takes it to 0 and relays only to interested
        # neighbours; node 2 is not interested, so the message stops.
        d = run(4, PATH, PATH_SUBS, 0, 1, "ttl")
        assert d.arrival[0].tolist() == [0.0, 10.0, INF, INF]
        assert d.copies.tolist() == [1] and d.relay_copies.tolist() == [1]
        # TTL 2: 0 -> 1 (TTL 1) -> 2 (TTL 0) -> 3 (interested) at 10 + 1 + 10 + 1 + 10 ms
        d = run(4, PATH, PATH_SUBS, 0, 2, "ttl")
        assert d.arrival[0].tolist() == [0.0, 10.0, 21.0, 32.0]
        assert d.hops[0].tolist() == [0, 1, 2, 3]
        assert d.parent[0].tolist() == [-1, 0, 1, 2]
        assert (d.copies[0], d.relay_copies[0], d.duplicates[0]) == (3, 2, 0)

    def test_interested_receivers_keep_the_ttl(self):
        # all of 0..3 subscribe: TTL 0 travels the whole path unchanged
        d = run(4, PATH, [[0]] * 4, 0, 0, "ttl")
        assert d.arrival[0].tolist() == [0.0, 10.0, 21.0, 32.0]
        assert d.relay_copies[0] == 0

    def test_publisher_with_ttl_zero_sends_to_interested_neighbours_only(self):
        # reading 1: the publisher applies the relay rule to its initial TTL
        edges = [(0, 1, 5.0), (0, 2, 5.0)]
        d = run(3, edges, [[0], [], [0]], 0, 0, "ttl")
        assert d.arrival[0].tolist() == [0.0, INF, 5.0]
        assert d.edge_recv[0].tolist() == [INF, 5.0, INF, INF]  # entries 0->1, 0->2, 1->0, 2->0
        # with TTL 1 it gossips to all its neighbours, as section II-A says
        d = run(3, edges, [[0], [], [0]], 0, 1, "ttl")
        assert d.arrival[0].tolist() == [0.0, 5.0, 5.0]

    def test_first_copy_decides_forwarding_even_if_a_later_copy_has_more_ttl(self):
        # 0 publishes with TTL 1.  Fast route 0 -> 1 (uninterested, TTL 1 -> 0) -> 3 gives
        # node 3 its first copy with TTL 0; the slow route 0 -> 2 (interested) -> 3 brings
        # TTL 1 later.  Node 3 forwards only its first copy: TTL 0, so the uninterested
        # node 4 behind it never gets the message.
        edges = [(0, 1, 1.0), (1, 3, 1.0), (0, 2, 50.0), (2, 3, 50.0), (3, 4, 1.0)]
        subs = [[0], [], [0], [0], []]
        d = run(5, edges, subs, 0, 1, "ttl")
        assert d.arrival[0].tolist() == [0.0, 1.0, 50.0, 3.0, INF]
        assert d.parent[0, 3] == 1
        assert d.duplicates[0] == 2  # 2 -> 3 (late) and 3 -> 2
        # make the interested route the fast one: node 3 now holds TTL 1 and reaches node 4
        edges = [(0, 1, 50.0), (1, 3, 50.0), (0, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0)]
        d = run(5, edges, subs, 0, 1, "ttl")
        assert d.arrival[0].tolist() == [0.0, 50.0, 1.0, 3.0, 5.0]

    def test_never_back_to_the_sender_even_at_ttl_zero(self):
        # 0 and 1 both interested, TTL 0: node 1 does not send the message back to 0
        d = run(2, [(0, 1, 4.0)], [[0], [0]], 0, 0, "ttl")
        assert d.edge_recv[0].tolist() == [4.0, INF]
        assert (d.copies[0], d.duplicates[0]) == (1, 0)

    def test_reference_agrees_on_the_worked_examples(self):
        edges = [(0, 1, 1.0), (1, 3, 1.0), (0, 2, 50.0), (2, 3, 50.0), (3, 4, 1.0)]
        subs = [[0], [], [0], [0], []]
        ip, ix, ed = graph(5, edges)
        ref = simulate(ip, ix, ed, np.ones(5), masks_of(subs), 0, 0, 1, "ttl")
        d = run(5, edges, subs, 0, 1, "ttl")
        assert d.arrival[0].tolist() == ref["arrival"]
        assert d.edge_recv[0].tolist() == ref["edge_recv"]


class TestFloodPolicy:
    def test_triangle_counts(self):
        # triangle 0-1-2, 10 ms links, 2 ms processing: 0 sends to 1 and 2 (t=10);
        # 1 and 2 forward to each other (arrive 10+2+10 = 22): two duplicates
        edges = [(0, 1, 10.0), (1, 2, 10.0), (0, 2, 10.0)]
        d = run(3, edges, [[], [], []], 0, 0, "flood", proc=2.0)
        assert d.arrival[0].tolist() == [0.0, 10.0, 10.0]
        # CSR entries: 0->1, 0->2, 1->0, 1->2, 2->0, 2->1
        assert d.edge_recv[0].tolist() == [10.0, 10.0, INF, 22.0, INF, 22.0]
        assert (d.copies[0], d.relay_copies[0], d.duplicates[0]) == (4, 4, 2)

    def test_publisher_pays_no_processing_delay_and_others_do(self):
        d = run(3, [(0, 1, 10.0), (1, 2, 10.0)], [[], [], []], 0, 0, "flood", proc=[100, 7, 1000])
        assert d.arrival[0].tolist() == [0.0, 10.0, 27.0]

    def test_shortest_delay_path_wins_not_fewest_hops(self):
        # direct 0 -> 3 is 100 ms; 0 -> 1 -> 2 -> 3 is 3 x 10 + 2 x 1 = 32 ms
        edges = [(0, 3, 100.0), (0, 1, 10.0), (1, 2, 10.0), (2, 3, 10.0)]
        d = run(4, edges, [[]] * 4, 0, 0, "flood")
        assert d.arrival[0, 3] == 32.0 and d.hops[0, 3] == 3 and d.parent[0, 3] == 2

    def test_ties_go_to_the_lower_sender(self):
        # diamond: 3 hears from 1 and 2 at the same time; 1 < 2 wins
        edges = [(0, 1, 5.0), (0, 2, 5.0), (1, 3, 5.0), (2, 3, 5.0)]
        d = run(4, edges, [[]] * 4, 0, 0, "flood")
        assert d.arrival[0, 3] == 11.0 and d.parent[0, 3] == 1
        # copies 0->1, 0->2, 1->3, 2->3, 3->2 (3 does not send back to 1); 2->3 and 3->2
        # reach nodes that already had the message
        assert (d.copies[0], d.duplicates[0]) == (5, 2)

    def test_directed_links_forward_one_way_and_unreachable_nodes(self):
        d = run(4, [(0, 1, 1.0), (2, 1, 1.0)], [[]] * 4, 0, 0, "flood", directed=True)
        assert d.arrival[0].tolist() == [0.0, 1.0, INF, INF]
        assert d.hops[0].tolist() == [0, 1, -1, -1]
        assert d.parent[0].tolist() == [-1, 0, -1, -1]


class TestTopicPolicy:
    def test_topic_flooding_does_not_cross_uninterested_nodes(self):
        # the path again: node 1 is not interested, so topic flooding stops at 0
        d = run(4, PATH, PATH_SUBS, 0, 5, "topic")
        assert d.arrival[0].tolist() == [0.0, INF, INF, INF]
        assert d.copies[0] == 0
        d = run(4, PATH, [[0], [0], [], [0]], 0, 0, "topic")
        assert d.arrival[0].tolist() == [0.0, 10.0, INF, INF]
        assert d.relay_copies[0] == 0

    def test_uninterested_publisher_sends_to_interested_neighbours(self):
        d = run(3, [(0, 1, 3.0), (0, 2, 3.0)], [[], [0], []], 0, 0, "topic")
        assert d.arrival[0].tolist() == [0.0, 3.0, INF]

    def test_topic_bit_in_second_word(self):
        subs = [[65], [65], [3]]
        d = run(3, [(0, 1, 3.0), (0, 2, 3.0)], subs, 0, 0, "topic", topic=65, n_topics=70)
        assert d.arrival[0].tolist() == [0.0, 3.0, INF]


class TestHelpers:
    def test_edge_delays_from_latency_models(self):
        lat = unit_square(30, RngStreams(4).stream("latency"))
        ov = Overlay.from_edges(
            30, [(i, (i * 7 + 3) % 30) for i in range(30) if (i * 7 + 3) % 30 != i]
        )
        a = ov.undirected_csr()
        ed = edge_delays(a.indptr, a.indices, lat)
        rows = np.repeat(np.arange(30), np.diff(a.indptr))
        want = 500.0 * np.linalg.norm(lat.positions[rows] - lat.positions[a.indices], axis=1)
        np.testing.assert_allclose(ed, want, rtol=1e-14)
        with pytest.raises(ParameterError, match="31 nodes"):
            edge_delays(a.indptr, a.indices, from_matrix(np.zeros((31, 31))))

    def test_empty_batch(self):
        ip, ix, ed = graph(2, [(0, 1, 1.0)])
        d = disseminate(
            ip, ix, ed, np.ones(2), masks_of([[0], [0]]), MessageBatch.create([], [], 0)
        )
        assert d.arrival.shape == (0, 2) and d.copies.shape == (0,)


class TestParallelPath:
    def test_parallel_kernel_matches_reference(self, monkeypatch):
        """Force the threaded kernel on small batches and compare with the reference."""
        monkeypatch.setattr(engine_mod, "PARALLEL_MIN_WORK", 0)
        rng = np.random.default_rng(5)
        n = 40
        ip, ix = random_symmetric_csr(rng, n, 0.1)
        ed = rng.integers(0, 3, len(ix)).astype(float)
        pd = rng.integers(0, 2, n).astype(float)
        masks = random_masks(rng, n, 3, 0.5)
        batch = MessageBatch(rng.integers(0, n, 64), rng.integers(0, 3, 64), rng.integers(0, 4, 64))
        for policy in ("ttl", "flood", "topic"):
            assert_agrees(ip, ix, ed, pd, masks, batch, policy)


class TestValidation:
    def setup_method(self):
        self.ip, self.ix, self.ed = graph(3, [(0, 1, 1.0), (1, 2, 1.0)])
        self.masks = masks_of([[0], [0], []])
        self.batch = MessageBatch.create([0], [0], 1)

    def call(self, **kw):
        args = {
            "indptr": self.ip,
            "indices": self.ix,
            "edge_delay": self.ed,
            "proc_delay": np.ones(3),
            "masks": self.masks,
            "batch": self.batch,
        }
        args.update(kw)
        return disseminate(**args)

    def test_unknown_policy_lists_the_allowed(self):
        with pytest.raises(ParameterError, match="allowed: ttl, flood, topic"):
            self.call(policy="gossip")

    @pytest.mark.parametrize(
        ("kw", "match"),
        [
            ({"edge_delay": np.ones(3)}, "one value per CSR entry"),
            ({"edge_delay": -np.ones(4)}, "non-negative"),
            ({"proc_delay": np.ones(2)}, "one value per node"),
            ({"proc_delay": np.array([1.0, np.nan, 1.0])}, "finite"),
            ({"masks": np.zeros((3, 1), dtype=np.int64)}, "uint64"),
            ({"batch": MessageBatch.create([3], [0], 1)}, "publisher"),
            ({"batch": MessageBatch.create([0], [64], 1)}, "topic"),
            ({"batch": MessageBatch.create([0], [0], -1)}, "TTL"),
            ({"batch": MessageBatch.create([0], [0], 2**40)}, "at most"),
            ({"indices": np.array([1, 0, 5, 1])}, "outside"),
            ({"indptr": np.array([0, 1, 3])}, "CSR"),
        ],
    )
    def test_bad_inputs(self, kw, match):
        with pytest.raises(ParameterError, match=match):
            self.call(**kw)

    def test_batch_lengths_must_agree(self):
        with pytest.raises(ParameterError, match="differ in length"):
            MessageBatch(np.array([0, 1]), np.array([0]), np.array([1, 1]))
