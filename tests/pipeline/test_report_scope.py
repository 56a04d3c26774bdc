"""Reports that cannot mislead: the spec's runs only, other rows apart, no pooled parameters."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import HedgerowError
from hedgerow.experiment import parse_spec
from hedgerow.pipeline.report import aggregate, render
from hedgerow.pipeline.store import write_rows
from hedgerow.pipeline.sweep import run_sweep

EDITED = {
    "experiment": "edited",
    "scenario": {
        "protocol": "spidercast",
        "params": {"kg": 3, "kr": 0},
        "workload": {"nodes": 80, "topics": 10, "subs": 3, "popularity": "rss"},
        "diameter": False,
    },
    "sweep": {"seeds": [0, 1]},
    "report": {"by": ["label"], "metrics": ["avg_degree"]},
}


def _row(rid, label, nodes, deg, *, experiment="plain", code="c1", kg="3", status="ok"):
    return {
        "run_id": rid, "attempt_id": f"a-{rid}", "experiment": experiment, "label": label,
        "kind": "build", "protocol": "spidercast", "seed": 0, "nodes": nodes, "topics": 10,
        "subs": "3", "popularity": "rss", "status": status, "finished_at": time.time(),
        "code": code, "param_kg": kg, "spec_json": "{}", "point_json": "{}",
        **({"avg_degree": float(deg)} if status == "ok" else {"error": "ValueError: bad"}),
    }  # fmt: skip


@pytest.mark.spark
def test_edited_spec_reports_the_current_runs_and_the_stale_ones_apart(spark, tmp_path):
    """kg 3 swept, the spec edited to kg 1 and swept into the same folder: the report
    aggregates the 2 kg=1 runs and shows the 2 kg=3 runs apart, on both engines."""
    run_sweep(parse_spec(EDITED), tmp_path, spark=spark, progress=False)
    edited = {**EDITED, "scenario": {**EDITED["scenario"], "params": {"kg": 1, "kr": 0}}}
    run_sweep(parse_spec(edited), tmp_path, spark=spark, progress=False)
    for engine in (None, spark):
        rep = aggregate(engine, tmp_path, "edited")
        assert (rep.runs_ok, rep.runs_failed, rep.runs_expected) == (2, 0, 2)
        assert rep.table["n"].tolist() == [2]
        assert rep.other_runs == 2
        assert "param_kg" in rep.other_by
        assert rep.other_table["param_kg"].tolist() == ["3"]
        assert rep.other_table["n"].tolist() == [2]
        text = render(rep, "markdown")
        assert "2 runs ok, 0 failed, 2 in the spec; 2 more runs of 'edited'" in text
        assert "### not in the current spec: 2 runs, not included above" in text
    kg1 = aggregate(None, tmp_path, "edited").table["mean"].iloc[0]
    kg3 = rep.other_table["mean"].iloc[0]
    assert kg1 != kg3


def test_no_manifest_never_pools_different_sizes(tmp_path):
    for i, (nodes, deg) in enumerate([(500, 10.0), (500, 12.0), (1000, 20.0), (1000, 22.0)]):
        write_rows(tmp_path, f"r{i}", [_row(f"r{i}", "SpiderCast(3,0)", nodes, deg)])
    rep = aggregate(None, tmp_path, "plain", by=["label"], metrics=["avg_degree"])
    assert rep.by == ["label", "nodes"]
    assert rep.table["mean"].tolist() == [11.0, 21.0] and rep.table["n"].tolist() == [2, 2]
    text = render(rep, "markdown")
    assert "grouped also by nodes" in text and "no manifest" in text


def test_rows_of_other_code_are_a_group_of_their_own(tmp_path):
    write_rows(tmp_path, "a", [_row("a", "L", 500, 10.0, code="new")])
    write_rows(tmp_path, "b", [_row("b", "L", 500, 14.0, code="old")])
    rep = aggregate(None, tmp_path, "plain", by=["label"], metrics=["avg_degree"])
    assert rep.by == ["label", "code"] and rep.table["n"].tolist() == [1, 1]
    assert any("different Hedgerow code versions" in n for n in rep.notes)


def test_report_on_an_experiment_whose_runs_all_failed(tmp_path):
    for i in range(3):
        write_rows(tmp_path, f"f{i}", [_row(f"f{i}", "L", 500, 0, status="failed")])
    with pytest.raises(HedgerowError, match=r"plain: all 3 runs in .* failed \(first error: "
                       r"ValueError: bad\); fix the cause and rerun hedgerow sweep"):  # fmt: skip
        aggregate(None, tmp_path, "plain")
    res = CliRunner().invoke(cli, ["report", str(tmp_path), "-e", "plain"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1


def test_corrupt_and_foreign_files_are_named_and_skipped(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i in range(2):
        write_rows(tmp_path, f"r{i}", [_row(f"r{i}", "L", 500, 10.0 + i)])
    (tmp_path / "rows" / "broken.parquet").write_bytes(b"PAR1 not really")
    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "rows" / "foreign.parquet")
    res = CliRunner().invoke(cli, ["report", str(tmp_path), "-e", "plain", "--format", "csv"])
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 2
    assert "broken.parquet: not a readable Parquet file" in warnings[0]
    assert "foreign.parquet: not a Hedgerow result file (no column run_id, status" in warnings[1]
    assert "L,avg_degree,10.5," in res.output


def test_corrupt_manifest_is_one_line_naming_it(tmp_path):
    write_rows(tmp_path, "r0", [_row("r0", "L", 500, 10.0)])
    (tmp_path / "_manifests").mkdir()
    (tmp_path / "_manifests" / "plain.json").write_text('{"runs": [')
    res = CliRunner().invoke(cli, ["report", str(tmp_path), "-e", "plain"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: {tmp_path}/_manifests/plain.json: corrupt manifest (JSONDecodeError); delete it "
        f"and rerun hedgerow sweep SPEC --out {tmp_path} to write it again"
    ]


def test_report_options_are_checked_before_any_engine(tmp_path, monkeypatch):
    import hedgerow.pipeline.session as session

    def no_spark(*a, **k):
        raise AssertionError("Spark started for a bad option")

    monkeypatch.setattr(session, "get_spark", no_spark)
    write_rows(tmp_path, "r0", [_row("r0", "L", 500, 10.0)])
    for args, msg in [
        (["--by", "colour"], "--by colour: no such result column"),
        (["--metric", "hit_ratio"], "--metric hit_ratio: no such metric in 'plain'"),
        (["--metric", "recieve_rate"], "--metric recieve_rate: unknown metric 'recieve_rate'; "
                                       "nearest: receive_rate"),
        (["--master", "lokal"], "--master lokal: not a Spark master URL"),
    ]:
        t0 = time.perf_counter()
        res = CliRunner().invoke(cli, ["report", str(tmp_path), "-e", "plain", *args])
        assert res.exit_code == 2 and msg in res.output, res.output
        assert time.perf_counter() - t0 < 2.0


def test_local_engine_reads_a_folder_shared_with_other_experiments(tmp_path):
    """Columns only another experiment's files have are null, as in Spark's merged schema."""
    write_rows(tmp_path, "a", [_row("a", "L", 500, 10.0)])
    write_rows(tmp_path, "b", [_row("b", "L", 500, 14.0)])
    other = {**_row("c", "M", 500, 3.0, experiment="other"), "param_extra": "x", "rate": 1.0}
    write_rows(tmp_path, "c", [other])
    rep = aggregate(None, tmp_path, "plain", by=["label"], metrics=["avg_degree"])
    assert rep.table["mean"].tolist() == [12.0] and rep.table["n"].tolist() == [2]
