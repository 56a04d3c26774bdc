"""Synthetic latency models, processing delays and the name registry."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import DataError, ParameterError
from hedgerow.latency import (
    LATENCY_MODELS,
    LatencyModel,
    constant,
    from_matrix,
    latency_model,
    processing_delays,
    unit_square,
)
from hedgerow.model import RngStreams


class TestUnitSquare:
    def test_positions_and_scale(self):
        m = unit_square(200, RngStreams(1).stream("latency"))
        assert m.name == "unit-square" and m.kind == "positions"
        assert m.positions.shape == (200, 2)
        assert (m.positions >= 0).all() and (m.positions < 1).all()
        d = m.matrix()
        assert d.shape == (200, 200) and np.array_equal(d, d.T)
        assert (np.diag(d) == 0).all()
        assert d.max() <= 500.0 * np.sqrt(2)
        # the scale: one unit of distance is 500 ms
        u, v = 3, 17
        assert float(m.delay(u, v)) == pytest.approx(
            500 * np.hypot(*(m.positions[u] - m.positions[v]))
        )
        # mean distance of two uniform points in the unit square is ~0.5214
        iu = np.triu_indices(200, 1)
        assert 0.45 * 500 < d[iu].mean() < 0.6 * 500

    def test_matrix_equals_delay_exactly(self):
        m = unit_square(50, RngStreams(2).stream("latency"), scale_ms=123.0)
        u, v = np.meshgrid(np.arange(50), np.arange(50), indexing="ij")
        assert np.array_equal(m.matrix(), m.delay(u, v))

    def test_seeded(self):
        a = unit_square(10, RngStreams(3).stream("latency")).positions
        b = unit_square(10, RngStreams(3).stream("latency")).positions
        assert np.array_equal(a, b)

    def test_needs_rng(self):
        with pytest.raises(ParameterError, match="rng"):
            unit_square(5, None)


class TestLatencyModel:
    def test_constant(self):
        m = constant(4, 12.5)
        assert m.matrix()[0].tolist() == [0.0, 12.5, 12.5, 12.5]
        assert m.delay([1, 2], [1, 3]).tolist() == [0.0, 12.5]

    def test_from_matrix_and_subset(self):
        m = from_matrix([[0, 1, 2], [1, 0, 3], [2, 3, 0]], name="t", labels=["a", "b", "c"])
        s = m.subset([2, 1])
        assert s.matrix().tolist() == [[0.0, 3.0], [3.0, 0.0]] and s.labels == ("c", "b")

    @pytest.mark.parametrize(
        ("kw", "match"),
        [
            ({"matrix": [[0, -1], [1, 0]]}, "non-negative"),
            ({"matrix": [[0, np.inf], [1, 0]]}, "finite"),
            ({"matrix": np.zeros((3, 3))}, r"\(2, 2\)"),
            ({}, "exactly one"),
            ({"constant_ms": 1.0, "matrix": np.zeros((2, 2))}, "exactly one"),
            ({"constant_ms": -1.0}, "non-negative"),
        ],
    )
    def test_invalid(self, kw, match):
        with pytest.raises(ParameterError, match=match):
            LatencyModel(2, name="x", **kw)

    def test_out_of_range_nodes(self):
        with pytest.raises(ParameterError, match="outside"):
            constant(3, 1.0).delay(0, 3)

    def test_dense_matrix_guard(self):
        m = LatencyModel(100_000, name="big", positions=np.zeros((100_000, 2)))
        with pytest.raises(ParameterError, match="GB"):
            m.matrix()
        assert float(m.delay(0, 99_999)) == 0.0


class TestProcessingDelays:
    def test_default_is_goldfish_constant_20ms(self):
        assert processing_delays(5).tolist() == [20.0] * 5

    def test_normal_spread_is_positive(self):
        d = processing_delays(20_000, RngStreams(1).stream("proc"), mean_ms=20, std_ms=10)
        assert d.min() >= 0.01
        assert d.mean() == pytest.approx(20, abs=0.5)

    def test_uniform_has_mean_and_std(self):
        d = processing_delays(
            20_000, RngStreams(1).stream("proc"), std_ms=4.0, distribution="uniform"
        )
        assert d.mean() == pytest.approx(20, abs=0.2) and d.std() == pytest.approx(4, abs=0.2)
        assert d.min() >= 20 - 4 * np.sqrt(3) - 1e-9

    @pytest.mark.parametrize(
        ("kw", "match"),
        [
            ({"distribution": "pareto"}, "allowed: normal, uniform"),
            ({"mean_ms": -1.0}, "mean_ms"),
            ({"floor_ms": 0.0}, "delta_v > 0"),
            ({"std_ms": 1.0}, "need an rng"),
        ],
    )
    def test_invalid(self, kw, match):
        with pytest.raises(ParameterError, match=match):
            processing_delays(3, None, **kw)


class TestRegistry:
    def test_names(self):
        assert LATENCY_MODELS == ("unit-square", "cities", "cities-placed", "perigee", "constant",
                                  "regions")
        rng = RngStreams(0).stream("latency")
        assert latency_model("unit-square", 7, rng, scale_ms=10).scale_ms == 10.0
        assert latency_model("constant", 3, ms=5).constant_ms == 5.0

    def test_unknown_name_lists_allowed(self):
        with pytest.raises(
            ParameterError,
            match="allowed: unit-square, cities, cities-placed, perigee, constant, regions, "
            "file:PATH",
        ):
            latency_model("king", 10)

    def test_unknown_keyword(self):
        with pytest.raises(ParameterError, match="does not take side"):
            latency_model("unit-square", 3, RngStreams(0).stream("l"), side=2)

    def test_constant_needs_ms(self):
        with pytest.raises(ParameterError, match="needs ms"):
            latency_model("constant", 3)

    def test_file_model(self, tmp_path):
        p = tmp_path / "m.txt"
        p.write_text("0 1 2\n1 0 3\n2 3 0\n")
        m = latency_model(f"file:{p}", None)
        assert m.n_nodes == 3 and m.name == f"file:{p}"
        sub = latency_model(f"file:{p}", 2, RngStreams(0).stream("l"))
        assert sub.n_nodes == 2
        with pytest.raises(ParameterError, match="has 3 nodes"):
            latency_model(f"file:{p}", 4, RngStreams(0).stream("l"))
        with pytest.raises(DataError, match="missing"):
            latency_model(f"file:{tmp_path / 'nope.txt'}", None)


def test_cities_placed_puts_any_number_of_nodes_on_the_cities():
    from hedgerow.latency import cities, cities_placed

    base = cities().matrix()
    m = latency_model("cities-placed", 600, RngStreams(1).stream("latency"), local_ms=2.0)
    city = np.asarray(m.info["city"])
    assert m.n_nodes == 600 and city.max() < 246
    a, b = np.flatnonzero(city != city[0])[0], 0
    assert m.delay(a, b) == base[city[a], city[b]]
    same = np.flatnonzero(city == city[0])
    if len(same) > 1:
        assert m.delay(same[0], same[1]) == 2.0
    with pytest.raises(ParameterError, match="needs an rng"):
        cities_placed(10, None)


def test_cities_placed_above_the_dense_limit_keeps_cities_and_the_same_delays(monkeypatch):
    """The groups form of cities-placed gives every pair the dense form's delay, bit for bit."""
    import hedgerow.latency.real as real

    dense = real.cities_placed(2000, np.random.default_rng(5))
    monkeypatch.setattr(real, "MAX_DENSE_BYTES", 0)
    grouped = real.cities_placed(2000, np.random.default_rng(5))
    assert (dense.kind, grouped.kind) == ("matrix", "groups")
    assert grouped.info["city"] == dense.info["city"] and grouped.labels == dense.labels
    rng = np.random.default_rng(1)
    u, v = rng.integers(0, 2000, 50_000), rng.integers(0, 2000, 50_000)
    u[:100] = v[:100]  # a node and itself: 0 ms
    assert np.array_equal(grouped.delay(u, v), dense.delay(u, v))
    assert np.array_equal(grouped.matrix(), dense.matrix()) and grouped.is_symmetric()
    sub = grouped.subset([5, 3, 9])
    assert sub.kind == "groups" and np.array_equal(sub.matrix(), dense.subset([5, 3, 9]).matrix())


def test_cities_placed_at_100000_nodes_needs_no_dense_matrix():
    import hedgerow.latency.real as real

    m = real.cities_placed(100_000, np.random.default_rng(1))
    assert m.kind == "groups" and m.group_matrix.shape == (246, 246)
    assert float(m.delay(0, 0)) == 0.0 and m.delay(np.arange(10), np.arange(1, 11)).shape == (10,)


def test_a_groups_model_refuses_bad_groups():
    with pytest.raises(ParameterError, match="come together"):
        LatencyModel(2, name="g", group=np.array([0, 1]))
    with pytest.raises(ParameterError, match=r"outside 0\.\.1"):
        LatencyModel(2, name="g", group=np.array([0, 2]), group_matrix=np.zeros((2, 2)))
    with pytest.raises(ParameterError, match="must be square"):
        LatencyModel(2, name="g", group=np.array([0, 1]), group_matrix=np.zeros((2, 3)))
