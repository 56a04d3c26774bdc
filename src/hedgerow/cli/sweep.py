"""``hedgerow sweep`` and ``hedgerow report``: experiment specs through the Spark pipeline."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from hedgerow.cli._common import log_path
from hedgerow.errors import HedgerowError, SpecError

__all__ = ["report_cmd", "sweep_cmd"]


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory; rows go to OUT/rows/*.parquet.",
)
@click.option(
    "--master", default=None, help="Spark master URL (default: local[*] or spark-submit's)."
)
@click.option(
    "--parallelism",
    type=click.IntRange(min=1),
    default=None,
    help="Spark default parallelism; also sizes the number of runs in flight.",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=0),
    default=None,
    help="Run at most this many of the missing runs.",
)
@click.option(
    "--dry-run", is_flag=True, help="List the runs (id, label, seed, point, done?) and exit."
)
@click.option(
    "--redo-stale",
    is_flag=True,
    help="Also rerun finished runs whose rows were made by other Hedgerow code.",
)
@click.option(
    "--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr."
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Show Spark's, the JVM's and Python's warnings (default: only in OUT/_logs/).",
)
def sweep_cmd(
    spec: Path,
    out: Path,
    master: str | None,
    parallelism: int | None,
    max_runs: int | None,
    dry_run: bool,
    redo_stale: bool,
    progress: bool,
    verbose: bool,
) -> None:
    """Run every missing run of SPEC (a YAML experiment spec) as Spark tasks.

    Finished runs (status ok) are skipped, so rerunning a sweep, or restarting
    one that was killed, runs only what is missing.  Finished runs made by other
    Hedgerow code are counted and named in a warning; --redo-stale runs them
    again.  Exits 1 when a run failed.
    """
    from hedgerow.experiment import canonical_json, load_spec
    from hedgerow.pipeline.session import check_master, preflight
    from hedgerow.pipeline.store import finished_run_ids
    from hedgerow.pipeline.sweep import run_sweep
    from hedgerow.userfiles import check_writable

    check_utf8(spec)
    parsed = load_spec(spec)
    check_master(master)
    check_writable(out, folder=True)
    warn = _warner()
    if dry_run:
        runs = parsed.expand()
        done = finished_run_ids(out, warn=warn) if out.exists() else set()
        for r in runs:
            mark = "done" if r.run_id in done else "todo"
            click.echo(
                f"{r.run_id}  {mark}  {r.label}  seed={r.scenario['seed']}  "
                f"{canonical_json(r.point)}"
            )
        click.echo(f"{len(runs)} runs, {sum(r.run_id in done for r in runs)} done", err=True)
        return
    preflight(master)  # Java 17+ and the master, before anything is printed or written
    log_file = None if verbose else log_path(out, "sweep")

    def started(res) -> None:
        todo = res.total - res.skipped
        if max_runs is not None:
            todo = min(todo, max_runs)
        where = master or (
            "the spark-submit master" if os.environ.get("SPARK_ENV_LOADED") else "local[*]"
        )
        log = f"; Spark log: {log_file}" if log_file is not None and todo else ""
        click.echo(
            f"{parsed.experiment}: {res.total} runs, {res.skipped} already done, "
            f"{todo} to run on {where}{log}",
            err=True,
        )

    result = run_sweep(
        parsed,
        out,
        master=master,
        parallelism=parallelism,
        max_runs=max_runs,
        progress=progress,
        redo_stale=redo_stale,
        warn=warn,
        log_file=log_file,
        on_start=started,
    )
    click.echo(result.summary(), err=True)
    if result.stale:
        click.echo(
            f"warning: {result.stale} finished runs in {out} were made by other Hedgerow code; "
            "rerun with --redo-stale to recompute them, or use a new --out",
            err=True,
        )
    for run_id, label, error in result.failures[:10]:
        click.echo(f"failed {run_id} {label}: {error}", err=True)
    if result.failed:
        sys.exit(1)


def check_utf8(spec: Path) -> None:
    """A spec that is not UTF-8 text is one line naming the file and the byte."""
    try:
        spec.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        line = spec.read_bytes()[: e.start].count(b"\n") + 1
        raise SpecError(
            f"{spec}:{line}: not UTF-8 text (byte 0x{e.object[e.start]:02x}); "
            "save the file as UTF-8"
        ) from None
    except OSError as e:
        raise SpecError(f"{spec}: cannot read spec ({e.strerror})") from None


def _warner():
    seen: set[str] = set()

    def warn(text: str) -> None:
        if text not in seen:
            seen.add(text)
            click.echo(f"warning: {text}", err=True)

    return warn


@click.command("report")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--experiment", "-e", required=True, help="Experiment name (the spec's experiment:).")
@click.option(
    "--by",
    default=None,
    help="Comma-separated group columns or spec keys, e.g. label,nodes or params.kr.",
)
@click.option("--metric", "-m", "metrics", multiple=True, help="Metric column (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "csv", "json"]),
    default="markdown",
    show_default=True,
)
@click.option(
    "--pivot",
    default=None,
    help="Markdown: one column per value of this --by column, or 'metric' (one per metric).",
)
@click.option(
    "--epochs",
    default=None,
    help="Epoch runs only: these epochs, comma-separated; negative from the end (0,-1).",
)
@click.option("--master", default=None, help="Spark master URL (implies --engine spark).")
@click.option(
    "--engine",
    type=click.Choice(["auto", "local", "spark"]),
    default="auto",
    show_default=True,
    help="local: pandas in this process; spark: Spark SQL; auto: local for folders up to "
    "512 MiB of rows without --master.",
)
@click.option("--verbose", is_flag=True, help="Show Spark's and the JVM's output.")
@click.option("--digits", type=click.IntRange(0, 10), default=2, show_default=True)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the table as a self-contained HTML page.",
)
def report_cmd(
    out: Path,
    experiment: str,
    by: str | None,
    metrics: tuple[str, ...],
    fmt: str,
    pivot: str | None,
    epochs: str | None,
    master: str | None,
    engine: str,
    verbose: bool,
    digits: int,
    html_file: Path | None,
) -> None:
    """Aggregate the rows in OUT: mean, 95% CI and count per group.

    Only the runs of the current spec (the manifest's run ids) are aggregated;
    rows of earlier versions of the spec are shown apart.  For a named
    reproduction the paper's value is printed beside ours.
    """
    from hedgerow.pipeline.report import aggregate, check_options, choose_engine, render
    from hedgerow.pipeline.store import read_manifest, row_files

    for flag, given in (("--by", by), ("--pivot", pivot), ("--epochs", epochs)):
        if given is not None and not given.strip(" ,"):
            raise HedgerowError(f"{flag}: empty; leave the option out for the default")
    if master is not None:
        from hedgerow.pipeline.session import check_master

        check_master(master)  # also with --engine local: a typo is never ignored
    if not row_files(out):
        raise HedgerowError(f"{out}: no result rows (run hedgerow sweep SPEC --out {out} first)")
    if html_file is not None:
        from hedgerow.userfiles import check_writable

        check_writable(html_file)
    by_list = [b.strip() for b in by.split(",") if b.strip()] if by else None
    manifest = read_manifest(out, experiment) or {}
    if pivot is None and fmt == "markdown" and not by_list:
        pivot = (manifest.get("report") or {}).get("pivot")
    epoch_list = None
    if epochs:
        try:
            epoch_list = [int(e) for e in epochs.split(",") if e.strip()]
        except ValueError:
            raise HedgerowError(f"--epochs {epochs!r}: expected integers like 0,-1") from None
    warn = _warner()
    kw: dict[str, Any] = {"by": by_list, "metrics": list(metrics) or None, "epochs": epoch_list}
    check_options(out, experiment, warn=warn, **kw)
    spark = None
    if choose_engine(out, master, engine) == "spark":
        from hedgerow.pipeline.session import check_master, get_spark, preflight

        check_master(master)
        preflight(master)
        spark = get_spark(
            master,
            app_name=f"hedgerow-report:{experiment}",
            log_file=None if verbose else log_path(out, "report"),
        )
    rep = aggregate(spark, out, experiment, warn=warn, **kw)
    click.echo(render(rep, fmt, pivot=pivot, digits=digits), nl=False)
    if html_file is not None:
        from hedgerow.figures.html import table_page

        status = f"{rep.runs_ok} runs ok, {rep.runs_failed} failed"
        html_file.parent.mkdir(parents=True, exist_ok=True)
        html_file.write_text(
            table_page(f"{experiment} ({out})", rep.table, rep.by, notes=rep.notes, status=status),
            encoding="utf-8",
        )
        click.echo(f"wrote {html_file}", err=True)
