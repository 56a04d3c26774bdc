"""Backup sets (section 4.2): eqs. (1)-(3) and the greedy vs primal-dual balance (section 6.3)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.model import Instance
from hedgerow.protocols.omen.backups import (
    backup_set,
    coverage_factor,
    refresh_entry,
    uncovered_topics,
)
from hedgerow.workloads import make_instance


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=400, topics=60, subs="3:15", popularity="zipf2", seed=5)


@pytest.mark.parametrize("builder", ["greedy", "pd", "pd-dual"])
@pytest.mark.parametrize("lam", [1, 3, 5])
@pytest.mark.parametrize("cover", ["multi", "repeat"])
def test_backup_sets_are_acceptable_lambda_sets(inst, builder, lam, cover):
    rng = np.random.default_rng(1)
    ip, tp = inst.sub_indptr, inst.sub_topics
    everyone = np.arange(inst.n_nodes)
    pick = "dual" if builder == "pd-dual" else "random"
    load = np.arange(inst.n_nodes) % 7 if pick == "dual" else None
    for v in range(0, inst.n_nodes, 7):
        b = backup_set(ip, tp, v, everyone, lam, builder[:2] if pick == "dual" else builder,
                       rng, n_topics=inst.n_topics, pick=pick, load=load, cover=cover)
        assert v not in b and len(set(b.tolist())) == len(b)
        vt = inst.topics_of(v)
        for u in b.tolist():  # eq. (2): individual commitment
            assert np.isin(inst.topics_of(u), vt).any()
        held = np.zeros(len(vt), dtype=np.int64)
        for u in b.tolist():
            held += np.isin(vt, inst.topics_of(u))
        avail = np.array([len(set(inst.subscribers(t).tolist()) - {v}) for t in vt])
        # eq. (3) with targets capped by availability (reading R-4)
        assert (held >= np.minimum(avail, lam)).all()
        if (avail >= lam).all():
            assert coverage_factor(ip, tp, v, b) >= lam


def test_repeated_whole_covers_are_at_least_as_large():
    """cover="repeat" (R-4): whole covers until lambda-coverage, never smaller than one run."""
    inst = _powerlaw_instance()
    sizes = {}
    for cover in ("multi", "repeat"):
        rng = np.random.default_rng(3)
        sizes[cover] = sum(
            len(backup_set(inst.sub_indptr, inst.sub_topics, v, np.arange(inst.n_nodes), 3,
                           "greedy", rng, n_topics=inst.n_topics, cover=cover))
            for v in range(0, inst.n_nodes, 5))
    assert sizes["repeat"] >= sizes["multi"]


def test_ready_lambda_needs_lambda_holders():
    """ready="lambda" (R-6 option): ready only once each topic is held min(lam, others) times."""
    inst = Instance.from_lists([[0], [0], [0], [0]], n_topics=1)
    live = np.array([4])
    args = (inst.sub_indptr, inst.sub_topics, 2, "pd", np.random.default_rng(0), live)
    b, ok = refresh_entry(0, np.array([1]), np.ones(4, bool), *args, ready="lambda")
    assert b.tolist() == [1] and ok is False
    b, ok = refresh_entry(0, np.array([1]), np.ones(4, bool), *args)
    assert ok is True
    b, ok = refresh_entry(0, np.array([1, 2, 3]), np.ones(4, bool), *args, ready="lambda")
    assert len(b) == 2 and ok is True


def test_a_topic_nobody_else_holds_does_not_block():
    inst = Instance.from_lists([[0, 1], [0], [2]], n_topics=3)
    b = backup_set(inst.sub_indptr, inst.sub_topics, 0, np.arange(3), 2, "pd",
                   np.random.default_rng(0))
    assert b.tolist() == [1]
    others = np.array([2, 1, 1]) - np.isin(np.arange(3), [0, 1])
    assert uncovered_topics(inst.sub_indptr, inst.sub_topics, 0, b, others).tolist() == []
    ready = refresh_entry(0, np.array([2, 2, 0]), np.ones(3, bool), inst.sub_indptr,
                          inst.sub_topics, 1, "pd", np.random.default_rng(0), np.array([2, 1, 1]))
    assert ready[0].tolist() == [] and ready[1] is False  # topic 0 is held by node 1, not covered


def _in_degrees(inst, builder, pick, lam=3, priced=None):
    """Every node's set over all others, node by node; ``priced``: price by backup load."""
    rng = np.random.default_rng(7)
    priced = pick == "dual" if priced is None else priced
    indeg = np.zeros(inst.n_nodes, dtype=np.int64)
    sizes = []
    for v in range(inst.n_nodes):
        b = backup_set(inst.sub_indptr, inst.sub_topics, v, np.arange(inst.n_nodes), lam,
                       builder, rng, pick=pick, n_topics=inst.n_topics,
                       load=indeg if priced else None)
        indeg[b] += 1
        sizes.append(len(b))
    return indeg, float(np.mean(sizes))


def _powerlaw_instance(n=600, topics=60, lo=3, hi=27, alpha=2.0, seed=3):
    """Section 6.1's synthetic shape: power-law subscription sizes, uniform topics."""
    rng = np.random.default_rng(seed)
    k = np.arange(lo, hi + 1)
    p = k ** -alpha
    sizes = rng.choice(k, size=n, p=p / p.sum())
    return Instance.from_lists(
        [np.sort(rng.choice(topics, size=s, replace=False)) for s in sizes], n_topics=topics
    )


