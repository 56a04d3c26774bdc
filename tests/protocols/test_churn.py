"""Overlays under churn (SpiderCast section 3.8): engine invariants, snapshots, driver, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.churn import EVENT_DTYPE, JOIN, LEAVE
from hedgerow.cli import cli
from hedgerow.dynamic import exponential_churn, redraw_topics, run_dynamic, trace_churn
from hedgerow.errors import ParameterError
from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.workloads import make_instance


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=300, topics=30, subs=5, popularity="rss", seed=3)


def check_settled(engine) -> None:
    """The state of a quiescent engine agrees with itself and with who is online."""
    online = engine.online
    for task in engine.tasks:
        for p in range(engine.n):
            nb = task.nbrs[p]
            if not online[p]:
                assert not nb and task.deg[p] == 0, f"offline node {p} keeps links"
                continue
            assert task.deg[p] == len(nb)
            assert not task.pending[p], f"node {p} still waits for {task.pending[p]}"
            for q in nb:
                assert online[q], f"{p} keeps offline neighbour {q}"
                assert p in task.nbrs[q], f"link {p}-{q} is one-sided"
            if not task.degree_target:
                topics = engine.sub_topics[engine.sub_indptr[p] : engine.sub_indptr[p + 1]]
                for t in topics:
                    holders = sum(
                        1 for q in nb if (engine.masks[q, t >> 6] >> np.uint64(t & 63)) & 1
                    )
                    assert task.cov[p, t] == holders, f"coverage count of {p} on {t}"
                if task.k[p] > 0:
                    covered = all(task.cov[p, t] >= task.k[p] for t in topics)
                    assert covered == (task.uc[p] == 0)


@pytest.mark.parametrize(
    ("protocol", "params"),
    [
        ("spidercast", {}),
        ("spidercast", {"heartbeat": 2.0}),
        ("spidercast", {"adaptive": True}),
        ("similarity", {}),
    ],
)
def test_engine_state_is_consistent_after_churn(inst, protocol, params):
    res = run_dynamic(
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
    assert res.engine.sim.pending == 0
    check_settled(res.engine)
    for task in res.engine.tasks:  # every online node covered again (or saturated)
        on = np.flatnonzero(res.engine.online)
        assert all(task.uc[p] == 0 or task.deg[p] >= task.lmax[p] for p in on)


def test_every_snapshot_topic_connected_as_in_the_paper(inst):
    # section 3.8: "in all the simulations and all the snapshots, all the topics were connected"
    for lam in (20.0, 60.0):
        res = run_dynamic(
            "spidercast", inst, lifetime=lam, duration=120.0, snapshot_every=20.0, seed=1
        )
        assert [r["partitioned_topics"] for r in res.rows] == [0] * 6
        assert all(r["measured"] <= r["online"] for r in res.rows)
        # about 1 / (1 + 1/4) of the nodes are online
        assert 0.7 < np.mean([r["online"] for r in res.rows]) / inst.n_nodes < 0.9
        assert res.summary["join_seconds_p99"] < 2.0  # joins settle inside the 2 s window


def test_degree_is_not_affected_by_the_churn_rate(inst):
    # Figure 11: the average degree does not depend on λ
    deg = [
        run_dynamic(
            "spidercast", inst, lifetime=lam, duration=80.0, snapshot_every=20.0, seed=2
        ).summary["mean_avg_degree"]
        for lam in (10.0, 80.0)
    ]
    assert abs(deg[0] - deg[1]) / deg[1] < 0.05


def test_same_seed_same_run_other_seed_other_run(inst):
    a = run_dynamic("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=7)
    b = run_dynamic("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=7)
    c = run_dynamic("spidercast", inst, lifetime=20.0, duration=40.0, snapshot_every=20.0, seed=8)
    assert a.rows == b.rows
    assert a.rows != c.rows


def test_leave_sends_leave_and_late_messages_are_lost():
    inst = make_instance(nodes=40, topics=6, subs=3, seed=1)
    eng = get_protocol("spidercast").maintenance_engine(inst, RngStreams(0))
    eng.start(np.ones(40, dtype=bool))
    eng.run_until(100.0)
    g = eng.tasks[0]
    p = max(range(40), key=lambda v: g.deg[v])
    nbrs = sorted(g.nbrs[p])
    before = int(eng.sent[3])  # LEAVE
    eng.leave(p)
    assert int(eng.sent[3]) - before == len(nbrs)
    assert not eng.online[p] and g.deg[p] == 0
    # a request sent to the departed node is lost; the requester stops waiting for it
    q = next(v for v in range(40) if v != p and p not in g.nbrs[v])
    g.pending[q].add(p)
    eng._send(0, 0, q, p)  # CONNECT
    eng.run_until(eng.sim.now + 5.0)
    assert p not in g.pending[q]
    assert all(p not in g.nbrs[v] for v in nbrs)
    with pytest.raises(ValueError, match="not online"):
        eng.leave(p)
    # it comes back with new topics and links up again
    new = np.array([0, 2, 5])
    eng.join(p, new)
    assert eng.sub_topics[eng.sub_indptr[p] : eng.sub_indptr[p + 1]].tolist() == [0, 2, 5]
    eng.run_until(eng.sim.now + 100.0)
    assert g.uc[p] == 0 and g.deg[p] > 0
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


def test_trace_replay_and_delayed_rejoin(inst):
    ev = np.array(
        [
            (0.0, 0, JOIN),
            (0.0, 1, JOIN),
            (10.0, 1, LEAVE),
            (10.05, 1, JOIN),
            (10.1, 1, LEAVE),
            (30.0, 2, JOIN),
        ],
        dtype=EVENT_DTYPE,
    )
    on, later = trace_churn(ev, inst.n_nodes)
    assert on[:3].tolist() == [True, True, False] and on.sum() == 2
    res = run_dynamic("spidercast", inst, trace=(on, later), duration=40.0, snapshot_every=20.0)
    # node 1's blip back online (50 ms) is shorter than the 2-timeout minimum: it stays off
    assert res.summary["delayed_joins"] == 1
    assert res.engine.online[:3].tolist() == [True, False, True]
    assert res.rows[-1]["online"] == 2
    with pytest.raises(ParameterError, match="use at least"):
        trace_churn(ev, 2)


def test_redraw_follows_the_popularity_law():
    rng = np.random.default_rng(0)
    probs = np.array([8.0, 4.0, 2.0, 1.0, 1.0])
    counts = np.zeros(5)
    for _ in range(4000):
        counts[redraw_topics(probs, 1, rng)] += 1
    assert np.allclose(counts / 4000, probs / probs.sum(), atol=0.03)


def test_bad_input_is_a_clear_error(inst):
    with pytest.raises(ParameterError, match="message-passing"):
        run_dynamic("ringpt", inst, lifetime=10.0)
    with pytest.raises(ParameterError, match="full membership"):
        run_dynamic("spidercast", inst, lifetime=10.0, params={"membership": 0.5})
    with pytest.raises(ParameterError, match="lifetime"):
        run_dynamic("spidercast", inst)
    with pytest.raises(ParameterError, match="snapshot_every"):
        run_dynamic("spidercast", inst, lifetime=10.0, snapshot_every=0)
    with pytest.raises(ParameterError, match="unknown parameter 'kq'"):
        run_dynamic("spidercast", inst, lifetime=10.0, params={"kq": 3})


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
