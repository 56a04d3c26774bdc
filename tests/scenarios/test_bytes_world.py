"""Bytes on the wire in the world: the network settings, the contended epoch loop, the byte
columns of rows and comparisons, the named worlds (``scenarios/world/wire.py``,
``scenarios/epochs.py``, ``scenarios/observers.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import DataError, ParameterError
from hedgerow.latency import constant
from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.observers import BYTES_KEYS, EpochObserver
from hedgerow.scenarios.run import compare
from hedgerow.scenarios.world import custom_world, make_world, resolve_scenario
from hedgerow.scenarios.world.wire import parse_bandwidth, parse_size
from hedgerow.workloads import make_instance


def _rows_without_bytes(rows):
    return [{k: v for k, v in r.items() if k not in BYTES_KEYS} for r in rows]


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("bandwidth", "fast", "bandwidth: 'fast' is not a rate"),
        ("bandwidth", "0:10", "bandwidth: rates must be positive"),
        ("bandwidth", "home:0.5:25", "NAME:SHARE:UP:DOWN"),
        ("bandwidth", "a:1:2:3,a:1:2:3", "class 'a' given twice"),
        ("size", "big", "size: 'big' is not a number of bytes"),
        ("size", "uniform:2k:1k", "LO must not exceed HI"),
        ("publication", "burst:3", "publication: poisson:RATE"),
        ("publication", "poisson:0", "RATE must be a positive"),
        ("loss", 1.0, "loss"),
        ("jitter_ms", -1.0, "jitter_ms"),
        ("control_size", -1.0, "control_size"),
        ("control_entry_size", -5.0, "control_entry_size"),
        ("control_period_ms", 0.0, "control_period_ms"),
    ],
)
def test_a_bad_network_setting_is_one_line_naming_it(key, value, match):
    with pytest.raises(ParameterError, match=match) as err:
        resolve_scenario("unit-square", **{key: value})
    assert err.value.key == key
    assert "\n" not in str(err.value)


def test_the_written_forms():
    assert parse_size("1m") == ("const", 1048576.0, 1048576.0)
    assert parse_size("topic-uniform:10:20") == ("topic-uniform", 10.0, 20.0)
    assert parse_bandwidth("inf") == ("uniform", (np.inf, np.inf))
    assert parse_bandwidth("file:rates.txt") == ("file", "rates.txt")


def test_a_world_without_network_settings_is_todays():
    w = make_world("unit-square", seed=1, nodes=80, messages=20)
    assert not w.contended and w.network is None
    row = run_protocol(get_protocol("ringpt"), w).rows[0]
    assert not set(BYTES_KEYS) & set(row)


@pytest.mark.parametrize("protocol", ["ringpt", "topiary", "gossipsub-split"])
def test_unlimited_bandwidth_and_size_zero_give_todays_rows(protocol):
    """A contended world that contends for nothing: every delivery column equal to today's."""
    base = make_world("unit-square", seed=3, nodes=80, messages=30, epochs=3)
    wired = make_world("unit-square", seed=3, nodes=80, messages=30, epochs=3, bandwidth="inf")
    assert wired.contended
    a = run_protocol(get_protocol(protocol), base).rows
    b = run_protocol(get_protocol(protocol), wired).rows
    assert _rows_without_bytes(b) == a
    assert all(r["sent_payload_mean"] == 0.0 for r in b)


def test_bytes_slow_messages_down_and_are_counted():
    kw = {"seed": 2, "nodes": 100, "messages": 40}
    free = run_protocol(get_protocol("random-graph"), make_world("unit-square", **kw)).rows[0]
    wired = make_world("unit-square", bandwidth="5:10", size="32k", **kw)
    row = run_protocol(get_protocol("random-graph"), wired).rows[0]
    assert row["delay_mean_ms"] > free["delay_mean_ms"]
    assert row["sent_payload_mean"] > 0 and row["message_bytes_mean"] == 32768.0
    assert 0 < row["uplink_utilisation_max"] <= 1
    assert 0 < row["queueing_share"] < 1
    assert row["copies_lost"] == 0


def test_the_same_seed_gives_the_same_contended_epochs():
    kw = {"seed": 5, "nodes": 80, "messages": 30, "epochs": 3}
    wire = {"bandwidth": "a:0.5:5:10,b:0.5:50:50", "size": "uniform:1k:64k",
            "publication": "poisson:20", "loss": 0.05, "jitter_ms": 3.0}
    a = run_protocol(get_protocol("topiary"), make_world("unit-square", **kw, **wire)).rows
    b = run_protocol(get_protocol("topiary"), make_world("unit-square", **kw, **wire)).rows
    assert a == b
    assert a[0]["copies_lost"] > 0
    c = run_protocol(get_protocol("topiary"),
                     make_world("unit-square", **{**kw, "seed": 6}, **wire)).rows
    assert a != c


