"""Invariants of Topiary runs: degree bound, no self-loops, exploration rules, determinism."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedgerow.model import Instance
from hedgerow.model.outlinks import closure_csr
from hedgerow.protocols.topiary import Topiary, subset_table
from hedgerow.protocols.topiary.scoring import Observations
from hedgerow.scenarios import build, custom_world, run_protocol, run_scenario, simulate
from hedgerow.scenarios.world import world_for_instance


def test_exploration_excludes_current_neighbours_and_weights_by_omega():
    """ω_u = |σ_u ∩ σ_v^+|: with σ_v^+ = {topic 1}, only topic-1 subscribers are explored."""
    n, d = 12, 3
    subs = [[0, 1]] + [[0]] * 5 + [[1]] * 6  # nodes 6..11 subscribe to topic 1
    inst = Instance.from_lists(subs, n_topics=2)
    subsets = subset_table(d, 2)
    obs = Observations.empty(n, len(subsets), 2)
    obs.expected[:] = 10
    # node 0: every subset covers topic 0 fast and misses topic 1 -> σ+ = {1}
    obs.dcnt[0, 0, :] = 10
    obs.dsum[0, 0, :] = 10.0
    out = np.full((n, d), -1)
    out[0] = [1, 6, 7]  # 6 and 7 already linked (and subscribe to topic 1)
    out[8, 0] = 0  # 8 -> 0 is an incoming link of node 0
    linked = np.zeros((n, n), dtype=bool)
    indptr, indices = closure_csr(out, n)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    linked[rows, indices] = True
    proto = Topiary(d=d)
    seen: set[int] = set()
    for seed in range(30):
        new_out, _, kept = proto.select_neighbours(
            out, obs, inst, linked, np.random.default_rng(seed)
        )
        fresh = [u for u in new_out[0].tolist() if u not in kept[0].tolist()]
        assert len(fresh) == d - 2
        seen.update(fresh)
    assert seen <= {9, 10, 11}  # topic-1 subscribers that are not already neighbours
    assert seen == {9, 10, 11}


def test_run_invariants_and_determinism(tiny_net):
    inst, lat, proc = tiny_net

    def run(seed, epochs):
        proto = Topiary(d=4)
        world = custom_world(inst, lat, proc, seed=seed, epochs=epochs, messages=150)
        return proto, run_protocol(proto, world, keep_outs=True)

    proto, res = run(1, 6)
    assert len(res.outs) == len(res.rows) == 6 and res.scores.shape == (6, inst.n_nodes)
    # every epoch's table and the one the last selection produced (proto.out_)
    for out in [*res.outs, proto.out_]:
        n = out.shape[0]
        filled = out >= 0
        assert (filled.sum(axis=1) <= 4).all()
        assert (out != np.arange(n)[:, None])[filled].all()  # no self-loops
        for row in out:
            vals = row[row >= 0]
            assert len(set(vals.tolist())) == len(vals)  # no duplicates
        assert ((out >= 0).sum(axis=1) == 4).all()  # every slot is filled again
    _, again = run(1, 6)
    for a, b in zip(res.outs, again.outs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(res.scores, again.scores)
    _, other = run(2, 2)
    assert not np.array_equal(res.outs[1], other.outs[1])


def test_build_returns_the_final_overlay_of_the_epoch_loop(tiny_net):
    """``build("topiary", inst)`` runs the epochs on a world made around the instance.

    The network, traffic and epochs are the world's (``world_for_instance``
    defaults: unit square, 150 epochs of 1000 messages, TTL 1), no longer
    Topiary parameters.
    """
    inst, _, _ = tiny_net
    ov, stats = build("topiary", inst, seed=4, params={"d": 3})
    assert ov.directed
    assert (ov.degree() <= 3).all()
    assert ov.csr().diagonal().sum() == 0
    assert Topiary(d=3).degree_bound(inst) == 3
    assert stats["epochs"] == 150
    assert 0.0 < stats["receive_rate"] <= 1.0 and stats["delay_mean_ms"] > 0
    res = run_protocol(Topiary(d=3), world_for_instance(inst, seed=4))
    assert ov == res.overlay
    assert res.rows[-1]["delay_mean_ms"] == stats["delay_mean_ms"]


def test_traffic_settings_belong_to_the_world():
    """``epochs``, ``messages``, ``ttl`` and ``latency`` are scenario settings, not Topiary's."""
    from hedgerow.errors import ParameterError

    for name in ("epochs", "messages", "ttl", "latency"):
        with pytest.raises(ParameterError, match=f"unknown parameter '{name}'"):
            Topiary(**{name: 1})
    assert list(Topiary.params) == ["d", "wc", "wd", "ww", "eta", "keep", "exploration"]
    res = simulate("topiary", "cities", epochs=2, topics=10, messages=30, ttl=0)
    sc = res.world.scenario
    assert (sc.epochs, sc.messages, sc.ttl) == (2, 30, 0)
    assert len(res.rows) == 2
    publisher, topic = next(res.world.traffic())
    assert len(publisher) == len(topic) == 30


def test_same_seed_same_rows():
    kw = dict(epochs=2, topics=20, messages=80)
    a = run_scenario("topiary", "cities", seed=3, **kw)
    b = run_scenario("topiary", "cities", seed=3, **kw)
    c = run_scenario("topiary", "cities", seed=4, **kw)
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)
    assert [r["epoch"] for r in a] == [0, 1]


@pytest.mark.parametrize("bad", [{"d": 0}, {"eta": 0.5}, {"wd": -1}, {"keep": 2}])
def test_bad_parameters_raise(bad):
    from hedgerow.errors import ParameterError

    with pytest.raises(ParameterError):
        run_scenario("topiary", "cities", epochs=1, topics=5, messages=10, params=bad)


@pytest.mark.parametrize(
    ("seed", "nodes", "epochs", "scenario", "expected"),
    [(1, 1000, 4, "unit-square", "c0056f268c6a03b6"),
     (2, 400, 3, "rss-unit-square", "b69f901860798204")],
)
def test_exploration_in_chunks_of_rows_is_the_whole_table(monkeypatch, seed, nodes, epochs,
                                                          scenario, expected):
    """The digests were taken when the selection built ω and the allowed mask for all n x n
    pairs at once; with chunks of 37 rows (1,000 nodes) or 92 (400 nodes) every overlay and
    row is the same."""
    import hashlib
    import json

    import hedgerow.protocols.topiary as topiary
    from hedgerow.scenarios.run import simulate

    monkeypatch.setattr(topiary, "_CHUNK_BYTES", 481_000)
    r = simulate("topiary", scenario, seed=seed, nodes=nodes, epochs=epochs)
    h = hashlib.sha256(np.asarray(r.overlay.edges(), dtype=np.int64).tobytes())
    for row in r.rows:
        kept = {k: v for k, v in row.items() if isinstance(v, (int, float, str))
                and "second" not in k and "rss" not in k and "fingerprint" not in k}
        h.update(json.dumps(kept, sort_keys=True, default=str).encode())
    assert h.hexdigest()[:16] == expected
