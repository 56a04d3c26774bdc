"""One churn entry for every shape: the driver by capability, the shared setup, the kind, the CLI.

Also the one derivation of a protocol's streams: a maintained protocol whose streams are not
named after it (LowODA-Inc's ``stream_key = "tco"``) starts its churn run from the overlay its
build gives with the same seed.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError
from hedgerow.protocols import get_protocol
from hedgerow.protocols.engine_api import CycleEngine
from hedgerow.scenarios import events as events_mod
from hedgerow.scenarios.churn import run_churn
from hedgerow.scenarios.churn_drivers import (
    CHURN_DRIVERS,
    ChurnRequest,
    churn_shape,
    run_churn_request,
)
from hedgerow.scenarios.events import CHURN_SCENARIOS, load_churn_scenario, run_events
from hedgerow.scenarios.gossip_churn import run_gossip_churn
from hedgerow.scenarios.kinds import KINDS
from hedgerow.scenarios.traces import EVENT_DTYPE
from hedgerow.workloads import make_instance


@pytest.fixture
def tiny_cycle_scenario(monkeypatch):
    """A 160-node flash crowd, 30 cycles (the named scenarios are 1,000 nodes and more)."""
    sc = dataclasses.replace(CHURN_SCENARIOS["vitis-flash-crowd-quick"], name="tiny-crowd",
                             nodes=160, cycles=30, at=15.0)
    monkeypatch.setitem(CHURN_SCENARIOS, "tiny-crowd", sc)
    return "tiny-crowd"


def test_the_driver_is_chosen_by_capability():
    assert set(CHURN_DRIVERS) == {"maintained", "cycle"}
    assert churn_shape("rvr") == churn_shape("vitis") == "cycle"
    assert churn_shape("lowoda-inc") == "maintained"
    with pytest.raises(ParameterError, match="does not run under churn") as e:
        churn_shape("topiary")
    assert e.value.key == "protocol"


@pytest.mark.parametrize("name", ["vitis", "rvr"])
def test_cycle_engines_implement_the_interface(name):
    inst = make_instance(nodes=30, topics=5, subs=2, seed=1)
    proto = get_protocol(name, rt=5, cache=5)
    eng = proto.cycle_engine(inst, proto.streams(1))
    assert isinstance(eng, CycleEngine)
    eng.start(np.arange(30) < 20)
    assert int(eng.online.sum()) == 20


def test_a_cycle_scenario_gives_one_row_per_sample_with_world_and_params(tiny_cycle_scenario):
    out = run_churn_request("rvr", ChurnRequest(scenario=tiny_cycle_scenario), seed=1,
                            params={"rt": 6})
    assert [r["cycle"] for r in out.rows] == [5, 10, 15, 20, 25, 30]
    assert [r["epoch"] for r in out.rows] == list(range(6))
    assert len({r["world"] for r in out.rows}) == 1
    assert out.summary["params"]["rt"] == 6 and out.summary["paper_worst_hit_ratio"] == 0.87
    assert out.row_kind == "sample"
    # the same numbers as the driver called directly on the scenario's control
    inst, on, ev = load_churn_scenario(tiny_cycle_scenario, seed=1)
    direct = run_gossip_churn("rvr", inst, on, ev, duration=30, sample_every=5, seed=1,
                              params={"rt": 6})
    assert [{k: r[k] for k in d} for r, d in zip(out.rows, direct, strict=True)] == direct


def test_nodes_reduce_a_cycle_scenario_only():
    inst, on, _ = load_churn_scenario("vitis-flash-crowd", seed=1, nodes=120)
    assert inst.n_nodes == 120 and int(on.sum()) == 60
    with pytest.raises(ParameterError, match="drop nodes"):
        load_churn_scenario("fb1k-google", nodes=100)


@pytest.mark.parametrize(
    ("protocol", "request_", "match"),
    [
        ("rvr", ChurnRequest(lifetime=10.0), "runs a named cycle churn scenario"),
        ("rvr", ChurnRequest(scenario="fb1k-google"), "is for maintained protocols"),
        ("lowoda-inc", ChurnRequest(scenario="vitis-flash-crowd"), "is for cycle protocols"),
        ("rvr", ChurnRequest(scenario="vitis-flash-crowd", lifetime=5.0,
                             given=frozenset({"scenario", "lifetime"})),
         "--lifetime cannot be used with --scenario vitis-flash-crowd"),
        ("lowoda-inc", ChurnRequest(scenario="fb1k-google", trace="x",
                                    given=frozenset({"scenario", "trace"})),
         "--trace cannot be used with --scenario fb1k-google"),
        ("spidercast", ChurnRequest(lifetime=5.0, events=3, workload={"nodes": 20},
                                    given=frozenset({"lifetime", "events", "nodes"})),
         "--events is not used by synthetic churn"),
    ],
)
def test_settings_a_driver_does_not_use_are_one_line_errors(protocol, request_, match):
    with pytest.raises(ParameterError, match=match) as e:
        run_churn_request(protocol, request_, seed=1)
    assert "\n" not in str(e.value)


def test_the_churn_kind_runs_both_shapes(tiny_cycle_scenario):
    kind = KINDS["churn"]
    gossip = {"kind": "churn", "protocol": "rvr", "seed": 2, "params": {"rt": 6},
              "churn": {"scenario": tiny_cycle_scenario, "duration": 1000.0,
                        "snapshot_every": 200.0, "off_ratio": 0.25, "timeout": 0.1},
              "workload": {"nodes": 500, "topics": 50, "subs": 5, "popularity": "rss"}}
    kind.check(gossip)
    rows = kind.run(gossip)
    assert len(rows) == 6 and {"cycle", "hit_ratio", "world", "epoch"} <= set(rows[0])
    maintained = {"kind": "churn", "protocol": "spidercast", "seed": 1, "params": {},
                  "churn": {"lifetime": 20.0, "duration": 20.0, "snapshot_every": 10.0,
                            "off_ratio": 0.25, "timeout": 0.1},
                  "workload": {"nodes": 60, "topics": 8, "subs": "2", "popularity": "rss"},
                  "diameter": False}
    kind.check(maintained)
    assert [r["time_s"] for r in kind.run(maintained)] == [10.0, 20.0]
    with pytest.raises(ParameterError, match="does not run under churn"):
        kind.check({**gossip, "protocol": "topiary"})


def test_a_cycle_churn_spec_loads(tmp_path):
    from hedgerow.experiment.load import load_spec

    text = ("experiment: t\nscenario:\n  kind: churn\n  protocol: {p}\n  seed: 1\n"
            "  churn: {{scenario: vitis-flash-crowd-quick}}\n")
    (tmp_path / "s.yaml").write_text(text.format(p="vitis"))
    assert load_spec(tmp_path / "s.yaml").scenario.churn.scenario == "vitis-flash-crowd-quick"
    (tmp_path / "b.yaml").write_text(text.format(p="topiary"))
    with pytest.raises(Exception, match="protocol"):
        load_spec(tmp_path / "b.yaml")
    # the named churn scenario brings its workload: none is filled in, a given one is refused
    assert load_spec(tmp_path / "s.yaml").scenario.workload is None
    (tmp_path / "w.yaml").write_text(text.format(p="vitis") + "  workload: {nodes: 100}\n")
    with pytest.raises(Exception, match=r"scenario\.workload: not used with churn\.scenario"):
        load_spec(tmp_path / "w.yaml")


def test_hedgerow_churn_runs_a_cycle_protocol_without_branching(tiny_cycle_scenario):
    r = CliRunner().invoke(cli, ["churn", "rvr", "--scenario", tiny_cycle_scenario, "--seed",
                                 "1", "-p", "rt=6", "--json"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    *rows, summary = lines
    assert [x["kind"] for x in rows] == ["sample"] * 6 and summary["kind"] == "summary"
    assert summary["params"]["rt"] == 6
    r = CliRunner().invoke(cli, ["churn", "rvr", "--scenario", tiny_cycle_scenario,
                                 "--lifetime", "5"])
    assert r.exit_code != 0 and "--lifetime cannot be used with --scenario" in r.output
    r = CliRunner().invoke(cli, ["churn", "rvr", "--scenario", tiny_cycle_scenario,
                                 "--nodes", "100", "-p", "rt=6"])
    assert r.exit_code == 0, r.output
    assert "rvr on tiny-crowd: 100 nodes, 30 cycles" in r.stdout


# --------------------------------------------------------------------------- streams
def test_lowoda_inc_build_is_the_start_of_its_churn_run():
    """One derivation of the streams (``proto.streams(seed)``, ``stream_key = "tco"``): the
    overlay of ``build`` equals the engine's overlay right after the churn run starts."""
    import hedgerow as hr

    inst = make_instance(nodes=120, topics=15, subs="2:4", seed=5)
    built, _ = hr.build("lowoda-inc", inst, seed=7)
    everyone = np.ones(inst.n_nodes, dtype=bool)
    none = np.zeros(0, dtype=EVENT_DTYPE)
    res = run_churn("lowoda-inc", inst, trace=(everyone, none), duration=1.0,
                    snapshot_every=1.0, seed=7)
    assert np.array_equal(res.engine.overlay().edges(), built.edges())
    ev = run_events("lowoda-inc", inst, everyone, none, seed=7)
    assert np.array_equal(ev.engine.overlay().edges(), built.edges())


def test_the_streams_honour_the_stream_key():
    from hedgerow.model.rng import RngStreams

    proto = get_protocol("lowoda-inc")
    assert proto.streams(1).stream("ties").random() != \
        RngStreams(1).child("protocol:lowoda-inc").stream("ties").random()
    assert not hasattr(events_mod, "get_protocol")
