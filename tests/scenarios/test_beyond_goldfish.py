"""Goldfish and Perigee beyond the paper: churn between epochs, withholding fast relays,
and the static baselines measured with the same broadcast columns."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.metrics.attack import exploit_hold, hold_tenures
from hedgerow.scenarios.epoch_churn import drop_dead, onoff_schedule, refill
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.run import make_protocol
from hedgerow.scenarios.world import make_world

TABLE_COLUMNS = ("wasted_latency_mean_ms", "wasted_latency_p50_ms", "t50_ms", "t90_ms")
PARAMS = {"goldfish": {}, "perigee": {"preset": "goldfish"}}


def _run(scenario: str, protocol: str, epochs: int, *, keep_outs: bool = False, **kw):
    world = make_world(scenario, seed=1, epochs=epochs, **kw)
    proto = make_protocol(protocol, world, PARAMS.get(protocol, {}))
    return world, run_protocol(proto, world, keep_outs=keep_outs)


# ----------------------------------------------------------------------------- churn
def test_onoff_schedule_only_the_drawn_fraction_churns() -> None:
    s = onoff_schedule(200, 60, 0.25, 4.0, 3.0, np.random.default_rng(3))
    assert s[0].all()
    churned = (~s).any(axis=0)
    assert churned.sum() <= 50
    assert churned.sum() > 35  # with 60 epochs nearly every drawn node leaves once
    off = (~s[:, churned]).mean()
    assert 0.25 < off < 0.6  # about OFF / (ON + OFF) = 3/7 of the time


def test_drop_dead_and_refill_leave_no_dead_peer_and_respect_the_in_limit() -> None:
    rng = np.random.default_rng(0)
    n, d, limit = 30, 4, 6
    out = np.array([rng.choice(np.delete(np.arange(n), v), d, replace=False) for v in range(n)])
    online = rng.random(n) > 0.3
    t, drops = drop_dead(out, online)
    assert (t[~online] < 0).all()
    assert online[t[t >= 0]].all()
    assert drops.sum() == (out != t).sum()
    before = np.bincount(t[t >= 0], minlength=n)
    t2, dials = refill(t, online, limit, rng)
    assert online[t2[t2 >= 0]].all()
    assert (t2[~online] < 0).all()
    after = np.bincount(t2[t2 >= 0], minlength=n)
    grew = after > before
    assert (after[grew] <= limit).all()  # a refill never pushes a node past the limit
    assert dials.sum() == ((t2 >= 0) & (t < 0)).sum() > 0
    for v in np.flatnonzero(online):
        row = t2[v][t2[v] >= 0]
        assert v not in row and len(set(row.tolist())) == len(row)


@pytest.mark.parametrize("protocol", ["goldfish", "perigee"])
def test_under_churn_no_adaptive_node_keeps_or_picks_a_dead_peer(protocol: str) -> None:
    world, res = _run("goldfish-churn", protocol, 12, keep_outs=True, churn="onoff:0.4:4:3")
    sched = world.online_schedule(12)
    assert (~sched).any()
    for e, row in enumerate(res.rows):
        assert row["dead_peers_selected"] == 0
        out = res.outs[e]
        # the table an epoch runs on holds no offline node, and offline nodes hold no link
        assert sched[e][out[out >= 0]].all()
        assert (out[~sched[e]] < 0).all()
        assert row["online_nodes"] == int(sched[e].sum())
        for k in (*TABLE_COLUMNS, "churn_dials_per_node", "churn_drops_per_node"):
            assert row[k] is not None and np.isfinite(row[k])
    assert sum(r["churn_drops_per_node"] for r in res.rows) > 0
    assert res.rows[-1]["receive_rate"] > 0.99  # online nodes still get every block


def test_churn_is_refused_outside_broadcast_worlds() -> None:
    with pytest.raises(ParameterError, match="churn"):
        make_world("cities", seed=1, churn="onoff:0.3:10:5")
    with pytest.raises(ParameterError, match="onoff"):
        make_world("goldfish-random", seed=1, churn="onoff:0.3")


# ----------------------------------------------------------------------------- withholding
def test_withholding_world_attackers_are_central_silent_publishers_and_not_adaptive() -> None:
    w = make_world("goldfish-withhold", seed=1, epochs=2)
    a = w.attack.attackers
    lat = w.latency.matrix()
    mean = (lat.sum(axis=1) - np.diag(lat)) / (w.n_nodes - 1)
    assert len(a) == 8 and set(a.tolist()) == set(np.argsort(mean, kind="stable")[:8].tolist())
    assert w.publisher_probs[a].sum() == 0 and np.isclose(w.publisher_probs.sum(), 1.0)
    assert not w.adaptive[a].any() and w.adaptive.sum() == 32
    control = make_world("goldfish-withhold", seed=1, epochs=2, attack="relay")
    assert control.attack.kind == "relay"
    assert np.array_equal(control.attack.attackers, a)
    assert np.array_equal(control.adaptive, w.adaptive)
    with pytest.raises(ParameterError, match="attack"):
        make_world("goldfish-random", seed=1, attack="withhold")


@pytest.mark.parametrize("protocol", ["goldfish", "perigee"])
def test_withholders_are_evicted_and_honest_nodes_keep_an_honest_exploit_peer(
    protocol: str,
) -> None:
    world, res = _run("goldfish-withhold", protocol, 14, keep_outs=True, attackers=12)
    assert max(r["attacker_exploit_share"] for r in res.rows) > 0  # fast relays win slots
    assert any(r["withholding_attackers"] > 0 for r in res.rows)
    # a withholder never delivers, so the next selections drop it: none survives 6 epochs
    # (Goldfish completes every 2 epochs, Perigee scores every epoch), and no honest
    # adaptive node is ever left with withholders alone
    assert res.rows[-1]["attacker_tenure_max_epochs"] <= 6
    assert min(r["honest_exploit_peer_share"] for r in res.rows) == 1.0
    proto = make_protocol(protocol, world, PARAMS[protocol])
    watched = world.adaptive & world.honest
    for e in (0, 5):
        ex = proto.exploit_out(res.outs[e], world.adaptive)
        _, share = exploit_hold(ex, np.flatnonzero(watched), world.honest)
        assert share == pytest.approx(res.rows[e]["attacker_exploit_share"])


def test_relay_control_keeps_attackers_longer_than_withholding() -> None:
    _, bad = _run("goldfish-withhold", "perigee", 10, attackers=12)
    _, good = _run("goldfish-withhold", "perigee", 10, attackers=12, attack="relay")
    assert all(r["withholding_attackers"] == 0 for r in good.rows)
    assert (good.rows[-1]["attacker_tenure_mean_epochs"]
            > bad.rows[-1]["attacker_tenure_mean_epochs"])


def test_hold_measures_by_hand() -> None:
    ex = np.array([[3, 3], [3, -1], [0, 1], [1, 0]])
    honest = np.array([True, True, True, False])
    assert exploit_hold(ex, np.array([0, 1]), honest) == (0.0, 1.0)
    assert hold_tenures(np.array([[1], [1], [1]], dtype=bool)).tolist() == [3]
    assert hold_tenures(np.zeros((4, 2), dtype=bool)).tolist() == []


# ----------------------------------------------------------------------------- baselines
@pytest.mark.parametrize("protocol", ["gossipsub-split", "random-graph"])
def test_static_baselines_give_the_goldfish_table_columns(protocol: str) -> None:
    world = make_world("goldfish-random", seed=1, epochs=1)
    row = run_protocol(make_protocol(protocol, world, {}), world).rows[0]
    for k in TABLE_COLUMNS:
        assert row[k] is not None and 0 < row[k] < 5000
    assert row["t50_ms"] <= row["t90_ms"]


def test_compare_rows_carry_the_relay_measures_for_every_protocol() -> None:
    from hedgerow.scenarios.run import compare

    names = ["goldfish", "perigee", "gossipsub-split", "random-graph"]
    params = {"perigee": {"preset": "goldfish"}}
    bad = compare(names, "goldfish-withhold", seed=1, params=params, diameter=False, epochs=3)
    good = compare(names, "goldfish-withhold", seed=1, params=params, diameter=False, epochs=3,
                   attack="relay")
    for b, g in zip(bad, good, strict=True):
        assert b["world"] != g["world"]  # the attack's kind is part of the world
        for k in (*TABLE_COLUMNS, "honest_exploit_peer_share", "attacker_exploit_share"):
            assert b[k] is not None and g[k] is not None
        assert g["withholding_attackers"] == 0
    # a static overlay cannot evict: every relay linked to an honest adaptive node withholds
    static = {r["protocol"]: r for r in bad}
    assert static["random-graph"]["withholding_attackers"] > 0
    assert static["gossipsub-split"]["withholding_attackers"] > 0


@pytest.mark.data
def test_trace_churn_replays_the_google_machine_events(spark) -> None:
    from hedgerow.pipeline.inputs import ensure_inputs

    ensure_inputs(["google1k"])  # ingests the trace once if this machine has not yet
    w = make_world("goldfish-churn", seed=1, churn="trace:google1k:24")
    s = w.online_schedule(29)
    assert s.shape == (29, 100)
    # a machine's state changes only at its own events: every change is a trace event
    assert (s[1:] != s[:-1]).sum() >= 1
    with pytest.raises(ParameterError, match="trace"):
        make_world("goldfish-churn", seed=1, churn="trace:google1k")
