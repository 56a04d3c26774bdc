"""The head-to-head against the number of nodes: rows of the 1K, 10K and 100K tables in one figure.

Small synthetic rows (the columns a sweep writes) stand in for the sweeps, so the
joining of experiments, the world families and the drawing are tested without running one.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hedgerow.figures.papers import HEAD_TO_HEAD, Results
from hedgerow.figures.render import draw_figure, figure_rows, figure_table
from hedgerow.pipeline.reproduce import spec_for

SCALE = next(f for f in HEAD_TO_HEAD.figures if f.id == "scale")

#: (experiment, scenario, nodes) of the synthetic tables
WORLDS = {
    "head-to-head": [("unit-square", 1000), ("cities", 246), ("rss-unit-square", 1000)],
    "head-to-head-10k": [("unit-square", 10000), ("cities-placed", 10000),
                         ("rss-unit-square", 10000)],
    "head-to-head-100k": [("unit-square", 100000), ("cities-placed", 100000),
                          ("rss-unit-square", 100000)],
}


def _rows(experiment: str, labels=("spidercast", "topiary"), seeds=(1, 2)) -> pd.DataFrame:
    """Rows of one table: static protocols one epoch, Topiary three (the last one counts)."""
    rows = []
    for scenario, nodes in WORLDS[experiment]:
        for label in labels:
            for seed in seeds:
                epochs = 3 if label == "topiary" else 1
                for epoch in range(epochs):
                    last = epoch == epochs - 1
                    rows.append({
                        "run_id": f"{experiment}-{scenario}-{label}-{seed}", "epoch": epoch,
                        "label": label, "scenario": scenario, "nodes": nodes, "seed": seed,
                        "status": "ok",
                        # the value encodes the size, so the test can read which rows were used
                        "receive_rate": 1.0 if last else 0.5,
                        "delay_mean_ms": nodes / 10.0 + seed,
                        "avg_degree": 10.0 + (nodes / 1000.0 if label == "spidercast" else 0.0),
                    })
    return pd.DataFrame(rows)


def _results(tmp_path: Path, *experiments: str) -> Results:
    r = Results(tmp_path)
    for e in experiments:
        r._rows[e] = _rows(e)
    return r


def test_the_figure_is_declared_over_the_three_tables():
    assert SCALE.experiment == "head-to-head" and SCALE.x == "nodes"
    assert set(SCALE.also) == {"head-to-head-10k", "head-to-head-100k"}
    assert [m for m, _ in SCALE.panels] == ["receive_rate", "delay_mean_ms", "avg_degree"]
    declared = {e.experiment for e in HEAD_TO_HEAD.experiments}
    assert "head-to-head-10k" in declared  # reproduce runs the 10K sweep, not the 100K one
    assert "head-to-head-100k" not in declared


def test_the_quick_10k_spec_stays_small():
    spec = spec_for(HEAD_TO_HEAD.spec_for("head-to-head-10k"), quick=True)
    runs = spec.expand()
    assert {r.scenario["run"]["nodes"] for r in runs} == {2000}
    assert {r.scenario["seed"] for r in runs} == {1}
    assert "goldfish" not in {r.label for r in runs}
    full = spec_for(HEAD_TO_HEAD.spec_for("head-to-head-10k"), quick=False).expand()
    assert {r.scenario["run"]["nodes"] for r in full} == {10000}
    assert len(runs) < len(full) / 3


def test_rows_of_every_table_held_join_and_cities_are_one_family(tmp_path):
    df = figure_rows(SCALE, _results(tmp_path, *WORLDS))
    assert sorted(df["nodes"].unique()) == [246, 1000, 10000, 100000]
    assert set(df["scenario"]) == {"unit-square", "cities", "rss-unit-square"}
    assert sorted(df.loc[df["scenario"] == "cities", "nodes"].unique()) == [246, 10000, 100000]


def test_the_table_reads_the_last_epoch_and_groups_by_size(tmp_path):
    table = figure_table(SCALE, _results(tmp_path, *WORLDS))
    rate = table[table["metric"] == "receive_rate"]
    assert (rate["mean"] == 1.0).all()  # Topiary's earlier epochs (0.5) are left out
    delay = table[(table["metric"] == "delay_mean_ms") & (table["label"] == "spidercast")]
    got = {(r.scenario, int(r.nodes)): r["mean"] for _, r in delay.iterrows()}
    assert got[("cities", 246)] == pytest.approx(24.6 + 1.5)  # the mean of seeds 1 and 2
    assert got[("unit-square", 100000)] == pytest.approx(10000 + 1.5)
    assert len(got) == 9 and set(delay["n"]) == {2}
    # the spec's variant order: the 1K table's labels first
    assert list(dict.fromkeys(table["label"])) == ["spidercast", "topiary"]


def test_without_the_100k_rows_it_draws_from_1k_and_10k(tmp_path):
    results = _results(tmp_path, "head-to-head", "head-to-head-10k")
    table = figure_table(SCALE, results)
    assert sorted(table["nodes"].unique()) == [246, 1000, 10000]
    fig = draw_figure(SCALE, results, table)
    assert fig is not None and len(fig.axes) >= 3
    # one line per (protocol, family): 2 protocols x 3 families in each panel
    assert all(len(ax.lines) >= 6 for ax in fig.axes[:3])
    assert fig.axes[0].get_xscale() == "symlog"


def test_no_rows_no_figure(tmp_path):
    results = Results(tmp_path)
    assert figure_table(SCALE, results).empty
    assert draw_figure(SCALE, results) is None
