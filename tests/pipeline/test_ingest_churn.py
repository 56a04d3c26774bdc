"""Ingest: Google 2011 machine events and smartphone sessions -> join/leave events (Spark)."""

from __future__ import annotations

import csv
import gzip
import io

import numpy as np
import pytest

from hedgerow.data import data_path
from hedgerow.errors import DataError
from hedgerow.pipeline.ingest.churn import GOOGLE, SMARTPHONE, ingest_churn
from hedgerow.scenarios.traces import JOIN, LEAVE, load_events, load_nodes

pytestmark = [pytest.mark.spark, pytest.mark.data]


@pytest.fixture(scope="module")
def google_1k(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("google") / "g1k"
    meta = ingest_churn(spark, out, source="google", nodes=1000, seed=1)
    return out, meta


def test_google_1k_counts_match_the_raw_events(google_1k):
    out, meta = google_1k
    nodes = load_nodes(out)
    ev = load_events(out)
    assert len(nodes) == 1000 == meta["counts"]["nodes"]
    machine = dict(zip(nodes["machine_id"], nodes["node"], strict=True))
    adds, removes, start = 0, 0, set()
    raw = []
    with gzip.open(data_path(*GOOGLE), "rt") as fh:
        for row in csv.reader(fh):
            m = int(row[1])
            if m in machine and row[2] in ("0", "1"):
                adds += row[2] == "0"
                removes += row[2] == "1"
                raw.append((int(row[0]) / 1e6, machine[m], JOIN if row[2] == "0" else LEAVE))
                if row[0] == "0" and row[2] == "0":
                    start.add(m)
    assert (adds, removes) == (int((ev["event"] == JOIN).sum()), int((ev["event"] == LEAVE).sum()))
    assert (adds, removes) == (meta["counts"]["joins"], meta["counts"]["leaves"])
    assert start == set(machine)  # sampled among machines present at trace start
    assert np.all(np.diff(ev["time_s"]) >= 0)
    raw.sort(key=lambda r: r[0])  # stable: file order within a timestamp
    assert ev.tolist() == raw


def test_google_sample_is_seeded(spark, tmp_path, google_1k):
    out, _ = google_1k
    ingest_churn(spark, tmp_path / "a", source="google", nodes=1000, seed=1)
    ingest_churn(spark, tmp_path / "b", source="google", nodes=1000, seed=2)
    ids = load_nodes(out)["machine_id"].tolist()
    assert load_nodes(tmp_path / "a")["machine_id"].tolist() == ids
    assert load_nodes(tmp_path / "b")["machine_id"].tolist() != ids


def _expand(lines):
    """Independent reading of the session format: one node per line, aligned at 0."""
    out = []
    for node, line in enumerate(lines):
        f = line.split()
        state, t, lens = int(f[1]), 0, [int(x) for x in f[4:]]
        for i, ln in enumerate(lens):
            if state == 1 and ln > 0:
                out.append((t, node, 2 * i, JOIN))
                if i < len(lens) - 1:
                    out.append((t + ln, node, 2 * i + 1, LEAVE))
            t += ln
            state = 1 - state
    out.sort()
    return [(t / 1000.0, node, e) for t, node, _, e in out]


def test_smartphone_sessions_expand_exactly(spark, tmp_path):
    with gzip.open(data_path(*SMARTPHONE), "rt") as fh:
        lines = [next(fh) for _ in range(40)]
    f = tmp_path / "s.txt"
    f.write_text("".join(lines))
    out = tmp_path / "out"
    meta = ingest_churn(spark, out, source="smartphone", trace=f, nodes=None)
    ev = load_events(out)
    assert ev.tolist() == _expand(lines)
    assert meta["counts"]["nodes"] == 40


# ------------------------------------------------------------------ bad input
def _no_output(out):
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


def _google_copy(tmp_path, n=300):
    with gzip.open(data_path(*GOOGLE), "rt") as fh:
        return [next(fh) for _ in range(n)]


@pytest.mark.parametrize(
    ("source", "line", "match"),
    [
        ("google", "5,6,0,abc,0.5\n", r"line 9: expected 6 columns, found 5"),
        ("google", "5,6,0,abc,0.5,zz\n", r"line 9: column 6 \(memory\) is not a number: 'zz'"),
        ("smartphone", "u 1 1402358400000\n", r"line 9: expected at least 5 columns, found 3"),
        ("smartphone", "u 1 14023584x0000 2 5 6\n", r"line 9: column 3 \(start_epoch_ms\)"),
    ],
)
def test_bad_rows(spark, tmp_path, source, line, match):
    if source == "google":
        lines = _google_copy(tmp_path)
    else:
        with gzip.open(data_path(*SMARTPHONE), "rt") as fh:
            lines = [next(fh) for _ in range(30)]
    lines[8] = line
    f = tmp_path / "t.txt"
    f.write_text("".join(lines))
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"t\.txt, " + match):
        ingest_churn(spark, out, source=source, trace=f, nodes=None)
    _no_output(out)


@pytest.mark.parametrize("source", ["google", "smartphone"])
def test_truncated_gzip(spark, tmp_path, source):
    if source == "google":
        blob = data_path(*GOOGLE).read_bytes()
    else:
        with gzip.open(data_path(*SMARTPHONE), "rt") as fh:
            text = "".join(next(fh) for _ in range(200))
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
            gz.write(text.encode())
        blob = buf.getvalue()
    f = tmp_path / "t.gz"
    f.write_bytes(blob[: len(blob) // 2])
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"t\.gz, line \d+: gzip stream is truncated"):
        ingest_churn(spark, out, source=source, trace=f, nodes=None)
    _no_output(out)
