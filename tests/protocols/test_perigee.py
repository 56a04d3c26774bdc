"""Perigee: what the PODC'20 paper and its public implementations specify."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.baselines.perigee import (
    Perigee,
    _Round,
    greedy_subset,
    quantile_index,
    subset_scores,
)
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world

INF = np.inf


def _one_node_round(proto: Perigee, rel: np.ndarray, n: int = 30):
    """Start ``proto`` on ``n`` nodes and hand node 0 the relative times ``rel`` (M, d)."""
    inst = Instance.from_lists([[0]] * n, n_topics=1)
    act = np.ones(n, dtype=bool)
    out = proto.start(inst, RngStreams(1), act)
    state = _Round(proto._peers(out), rel.shape[0], np.full(rel.shape[0], n - 1))
    state.rel[0, :, : rel.shape[1]] = rel
    update = np.zeros(n, dtype=bool)
    update[0] = True
    linked = np.zeros((n, n), dtype=bool)
    new_out, score = proto.select(state, inst, out, linked, update)
    return out, new_out, score


def _brute_best_subset(rel, k, q=0.9):
    from itertools import combinations

    best, arg = INF, None
    for s in combinations(range(rel.shape[1]), k):
        mins = rel[:, list(s)].min(axis=1)
        mins = mins[np.isfinite(rel).any(axis=1)]
        v = np.sort(mins)[int(np.floor(q * len(mins) + 1e-9))]
        if v < best:
            best, arg = v, s
    return set(arg), best


def test_subset_keeps_the_set_minimising_the_90th_percentile():
    # 4 outgoing peers, keep 2; peers 0 and 1 are individually fastest but redundant
    # (fast on the same blocks), 2 and 3 cover complementary blocks
    rng = np.random.default_rng(0)
    m = 40
    rel = np.full((m, 4), 100.0)
    half = np.arange(m) < m // 2
    rel[half, 0] = rel[half, 1] = 0.0
    rel[~half, 0] = rel[~half, 1] = 60.0
    rel[half, 2] = 10.0 + rng.random(half.sum())
    rel[~half, 3] = 10.0 + rng.random((~half).sum())
    p = Perigee(d_out=4, explore=2, in_limit=0)
    out, new_out, score = _one_node_round(p, rel)
    kept = set(new_out[0, :2].tolist())
    want, best = _brute_best_subset(rel, 2)
    assert kept == {int(out[0, j]) for j in want}
    assert score[0] == pytest.approx(best)
    # the two replaced slots are new peers, never the dropped ones or node 0 itself
    fresh = set(new_out[0, 2:].tolist())
    assert len(fresh) == 2 and not fresh & set(out[0].tolist()) and 0 not in fresh


@pytest.mark.parametrize("seed", range(10))
def test_exhaustive_kernel_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    rel = rng.exponential(50, size=(25, 6))
    rel[rng.random(rel.shape) < 0.3] = INF
    from itertools import combinations

    subsets = np.array(list(combinations(range(6), 3)))
    sc = subset_scores(rel[None], subsets, 0.9, 0)[0]
    want, best = _brute_best_subset(rel, 3)
    assert sc.min() == pytest.approx(best)
    # the brute-force optimum scores the minimum (ties may pick another subset)
    assert sc[next(i for i, s in enumerate(subsets) if set(s) == want)] == pytest.approx(best)


def test_vanilla_keeps_the_best_individual_scores_and_replaces_the_rest():
    m = 30
    # individual 90th percentiles: 50, 10, 40, 20 -> keep peers 1 and 3
    rel = np.tile(np.array([50.0, 10.0, 40.0, 20.0]), (m, 1))
    p = Perigee(variant="vanilla", d_out=4, explore=2, in_limit=0)
    out, new_out, _ = _one_node_round(p, rel)
    assert new_out[0, :2].tolist() == [out[0, 1], out[0, 3]]
    assert not set(new_out[0, 2:].tolist()) & set(out[0].tolist())


def test_greedy_can_miss_the_exhaustive_optimum():
    # peer 0 is best alone, but {1, 2} together beat any pair with 0
    rel = np.array([[5.0, 0, 20], [5, 20, 0], [5, 0, 20], [5, 20, 0]])
    greedy = greedy_subset(rel[None], 2, 0.5, 0)[0]
    assert greedy[0] == 0
    from itertools import combinations

    subsets = np.array(list(combinations(range(3), 2)))
    sc = subset_scores(rel[None], subsets, 0.5, 0)[0]
    assert subsets[int(np.argmin(sc))].tolist() == [1, 2]


def test_percentile_index_rules():
    vals = np.arange(10.0)[:, None]  # one peer, 10 blocks: 0..9
    s_floor = subset_scores(vals[None], np.array([[0]]), 0.9, 0)[0, 0]
    s_round = subset_scores(vals[None], np.array([[0]]), 0.9, 1)[0, 0]
    assert (s_floor, s_round) == (9.0, 8.0)  # blocknet: sorted[floor(9)]; Goldfish: sorted[9-1]


def _authors_index(n: int) -> int:
    """The Goldfish selector's 0-based index of the 90th percentile among n sorted values."""
    return round(n * 90.0 / 100.0) - 1 if n >= 10 else int(n * 90.0 / 100.0)


