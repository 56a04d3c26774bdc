"""Broadcast worlds: Goldfish's random and real networks, the Perigee matrix (Goldfish V-A)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world


def test_goldfish_random_world_is_the_papers_setting():
    w = make_world("goldfish-random", seed=3)
    assert w.n_nodes == 100 and w.instance.n_topics == 1
    assert int(w.adaptive.sum()) == 32
    assert (w.publisher_probs > 0).sum() == 100
    assert np.allclose(w.proc, 20.0)
    assert w.latency.matrix().max() <= 500 * 2**0.5


def test_same_message_sequence_whatever_the_protocol_settings():
    a = make_world("goldfish-random", seed=5)
    b = make_world("goldfish-random", seed=5, adaptive=100)
    pa, ta = next(a.traffic())
    pb, _ = next(b.traffic())
    assert np.array_equal(pa, pb) and (ta == 0).all() and len(pa) == 40
    assert not np.array_equal(pa, next(make_world("goldfish-random", seed=6).traffic())[0])


def test_exact_inputs_options():
    w = make_world("goldfish-random", seed=1, latency_kw={"grid": 500, "ceil": True})
    m = w.latency.matrix()
    assert np.array_equal(m, np.round(m))
    pos = np.asarray(w.latency.info["positions"]) * 500
    assert np.allclose(pos, np.round(pos))


def test_plane_grid_is_the_authors_generator():
    import math

    w = make_world("goldfish-random", seed=1, plane="grid")
    pos = np.rint(np.asarray(w.latency.info["positions"]) * 500).astype(int)
    assert pos.min() >= 0 and pos.max() <= 499  # integer points of the 500 ms side
    m = w.latency.matrix()
    # the authors' delay: the distance between integer points, rounded up to a whole ms
    for i, j in [(0, 1), (2, 7), (10, 99)]:
        assert m[i, j] == math.ceil(math.dist(pos[i], pos[j]))
    same = make_world("goldfish-random", seed=1, latency_kw={"grid": 500, "ceil": True})
    assert w.fingerprint() == same.fingerprint()
    assert w.fingerprint() != make_world("goldfish-random", seed=1).fingerprint()
    with pytest.raises(ParameterError, match="plane=grid") as err:
        make_world("goldfish-real", seed=1, plane="grid")
    assert err.value.key == "plane"
    with pytest.raises(ParameterError, match="plane=grid"):
        make_world("goldfish-random", seed=1, plane="grid", latency_kw={"ceil": True})
    with pytest.raises(ParameterError, match="plane"):
        make_world("goldfish-random", seed=1, plane="hex")


def test_overrides_checked():
    w = make_world("goldfish-random", seed=1, publishers="unif:3", adaptive=1,
                   adaptive_pool="non-publishers")
    assert (w.publisher_probs > 0).sum() == 3
    assert not (w.adaptive & (w.publisher_probs > 0)).any()
    with pytest.raises(ParameterError, match="not a broadcast world"):
        make_world("cities", seed=1, adaptive=3)
    with pytest.raises(ParameterError, match="adaptive"):
        make_world("goldfish-random", seed=1, adaptive=101)


def test_topology_file_loader(tmp_path):
    rng = np.random.default_rng(0)
    n = 6
    pos = rng.integers(0, 500, (n, 2))
    adj = np.ceil(np.sqrt(((pos[:, None] - pos[None]) ** 2).sum(-1))).astype(int)
    probs = [0.5, 0.5, 0, 0, 0, 0]
    nodes = [
        {"id": i, "role": "PUB" if probs[i] else "LURK", "pub_prob": probs[i],
         "proc_delay": 20.0, "adj": adj[i].tolist()}
        for i in range(n)
    ]
    path = tmp_path / "topo.json"
    path.write_text(json.dumps({"summary": {"num_node": n}, "nodes": nodes}))
    w = make_world("goldfish-random", seed=2, topology=str(path), adaptive=2)
    assert w.n_nodes == n and np.array_equal(w.latency.matrix(), adj)
    assert w.publisher_probs.tolist() == probs
    assert set(next(w.traffic())[0].tolist()) <= {0, 1}


def test_static_and_adaptive_rows_carry_the_broadcast_keys():
    w = make_world("goldfish-random", seed=1, epochs=2)
    rows = run_protocol(get_protocol("random-graph"), w, forwarding="flood").rows
    r = rows[-1]
    for key in ("wasted_latency_mean_ms", "wasted_latency_p50_ms", "t50_ms", "t90_ms"):
        assert r[key] is not None and r[key] >= 0
    assert r["t50_ms"] <= r["t90_ms"] <= r["t99_ms"]
    assert r["receive_rate"] == 1.0


@pytest.mark.data
def test_goldfish_real_world_uses_complete_round_trip_cities():
    w = make_world("goldfish-real", seed=1)
    assert w.n_nodes == 100
    assert w.latency.info["complete_only"] and not w.latency.info["one_way"]
    assert w.latency.info["n_filled_pairs"] == 0


def test_cli_run_takes_adaptive_and_publishers():
    from click.testing import CliRunner

    from hedgerow.cli import cli

    res = CliRunner().invoke(cli, [
        "run", "perigee", "-s", "goldfish-random", "--adaptive", "5", "--publishers", "unif:3",
        "--epochs", "2", "--json", "-p", "preset=goldfish",
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert len(rows) == 2
    for key in ("wasted_latency_mean_ms", "wasted_latency_p50_ms", "t50_ms", "t90_ms"):
        assert rows[-1][key] is not None
    bad = CliRunner().invoke(cli, ["run", "perigee", "-s", "cities", "--adaptive", "5"])
    assert bad.exit_code == 2 and "not a broadcast world" in bad.output
