"""Traces: one row per copy, equal to what the dissemination engine computed."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import edge_delays
from hedgerow.dissemination.chunks import disseminate_chunks
from hedgerow.errors import DataError, ParameterError
from hedgerow.metrics.delivery import delivery_stats
from hedgerow.model import interest_matrix
from hedgerow.protocols import get_protocol
from hedgerow.scenarios import make_world
from hedgerow.trace import SCHEMA, TraceWriter, copy_rows, first_arrivals, read_trace


@pytest.fixture(scope="module")
def world_and_graph():
    world = make_world("unit-square", seed=3, nodes=80)
    ov = get_protocol("spidercast").build(world.instance, seed=3)
    a = ov.undirected_csr()
    ip, ix = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    ed = np.asarray(edge_delays(ip, ix, world.latency), dtype=np.float64)
    publisher, topic = next(world.traffic())
    return world, ov, ip, ix, ed, publisher[:60], topic[:60]


@pytest.mark.parametrize("policy", ["ttl", "topic", "flood"])
def test_rows_are_the_engine_copies(world_and_graph, policy, tmp_path):
    world, _, ip, ix, ed, pub, top = world_and_graph
    w = TraceWriter(tmp_path / "t.parquet")
    arrival = np.empty((len(pub), world.n_nodes))
    copies = np.zeros(len(pub), dtype=np.int64)
    dups = np.zeros(len(pub), dtype=np.int64)
    relays = np.zeros(len(pub), dtype=np.int64)
    for sel, dl, emap in disseminate_chunks(ip, ix, ed, world.proc, world.instance.masks, pub,
                                            top, 1, record_edges=True, policy=policy):
        rows = copy_rows(dl, ip, ix, ed, world.instance.masks, message_ids=sel, entry_map=emap)
        w.add("spidercast", 0, rows)
        arrival[sel] = dl.arrival
        copies[sel], dups[sel], relays[sel] = dl.copies, dl.duplicates, dl.relay_copies
    w.describe("spidercast", {"links": []})
    path = w.close({"world": world.fingerprint(), "n_nodes": world.n_nodes})
    df, meta = read_trace(path)
    assert meta["world"] == world.fingerprint() and list(df.columns) == SCHEMA.names
    assert not (tmp_path / "t.parquet.part").exists()
    # every transmitted copy is a row; per message: copies, duplicates, relay copies
    per = df.groupby("message")
    assert np.array_equal(per.size().reindex(range(len(pub)), fill_value=0), copies)
    assert np.array_equal((~df["first"]).groupby(df["message"]).sum()
                          .reindex(range(len(pub)), fill_value=0), dups)
    assert np.array_equal(df["relay"].groupby(df["message"]).sum()
                          .reindex(range(len(pub)), fill_value=0), relays)
    # first arrivals are the engine's arrival times, node by node
    fa = first_arrivals(df)
    rebuilt = np.full_like(arrival, np.inf)
    rebuilt[np.arange(len(pub)), pub] = 0.0
    rebuilt[fa["message"], fa["receiver"]] = fa["arrival_ms"]
    assert np.array_equal(rebuilt, arrival)
    assert not fa.duplicated(["message", "receiver"]).any()
    # so the delivery measures computed from the trace are the run's
    interest = interest_matrix(world.instance.masks, world.instance.n_topics)
    assert delivery_stats(rebuilt, pub, top, interest) == delivery_stats(arrival, pub, top,
                                                                         interest)
    # a copy leaves after its sender's first copy arrived and its processing delay
    got = dict(zip(zip(fa["message"], fa["receiver"], strict=True), fa["arrival_ms"], strict=True))
    for r in df.sample(50, random_state=1).itertuples():
        start = 0.0 if r.sender == r.publisher else got[(r.message, r.sender)] + world.proc[
            r.sender]
        assert r.send_ms == pytest.approx(start, abs=1e-9)


def test_a_writer_needs_a_writable_folder(tmp_path):
    with pytest.raises(ParameterError, match="does not exist"):
        TraceWriter(tmp_path / "no" / "t.parquet")


def test_reading_something_else_is_one_line(tmp_path):
    p = tmp_path / "x.parquet"
    p.write_text("not parquet")
    with pytest.raises(DataError, match=r"x\.parquet: cannot read a trace"):
        read_trace(p)


def test_an_aborted_trace_leaves_nothing(world_and_graph, tmp_path):
    world, _, ip, ix, ed, pub, top = world_and_graph
    w = TraceWriter(tmp_path / "t.parquet")
    for sel, dl, emap in disseminate_chunks(ip, ix, ed, world.proc, world.instance.masks,
                                            pub[:3], top[:3], 1, record_edges=True):
        w.add("spidercast", 0, copy_rows(dl, ip, ix, ed, world.instance.masks,
                                         message_ids=sel, entry_map=emap))
    w.abort()
    assert list(tmp_path.iterdir()) == []