@pytest.mark.parametrize(("n", "want"), [(9, 8), (10, 8), (11, 9), (20, 17), (25, 21), (5, 4)])
def test_goldfish_index_rule_by_hand(n, want):
    # n = 9: int(8.1) = 8; 10: round(9) - 1 = 8; 11: round(9.9) - 1 = 9; 20: round(18) - 1 = 17;
    # 25: round(22.5) = 22 (halves to even) - 1 = 21; 5: int(4.5) = 4
    assert quantile_index(n, 0.9, "goldfish") == want == _authors_index(n)
    # one peer delivering n blocks with relative times 1..n: the score is sorted[index]
    rel = np.arange(1.0, n + 1)[:, None]
    assert subset_scores(rel[None], np.array([[0]]), 0.9, 2)[0, 0] == want + 1


def test_round_index_differs_from_the_authors_only_below_10_and_at_halves():
    diff = [n for n in range(1, 41) if quantile_index(n, 0.9, "round") != _authors_index(n)]
    # 6-9: round(q n) - 1 is one below int(q n) (9: 7 against 8); 25: 22 against 21
    assert diff == [6, 7, 8, 9, 25]


def test_silent_inf_and_skip_by_hand():
    # 12 blocks, 2 candidates.  Peer 0 delivers blocks 0-5 at 1..6 ms and nothing after
    # (it got those blocks from this node); peer 1 delivers every block at 10..21 ms.
    rel = np.full((12, 2), INF)
    rel[:6, 0] = np.arange(1.0, 7.0)
    rel[:, 1] = np.arange(10.0, 22.0)
    subsets = np.array([[0], [1]])
    # inf: 12 rows for both; {0} holds six +inf -> index 10 (floor(10.8), or round(10.8) - 1)
    # is +inf; {1}: sorted 10..21, index 10 -> 20
    for rule in (0, 2):
        assert subset_scores(rel[None], subsets, 0.9, rule).tolist() == [[INF, 20.0]]
    # skip: {0} is scored over its own 6 blocks, index int(5.4) = 5 -> 6; {1} as before
    assert subset_scores(rel[None], subsets, 0.9, 2, skip=True).tolist() == [[6.0, 20.0]]
    # the pair: every block has a finite minimum, so both rules agree:
    # minima 1..6 then 16..21, index 10 -> 20
    both = np.array([[0, 1]])
    assert subset_scores(rel[None], both, 0.9, 2).tolist() == [[20.0]]
    assert subset_scores(rel[None], both, 0.9, 2, skip=True).tolist() == [[20.0]]
    # a subset that delivered no block is not ranked under either rule
    rel2 = rel.copy()
    rel2[:, 0] = INF
    assert subset_scores(rel2[None], subsets, 0.9, 2, skip=True)[0, 0] == INF
    # greedy and vanilla read the same rule: alone, peer 0 now beats peer 1
    assert greedy_subset(rel[None], 1, 0.9, 2, skip=True)[0].tolist() == [0]
    assert greedy_subset(rel[None], 1, 0.9, 2)[0].tolist() == [1]


@pytest.mark.parametrize("seed", range(8))
def test_skip_kernel_matches_the_authors_scoring(seed):
    from itertools import combinations

    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 40))
    rel = rng.exponential(50, size=(m, 6)).round()  # whole ms: ties, as on the authors' grid
    rel[rng.random(rel.shape) < 0.4] = INF
    subsets = np.array(list(combinations(range(6), 2)))
    sc = subset_scores(rel[None], subsets, 0.9, 2, skip=True)[0]
    for s, got in zip(subsets, sc, strict=True):
        mins = rel[:, s].min(axis=1)
        best = sorted(mins[np.isfinite(mins)].tolist())  # the blocks this subset delivered
        assert got == (best[_authors_index(len(best))] if best else INF)


def test_silent_inf_keeps_todays_goldfish_runs():
    # the goldfish preset before silent existed: +inf for silent subsets, round(q n) - 1 index
    # (values recorded from that code on this world)
    w = make_world("goldfish-random", seed=3, epochs=5, adaptive=32)
    p = get_protocol("perigee", preset="goldfish", silent="inf", quantile_index="round")
    rows = run_protocol(p, w).rows
    assert [r["wasted_latency_mean_ms"] for r in rows] == [
        450.0887694789453, 410.23622577814456, 367.6508999078535, 361.79525623966083,
        361.7262969677098,
    ]
    assert [r["t90_ms"] for r in rows] == [
        628.5051773800554, 641.2051877944065, 617.8005330466483, 628.0408399628025,
        636.1721299776932,
    ]
    skip = run_protocol(get_protocol("perigee", preset="goldfish"), w).rows
    assert skip[0]["wasted_latency_mean_ms"] == rows[0]["wasted_latency_mean_ms"]  # same start
    assert [r["wasted_latency_mean_ms"] for r in skip[1:]] != [
        r["wasted_latency_mean_ms"] for r in rows[1:]
    ]


