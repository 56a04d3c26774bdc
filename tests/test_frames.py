"""Results to pandas in one call."""

from __future__ import annotations

import math

import pytest

import hedgerow as hr
from hedgerow.errors import ParameterError


def test_compare_rows_are_one_frame():
    rows = hr.compare(["spidercast", "random-graph"], "unit-square", seed=1, nodes=80,
                      epochs=1, diameter=False)
    df = hr.to_frame(rows)
    assert list(df["protocol"]) == ["spidercast", "random-graph"]
    assert list(df.columns[:2]) == ["protocol", "world"]
    assert df["receive_rate"].tolist() == [r["receive_rate"] for r in rows]


def test_a_simulation_gives_one_row_per_epoch():
    res = hr.simulate("topiary", "unit-square", seed=1, nodes=60, epochs=3, messages=50)
    df = hr.to_frame(res)
    assert len(df) == 3 and df["epoch"].tolist() == [0, 1, 2]


def test_missing_keys_are_missing_values():
    df = hr.to_frame([{"a": 1}, {"b": 2.0}])
    assert list(df.columns) == ["a", "b"] and math.isnan(df["b"][0])


@pytest.mark.parametrize("bad", ["rows", {"a": 1}, [1, 2]])
def test_anything_else_is_a_parameter_error(bad):
    with pytest.raises(ParameterError, match="to_frame takes rows"):
        hr.to_frame(bad)