def test_primal_dual_is_balanced_and_larger_than_greedy():
    """Section 6.3: PD's in-degrees balanced (21-59 vs greedy's 581), sets larger (2.8% vs 1.1%).

    The default primal-dual (R-5): load-priced subscribers, the dual of a random
    uncovered topic raised until one is tight.
    """
    inst = _powerlaw_instance()
    g_in, g_size = _in_degrees(inst, "greedy", "random")
    p_in, p_size = _in_degrees(inst, "pd", "dual")
    assert 3 * p_in.max() <= g_in.max()
    assert p_in.min() > 0  # every node serves, as in the paper's 21-59
    assert (p_in < 5).mean() < 0.5 * (g_in < 5).mean()
    assert p_size > 1.5 * g_size


def test_uniform_random_subscriber_is_balanced_less_so_than_priced():
    """The former reading (``pick="random"``): balanced against greedy, less than the priced PD."""
    inst = _powerlaw_instance()
    g_in, _ = _in_degrees(inst, "greedy", "random")
    r_in, _ = _in_degrees(inst, "pd", "random")
    p_in, _ = _in_degrees(inst, "pd", "dual")
    assert 2 * r_in.max() <= g_in.max()
    assert p_in.max() < r_in.max()


def test_unit_priced_primal_dual_behaves_like_greedy():
    """Without the load price the dual-raising step picks bulk subscribers like greedy."""
    inst = _powerlaw_instance()
    g_in, g_size = _in_degrees(inst, "greedy", "random")
    u_in, u_size = _in_degrees(inst, "pd", "dual", priced=False)
    assert abs(u_size - g_size) < 0.25 * g_size
    assert u_in.max() > 0.5 * g_in.max()


def test_dual_step_takes_the_cheapest_subscriber():
    """Worked example: topic 0 is held by nodes 1 (load 5) and 2 (load 0); node 2 is taken."""
    inst = Instance.from_lists([[0], [0], [0]], n_topics=1)
    load = np.array([0, 5, 0])
    b = backup_set(inst.sub_indptr, inst.sub_topics, 0, np.arange(3), 1, "pd",
                   np.random.default_rng(0), pick="dual", load=load)
    assert b.tolist() == [2]
    b2 = backup_set(inst.sub_indptr, inst.sub_topics, 0, np.arange(3), 2, "pd",
                    np.random.default_rng(0), pick="dual", load=load)
    assert b2.tolist() == [2, 1]


def test_literal_max_gain_primal_dual_behaves_like_greedy():
    """The reading R-5 pin: the literal max-gain subscriber is as skewed as greedy."""
    inst = _powerlaw_instance()
    g_in, g_size = _in_degrees(inst, "greedy", "random")
    m_in, m_size = _in_degrees(inst, "pd", "max-gain")
    assert abs(m_size - g_size) < 0.25 * g_size
    assert m_in.max() > 0.5 * g_in.max()


@pytest.mark.parametrize("builder", ["greedy", "pd"])
@pytest.mark.parametrize("pick", ["dual", "random", "max-gain"])
@pytest.mark.parametrize("cover", ["multi", "repeat"])
def test_bit_mask_builder_chooses_the_same_sets(builder, pick, cover):
    """With the nodes' topic bit masks the builder (the primal-dual multi-cover on words,
    or the incidence from word tests) takes the same members in the same order as on the
    topic lists, for any λ, load and pool (duplicates, the node itself, nodes sharing
    nothing); the ready flag agrees too.  λ up to 40: the bit-mask builder counts members in
    bit-sliced counters of one slice per bit of λ, so counts cross 3, 7, 15 and 31."""
    from hedgerow.model import pack_sets

    rng = np.random.default_rng(11)
    inst = make_instance(nodes=260, topics=700, subs="1:120", popularity="zipf1", seed=3)
    ip, tp, nt = inst.sub_indptr, inst.sub_topics, inst.n_topics
    masks = pack_sets(ip, tp, nt)
    online = rng.random(inst.n_nodes) < 0.9
    live = np.zeros(nt, np.int64)
    np.add.at(live, inst.sub_topics[np.repeat(online, np.diff(ip))], 1)
    load = rng.integers(0, 6, inst.n_nodes)
    compared = 0
    for trial in range(120):
        v = int(rng.integers(inst.n_nodes))
        pool = rng.choice(inst.n_nodes, size=int(rng.integers(0, 200)))
        pool = np.concatenate((pool, pool[: len(pool) // 4], [v]))
        lam = int(rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 40]))
        seed = int(rng.integers(1 << 30))
        kw = {"pick": pick, "n_topics": nt, "load": load if trial % 3 else None,
              "cover": cover}
        a = backup_set(ip, tp, v, pool, lam, builder, np.random.default_rng(seed), **kw)
        b = backup_set(ip, tp, v, pool, lam, builder, np.random.default_rng(seed), **kw,
                       masks=masks)
        assert a.tolist() == b.tolist(), trial
        if cover == "multi":
            rk = {"pick": pick, "load": kw["load"], "ready": "lambda" if trial % 2 else "cover"}
            ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
            ea = refresh_entry(v, pool, online, ip, tp, lam, builder, ra, live, **rk)
            eb = refresh_entry(v, pool, online, ip, tp, lam, builder, rb, live, **rk,
                               masks=masks)
            assert ea[0].tolist() == eb[0].tolist() and ea[1] == eb[1], trial
            assert ra.bit_generator.state == rb.bit_generator.state
        compared += len(a) > 0
    assert compared > 60