def test_ucb_drops_the_peer_whose_lower_bound_exceeds_an_upper_bound():
    m = 200
    rel = np.tile(np.array([0.0, 5.0, 300.0, 6.0]), (m, 1))
    p = Perigee(variant="ucb", d_out=4, in_limit=0, ucb_bias=10.0)
    out, new_out, _ = _one_node_round(p, rel)
    assert set(new_out[0].tolist()) & set(out[0].tolist()) == set(out[0, [0, 1, 3]].tolist())
    assert out[0, 2] not in new_out[0]


def test_presets_fill_only_defaults_and_validate():
    g = Perigee(preset="goldfish").config()
    assert (g["d_out"], g["explore"], g["in_limit"], g["candidates"]) == (4, 1, 8, "all")
    assert Perigee(preset="goldfish", d_out=5).config()["d_out"] == 5
    assert (g["silent"], g["quantile_index"]) == ("skip", "goldfish")
    assert Perigee(preset="goldfish", silent="inf").config()["silent"] == "inf"
    b = Perigee(preset="blocknet").config()
    assert (b["d_out"], b["explore"], b["in_limit"], b["reference"]) == (10, 2, 0, "outgoing")
    for name in ("blocknet", "podc20", "none"):
        assert Perigee(preset=name).config()["silent"] == "inf"
    with pytest.raises(ParameterError, match="silent"):
        Perigee(silent="zero").config()
    with pytest.raises(ParameterError, match="explore"):
        Perigee(d_out=3, explore=3).config()


def test_limits_hold_and_perigee_improves_on_its_random_start():
    w = make_world("goldfish-random", seed=4, epochs=8, adaptive=100)
    outs = []
    res = run_protocol(get_protocol("perigee", preset="goldfish"), w, keep_outs=True)
    outs = res.outs
    for out in outs:
        indeg = np.bincount(out[out >= 0], minlength=w.n_nodes)
        assert indeg.max() <= 8 and (out >= 0).sum(axis=1).max() <= 4
        for row in out:
            got = row[row >= 0]
            assert len(set(got.tolist())) == len(got)
    first, last = res.rows[0], res.rows[-1]
    assert last["wasted_latency_mean_ms"] < 0.85 * first["wasted_latency_mean_ms"]
    assert last["t50_ms"] < first["t50_ms"]
    # only adaptive nodes rewire
    w2 = make_world("goldfish-random", seed=4, epochs=3, adaptive=10)
    r2 = run_protocol(get_protocol("perigee", preset="goldfish"), w2, keep_outs=True)
    static = ~w2.adaptive
    assert np.array_equal(r2.outs[0][static], r2.outs[-1][static])


def _run_digest(seed: int, nodes: int, epochs: int, params: dict) -> str:
    import hashlib
    import json

    from hedgerow.scenarios.run import simulate

    r = simulate("perigee", "unit-square", seed=seed, nodes=nodes, epochs=epochs,
                 params=params or None)
    h = hashlib.sha256(np.asarray(r.overlay.edges(), dtype=np.int64).tobytes())
    for row in r.rows:
        kept = {k: v for k, v in row.items() if isinstance(v, (int, float, str))
                and "second" not in k and "rss" not in k and "fingerprint" not in k}
        h.update(json.dumps(kept, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize(
    ("seed", "nodes", "epochs", "params", "expected"),
    [
        (1, 1000, 4, {}, "2e79910c6073f7ac"),
        (2, 600, 3, {"variant": "vanilla"}, "20b718a71b121d58"),
        (4, 500, 3, {"variant": "ucb"}, "7a1b9fd53686d904"),
        (3, 500, 3, {"in_limit": 0}, "5bbcc2dceb2bc2d4"),
    ],
)
def test_runs_are_those_of_the_dense_link_tables(seed, nodes, epochs, params, expected):
    """The digests were taken when the start and selection kernels kept an ``n x n`` table of
    who is linked and the epoch loop built its own for Perigee; both are gone (links read
    from the out-link rows, the loop's table skipped), and every overlay and row is the same."""
    assert _run_digest(seed, nodes, epochs, params) == expected


def test_perigee_and_goldfish_need_no_pair_table():
    from hedgerow.protocols import protocol_class
    from hedgerow.workloads.memory import adaptive_bytes

    for name in ("perigee", "goldfish"):
        cls = protocol_class(name)
        assert cls.needs_linked is False and cls.pair_bytes == 0
    assert protocol_class("topiary").needs_linked is True
    # 100,000 nodes and 1,000 messages per epoch: deliveries only
    assert adaptive_bytes(100_000, 1000, 0, linked=False) == 1000 * 100_000 * 16
