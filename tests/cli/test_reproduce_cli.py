"""``hedgerow reproduce --list``, ``--report-only`` and ``hedgerow draw`` from the command line."""

from __future__ import annotations

import networkx as nx
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.figures.papers import PAPERS


def test_list_names_papers_figures_and_times():
    res = CliRunner().invoke(cli, ["reproduce", "--list"])
    assert res.exit_code == 0, res.output
    for p in PAPERS.values():
        assert f"{p.name}: " in res.output
        for f in p.figures:
            assert f.id in res.output
    assert "quick" in res.output and "min" in res.output


def test_unknown_paper_is_one_line_error():
    res = CliRunner().invoke(cli, ["reproduce", "nope", "--report-only"])
    assert res.exit_code == 2
    known = "goldfish, head-to-head, omen, spidercast, topiary, vitis"
    assert f"no paper 'nope'; known: {known}" in res.stderr


def test_draw_writes_png_and_graphml(tmp_path):
    png, gml = tmp_path / "r.png", tmp_path / "r.graphml"
    res = CliRunner().invoke(cli, ["draw", "ringpt", "--scenario", "unit-square", "--nodes", "30",
                                   "--topic", "1", "--out", str(png), "--graphml", str(gml)])
    assert res.exit_code == 0, res.output
    assert png.stat().st_size > 1000
    assert nx.read_graphml(gml).graph["layout"] == "ring"
