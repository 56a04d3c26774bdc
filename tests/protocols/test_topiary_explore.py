"""Topiary's exploration by topics (``hedgerow.protocols.topiary.explore``): the law of eq. (10).

The draws are checked against the exact successive-sampling probabilities of small worked
examples (every ordered outcome enumerated), for the topic sampler and for the table sampler
it replaces at scale, then for the rules of a draw (no self, linked, current or repeated peer),
determinism by seed, and the epoch loop's side (no ``n x n`` table, its links, its estimate).
"""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import numpy as np
import pytest
from scipy import stats

import hedgerow.protocols.topiary.explore as explore
from hedgerow.model import Instance
from hedgerow.model.outlinks import closure_csr
from hedgerow.protocols.topiary import Topiary, _explore, _link_rows
from hedgerow.protocols.topiary.explore import explore_topics
from hedgerow.scenarios import run_protocol, simulate
from hedgerow.scenarios.world import make_world


def exact_law(omega: np.ndarray, allowed: np.ndarray, take: int) -> dict[tuple[int, ...], float]:
    """Every ordered outcome of ``take`` successive draws ∝ ω over ``allowed`` (then uniform
    over the allowed ``ω = 0`` columns once no positive one is left), with its probability."""
    cand = [int(u) for u in np.flatnonzero(allowed)]
    law: dict[tuple[int, ...], float] = {}
    for seq in permutations(cand, min(take, len(cand))):
        p, left = 1.0, set(cand)
        for u in seq:
            pos = [x for x in left if omega[x] > 0]
            if pos:
                p *= omega[u] / sum(omega[x] for x in pos) if omega[u] > 0 else 0.0
            else:
                p *= 1.0 / len(left)
            left.discard(u)
        if p > 0:
            law[seq] = p
    return law


def chi_square_p(counts: Counter, law: dict[tuple[int, ...], float], draws: int) -> float:
    assert set(counts) <= set(law), f"outcomes outside the law: {set(counts) - set(law)}"
    keys = sorted(law)
    observed = np.array([counts.get(k, 0) for k in keys], dtype=float)
    expected = np.array([law[k] * draws for k in keys])
    return float(stats.chisquare(observed, expected).pvalue)


