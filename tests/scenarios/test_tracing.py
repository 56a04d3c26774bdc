"""A run's trace: its first copies give back the run's delivery measures exactly."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.metrics.delivery import delivery_measures
from hedgerow.model import interest_matrix
from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.tracing import TraceObserver, Tracer
from hedgerow.scenarios.world import make_world
from hedgerow.trace import TraceWriter, first_arrivals, read_trace


def _traced(tmp_path, protocol, scenario, epochs="last", sample=None, **settings):
    world = make_world(scenario, seed=4, **settings)
    tracer = Tracer(TraceWriter(tmp_path / f"{protocol}.parquet"), sample=sample, epochs=epochs)
    params = {"d": 6} if protocol == "topiary" else {}
    res = run_protocol(get_protocol(protocol, **params), world,
                       observers=[TraceObserver(tracer)])
    tracer.close(world)
    df, meta = read_trace(tmp_path / f"{protocol}.parquet")
    return world, res, df, meta


def _measures_from_trace(world, df, epoch, n_messages, publisher, topic):
    arrival = np.full((n_messages, world.n_nodes), np.inf)
    arrival[np.arange(n_messages), publisher] = 0.0
    fa = first_arrivals(df[df["epoch"] == epoch])
    arrival[fa["message"], fa["receiver"]] = fa["arrival_ms"]
    hops = np.full((n_messages, world.n_nodes), -1, dtype=np.int64)
    hops[np.arange(n_messages), publisher] = 0
    hops[fa["message"], fa["receiver"]] = fa["hops"]
    interest = interest_matrix(world.instance.masks, world.instance.n_topics)
    honest = None if world.attack is None else world.attack.honest
    return delivery_measures(arrival, publisher, topic, interest, receivers=honest, hops=hops)


@pytest.mark.parametrize(
    ("protocol", "scenario", "settings"),
    [
        ("spidercast", "unit-square", {"nodes": 120, "messages": 80}),
        ("gossipsub-split", "cities", {"messages": 60}),               # mesh forwarding
        ("topiary", "unit-square", {"nodes": 100, "messages": 60, "epochs": 3}),
        ("random-graph", "topic-attack", {"nodes": 120, "attackers": 30, "messages": 60}),
    ],
)
def test_first_copies_give_the_run_its_measures(tmp_path, protocol, scenario, settings):
    world, res, df, meta = _traced(tmp_path, protocol, scenario, **settings)
    last = res.rows[-1]
    epoch = int(df["epoch"].max())
    assert epoch == len(res.rows) - 1 and set(df["epoch"]) == {epoch}
    # the messages of the last epoch: the world's traffic, epoch after epoch
    traffic = world.traffic()
    for _ in range(epoch + 1):
        publisher, topic = next(traffic)
    got = _measures_from_trace(world, df, epoch, len(publisher), publisher, topic)
    assert got["receive_rate"] == last["receive_rate"]
    assert got["delay_mean_ms"] == last["delay_mean_ms"]
    for q in (50, 90, 99):
        assert got[f"delay_p{q}_ms"] == last[f"delay_p{q}_ms"]
    assert meta["world"] == world.fingerprint()
    assert len(meta["protocols"][protocol]["links"]) > 0


def test_a_sample_and_every_epoch(tmp_path):
    _, res, df, _ = _traced(tmp_path, "topiary", "unit-square", epochs="all", sample=7,
                            nodes=80, messages=40)
    assert sorted(set(df["epoch"])) == list(range(len(res.rows)))
    assert (df.groupby("epoch")["message"].nunique() == 7).all()


def test_tracing_changes_no_row(tmp_path):
    world = make_world("unit-square", seed=4, nodes=100, messages=50, epochs=3)
    plain = run_protocol(get_protocol("topiary", d=6), world).rows
    tracer = Tracer(TraceWriter(tmp_path / "t.parquet"), epochs="all")
    traced = run_protocol(get_protocol("topiary", d=6), world,
                          observers=[TraceObserver(tracer)]).rows
    assert plain == traced
