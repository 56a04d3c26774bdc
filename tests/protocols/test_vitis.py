"""Vitis (IPDPS 2011): eq. (1), Algorithm 5 on hand-made graphs, the built overlay's promises."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components, shortest_path

from hedgerow.dissemination import MessageBatch, disseminate
from hedgerow.dissemination.mesh import disseminate_mesh, entry_topics
from hedgerow.errors import ParameterError
from hedgerow.model import Instance, RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.vitis import Vitis
from hedgerow.protocols.vitis.kernels import gateway_round, utility
from hedgerow.protocols.vitis.ring import (
    KIND_FRIEND,
    KIND_PRED,
    KIND_SUCC,
    KIND_SW,
    greedy_lookup,
    link_csr,
    rendezvous,
)


# ----------------------------------------------------------------------------- eq. (1)
def test_utility_reproduces_the_worked_example():
    """§III-A2: p = {A,B,C}, q = {C,D}, r = {C,D,E,F,G,H} -> 0.25, 0.125, 0.33."""
    inst = Instance.from_lists([[0, 1, 2], [2, 3], [2, 3, 4, 5, 6, 7]], n_topics=8)

    def u(i, j, rates=None):
        rates = np.ones(8) if rates is None else rates
        return utility(inst.sub_indptr, inst.sub_topics, rates, i, j)

    assert u(0, 1) == 0.25
    assert u(0, 2) == 0.125
    assert round(u(1, 2), 3) == 0.333
    assert u(1, 0) == u(0, 1)  # symmetric
    # rates weigh the overlap: a topic nobody publishes on is ignored, a hot shared one dominates
    rates = np.ones(8)
    rates[[0, 1]] = 0.0
    assert u(0, 1, rates) == 0.5
    rates = np.ones(8)
    rates[2] = 100.0
    assert u(0, 2, rates) == pytest.approx(100 / 107)


# ----------------------------------------------------------------------------- Algorithm 5
def _path(n):
    rows = [[i - 1, i + 1] for i in range(n)]
    rows[0], rows[-1] = [1], [n - 2]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return indptr, np.concatenate(rows).astype(np.int32)


def _rounds(indptr, nbrs, alive, ids, key, rounds, state=None, d=5, rule=True):
    n = len(alive)
    sip, st = np.arange(n + 1), np.zeros(n, np.int32)
    if state is None:
        state = (np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32), np.zeros(n, np.int16))
    for _ in range(rounds):
        state = gateway_round(indptr, nbrs, alive, sip, st, np.array([key], np.uint64), ids,
                              state, max_hops=d - 1, split_horizon=rule)
    return state


def test_path_of_nine_elects_two_gateways_within_reach():
    """Ids growing away from the key along the path: node 0 reaches 4 hops, node 5 the rest."""
    indptr, nbrs = _path(9)
    ids = np.arange(1, 10, dtype=np.uint64) * np.uint64(1000)
    gw, _par, hops = _rounds(indptr, nbrs, np.ones(9, bool), ids, 0, rounds=20)
    assert sorted(set(gw.tolist())) == [0, 5]
    assert gw.tolist() == [0] * 5 + [5] * 4
    assert hops.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(12))
def test_every_gateway_is_in_the_cluster_within_d_minus_one_hops(seed):
    """Random ids on a 9-path and on a random cluster: a gateway is a subscriber of the same
    cluster, at most d - 1 hops away; the closest node to the key is always a gateway;
    a 9-path with d = 5 never fits in one gateway's reach unless the best is central."""
    rng = RngStreams(seed).stream("alg5")
    for kind in ("path", "random"):
        n = 9 if kind == "path" else 40
        if kind == "path":
            indptr, nbrs = _path(n)
        else:
            a = (rng.random((n, n)) < 0.06)
            a = a | a.T
            np.fill_diagonal(a, False)
            m = csr_array(a.astype(np.int8))
            indptr, nbrs = m.indptr.astype(np.int64), m.indices.astype(np.int32)
        ids = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
        key = np.uint64(rng.integers(0, 2**63))
        gw, _par, hops = _rounds(indptr, nbrs, np.ones(n, bool), ids, key, rounds=30)
        graph = csr_array((np.ones(len(nbrs)), nbrs, indptr), shape=(n, n))
        dist = shortest_path(graph, unweighted=True)
        assert (hops <= 4).all()
        assert (dist[np.arange(n), gw] <= hops).all()  # reached within its hop count
        assert (gw[gw] == gw).all()  # a proposed gateway proposes itself
        _, comp = connected_components(graph)
        d_key = np.minimum(ids - key, key - ids)
        for c in np.unique(comp):
            members = np.flatnonzero(comp == c)
            best = members[np.argmin(d_key[members])]
            assert gw[best] == best
        if kind == "path":
            n_gw = np.unique(gw).size
            assert n_gw >= 1
            if abs(int(np.argmin(d_key)) - 4) > 0:  # best not central: one reach cannot cover
                assert n_gw >= 2


