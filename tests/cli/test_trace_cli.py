"""--trace on run and compare, and hedgerow replay, from the command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.trace import first_arrivals, read_trace


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-trace")
    res = CliRunner().invoke(cli, [
        "compare", "--scenario", "unit-square", "--nodes", "120", "--messages", "60",
        "--epochs", "2", "--protocols", "spidercast,topiary", "--seed", "3", "--json",
        "--no-timings", "--no-diameter", "--trace", str(d / "t.parquet"),
    ])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    return d, rows


def test_compare_writes_one_trace_for_all_protocols(traced):
    d, rows = traced
    df, meta = read_trace(d / "t.parquet")
    assert sorted(df["protocol"].unique()) == ["spidercast", "topiary"]
    assert meta["world"] == rows[0]["world"]
    fa = first_arrivals(df)
    for r in rows:
        got = fa[(fa["protocol"] == r["protocol"]) & ~fa["relay"]]["arrival_ms"].mean()
        assert got == pytest.approx(r["delay_mean_ms"], rel=1e-12)


def test_replay_of_the_trace(traced):
    d, _ = traced
    res = CliRunner().invoke(cli, ["replay", str(d / "t.parquet"), "--out", str(d / "r.html")])
    assert res.exit_code == 0, res.output
    assert (d / "r.html").stat().st_size > 10_000


def test_run_with_a_sample_of_every_epoch(tmp_path):
    res = CliRunner().invoke(cli, [
        "run", "topiary", "--scenario", "unit-square", "--nodes", "80", "--messages", "40",
        "--epochs", "3", "--json", "--trace", str(tmp_path / "t.parquet"), "--trace-sample", "5",
        "--trace-epochs", "all",
    ])
    assert res.exit_code == 0, res.output
    df, _ = read_trace(tmp_path / "t.parquet")
    assert df.groupby("epoch")["message"].nunique().tolist() == [5, 5, 5]


def test_a_trace_into_a_missing_folder_is_one_line_before_any_work(tmp_path):
    res = CliRunner().invoke(cli, [
        "compare", "--scenario", "unit-square", "--protocols", "spidercast",
        "--trace", str(tmp_path / "no" / "t.parquet"),
    ])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--trace" in lines[0] and "does not exist" in lines[0]
    assert not (tmp_path / "no").exists()