def _csr(n: int, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The undirected links ``pairs`` of ``n`` nodes as a CSR."""
    rows = [a for a, _ in pairs] + [b for _, b in pairs]
    cols = [b for _, b in pairs] + [a for a, _ in pairs]
    order = np.lexsort((cols, rows))
    rows_a, cols_a = np.asarray(rows)[order], np.asarray(cols)[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows_a, minlength=n), out=indptr[1:])
    return indptr, cols_a.astype(np.int64)


# node 0 explores by topics {0, 1}: node 1 (linked) and 7 (an out-link) are excluded; ω of
# 2..4 is 2, 1, 1; nodes 5 and 6 have ω = 0 and come uniformly after them
_SUBS = [[0, 1, 2], [0], [0, 1], [1], [0], [2], [], [1]]
_PLUS = np.array([[True, True, False]] + [[False] * 3] * 7)
_OUT = np.array([[7, -1]] + [[-1, -1]] * 7)
_LINKS = _csr(8, [(0, 1), (0, 7)])


def _omega_allowed(subs, plus_row, excluded, n):
    omega = np.array([len(set(s) & set(np.flatnonzero(plus_row).tolist())) for s in subs],
                     dtype=float)
    allowed = np.ones(n, dtype=bool)
    allowed[list(excluded)] = False
    return omega, allowed


@pytest.mark.parametrize("tries", [explore.MAX_TRIES, 1])
def test_topic_draws_follow_the_exact_successive_sampling_law(monkeypatch, tries):
    """Four draws: the three positive candidates in ∝-ω order, then one of the ω = 0 ones.

    ``tries = 1`` sends most rows to the exact count after one rejected pair, so both paths of
    the kernel are held to the law."""
    monkeypatch.setattr(explore, "MAX_TRIES", tries)
    inst = Instance.from_lists(_SUBS, n_topics=3)
    omega, allowed = _omega_allowed(_SUBS, _PLUS[0], {0, 1, 7}, 8)
    law = exact_law(omega, allowed, 4)
    assert len(law) == 12 and abs(sum(law.values()) - 1) < 1e-12
    rng = np.random.default_rng(11)
    take = np.array([4, 0, 0, 0, 0, 0, 0, 0])
    draws = 6000
    counts = Counter(tuple(explore_topics(_PLUS, inst, _LINKS, _OUT, take, rng)[0].tolist())
                     for _ in range(draws))
    assert chi_square_p(counts, law, draws) > 1e-3


def test_table_sampler_follows_the_same_law():
    """The sampler the topics one replaces is successive sampling too (the same law)."""
    inst = Instance.from_lists(_SUBS, n_topics=3)
    omega, allowed = _omega_allowed(_SUBS, _PLUS[0], {0, 1, 7}, 8)
    law = exact_law(omega, allowed, 4)
    linked = np.zeros((8, 8), dtype=bool)
    linked[0, [1, 7]] = linked[[1, 7], 0] = True
    interest = np.zeros((8, 3), dtype=bool)
    for v, s in enumerate(_SUBS):
        interest[v, s] = True
    rng = np.random.default_rng(12)
    take = np.array([4, 0, 0, 0, 0, 0, 0, 0])
    draws = 6000
    counts = Counter(tuple(_explore(_PLUS, interest, linked, _OUT, take, rng)[0].tolist())
                     for _ in range(draws))
    assert inst.n_nodes == 8
    assert chi_square_p(counts, law, draws) > 1e-3


def test_mostly_linked_topic_falls_back_to_the_exact_count():
    """σ_0^+ = {0}, whose 30 subscribers are all linked to node 0 but three: rejection alone
    would rarely find them; the draws still follow the law, then the ω = 0 nodes 31, 32."""
    n = 33
    subs = [[0]] * 31 + [[1], [1]]
    inst = Instance.from_lists(subs, n_topics=2)
    plus = np.zeros((n, 2), dtype=bool)
    plus[0, 0] = True
    links = _csr(n, [(0, u) for u in range(1, 28)])
    out = np.full((n, 1), -1)
    omega, allowed = _omega_allowed(subs, plus[0], set(range(28)), n)
    law = exact_law(omega, allowed, 4)
    rng = np.random.default_rng(5)
    take = np.zeros(n, dtype=np.int64)
    take[0] = 4
    draws = 3000
    counts = Counter(tuple(explore_topics(plus, inst, links, out, take, rng)[0].tolist())
                     for _ in range(draws))
    assert chi_square_p(counts, law, draws) > 1e-3
    # asking for more than the allowed nodes gives all of them, then -1
    take[0] = 9
    row = explore_topics(plus, inst, links, out, take, rng)[0].tolist()
    assert sorted(row[:5]) == [28, 29, 30, 31, 32] and row[5:] == [-1] * 4


def test_empty_sigma_plus_draws_uniformly_among_the_allowed():
    """A node with no σ+ topics (ω = 0 everywhere) draws uniformly among the allowed nodes."""
    n = 6
    inst = Instance.from_lists([[0]] * n, n_topics=1)
    plus = np.zeros((n, 1), dtype=bool)
    links = _csr(n, [(0, 2)])
    out = np.full((n, 1), -1)
    take = np.array([2, 0, 0, 0, 0, 0])
    omega, allowed = _omega_allowed([[]] * n, plus[0], {0, 2}, n)
    law = exact_law(omega, allowed, 2)
    assert len(law) == 12
    rng = np.random.default_rng(3)
    counts = Counter(tuple(explore_topics(plus, inst, links, out, take, rng)[0].tolist())
                     for _ in range(4000))
    assert chi_square_p(counts, law, 4000) > 1e-3


def test_draws_never_repeat_or_hit_self_linked_or_current_peers():
    rng = np.random.default_rng(0)
    n, t, d = 400, 12, 5
    subs = [sorted(rng.choice(t, size=rng.integers(1, 4), replace=False).tolist())
            for _ in range(n)]
    inst = Instance.from_lists(subs, n_topics=t)
    out = np.full((n, d), -1)
    for v in range(n):
        out[v, :3] = rng.choice(np.delete(np.arange(n), v), size=3, replace=False)
    fixed = rng.integers(0, n, size=(200, 2))
    fixed = fixed[fixed[:, 0] != fixed[:, 1]]
    links = closure_csr(out, n, fixed)
    plus = np.zeros((n, t), dtype=bool)
    for v, s in enumerate(subs):
        plus[v, s[:1]] = True
    take = rng.integers(0, 4, size=n)
    a = explore_topics(plus, inst, links, out, take, np.random.default_rng(9))
    for v in range(n):
        got = [u for u in a[v].tolist() if u >= 0]
        assert len(got) == take[v] and len(set(got)) == len(got)
        banned = {v, *links[1][links[0][v]:links[0][v + 1]].tolist(), *out[v].tolist()}
        assert not banned & set(got)
    np.testing.assert_array_equal(a, explore_topics(plus, inst, links, out, take,
                                                    np.random.default_rng(9)))
    assert not np.array_equal(a, explore_topics(plus, inst, links, out, take,
                                                np.random.default_rng(10)))


def test_link_rows_read_the_table_or_the_closure():
    out = np.array([[1, -1], [-1, -1], [1, 0]])
    table = np.zeros((3, 3), dtype=bool)
    indptr, indices = closure_csr(out, 3)
    table[np.repeat(np.arange(3), np.diff(indptr)), indices] = True
    for linked in (table, np.zeros((0, 0), dtype=bool)):
        got = _link_rows(linked, out)
        assert got[0].tolist() == indptr.tolist() and got[1].tolist() == indices.tolist()


def test_topics_run_holds_no_link_table_and_sees_the_attackers_links(monkeypatch):
    """The loop hands the topics exploration an empty table; the links it excludes are the
    epoch's CSR, the eclipse attackers' clique included; runs repeat by seed."""
    seen: list[tuple[int, ...]] = []
    original = Topiary.select

    def select(self, state, instance, out, linked, active):
        seen.append(linked.shape)
        world = self._world
        expect = closure_csr(out, instance.n_nodes, world.attack.fixed_edges)
        assert self.links_ is not None
        np.testing.assert_array_equal(self.links_[0], expect[0])
        np.testing.assert_array_equal(self.links_[1], expect[1])
        new_out, score = original(self, state, instance, out, linked, active)
        ip, ix = expect
        for v in np.flatnonzero(active):
            fresh = set(new_out[v].tolist()) - set(out[v].tolist()) - {-1}
            assert not fresh & set(ix[ip[v]:ip[v + 1]].tolist())
        return new_out, score

    monkeypatch.setattr(Topiary, "select", select)
    world = make_world("eclipse", seed=1, nodes=120, attackers=30, epochs=3, messages=60)
    proto = Topiary(exploration="topics")
    proto._world = world
    res = run_protocol(proto, world, keep_outs=True)
    assert seen == [(0, 0)] * 3
    again = Topiary(exploration="topics")
    again._world = world
    res2 = run_protocol(again, world, keep_outs=True)
    for a, b in zip(res.outs, res2.outs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_memory_estimate_counts_the_table_only_when_it_is_held(monkeypatch):
    import hedgerow.scenarios.epochs as epochs

    asked: list[tuple[str, float]] = []
    monkeypatch.setattr(epochs, "check_memory", lambda what, b, **kw: asked.append((what, b)))
    for how in ("table", "topics"):
        simulate("topiary", "unit-square", seed=1, nodes=200, epochs=1, messages=20,
                 params={"exploration": how})
    (table_what, table_bytes), (topics_what, topics_bytes) = asked
    assert "(1 byte per pair" in table_what and "(0 bytes per pair" in topics_what
    assert table_bytes - topics_bytes == 200 * 200


def test_table_stays_the_default_and_bad_values_are_refused():
    from hedgerow.errors import ParameterError

    assert Topiary().checked()["exploration"] == "table"
    with pytest.raises(ParameterError, match="exploration"):
        Topiary(exploration="pairs").checked()