@pytest.mark.parametrize("rule", [True, False])
def test_removed_gateway_is_replaced_within_d_rounds(rule):
    """Kill the gateway of a settled path: within d rounds nobody proposes it any more and
    every node proposes a live gateway within reach (split horizon; and as printed)."""
    indptr, nbrs = _path(9)
    ids = np.arange(1, 10, dtype=np.uint64) * np.uint64(1000)
    alive = np.ones(9, bool)
    state = _rounds(indptr, nbrs, alive, ids, 0, rounds=20, rule=rule)
    assert state[0][1] == 0
    alive[0] = False
    indptr2, nbrs2 = link_csr(np.array([[1, -1]] + [[i - 1, i + 1] for i in range(1, 8)]
                                       + [[7, -1]], np.int32), alive)
    rounds = 0
    while (state[0][1:] == 0).any() and rounds < 50:
        state = _rounds(indptr2, nbrs2, alive, ids, 0, rounds=1, state=state, rule=rule)
        rounds += 1
    assert 1 <= rounds <= 5  # d = 5
    gw = state[0]
    assert alive[gw[1:]].all()
    settled = _rounds(indptr2, nbrs2, alive, ids, 0, rounds=20, state=state, rule=rule)
    assert settled[0][1:].tolist() == [1] * 5 + [6] * 3


# ----------------------------------------------------------------------------- the build
def _correlated(n, buckets, per, subs, seed):
    rng = RngStreams(seed).stream("workload")
    lists = []
    for _ in range(n):
        b = rng.choice(buckets, subs // per, replace=False)
        lists.append(np.concatenate([x * per * 2 + rng.choice(per * 2, per, replace=False)
                                     for x in b]))
    return Instance.from_lists(lists, n_topics=buckets * per * 2)


@pytest.fixture(scope="module")
def built():
    inst = _correlated(800, 20, 5, 10, seed=4)
    v = Vitis(rt=10, k=3, d=3, cycles=60)
    ov = v.build(inst, seed=2)
    return inst, v, ov


def test_built_tables_follow_algorithm_4(built):
    inst, v, ov = built
    run = v.run_
    assert v.stats_["ring_correct"] == 1.0
    assert (run.kind[:, 0] == KIND_SUCC).all() and (run.kind[:, 1] == KIND_PRED).all()
    assert (run.kind[:, 2] == KIND_SW).all()
    assert (run.kind[:, 3:] == KIND_FRIEND).all()  # RT - k friends
    assert (ov.degree() <= 10).all()
    # friends are chosen by eq. (1): far more similar than the small-world links
    u = lambda i, j: utility(inst.sub_indptr, inst.sub_topics, np.ones(inst.n_topics), i, j)  # noqa: E731
    nodes = np.arange(0, 800, 7)
    fr = np.mean([u(p, q) for p in nodes for q in run.view[p, 3:]])
    sw = np.mean([u(p, run.view[p, 2]) for p in nodes])
    assert fr > 3 * sw


def test_relay_paths_reach_the_rendezvous_and_connect_every_topic(built):
    inst, v, _ov = built
    run, rel = v.run_, v.relays_
    assert v.stats_["lookup_failures"] == 0
    topics = inst.sub_topics[rel["gateways"]]
    assert np.array_equal(rel["lookup_ends"], rendezvous(run.ids, run.tids[topics]))
    # every topic's subscribers are one component of the forwarding links (hit ratio 1)
    lt = v.link_topics_
    for t in range(inst.n_topics):
        subs = inst.subscribers(t)
        e = lt[lt[:, 2] == t]
        g = csr_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(inst.n_nodes,) * 2)
        _, comp = connected_components(g, directed=False)
        assert np.unique(comp[subs]).size == 1, t
    # relays do not subscribe
    assert not (inst.masks[rel["relay_nodes"], rel["relay_topics"] >> 6]
                >> (rel["relay_topics"] & 63).astype(np.uint64) & np.uint64(1)).any()


def test_mesh_labels_deliver_what_the_papers_rule_delivers(built):
    """§III-C (forward to neighbours that subscribe or relay) = the mesh policy on link_topics_."""
    inst, v, ov = built
    a = ov.undirected_csr()
    rng = RngStreams(1).stream("events")
    topic = np.arange(inst.n_topics)
    pub = np.array([rng.choice(inst.subscribers(t)) for t in topic])
    batch = MessageBatch.create(pub, topic)
    ed, pd = np.ones(a.nnz), np.zeros(inst.n_nodes)
    rule = disseminate(a.indptr, a.indices, ed, pd, v.forward_masks_, batch, policy="topic")
    mesh = disseminate_mesh(a.indptr, a.indices, ed, pd, inst.masks, batch,
                            entry_topics(a.indptr, a.indices, v.link_topics_))
    assert np.array_equal(np.isfinite(rule.arrival), np.isfinite(mesh.arrival))
    assert np.array_equal(rule.hops, mesh.hops)
    for i, t in enumerate(topic):  # every subscriber reached
        assert np.isfinite(mesh.arrival[i, inst.subscribers(t)]).all()


