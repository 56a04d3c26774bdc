"""Ingest: BFS samples of social graphs and the synthetic follower graph (Spark)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from hedgerow.cli.ingest import ingest
from hedgerow.data import data_path
from hedgerow.errors import DataError, ParameterError
from hedgerow.pipeline.ingest.follower_graph import (
    degree_bounds,
    fit_truncated_exponent,
    generate_follower_graph,
    ingest_follower_graph,
    truncated_mean,
)
from hedgerow.pipeline.ingest.social import FACEBOOK, REED98, bfs_sample, ingest_social, read_edges
from hedgerow.workloads.social import degree_ccdf, load_instance

pytestmark = [pytest.mark.spark, pytest.mark.data]


def _edges(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        return [tuple(map(int, line.split())) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def reed_sample(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("reed") / "s300"
    meta = ingest_social(spark, out, size=300, edges=data_path(*REED98), seeds=3, seed=5)
    return out, meta


def test_bfs_sample_keeps_all_edges_among_sampled_users(reed_sample):
    out, meta = reed_sample
    users = pd.read_parquet(out / "users").sort_values("node")
    subs = pd.read_parquet(out / "subscriptions")
    assert len(users) == 300 == meta["counts"]["users"]
    assert users["seed"].sum() == 3 + 3 * meta["counts"]["restarts"]
    ids = users["user"].to_numpy()
    assert np.all(np.diff(ids) > 0)  # nodes numbered by ascending user id
    inside = set(ids.tolist())
    expected = set()
    for u, v in _edges(data_path(*REED98)):
        if u in inside and v in inside and u != v:
            expected |= {(u, v), (v, u)}
    got = set(zip(ids[subs["node"]].tolist(), ids[subs["topic"]].tolist(), strict=True))
    assert got == expected
    # BFS: every non-seed user has a neighbour one level closer to the seeds
    level = dict(zip(ids.tolist(), users["level"].tolist(), strict=True))
    nbr = {}
    for a, b in expected:
        nbr.setdefault(a, set()).add(b)
    for u, lv in level.items():
        if not users.loc[users["user"] == u, "seed"].item():
            assert any(level[w] == lv - 1 for w in nbr[u])


def test_bfs_sample_is_seeded(spark):
    edges = read_edges(spark, data_path(*REED98))

    def users(seed):
        sample, _ = bfs_sample(spark, edges, size=100, seeds=3, seed=seed)
        return sorted(r["user"] for r in sample.collect())

    first = users(5)
    assert len(first) == 100
    assert users(5) == first and users(6) != first


def test_fb1k_instance_and_whole_graph(spark, tmp_path):
    fb = tmp_path / "fb1k"
    meta = ingest_social(spark, fb, size=1000, seed=1)
    inst = load_instance(fb)
    assert inst.n_nodes == inst.n_topics == 1000
    assert meta["counts"]["graph_users"] == 4039 and meta["counts"]["edge_lines"] == 88_234
    m = inst.matrix.toarray()
    assert np.array_equal(m, m.T)  # friendship: friends subscribe to each other
    assert len(inst.sub_topics) == meta["counts"]["subscriptions"]
    with pytest.raises(ParameterError, match="larger than the graph"):
        ingest_social(spark, tmp_path / "x", size=10_000, edges=data_path(*REED98))
    whole = tmp_path / "reed_all"
    meta = ingest_social(spark, whole, size="all", edges=data_path(*REED98), seed=1)
    assert meta["counts"]["users"] == 962 and meta["counts"]["subscriptions"] == 2 * 18_812
    ccdf = pd.read_csv(whole / "ccdf.csv")
    ref = degree_ccdf(load_instance(whole))
    assert np.allclose(
        ccdf.sort_values(["kind", "degree"])["ccdf"], ref.sort_values(["kind", "degree"])["ccdf"]
    )


# ------------------------------------------------------------------ synthetic follower graph
def test_degree_bounds_hit_the_mean():
    for n in (10_000, 100_000, 1_000_000):
        a, b = degree_bounds(n, 1.65, 88.0, 0.15)
        assert a >= 1.0 and b <= 0.15 * (n - 1) + 1e-6
        assert truncated_mean(1.65, a, b) == pytest.approx(88.0, rel=1e-9)
    with pytest.raises(ParameterError):
        degree_bounds(100, 1.65, 88.0, 0.15)


def test_follower_graph_statistics(spark, tmp_path):
    out = tmp_path / "fg"
    meta = ingest_follower_graph(spark, out, users=800, seed=3, mean=12.0)
    subs = pd.read_parquet(out / "subscriptions")
    assert not (subs["node"] == subs["topic"]).any()
    assert not subs.duplicated().any()
    c = meta["counts"]
    assert c["users"] == 800 and c["subscriptions"] == len(subs)
    assert c["mean_subscriptions"] == pytest.approx(12.0, rel=0.08)
    out_deg = subs.groupby("node").size().value_counts()
    alpha = fit_truncated_exponent(out_deg.index, out_deg.to_numpy(), 10, out_deg.index.max())
    assert alpha == pytest.approx(1.65, abs=0.12)
    assert c["followees"]["fitted_exponent"] == pytest.approx(alpha)


def test_follower_graph_is_seeded(spark):
    def links(seed):
        df, _ = generate_follower_graph(spark, users=200, seed=seed, mean=5.0)
        return sorted((r["node"], r["topic"]) for r in df.collect())

    first = links(3)
    assert links(3) == first and links(4) != first


# ------------------------------------------------------------------ bad input
def _no_output(out):
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


@pytest.mark.parametrize(
    ("line", "match"),
    [("12 34 56\n", r"line 7: expected 2 columns, found 3"),
     ("12 x4\n", r"line 7: column 2 \(v\) is not an integer: 'x4'")],
)  # fmt: skip
def test_edges_bad_rows(spark, tmp_path, line, match):
    lines = data_path(*REED98).read_text().splitlines(keepends=True)[:50]
    lines[6] = line
    f = tmp_path / "e.edges"
    f.write_text("".join(lines))
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"e\.edges, " + match):
        ingest_social(spark, out, size=5, edges=f)
    _no_output(out)


def test_edges_truncated_gzip_through_the_cli(spark, tmp_path):
    blob = data_path(*FACEBOOK).read_bytes()
    gz = tmp_path / "fb.txt.gz"
    gz.write_bytes(blob[: len(blob) // 2])
    out = tmp_path / "out"
    res = CliRunner().invoke(
        ingest, ["social", "--edges", str(gz), "--size", "10", "--out", str(out)]
    )
    assert res.exit_code == 2
    msg = res.output.strip().splitlines()
    assert len(msg) == 1 and msg[0].startswith("error: ")
    assert "fb.txt.gz, line " in msg[0] and "gzip stream is truncated" in msg[0]
    _no_output(out)


def test_ccdf_command_writes_csv_and_png(reed_sample, tmp_path):
    out, _ = reed_sample
    res = CliRunner().invoke(
        ingest, ["ccdf", str(out), "--label", "Reed 300", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    table = pd.read_csv(tmp_path / "ccdf.csv")
    assert set(table["kind"]) == {"followers", "followees"}
    assert (tmp_path / "ccdf.png").read_bytes()[:4] == b"\x89PNG"
