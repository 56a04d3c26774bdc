"""Worked examples of Topiary's scores (eqs. 2-9) and the readings the module docstring states."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, disseminate, edge_delays
from hedgerow.latency import from_matrix
from hedgerow.model import Instance
from hedgerow.model.outlinks import closure_csr, entry_index
from hedgerow.protocols.topiary import Topiary, keep_size, subset_table
from hedgerow.protocols.topiary.scoring import (
    Observations,
    subset_scores,
    topic_scores,
    underperforming,
)


def test_keep_size_matches_paper():
    # section V-A: "select the best 4-node-subset in the 1000-node network or
    # 3-node-subset in the 246-node network" (d = 6 and d = 5)
    assert keep_size(6) == 4
    assert keep_size(5) == 3
    assert len(subset_table(6, 4)) == 15
    assert len(subset_table(5, 3)) == 10


def _obs_one_node(dsum, dcnt, expected, waste=None):
    """Observations of one node over topics x subsets from plain lists."""
    dsum = np.asarray(dsum, dtype=float)
    obs = Observations.empty(1, dsum.shape[1], dsum.shape[0])
    obs.dsum[0] = dsum
    obs.dcnt[0] = np.asarray(dcnt)
    obs.expected[0] = np.asarray(expected)
    if waste is not None:
        obs.waste[0] = np.asarray(waste)
    return obs


def test_overall_score_worked_example():
    # two subscribed topics (0, 1), one unsubscribed (2); 3 subsets
    # topic 0: 4 messages expected; topic 1: 6 expected -> sum E = 10
    dsum = [[8.0, 0.0, 40.0], [12.0, 30.0, 20.0], [0.0, 0.0, 0.0]]
    dcnt = [[4, 0, 4], [6, 6, 2], [0, 0, 0]]
    obs = _obs_one_node(dsum, dcnt, [4, 6, 5], waste=[3, 0, 7])
    interest = np.array([[True, True, False]])
    S, Fc, Fd, Fw = subset_scores(obs, interest, wc=1000, wd=1000, ww=2)
    # subset 0 relays all 10 messages, 20 ms in total
    # subset 1 relays 6 of 10 (30 ms), subset 2 relays 6 of 10 (60 ms)
    np.testing.assert_allclose(Fc[0], [0.0, 0.4, 0.4])
    np.testing.assert_allclose(Fd[0], [0.002, 0.005, 0.010])
    np.testing.assert_allclose(Fw[0], [3, 0, 7])
    np.testing.assert_allclose(S[0], [0 + 2 + 6, 400 + 5 + 0, 400 + 10 + 14])


def test_per_topic_scores_and_sigma_plus():
    dsum = [[8.0], [60.0], [0.0]]
    dcnt = [[4], [6], [0]]
    obs = _obs_one_node(dsum, dcnt, [4, 6, 3])
    interest = np.array([[True, True, True]])
    ts = topic_scores(obs, np.array([0]), interest, wc=1000, wd=1000)
    # topic 0: 2 ms, full coverage; topic 1: 10 ms; topic 2: never relayed -> Fc = 1
    np.testing.assert_allclose(ts[0], [2.0, 10.0, 1000.0])
    # eta = 2: topics scoring above 2 * 2 = 4 are underperforming
    assert underperforming(ts, 2.0)[0].tolist() == [False, True, True]
    # eta = 6: only the uncovered topic
    assert underperforming(ts, 6.0)[0].tolist() == [False, False, True]


def test_topics_without_messages_carry_no_information():
    obs = _obs_one_node([[5.0], [0.0]], [[1], [0]], [1, 0])
    ts = topic_scores(obs, np.array([0]), np.array([[True, True]]), wc=1000, wd=1000)
    assert ts[0, 0] == 5.0 and np.isnan(ts[0, 1])
    assert underperforming(ts, 2.0)[0].tolist() == [False, False]


def _observe_star(keep_fraction: float, node0_topics=(0, 1), count_waste: bool = False):
    """Node 0 with outgoing neighbours 1, 2, 3 hears 20 messages published by node 4.

    Links 0-1, 0-2, 0-3 take 10, 30, 50 ms; 1, 2, 3 are 5 ms from the
    publisher 4.  Node 1 is the fastest relay but never forwards topic 1
    (its outgoing links are removed for topic-1 messages), so it misses half
    of node 0's messages.
    """
    inst = Instance.from_lists([list(node0_topics)] + [[0, 1]] * 4, n_topics=2)
    lat = from_matrix(
        [
            [0, 10, 30, 50, 100],
            [10, 0, 100, 100, 5],
            [30, 100, 0, 100, 5],
            [50, 100, 100, 0, 5],
            [100, 5, 5, 5, 0],
        ]
    )
    out = np.array([[1, 2, 3], [4, -1, -1], [4, -1, -1], [4, -1, -1], [-1, -1, -1]])
    indptr, indices = closure_csr(out, 5)
    ed = edge_delays(indptr, indices, lat)
    topic = np.array([0, 1] * 10)
    pub = np.full(20, 4)
    rows = np.repeat(np.arange(5), np.diff(indptr))
    keep = rows != 1
    muted = (
        np.concatenate([[0], np.cumsum(np.bincount(rows[keep], minlength=5))]),
        indices[keep],
        ed[keep],
        np.where(keep, np.cumsum(keep) - 1, -1),
    )
    slot_full = entry_index(indptr, indices, out[0], np.zeros(3, dtype=np.int64))
    subsets = subset_table(3, keep_size(3, keep_fraction))
    obs = Observations.empty(5, len(subsets), 2)
    obs.add_published(pub, topic)
    for sel, (ip, ix, e_d, emap) in (
        (topic == 0, (indptr, indices, ed, np.arange(len(indices)))),
        (topic == 1, muted),
    ):
        d = disseminate(
            ip,
            ix,
            e_d,
            np.ones(5),
            inst.masks,
            MessageBatch.create(pub[sel], topic[sel], 1),
            record_edges=True,
        )
        slot = np.full((5, 3), -1)
        slot[0] = np.where(slot_full >= 0, emap[slot_full], -1)
        obs.add_chunk(
            d.arrival,
            d.edge_recv,
            slot,
            topic[sel],
            pub[sel],
            inst.masks,
            subsets,
            count_waste=count_waste,
        )
    linked = np.zeros((5, 5), dtype=bool)
    linked[rows, indices] = True
    return inst, out, obs, linked


def test_reading_lower_score_is_better_and_coverage_counts_failures():
    """Readings 1 and 2 of the module docstring, pinned on a worked example.

    With one slot kept, node 0 must keep neighbour 2: neighbour 1 is faster
    but misses all topic-1 messages, neighbour 3 relays everything but is
    slower than 2.  The paper's literal formulas (argmax of S with Fc the
    fraction *relayed*) would keep the slowest neighbour 3, and argmin with
    the literal Fc would keep the incomplete neighbour 1.
    """
    inst, out, obs, linked = _observe_star(0.34)
    interest = np.ones((5, 2), dtype=bool)
    S, Fc, Fd, _ = subset_scores(obs, interest, wc=1000, wd=1000, ww=0)
    # slot 0 = neighbour 1 misses the 10 topic-1 messages of the 20 expected
    np.testing.assert_allclose(Fc[0], [0.5, 0.0, 0.0])
    # relative delays: 1 first on topic 0; on topic 1, 2 is first and 3 is 20 ms behind
    assert Fd[0, 0] == pytest.approx(0.0)
    assert 0 < Fd[0, 1] < Fd[0, 2]
    proto = Topiary(d=3, keep=0.34)
    _, best, kept = proto.select_neighbours(out, obs, inst, linked, np.random.default_rng(0))
    assert kept[0].tolist() == [2]
    assert best[0] == pytest.approx(S[0, 1])
    literal_fc = 1.0 - Fc[0]
    assert int(np.argmax(1000 * literal_fc + 1000 * Fd[0])) == 2  # argmax keeps the slowest, 3
    assert int(np.argmin(1000 * literal_fc + 1000 * Fd[0])) == 0  # argmin keeps the incomplete 1
    # with section V-B4's normalisation wc = 1, losing every topic-1 message is worth
    # less than 1 ms, so the node keeps the incomplete neighbour 1 (why wc defaults to 1000)
    _, _, kept_wc1 = Topiary(d=3, keep=0.34, wc=1).select_neighbours(
        out, obs, inst, linked, np.random.default_rng(0)
    )
    assert kept_wc1[0].tolist() == [1]


def test_bandwidth_waste_counts_unsubscribed_relays():
    """Eq. (4): node 0 subscribes to topic 0 only; topic-1 copies from a subset are waste."""
    inst, out, obs, linked = _observe_star(0.34, node0_topics=(0,), count_waste=True)
    interest = np.array([[True, False]] + [[True, True]] * 4)
    _, Fc, _, Fw = subset_scores(obs, interest, wc=1000, wd=1000, ww=10)
    # neighbour 1 never forwards topic 1; 2 and 3 relay all 10 topic-1 messages
    np.testing.assert_allclose(Fw[0], [0, 10, 10])
    np.testing.assert_allclose(Fc[0], [0, 0, 0])  # all 10 topic-0 messages reach 0 via each
    # with a waste weight the fast neighbour 1, which relays nothing unwanted, is kept
    _, _, kept = Topiary(d=3, keep=0.34, ww=10).select_neighbours(
        out, obs, inst, linked, np.random.default_rng(0)
    )
    assert kept[0].tolist() == [1]
    # without counting (ww = 0 skips unsubscribed messages) Fw stays 0
    _, _, obs0, _ = _observe_star(0.34, node0_topics=(0,), count_waste=False)
    assert subset_scores(obs0, interest, wc=1000, wd=1000, ww=0)[3][0].tolist() == [0, 0, 0]


def test_best_subset_is_kept_by_exhaustive_check():
    """Hand-made accumulators: select_neighbours keeps exactly argmin over all C(6, 4) subsets."""
    rng = np.random.default_rng(3)
    n, t, d = 8, 3, 6
    inst = Instance.from_lists([[0, 1], [1, 2], [0], [2], [0, 1, 2], [1], [0, 2], [1]], n_topics=t)
    subsets = subset_table(d, 4)
    obs = Observations.empty(n, len(subsets), t)
    obs.expected[:] = 10
    # per-slot relative delays / coverage, then build subset accumulators consistently
    for v in range(n):
        per_slot_delay = rng.uniform(0, 50, size=(t, d))
        per_slot_cov = rng.random((t, d)) < 0.7
        for s, members in enumerate(subsets):
            cov = per_slot_cov[:, members].any(axis=1)
            dl = np.where(per_slot_cov[:, members], per_slot_delay[:, members], np.inf).min(axis=1)
            obs.dcnt[v, :, s] = np.where(cov, 10, 0)
            obs.dsum[v, :, s] = np.where(cov, 10 * dl, 0.0)
    out = np.array([[(v + j + 1) % n for j in range(d)] for v in range(n)])
    proto = Topiary(d=d)
    interest = np.zeros((n, t), dtype=bool)
    for v in range(n):
        interest[v, inst.topics_of(v)] = True
    linked = np.zeros((n, n), dtype=bool)
    _, best_score, kept = proto.select_neighbours(out, obs, inst, linked, np.random.default_rng(0))
    S, _, _, _ = subset_scores(obs, interest, wc=1000, wd=1000, ww=0)
    for v in range(n):
        scores = {tuple(sorted(out[v, m].tolist())): S[v, s] for s, m in enumerate(subsets)}
        want = min(scores, key=scores.get)
        assert tuple(sorted(kept[v].tolist())) == want
        assert best_score[v] == pytest.approx(min(scores.values()))


def test_topiary_parameters_are_validated():
    from hedgerow.errors import ParameterError
    from hedgerow.scenarios import build

    inst = Instance.from_lists([[0]] * 10, n_topics=1)
    with pytest.raises(ParameterError, match=r"parameter eta must be in \(1, "):
        Topiary(eta=1.0).check_params()
    with pytest.raises(ParameterError, match=r"parameter eta must be in \(1, "):
        build("topiary", inst, params={"eta": 1.0})
    with pytest.raises(ParameterError, match="parameter d must be below"):
        build("topiary", inst, params={"d": 10})
    with pytest.raises(ParameterError, match="unknown parameter 'w'"):
        Topiary().set_params(w=1)