def test_adaptive_protocols_observe_contended_arrivals():
    """Topiary learns from the arrival times it is shown: bytes change what it selects."""
    kw = {"seed": 4, "nodes": 80, "messages": 40, "epochs": 4}
    free = run_protocol(get_protocol("topiary"), make_world("unit-square", **kw), keep_outs=True)
    wired = make_world("unit-square", bandwidth="a:0.5:2:10,b:0.5:200:200", size="64k", **kw)
    slow = run_protocol(get_protocol("topiary"), wired, keep_outs=True)
    assert np.array_equal(free.outs[0], slow.outs[0])  # the same start
    assert not np.array_equal(free.outs[-1], slow.outs[-1])


def test_the_network_streams_leave_the_others_alone():
    a = make_world("unit-square", seed=7, nodes=60)
    b = make_world("unit-square", seed=7, nodes=60, bandwidth="a:0.5:1:2,b:0.5:3:4", size="1k")
    assert np.array_equal(a.instance.masks, b.instance.masks)
    assert np.array_equal(a.proc, b.proc)
    assert np.array_equal(next(a.traffic())[0], next(b.traffic())[0])
    assert a.fingerprint() != b.fingerprint()
    assert sorted(set(b.network.upload.tolist())) == [1.0, 3.0]


def test_per_topic_sizes_stay_for_the_run():
    w = make_world("unit-square", seed=1, nodes=60, size="topic-uniform:1k:9k")
    topic = np.array([3, 3, 5])
    s0, _, _ = w.wire(0, topic)
    s1, _, _ = w.wire(1, topic)
    assert s0[0] == s0[1] == s1[0] and s0.tolist() == s1.tolist()


def test_a_bandwidth_file(tmp_path):
    inst = make_instance(nodes=4, topics=2, subs=1, seed=1)
    good = tmp_path / "rates.txt"
    good.write_text("# upload download\n10 20\n10 20\n100 100\n1 2\n")
    w = custom_world(inst, constant(4, 5.0), np.zeros(4), bandwidth=f"file:{good}")
    assert w.network.upload.tolist() == [10.0, 10.0, 100.0, 1.0]
    bad = tmp_path / "short.txt"
    bad.write_text("10 20\n")
    with pytest.raises(DataError, match=r"short\.txt: needs 4 lines"):
        custom_world(inst, constant(4, 5.0), np.zeros(4), bandwidth=f"file:{bad}")
    with pytest.raises(ParameterError, match="unknown setting 'speed'"):
        custom_world(inst, constant(4, 5.0), np.zeros(4), speed=3)


def test_download_queues_only_add_delay():
    kw = {"seed": 2, "nodes": 80, "messages": 30, "bandwidth": "20:5", "size": "16k"}
    up = run_protocol(get_protocol("ringpt"), make_world("unit-square", **kw)).rows[0]
    both = run_protocol(get_protocol("ringpt"),
                        make_world("unit-square", download_queues=True, **kw)).rows[0]
    assert both["delay_mean_ms"] >= up["delay_mean_ms"]
    assert both["sent_payload_mean"] == up["sent_payload_mean"]


def test_a_resent_contended_epoch_is_the_epoch():
    """A trace re-sends the epoch's messages: on a contended world the whole epoch again."""
    got = {}

    class Resend(EpochObserver):
        def observe(self, run, ep):
            ids = np.array([3, 1])
            ep.resend(ids, lambda sel, d, emap: got.update(arrival=d.arrival, sel=sel))
            got["epoch"] = ep.rec.arrival[ids]
            return {}

    w = make_world("unit-square", seed=1, nodes=60, messages=10, bandwidth="5", size="8k",
                   publication="poisson:10")
    run_protocol(get_protocol("ringpt"), w, observers=[Resend()])
    assert np.array_equal(got["arrival"], got["epoch"])


def test_withholding_attackers_on_a_contended_network_are_refused():
    w = make_world("topic-attack", seed=1, nodes=100, attackers=20, messages=10, size="1k")
    with pytest.raises(ParameterError, match="withhold a topic are not modelled") as err:
        run_protocol(get_protocol("ringpt"), w)
    assert err.value.key == "bandwidth"


def test_compare_rows_carry_the_byte_columns_on_eth_blocks():
    rows = compare(["random-graph", "perigee"], "eth-blocks", seed=1, nodes=120, messages=10,
                   epochs=2)
    for row in rows:
        assert set(BYTES_KEYS) <= set(row)
        assert row["sent_payload_mean"] > 0
    assert rows[0]["world"] == rows[1]["world"]


def test_eth_blocks_places_its_nodes_on_the_cities():
    w = make_world("eth-blocks", seed=1, nodes=300)
    assert w.latency.name == "cities-placed" and w.n_nodes == 300
    assert int((w.network.upload == 25.0).sum()) == 240
    size, published, _ = w.wire(0, np.zeros(50, dtype=np.int64))
    assert size.min() >= 128 * 1024 and size.max() <= 1024 * 1024
    assert (np.diff(published) > 0).all()


