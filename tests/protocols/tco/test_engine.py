"""The TCO engine against its plain reference, and the properties of GM / LowODA."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model.bitset import pack_bool
from hedgerow.protocols.tco import engine
from hedgerow.protocols.tco.engine import naive_tco_augment, tco_augment


def _random_case(rng):
    n = int(rng.integers(2, 10))
    n_topics = int(rng.integers(1, 6))
    sub = rng.random((n, n_topics)) < rng.uniform(0.2, 0.8)
    masks = pack_bool(sub)
    k = int(rng.integers(0, n))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    pick = rng.permutation(len(pairs))[:k]
    edges = np.array([pairs[i] for i in pick], dtype=np.int64).reshape(-1, 2)
    if rng.random() < 0.5:
        nodes = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
    else:
        nodes = None
    topics = None
    if rng.random() < 0.25:
        k_t = int(rng.integers(1, n_topics + 1))
        topics = np.sort(rng.choice(n_topics, size=k_t, replace=False))
    return masks, nodes, edges, topics


def _is_tco(masks, nodes, edges, topics):
    """Every kept topic's subscribers in ``nodes`` lie in one component of ``G_t``."""
    n = masks.shape[0]
    nodes = range(n) if nodes is None else nodes
    n_bits = masks.shape[1] * 64
    for t in range(n_bits) if topics is None else topics:
        subs = {v for v in range(n) if (int(masks[v, t >> 6]) >> (t & 63)) & 1}
        par = {v: v for v in subs}

        def find(x, par=par):
            while par[x] != x:
                x = par[x]
            return x

        for a, b in edges:
            if a in subs and b in subs:
                par[find(a)] = find(b)
        roots = {find(v) for v in nodes if v in subs}
        if len(roots) > 1:
            return False
    return True


@pytest.mark.parametrize("cache_k,compact,popcount", [(32, True, True), (2, True, True),
                                                      (1, True, True), (1, False, True),
                                                      (32, True, False)])
@pytest.mark.parametrize("rule,rho", [("gm", 1.0), ("minmaxoda", 1.0), ("lowoda", 1.0),
                                      ("lowoda", 1.5), ("lowoda", 3.0)])
def test_engine_equals_naive_reference(rule, rho, cache_k, compact, popcount, monkeypatch):
    """Same edge sequence as the reference on 80 random small instances per rule (400 in all).

    With the default row cache (32 entries) every row of these instances fits in its cache;
    with 1 or 2 entries a heap pop is mostly answered by the cache's bound argument (the
    best cached entry against the last cached key of the row's last scan), or falls back to
    a scan: both paths must give the reference's edges, with int32 threshold keys and with
    int64 ones; and from no start edges with the initial contributions by popcounts of the
    topic bit sets or by the per-topic sums.
    """
    monkeypatch.setattr(engine, "_CACHE_K", cache_k)
    monkeypatch.setattr(engine, "_COMPACT", compact)
    monkeypatch.setattr(engine, "_POPCOUNT_START", popcount)
    rng = np.random.default_rng(11)
    nonempty = 0
    for _case in range(80):
        masks, nodes, edges, topics = _random_case(rng)
        seed = int(rng.integers(1 << 30))
        got = tco_augment(masks, nodes, edges, rule=rule, rho=rho, topics=topics,
                          rng=np.random.default_rng(seed))
        want = naive_tco_augment(masks, nodes, edges, rule=rule, rho=rho, topics=topics,
                                 rng=np.random.default_rng(seed))
        assert got.tolist() == want.tolist()
        allnew = np.vstack([edges, got])
        assert _is_tco(masks, nodes, allnew.tolist(), topics)
        if nodes is not None:
            assert np.isin(got, nodes).all()
        nonempty += len(got) > 0
    assert nonempty > 40


@pytest.mark.parametrize("rule,rho", [("gm", 1.0), ("lowoda", 1.0), ("lowoda", 2.0),
                                      ("minmaxoda", 1.0)])
def test_row_cache_size_does_not_change_the_edges(rule, rho, monkeypatch):
    """On a 300-node instance (rows far longer than the cache) the edges depend neither on the
    row cache size nor on the key width (-16: int64 keys), and the cache answers most heap
    pops."""
    from hedgerow.workloads.powerlaw import powerlaw_instance

    inst = powerlaw_instance(nodes=300, topics=60, popularity="zipf2", lo=4, hi=30, seed=4)
    got = {}
    for k in (1, 4, 16, 400, -16):
        monkeypatch.setattr(engine, "_CACHE_K", abs(k))
        monkeypatch.setattr(engine, "_COMPACT", k > 0)
        stats: dict = {}
        got[k] = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule=rule, rho=rho,
                             rng=np.random.default_rng(7), stats=stats).tolist()
        if k == 16:
            assert stats["cache_hits"] > stats["scans"], stats
        if k == 400:  # every eligible entry fits: each row is scanned once per threshold
            assert stats["scans"] <= inst.n_nodes * max(stats["thresholds"], 1), stats
    assert len(got[16]) > 100
    assert got[1] == got[4] == got[16] == got[400] == got[-16]


