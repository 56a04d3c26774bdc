"""Every declared figure renders from a tiny results folder; each report parses.

The report test is the one CI can run without a browser: every declared
figure has its section with a decodable, non-empty PNG, and every paper
value sits in a row beside our value.
"""

from __future__ import annotations

import base64
import struct
from html.parser import HTMLParser

import pytest

from hedgerow.experiment.reference import REFERENCES
from hedgerow.figures.papers import PAPERS, Results
from hedgerow.figures.render import figure_table
from hedgerow.pipeline.reproduce import write_report


class _Report(HTMLParser):
    """Sections by data-figure, their images and their value rows."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, dict] = {}
        self._sec: str | None = None
        self._row: list[str] | None = None
        self.checks: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-figure" in a:
            self._sec = a["data-figure"]
            self.sections[self._sec] = {"images": [], "rows": []}
        elif tag == "img" and self._sec:
            self.sections[self._sec]["images"].append(a.get("src", ""))
        elif tag == "tr":
            self._row = []
            if a.get("class") == "check":
                self.checks.append(a["data-status"])
        elif tag == "td" and self._row is not None:
            self._row.append(a.get("class") or "")
            if a.get("class") == "paper":
                self._row.append(f"paper={a['data-value']}")

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None and self._sec:
            self.sections[self._sec]["rows"].append(self._row)
            self._row = None
        elif tag == "section":
            self._sec = None


def _png_size(src: str) -> tuple[int, int]:
    assert src.startswith("data:image/png;base64,")
    data = base64.b64decode(src.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def reports(tiny_results):
    """Each paper's quick report, written once from the tiny results."""
    return {name: write_report(p, tiny_results, quick=True) for name, p in PAPERS.items()}


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_every_declared_figure_is_in_the_report(reports, name):
    paper = PAPERS[name]
    summary = reports[name]
    parsed = _Report()
    parsed.feed(summary["path"].read_text(encoding="utf-8"))
    assert set(parsed.sections) == {f.id for f in paper.figures}
    for fig in paper.figures:
        sec = parsed.sections[fig.id]
        assert len(sec["images"]) == 1, fig.id
        w, h = _png_size(sec["images"][0])
        assert w > 300 and h > 200
        png = summary["figures"][fig.id]
        assert png.is_file() and png.with_suffix(".svg").stat().st_size > 1000
    # every check has a mark; none is an error
    assert len(parsed.checks) == sum(len(f.checks) for f in paper.figures)
    assert summary["index"].is_file()


def test_every_paper_value_is_beside_ours(tiny_results, reports):
    results = Results(tiny_results, quick=True)
    for name in ("spidercast",):
        paper = PAPERS[name]
        parsed = _Report()
        parsed.feed((tiny_results / "report" / f"{name}-quick.html").read_text(encoding="utf-8"))
        total = 0
        for fig in paper.figures:
            table = figure_table(fig, results)
            expected = sorted(f"paper={v}" for v in table["paper"].dropna())
            rows = [r for r in parsed.sections[fig.id]["rows"] if any("paper=" in c for c in r)]
            for r in rows:
                assert "ours" in r  # our value in the same row
            assert sorted(c for r in rows for c in r if c.startswith("paper=")) == expected
            total += len(expected)
        # the quick runs cover every tabulated value of Figure 12 at 1K and 2K nodes
        fig12 = REFERENCES["spidercast-fig12"].values["avg_degree"]
        assert total >= 2 * len(fig12)


def test_quick_report_names_its_reduction(reports):
    summary = reports["topiary"]
    text = summary["path"].read_text(encoding="utf-8")
    assert "Quick run" in text and "epochs 40" in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")


def test_settled_verdicts_are_shown_beside_the_computed_mark(tmp_path):
    """A failing check settled as not reproduced or undecidable is marked as settled, not
    counted as failed; one settled as met that fails is a failure; the CLI lists them."""
    from hedgerow.cli.reproduce import settled_line
    from hedgerow.figures.html import paper_report
    from hedgerow.figures.papers import Check, FigureSpec, Paper

    def c(text, ok, settled=None):
        return Check(text, "target", lambda r: (f"value of {text}", ok), "docs/x.md",
                     settled=settled, reason=f"why {text}" if settled else "")

    checks = (c("plain pass", True), c("plain fail", False), c("not run", None),
              c("met holds", True, "met"), c("met broken", False, "met"),
              c("faithful gap", False, "faithful-not-reproduced"),
              c("open question", False, "undecidable"))
    paper = Paper("toy", "Toy paper", "docs/x.md", (),
                  (FigureSpec("f1", "Figure 1", "toy-exp", "bars",
                              panels=(("avg_degree", "degree"),), checks=checks),))
    s = paper_report(paper, Results(tmp_path), tmp_path / "report")
    # met broken and plain fail are failures; the two settled gaps are not
    assert s["checks"] == (2, 2, 1) and s["as_settled"] == 2
    assert [(r["check"], r["verdict"], r["outcome"]) for r in s["settled"]] == [
        ("met holds", "met", "pass"), ("met broken", "met", "regression"),
        ("faithful gap", "faithful-not-reproduced", "as-settled"),
        ("open question", "undecidable", "as-settled")]
    text = s["path"].read_text(encoding="utf-8")

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr" and a.get("class") == "check":
                self.rows.append((a["data-status"], a["data-outcome"], a.get("data-settled")))

    parsed = Rows()
    parsed.feed(text)
    assert parsed.rows == [
        ("pass", "pass", None), ("fail", "fail", None), ("not-run", "not-run", None),
        ("pass", "pass", "met"), ("fail", "regression", "met"),
        ("fail", "as-settled", "faithful-not-reproduced"),
        ("fail", "as-settled", "undecidable")]
    assert "✗ fails, as settled: faithful, not reproduced" in text
    assert "✗ fails, as settled: undecidable" in text
    assert "✗ fail, but settled as met" in text
    assert "<b>faithful, not reproduced</b>: why faithful gap" in text
    assert settled_line(s["settled"][2]) == (
        "  [faithful-not-reproduced] faithful gap: value of faithful gap (fails, as settled)")
    assert "FAILS, though settled as met" in settled_line(s["settled"][1])


@pytest.mark.parametrize("name", ["goldfish", "omen", "vitis"])
def test_the_settled_checks_are_in_each_report(reports, name):
    """Every check with a declared verdict has its row, verdict and outcome in the report."""
    paper = PAPERS[name]
    summary = reports[name]
    declared = [c for f in paper.figures for c in f.checks if c.settled]
    assert declared and [r["check"] for r in summary["settled"]] == [c.text for c in declared]
    text = summary["path"].read_text(encoding="utf-8")
    for c in declared:
        assert f'data-settled="{c.settled}"' in text
    assert all(r["outcome"] in ("pass", "fail", "not-run", "as-settled", "regression")
               for r in summary["settled"])