def test_compare_json_carries_the_byte_columns():
    import json

    from click.testing import CliRunner

    from hedgerow.cli import cli

    res = CliRunner().invoke(cli, [
        "compare", "--scenario", "unit-square", "--protocols", "ringpt,topiary", "--nodes", "60",
        "--messages", "10", "--epochs", "2", "--bandwidth", "home:0.8:25:50,dc:0.2:1000:1000",
        "--size", "64k", "--publication", "poisson:5", "--loss", "0.01", "--json",
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert [r["protocol"] for r in rows] == ["ringpt", "topiary"]
    for row in rows:
        assert set(BYTES_KEYS) <= set(row) and row["message_bytes_mean"] == 65536.0


# --------------------------------------------------------------------- control messages
CONTROL_KW = {"seed": 3, "nodes": 120, "messages": 20, "publication": "poisson:5"}


def test_control_size_zero_gives_the_rows_of_a_world_without_it():
    a = compare(["vitis", "spidercast"], "unit-square-bw", **CONTROL_KW)
    b = compare(["vitis", "spidercast"], "unit-square-bw", control_size=0.0,
                control_entry_size=40.0, **CONTROL_KW)
    for x, y in zip(a, b, strict=True):
        x.pop("seconds"), y.pop("seconds")
        assert x == y
        assert x["sent_control_mean"] == 0.0 and x["control_byte_share"] == 0.0


def test_control_messages_are_counted_and_share_the_uplinks():
    rows = {r["protocol"]: r for r in compare(
        ["vitis", "rvr", "spidercast", "ringpt"], "unit-square-bw", control_size=64.0,
        **CONTROL_KW)}
    free = {r["protocol"]: r for r in compare(
        ["vitis", "rvr", "spidercast", "ringpt"], "unit-square-bw", **CONTROL_KW)}
    for name in ("vitis", "rvr", "spidercast"):
        row = rows[name]
        assert row["sent_control_mean"] > 0 and 0 < row["control_byte_share"] < 1
        # every control byte sent is received (no control message is lost)
        assert row["received_control_mean"] == pytest.approx(row["sent_control_mean"])
        # the same payload, now sharing the uplinks with the control messages
        assert row["sent_payload_mean"] == free[name]["sent_payload_mean"]
        assert row["delay_mean_ms"] != free[name]["delay_mean_ms"]
        assert row["world"] != free[name]["world"]
    # Vitis gossips more than RVR (the profile exchange on top of the same two exchanges)
    assert rows["vitis"]["sent_control_mean"] > rows["rvr"]["sent_control_mean"]
    assert rows["ringpt"]["sent_control_mean"] == 0.0
    ringpt = {k: v for k, v in rows["ringpt"].items() if k not in ("world", "seconds")}
    assert ringpt == {k: v for k, v in free["ringpt"].items() if k not in ("world", "seconds")}


def test_control_bytes_follow_the_settings():
    kw = {**CONTROL_KW, "control_period_ms": 500.0}
    small = compare(["rvr"], "unit-square-bw", control_size=64.0, control_entry_size=0.0, **kw)[0]
    big = compare(["rvr"], "unit-square-bw", control_size=128.0, control_entry_size=0.0, **kw)[0]
    assert big["sent_control_mean"] == pytest.approx(2 * small["sent_control_mean"])
    slow = compare(["rvr"], "unit-square-bw", control_size=64.0, control_entry_size=0.0,
                   **{**kw, "control_period_ms": 5000.0})[0]
    assert slow["sent_control_mean"] < small["sent_control_mean"]
    again = compare(["rvr"], "unit-square-bw", control_size=64.0, control_entry_size=0.0, **kw)[0]
    small.pop("seconds"), again.pop("seconds")
    assert again == small  # the same seed, the same control messages


def test_a_resent_epoch_with_control_messages_is_the_epoch():
    w = make_world("unit-square-bw", control_size=64.0, **{**CONTROL_KW, "seed": 4})

    class Resend(EpochObserver):
        def observe(self, run, ep):
            got = {}

            def keep(sel, d, emap):
                got["arrival"] = d.arrival

            ep.resend(np.arange(5), keep)
            np.testing.assert_array_equal(got["arrival"], ep.rec.arrival[:5])
            return {"resent": True}

    rows = run_protocol(get_protocol("spidercast"), w, observers=[Resend()]).rows
    assert rows[0]["resent"] and rows[0]["sent_control_mean"] > 0


def test_compare_json_shows_control_bytes():
    import json

    from click.testing import CliRunner

    from hedgerow.cli import cli

    res = CliRunner().invoke(cli, [
        "compare", "--scenario", "eth-blocks", "--protocols", "vitis,spidercast", "--nodes",
        "100", "--messages", "8", "--epochs", "1", "--control-size", "64", "--json",
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert [r["protocol"] for r in rows] == ["vitis", "spidercast"]
    assert all(r["sent_control_mean"] > 0 and r["control_byte_share"] > 0 for r in rows)
