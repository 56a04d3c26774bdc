"""Every pipeline failure is one line naming what to do, found before any run starts."""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import hedgerow
from hedgerow.cli import cli
from hedgerow.errors import HedgerowError
from hedgerow.experiment import parse_spec
from hedgerow.pipeline import store
from hedgerow.pipeline.session import check_java
from hedgerow.pipeline.store import row_files, rows_dir, write_rows
from hedgerow.pipeline.sweep import _run_partition, run_sweep

SPEC = (
    "experiment: fail-tiny\n"
    "scenario:\n  protocol: ringpt\n  diameter: false\n"
    "  workload: {nodes: 40, topics: 8, subs: 2}\n"
    "sweep: {seeds: [0, 1, 2, 3]}\n"
)


@pytest.fixture
def spec_file(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SPEC)
    return p


def _one_error_line(res) -> str:
    lines = [ln for ln in res.output.strip().splitlines() if ln]
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    return lines[0]


def _fake_java(tmp_path: Path, version: str) -> Path:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2019-01-15\' >&2\n')
    java.chmod(0o755)
    return home


def test_java_older_than_17_or_missing(tmp_path, monkeypatch, spec_file):
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "11.0.2")))
    with pytest.raises(HedgerowError, match=r"^Java 17\+ is needed; found 11.0.2 \("):
        check_java()
    res = CliRunner().invoke(cli, ["sweep", str(spec_file), "--out", str(tmp_path / "o")])
    assert "Java 17+ is needed; found 11.0.2" in _one_error_line(res)
    assert not row_files(tmp_path / "o")  # nothing ran, nothing was written as failed
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(HedgerowError, match=r"Java 17\+ is needed; found none \(JAVA_HOME="):
        check_java()
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "8", "1.8.0_292")))
    with pytest.raises(HedgerowError, match=r"found 1.8.0_292"):
        check_java()


def test_bad_master(tmp_path, spec_file):
    out = str(tmp_path / "o")
    line = _one_error_line(CliRunner().invoke(cli, ["sweep", str(spec_file), "--out", out,
                                                    "--master", "spark//x:7077"]))  # fmt: skip
    assert "--master spark//x:7077: not a Spark master URL" in line
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = _one_error_line(CliRunner().invoke(cli, ["sweep", str(spec_file), "--out", out,
                                                    "--master", f"spark://127.0.0.1:{port}"]))
    assert f"--master spark://127.0.0.1:{port}: cannot connect" in line
    assert "is the standalone master running there?" in line


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only /sys (Linux)")
def test_read_only_out(spec_file):
    line = _one_error_line(CliRunner().invoke(cli, ["sweep", str(spec_file), "--out",
                                                    "/sys/hedgerow-results"]))  # fmt: skip
    # the one boundary for user paths names the folder and why, before any work
    assert line.startswith("error: /sys/hedgerow-results: cannot write here")
    assert "Permission denied" in line or "Read-only" in line


def test_full_out_is_refused_before_any_run(tmp_path, monkeypatch, spec_file):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10 * 2**30, 10 * 2**30, 2**20))
    line = _one_error_line(CliRunner().invoke(cli, ["sweep", str(spec_file), "--out",
                                                    str(tmp_path / "o")]))  # fmt: skip
    assert "only 1 MiB free on its device (a sweep needs at least 64 MiB)" in line
    assert not row_files(tmp_path / "o")


def test_disk_full_while_committing_leaves_no_tmp_file(tmp_path, monkeypatch):
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "fsync", full)
    with pytest.raises(HedgerowError, match=r"r1.parquet: no space left on the device"):
        write_rows(tmp_path, "r1", [{"run_id": "r1", "status": "ok"}])
    monkeypatch.setattr(store.os, "fsync", real_fsync)
    assert list(rows_dir(tmp_path).iterdir()) == []


