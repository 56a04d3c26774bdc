"""Ingest: WonderNetwork city latencies and the Perigee matrix (Spark)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from hedgerow.data import data_path
from hedgerow.errors import DataError
from hedgerow.pipeline.ingest.cities import PINGS_FILE, SERVERS_FILE, ingest_cities
from hedgerow.pipeline.ingest.perigee import MATRIX_FILE, ingest_perigee

pytestmark = [pytest.mark.spark, pytest.mark.data]
WN = "wondernetwork-pings-2020-07-19"


@pytest.fixture(scope="module")
def cities_out(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("cities") / "out"
    meta = ingest_cities(spark, out)
    lat = pd.read_parquet(out / "latency").sort_values(["src", "dst"]).reset_index(drop=True)
    cities = pd.read_parquet(out / "cities").sort_values("idx").reset_index(drop=True)
    return meta, lat, cities


def _matrix(lat: pd.DataFrame, n: int) -> np.ndarray:
    m = np.full((n, n), np.nan)
    m[lat["src"].to_numpy(), lat["dst"].to_numpy()] = lat["ms"].to_numpy()
    return m


def test_cities_matrix_is_complete_and_symmetric(cities_out):
    meta, lat, cities = cities_out
    c = meta["counts"]
    assert len(cities) == 246 and c["cities"] == 246
    assert c["dropped_server_ids"] == [292, 293, 294, 295]
    assert len(lat) == 246 * 246 == c["matrix_rows"]
    m = _matrix(lat, 246)
    assert not np.isnan(m).any()
    assert np.array_equal(m, m.T)
    assert np.all(np.diag(m) == 0) and np.all(m[~np.eye(246, dtype=bool)] > 0)
    # MANIFEST: 30,107 of 30,135 unordered pairs measured -> 28 filled
    assert c["pairs_both_directions"] + c["pairs_one_direction"] == 30_107
    assert c["pairs_filled_by_relay"] == 28 == (lat["source"] == "relay").sum() // 2
    assert c["cities_with_all_pairs_measured"] == 218
    assert cities["server_id"].is_monotonic_increasing
    assert cities.loc[cities["selected"], "name"].nunique() == 11


def test_cities_values_follow_the_rules(cities_out):
    """avg/2, mean of both directions, one-relay fill: recomputed independently with pandas."""
    _, lat, cities = cities_out
    ids = cities["server_id"].to_numpy()
    pos = {int(s): i for i, s in enumerate(ids)}
    p = pd.read_csv(data_path(WN, PINGS_FILE), float_precision="round_trip")
    p = p[p["source"].isin(pos) & p["destination"].isin(pos) & (p["source"] != p["destination"])]
    d = {}
    for s, t, avg in zip(p["source"], p["destination"], p["avg"], strict=True):
        d[(pos[s], pos[t])] = avg / 2
    n = len(ids)
    ref = np.full((n, n), np.nan)
    for i in range(n):
        ref[i, i] = 0.0
    for (i, j), v in d.items():
        w = d.get((j, i))
        ref[i, j] = ref[j, i] = v if w is None else (v + w) / 2
    measured = ref.copy()
    for i, j in np.argwhere(np.isnan(ref)):
        legs = measured[i] + measured[:, j]
        legs[[i, j]] = np.nan
        ref[i, j] = np.nanmin(legs)
    assert np.array_equal(_matrix(lat, n), ref)


def test_cities_equal_the_jvm_free_loader(cities_out):
    """Same fill rule as hedgerow.latency.cities(): the two matrices are identical."""
    from hedgerow.latency import cities

    _, lat, _ = cities_out
    model = cities()
    assert np.array_equal(_matrix(lat, 246), np.asarray(model.matrix()))


def test_perigee_long_table_equals_the_file(spark, tmp_path):
    out = tmp_path / "perigee"
    meta = ingest_perigee(spark, out)
    with gzip.open(data_path("perigee-latency-weight1", MATRIX_FILE), "rt") as fh:
        n = int(fh.readline())
        ref = np.loadtxt(fh)
    lat = pd.read_parquet(out / "latency")
    m = np.zeros((n, n))
    m[lat["src"], lat["dst"]] = lat["ms"]
    assert n == 1000 and len(lat) == n * n == meta["counts"]["cells"]
    assert np.array_equal(m, ref)
    assert meta["counts"]["asymmetric_pairs"] == 0 and meta["counts"]["nonzero_diagonal"] == 0


# ------------------------------------------------------------------ bad input
def _no_output(out):
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


def _small_copies(tmp_path, n_pings=400):
    servers = tmp_path / "servers.csv"
    servers.write_text(data_path(WN, SERVERS_FILE).read_text())
    lines = data_path(WN, PINGS_FILE).read_text().splitlines(keepends=True)[: n_pings + 1]
    pings = tmp_path / "pings.csv"
    pings.write_text("".join(lines))
    return servers, pings


def _corrupt_line(path, line_no, fn):
    lines = path.read_text().splitlines(keepends=True)
    lines[line_no - 1] = fn(lines[line_no - 1])
    path.write_text("".join(lines))


def test_servers_wrong_column_count(spark, tmp_path):
    servers, pings = _small_copies(tmp_path)
    _corrupt_line(servers, 5, lambda s: s.replace(",", "", 1))
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"servers\.csv, line 5: expected 14 columns, found 13"):
        ingest_cities(spark, out, servers=servers, pings=pings)
    _no_output(out)


def test_pings_non_numeric_field(spark, tmp_path):
    servers, pings = _small_copies(tmp_path)
    _corrupt_line(pings, 123, lambda s: ",".join([*s.split(",")[:3], "abc", *s.split(",")[4:]]))
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"pings\.csv, line 123: column 4 \(avg\) is not a number"):
        ingest_cities(spark, out, servers=servers, pings=pings)
    _no_output(out)


def test_pings_truncated_gzip(spark, tmp_path):
    servers, pings = _small_copies(tmp_path, n_pings=20_000)
    blob = gzip.compress(pings.read_bytes())
    gz = tmp_path / "pings.csv.gz"
    gz.write_bytes(blob[: len(blob) // 2])
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"pings\.csv\.gz, line \d+: gzip stream is truncated"):
        ingest_cities(spark, out, servers=servers, pings=gz)
    _no_output(out)


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("3\n0 1 2\n1 0 x\n2 1 0\n", r"line 3: a cell is not a number: 'x'"),
        ("3\n0 1 2\n1 0\n2 1 0\n", r"line 3: expected 3 columns, found 2"),
    ],
)
def test_perigee_bad_rows(spark, tmp_path, body, match):
    f = tmp_path / "m.dat"
    f.write_text(body)
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"m\.dat, " + match):
        ingest_perigee(spark, out, matrix=f)
    _no_output(out)


def test_perigee_truncated_gzip(spark, tmp_path):
    blob = data_path("perigee-latency-weight1", MATRIX_FILE).read_bytes()
    gz = tmp_path / "m.dat.gz"
    gz.write_bytes(blob[: len(blob) // 3])
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"m\.dat\.gz, line \d+: gzip stream is truncated"):
        ingest_perigee(spark, out, matrix=gz)
    _no_output(out)
