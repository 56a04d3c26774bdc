"""Spark SQL aggregation: mean, 95% CI and count against pandas; dedup; paper values."""

from __future__ import annotations

import json
import math
import re
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hedgerow.errors import HedgerowError
from hedgerow.pipeline.report import aggregate, ci95_halfwidth, load_rows, render
from hedgerow.pipeline.store import write_rows

pytestmark = pytest.mark.spark


def row(
    run_id,
    label,
    nodes,
    seed,
    avg_degree,
    components,
    *,
    status="ok",
    at=None,
    attempt=None,
    experiment="spidercast-fig12",
):
    r = {
        "run_id": run_id,
        "attempt_id": attempt or f"a-{run_id}",
        "experiment": experiment,
        "label": label,
        "kind": "build",
        "protocol": "spidercast" if label.startswith("Spider") else "similarity",
        "seed": seed,
        "nodes": nodes,
        "topics": 100,
        "subs": "10",
        "popularity": "rss",
        "status": status,
        "wall_seconds": 1.0,
        "finished_at": at if at is not None else time.time(),
        "spec_json": "{}",
        "point_json": "{}",
    }
    if status == "ok":
        r["avg_degree"] = float(avg_degree)
        r["topic_components"] = float(components)
    else:
        r["error"] = "RuntimeError: boom"
    return r


