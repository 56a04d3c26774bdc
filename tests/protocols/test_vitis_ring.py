"""The identifier ring shared by Vitis and RVR: ids, slots, links, greedy lookups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.gossip import PeerSampling, TMan
from hedgerow.model import RngStreams
from hedgerow.protocols.vitis.ring import (
    KIND_PRED,
    KIND_SUCC,
    KIND_SW,
    greedy_lookup,
    harmonic_targets,
    ideal_ring_view,
    link_csr,
    lookup_paths,
    node_ids,
    rendezvous,
    ring_correct,
    ring_sw_select,
    true_neighbours,
)


@pytest.fixture(scope="module")
def gossip_ring():
    """A ring + small-world table (RVR's, RT 6) built by Newscast + T-Man until converged."""
    n, rt = 2000, 6
    streams = RngStreams(11)
    ids = node_ids(n, seed=11)
    targets = harmonic_targets(ids, rt - 2, streams.stream("sw"))
    kind = np.full((n, rt), -1, np.int8)
    ps = PeerSampling(n, 20)
    rng = streams.stream("gossip")
    ps.bootstrap(np.ones(n, bool), rng)
    tm = TMan(rt, ring_sw_select(ids, targets, kind))
    view = tm.empty_view(n)
    curve = []
    for _ in range(60):
        ps.cycle(rng)
        tm.cycle(view, ps, rng)
        curve.append(ring_correct(view, ids))
        if curve[-1] == 1.0:
            break
    return ids, view, kind, curve


def test_gossip_ring_converges(gossip_ring):
    ids, view, kind, curve = gossip_ring
    assert curve[-1] == 1.0
    assert curve[0] < 0.5
    succ, pred = true_neighbours(ids)
    assert (view[:, 0] == succ).all() and (kind[:, 0] == KIND_SUCC).all()
    assert (view[:, 1] == pred).all() and (kind[:, 1] == KIND_PRED).all()
    assert (kind[:, 2:] == KIND_SW).mean() > 0.99


def test_lookups_on_converged_ring_reach_the_closest_node(gossip_ring):
    """1,000 random keys from random starts: every lookup ends at the closest node, 0 failures."""
    ids, view, _, _ = gossip_ring
    rng = RngStreams(3).stream("keys")
    keys = rng.integers(0, 2**63, 1000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    starts = rng.integers(0, len(ids), 1000)
    for both in (True, False):
        indptr, nbrs = link_csr(view, both=both)
        end, hops, failed = greedy_lookup(indptr, nbrs, ids, starts, keys, 4 * 11**2,
                                          with_failed=True)
        assert not failed.any()
        assert (end == rendezvous(ids, keys)).all()
    # small-world routing: far fewer hops than walking the ring (N / 4 on average)
    indptr, nbrs = link_csr(view)
    _, hops = greedy_lookup(indptr, nbrs, ids, starts, keys, 500)
    assert hops.mean() < 12


def test_symmetric_draw_shortens_own_table_lookups():
    """Reading A4: clockwise-only sw links make lookups over the own table long."""
    n = 3000
    ids = node_ids(n, seed=2)
    rng = RngStreams(2).stream("keys")
    keys = rng.integers(0, 2**63, 800, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    starts = rng.integers(0, n, 800)
    mean = {}
    for direction in ("both", "clockwise"):
        t = harmonic_targets(ids, 1, RngStreams(2).stream("sw"), direction=direction)
        view, _ = ideal_ring_view(ids, 3, t)
        indptr, nbrs = link_csr(view, both=False)
        end, hops = greedy_lookup(indptr, nbrs, ids, starts, keys, 10_000)
        assert (end == rendezvous(ids, keys)).all()
        mean[direction] = hops.mean()
    assert mean["clockwise"] > 1.5 * mean["both"]


def test_lookup_paths_agree_with_lookups(gossip_ring):
    ids, view, _, _ = gossip_ring
    indptr, nbrs = link_csr(view)
    keys = node_ids(50, seed=99)
    starts = np.arange(50) * 7
    (ptr, nodes), (end, hops, _failed) = lookup_paths(indptr, nbrs, ids, starts, keys, 200)
    assert np.array_equal(np.diff(ptr), hops + 1)
    assert np.array_equal(nodes[ptr[:-1]], starts)
    assert np.array_equal(nodes[ptr[1:] - 1], end)
    for i in range(50):  # consecutive path nodes are linked
        p = nodes[ptr[i]:ptr[i + 1]]
        for a, b in itertools.pairwise(p):
            assert b in nbrs[indptr[a]:indptr[a + 1]]
        k = int(keys[i])
        d = [min((int(ids[x]) - k) % 2**64, (k - int(ids[x])) % 2**64) for x in p]
        assert all(x > y for x, y in itertools.pairwise(d))  # strictly closer each hop


def test_rendezvous_skips_offline_nodes():
    ids = np.array([100, 200, 300], np.uint64)
    alive = np.array([True, False, True])
    assert rendezvous(ids, np.array([210], np.uint64), alive).tolist() == [2]
    assert rendezvous(ids, np.array([150], np.uint64), alive).tolist() == [0]


def test_harmonic_draw_bad_direction():
    with pytest.raises(ParameterError, match="sw_direction"):
        harmonic_targets(np.zeros(3, np.uint64), 1, np.random.default_rng(0), direction="ccw")
