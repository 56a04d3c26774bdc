"""Churn on the contended network (``scenarios/churn_wire.py`` and the three churn drivers):
byte columns and delivery under load on every churn row when a network setting is given, the
rows of before without one."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError, SpecError
from hedgerow.experiment import SETTABLE_KEYS, parse_spec
from hedgerow.experiment.expand import expand
from hedgerow.experiment.run import run_one
from hedgerow.scenarios.churn import run_churn
from hedgerow.scenarios.churn_drivers import ChurnRequest, run_churn_request
from hedgerow.scenarios.churn_wire import CHURN_WIRE_KEYS, ChurnWire, wire_settings
from hedgerow.scenarios.events import CHURN_SCENARIOS, run_events, synthetic_churn
from hedgerow.scenarios.observers import BYTES_KEYS
from hedgerow.scenarios.world import instance_fingerprint
from hedgerow.workloads import make_instance


@pytest.fixture
def tiny_cycle_scenario(monkeypatch):
    """A 120-node flash crowd, 20 cycles, a sample every 5."""
    sc = dataclasses.replace(CHURN_SCENARIOS["vitis-flash-crowd-quick"], name="tiny-wire-crowd",
                             nodes=120, cycles=20, at=10.0, every=5)
    monkeypatch.setitem(CHURN_SCENARIOS, "tiny-wire-crowd", sc)
    return "tiny-wire-crowd"


def _without_wire(rows):
    return [{k: v for k, v in r.items() if k not in CHURN_WIRE_KEYS and k != "world"}
            for r in rows]


_SYNTH = {"lifetime": 30.0, "duration": 60.0, "snapshot_every": 20.0}
_WL = {"nodes": 150, "topics": 12, "subs": 3}


def _maintained(protocol="spidercast", seed=1, **wire):
    return run_churn_request(protocol, ChurnRequest(workload=_WL, wire=wire, **_SYNTH),
                             seed=seed)


def test_without_network_settings_nothing_changes():
    """The request of a run with no network, or with every network setting at its default,
    gives the rows of a run that never heard of the network."""
    inst = make_instance(seed=1, **_WL)
    plain = run_churn("spidercast", inst, seed=1, **_SYNTH).rows
    for wire in ({}, {"loss": 0.0, "download_queues": False}):
        out = _maintained(**wire)
        assert [{k: v for k, v in r.items() if k not in ("epoch", "world", "join_seconds_median",
                                                          "join_seconds_p99",
                                                          "connected_snapshots")}
                for r in out.rows] == plain
        assert not set(CHURN_WIRE_KEYS) & set(out.rows[0])
        assert out.rows[0]["world"] == instance_fingerprint(inst, seed=1)
        assert "network" not in out.summary


def test_maintained_rows_carry_bytes_and_slow_down_when_bandwidth_is_short():
    free = _maintained(bandwidth="inf", size="256k")
    tight = _maintained(bandwidth="2:4", size="256k")
    plain = _maintained()
    for out in (free, tight):
        assert len(out.rows) == 3
        for r in out.rows:
            assert set(CHURN_WIRE_KEYS) <= set(r)
            assert r["wire_messages"] > 0 and r["message_bytes_mean"] == 262144.0
            assert r["sent_payload_mean"] > 0
        # the network observes, it does not steer: the churn columns are the plain run's
        assert _without_wire(out.rows) == _without_wire(plain.rows)
        assert out.summary["network"]["size"] == "256k"
    for a, b in zip(free.rows, tight.rows, strict=True):
        assert b["delay_mean_ms"] > a["delay_mean_ms"] and b["delay_p90_ms"] > a["delay_p90_ms"]
        assert b["receive_rate"] <= a["receive_rate"]
        assert a["queueing_share"] == pytest.approx(0.0, abs=1e-9) and b["queueing_share"] > 0.2
        assert b["uplink_utilisation_max"] > 0 and a["uplink_utilisation_max"] == 0.0
        # the same messages, the same copies: only their timing differs
        assert a["sent_payload_mean"] == b["sent_payload_mean"]
    assert free.rows[0]["world"] != tight.rows[0]["world"] != plain.rows[0]["world"]


def test_loss_lowers_the_receive_rate():
    lossless = _maintained(bandwidth="50", size="16k")
    lossy = _maintained(bandwidth="50", size="16k", loss=0.3)
    assert all(r["copies_lost"] > 0 for r in lossy.rows)
    assert np.mean([r["receive_rate"] for r in lossy.rows]) < np.mean(
        [r["receive_rate"] for r in lossless.rows])


def test_one_seed_one_run():
    wire = {"bandwidth": "a:0.5:5:10,b:0.5:100:100", "size": "lognormal:32k:1",
            "publication": "poisson-topic:5", "jitter_ms": 2.0, "loss": 0.05}
    a, b = _maintained(**wire), _maintained(**wire)
    assert a.rows == b.rows
    c = _maintained(seed=2, **wire)
    assert [r["delay_mean_ms"] for r in a.rows] != [r["delay_mean_ms"] for r in c.rows]


def test_the_cycle_driver_measures_its_samples_on_the_wire(tiny_cycle_scenario):
    def run(**wire):
        return run_churn_request("rvr", ChurnRequest(scenario=tiny_cycle_scenario, wire=wire,
                                                     given=frozenset(wire)),
                                 seed=1, params={"rt": 6})

    plain, free, tight = run(), run(bandwidth="inf", size="128k"), run(bandwidth="3", size="128k")
    assert [r["cycle"] for r in tight.rows] == [5, 10, 15, 20]
    assert not set(CHURN_WIRE_KEYS) & set(plain.rows[0])
    assert _without_wire(tight.rows) == _without_wire(plain.rows)
    for r in tight.rows:
        assert set(BYTES_KEYS) <= set(r) and r["sent_payload_mean"] > 0
    # unlimited bandwidth: the mesh rule reaches what the routed flood reaches, in as many hops
    for p, f in zip(plain.rows, free.rows, strict=True):
        assert f["hops_mean"] == pytest.approx(p["delay_hops"], rel=0.05)
    # samples with measured receivers (joined at least 10 cycles ago) wait for the uplinks
    late = [(f, t) for f, t in zip(free.rows, tight.rows, strict=True) if t["measured"]]
    assert len(late) >= 2
    assert all(t["delay_mean_ms"] > f["delay_mean_ms"] for f, t in late)
    assert all(t["receive_rate"] <= f["receive_rate"] for f, t in late)
    assert tight.rows == run(bandwidth="3", size="128k").rows
    assert ("p90 ms" in [title for _, title in tight.columns]
            and "p90 ms" not in [title for _, title in plain.columns])


def test_the_event_driver_measures_after_every_event():
    inst = make_instance(nodes=120, topics=10, subs=3, seed=2)
    online0, ev = synthetic_churn(120, "burst", seed=2, events=6)
    plain = run_events("lowoda-inc", inst, online0, ev, seed=2)
    wired = run_events("lowoda-inc", inst, online0, ev, seed=2,
                       wire={"bandwidth": "4", "size": "64k"})
    assert len(wired.rows) == 6
    assert all(r["wire_messages"] > 0 and r["delay_mean_ms"] > 0 for r in wired.rows)
    timing = ("repair_seconds", "repair_cpu_seconds")
    strip = [{k: v for k, v in r.items() if k not in timing} for r in _without_wire(wired.rows)]
    assert strip == [{k: v for k, v in r.items() if k not in timing} for r in plain.rows]


def test_an_empty_sample_has_no_measures():
    inst = make_instance(nodes=10, topics=2, subs=1, seed=1)
    cw = ChurnWire.create(inst, seed=1, wire={"size": "1k"}, policy="topic")
    row = cw.measure(np.ones(10, bool), np.zeros((0, 2), int), inst.masks, np.zeros(0, int),
                     np.zeros(0, int), np.ones(10, bool))
    assert row["wire_messages"] == 0 and row["receive_rate"] is None
    assert cw.samples == 1


def test_a_bad_network_setting_of_a_churn_run_is_one_line():
    with pytest.raises(ParameterError, match="size: 'huge' is not a number") as e:
        ChurnRequest.from_settings({"lifetime": 10.0, "size": "huge"})
    assert e.value.key == "size"
    with pytest.raises(ParameterError, match="publication: poisson:RATE"):
        wire_settings({"publication": "every:3"})
    with pytest.raises(ParameterError, match="size: 2 sizes given for 12 topics"):
        _maintained(size="topic:1k,2k")
    with pytest.raises(ParameterError, match="loss"):  # the Python API checks what it is given
        _maintained(loss=1.5)
    with pytest.raises(ParameterError, match="control_size is not a setting of churn runs"):
        _maintained(control_size=64.0)
    res = CliRunner().invoke(cli, ["churn", "spidercast", "--nodes", "50", "--topics", "5",
                                   "--lifetime", "10", "--bandwidth", "fast"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == ["error: bandwidth: 'fast' is not a rate in Mbit/s"]


def test_hedgerow_churn_takes_the_network_options():
    args = ["churn", "spidercast", "--nodes", "80", "--topics", "6", "--subs", "2",
            "--lifetime", "20", "--duration", "20", "--snapshot-every", "10", "--seed", "3",
            "--bandwidth", "10:20", "--size", "32k", "--publication", "poisson-publisher:10",
            "--json", "--no-timings"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.output.strip().splitlines()]
    rows = [x for x in lines if x["kind"] == "snapshot"]
    assert len(rows) == 2 and all(set(BYTES_KEYS) <= set(r) for r in rows)
    assert lines[-1]["network"] == {"bandwidth": "10:20", "size": "32k",
                                    "publication": "poisson-publisher:10"}
    assert CliRunner().invoke(cli, args).output == res.output


def test_a_churn_spec_sweeps_the_network(tmp_path):
    assert {"scenario.churn.bandwidth", "scenario.churn.size",
            "scenario.churn.publication"} <= set(SETTABLE_KEYS)
    spec = parse_spec({
        "experiment": "churn-bytes",
        "scenario": {"kind": "churn", "protocol": "spidercast", "seed": 1,
                     "churn": {"lifetime": 20.0, "duration": 20.0, "snapshot_every": 20.0},
                     "workload": {"nodes": 60, "topics": 6, "subs": 2}},
        "sweep": {"grid": {"scenario.churn.size": ["1k", "512k"],
                           "scenario.churn.bandwidth": ["5"]}},
    })
    runs = list(expand(spec))
    assert len(runs) == 2
    rows = [run_one(r)[0] for r in runs]
    small, large = sorted(rows, key=lambda r: r["message_bytes_mean"])
    assert large["delay_mean_ms"] > small["delay_mean_ms"]
    bad = {"experiment": "b", "scenario": {
        "kind": "churn", "protocol": "spidercast",
        "churn": {"lifetime": 20.0, "size": "lognormal:1k"},
        "workload": {"nodes": 60, "topics": 6, "subs": 2}}}
    with pytest.raises(SpecError, match="size: lognormal:MEDIAN:SIGMA") as e:
        parse_spec(bad)
    assert "\n" not in str(e.value)


def test_a_sample_too_large_for_memory_is_refused_before_allocating(monkeypatch):
    import hedgerow.params as params

    inst = make_instance(nodes=200, topics=40, subs=3, seed=1)
    cw = ChurnWire.create(inst, seed=1, wire={"size": "1k"}, policy="topic")
    monkeypatch.setattr(params, "available_memory_bytes", lambda: 100 * 1024)
    with pytest.raises(ParameterError, match="a contended churn sample of 40 messages on 200 "
                                             "online nodes needs about"):
        cw.measure(np.ones(200, bool), np.zeros((0, 2), int), inst.masks, np.arange(40),
                   np.arange(40), np.ones(200, bool))