def test_paths_forwarding_also_reaches_every_subscriber():
    inst = _correlated(300, 10, 5, 10, seed=8)
    v = Vitis(rt=8, d=3, cycles=40, relay_links="paths")
    ov = v.build(inst, seed=3)
    a = ov.undirected_csr()
    topic = np.arange(inst.n_topics)
    pub = np.array([inst.subscribers(t)[0] for t in topic])
    mesh = disseminate_mesh(a.indptr, a.indices, np.ones(a.nnz), np.zeros(300), inst.masks,
                            MessageBatch.create(pub, topic),
                            entry_topics(a.indptr, a.indices, v.link_topics_))
    for i, t in enumerate(topic):
        assert np.isfinite(mesh.arrival[i, inst.subscribers(t)]).all()


def test_lookups_over_vitis_tables_end_at_the_closest_node(built):
    """1,000 random keys on the converged Vitis ring: 0 failures, always the closest node."""
    _, v, _ = built
    run = v.run_
    rng = RngStreams(6).stream("keys")
    keys = rng.integers(0, 2**63, 1000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    starts = rng.integers(0, run.n, 1000)
    indptr, nbrs = run.links()
    end, _hops, failed = greedy_lookup(indptr, nbrs, run.ids, starts, keys, 400,
                                      with_failed=True)
    assert not failed.any()
    assert (end == rendezvous(run.ids, keys)).all()


@pytest.mark.parametrize(
    ("params", "name"),
    [({"k": 1}, "k"), ({"k": 16}, "k"), ({"d": 0}, "d"), ({"rt": 2, "k": 2}, "rt")],
)
def test_bad_parameters_are_one_line_errors(params, name):
    with pytest.raises(ParameterError) as e:
        get_protocol("vitis", **params).check_params()
    assert "\n" not in str(e.value) and name in str(e.value)


# ----------------------------------------------------------------------------- churn
def test_maintenance_heals_after_crashes_and_joins():
    """Algorithms 6-7: crashed entries age out after `stale` cycles, gateways are re-elected,
    the ring re-forms among the live nodes, and relay paths again reach every live subscriber;
    joining nodes (bootstrap of 5, empty table) are absorbed the same way."""
    inst = _correlated(400, 10, 5, 10, seed=5)
    v = Vitis(rt=8, d=3, stale=3)
    run = v.cycle_engine(inst, v.streams(4))
    run.start(np.arange(400) < 300)
    for _ in range(40):
        run.cycle()
    assert run.ring_curve[-1] == 1.0
    gws = np.unique(run._owner[run.gateway_mask()])
    dead = np.concatenate([gws[:20], [0, 1, 2]])
    run.leave(dead)
    run.join(np.arange(300, 400))
    assert run.ring_curve[-1] == 1.0 and ring_ok(run) < 1.0
    for _ in range(3):
        run.cycle()
    assert np.isin(run.view, dead).any()  # not yet: entries wait `stale` cycles
    for _ in range(37):
        run.cycle()
    assert not np.isin(run.view[run.alive], dead).any()
    assert run.ring_curve[-1] == 1.0
    assert not np.isin(run.gw[run.alive[run._owner]], dead).any()
    rel = run.relays()
    assert not rel["lookup_failed"].any()
    lt = rel["link_topics"]
    for t in range(inst.n_topics):
        subs = inst.subscribers(t)
        subs = subs[run.alive[subs]]
        e = lt[lt[:, 2] == t]
        g = csr_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(400, 400))
        _, comp = connected_components(g, directed=False)
        assert np.unique(comp[subs]).size == 1, t


def ring_ok(run):
    from hedgerow.protocols.vitis.ring import ring_correct

    return ring_correct(run.view, run.ids, run.alive)


def test_ranked_partner_converges_the_ring_faster_than_uniform():
    """Reading A2: T-Man's own peer choice (among the psi nearest ids) closes the ring sooner."""
    from hedgerow.workloads import make_instance

    inst = make_instance(nodes=500, topics=100, subs="5:10", seed=3)
    first = {}
    for partner in ("uniform", "ranked"):
        v = Vitis(rt=8, cycles=20, partner=partner)
        v.build(inst, seed=1)
        curve = np.array(v.stats_["ring_curve"])
        first[partner] = int(np.argmax(curve >= 0.99)) + 1 if (curve >= 0.99).any() else None
        if partner == "ranked":
            assert curve[-1] == 1.0
    assert first["ranked"] is not None  # 500 nodes, RT 8, psi 4: 99% at cycle 16
    assert first["uniform"] is None or first["uniform"] > first["ranked"]  # uniform: cycle 24
