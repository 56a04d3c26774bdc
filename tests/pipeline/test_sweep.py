"""Spark sweeps: completion, skips, failures, kill + restart, equality with in-process runs."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hedgerow.experiment import parse_spec, run_one
from hedgerow.experiment.rows import is_metric_column
from hedgerow.pipeline.store import (
    finished_run_ids,
    read_manifest,
    row_files,
    rows_dir,
    stale_run_ids,
)
from hedgerow.pipeline.sweep import run_sweep

pytestmark = pytest.mark.spark

TINY = {
    "experiment": "tiny-sweep",
    "scenario": {
        "protocol": "spidercast",
        "params": {"kg": 3, "kr": 0},
        "workload": {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"},
        "diameter": True,
    },
    "sweep": {
        "grid": {"scenario.workload.nodes": [60, 90]},
        "seeds": [0, 1],
        "variants": [
            {"label": "SpiderCast(3,0)", "protocol": "spidercast", "params": {"kg": 3, "kr": 0}},
            {"label": "RingPT", "protocol": "ringpt", "params": {}},
        ],
    },
}

#: columns that measure time or identify an attempt, not the run's result
TIMING = {"build_seconds", "wall_seconds", "cpu_seconds", "peak_rss_mib", "finished_at",
          "attempt_id", "host"}


def read_all(out) -> pd.DataFrame:
    return pd.concat([pq.read_table(f).to_pandas() for f in row_files(out)], ignore_index=True)


@pytest.fixture(scope="module")
def tiny_spec():
    return parse_spec(TINY)


@pytest.fixture(scope="module")
def swept(spark, tiny_spec, tmp_path_factory):
    """The tiny spec swept once on the shared session."""
    out = tmp_path_factory.mktemp("tiny")
    result = run_sweep(tiny_spec, out, spark=spark, progress=False)
    return out, result


def test_small_sweep_completes_with_one_ok_row_per_run(swept, tiny_spec):
    out, result = swept
    runs = tiny_spec.expand()
    assert (result.total, result.skipped, result.executed, result.ok, result.failed) == (
        8,
        0,
        8,
        8,
        0,
    )
    df = read_all(out)
    assert len(df) == 8 and df["run_id"].is_unique
    assert set(df["run_id"]) == {r.run_id for r in runs}
    assert (df["status"] == "ok").all()
    assert set(df["label"]) == {"SpiderCast(3,0)", "RingPT"}
    assert sorted(df["nodes"].unique()) == [60, 90]
    assert (df.loc[df["label"] == "RingPT", "partitioned_topics"] == 0).all()
    assert df["param_kg"].dropna().unique().tolist() == ["3"]
    manifest = read_manifest(out, "tiny-sweep")
    assert manifest["swept_columns"] == ["nodes"] and len(manifest["runs"]) == 8


def test_rerun_performs_no_new_runs(spark, swept, tiny_spec):
    out, _ = swept
    files = {f.name: f.stat().st_mtime_ns for f in row_files(out)}
    again = run_sweep(tiny_spec, out, spark=spark, progress=False)
    assert (again.executed, again.skipped, again.total) == (0, 8, 8)
    assert {f.name: f.stat().st_mtime_ns for f in row_files(out)} == files


def test_same_run_gives_identical_metrics_in_process_and_in_spark(swept, tiny_spec):
    out, _ = swept
    df = read_all(out).set_index("run_id")
    compared = 0
    for run in tiny_spec.expand():
        [local] = run_one(run)
        spark_row = df.loc[run.run_id]
        metrics = [k for k in local if is_metric_column(k) and k not in TIMING]
        assert {
            "avg_degree",
            "max_degree",
            "topic_components",
            "max_topic_diameter",
            "avg_topic_diameter",
            "control_messages",
        } <= set(metrics)
        for k in metrics:
            a, b = local[k], spark_row[k]
            if isinstance(a, float) and math.isnan(a):
                assert math.isnan(b)
            else:
                assert a == b, (run.label, k, a, b)
            compared += 1
        assert spark_row["spec_json"] == local["spec_json"]
    assert compared >= 8 * 10


def test_failing_run_becomes_a_failed_row_and_the_others_complete(spark, tmp_path):
    data = {
        **TINY,
        "experiment": "with-failure",
        "sweep": {
            "grid": {"scenario.workload.nodes": [60, 90]},
            "seeds": [0],
            "variants": [
                {"label": "RingPT", "protocol": "ringpt", "params": {}},
                # the spec checks parameters at load, the workload only when the run builds
                # it: 100 links per node need more than 60 or 90 nodes
                {"label": "broken", "protocol": "similarity", "params": {"similar": 100}},
            ],
        },
    }
    spec = parse_spec(data)
    result = run_sweep(spec, tmp_path, spark=spark, progress=False)
    assert (result.ok, result.failed) == (2, 2)
    df = read_all(tmp_path)
    assert len(df) == 4
    failed = df[df["status"] == "failed"]
    assert set(failed["label"]) == {"broken"}
    assert failed["error"].str.startswith("ParameterError: similarity: 100 links per node").all()
    assert failed["avg_degree"].isna().all()
    assert (df.loc[df["label"] == "RingPT", "status"] == "ok").all()
    # failed runs are not "finished": a rerun tries them again (and they fail again)
    again = run_sweep(spec, tmp_path, spark=spark, progress=False)
    assert (again.skipped, again.executed, again.failed) == (2, 2, 2)
    assert len(read_all(tmp_path)) == 4


def test_dying_worker_becomes_a_failed_row(spark, tmp_path):
    spec = parse_spec({**TINY, "experiment": "crash", "sweep": {**TINY["sweep"], "seeds": [0]}})
    victim = spec.expand()[0].run_id

    def run_or_die(payload):
        import os

        from hedgerow.experiment import run_one as real

        if payload["run_id"] == victim:
            os._exit(3)  # the Python worker process dies mid-task
        return real(payload)

    result = run_sweep(spec, tmp_path, spark=spark, progress=False, run_fn=run_or_die)
    assert (result.executed, result.ok, result.failed) == (4, 3, 1)
    df = read_all(tmp_path).set_index("run_id")
    assert df.loc[victim, "status"] == "failed"
    assert df.loc[victim, "error"].startswith(
        "WorkerCrashed: the Python process running this run died"
    )


def test_killed_sweep_restarts_with_exactly_one_row_per_run(spark, tiny_spec, tmp_path):
    runs = tiny_spec.expand()
    seen = []

    def kill_after_three(run, rows):
        seen.append(run.run_id)
        if len(seen) == 3:
            raise KeyboardInterrupt  # the driver is killed after 3 committed runs

    with pytest.raises(KeyboardInterrupt):
        run_sweep(tiny_spec, tmp_path, spark=spark, progress=False, on_result=kill_after_three)
    committed = finished_run_ids(tmp_path)
    assert committed == set(seen) and len(committed) == 3
    # a file being written when the driver died is never read as a result
    (rows_dir(tmp_path) / ".tmp-deadbeef-x.parquet").write_bytes(b"PAR1 partial")
    restarted = run_sweep(tiny_spec, tmp_path, spark=spark, progress=False)
    assert (restarted.skipped, restarted.executed, restarted.ok) == (3, 5, 5)
    df = read_all(tmp_path)
    assert len(df) == len(runs) == 8
    assert df["run_id"].is_unique and set(df["run_id"]) == {r.run_id for r in runs}
    assert (df["status"] == "ok").all()


def test_max_runs_then_complete(spark, tiny_spec, tmp_path):
    first = run_sweep(tiny_spec, tmp_path, spark=spark, progress=False, max_runs=3)
    assert (first.executed, len(row_files(tmp_path))) == (3, 3)
    rest = run_sweep(tiny_spec, tmp_path, spark=spark, progress=False)
    assert (rest.skipped, rest.executed) == (3, 5)
    df = read_all(tmp_path)
    assert len(df) == 8 and df["run_id"].is_unique


def test_cli_sweep_and_dry_run(spark, tmp_path):
    from click.testing import CliRunner

    from hedgerow.cli import cli

    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(
        "experiment: cli-tiny\n"
        "scenario:\n  protocol: ringpt\n  diameter: false\n"
        "  workload: {nodes: 40, topics: 8, subs: 2}\n"
        "sweep: {seeds: [0, 1]}\n"
    )
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(cli, ["sweep", str(spec_file), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "2 runs, 0 already done, 2 run now (2 ok, 0 failed)" in res.output
    res = runner.invoke(cli, ["sweep", str(spec_file), "--out", str(out), "--dry-run"])
    assert res.exit_code == 0 and res.output.count("  done  ") == 2
    res = runner.invoke(cli, ["report", str(out), "-e", "cli-tiny", "--epochs", "0,-1"])
    assert res.exit_code == 2 and "epochs exist only for kind: run" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiment: b\nscenario: {protocol: ringpt, workload: {popularity: zipf3}}\n")
    res = runner.invoke(cli, ["sweep", str(bad), "--out", str(out)])
    assert res.exit_code == 2
    assert "scenario.workload.popularity: 'zipf3' is not one of" in res.output


def test_rows_made_by_other_code_are_reported_and_redone_on_request(spark, tmp_path):
    """Every row carries the code fingerprint; a resumed sweep names finished runs made by
    other code and --redo-stale runs them again, the new rows replacing the old."""
    from click.testing import CliRunner

    from hedgerow.cli import cli
    from hedgerow.fingerprint import code_fingerprint
    from hedgerow.pipeline.report import aggregate

    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(
        "experiment: stale-tiny\n"
        "scenario:\n  protocol: ringpt\n  diameter: false\n"
        "  workload: {nodes: 40, topics: 8, subs: 2}\n"
        "sweep: {seeds: [0, 1, 2]}\n"
    )
    out = tmp_path / "out"
    runner = CliRunner()
    sweep = ["sweep", str(spec_file), "--out", str(out), "--no-progress"]
    assert runner.invoke(cli, sweep).exit_code == 0
    assert set(read_all(out)["code"]) == {code_fingerprint()}
    # pretend two of the three runs were made by an older version
    for f in row_files(out)[:2]:
        t = pq.read_table(f)
        t = t.set_column(t.schema.get_field_index("code"), "code", pa.array(["0ld"] * len(t)))
        pq.write_table(t, f)
    assert len(stale_run_ids(out, code_fingerprint())) == 2
    res = runner.invoke(cli, sweep)
    assert res.exit_code == 0
    assert "3 runs, 3 already done (2 by other code), 0 run now" in res.output
    assert "warning: 2 finished runs" in res.output and "--redo-stale" in res.output
    res = runner.invoke(cli, [*sweep, "--redo-stale"])
    assert res.exit_code == 0
    assert "3 runs, 1 already done, 2 run now (2 ok, 0 failed)" in res.output
    assert stale_run_ids(out, code_fingerprint()) == set()
    df = read_all(out)  # one file per run: the new rows replaced the old ones
    assert len(df) == 3 and set(df["code"]) == {code_fingerprint()}
    rep = aggregate(spark, out, "stale-tiny", by=["label"], metrics=["avg_degree"])
    assert rep.table["n"].tolist() == [3]


def test_run_kind_sweep_gives_one_row_per_epoch(spark, tmp_path):
    from hedgerow.pipeline.report import aggregate

    spec = parse_spec(
        {
            "experiment": "topiary-tiny",
            "scenario": {
                "kind": "run",
                "protocol": "topiary",
                "run": {"name": "unit-square", "topics": 10, "epochs": 3, "messages": 50},
            },
            "sweep": {"seeds": [0, 1]},
        }
    )
    result = run_sweep(spec, tmp_path, spark=spark, progress=False)
    assert (result.executed, result.ok) == (2, 2)
    df = read_all(tmp_path)
    assert len(df) == 2 * 3 and (df["status"] == "ok").all()
    assert sorted(df["epoch"].tolist()) == [0, 0, 1, 1, 2, 2]
    assert set(df["scenario"]) == {"unit-square"} and set(df["run_epochs"]) == {"3"}
    # identical to the in-process run, epoch by epoch
    run = spec.expand()[0]
    local = {r["epoch"]: r for r in run_one(run)}
    mine = df[df["run_id"] == run.run_id].set_index("epoch")
    for epoch, row in local.items():
        for k in ("receive_rate", "delay_mean_ms", "relay_copies"):
            assert mine.loc[epoch, k] == row[k]
    rep = aggregate(spark, tmp_path, "topiary-tiny", metrics=["receive_rate"])
    assert rep.by == ["label", "epoch"]
    assert rep.table["n"].tolist() == [2, 2, 2]
    # first and last epoch only; -1 counts back from each run's last epoch
    rep = aggregate(spark, tmp_path, "topiary-tiny", metrics=["receive_rate"], epochs=[0, -1])
    assert rep.table["epoch"].tolist() == [0, 2] and rep.table["n"].tolist() == [2, 2]
    last = df[df["epoch"] == 2]["receive_rate"].mean()
    assert rep.table["mean"].iloc[1] == pytest.approx(last)


def test_churn_kind_sweep_gives_one_row_per_snapshot(spark, tmp_path):
    from hedgerow.pipeline.report import aggregate

    spec = parse_spec(
        {
            "experiment": "churn-tiny",
            "reference": "spidercast-fig11",
            "scenario": {
                "kind": "churn",
                "protocol": "spidercast",
                "workload": {"nodes": 150, "topics": 10, "subs": 3},
                "churn": {"lifetime": 20, "duration": 40, "snapshot_every": 20},
                "diameter": False,
            },
            "sweep": {"grid": {"scenario.churn.lifetime": [10, 20]}, "seeds": [0]},
        }
    )
    result = run_sweep(spec, tmp_path, spark=spark, progress=False)
    assert (result.executed, result.ok) == (2, 2)
    df = read_all(tmp_path)
    assert len(df) == 2 * 2 and (df["status"] == "ok").all()
    assert sorted(df["epoch"].tolist()) == [0, 0, 1, 1]
    assert sorted(df["time_s"].tolist()) == [20.0, 20.0, 40.0, 40.0]
    assert set(df["churn_lifetime"]) == {"10.0", "20.0"}
    assert not is_metric_column("churn_lifetime")
    # identical to the in-process run, snapshot by snapshot
    run = spec.expand()[0]
    local = {r["epoch"]: r for r in run_one(run)}
    mine = df[df["run_id"] == run.run_id].set_index("epoch")
    for epoch, row in local.items():
        for k in ("avg_degree", "partitioned_topics", "messages_per_op", "online"):
            assert mine.loc[epoch, k] == row[k]
    rep = aggregate(spark, tmp_path, "churn-tiny", metrics=["avg_degree"], epochs=[-1])
    assert rep.table["n"].tolist() == [1, 1]


def test_churn_spec_errors_name_the_key():
    from hedgerow.errors import SpecError

    base = {
        "experiment": "bad",
        "scenario": {"kind": "churn", "protocol": "spidercast", "churn": {"lifetime": 10}},
    }
    parse_spec(base)
    for scen, match in [
        ({"protocol": "ringpt"},
         r"scenario.protocol: ringpt does not run under churn; churn protocols \(maintained"),
        ({"protocol": "topiary"}, r"scenario.protocol: topiary does not run under churn"),
        ({"params": {"kg": -1}}, r"scenario.params.kg: spidercast: parameter kg must be >= 0"),
        ({"churn": None}, r"scenario.churn: kind churn needs scenario.churn"),
        ({"churn": {"lifetime": -1}}, r"scenario.churn.lifetime"),
        ({"churn": {"lifetime": 5, "speed": 2}}, r"scenario.churn.speed"),
        ({"params": {"membership": 0.5}}, r"scenario.params.membership: churn runs use full"),
    ]:
        bad = {**base, "scenario": {**base["scenario"], **scen}}
        with pytest.raises(SpecError, match=match):
            parse_spec(bad)
    with pytest.raises(SpecError, match=r"scenario.churn: only used by kind churn"):
        parse_spec(
            {"experiment": "b", "scenario": {"protocol": "ringpt", "churn": {"lifetime": 1}}}
        )


@pytest.mark.data
def test_omen_event_rows_are_identical_in_process_and_in_spark(spark, tmp_path):
    """OMen's per-event rows (``churn.scenario``): same seed, same rows on Spark as in-process.

    Every column but the clocks (``*_seconds`` and the attempt's bookkeeping) must be equal:
    the event, its type and node, the coordinator, shadow and backup sizes, edges added,
    degrees, partitioned topics and messages by kind.
    """
    from hedgerow.pipeline.inputs import ensure_inputs
    from hedgerow.scenarios.events import CHURN_SCENARIOS

    ensure_inputs(CHURN_SCENARIOS["fb1k-burst"].inputs())
    spec = parse_spec({
        "experiment": "omen-events",
        "scenario": {"kind": "churn", "protocol": "omen",
                     "params": {"rho": 2.0, "warmup_cycles": 10},
                     "churn": {"scenario": "fb1k-burst", "events": 8}, "seed": 3},
    })
    result = run_sweep(spec, tmp_path, spark=spark, progress=False)
    assert (result.executed, result.ok) == (1, 1)
    df = read_all(tmp_path).sort_values("epoch").reset_index(drop=True)
    local = run_one(spec.expand()[0])
    assert df["epoch"].tolist() == [r["epoch"] for r in local] == list(range(1, 9))
    clocks = {k for k in local[0] if k.endswith("_seconds")} | TIMING
    compared = sorted(set(local[0]) - clocks)
    assert {"type", "node", "coordinator", "max_degree", "partitioned_topics"} <= set(compared)
    for i, row in enumerate(local):
        for k in compared:
            mine, theirs = df.loc[i, k], row[k]
            if theirs is None or (isinstance(theirs, float) and math.isnan(theirs)):
                # a missing value (an event still under way) is None in-process, NaN in Parquet
                assert mine is None or math.isnan(mine), k
            else:
                assert mine == theirs, (i, k, mine, theirs)


def test_runs_that_do_not_fit_together_wait_for_memory_instead_of_failing(spark, tmp_path):
    """Two runs that each fit the machine alone but not together: the second to check its
    estimate is deferred (it allocated nothing), then runs once the first has ended."""
    from hedgerow.admission import room_bytes
    from hedgerow.pipeline.sweep import memory_ledger

    room = room_bytes(memory_ledger())
    if room is None:
        pytest.skip("this system does not say how much memory is available")
    need = 0.6 * room  # one fits, two do not
    spec = parse_spec({**TINY, "experiment": "admission", "sweep": {**TINY["sweep"],
                                                                     "seeds": [0]}})

    def heavy(payload):
        import time

        from hedgerow.experiment import run_one as real
        from hedgerow.params import check_memory

        check_memory("a heavy stand-in", need)  # reserves, or raises MemoryDeferred
        t0 = time.time()
        time.sleep(1.5)
        rows = real(payload)
        for r in rows:
            r["metric_t0"], r["metric_t1"] = t0, time.time()
        return rows

    result = run_sweep(spec, tmp_path, spark=spark, progress=False, run_fn=heavy)
    assert (result.executed, result.ok, result.failed) == (4, 4, 0)
    assert result.deferrals >= 1
    assert "deferred until memory was released" in result.summary()
    df = read_all(tmp_path).sort_values("metric_t0")
    # never two heavy runs at once
    assert (df["metric_t0"].to_numpy()[1:] >= df["metric_t1"].to_numpy()[:-1]).all()
    # the same rows as a sweep without the stand-in's reservations
    assert set(df["status"]) == {"ok"}


def test_without_admission_each_run_is_checked_alone(spark, tmp_path):
    from hedgerow.admission import LEDGER_ENV

    spec = parse_spec({**TINY, "experiment": "no-admission",
                       "sweep": {**TINY["sweep"], "seeds": [0]}})

    def ledger_seen(payload):
        import os

        from hedgerow.experiment import run_one as real

        rows = real(payload)
        for r in rows:
            r["metric_ledger"] = os.environ.get(LEDGER_ENV, "")
        return rows

    run_sweep(spec, tmp_path / "off", spark=spark, progress=False, run_fn=ledger_seen,
              admission=False)
    run_sweep(spec, tmp_path / "on", spark=spark, progress=False, run_fn=ledger_seen)
    assert set(read_all(tmp_path / "off")["metric_ledger"]) == {""}
    assert set(read_all(tmp_path / "on")["metric_ledger"]) != {""}
