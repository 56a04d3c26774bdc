"""``hedgerow churn``: named scenarios from the command line; runs that cannot measure what
was asked say so on stderr and in JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.scenarios.traces import JOIN, LEAVE

WORKLOAD = ["--nodes", "60", "--topics", "8", "--subs", "2", "--seed", "1"]


def _lines(r):
    return [json.loads(x) for x in r.stdout.strip().splitlines()]


def test_no_snapshot_warns():
    r = CliRunner().invoke(
        cli,
        ["churn", "spidercast", *WORKLOAD, "--lifetime", "20", "--duration", "10",
         "--snapshot-every", "20", "--json"],
    )
    assert r.exit_code == 0, r.output
    [summary] = _lines(r)
    assert summary["kind"] == "summary" and summary["snapshots"] == 0
    [warning] = summary["warnings"]
    assert "no snapshot" in warning and "shorter than the snapshot period" in warning
    assert f"warning: {warning}" in r.stderr.splitlines()


def test_a_trace_with_fewer_nodes_than_the_workload_warns(tmp_path):
    events = {
        "seq": np.arange(6),
        "time_s": [0.0, 0.0, 0.0, 5.0, 12.0, 15.0],
        "node": [0, 1, 2, 3, 1, 3],
        "event": [JOIN, JOIN, JOIN, JOIN, LEAVE, LEAVE],
    }
    (tmp_path / "events").mkdir()
    pd.DataFrame(events).to_parquet(tmp_path / "events" / "part-0.parquet")
    r = CliRunner().invoke(
        cli,
        ["churn", "spidercast", *WORKLOAD, "--trace", str(tmp_path), "--duration", "20",
         "--snapshot-every", "10", "--json"],
    )
    assert r.exit_code == 0, r.output
    *snapshots, summary = _lines(r)
    assert len(snapshots) == 2
    [warning] = summary["warnings"]
    assert warning.startswith("56 of 60 nodes never appear in the trace")
    assert "--nodes 4" in warning
    assert f"warning: {warning}" in r.stderr.splitlines()


def test_a_full_run_has_no_warning():
    r = CliRunner().invoke(
        cli,
        ["churn", "spidercast", *WORKLOAD, "--lifetime", "20", "--duration", "20",
         "--snapshot-every", "10", "--json"],
    )
    assert r.exit_code == 0, r.output
    assert _lines(r)[-1]["warnings"] == [] and "warning" not in r.stderr


@pytest.mark.data
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_a_named_scenario_replays_its_events_from_the_command_line(as_json):
    """``--scenario``: the start (with its status on the progress bar), then one row per event."""
    args = ["churn", "lowoda-inc", "--scenario", "fb1k-google", "--events", "3", "--seed", "1"]
    r = CliRunner().invoke(cli, args + (["--json"] if as_json else []))
    assert r.exit_code == 0, r.output
    if as_json:
        *rows, summary = _lines(r)
        assert [row["event"] for row in rows] == [1, 2, 3]
        assert summary["kind"] == "summary" and summary["violations"] == 0
    else:
        assert "lowoda-inc on fb1k-google: 3 events" in r.stdout
        assert "violations 0" in r.stdout
