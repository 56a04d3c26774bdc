"""``hedgerow sweep`` and ``hedgerow report``: experiment specs through the Spark pipeline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

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
def sweep_cmd(
    spec: Path,
    out: Path,
    master: str | None,
    parallelism: int | None,
    max_runs: int | None,
    dry_run: bool,
    redo_stale: bool,
    progress: bool,
) -> None:
    """Run every missing run of SPEC (a YAML experiment spec) as Spark tasks.

    Finished runs (status ok) are skipped, so rerunning a sweep, or restarting
    one that was killed, runs only what is missing.  Finished runs made by other
    Hedgerow code are counted and named in a warning; --redo-stale runs them
    again.  Exits 1 when a run failed.
    """
    from hedgerow.experiment import canonical_json, load_spec
    from hedgerow.pipeline.store import finished_run_ids
    from hedgerow.pipeline.sweep import run_sweep

    parsed = load_spec(spec)
    if dry_run:
        runs = parsed.expand()
        done = finished_run_ids(out) if out.exists() else set()
        for r in runs:
            mark = "done" if r.run_id in done else "todo"
            click.echo(
                f"{r.run_id}  {mark}  {r.label}  seed={r.scenario['seed']}  "
                f"{canonical_json(r.point)}"
            )
        click.echo(f"{len(runs)} runs, {sum(r.run_id in done for r in runs)} done", err=True)
        return
    result = run_sweep(
        parsed,
        out,
        master=master,
        parallelism=parallelism,
        max_runs=max_runs,
        progress=progress,
        redo_stale=redo_stale,
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
@click.option("--master", default=None, help="Spark master URL.")
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
    digits: int,
    html_file: Path | None,
) -> None:
    """Aggregate the rows in OUT: mean, 95% CI and count per group (Spark SQL).

    For a named reproduction the paper's value is printed beside ours.
    """
    from hedgerow.errors import HedgerowError
    from hedgerow.pipeline.report import aggregate, render
    from hedgerow.pipeline.session import get_spark
    from hedgerow.pipeline.store import read_manifest, row_files

    if not row_files(out):
        raise HedgerowError(f"{out}: no result rows (run hedgerow sweep SPEC --out {out} first)")
    by_list = [b.strip() for b in by.split(",") if b.strip()] if by else None
    manifest = read_manifest(out, experiment) or {}
    if pivot is None and fmt == "markdown" and not by_list:
        pivot = (manifest.get("report") or {}).get("pivot")
    spark = get_spark(master, app_name=f"hedgerow-report:{experiment}")
    epoch_list = None
    if epochs:
        try:
            epoch_list = [int(e) for e in epochs.split(",") if e.strip()]
        except ValueError:
            raise HedgerowError(f"--epochs {epochs!r}: expected integers like 0,-1") from None
    rep = aggregate(
        spark, out, experiment, by=by_list, metrics=list(metrics) or None, epochs=epoch_list
    )
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
