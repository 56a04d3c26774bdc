"""Self-contained HTML reports: one file per paper, images embedded, no network needed.

:func:`paper_report` draws every declared figure of a :class:`~hedgerow.figures.papers.Paper`
from a results folder (PNG and SVG beside the page, the PNG embedded as a
``data:`` URI), and writes one page with, per figure: the image, our values
beside the paper's (tolerance and a match mark), the acceptance checks with
pass/fail marks and declared verdicts (met, faithful-not-reproduced,
undecidable), the readings that matter (links into ``docs/``); and the
provenance of every experiment (code fingerprint, spec, seeds, world
fingerprints, run times, failed runs).  :func:`index_page` links the reports;
:func:`table_page` renders any tidy table (``hedgerow report --html``).

Marks are machine-readable for the tests: ``<section class="figure"
data-figure="fig12">``, ``<td class="ours" data-value="...">`` beside
``<td class="paper" data-value="...">``, ``<tr class="check" data-status="pass|fail|not-run">``;
a check with a declared verdict (:attr:`~hedgerow.figures.papers.Check.settled`) also carries
``data-settled="met|faithful-not-reproduced|undecidable"`` and ``data-outcome`` (its
:meth:`~hedgerow.figures.papers.Check.status`: a failure settled as not reproduced or
undecidable is ``as-settled``, not a bare failure; one settled as met is a ``regression``).
"""

from __future__ import annotations

import base64
import html
import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pandas as pd

from hedgerow.figures.papers import Paper, Results, ScoreRun
from hedgerow.figures.render import draw_figure, figure_table