def _min_completion(masks, edges):
    """Fewest edges completing ``edges`` to a TCO (brute force)."""
    n = masks.shape[0]
    have = set(map(tuple, edges))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if (a, b) not in have]
    for k in range(len(pairs) + 1):
        for extra in itertools.combinations(pairs, k):
            if _is_tco(masks, None, list(map(tuple, edges)) + list(extra), None):
                return k
    raise AssertionError("unreachable")


def test_gm_within_greedy_set_cover_bound():
    """|E_GM| <= (1 + ln Φ₀) x the brute-force optimum (PODC'07 greedy bound)."""
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(40):
        n = int(rng.integers(3, 7))
        sub = rng.random((n, 4)) < 0.5
        masks = pack_bool(sub)
        edges = np.empty((0, 2), np.int64)
        stats: dict = {}
        got = tco_augment(masks, None, edges, rule="gm", rng=np.random.default_rng(1), stats=stats)
        if stats.get("phi0", 0) == 0:
            continue
        opt = _min_completion(masks, edges.tolist())
        assert len(got) <= (1 + math.log(stats["phi0"])) * opt + 1e-9
        checked += 1
    assert checked > 20


def test_lowoda_rho1_takes_only_maximum_contributions():
    """With ρ = 1 every chosen edge has the largest contribution at its step."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        masks = pack_bool(rng.random((12, 6)) < 0.5)
        got = tco_augment(masks, None, np.empty((0, 2), np.int64), rule="lowoda", rho=1.0,
                          rng=np.random.default_rng(2))
        cur: list = []
        for a, b in got.tolist():
            contrib = _contributions(masks, cur)
            assert contrib[(a, b)] == max(contrib.values())
            cur.append((a, b))


def _contributions(masks, edges):
    n = masks.shape[0]
    n_bits = masks.shape[1] * 64
    out = {}
    comps = []
    for t in range(n_bits):
        subs = {v for v in range(n) if (int(masks[v, t >> 6]) >> (t & 63)) & 1}
        par = {v: v for v in subs}

        def find(x, par=par):
            while par[x] != x:
                x = par[x]
            return x

        for a, b in edges:
            if a in subs and b in subs:
                par[find(a)] = find(b)
        comps.append({v: find(v) for v in subs})
    for a in range(n):
        for b in range(a + 1, n):
            c = sum(1 for cm in comps if a in cm and b in cm and cm[a] != cm[b])
            if c:
                out[(a, b)] = c
    return out


def test_bad_parameters_are_one_line_errors():
    m = pack_bool(np.ones((3, 2), bool))
    with pytest.raises(ParameterError, match="rho must be >= 1"):
        tco_augment(m, None, [], rule="lowoda", rho=0.5, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="rule must be one of"):
        tco_augment(m, None, [], rule="nope", rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="nodes must lie"):
        tco_augment(m, [0, 7], [], rule="gm", rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    ("name", "seed", "popularity", "expected"),
    [
        ("gm", 1, "rss", "1fa3d8be76d57389"),
        ("lowoda", 2, "uniform", "451ccca55e8cdba8"),
        ("minmaxoda", 1, "rss", "f6f23c94f688bb5c"),
    ],
)
def test_one_byte_contributions_build_the_int16_overlays(name, seed, popularity, expected):
    """Below 127 topics the contribution matrix is ``int8`` (a contribution counts topics);
    the digests were taken with the ``int16`` matrix, on 1,000 nodes among 100 topics."""
    import hashlib

    from hedgerow.protocols import get_protocol
    from hedgerow.workloads import make_instance

    inst = make_instance(nodes=1000, topics=100, subs=10, popularity=popularity, seed=seed)
    e = np.asarray(get_protocol(name).build(inst, seed=seed).edges(), dtype=np.int64)
    e = e[np.lexsort((e[:, 1], e[:, 0]))]
    assert hashlib.sha256(e.tobytes()).hexdigest()[:16] == expected


_EAGER_DIGESTS = {
    ("unit-square", "gm", 1.0): (4867, "6f71204fd820f780"),
    ("unit-square", "lowoda", 1.0): (4820, "94da4ac41e5f8952"),
    ("unit-square", "lowoda", 2.0): (5170, "f991dc7d3486ac2d"),
    ("unit-square", "minmaxoda", 1.0): (5243, "60357dbe8bb71ba5"),
    ("rss-unit-square", "gm", 1.0): (4991, "0c5a5f207dab1945"),
    ("rss-unit-square", "lowoda", 2.0): (5193, "bd6622ca3d9a47e1"),
}


@pytest.mark.parametrize(("world", "rule", "rho"), sorted(_EAGER_DIGESTS))
def test_lazy_rows_build_the_eager_engines_overlays(world, rule, rho):
    """The rows of a merge's longer side are lowered when next read, not at the merge; the
    edge sequences (in the order chosen) are those of the engine that lowered both sides at
    once, whose digests these are, on 2,000-node head-to-head worlds (100 topics)."""
    import hashlib

    from hedgerow.scenarios.world.make import make_world

    inst = make_world(world, seed=2, nodes=2000).instance
    e = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule=rule, rho=rho,
                    rng=np.random.default_rng(5))
    assert (len(e), hashlib.sha256(e.tobytes()).hexdigest()[:16]) == _EAGER_DIGESTS[
        (world, rule, rho)]


def test_lazy_rows_repair_like_the_eager_engine():
    """From 3,000 start links, on 1,500 of 2,000 nodes and half the topics (the repairs'
    shape: start components that already hold many members): the eager engine's edges."""
    import hashlib

    from hedgerow.scenarios.world.make import make_world

    inst = make_world("unit-square", seed=3, nodes=2000).instance
    rng = np.random.default_rng(9)
    start = rng.integers(0, 2000, size=(3000, 2))
    start = start[start[:, 0] != start[:, 1]]
    nodes = np.sort(rng.choice(2000, 1500, replace=False))
    e = tco_augment(inst.masks, nodes, start, rule="lowoda", rho=2.0,
                    rng=np.random.default_rng(4), topics=np.arange(0, 100, 2))
    assert (len(e), hashlib.sha256(e.tobytes()).hexdigest()[:16]) == (2219, "c2a10d865e43663e")


