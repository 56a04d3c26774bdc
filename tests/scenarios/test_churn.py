"""Overlays under churn (SpiderCast section 3.8): engine invariants, snapshots, driver, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError
from hedgerow.model import Instance, Overlay, RngStreams
from hedgerow.protocols import REGISTRY, get_protocol
from hedgerow.protocols.base import MaintainedProtocol
from hedgerow.protocols.checks_maintained import check_maintained
from hedgerow.scenarios.churn import (
    exponential_churn,
    maintained_protocols,
    redraw_topics,
    run_churn,
)
from hedgerow.scenarios.observers import snapshot
from hedgerow.scenarios.traces import JOIN, LEAVE, trace_churn
from hedgerow.workloads import make_instance

#: section 3.8 runs SpiderCast (3,0) with the paper's tie rule (docs/dynamic.md)
PAPER = {"kg": 3, "kr": 0, "ties": "sequential"}


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=300, topics=30, subs=5, popularity="rss", seed=3)


def check_settled(engine) -> None:
    """The state of a quiescent engine agrees with itself and with who is online."""
    assert engine.sim.pending == 0
    assert check_maintained(engine) == []
    for task in engine.tasks:  # no request left unanswered (no interface member says this)
        for p in np.flatnonzero(engine.online):
            assert not task.pending[p], f"node {p} still waits for {task.pending[p]}"
    # every online node covered again, or saturated: at L^max in each under-covered task
    for p in np.flatnonzero(engine.undercovered()):
        assert all(t.uc[p] == 0 or t.deg[p] >= t.lmax[p] for t in engine.tasks)


@pytest.mark.parametrize(
    ("protocol", "params"),
    [
        ("spidercast", PAPER),
        ("spidercast", {**PAPER, "heartbeat": 2.0}),
        ("spidercast", {**PAPER, "adaptive": True}),
        ("similarity", {}),
    ],
)
def test_engine_state_is_consistent_after_churn(inst, protocol, params):
    res = run_churn(
        protocol,
        inst,
        lifetime=15.0,
        duration=45.0,
        snapshot_every=15.0,
        seed=4,
        warmup=5.0,
        params=params,
    )
    s = res.summary
    assert s["joins"] > 100 and s["leaves"] > 100  # real churn happened
    assert res.engine.lost_messages > 0  # and some messages met nodes that had left
    res.engine.run_until(res.engine.sim.now + 300.0)  # no more churn: settle
    check_settled(res.engine)


def test_every_snapshot_topic_connected_as_in_the_paper(inst):
    # section 3.8: "in all the simulations and all the snapshots, all the topics were connected"
    for lam in (20.0, 60.0):
        res = run_churn(
            "spidercast",
            inst,
            lifetime=lam,
            duration=120.0,
            snapshot_every=20.0,
            seed=1,
            params=PAPER,
        )
        assert [r["partitioned_topics"] for r in res.rows] == [0] * 6
        assert all(r["measured"] <= r["online"] for r in res.rows)
        # about 1 / (1 + 1/4) of the nodes are online
        assert 0.7 < np.mean([r["online"] for r in res.rows]) / inst.n_nodes < 0.9
        assert res.summary["join_seconds_p99"] < 2.0  # joins settle inside the 2 s window


def test_degree_is_not_affected_by_the_churn_rate(inst):
    # Figure 11: the average degree does not depend on λ
    deg = [
        run_churn(
            "spidercast",
            inst,
            lifetime=lam,
            duration=80.0,
            snapshot_every=20.0,
            seed=2,
            params=PAPER,
        ).summary["mean_avg_degree"]
        for lam in (10.0, 80.0)
    ]
    assert abs(deg[0] - deg[1]) / deg[1] < 0.05


def test_same_seed_same_run_other_seed_other_run(inst):
    a = run_churn("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=7)
    b = run_churn("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=7)
    c = run_churn("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=8)
    assert a.rows == b.rows
    assert a.rows != c.rows


def test_leave_sends_leave_and_late_messages_are_lost():
    inst = make_instance(nodes=40, topics=6, subs=3, seed=1)
    eng = get_protocol("spidercast", **PAPER).maintenance_engine(inst, RngStreams(0))
    eng.start(np.ones(40, dtype=bool))
    eng.run_until(100.0)
    g = eng.tasks[0]
    ov = eng.overlay()
    p = int(np.argmax(ov.degree()))
    nbrs = sorted(ov.neighbors(p))
    assert nbrs == sorted(g.nbrs[p])  # K_r = 0: every link is a greedy one
    before = eng.control_messages
    eng.leave(p)
    assert eng.control_messages - before == len(nbrs)  # one LEAVE per neighbour
    assert not eng.online[p] and not g.nbrs[p]  # it forgot its links; theirs go on LEAVE
    lost = eng.lost_messages
    # a request sent to the departed node is lost; the requester stops waiting for it
    q = next(v for v in range(40) if v != p and p not in g.nbrs[v])
    g.pending[q].add(p)
    eng._send(0, 0, q, p)  # CONNECT
    eng.run_until(eng.sim.now + 5.0)
    assert p not in g.pending[q] and eng.lost_messages == lost + 1
    assert eng.overlay().degree()[p] == 0  # every neighbour got the LEAVE
    with pytest.raises(ValueError, match="not online"):
        eng.leave(p)
    # it comes back with new topics and links up again
    new = np.array([0, 2, 5])
    eng.join(p, new)
    assert eng.subscriptions().topics_of(p).tolist() == [0, 2, 5]
    eng.run_until(eng.sim.now + 100.0)
    assert eng.is_covered(p) and eng.overlay().degree()[p] > 0
    assert check_maintained(eng) == []
    with pytest.raises(ValueError, match="3 distinct topics"):
        eng.leave(p)
        eng.join(p, np.array([1, 1, 2]))


def test_exponential_churn_law():
    on, ev = exponential_churn(4000, 100.0, 1000.0, np.random.default_rng(5))
    assert abs(on.mean() - 0.8) < 0.02
    # events alternate per node, starting with a leave for nodes online at 0
    for p in range(0, 4000, 97):
        kinds = ev["event"][ev["node"] == p]
        if len(kinds):
            assert kinds[0] == (LEAVE if on[p] else JOIN)
            assert np.all(kinds[1:] != kinds[:-1])
    # rate of leaves ≈ online nodes / λ
    leaves = int((ev["event"] == LEAVE).sum())
    assert 0.9 < leaves / (3200 * 1000.0 / 100.0) < 1.1


def test_trace_replay_and_delayed_rejoin(inst, rejoin_trace):
    ev = rejoin_trace
    on, later = trace_churn(ev, inst.n_nodes)
    res = run_churn("spidercast", inst, trace=(on, later), duration=40.0, snapshot_every=20.0)
    # node 1's blip back online (50 ms) is shorter than the 2-timeout minimum: it stays off
    assert res.summary["delayed_joins"] == 1
    assert res.engine.online[:3].tolist() == [True, False, True]
    assert res.rows[-1]["online"] == 2


def test_redraw_follows_the_popularity_law():
    rng = np.random.default_rng(0)
    probs = np.array([8.0, 4.0, 2.0, 1.0, 1.0])
    counts = np.zeros(5)
    for _ in range(4000):
        counts[redraw_topics(probs, 1, rng)] += 1
    assert np.allclose(counts / 4000, probs / probs.sum(), atol=0.03)


def test_bad_input_is_a_clear_error(inst):
    with pytest.raises(ParameterError, match="maintained protocols: "):
        run_churn("ringpt", inst, lifetime=10.0)
    with pytest.raises(ParameterError, match="full membership"):
        run_churn("spidercast", inst, lifetime=10.0, params={"membership": 0.5})
    with pytest.raises(ParameterError, match="lifetime"):
        run_churn("spidercast", inst)
    with pytest.raises(ParameterError, match="snapshot_every"):
        run_churn("spidercast", inst, lifetime=10.0, snapshot_every=0)
    with pytest.raises(ParameterError, match="unknown parameter 'kq'"):
        run_churn("spidercast", inst, lifetime=10.0, params={"kq": 3})


def test_cli_prints_snapshots_and_summary():
    r = CliRunner().invoke(
        cli,
        [
            "churn",
            "spidercast",
            "--nodes",
            "200",
            "--topics",
            "20",
            "--subs",
            "4",
            "--lifetime",
            "20",
            "--duration",
            "40",
            "--snapshot-every",
            "20",
            "--seed",
            "1",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert [x["kind"] for x in lines] == ["snapshot", "snapshot", "summary"]
    assert lines[0]["time_s"] == 20.0 and lines[1]["partitioned_topics"] == 0
    assert lines[2]["messages_per_op"] > 0
    bad = CliRunner().invoke(cli, ["churn", "spidercast", "--nodes", "200"])
    assert bad.exit_code == 2 and "exactly one of --lifetime" in bad.output


# ------------------------------------------------------------------ the interface only
class _StubEngine:
    """A ChurnEngine with no protocol behind it: nodes link to their two id-neighbours."""

    def __init__(self, instance, sim):
        self.n, self.sim, self.inst = instance.n_nodes, sim, instance
        self.online = np.zeros(self.n, dtype=bool)
        self.topics = [instance.topics_of(p).tolist() for p in range(self.n)]
        self.control_messages = 0
        self.lost_messages = 0

    def start(self, online0):
        for p in np.flatnonzero(online0).tolist():
            self.join(p)

    def join(self, p, topics=None):
        self.online[p] = True
        if topics is not None:
            self.topics[p] = sorted(int(t) for t in topics)
        self.control_messages += 1

    def leave(self, p):
        self.online[p] = False
        self.control_messages += 1

    def run_until(self, t):
        self.sim.run(until=t)

    def is_covered(self, p):
        return True

    def overlay(self):
        on = np.flatnonzero(self.online)
        return Overlay.from_edges(self.n, np.column_stack([on[:-1], on[1:]]))

    def undercovered(self):
        return np.zeros(self.n, dtype=bool)

    def subscriptions(self):
        return Instance.from_lists(self.topics, n_topics=self.inst.n_topics)


class _StubProtocol(MaintainedProtocol):
    """Declares the capability ``maintained`` and nothing else."""

    name = "stub"

    def maintenance_engine(self, instance, streams, *, sim=None):
        return _StubEngine(instance, sim)


def test_the_driver_runs_any_protocol_with_a_churn_engine(inst, monkeypatch):
    assert maintained_protocols() == [
        "lowoda-inc", "lowoda-re", "omen", "omen-g", "random", "similarity", "spidercast"
    ]
    monkeypatch.setitem(REGISTRY, "stub", _StubProtocol)
    assert "stub" in maintained_protocols()
    res = run_churn("stub", inst, lifetime=10.0, duration=40.0, snapshot_every=20.0, seed=2)
    s = res.summary
    assert s["joins"] > 50 and s["leaves"] > 50
    # the stub sends one message per operation: the counters come from the interface
    assert res.rows[-1]["control_messages"] == s["joins"] + s["leaves"]
    assert all(r["max_degree"] == 2 and r["undercovered_nodes"] == 0 for r in res.rows)
    assert res.engine.sim.seconds_per_unit == 0.1 and res.engine.sim.now_seconds == 40.0


def test_snapshot_measures_the_online_included_nodes():
    # path 0-1-2-3, plus 3-4 to node 4 that has just left; topic 0: 0, 2, 3 (4); topic 1: 1, 3 (4)
    inst = Instance.from_lists([[0], [1], [0], [0, 1], [0, 1]], n_topics=2)
    eng = _StubEngine(inst, None)
    eng.online[:4] = True
    eng.overlay = lambda: Overlay.from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4)])
    row = snapshot(eng, eng.online.copy(), 2)
    # topic 0: {0} and {2, 3} (node 1 does not hold it); topic 1: {1} and {3}
    assert (row["partitioned_topics"], row["topic_components"]) == (2, 4)
    assert (row["avg_degree"], row["max_degree"]) == (1.5, 2)  # link 3-4 does not count
    # node 1 is not measured: topic 1 counts only node 3's component
    row = snapshot(eng, np.array([True, False, True, True, False]), 2, diameter=True)
    assert (row["partitioned_topics"], row["topic_components"]) == (1, 3)
    assert row["max_topic_diameter"] == 1 and row["undercovered_nodes"] == 0
