"""``hedgerow reproduce``: one command per paper (sweeps, figures, HTML report)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["reproduce_cmd", "settled_line"]

#: a settled check's outcome in one word, by :meth:`hedgerow.figures.papers.Check.status`
_OUTCOME = {"pass": "passes", "fail": "fails", "not-run": "not run",
            "as-settled": "fails, as settled", "regression": "FAILS, though settled as met"}


def settled_line(rec: dict) -> str:
    """One line of the terminal summary for a check with a declared verdict.

    Examples
    --------
    >>> print(settled_line({"check": "(b) success rate", "verdict": "faithful-not-reproduced",
    ...                     "ours": "0.339", "outcome": "as-settled"}))
      [faithful-not-reproduced] (b) success rate: 0.339 (fails, as settled)
    """
    return (f"  [{rec['verdict']}] {rec['check']}: {rec['ours']} "
            f"({_OUTCOME.get(rec['outcome'], rec['outcome'])})")


def _list() -> None:
    from hedgerow.figures.papers import PAPERS

    for p in PAPERS.values():
        click.echo(f"{p.name}: {p.title}")
        click.echo(f"  estimated time on 2 cores: full {p.minutes():.0f} min, "
                   f"quick {p.minutes(quick=True):.1f} min; documented in {p.doc}")
        for e in p.experiments:
            click.echo(f"  experiments/{e.spec}: full ~{e.minutes:g} min, quick "
                       f"~{e.quick_minutes:g} min ({e.quick.describe()})")
        for f in p.figures:
            click.echo(f"    {f.id:<6} {f.title}")


@click.command("reproduce")
@click.argument("paper", required=False)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results/reproduce"), show_default=True,
              help="Results folder (rows, figures under OUT/report).")
@click.option("--quick", is_flag=True, help="Reduced specs (fewer seeds, sizes, epochs).")
@click.option("--master", default=None, help="Spark master URL (default: local[*]).")
@click.option("--list", "list_", is_flag=True, help="Name the papers, their figures and times.")
@click.option("--report-only", is_flag=True,
              help="Draw the figures and the report from the rows OUT already holds.")
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option("--verbose", is_flag=True,
              help="Show Spark's and the JVM's output (default: OUT/_logs/reproduce-*.log).")
def reproduce_cmd(paper: str | None, out: Path, quick: bool, master: str | None, list_: bool,
                  report_only: bool, progress: bool, verbose: bool) -> None:
    """Reproduce PAPER: run its named experiments as sweeps, then write its figures and report.

    Finished runs are kept (a second call resumes or only redraws).  The report
    is OUT/report/PAPER[-quick].html (self-contained), with OUT/report/index.html.
    """
    if list_ or not paper:
        if not list_:
            raise click.UsageError("name a paper (hedgerow reproduce --list names them)")
        _list()
        return
    from hedgerow.figures.papers import get_paper

    p = get_paper(paper)
    from hedgerow.userfiles import check_writable

    check_writable(out, folder=True)
    if report_only:
        from hedgerow.errors import DataError
        from hedgerow.pipeline.reproduce import missing_runs, write_report

        missing, expected = missing_runs(p, out, quick=quick)
        if missing == expected:
            q = " --quick" if quick else ""
            raise DataError(f"{out}: holds none of the {expected} runs of {p.name}{q} (run "
                            f"hedgerow reproduce {p.name}{q} --out {out} first)")

        s = write_report(p, out, quick=quick)
    else:
        from hedgerow.cli._common import log_path
        from hedgerow.pipeline.reproduce import reproduce
        from hedgerow.pipeline.session import check_master, preflight

        check_master(master)  # the checks of sweep, before a JVM starts or OUT is written
        preflight(master)
        from hedgerow.pipeline.store import sweep_lock

        with sweep_lock(out, "reproduce"):  # another writer in OUT: one line, before the JVM
            pass

        s = reproduce(paper, out, quick=quick, master=master, progress=progress,
                      log=lambda m: click.echo(m, err=True),
                      log_file=None if verbose else log_path(out, "reproduce"))
    passed, failed, not_run = s["checks"]
    within, outside = s["values"]
    took = f" in {s['seconds']:.0f}s" if "seconds" in s else ""
    missing, expected = s["runs"]
    drawn = sum(v is not None for v in s["figures"].values())
    runs = f"{missing} of {expected} runs missing; " if missing else ""
    as_settled = f", {s['as_settled']} failing as settled" if s.get("as_settled") else ""
    click.echo(f"{p.name}{' (quick)' if quick else ''}: {runs}{drawn} of {len(s['figures'])} "
               "figures drawn, checks "
               f"{passed} passed, {failed} failed{as_settled}, {not_run} not run; paper values "
               f"{within}/{within + outside} within tolerance{took} -> {s['path']}")
    for rec in s.get("settled", ()):
        click.echo(settled_line(rec))
    if s.get("failed"):
        sys.exit(1)
