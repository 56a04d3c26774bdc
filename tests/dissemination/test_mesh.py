"""The ``"mesh"`` policy (``hedgerow.dissemination.mesh``): messages stay on their topic's links."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _dissemination_reference import assert_chunks_agree, random_net
from _dissemination_reference import simulate as reference
from click.testing import CliRunner
from scipy.sparse.csgraph import connected_components

from hedgerow.cli import cli
from hedgerow.dissemination import (
    POLICIES,
    EntryTopics,
    MessageBatch,
    disseminate,
    disseminate_chunks,
    disseminate_mesh,
    edge_delays,
    entry_topics,
    restrict_csr,
)
from hedgerow.dissemination import chunks as chunks_mod
from hedgerow.errors import ParameterError, SpecError
from hedgerow.experiment.load import parse_spec
from hedgerow.metrics import delivery_stats
from hedgerow.model import Instance, Overlay, interest_matrix
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.scenarios import check_run, compare, make_protocol, simulate
from hedgerow.scenarios.epochs import link_topics_with_attackers, run_protocol
from hedgerow.scenarios.world import make_world, world_for_instance
from hedgerow.workloads import interest_instance

# ------------------------------------------------------------------ worked example
# Six nodes; topic 0: {0, 1, 2, 3}, topic 1: {0, 3, 4, 5}.  Links and the topics they serve:
#   0-1: 0    1-2: 0    2-3: 0 and 1    0-3: 1    3-4: 1    0-4: 1    4-5: every topic (-1)
# 10 ms links, 1 ms processing.
SUBS = [[0, 1], [0], [0], [0, 1], [1], [1]]
LINK_TOPICS = [
    (0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 2, 1), (0, 3, 1), (3, 4, 1), (0, 4, 1), (4, 5, -1),
]


def _example():
    inst = Instance.from_lists(SUBS, n_topics=2)
    links = sorted({(min(u, v), max(u, v)) for u, v, _ in LINK_TOPICS})
    a = Overlay.from_edges(6, links).undirected_csr()
    indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    labels = entry_topics(indptr, indices, LINK_TOPICS)
    return inst, indptr, indices, labels


class TestWorkedExample:
    def test_labels_per_entry(self):
        _, indptr, indices, labels = _example()
        rows = np.repeat(np.arange(6), np.diff(indptr))
        ip, tp = labels.indptr, labels.topics
        got = {
            (int(u), int(v)): sorted(tp[ip[e] : ip[e + 1]].tolist())
            for e, (u, v) in enumerate(zip(rows, indices, strict=True))
        }
        # both directions of a link carry its topics; 2-3 serves both topics
        assert got == {
            (0, 1): [0], (1, 0): [0], (0, 3): [1], (3, 0): [1], (0, 4): [1], (4, 0): [1],
            (1, 2): [0], (2, 1): [0], (2, 3): [0, 1], (3, 2): [0, 1], (3, 4): [1], (4, 3): [1],
            (4, 5): [-1], (5, 4): [-1],
        }

    def test_who_receives_what_when_and_how(self):
        inst, indptr, indices, labels = _example()
        ed, pd = np.full(len(indices), 10.0), np.ones(6)
        # A: topic 0 from node 0; B: topic 1 from node 3
        batch = MessageBatch.create([0, 3], [0, 1])
        d = disseminate_mesh(indptr, indices, ed, pd, inst.masks, batch, labels,
                             record_edges=True)
        inf = math.inf
        # A runs the topic-0 chain 0 -> 1 -> 2 -> 3; 4 and 5 hang off topic-1 and -1 links only
        assert d.arrival[0].tolist() == [0.0, 10.0, 21.0, 32.0, inf, inf]
        assert d.hops[0].tolist() == [0, 1, 2, 3, -1, -1]
        assert d.parent[0].tolist() == [-1, 0, 1, 2, -1, -1]
        # B: 3 sends to 0, 2 and 4 (its topic-1 links); 4 relays to 5 over the all-topics link;
        # 0 and 4 swap copies over 0-4 (two duplicates); 2 (not subscribed) forwards nothing,
        # its other link 1-2 serving topic 0 only, so node 1 never hears of B
        assert d.arrival[1].tolist() == [10.0, inf, 10.0, 0.0, 10.0, 21.0]
        assert d.hops[1].tolist() == [1, -1, 1, 0, 1, 2]
        assert d.parent[1].tolist() == [3, -1, 3, -1, 3, 4]
        assert d.copies.tolist() == [3, 6]
        assert d.duplicates.tolist() == [0, 2]
        assert d.relay_copies.tolist() == [0, 1]  # node 2's copy of B
        # no copy of A on a topic-1 link, none of B on a topic-0 link
        for m, t in enumerate((0, 1)):
            used = np.isfinite(d.edge_recv[m])
            assert not (used & ~labels.serves(t)).any()
        # flooding the same graph reaches everyone with both messages
        fl = disseminate(indptr, indices, ed, pd, inst.masks, batch, policy="flood")
        assert np.isfinite(fl.arrival).all()

    def test_one_label_per_entry_array(self):
        inst, indptr, indices, labels = _example()
        ed, pd = np.full(len(indices), 10.0), np.ones(6)
        batch = MessageBatch.create([0, 3], [0, 1])
        # keep one topic per entry (2-3 serves topic 0 only): B no longer reaches node 2
        one = np.array([labels.topics[labels.indptr[e]] for e in range(len(indices))])
        d = disseminate_mesh(indptr, indices, ed, pd, inst.masks, batch, one)
        assert d.arrival[1].tolist()[2] == math.inf and d.arrival[0].tolist()[3] == 32.0


# ------------------------------------------------------------------ random graphs
def _random_link_topics(indptr, indices, n_topics, rng):
    """0-2 topics per link (a few -1), as (u, v, topic) rows in random orientation."""
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    out = []
    for u, v in zip(rows.tolist(), indices.tolist(), strict=True):
        if u >= v:
            continue
        k = rng.integers(0, 3)
        for t in rng.choice(n_topics, size=k, replace=False).tolist():
            out.append((u, v, t) if rng.random() < 0.5 else (v, u, t))
        if rng.random() < 0.05:
            out.append((u, v, -1))
    return np.array(out, dtype=np.int64)


FIELDS = ("arrival", "hops", "parent", "edge_recv", "copies", "relay_copies", "duplicates")


def test_every_link_labelled_all_equals_flood():
    inst, indptr, indices, ed, proc, pub, top = random_net(messages=60)
    batch = MessageBatch.create(pub, top)
    fl = disseminate(indptr, indices, ed, proc, inst.masks, batch, policy="flood",
                     record_edges=True)
    wild = np.full(len(indices), -1)
    me = disseminate_mesh(indptr, indices, ed, proc, inst.masks, batch, wild, record_edges=True)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(me, f), getattr(fl, f), err_msg=f)
    # through the chunked path too (one group per topic, entry map = identity)
    chunks = disseminate_chunks(indptr, indices, ed, proc, inst.masks, pub, top, 1,
                                record_edges=True, policy="mesh", labels=wild)
    for sel in assert_chunks_agree(chunks, fl, len(pub), len(indices)):
        assert len(set(top[sel].tolist())) == 1


def _reference_mesh(indptr, indices, ed, proc, masks, pub, t, serves):
    """Plain-Python flood on the sub-graph of entries ``serves`` (built entry by entry)."""
    n = len(indptr) - 1
    sub_ptr, sub_ix, sub_ed, full = [0], [], [], []
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            if serves[e]:
                sub_ix.append(int(indices[e]))
                sub_ed.append(float(ed[e]))
                full.append(e)
        sub_ptr.append(len(sub_ix))
    r = reference(sub_ptr, sub_ix, sub_ed, proc, masks, int(pub), int(t), 0, "flood")
    edge_recv = np.full(len(indices), math.inf)
    edge_recv[full] = r["edge_recv"]
    return r, edge_recv


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_a_message_never_crosses_a_link_of_another_topic(seed):
    inst, indptr, indices, ed, proc, pub, top = random_net(seed=seed, messages=60)
    rng = np.random.default_rng(seed)
    labels = entry_topics(indptr, indices, _random_link_topics(indptr, indices, 6, rng))
    d = disseminate_mesh(indptr, indices, ed, proc, inst.masks, MessageBatch.create(pub, top),
                         labels, record_edges=True)
    for m in range(len(pub)):
        serves = labels.serves(int(top[m]))
        assert not (np.isfinite(d.edge_recv[m]) & ~serves).any()
        r, edge_recv = _reference_mesh(indptr, indices, ed, proc, inst.masks, pub[m], top[m],
                                       serves)
        np.testing.assert_array_equal(d.arrival[m], r["arrival"])
        np.testing.assert_array_equal(d.parent[m], r["parent"])
        np.testing.assert_array_equal(d.hops[m], r["hops"])
        np.testing.assert_array_equal(d.edge_recv[m], edge_recv)
        assert (d.copies[m], d.relay_copies[m], d.duplicates[m]) == (
            r["copies"], r["relay"], r["duplicates"]
        )


def test_chunks_with_silent_nodes_under_mesh(monkeypatch):
    """Silent nodes drop the victim topic on every link; other topics keep their meshes."""
    inst, indptr, indices, ed, proc, pub, top = random_net(n=50, seed=5, messages=60)
    rng = np.random.default_rng(5)
    labels = entry_topics(indptr, indices, _random_link_topics(indptr, indices, 6, rng))
    silent = np.zeros(inst.n_nodes, dtype=bool)
    silent[::4] = True
    victim = int(top[0])
    rows = np.repeat(np.arange(inst.n_nodes), np.diff(indptr))
    # a budget of 3 messages' edge times per chunk (of the full graph: sub-graphs fit more)
    monkeypatch.setattr(chunks_mod, "EDGE_BUDGET_BYTES", 3 * 8 * len(indices))
    seen = []
    for sel, dl, emap in disseminate_chunks(indptr, indices, ed, proc, inst.masks, pub, top, 1,
                                            record_edges=True, silent=silent,
                                            silent_topic=victim, policy="mesh", labels=labels):
        (t,) = set(top[sel].tolist())  # a chunk never mixes topics
        serves = labels.serves(t)
        if t == victim:
            serves &= ~silent[rows]
        np.testing.assert_array_equal(emap >= 0, serves)
        assert dl.edge_recv.shape[1] == serves.sum()
        for i, m in enumerate(sel.tolist()):
            r, edge_recv = _reference_mesh(indptr, indices, ed, proc, inst.masks, pub[m], t,
                                           serves)
            np.testing.assert_array_equal(dl.arrival[i], r["arrival"])
            full = np.full(len(indices), math.inf)
            full[emap >= 0] = dl.edge_recv[i][emap[emap >= 0]]
            np.testing.assert_array_equal(full, edge_recv)
            assert dl.copies[i] == r["copies"]
        seen.extend(sel.tolist())
    assert sorted(seen) == list(range(len(pub)))
    assert (top == victim).sum() >= 1


def test_labels_are_required_for_mesh_and_refused_otherwise():
    inst, indptr, indices, ed, proc, pub, top = random_net(messages=60)
    args = (indptr, indices, ed, proc, inst.masks, pub, top, 1)
    assert "mesh" in POLICIES
    with pytest.raises(ParameterError, match="policy 'mesh' needs labels"):
        list(disseminate_chunks(*args, record_edges=False, policy="mesh"))
    with pytest.raises(ParameterError, match="labels are for policy 'mesh' only"):
        list(disseminate_chunks(*args, record_edges=False, labels=np.zeros(len(indices))))
    with pytest.raises(ParameterError, match="labels cover 3 CSR entries"):
        list(disseminate_chunks(*args, record_edges=False, policy="mesh", labels=[0, 1, 2]))
    with pytest.raises(ParameterError, match="needs the topics of every link"):
        disseminate(indptr, indices, ed, proc, inst.masks, MessageBatch.create(pub, top),
                    policy="mesh")


def test_entry_topics_refuses_unknown_links_and_bad_rows():
    _, indptr, indices, _ = _example()
    with pytest.raises(ParameterError, match=r"link \(1, 5\), which the graph does not have"):
        entry_topics(indptr, indices, [(0, 1, 0), (1, 5, 0)])
    with pytest.raises(ParameterError, match=r"outside 0\.\.5"):
        entry_topics(indptr, indices, [(0, 6, 0)])
    with pytest.raises(ParameterError, match=r"\(k, 3\) rows"):
        entry_topics(indptr, indices, [(0, 1)])
    with pytest.raises(ParameterError, match="below -1"):
        entry_topics(indptr, indices, [(0, 1, -2)])
    empty = entry_topics(indptr, indices, np.zeros((0, 3), dtype=np.int64))
    assert isinstance(empty, EntryTopics) and not empty.serves(0).any()


# ------------------------------------------------------------------ protocols in the epoch loop
@pytest.fixture(scope="module")
def cities():
    return make_world("cities", seed=1, messages=300)


@pytest.mark.data
@pytest.mark.parametrize("protocol", ["gossipsub-split", "scribe-topic"])
def test_protocol_mesh_reaches_its_topic_links_only(protocol, cities):
    """By default a message reaches exactly the publisher's part of its topic's links.

    Every labelled link joins two subscribers of its topic (GossipSub slots link to subscribers,
    Scribe trees hold members only; fallback links carry nothing), so no uninterested node ever
    gets a copy: relay_share is exactly 0, and the reach is within the TTL rule's.
    """
    proto = make_protocol(protocol, cities)
    mesh = run_protocol(proto, cities).rows[0]
    ttl = run_protocol(make_protocol(protocol, cities), cities, forwarding="ttl").rows[0]
    assert mesh["relay_share"] == 0.0 and mesh["relay_copies"] == 0.0
    assert 0.0 < mesh["receive_rate"] <= ttl["receive_rate"]

    a = proto.overlay_.undirected_csr()
    indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    labels = entry_topics(indptr, indices, proto.link_topics_)
    ed = edge_delays(indptr, indices, cities.latency)
    pub, top = next(cities.traffic())
    masks = cities.instance.masks
    d = disseminate_mesh(indptr, indices, ed, cities.proc, masks, MessageBatch.create(pub, top),
                         labels)
    t_ttl = disseminate(indptr, indices, ed, cities.proc, masks,
                        MessageBatch.create(pub, top, cities.scenario.ttl))
    interest = interest_matrix(masks, cities.instance.n_topics)
    rate, _ = delivery_stats(d.arrival, pub, top, interest)
    assert rate == pytest.approx(mesh["receive_rate"])
    for m in range(len(pub)):
        ip, ix, _ = restrict_csr(indptr, indices, labels.serves(int(top[m])))
        sub = sp.csr_array((np.ones(len(ix)), ix, ip), shape=(len(ip) - 1,) * 2)
        _, comp = connected_components(sub, directed=False)
        reached = d.reached[m]
        np.testing.assert_array_equal(reached, comp == comp[pub[m]])
        assert interest[reached, top[m]].all()
        assert not (reached & ~t_ttl.reached[m]).any()


@pytest.mark.parametrize("protocol", ["gossipsub-split", "scribe-topic"])
def test_eclipse_attackers_relay_every_topic_under_mesh(protocol):
    world = make_world("eclipse", seed=1, topics=20, messages=100)
    proto = make_protocol(protocol, world)
    res = run_protocol(proto, world)
    assert 0.0 < res.rows[0]["receive_rate"] <= 1.0
    rows = link_topics_with_attackers(proto.link_topics_, proto.overlay_, world)
    honest = world.attack.honest
    clique = rows[rows[:, 2] == -1]
    assert len(clique) == len(world.attack.fixed_edges)
    assert not honest[clique[:, :2]].any()
    kept = rows[rows[:, 2] >= 0]
    assert honest[kept[:, 0]].all()  # the links attackers made themselves are gone
    assert len(kept) == int(honest[proto.link_topics_[:, 0]].sum())
    # every row names a link of the overlay the run used
    a = res.overlay.undirected_csr()
    entry_topics(a.indptr, a.indices, rows)


def test_mesh_refused_for_a_protocol_without_link_topics():
    msg = "forwarding 'mesh' needs the topic of every link, and topiary does not label its links"
    with pytest.raises(ParameterError, match=msg) as err:
        simulate("topiary", "unit-square", forwarding="mesh")
    assert "\n" not in str(err.value) and err.value.key == "forwarding"
    with pytest.raises(ParameterError, match="scribe-random does not label"):
        check_run("scribe-random", "unit-square", forwarding="mesh")
    with pytest.raises(ParameterError, match="random-graph does not label"):
        compare(["gossipsub-split", "random-graph"], "unit-square", forwarding="mesh")
    runner = CliRunner()
    where = ["--scenario", "unit-square", "--forwarding", "mesh"]
    for cmd in (["run", "scribe-random"], ["compare", "--protocols", "gossipsub-split,topiary"]):
        res = runner.invoke(cli, cmd + where)
        assert res.exit_code == 2
        (line,) = res.stderr.strip().splitlines()
        assert line.startswith("error: forwarding 'mesh' needs the topic of every link")
    spec = {"experiment": "x",
            "scenario": {"kind": "run", "protocol": "topiary",
                         "run": {"name": "unit-square", "forwarding": "mesh"}}}
    with pytest.raises(SpecError, match=r"scenario\.run\.forwarding: forwarding 'mesh'"):
        parse_spec(spec)
    spec["scenario"]["protocol"] = "gossipsub-split"
    assert parse_spec(spec).scenario.run.forwarding == "mesh"


def test_a_build_that_gives_no_link_topics_is_refused():
    class Unlabelled(RandomGraph):
        forwarding = "mesh"
        labels_links = True

    inst = interest_instance(30, 5, 0.3, np.random.default_rng(0))
    world = world_for_instance(inst, seed=1, messages=20)
    with pytest.raises(ParameterError, match="build gave none"):
        run_protocol(Unlabelled(d=3), world)
    # the user's choice wins: the TTL rule needs no labels
    assert run_protocol(Unlabelled(d=3), world, forwarding="ttl").rows[0]["relay_share"] >= 0
