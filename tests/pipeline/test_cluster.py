"""Sweeps on a real standalone cluster: a lost worker, a killed driver, two writers at once.

Every test drives ``hedgerow sweep`` (or the documented ``spark-submit`` line)
in a child process against the cluster of the ``standalone_cluster`` fixture,
and checks the results folder the way a reader would: exactly one committed
file and one ``ok`` row per run id, nothing half-written.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from spark_cluster import cluster_env, spark_home

from hedgerow.experiment import load_spec, parse_spec
from hedgerow.pipeline.store import row_files, rows_dir

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"

SMALL = {
    "experiment": "cluster-small",
    "scenario": {
        "protocol": "ringpt",
        "workload": {"nodes": 300, "topics": 30, "subs": 4, "popularity": "rss"},
        "diameter": True,
    },
    "sweep": {"grid": {"scenario.workload.nodes": [300, 400]}, "seeds": [0, 1, 2]},
}


def _sweep_cmd(spec: Path, out: Path, master: str) -> list[str]:
    return [sys.executable, "-m", "hedgerow.cli.spark_submit", str(spec), "--out", str(out),
            "--master", master, "--no-progress"]  # fmt: skip


def _wait_rows(out: Path, n: int, proc: subprocess.Popen, timeout: float = 240.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if len(row_files(out)) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"sweep ended early: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    raise TimeoutError(f"{n} rows not committed in {timeout}s")


def _check_one_ok_row_per_run(out: Path, spec) -> None:
    ids = {r.run_id for r in spec.expand()}
    files = row_files(out)
    assert sorted(f.stem for f in files) == sorted(ids)
    seen = []
    for f in files:
        t = pq.read_table(f).to_pydict()
        seen += t["run_id"]
        assert set(t["status"]) == {"ok"}, (f, t.get("error"))
    assert sorted(seen) == sorted(ids)  # one row per run (kind: build)
    leftovers = [p.name for p in rows_dir(out).iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_spark_submit_quickstart_survives_a_lost_worker(standalone_cluster, tmp_path):
    """The documented spark-submit line; worker 1 (its executor and Python workers) is killed
    after a third of the runs: Spark reruns its tasks on worker 0, no run fails, none doubles."""
    out = tmp_path / "quickstart"
    entry = ROOT / "src" / "hedgerow" / "cli" / "spark_submit.py"
    cmd = [
        str(spark_home() / "bin" / "spark-submit"), "--master", standalone_cluster.url,
        "--deploy-mode", "client", "--conf", "spark.executor.memory=768m",
        "--conf", f"spark.executorEnv.NUMBA_CACHE_DIR={Path.home() / '.cache/hedgerow/numba'}",
        str(entry), str(QUICKSTART), "--out", str(out), "--no-progress",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=cluster_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_rows(out, 4, proc)
        standalone_cluster.kill_worker(1)
        out_text, err = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
        standalone_cluster.start_worker(1)
    # spark-submit passes the Python driver's stderr on through its stdout
    text = out_text + err
    assert proc.returncode == 0, text[-3000:]
    assert "quickstart: 12 runs, 0 already done, 12 run now (12 ok, 0 failed)" in text
    _check_one_ok_row_per_run(out, load_spec(QUICKSTART))


def test_driver_sigkill_then_resume_completes_only_what_is_missing(standalone_cluster, tmp_path):
    standalone_cluster.wait_workers(2)
    spec_file = tmp_path / "small.yaml"
    spec_file.write_text(yaml.safe_dump(SMALL))
    out = tmp_path / "out"
    cmd = _sweep_cmd(spec_file, out, standalone_cluster.url)
    proc = subprocess.Popen(cmd, env=cluster_env(), stderr=subprocess.PIPE, text=True)
    try:
        _wait_rows(out, 2, proc)
    finally:
        proc.send_signal(signal.SIGKILL)  # not Ctrl-C: no handler, no cleanup runs
        proc.wait()
    done = {f.stem for f in row_files(out)}
    for f in row_files(out):  # what a reader sees now is complete
        assert pq.read_table(f).num_rows == 1
    res = subprocess.run(cmd, env=cluster_env(), capture_output=True, text=True, timeout=400)
    assert res.returncode == 0, res.stderr[-3000:]
    missing = 6 - len(done)
    assert f"6 runs, {len(done)} already done, {missing} run now ({missing} ok, 0 failed)" in (
        res.stderr
    )
    _check_one_ok_row_per_run(out, parse_spec(SMALL))


def test_two_sweeps_into_one_folder_one_stops_naming_the_holder(standalone_cluster, tmp_path):
    standalone_cluster.wait_workers(2)
    spec_file = tmp_path / "small.yaml"
    spec_file.write_text(yaml.safe_dump({**SMALL, "sweep": {"seeds": [0, 1]}}))
    out = tmp_path / "shared"
    cmd = _sweep_cmd(spec_file, out, standalone_cluster.url)
    procs = [
        subprocess.Popen(cmd, env=cluster_env(), stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    errs = [p.communicate(timeout=400)[1] for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], errs
    winner, loser = (0, 1) if procs[0].returncode == 0 else (1, 0)
    [line] = [ln for ln in errs[loser].splitlines() if ln.startswith("error:")]
    assert f"is in use by hedgerow sweep pid {procs[winner].pid} on " in line
    assert "since" in line and "UTC" in line
    _check_one_ok_row_per_run(out, parse_spec({**SMALL, "sweep": {"seeds": [0, 1]}}))
