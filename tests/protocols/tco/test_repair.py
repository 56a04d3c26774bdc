"""LowODA-Re / LowODA-Inc under churn: a TCO after every event, links only added by Inc."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.scenarios.events import run_events, synthetic_churn
from hedgerow.scenarios.invariants import InvariantObserver
from hedgerow.scenarios.traces import EVENT_DTYPE
from hedgerow.workloads import make_instance


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=150, topics=30, subs="2:6", popularity="zipf1", seed=4)


@pytest.mark.parametrize("name", ["lowoda-inc", "lowoda-re"])
@pytest.mark.parametrize("churn", ["onoff", "burst"])
def test_every_event_leaves_a_tco_and_no_violation(name, churn, inst):
    online0, ev = synthetic_churn(inst.n_nodes, churn, seed=3, events=80)
    res = run_events(name, inst, online0, ev, seed=2)
    assert len(res.rows) == 80
    assert res.summary["violations"] == 0
    assert all(r["partitioned_topics"] == 0 for r in res.rows)
    assert res.summary["start_violations"] == 0
    assert {r["type"] for r in res.rows} == {"join", "leave"}


def test_inc_only_adds_links_and_reports_them(inst):
    """Degree bookkeeping: between events a link disappears only with the node that left."""
    eng = get_protocol("lowoda-inc", rho=2.0).maintenance_engine(inst, RngStreams(1))
    eng.start(np.ones(inst.n_nodes, dtype=bool))
    rng = np.random.default_rng(0)
    for p in rng.choice(inst.n_nodes, 30, replace=False).tolist():
        before = {tuple(e) for e in eng.edges().tolist()}
        deg0 = eng.degree.copy()
        eng.leave(p)
        after = {tuple(e) for e in eng.edges().tolist()}
        assert {e for e in before - after if p not in e} == set()
        added = {tuple(e) for e in eng.last_added.tolist()}
        assert after - before == added
        nb = {v for e in before if p in e for v in e if v != p}
        for v in range(inst.n_nodes):
            if v == p:
                continue
            gained = sum(1 for e in added if v in e)
            assert eng.degree[v] == deg0[v] + gained - (v in nb)
    assert eng.partitioned_topics() == 0


def test_inc_equals_the_engine_on_the_online_nodes(inst):
    """A LowODA-Inc leave is exactly tco_augment on the online nodes from the current links."""
    eng = get_protocol("lowoda-inc", rho=3.0).maintenance_engine(inst, RngStreams(5))
    eng.start(np.ones(inst.n_nodes, dtype=bool))
    p = int(np.argmax(eng.degree))
    edges = eng.edges()
    keep = (edges != p).all(axis=1)
    online = np.ones(inst.n_nodes, dtype=bool)
    online[p] = False
    state = eng.rng.bit_generator.state
    rng_copy = np.random.Generator(type(eng.rng.bit_generator)())
    rng_copy.bit_generator.state = state
    want = tco_augment(inst.masks, np.flatnonzero(online), edges[keep], rule="lowoda", rho=3.0,
                       rng=rng_copy, topics=eng._topics(p))
    eng.leave(p)
    assert eng.last_added.tolist() == want.tolist() and len(want) > 0


def test_re_rebuilds_as_lowoda_on_the_online_nodes(inst):
    eng = get_protocol("lowoda-re", rho=2.0).maintenance_engine(inst, RngStreams(5))
    eng.start(np.ones(inst.n_nodes, dtype=bool))
    state = eng.rng.bit_generator.state
    rng_copy = np.random.Generator(type(eng.rng.bit_generator)())
    rng_copy.bit_generator.state = state
    eng.leave(7)
    online = np.ones(inst.n_nodes, dtype=bool)
    online[7] = False
    want = tco_augment(inst.masks, np.flatnonzero(online), np.zeros((0, 2), np.int64),
                       rule="lowoda", rho=2.0, rng=rng_copy)
    assert np.array_equal(np.sort(eng.edges(), axis=0), np.sort(want, axis=0))
    assert eng.last_event["messages"]["drop_link"] > 0


def test_observer_counts_a_broken_overlay(inst):
    eng = get_protocol("lowoda-inc").maintenance_engine(inst, RngStreams(1))
    eng.start(np.ones(inst.n_nodes, dtype=bool))
    obs = InvariantObserver(inst.n_topics, repair="add-only")
    obs.reset(eng)
    # tamper: drop every link of the busiest node without telling anyone
    p = int(np.argmax(eng.degree))
    eng._drop_node(p)
    eng.last_added = np.zeros((0, 2), np.int64)
    row = obs.after_event(eng, {"type": "join", "node": 0})
    assert row["viol_degree_bookkeeping"] > 0 and row["viol_partitioned_topics"] > 0
    assert row["violations"] == obs.totals["violations"] > 0


def test_bad_parameters_are_one_line_errors(inst):
    with pytest.raises(ParameterError, match="rho"):
        get_protocol("lowoda-inc", rho=0.5).check_params()
    online0 = np.ones(inst.n_nodes, dtype=bool)
    ev = np.array([(1.0, inst.n_nodes + 5, -1)], dtype=EVENT_DTYPE)
    with pytest.raises(ParameterError, match="the trace has node"):
        run_events("lowoda-inc", inst, online0, ev)
    with pytest.raises(ParameterError, match="maintained protocol"):
        run_events("lowoda", inst, online0, ev[:0])
