"""The case format (``simulate_case``) and the protocol ``gossipsub`` through ``compare``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols.gossipsub import random_connections, simulate_case
from hedgerow.scenarios.run import compare


def _case(**over):
    n = 40
    conn = random_connections(n, 12, np.random.default_rng(3))
    edges = [[int(a), int(b)] for a, b in zip(conn.row_of, conn.indices, strict=True) if a < b]
    rng = np.random.default_rng(5)
    pubs = [[10000.0 + 500.0 * i, int(rng.integers(n)), int(i % 2), 5000] for i in range(30)]
    case = {"nodes": n, "edges": edges, "topics": 2,
            "subscriptions": [[v, t] for v in range(n) for t in range(2)],
            "params": {"D": 6, "D_lo": 4, "D_hi": 12, "D_lazy": 6, "D_score": 4, "D_out": 2,
                       "heartbeat_ms": 1000, "mcache_len": 5, "mcache_gossip": 3,
                       "gossip_factor": 0.25, "fanout_ttl_ms": 60000, "seen_ttl_ms": 120000,
                       "prune_backoff_ms": 60000, "gossip_retransmission": 3,
                       "flood_publish": True, "idontwant_threshold": None,
                       "variant": "v1.1", "scoring": False},
            "latency_ms": 20.0, "publications": pubs, "duration_ms": 40000,
            "warmup_ms": 10000, "seed": 1}
    case.update(over)
    return json.loads(json.dumps(case))  # exactly what a JSON file holds


def test_a_case_delivers_everything_and_reports_every_field():
    case = _case()
    res = simulate_case(case)
    assert set(res) == {"deliveries", "duplicates", "control_sent", "heartbeats",
                        "mesh_degree", "wall_seconds", "simulated_ms"}
    assert len(res["deliveries"]) == 30 * 40  # every message at every node
    first = {(m, v): t for m, v, t in res["deliveries"]}
    for m, (t, p, _, _) in enumerate(case["publications"]):
        assert first[(m, p)] == t
    assert res["heartbeats"] == 31  # heartbeats 10..40: from the end of the warm-up on
    assert set(res["control_sent"]) == {"ihave", "iwant", "graft", "prune", "idontwant"}
    assert all(len(v) == 40 for v in res["control_sent"].values())
    degs = np.array([d for _, _, d in res["mesh_degree"]])
    assert len(degs) == 80 and (degs >= 4).all() and (degs <= 12).all()
    assert res["simulated_ms"] == 40000
    json.dumps(res)


def test_a_case_is_a_function_of_its_seed_and_latency_per_edge():
    case = _case()
    a, b = simulate_case(case), simulate_case(case)
    assert a["deliveries"] == b["deliveries"] and a["control_sent"] == b["control_sent"]
    per_edge = _case(latency_ms=[20.0] * len(case["edges"]))
    assert simulate_case(per_edge)["deliveries"] == a["deliveries"]
    slower = _case(latency_ms=[40.0] * len(case["edges"]))
    assert simulate_case(slower)["deliveries"] != a["deliveries"]


def test_idontwant_cuts_duplicates_in_a_case():
    big = [[t, p, tp, 200_000] for t, p, tp, _ in _case()["publications"]]
    plain = simulate_case(_case(publications=big, upload_mbps=50.0))
    params = {**_case()["params"], "variant": "v1.2", "idontwant_threshold": 1000}
    idw = simulate_case(_case(publications=big, upload_mbps=50.0, params=params))
    assert sum(idw["duplicates"]) < sum(plain["duplicates"])
    assert sum(idw["control_sent"]["idontwant"]) > 0 == sum(plain["control_sent"]["idontwant"])


@pytest.mark.parametrize("bad,key", [({"nodes": 0}, "nodes"),
                                     ({"latency_ms": [1.0, 2.0]}, "latency_ms"),
                                     ({"params": {"Dx": 1}}, "Dx"),
                                     ({"subscriptions": [[99, 0]]}, "subscriptions")])
def test_a_bad_case_is_one_line_naming_the_key(bad, key):
    with pytest.raises(ParameterError) as err:
        simulate_case(_case(**bad))
    assert err.value.key == key and "\n" not in str(err.value)


def test_compare_rows_carry_control_counts_and_deliver_everything():
    rows = compare(["gossipsub", "gossipsub-split"], "cities", seed=1, topics=10, messages=100)
    gs, split = rows
    assert gs["receive_rate"] >= 0.999
    for k in ("heartbeats_after_warmup", "mesh_degree_mean", "ihave_per_node_heartbeat",
              "graft_per_node_heartbeat", "idontwant_per_node_heartbeat"):
        assert gs[k] is not None
        assert split.get(k) is None  # a static overlay sends no control traffic
    assert gs["control_messages"] > 0 and gs["world"] == split["world"]


def test_eth_blocks_bytes_and_idontwant():
    rows = compare(["gossipsub"], "eth-blocks", seed=1, nodes=200, messages=20,
                   params={"gossipsub": {"variant": "v1.2", "connections": 30}})
    (row,) = rows
    assert row["receive_rate"] >= 0.999
    assert row["sent_payload_mean"] > 0 and row["sent_control_mean"] > 0
    assert row["idontwant_per_node_heartbeat"] > 0


def test_the_trace_recounts_the_iwants_and_leaves_the_run_as_it_was():
    """The IWANT trace lists every IWANT the counters count, every answer, every copy."""
    case = _case(upload_mbps=1.0)  # 5 kB copies queue on the uplink: IHAVEs overtake some
    plain, traced = simulate_case(case), simulate_case(case, trace=True)
    for key in plain:
        if key != "wall_seconds":
            assert traced[key] == plain[key], key
    iwants = traced["iwant_log"]
    assert len(iwants) == sum(plain["control_sent"]["iwant"]) > 0
    per_node = np.bincount([v for _, v, _, _ in iwants], minlength=case["nodes"])
    assert per_node.tolist() == plain["control_sent"]["iwant"]
    # every copy that arrived is in the copy log: first arrivals plus duplicates, after warm-up
    assert len(traced["copy_log"]) == len(plain["deliveries"]) - len(case["publications"]) + sum(
        plain["duplicates"])
    # an answer goes to the node that asked, for an id it asked for
    asked = {(v, u, k) for _, v, u, ks in iwants for k in ks}
    assert traced["iwant_answers"]
    assert all((asker, node, k) in asked for _, node, asker, ks in traced["iwant_answers"]
               for k in ks)


def test_heartbeat_offsets_place_each_node_s_heartbeats():
    from hedgerow.protocols.gossipsub import case as case_mod

    offsets = [(37 * v) % 1000 for v in range(40)]
    seen = {}
    real = case_mod.GossipSubEngine

    def spy(*a, **k):
        eng = real(*a, **k)
        seen["phase"] = eng.heartbeat_phase.copy()
        seen["mode"] = eng.settings["heartbeat_phase"]
        return eng

    case_mod.GossipSubEngine = spy
    try:
        res = simulate_case(_case(heartbeat_offsets_ms=offsets))
    finally:
        case_mod.GossipSubEngine = real
    assert seen["mode"] == "random"
    assert seen["phase"].tolist() == [1000.0 if x == 0 else float(x) for x in offsets]
    assert len(res["deliveries"]) == 30 * 40
    with pytest.raises(ParameterError) as err:
        simulate_case(_case(heartbeat_offsets_ms=[1000] * 40))
    assert err.value.key == "heartbeat_offsets_ms"


def test_a_replicate_redraws_only_the_run_s_own_choices():
    case = _case(latency_ms=[float(5 + 7 * (i % 13)) for i in range(len(_case()["edges"]))])
    base = simulate_case(case)
    assert simulate_case(_case(**{**case, "replicate": 0}))["mesh_degree"] == base["mesh_degree"]
    other = simulate_case(_case(**{**case, "replicate": 1}))
    assert other["mesh_degree"] != base["mesh_degree"]
    assert len(other["deliveries"]) == len(base["deliveries"])  # the same inputs: all delivered
    with pytest.raises(ParameterError) as err:
        simulate_case(_case(replicate=-1))
    assert err.value.key == "replicate"