__all__ = ["index_page", "paper_report", "table_page"]

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#1d2327;
background:#fafafa}
header{background:#234;color:#fff;padding:14px 28px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;font-size:13px;opacity:.9}
main{padding:8px 28px 40px;max-width:1500px}
.summary{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;font-size:13px}
.card b{font-size:18px;display:block}
.quick{background:#fff4d6;border:1px solid #e6c35c;padding:8px 14px;border-radius:6px;
font-size:13px;margin:10px 0}
section.figure{background:#fff;border:1px solid #ddd;border-radius:6px;margin:18px 0;
padding:10px 18px}
section.figure h2{font-size:16px;margin:6px 0}
img{max-width:100%;height:auto;border:1px solid #eee}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}th{background:#f0f3f6}
td.l,th.l{text-align:left}
.pass{color:#167a2c;font-weight:bold}.fail{color:#b3261e;font-weight:bold}
.notrun{color:#777}.assettled{color:#8a5a00;font-weight:bold}.outside{background:#fdecea}.within{background:#eaf6ec}
nav a{margin-right:10px;font-size:13px}details{font-size:12px}pre{white-space:pre-wrap}
"""

_MARK = {True: ("pass", "✓ pass"), False: ("fail", "✗ fail"), None: ("not-run", "– not run")}
#: how a settled verdict reads in the report
_VERDICT = {"met": "met", "faithful-not-reproduced": "faithful, not reproduced",
            "undecidable": "undecidable"}


def _mark(status: str, settled: str | None) -> tuple[str, str]:
    """The mark cell's class and text for a check's :meth:`~hedgerow.figures.papers.Check.status`.

    Examples
    --------
    >>> _mark("as-settled", "faithful-not-reproduced")
    ('assettled', '✗ fails, as settled: faithful, not reproduced')
    >>> _mark("regression", "met")
    ('fail', '✗ fail, but settled as met')
    >>> _mark("pass", "undecidable")
    ('pass', '✓ pass (settled as undecidable)')
    """
    if status == "as-settled":
        return "assettled", f"✗ fails, as settled: {_VERDICT[str(settled)]}"
    if status == "regression":
        return "fail", "✗ fail, but settled as met"
    cls, text = _MARK[{"pass": True, "fail": False}.get(status)]
    if settled and settled != "met" and status == "pass":
        text += f" (settled as {_VERDICT[settled]})"
    return cls.replace("-", ""), text


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:.0f}"


def _ours(mean: Any, ci: Any, n: Any) -> str:
    text = _num(mean)
    if ci is not None and not (isinstance(ci, float) and math.isnan(ci)):
        text += f" ± {_num(ci, 2)}"
    return f"{text} <small>(n={int(n)})</small>"


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:image/png;base64,{data}"


def _page(title: str, header: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header>{header}</header><main>{body}</main></body></html>\n"
    )


def _value_rows(fig: Any, table: pd.DataFrame) -> tuple[str, int, int]:
    """The table of ours beside the paper's; returns (html, cells within, cells outside)."""
    if table.empty:
        return "<p class=notrun>no runs of this figure in the results</p>", 0, 0
    t = table
    if fig.kind == "epochs":  # first and last epoch of every series
        last = t.groupby(fig.series)["epoch"].transform("max")
        t = t[(t["epoch"] == 0) | (t["epoch"] == last)]
    keys = [c for c in (fig.group, fig.series if fig.series != "label" else None,
                        "label", fig.x, "epoch" if fig.kind == "epochs" else None) if c]
    keys = [k for k in dict.fromkeys(keys) if k in t.columns]
    has_paper = "paper" in t and t["paper"].notna().any()
    head = "".join(f"<th class=l>{_e(k)}</th>" for k in keys)
    head += "<th class=l>metric</th><th>ours (mean ± 95% CI)</th>"
    if has_paper:
        head += "<th>paper</th><th>tolerance</th><th>match</th>"
    rows, within, outside = [], 0, 0
    for _, r in t.iterrows():
        cells = "".join(f"<td class=l>{_e(_num(r[k]) if k != 'label' else r[k])}</td>"
                        for k in keys)
        cells += f"<td class=l>{_e(r['metric'])}</td>"
        ours = _ours(r["mean"], r["ci95"], r["n"])
        cells += f"<td class=ours data-value=\"{_e(r['mean'])}\">{ours}</td>"
        cls = ""
        if has_paper:
            p = r["paper"]
            if pd.isna(p):
                cells += "<td class=paper-none>–</td><td></td><td></td>"
            else:
                tol = fig.tolerance
                ok = tol.ok(float(r["mean"]), float(p)) if tol else None
                within += ok is True
                outside += ok is False
                cls = " class=within" if ok else " class=outside" if ok is False else ""
                mark = "✓ within" if ok else "✗ outside" if ok is False else ""
                cells += (f"<td class=paper data-value=\"{_e(p)}\">{_e(_num(p))}</td>"
                          f"<td>{_e(tol.text() if tol else '')}</td><td>{mark}</td>")
        rows.append(f"<tr{cls}>{cells}</tr>")
    return (f"<table class=values><tr>{head}</tr>{''.join(rows)}</table>", within, outside)


def _checks(fig: Any, results: Results) -> tuple[str, list[tuple[Any, str, bool | None, str]]]:
    """The figure's acceptance table; returns (html, [(check, our value, passed, status)])."""
    if not fig.checks:
        return "", []
    rows, marks = [], []
    for c in fig.checks:
        try:
            ours, ok = c.compute(results)
        except Exception as e:  # a check that cannot be computed says so
            ours, ok = f"error: {type(e).__name__}: {e}", False
        status = c.status(ok)
        marks.append((c, ours, ok, status))
        cls, text = _mark(status, c.settled)
        src = f"<a href=\"{_e(c.source)}\">{_e(c.source)}</a>" if c.source.startswith(
            ("docs/", "benchmarks/")) else _e(c.source)
        settled = (f"<b>{_e(_VERDICT[c.settled])}</b>: {_e(c.reason)}" if c.settled else "–")
        attrs = f" data-settled=\"{_e(c.settled)}\"" if c.settled else ""
        rows.append(
            f"<tr class=check data-status=\"{_MARK[ok][0]}\" data-outcome=\"{status}\"{attrs}>"
            f"<td class=l>{_e(c.text)}</td><td class=l>{_e(c.target)}</td>"
            f"<td class=l>{_e(ours)}</td><td class=\"{cls}\">{text}</td>"
            f"<td class=l>{settled}</td><td class=l>{src}</td></tr>"
        )
    head = ("<tr><th class=l>acceptance check</th><th class=l>target</th><th class=l>ours</th>"
            "<th>mark</th><th class=l>settled verdict</th><th class=l>source</th></tr>")
    return f"<h3>Acceptance</h3><table class=checks>{head}{''.join(rows)}</table>", marks


def _provenance(paper: Paper, results: Results, timings: Mapping[str, Any]) -> str:
    parts = []
    for named in paper.experiments:
        df = results.rows(named.experiment)
        name = results.name(named.experiment)
        manifest_path = results.out / "_manifests" / f"{name}.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        if df.empty:
            parts.append(f"<h3>{_e(name)}</h3><p class=notrun>no rows</p>")
            continue
        per_run = df.drop_duplicates("run_id")
        ok = per_run[per_run["status"] == "ok"]
        failed = per_run[per_run["status"] != "ok"]
        expected = len(manifest.get("runs", [])) or len(per_run)
        codes = sorted(set(per_run.get("code", pd.Series(dtype=str)).dropna()))
        worlds = sorted(set(df.get("world", pd.Series(dtype=str)).dropna().astype(str)))
        seeds = sorted(set(per_run["seed"].dropna().astype(int)))
        wall = pd.to_numeric(per_run["wall_seconds"], errors="coerce")
        t = timings.get(name, {})
        items = [
            ("spec", f"experiments/{named.spec}"
             + (f" (quick: {named.quick.describe()})" if results.quick else "")),
            ("runs", f"{len(ok)} ok, {len(failed)} failed, {expected} in the spec"),
            ("seeds", ", ".join(map(str, seeds))),
            ("code fingerprint", ", ".join(codes) or "–"),
            ("world fingerprints", f"{len(worlds)}: " + ", ".join(worlds[:12])
             + (" …" if len(worlds) > 12 else "") if worlds else "–"),
            ("run times", f"{wall.sum():.1f} s over runs (longest {wall.max():.1f} s)"),
        ]
        if t:
            items.append(("sweep", f"{t.get('seconds', 0):.1f} s wall ({t.get('ran', 0)} run now, "
                          f"{t.get('skipped', 0)} already done)"))
        lis = "".join(
            f"<tr><th class=l>{_e(k)}</th><td class=l>{_e(v)}</td></tr>" for k, v in items
        )
        fail = ""
        if len(failed):
            fail = "<h4>failed runs</h4><table>" + "".join(
                f"<tr><td class=l>{_e(r['run_id'])}</td><td class=l>{_e(r['label'])}</td>"
                f"<td class=l>{_e(r.get('error', ''))}</td></tr>" for _, r in failed.iterrows()
            ) + "</table>"
        spec = json.dumps(manifest.get("spec", {}), indent=1)
        parts.append(
            f"<h3>{_e(name)}</h3><table class=prov>{lis}</table>{fail}"
            f"<details><summary>resolved spec</summary><pre>{_e(spec)}</pre></details>"
        )
    return "<h2 id=provenance>Provenance</h2>" + "".join(parts)


def paper_report(
    paper: Paper,
    results: Results,
    dest: str | Path,
    *,
    timings: Mapping[str, Any] | None = None,
    description: str = "",
    runs: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Draw every figure of ``paper`` and write ``dest/<paper>[-quick].html``.

    ``runs`` is ``(missing, expected)``: the runs of the paper's experiments not
    yet in the results, stated in the header when any is missing.

    Returns a summary: ``path``, ``figures`` (id -> PNG path or ``None``),
    ``checks`` (passed, failed, not run; a failure of a check settled as not
    reproduced or undecidable is not counted as failed but in ``as_settled``),
    ``settled`` (one record per check with a declared verdict: check, verdict,
    reason, our value, passed, outcome) and paper-value cells within/outside
    their tolerance.
    """
    dest = Path(dest)
    stem = paper.name + ("-quick" if results.quick else "")
    figdir = dest / "figures" / stem
    sections, nav = [], []
    figures: dict[str, Path | None] = {}
    n_within = n_outside = 0
    marks: list[tuple[Any, str, bool | None, str]] = []
    for fig in paper.figures:
        table = figure_table(fig, results)
        mpl = draw_figure(fig, results, table)
        img = ""
        if mpl is not None:
            from hedgerow.figures.plots import save

            files = save(mpl, figdir / f"{paper.name}-{fig.id}")
            figures[fig.id] = files["png"]
            img = (f"<img alt=\"{_e(fig.title)}\" src=\"{_img(files['png'])}\">"
                   f"<p><small>SVG: figures/{_e(stem)}/{_e(files['svg'].name)}</small></p>")
        else:
            figures[fig.id] = None
            img = "<p class=notrun>no data for this figure in the results</p>"
        run = cast(ScoreRun, fig.score_run)  # set on every "scores" figure
        values, w, o = _value_rows(fig, table) if fig.kind != "scores" else (
            "<p>Per-node scores of an in-process run "
            f"({_e(run.protocol)} on {_e(run.scenario)}, seed "
            f"{run.seed}); the paper states no numbers for this figure.</p>", 0, 0)
        n_within += w
        n_outside += o
        checks, m = _checks(fig, results)
        marks += m
        reads = ""
        if fig.readings:
            reads = "<h3>Readings</h3><ul>" + "".join(
                f"<li><a href=\"{_e(link)}\">{_e(text)}</a></li>" for text, link in fig.readings
            ) + "</ul>"
        tol = f" Tolerance: {fig.tolerance.text()}." if fig.tolerance else ""
        sections.append(
            f"<section class=figure id=\"{_e(fig.id)}\" data-figure=\"{_e(fig.id)}\">"
            f"<h2>{_e(fig.title)}</h2>{img}{checks}<h3>Ours beside the paper's</h3>"
            f"<p><small>experiment {_e(results.name(fig.experiment))}.{_e(tol)}</small></p>"
            f"{values}{reads}</section>"
        )
        nav.append(f"<a href=\"#{_e(fig.id)}\">{_e(fig.id)}</a>")
    statuses = [m[3] for m in marks]
    passed = statuses.count("pass")
    failed = statuses.count("fail") + statuses.count("regression")
    not_run = statuses.count("not-run")
    as_settled = statuses.count("as-settled")
    settled = [{"check": c.text, "verdict": c.settled, "reason": c.reason, "ours": ours,
                "passed": ok, "outcome": status}
               for c, ours, ok, status in marks if c.settled]
    quick = ""
    if results.quick:
        red = "; ".join(f"{e.experiment}: {e.quick.describe()}" for e in paper.experiments)
        quick = (f"<div class=quick><b>Quick run</b> — reduced specs (fewer seeds, sizes and "
                 f"epochs); the full run is <code>hedgerow reproduce {_e(paper.name)}</code>. "
                 f"Reduced: {_e(red)}.</div>")
    cards = (
        f"<div class=summary><div class=card><b>{len(paper.figures)}</b>figures</div>"
        f"<div class=card><b class=pass>{passed}</b>checks passed</div>"
        f"<div class=card><b class=fail>{failed}</b>checks failed</div>"
        f"<div class=card><b class=assettled>{as_settled}</b>checks failing as settled "
        f"(not reproduced or undecidable)</div>"
        f"<div class=card><b class=notrun>{not_run}</b>checks not run</div>"
        f"<div class=card><b>{n_within} / {n_within + n_outside}</b>paper values within "
        f"tolerance</div></div>"
    )
    header = (f"<h1>{_e(paper.title)}</h1><p>Hedgerow reproduction "
              f"<code>{_e(paper.name)}</code>{' (quick)' if results.quick else ''} · "
              f"documented in {_e(paper.doc)} · written "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}</p>")
    if runs is not None and runs[0]:
        header += (f"<p class=notrun><b>Incomplete: {runs[0]} of {runs[1]} runs missing</b> "
                   f"(figures and checks cover the runs present; <code>hedgerow reproduce "
                   f"{_e(paper.name)}{' --quick' if results.quick else ''}</code> runs the "
                   "rest)</p>")
    body = (f"{quick}{cards}{('<p>' + _e(description) + '</p>') if description else ''}"
            f"<nav>{''.join(nav)}<a href=\"#provenance\">provenance</a></nav>"
            f"{''.join(sections)}{_provenance(paper, results, timings or {})}")
    path = dest / f"{stem}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(paper.title, header, body), encoding="utf-8")
    return {"path": path, "figures": figures, "checks": (passed, failed, not_run),
            "as_settled": as_settled, "settled": settled, "values": (n_within, n_outside)}


def index_page(reports: Sequence[Mapping[str, Any]], dest: str | Path) -> Path:
    """``dest/index.html``: one line per report (checks and values), linking to it."""
    dest = Path(dest)
    rows = "".join(
        f"<tr><td class=l><a href=\"{_e(Path(r['path']).name)}\">{_e(r['title'])}</a></td>"
        f"<td>{len(r['figures'])}</td><td class=pass>{r['checks'][0]}</td>"
        f"<td class=fail>{r['checks'][1]}</td><td class=assettled>{r.get('as_settled', 0)}</td>"
        f"<td class=notrun>{r['checks'][2]}</td>"
        f"<td>{r['values'][0]} / {sum(r['values'])}</td></tr>"
        for r in reports
    )
    body = ("<table><tr><th class=l>report</th><th>figures</th><th>passed</th><th>failed</th>"
            "<th>failing as settled</th><th>not run</th><th>paper values within tolerance</th>"
            f"</tr>{rows}</table>")
    path = dest / "index.html"
    path.write_text(_page("Hedgerow reproductions", "<h1>Hedgerow reproductions</h1>", body),
                    encoding="utf-8")
    return path


def table_page(
    title: str, table: pd.DataFrame, by: Sequence[str], *, notes: Sequence[str] = (),
    status: str = "",
) -> str:
    """One page for a tidy table (``hedgerow report --html``): ours beside the paper's.

    Examples
    --------
    >>> t = pd.DataFrame({"label": ["a"], "metric": ["deg"], "mean": [1.0], "ci95": [0.1],
    ...                   "n": [3], "paper": [1.2]})
    >>> "data-value=\\"1.2\\"" in table_page("x", t, ["label"])
    True
    """
    has_paper = "paper" in table.columns
    head = "".join(f"<th class=l>{_e(b)}</th>" for b in by)
    head += "<th class=l>metric</th><th>ours (mean ± 95% CI)</th>" + (
        "<th>paper</th>" if has_paper else "")
    rows = []
    for _, r in table.iterrows():
        cells = "".join(f"<td class=l>{_e(r[b])}</td>" for b in by)
        cells += (f"<td class=l>{_e(r['metric'])}</td>"
                  f"<td class=ours data-value=\"{_e(r['mean'])}\">"
                  f"{_ours(r['mean'], r['ci95'], r['n'])}</td>")
        if has_paper:
            p = r["paper"]
            cells += ("<td class=paper-none>–</td>" if pd.isna(p) else
                      f"<td class=paper data-value=\"{_e(p)}\">{_e(_num(p))}</td>")
        rows.append(f"<tr>{cells}</tr>")
    body = (f"<p>{_e(status)}</p><table class=values><tr>{head}</tr>{''.join(rows)}</table>"
            + "".join(f"<p><small>{_e(n)}</small></p>" for n in notes))
    return _page(title, f"<h1>{_e(title)}</h1>", body)
