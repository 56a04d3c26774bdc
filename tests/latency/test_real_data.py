"""Latency models from real data: WonderNetwork cities, the Perigee matrix, matrix files."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from hedgerow.data import data_path
from hedgerow.errors import DataError, ParameterError
from hedgerow.latency import (
    cities,
    fill_missing_one_hop,
    from_matrix_file,
    latency_model,
    perigee_matrix,
    symmetrise_pings,
)
from hedgerow.model import RngStreams


@pytest.fixture(scope="module")
def city_model():
    return cities()


@pytest.mark.data
class TestCities:
    def test_complete_symmetric_zero_diagonal(self, city_model):
        m = city_model.matrix()
        assert city_model.n_nodes == 246 and m.shape == (246, 246)
        assert np.isfinite(m).all()
        assert np.array_equal(m, m.T)
        assert (np.diag(m) == 0).all()
        off = m[np.triu_indices(246, 1)]
        # documented range of one-way delays: 0.34 .. 262.3 ms (RTT 0.67 .. 540 ms halved)
        assert off.min() == pytest.approx(0.34425) and off.max() == pytest.approx(262.2775)
        assert 60 < np.median(off) < 80

    def test_counts(self, city_model):
        info = city_model.info
        assert info["n_measured_pairs"] == 30_107
        assert info["n_filled_pairs"] == 28
        assert 30_107 + 28 == 246 * 245 // 2
        assert sorted(info["server_ids"]) == info["server_ids"]
        assert not set(info["server_ids"]) & {292, 293, 294, 295}
        assert city_model.labels[1] == "Melbourne"
        assert city_model.coords[1].tolist() == [-37.7833, 144.9667]

    def test_measured_pair_is_mean_of_half_rtts(self, city_model):
        pings = pd.read_csv(
            data_path("wondernetwork-pings-2020-07-19", "pings-2020-07-19-2020-07-20-grouped.csv")
        )
        ids = city_model.info["server_ids"]
        a, b = ids.index(0), ids.index(1)
        ab = pings[(pings.source == 0) & (pings.destination == 1)].avg.item()
        ba = pings[(pings.source == 1) & (pings.destination == 0)].avg.item()
        assert city_model.matrix()[a, b] == pytest.approx((ab / 2 + ba / 2) / 2)

    def test_filled_pair_follows_the_one_hop_rule(self, city_model):
        # San Jose - Chisinau is never measured; it is filled with the best relay city
        ids = city_model.info["server_ids"]
        names = list(city_model.labels)
        i, j = names.index("SanJose"), names.index("Chisinau")
        pings = pd.read_csv(
            data_path("wondernetwork-pings-2020-07-19", "pings-2020-07-19-2020-07-20-grouped.csv")
        )
        pairs = set(zip(pings.source, pings.destination, strict=True))
        assert (ids[i], ids[j]) not in pairs and (ids[j], ids[i]) not in pairs
        m = city_model.matrix()
        # recompute from measured legs only: pairs measured in at least one direction
        measured = np.zeros((246, 246), dtype=bool)
        pos = {s: k for k, s in enumerate(ids)}
        for s, d in pairs:
            if s in pos and d in pos:
                measured[pos[s], pos[d]] = measured[pos[d], pos[s]] = True
        legs = [m[i, k] + m[k, j] for k in range(246) if measured[i, k] and measured[k, j]]
        assert m[i, j] == pytest.approx(min(legs))
        assert 0 < m[i, j] < 262.3

    def test_round_trip_option(self, city_model):
        rtt = cities(one_way=False)
        np.testing.assert_allclose(rtt.matrix()[:5, :5] / 2, city_model.matrix()[:5, :5])

    def test_subset_by_name(self):
        m = latency_model("cities", 50, RngStreams(1).stream("latency"))
        again = latency_model("cities", 50, RngStreams(1).stream("latency"))
        assert m.n_nodes == 50 and m.labels == again.labels
        with pytest.raises(ParameterError, match="246 nodes"):
            latency_model("cities", 300, RngStreams(1).stream("latency"))
        with pytest.raises(ParameterError, match="needs an rng"):
            latency_model("cities", 50, None)


@pytest.mark.data
class TestPerigee:
    def test_matrix(self):
        m = perigee_matrix()
        d = m.matrix()
        assert m.n_nodes == 1000 and d.shape == (1000, 1000)
        assert np.array_equal(d, d.T) and (np.diag(d) == 0).all()
        assert d.max() == 985.0 and np.median(d) == 60.0
        assert (d % 5 == 0).all()

    def test_by_name(self):
        assert latency_model("perigee", 100, RngStreams(2).stream("l")).n_nodes == 100


class TestMissingData:
    def test_missing_data_folder_raises_data_error(self, tmp_path, monkeypatch):
        monkeypatch.setenv("HEDGEROW_DATA", str(tmp_path))
        (tmp_path / "wondernetwork-pings-2020-07-19").mkdir()
        with pytest.raises(DataError, match=r"servers-2020-07-19\.csv"):
            cities()
        with pytest.raises(DataError, match="perigee_latencies_weight1_oneway"):
            perigee_matrix()

    def test_explicit_missing_file(self, tmp_path):
        with pytest.raises(DataError, match=r"nope\.csv"):
            cities(servers_file=tmp_path / "nope.csv", pings_file=tmp_path / "p.csv")


class TestFillRule:
    def test_symmetrise(self):
        m = symmetrise_pings(
            np.array([0, 1, 0, 0, 2]),
            np.array([1, 0, 2, 2, 2]),
            np.array([10.0, 14.0, 8.0, 4.0, 99.0]),
            3,
        )
        # 0-1 both ways: (5 + 7) / 2; 0->2 twice: mean RTT 6 -> 3; 1-2 never; self row dropped
        assert m[0, 1] == m[1, 0] == 6.0
        assert m[0, 2] == m[2, 0] == 3.0
        assert np.isnan(m[1, 2]) and np.diag(m).tolist() == [0.0, 0.0, 0.0]

    def test_fill_uses_measured_legs_only(self):
        nan = np.nan
        d = np.array(
            [
                [0, 1, nan, nan],
                [1, 0, 1, 50],
                [nan, 1, 0, 1],
                [nan, 50, 1, 0],
            ]
        )
        full, k = fill_missing_one_hop(d)
        assert k == 2
        assert full[0, 2] == full[2, 0] == 2.0  # 0-1-2
        # 0-3: 0-1-3 = 51; 0-2-3 would be 3 but 0-2 was filled, not measured
        assert full[0, 3] == full[3, 0] == 51.0
        assert np.array_equal(full, full.T)

    def test_unfillable_pair_raises(self):
        nan = np.nan
        d = np.array([[0, 1, nan], [1, 0, nan], [nan, nan, 0]])
        with pytest.raises(DataError, match=r"\(0, 2\)"):
            fill_missing_one_hop(d)


class TestMatrixFiles:
    def test_whitespace_csv_gzip_and_header(self, tmp_path):
        (tmp_path / "a.txt").write_text("# one-way ms\n0 3 4\n3 0 5\n\n4 5 0\n")
        (tmp_path / "b.csv").write_text("0,3,4\n3,0,5\n4,5,0\n")
        with gzip.open(tmp_path / "c.dat.gz", "wt") as f:
            f.write("3\n0 3 4\n3 0 5\n4 5 0\n")
        for name in ("a.txt", "b.csv", "c.dat.gz"):
            m = from_matrix_file(tmp_path / name)
            assert m.matrix().tolist() == [[0, 3, 4], [3, 0, 5], [4, 5, 0]], name

    @pytest.mark.parametrize(
        ("text", "line", "what"),
        [
            ("0 1\n1 x\n", 2, "'x' is not a number"),
            ("0 1 2\n1 0\n2 1 0\n", 2, "expected 3 values, found 2"),
            ("3\n0 1 2\n1 0 2\n", 3, "needs 3 rows, found 2"),
            ("0 1\n1 0\n1 1\n", 3, "needs 2 rows, found 3"),
            ("# c\n\n0,1\n1,0,\n", 4, "empty value in column 3"),
            ("0 1\n1 0 7\n", 2, "expected 2 values, found 3"),
        ],
    )
    def test_malformed_names_file_and_line(self, tmp_path, text, line, what):
        p = tmp_path / "bad.txt"
        p.write_text(text)
        with pytest.raises(DataError) as err:
            from_matrix_file(p)
        msg = str(err.value)
        assert str(p) in msg and f"line {line}" in msg and what in msg

    def test_negative_value(self, tmp_path):
        p = tmp_path / "neg.txt"
        p.write_text("0 -1\n1 0\n")
        with pytest.raises(DataError, match=r"neg.txt: matrix row 1, column 2"):
            from_matrix_file(p)

    def test_missing_file(self, tmp_path):
        with pytest.raises(DataError, match="missing"):
            from_matrix_file(tmp_path / "nope.txt")