RUN_IDS = [
    f"{label[:3]}-{nodes}-{seed}"
    for label in ("SpiderCast(3,0)", "similarity(10,0)")
    for nodes in (1000, 2000)
    for seed in range(3)
] + ["single", "retry-ok", "dup", "only-failed"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """2 labels x 2 sizes x 3 seeds, a 1-run group, a retried run and a duplicated run."""
    out = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(5)
    expected = []
    for label in ("SpiderCast(3,0)", "similarity(10,0)"):
        for nodes in (1000, 2000):
            for seed in range(3):
                rid = f"{label[:3]}-{nodes}-{seed}"
                deg = float(np.round(rng.normal(10, 0.5), 4))
                comp = float(rng.integers(100, 140))
                write_rows(out, rid, [row(rid, label, nodes, seed, deg, comp)])
                expected.append((label, nodes, deg, comp))
    # a group with a single run: CI undefined
    write_rows(out, "single", [row("single", "random(10)", 1000, 0, 10.5, 400)])
    expected.append(("random(10)", 1000, 10.5, 400.0))
    # a run whose latest attempt failed after an ok one: the ok attempt counts
    write_rows(
        out, "retry-ok", [row("retry-ok", "random(10)", 2000, 0, 11.0, 500, at=100.0, attempt="x1")]
    )
    write_rows(
        out,
        "retry-failed",
        [row("retry-ok", "random(10)", 2000, 0, 0, 0, status="failed", at=200.0, attempt="x2")],
    )
    # the same run committed twice (two copies of a result directory): the latest ok counts
    write_rows(out, "dup-old", [row("dup", "random(10)", 4000, 0, 1.0, 1, at=100.0, attempt="d1")])
    write_rows(
        out, "dup-new", [row("dup", "random(10)", 4000, 0, 12.0, 600, at=300.0, attempt="d2")]
    )
    expected += [("random(10)", 2000, 11.0, 500.0), ("random(10)", 4000, 12.0, 600.0)]
    # a run that only failed, and another experiment in the same directory
    write_rows(
        out, "only-failed", [row("only-failed", "random(10)", 6000, 0, 0, 0, status="failed")]
    )
    write_rows(
        out, "other", [row("other", "SpiderCast(3,0)", 1000, 9, 99.0, 99, experiment="other")]
    )
    manifest_dir = out / "_manifests"
    manifest_dir.mkdir()
    (manifest_dir / "spidercast-fig12.json").write_text(
        json.dumps(
            {
                "experiment": "spidercast-fig12",
                "kind": "build",
                "reference": "spidercast-fig12",
                "swept_columns": ["nodes"],
                "report": {"metrics": [], "by": [], "pivot": None},
                # the 16 run ids of the experiment plus 4 runs not swept yet
                "runs": [{"run_id": rid} for rid in RUN_IDS]
                + [{"run_id": f"todo-{i}"} for i in range(4)],
            }
        )
    )
    frame = pd.DataFrame(expected, columns=["label", "nodes", "avg_degree", "topic_components"])
    return out, frame


def test_load_rows_keeps_one_attempt_per_run(spark, dataset):
    out, _ = dataset
    df = load_rows(spark, out).toPandas()
    assert df["run_id"].is_unique
    assert len(df) == 12 + 1 + 1 + 1 + 1 + 1
    by_id = df.set_index("run_id")
    assert by_id.loc["retry-ok", "status"] == "ok" and by_id.loc["retry-ok", "avg_degree"] == 11.0
    assert by_id.loc["dup", "avg_degree"] == 12.0
    assert by_id.loc["only-failed", "status"] == "failed"


def test_aggregate_matches_pandas(spark, dataset):
    out, frame = dataset
    rep = aggregate(
        spark,
        out,
        "spidercast-fig12",
        by=["label", "nodes"],
        metrics=["avg_degree", "topic_components"],
    )
    assert rep.by == ["label", "nodes"]
    assert (rep.runs_ok, rep.runs_failed, rep.runs_expected) == (15, 1, 20)
    got = rep.table.set_index(["label", "nodes", "metric"])
    for metric in ("avg_degree", "topic_components"):
        want = frame.groupby(["label", "nodes"])[metric].agg(["mean", "std", "count"])
        assert len(got.xs(metric, level="metric")) == len(want)
        for (label, nodes), w in want.iterrows():
            g = got.loc[(label, nodes, metric)]
            assert g["n"] == w["count"]
            assert g["mean"] == pytest.approx(w["mean"], rel=1e-12)
            if w["count"] < 2:
                assert math.isnan(g["ci95"])
            else:
                half = stats.t.ppf(0.975, w["count"] - 1) * w["std"] / math.sqrt(w["count"])
                assert g["ci95"] == pytest.approx(half, rel=1e-9)


def test_default_grouping_and_metrics_come_from_the_manifest(spark, dataset):
    out, _ = dataset
    rep = aggregate(spark, out, "spidercast-fig12")
    assert rep.by == ["label", "nodes"]
    assert rep.metrics == ["avg_degree", "topic_components"]
    spider = rep.table[
        (rep.table["label"] == "SpiderCast(3,0)") & (rep.table["metric"] == "avg_degree")
    ]
    assert spider["n"].tolist() == [3, 3]


def test_paper_values_are_printed_beside_ours(spark, dataset):
    out, _ = dataset
    rep = aggregate(
        spark,
        out,
        "spidercast-fig12",
        by=["label", "scenario.workload.nodes"],
        metrics=["avg_degree"],
    )
    t = rep.table.set_index(["label", "nodes"])
    assert t.loc[("SpiderCast(3,0)", 1000), "paper"] == 10.81
    assert t.loc[("similarity(10,0)", 2000), "paper"] == 10.07
    assert t.loc[("random(10)", 4000), "paper"] == 10.34
    md = render(rep, "markdown")
    assert "| paper" in md and "10.81" in md
    pivot = render(rep, "markdown", pivot="nodes")
    assert "nodes=1000" in pivot and "(10.81)" in pivot
    assert re.search(r"\| SpiderCast\(3,0\) +\| \d+\.\d\d ± \d+\.\d\d \(10\.81\)", pivot)
    assert "| RingPT" not in pivot
    csv = render(rep, "csv")
    assert csv.splitlines()[0] == "label,nodes,metric,mean,ci95,n,paper"
    records = json.loads(render(rep, "json"))
    assert {r["label"] for r in records} == {"SpiderCast(3,0)", "similarity(10,0)", "random(10)"}


def test_report_errors_are_clear(spark, dataset, tmp_path):
    out, _ = dataset
    with pytest.raises(HedgerowError, match="--by colour: no such result column"):
        aggregate(spark, out, "spidercast-fig12", by=["colour"])
    with pytest.raises(HedgerowError, match="--metric hit_ratio: no such metric"):
        aggregate(spark, out, "spidercast-fig12", metrics=["hit_ratio"])  # declared, not here
    with pytest.raises(HedgerowError, match="--metric avg_degre: unknown metric 'avg_degre'; "
                       "nearest: avg_degree"):
        aggregate(spark, out, "spidercast-fig12", metrics=["avg_degre"])
    with pytest.raises(
        HedgerowError, match="no rows of experiment 'nope'; found: other, spidercast-fig12"
    ):
        aggregate(spark, out, "nope")
    with pytest.raises(HedgerowError, match="no result rows"):
        aggregate(spark, tmp_path, "x")


def test_cli_report(spark, dataset):
    from click.testing import CliRunner

    from hedgerow.cli import cli

    out, _ = dataset
    res = CliRunner().invoke(
        cli,
        [
            "report",
            str(out),
            "--experiment",
            "spidercast-fig12",
            "--metric",
            "avg_degree",
            "--format",
            "csv",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0] == "label,nodes,metric,mean,ci95,n,paper" and len(lines) == 1 + 7
    res = CliRunner().invoke(
        cli, ["report", str(out), "--experiment", "spidercast-fig12", "--by", "nope"]
    )
    assert res.exit_code == 2 and "--by nope: no such result column" in res.output


def test_ci95_halfwidth():
    assert ci95_halfwidth(2.0, 4) == pytest.approx(stats.t.ppf(0.975, 3) * 2.0 / 2.0)
    assert math.isnan(ci95_halfwidth(1.0, 1))


def test_pivot_metric_lays_out_groups_by_metrics():
    """``pivot: metric``: one row per group, one column per metric (the head-to-head table)."""
    import pandas as pd

    from hedgerow.pipeline.report import Report, render

    table = pd.DataFrame(
        [
            {"label": "a", "metric": "x", "mean": 1.0, "ci95": 0.1, "n": 3},
            {"label": "a", "metric": "y", "mean": 2.0, "ci95": 0.2, "n": 3},
            {"label": "b", "metric": "x", "mean": 3.0, "ci95": 0.3, "n": 3},
        ]
    )
    rep = Report("e", ["label"], ["x", "y"], table, 6, 0, 6)
    text = render(rep, "markdown", pivot="metric")
    rows = [
        [c.strip() for c in ln.strip("|").split("|")]
        for ln in text.splitlines()
        if ln.startswith("|")
    ]
    assert rows[0] == ["label", "x", "y"]
    assert rows[2] == ["a", "1.00 ± 0.10", "2.00 ± 0.20"]
    assert rows[3] == ["b", "3.00 ± 0.30", ""]


def test_local_engine_gives_the_spark_numbers(spark, dataset):
    """The in-process engine (pandas) and Spark SQL: same groups, counts and numbers."""
    out, _ = dataset
    for kw in ({}, {"by": ["label", "nodes"], "metrics": ["avg_degree", "topic_components"]}):
        on_spark = aggregate(spark, out, "spidercast-fig12", **kw)
        local = aggregate(None, out, "spidercast-fig12", **kw)
        assert (local.by, local.metrics) == (on_spark.by, on_spark.metrics)
        assert (local.runs_ok, local.runs_failed, local.runs_expected) == (15, 1, 20)
        assert (on_spark.runs_ok, on_spark.runs_failed) == (15, 1)
        a, b = local.table, on_spark.table
        assert a[[*local.by, "metric", "n"]].astype(str).equals(
            b[[*local.by, "metric", "n"]].astype(str)
        )
        np.testing.assert_allclose(a["mean"], b["mean"], rtol=1e-12)
        np.testing.assert_allclose(a["ci95"], b["ci95"], rtol=1e-9)
        assert render(local, "markdown") == render(on_spark, "markdown")


def test_by_and_paper_key_find_a_scenario_run_setting():
    """``--by adaptive`` and a reference keyed by ``adaptive`` use the ``run_adaptive`` column."""
    from hedgerow.pipeline.report import _ref_column, _resolve_by

    cols = ["label", "run_adaptive", "epoch", "wasted_latency_mean_ms"]
    assert _resolve_by(["label", "adaptive"], cols) == ["label", "run_adaptive"]
    assert _ref_column("adaptive", ["label", "run_adaptive"]) == "run_adaptive"
    assert _ref_column("nodes", ["label", "nodes"]) == "nodes"
    assert _ref_column("rt", ["label"]) is None


def test_both_engines_and_the_figures_keep_the_same_attempt(spark, tmp_path):
    """Spark's window, the local engine and the figures' reader pick the same rows."""
    from hedgerow.figures.tidy import load_results
    from hedgerow.pipeline.report import load_rows_local

    def attempt(rid, att, status, at, rows=2):
        return [{**row(rid, "random(10)", 1000, i, 10.0 + i, 100, status=status, at=at,
                       attempt=att), "epoch": i} for i in range(rows)]  # fmt: skip

    cases = {
        "ok-then-failed": [("x1", "ok", 100.0), ("x2", "failed", 200.0)],
        "two-ok": [("y1", "ok", 100.0), ("y2", "ok", 300.0)],
        "two-failed": [("z1", "failed", 100.0), ("z2", "failed", 50.0)],
        "tie": [("t2", "ok", 100.0), ("t1", "ok", 100.0)],
        "tie-failed": [("u9", "failed", 5.0), ("u3", "failed", 5.0)],
    }
    for rid, attempts in cases.items():
        for att, status, at in attempts:
            write_rows(tmp_path, f"{rid}-{att}", attempt(rid, att, status, at))
    want = {("ok-then-failed", "x1"), ("two-ok", "y2"), ("two-failed", "z1"), ("tie", "t1"),
            ("tie-failed", "u3")}  # fmt: skip
    on_spark = load_rows(spark, tmp_path).toPandas()
    for df in (on_spark, load_rows_local(tmp_path), load_results(tmp_path)):
        assert set(zip(df["run_id"], df["attempt_id"], strict=True)) == want
        assert len(df) == 2 * len(want)
