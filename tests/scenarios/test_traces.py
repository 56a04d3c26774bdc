"""Churn traces without Spark: the readers of ``hedgerow ingest churn`` outputs and the replay."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hedgerow.errors import DataError, ParameterError
from hedgerow.scenarios.traces import (
    EVENT_DTYPE,
    JOIN,
    LEAVE,
    load_events,
    load_meta,
    load_nodes,
    trace_churn,
)


def _write(folder, events=None, nodes=None, meta=None):
    if events is not None:
        (folder / "events").mkdir()
        pd.DataFrame(events).to_parquet(folder / "events" / "part-0.parquet")
    if nodes is not None:
        (folder / "nodes").mkdir()
        pd.DataFrame(nodes).to_parquet(folder / "nodes" / "part-0.parquet")
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_events_come_back_in_seq_order_with_the_event_dtype(tmp_path):
    d = _write(
        tmp_path,
        events={
            "seq": [2, 0, 1, 3],
            "time_s": [5.0, 0.0, 0.0, 7.5],
            "node": [1, 0, 1, 0],
            "event": [LEAVE, JOIN, JOIN, LEAVE],
        },
    )
    ev = load_events(d)
    assert ev.dtype == EVENT_DTYPE
    assert ev.tolist() == [(0.0, 0, JOIN), (0.0, 1, JOIN), (5.0, 1, LEAVE), (7.5, 0, LEAVE)]


def test_nodes_sorted_and_meta_optional(tmp_path):
    d = _write(tmp_path, nodes={"node": [2, 0, 1], "machine_id": [30, 10, 20]})
    assert load_nodes(d)["machine_id"].tolist() == [10, 20, 30]
    assert load_meta(d) == {}
    (d / "meta.json").write_text(json.dumps({"counts": {"nodes": 3}}))
    assert load_meta(d) == {"counts": {"nodes": 3}}


def test_bad_folders_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="missing events/"):
        load_events(tmp_path)
    with pytest.raises(DataError, match="missing nodes/"):
        load_nodes(tmp_path)
    d = _write(
        tmp_path, events={"seq": [0, 1], "time_s": [0.0, 1.0], "node": [0, 0], "event": [1, 2]}
    )
    with pytest.raises(DataError, match="unknown event code 2"):
        load_events(d)


def test_trace_replay_starts_online_and_rescales_time(rejoin_trace):
    ev = rejoin_trace
    on, later = trace_churn(ev, 5)
    assert on.tolist() == [True, True, False, False, False]
    assert later["time_s"].tolist() == [10.0, 10.05, 10.1, 30.0]
    on, later = trace_churn(ev, 5, speedup=10.0, duration=2.0)
    assert later["time_s"].tolist() == [10.0 / 10.0, 10.05 / 10.0, 10.1 / 10.0]
    assert later[["node", "event"]].tolist() == [(1, LEAVE), (1, JOIN), (1, LEAVE)]
    assert ev["time_s"][2] == 10.0  # the input is not changed
    with pytest.raises(ParameterError, match="use at least 3 nodes"):
        trace_churn(ev, 2)
    with pytest.raises(ParameterError, match="speedup must be positive"):
        trace_churn(ev, 5, speedup=0.0)