# ---------------------------------------------------------------------------
# the contribution matrix's layouts: four bits a cell (with the table of pairs at 15 or
# more), one byte a cell, and the wide cells of many topics give the same edges


def _shared_case(rng, n_topics):
    """A small instance whose pairs share many topics (counts of 15 and more are common)."""
    n = int(rng.integers(3, 10))
    sub = rng.random((n, n_topics)) < rng.uniform(0.55, 0.95)
    masks = pack_bool(sub)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    pick = rng.permutation(len(pairs))[: int(rng.integers(0, n))]
    edges = np.array([pairs[i] for i in pick], dtype=np.int64).reshape(-1, 2)
    nodes = None
    if rng.random() < 0.4:
        nodes = np.sort(rng.choice(n, size=int(rng.integers(2, n + 1)), replace=False))
    topics = None
    if rng.random() < 0.25:
        topics = np.sort(rng.choice(n_topics, size=int(rng.integers(16, n_topics + 1)),
                                    replace=False))
    return masks, nodes, edges, topics


@pytest.mark.parametrize("cache_k", [32, 1])
@pytest.mark.parametrize("rule,rho", [("gm", 1.0), ("minmaxoda", 1.0), ("lowoda", 1.0),
                                      ("lowoda", 1.5), ("lowoda", 3.0)])
def test_four_bit_cells_with_counts_above_14_equal_the_reference(rule, rho, cache_k,
                                                                 monkeypatch):
    """Nodes sharing 16-40 topics: the pairs at 15 or more live in the four-bit layout's
    table (lowered there, written back to their cell at 14); the reference's edges, from
    the popcount start, the per-topic sums and start edges, on subsets and topic subsets."""
    monkeypatch.setattr(engine, "_CACHE_K", cache_k)
    rng = np.random.default_rng(23)
    over = 0
    for case in range(40):
        masks, nodes, edges, topics = _shared_case(rng, int(rng.integers(16, 41)))
        monkeypatch.setattr(engine, "_POPCOUNT_START", case % 2 == 0)
        seed = int(rng.integers(1 << 30))
        stats: dict = {}
        got = tco_augment(masks, nodes, edges, rule=rule, rho=rho, topics=topics,
                          rng=np.random.default_rng(seed), stats=stats)
        want = naive_tco_augment(masks, nodes, edges, rule=rule, rho=rho, topics=topics,
                                 rng=np.random.default_rng(seed))
        assert got.tolist() == want.tolist()
        if stats:
            assert stats["cell_bits"] == 4
            over += stats["overflow"] > 0
    assert over > 15


def test_wide_cells_of_many_topics_equal_the_reference():
    """From 127 relevant topics a contribution needs more than a byte: ``int16`` cells,
    the reference's edges."""
    rng = np.random.default_rng(29)
    for rule, rho in (("gm", 1.0), ("lowoda", 1.0), ("lowoda", 2.0), ("minmaxoda", 1.0)):
        for _ in range(3):
            masks, nodes, edges, _topics = _shared_case(rng, 300)
            nodes = None
            stats: dict = {}
            got = tco_augment(masks, nodes, edges, rule=rule, rho=rho,
                              rng=np.random.default_rng(3), stats=stats)
            want = naive_tco_augment(masks, nodes, edges, rule=rule, rho=rho,
                                     rng=np.random.default_rng(3))
            assert got.tolist() == want.tolist()
            assert stats["cell_bits"] == 16


