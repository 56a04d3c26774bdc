"""The GossipSub JS anchor harness's own logic: cases, measures and the absent-anchor message.

The harness (``benchmarks/anchors/gossipsub_js.py``) is a script, not a package
module, so it is loaded from its path.  Nothing here needs Node.js.
"""

from __future__ import annotations

import doctest
from collections import deque
from pathlib import Path

import pytest

from hedgerow.errors import ParameterError

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "anchors" / "gossipsub_js.py"


@pytest.fixture(scope="module")
def harness(load_script):
    return load_script(HARNESS)


def _connected(n: int, edges: list[list[int]]) -> bool:
    adj: dict[int, list[int]] = {v: [] for v in range(n)}
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    seen, todo = {0}, deque([0])
    while todo:
        for w in adj[todo.popleft()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return len(seen) == n


def test_case_is_a_function_of_the_seed(harness):
    a = harness.make_case(40, 3, 8, seed=5, degree=10)
    assert a == harness.make_case(40, 3, 8, seed=5, degree=10)
    assert a["edges"] != harness.make_case(40, 3, 8, seed=6, degree=10)["edges"]


def test_case_graph_and_schedule(harness):
    case = harness.make_case(60, 2, 6, seed=2, degree=8, rate=2.0, duration_ms=30000,
                             warmup_ms=8000, drain_ms=4000)
    n, edges = case["nodes"], case["edges"]
    assert all(0 <= a < b < n for a, b in edges)
    assert len({tuple(e) for e in edges}) == len(edges)
    assert _connected(n, edges)
    degree = [0] * n
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    assert min(degree) >= 4 and 6 <= sum(degree) / n <= 8
    pubs = case["publications"]
    assert all(8000 <= t < 26000 and 0 <= p < n and 0 <= k < 2 and s == 1024
               for t, p, k, s in pubs)
    assert [p[0] for p in pubs] == sorted(p[0] for p in pubs)
    # about rate * publishing window * topics messages (Poisson: 72 expected)
    assert 45 <= len(pubs) <= 100
    assert sorted(case["subscriptions"]) == [[v, t] for v in range(n) for t in range(2)]
    assert case["params"]["D"] == 6 and case["params"]["D_lo"] == 4
    assert set(case) == {"nodes", "edges", "topics", "subscriptions", "params", "latency_ms",
                         "publications", "duration_ms", "warmup_ms", "heartbeat_offsets_ms",
                         "seed"}
    assert len(case["heartbeat_offsets_ms"]) == n
    assert all(0 <= x < 1000 and x == int(x) for x in case["heartbeat_offsets_ms"])


def test_case_rejects_bad_input_by_key(harness):
    with pytest.raises(ParameterError, match=r"^degree"):
        harness.make_case(10, 1, 6, seed=1, degree=10)
    with pytest.raises(ParameterError, match=r"^D:"):
        harness.make_case(10, 1, 2, seed=1, degree=4)
    with pytest.raises(ParameterError, match=r"^latency_ms"):
        harness.make_case(10, 1, 6, seed=1, degree=4, latency_ms=[20.0, 30.0])
    with pytest.raises(ParameterError, match=r"^warmup_ms"):
        harness.make_case(10, 1, 6, seed=1, degree=4, duration_ms=10000, warmup_ms=9000)
    with pytest.raises(ParameterError, match=r"^fanout_ttl: not a GossipSub case parameter"):
        harness.make_case(10, 1, 6, seed=1, degree=4, fanout_ttl=5)
    with pytest.raises(ParameterError, match=r"^settings"):
        harness.parse_settings("50:1")


def test_measures_count_only_expected_pairs(harness):
    case = harness.make_case(5, 1, 3, seed=1, degree=2, duration_ms=12000, warmup_ms=1000,
                             drain_ms=1000)
    pubs = case["publications"]
    first = pubs[0]
    others = [v for v in range(5) if v != first[1]]
    deliveries = [[0, v, first[0] + 20] for v in others]
    deliveries.append([0, first[1], first[0] + 5])  # the publisher is not a delivery
    result = {"deliveries": deliveries, "duplicates": [4] + [0] * (len(pubs) - 1),
              "control_sent": {k: [0] * 5 for k in harness.CONTROL_KINDS},
              "heartbeats": 10, "mesh_degree": [], "wall_seconds": 2.0,
              "simulated_ms": 12000}
    m = harness.measures(case, result)
    assert m["delivery"] == pytest.approx(4 / (4 * len(pubs)))
    assert m["dup_per_delivery"] == pytest.approx(1.0)
    assert m["latency_p50_ms"] == 20
    assert m["node_s_per_wall_s"] == pytest.approx(30.0)
    assert m["mesh_mean"] != m["mesh_mean"]  # no samples: NaN, not a made-up number


def test_absent_anchor_says_so(harness, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(harness.ENV, raising=False)
    with pytest.raises(SystemExit, match="HEDGEROW_GOSSIPSUB_JS is not set") as info:
        harness.find_anchor()
    assert info.value.code == 2
    assert harness.main([]) == 2
    assert "HEDGEROW_GOSSIPSUB_JS is not set" in capsys.readouterr().err
    monkeypatch.setenv(harness.ENV, str(tmp_path))
    with pytest.raises(SystemExit, match=r"no node_modules/@libp2p/gossipsub there"):
        harness.find_anchor()


def test_harness_doctests(harness):
    res = doctest.testmod(harness)
    assert res.attempted >= 8 and res.failed == 0


def test_mesh_samples_and_means_measure_alike(harness):
    """Samples at every heartbeat and the per-(node, topic) means give the same mesh measures."""
    case = harness.make_case(5, 1, 3, seed=1, degree=2, duration_ms=12000, warmup_ms=1000,
                             drain_ms=1000)
    base = {"deliveries": [], "duplicates": [0] * len(case["publications"]),
            "control_sent": {k: [0] * 5 for k in harness.CONTROL_KINDS}, "heartbeats": 2,
            "wall_seconds": 1.0, "simulated_ms": 12000}
    samples = harness.measures(case, {**base, "mesh_degree": [[0, 0, 4], [0, 0, 6], [1, 0, 8],
                                                              [1, 0, 8]]})
    means = harness.measures(case, {**base, "mesh_degree": [[0, 0, 5.0], [1, 0, 8.0]]})
    for key in ("mesh_mean", "mesh_p5", "mesh_p50", "mesh_p95", "mesh_in_bounds"):
        assert samples[key] == pytest.approx(means[key])
    assert samples["mesh_mean"] == pytest.approx(6.5)
    lo, hi = case["params"]["D_lo"], case["params"]["D_hi"]
    assert samples["mesh_in_bounds"] == pytest.approx(((lo <= 5 <= hi) + (lo <= 8 <= hi)) / 2)


def test_latency_spread_is_one_draw_per_edge(harness):
    case = harness.make_case(30, 1, 6, seed=4, degree=6, latency_ms="uniform:10:100")
    lat = case["latency_ms"]
    assert len(lat) == len(case["edges"]) and 10 <= min(lat) and max(lat) <= 100
    assert lat == harness.make_case(30, 1, 6, seed=4, degree=6, latency_ms="uniform:10:100")[
        "latency_ms"]
    # the graph and the schedule do not depend on the latency draw
    fixed = harness.make_case(30, 1, 6, seed=4, degree=6)
    assert fixed["edges"] == case["edges"] and fixed["publications"] == case["publications"]
    with pytest.raises(ParameterError, match=r"^latency_ms: 'normal:1:2'"):
        harness.make_case(30, 1, 6, seed=4, degree=6, latency_ms="normal:1:2")


def test_bad_settings_are_one_line_before_any_run(harness, monkeypatch, tmp_path, capsys):
    """Bad input is refused by name before the anchor is run (the anchor here is a stub folder)."""
    for pkg in ("@libp2p/gossipsub", "@libp2p/utils", "@sinonjs/fake-timers"):
        (tmp_path / "node_modules" / pkg).mkdir(parents=True)
        (tmp_path / "node_modules" / pkg / "package.json").write_text("{}")
    monkeypatch.setenv(harness.ENV, str(tmp_path))
    monkeypatch.setattr(harness.shutil, "which", lambda name: name)
    monkeypatch.setattr(harness, "run_js", lambda *a: pytest.fail("the anchor was run"))
    assert harness.main(["--settings", "50:1"]) == 2
    assert capsys.readouterr().err.startswith("error: settings: '50:1' is not nodes:topics:D")
    assert harness.main(["--settings", "20:1:6", "--latency-ms", "gauss:1:2"]) == 2
    assert capsys.readouterr().err.startswith("error: latency_ms: 'gauss:1:2'")


def test_case_params_are_valid_gossipsub_parameters(harness):
    """Every case the harness draws passes Hedgerow's own checks of GossipSub parameters."""
    from hedgerow.protocols.gossipsub.params import check_gossipsub

    for d in (3, 4, 6, 8, 10):
        check_gossipsub(harness.params_for(d))
    check_gossipsub(harness.params_for(8, variant="v1.2", idontwant_threshold=1024))


def test_iwant_classes_sort_each_id_by_its_other_copies(harness):
    case = {"edges": [[0, 1], [1, 2], [0, 2], [2, 3]], "latency_ms": [20.0, 20.0, 20.0, 10.0]}
    # node 2 asks node 1 for five messages at t = 100 (answers would arrive at 140)
    res = {"iwant_log": [[100.0, 2, 1, [0, 1, 2, 3, 4]]],
           "iwant_answers": [[120.0, 1, 2, [2, 4]]],
           "copy_log": [[0, 2, 0, 90.0],     # arrived before: "seen"
                        [1, 2, 3, 100.0],    # arrives at the IWANT's instant: "tie"
                        [2, 2, 0, 110.0],    # sent at 90, arrives at 110: "in_flight"
                        [2, 2, 1, 140.0],    # the answer to the IWANT, not a path copy
                        [3, 2, 3, 150.0],    # sent at 140, after the IWANT: "ahead"
                        [4, 2, 1, 140.0]]}   # message 4 came only as the answer
    c = harness.iwant_classes(case, res)
    assert {k: c[k] for k in harness.IWANT_CLASSES} == {
        "seen": 1.0, "tie": 1.0, "in_flight": 1.0, "ahead": 1.0, "only_gossip": 1.0}
    assert (c["ids"], c["iwants"], c["answered"], c["answer_first"]) == (5.0, 1.0, 2.0, 1.0)
    assert c["ihave_lead_ms"] == pytest.approx(5.0)  # (0 + 10) / 2


def test_hedgerow_trace_never_asks_for_a_seen_message(harness):
    """On Hedgerow's own trace every id asked for is classified, and none was seen before."""
    from hedgerow.protocols.gossipsub import simulate_case

    case = harness.make_case(40, 1, 6, seed=2, degree=10, rate=3.0, duration_ms=30000,
                             warmup_ms=5000, latency_ms="uniform:5:60")
    res = simulate_case(case, trace=True)
    c = harness.iwant_classes(case, res)
    assert c["ids"] == sum(len(ks) for _, _, _, ks in res["iwant_log"]) > 0
    assert c["iwants"] == sum(res["control_sent"]["iwant"])
    assert c["seen"] == 0 and c["answered"] <= c["ids"]
    m = harness.all_measures(case, {**res, "process_cpu_seconds": 0.5})
    assert m["iwant_ids"] == c["ids"] and m["node_s_per_cpu_s"] == pytest.approx(40 * 30 / 0.5)


def test_seeds_and_summaries(harness):
    assert harness.parse_seeds("3") == [3]
    with pytest.raises(ParameterError, match=r"^seeds: '1-x'"):
        harness.parse_seeds("1-x")
    s = harness.summarize([{"a": 1.0, "b": float("nan")}, {"a": 3.0, "b": 2.0}])
    assert s["a"]["mean"] == 2.0 and s["a"]["k"] == 2.0
    assert s["b"]["mean"] == 2.0 and s["b"]["k"] == 1.0 and s["b"]["ci95"] != s["b"]["ci95"]