def test_spec_file_not_utf8(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes(SPEC.replace("ringpt", "ringpt  # caf\xe9").encode("latin-1"))
    line = _one_error_line(CliRunner().invoke(cli, ["sweep", str(p), "--out", str(tmp_path)]))
    assert line == f"error: {p}:3: not UTF-8 text (byte 0xe9); save the file as UTF-8"


class _FakeContext:
    """A SparkContext whose JVM dies after ``alive`` jobs (Py4J then refuses connections)."""

    defaultParallelism = 1

    def __init__(self, alive: int) -> None:
        self.alive = alive
        self.jobs = 0

    def getConf(self):
        return {"spark.task.cpus": "1"}

    def parallelize(self, payloads, n):
        return list(payloads)

    def setJobGroup(self, *a, **k):
        pass

    def cancelJobGroup(self, *a):
        pass

    def runJob(self, rdd, func, parts):
        self.jobs += 1
        if self.jobs > self.alive:
            raise ConnectionRefusedError(111, "Connection refused")
        return list(func(iter([rdd[parts[0]]])))


class _FakeSpark:
    def __init__(self, alive: int) -> None:
        self.sparkContext = _FakeContext(alive)


def test_runs_that_never_started_are_not_written_as_failed(tmp_path):
    spec = parse_spec(__import__("yaml").safe_load(SPEC))
    with pytest.raises(HedgerowError) as e:
        run_sweep(spec, tmp_path, spark=_FakeSpark(alive=2), progress=False, concurrency=1)
    msg = str(e.value)
    assert msg.startswith("Spark stopped during the sweep (")
    assert "2 runs committed, 2 not finished and not written; rerun the same command" in msg
    statuses = [pq.read_table(f)["status"].to_pylist() for f in row_files(tmp_path)]
    assert statuses == [["ok"], ["ok"]]
    assert _run_partition  # the fake runs the real partition function


def test_resumed_sweep_names_a_corrupt_file_and_goes_on(spark, tmp_path, spec_file):
    from hedgerow.experiment import load_spec

    spec = load_spec(spec_file)
    first = run_sweep(spec, tmp_path, spark=spark, progress=False, max_runs=2)
    victim = row_files(tmp_path)[0]
    victim.write_bytes(b"garbage")  # a run's own file damaged
    (rows_dir(tmp_path) / "notes.parquet").write_text("hello")
    seen: list[str] = []
    again = run_sweep(spec, tmp_path, spark=spark, progress=False, warn=seen.append)
    assert first.executed == 2 and (again.skipped, again.executed, again.ok) == (1, 3, 3)
    assert len(seen) == 2 and all("skipped" in w for w in seen)
    assert any(w.startswith(f"{victim}: not a readable Parquet file") for w in seen)
    ids = [pq.read_table(f)["run_id"][0].as_py() for f in row_files(tmp_path)
           if f.name != "notes.parquet"]  # fmt: skip
    assert sorted(ids) == sorted(r.run_id for r in spec.expand())


@pytest.mark.spark
def test_corrupt_trace_file_is_one_line(spark, tmp_path):
    trace = tmp_path / "sessions.txt.gz"
    data = gzip.compress(b"".join(b"u%d 1 1402358400000 2 5 6\n" % i for i in range(5000)))
    trace.write_bytes(data[: len(data) // 2])  # cut mid-stream
    res = CliRunner().invoke(cli, ["ingest", "churn", "--source", "smartphone", "--trace",
                                   str(trace), "--nodes", "10", "--out", str(tmp_path / "o")])
    line = _one_error_line(res)
    assert str(trace) in line and "gzip stream is truncated or corrupt" in line


def _cli_env() -> dict[str, str]:
    src = str(Path(hedgerow.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.pop("SPARK_LOCAL_IP", None)
    return env


def _run_cli(cmd: list[str]) -> tuple[str, list[str]]:
    """Run a CLI process that must succeed; its whole output and the lines Spark/log4j wrote."""
    res = subprocess.run(cmd, env=_cli_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    text = res.stdout + res.stderr
    noisy = [ln for ln in text.splitlines() if any(w in ln for w in ("WARN", "log4j", "Warning"))]
    return text, noisy


@pytest.mark.spark
@pytest.mark.parametrize("verbose", [False, True])
def test_sweep_output_is_quiet_unless_verbose(tmp_path, spec_file, verbose):
    """By default only Hedgerow's lines; Spark's go to OUT/_logs (--verbose: to the terminal)."""
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "hedgerow.cli.spark_submit", str(spec_file), "--out", str(out),
           "--max-runs", "1", "--master", "local[1]", "--no-progress",
           *(["--verbose"] if verbose else [])]
    text, noisy = _run_cli(cmd)
    logs = list((out / "_logs").glob("sweep-*.log")) if (out / "_logs").exists() else []
    if verbose:
        assert noisy and not logs
    else:
        assert noisy == [], text
        assert [ln.split(":")[0] for ln in text.splitlines()] == ["fail-tiny", "fail-tiny"]
        assert len(logs) == 1 and "log4j" in logs[0].read_text()
    assert json.loads((out / "_lock").read_text() or "{}") == {}  # released


def test_ingest_options_are_checked_before_the_jvm(tmp_path, monkeypatch):
    import time

    import hedgerow.pipeline.session as session

    def no_spark(*a, **k):
        raise AssertionError("a JVM was started for a bad option")

    monkeypatch.setattr(session, "get_spark", no_spark)
    cases = [
        (["follower-graph", "--users", "1000", "--exponent", "2.5"],
         "exponent must be in (1, 2) for this generator, got 2.5"),
        (["churn", "--trace", str(tmp_path / "missing.gz")], "--trace file missing:"),
        (["social", "--size", "10", "--master", "lokal"], "--master lokal: not a Spark master"),
    ]  # fmt: skip
    for args, msg in cases:
        t0 = time.perf_counter()
        res = CliRunner().invoke(cli, ["ingest", *args, "--out", str(tmp_path / "o")])
        assert msg in _one_error_line(res)
        assert time.perf_counter() - t0 < 2.0


@pytest.mark.spark
@pytest.mark.parametrize("verbose", [False, True])
def test_ingest_output_is_quiet_unless_verbose(tmp_path, verbose):
    """`hedgerow ingest`: Spark's lines go to a log in _logs/ beside --out unless --verbose.

    The smallest ingest job (a 200-user follower graph, no input file) keeps the JVM's share of
    the test's time small; every ingest command goes through the same quiet/verbose switch.
    """
    out = tmp_path / "follower-graph"
    code = "from hedgerow.cli import main; main()"
    cmd = [sys.executable, "-c", code, "ingest", "follower-graph", "--users", "200", "--mean",
           "10", "--seed", "1", "--out", str(out), "--master", "local[1]",
           *(["--verbose"] if verbose else [])]
    text, noisy = _run_cli(cmd)
    logs = list((tmp_path / "_logs").glob("ingest-follower-graph-*.log"))
    if verbose:
        assert noisy and not logs
    else:
        assert noisy == [], text
        assert len(logs) == 1 and "log4j" in logs[0].read_text()
        assert text.splitlines()[0] == f"wrote {out}" and f"Spark log: {logs[0]}" in text


@pytest.mark.parametrize("verbose", [False, True])
def test_reproduce_sends_spark_output_to_a_log_unless_verbose(tmp_path, monkeypatch, verbose):
    import hedgerow.pipeline.reproduce as rep

    seen = {}

    def fake(name, out, **kw):
        seen.update(kw)
        return {"checks": (0, 0, 0), "values": (0, 0), "figures": {}, "path": "x", "failed": 0,
                "runs": (0, 0)}

    monkeypatch.setattr(rep, "reproduce", fake)
    res = CliRunner().invoke(cli, ["reproduce", "topiary", "--quick", "--out", str(tmp_path),
                                   *(["--verbose"] if verbose else [])])
    assert res.exit_code == 0, res.output
    if verbose:
        assert seen["log_file"] is None
    else:
        log = Path(seen["log_file"])
        assert log.parent == tmp_path / "_logs" and log.name.startswith("reproduce-")


def test_a_partition_run_in_this_process_keeps_no_ledger_after_its_runs(tmp_path, monkeypatch):
    """The sweep's memory ledger is set for each run alone, so a partition that runs in the
    driver's own process (as here) or in a worker that serves another sweep later leaves none."""
    from hedgerow.admission import LEDGER_ENV

    monkeypatch.delenv(LEDGER_ENV, raising=False)
    seen: list[str | None] = []

    def recording(payload):
        from hedgerow.experiment import run_one

        seen.append(os.environ.get(LEDGER_ENV))
        return run_one(payload)

    spec = parse_spec(__import__("yaml").safe_load(SPEC))
    with pytest.raises(HedgerowError):
        run_sweep(spec, tmp_path, spark=_FakeSpark(alive=2), progress=False, concurrency=1,
                  run_fn=recording)
    assert len(seen) == 2 and all(s and s.endswith(".json") for s in seen)
    assert LEDGER_ENV not in os.environ