def _layouts(masks, nodes, edges, topics, rule, rho, monkeypatch):
    """The edges (and stats) with four-bit cells and with one byte a cell."""
    out = []
    for packed in (True, False):
        monkeypatch.setattr(engine, "_PACKED", packed)
        stats: dict = {}
        e = tco_augment(masks, nodes, edges, rule=rule, rho=rho, topics=topics,
                        rng=np.random.default_rng(8), stats=stats)
        out.append((e.tolist(), stats))
    return out


@pytest.mark.parametrize("rule,rho", [("gm", 1.0), ("minmaxoda", 1.0), ("lowoda", 1.0),
                                      ("lowoda", 2.0), ("lowoda", 4.0)])
@pytest.mark.parametrize("shape", ["build", "repair"])
def test_four_bit_cells_build_the_one_byte_overlays(rule, rho, shape, monkeypatch):
    """401 nodes among 40 topics at 55% (pairs share 12 topics on average, thousands 15 or
    more) and, for the repairs' shape, 600 start links on 300 of the nodes and 36 topics:
    the same edge sequence in both layouts, with a row cache of 32 and of 2 entries."""
    rng = np.random.default_rng(31)
    n = 401  # odd: the last byte of a row holds one cell
    masks = pack_bool(rng.random((n, 40)) < 0.55)
    edges = np.zeros((0, 2), np.int64)
    nodes = topics = None
    if shape == "repair":
        edges = rng.integers(0, n, size=(600, 2))
        edges = edges[edges[:, 0] != edges[:, 1]]
        nodes = np.sort(rng.choice(n, 300, replace=False))
        topics = np.sort(rng.choice(40, 36, replace=False))
    for k in (32, 2):
        monkeypatch.setattr(engine, "_CACHE_K", k)
        (four, s4), (byte, s8) = _layouts(masks, nodes, edges, topics, rule, rho, monkeypatch)
        assert (s4["cell_bits"], s8["cell_bits"]) == (4, 8)
        assert s4["overflow"] > 1000
        assert len(four) > 100
        assert four == byte
        assert s4["scans"] == s8["scans"] and s4["cache_hits"] == s8["cache_hits"]


def test_a_large_table_falls_back_to_one_byte_cells(monkeypatch):
    """When the pairs at 15 or more pass the table's cap the engine keeps one byte a cell
    (decided before the matrix is allocated), with the same edges."""
    from hedgerow.workloads import memory

    rng = np.random.default_rng(37)
    masks = pack_bool(rng.random((200, 40)) < 0.5)
    none = np.zeros((0, 2), np.int64)
    stats: dict = {}
    want = tco_augment(masks, None, none, rule="gm", rng=np.random.default_rng(1), stats=stats)
    assert stats["cell_bits"] == 4 and stats["overflow"] > 0
    monkeypatch.setattr(memory, "tco_overflow_cap", lambda nodes: 1)
    monkeypatch.setattr(engine, "tco_overflow_cap", lambda nodes: 1)
    stats = {}
    got = tco_augment(masks, None, none, rule="gm", rng=np.random.default_rng(1), stats=stats)
    assert (stats["cell_bits"], stats["overflow"]) == (8, -1)
    assert got.tolist() == want.tolist()


def test_overflow_pairs_lists_every_pair_at_15_or_more_in_both_rows():
    """The table against a brute-force count: both orders, columns ascending per row; -1
    past the cap."""
    from hedgerow.model.bitset import interest_matrix
    from hedgerow.protocols.tco import _kernels as K

    rng = np.random.default_rng(41)
    for words in (1, 2, 3):
        nt = 64 * words - 3
        sub = rng.random((60, nt)) < 0.4
        m = pack_bool(sub)
        assert (interest_matrix(m, nt) == sub).all()
        shared = sub.astype(np.int64) @ sub.T.astype(np.int64)
        np.fill_diagonal(shared, 0)
        cand = np.flatnonzero(sub.sum(axis=1) >= 15).astype(np.int64)
        n, optr, ocol, oval = K.overflow_pairs(m, cand, 60 * 60)
        rows = [np.flatnonzero(shared[a] >= 15) for a in range(60)]
        assert n == sum(len(r) for r in rows) > 0
        for a in range(60):
            assert ocol[optr[a]:optr[a + 1]].tolist() == rows[a].tolist()
            assert oval[optr[a]:optr[a + 1]].tolist() == shared[a, rows[a]].tolist()
        assert K.overflow_pairs(m, cand, n - 1)[0] == -1
