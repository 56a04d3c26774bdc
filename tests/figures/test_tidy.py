"""The reporting derivations, written once in figures/tidy.py: best attempt, 95% CI, over runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hedgerow.figures.tidy import (
    best_attempt,
    ci95,
    ci95_halfwidth,
    group_stats,
    over_runs,
    summarise,
)


@pytest.fixture
def rows() -> pd.DataFrame:
    """Two labels; run a has 3 epochs, b 2, c 1 (label y); one missing value."""
    return pd.DataFrame({
        "run_id": ["a", "a", "a", "b", "b", "c"],
        "status": "ok",
        "label": ["x", "x", "x", "x", "x", "y"],
        "epoch": [0, 1, 2, 0, 1, 0],
        "deg": [1.0, 2.0, 6.0, 10.0, None, 7.0],
    })


def test_over_runs_averages_each_run_first(rows):
    x = {"label": "x"}
    assert over_runs(rows, "deg", where=x) == pytest.approx((3.0 + 10.0) / 2)
    assert over_runs(rows, "deg", epochs="first", where=x) == pytest.approx(5.5)
    # b's last epoch has no value: only a's counts
    assert over_runs(rows, "deg", epochs="last", where=x) == 6.0
    assert over_runs(rows, "deg", epochs=2, where=x) == pytest.approx((4.0 + 10.0) / 2)
    assert over_runs(rows, "deg", reduce="runs", where=x).to_dict() == {"a": 3.0, "b": 10.0}
    assert over_runs(rows, "deg", reduce="rows", where=x).tolist() == [1.0, 2.0, 6.0, 10.0]
    assert over_runs(rows, "deg", where={"label": ["x", "y"]}) == pytest.approx(20 / 3)
    assert math.isnan(over_runs(rows, "deg", where={"nodes": 5}))
    assert over_runs(rows, "nope", reduce="rows") is None
    with pytest.raises(ValueError, match="reduce"):
        over_runs(rows, "deg", reduce="median")
    with pytest.raises(ValueError, match="epochs"):
        over_runs(rows, "deg", epochs=0)


def test_group_stats_counts_runs_or_rows(rows):
    runs = group_stats(rows, ["label"], ["deg"]).set_index("label")
    assert runs.loc["x", "n0"] == 2 and runs.loc["x", "mean0"] == pytest.approx(6.5)
    assert runs.loc["x", "sd0"] == pytest.approx(np.std([3.0, 10.0], ddof=1))
    pooled = group_stats(rows, ["label"], ["deg"], per_run_first=False).set_index("label")
    assert pooled.loc["x", "n0"] == 4 and pooled.loc["x", "mean0"] == pytest.approx(19 / 4)
    assert math.isnan(runs.loc["y", "sd0"])


def test_summarise_is_the_numpy_mean_and_t_interval_over_runs(rows):
    t = summarise(rows, ["label"], ["deg"]).set_index("label")
    per_run = np.array([3.0, 10.0])
    assert t.loc["x", "mean"] == per_run.mean()  # bit for bit
    half = stats.t.ppf(0.975, 1) * per_run.std(ddof=1) / math.sqrt(2)
    assert t.loc["x", "ci95"] == half
    assert math.isnan(t.loc["y", "ci95"]) and t.loc["y", "n"] == 1
    # a group without any value of the metric is left out
    assert summarise(rows.assign(deg=[None] * 5 + [1.0]), ["label"], ["deg"])["label"].tolist() \
        == ["y"]


def test_one_interval():
    assert ci95([1.0, 2.0, None, 3.0]) == ci95_halfwidth(1.0, 3)
    assert ci95_halfwidth(2.0, 4) == pytest.approx(stats.t.ppf(0.975, 3) * 2.0 / 2.0)
    assert math.isnan(ci95([4.0])) and math.isnan(ci95_halfwidth(float("nan"), 5))


def test_best_attempt_latest_ok_then_latest_then_first_id():
    df = pd.DataFrame({
        "run_id": ["r", "r", "s", "s", "t", "t"],
        "attempt_id": ["r1", "r2", "s1", "s2", "t2", "t1"],
        "status": ["ok", "failed", "failed", "failed", "ok", "ok"],
        "finished_at": [1.0, 2.0, 1.0, 3.0, 5.0, 5.0],
    })
    assert best_attempt(df)["attempt_id"].tolist() == ["r1", "s2", "t1"]
