"""Aggregation of sweep results with Spark SQL: mean, 95% CI and count per group.

:func:`load_rows` reads ``DIR/rows`` (schemas merged) and keeps, for every
``run_id``, the rows of its best attempt: the latest ``ok`` attempt, or the
latest attempt when none is ``ok``.  :func:`aggregate` groups the ``ok`` rows
of one experiment by the requested columns and returns one tidy row per
``(group, metric)`` with ``mean``, ``ci95`` (half-width of the 95% Student-t
interval of the mean over runs, ``NaN`` for fewer than two runs), ``n`` and,
for named reproductions (:mod:`hedgerow.experiment.reference`), the paper's value.
:func:`render` prints it as Markdown, CSV or JSON; with ``pivot`` the Markdown
table is laid out like the paper's (one column per value of the pivot key).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hedgerow.errors import HedgerowError
from hedgerow.experiment.rows import METRIC_ORDER, column_for_key, is_metric_column
from hedgerow.pipeline.store import read_manifest, row_files, rows_dir

__all__ = ["Report", "aggregate", "ci95_halfwidth", "load_rows", "render"]

FORMATS = ("markdown", "csv", "json")


def ci95_halfwidth(sd: float, n: int) -> float:
    """Half-width of the 95% Student-t confidence interval of a mean.

    Examples
    --------
    >>> round(ci95_halfwidth(1.0, 3), 4)
    2.4841
    >>> math.isnan(ci95_halfwidth(1.0, 1))
    True
    """
    if n is None or n < 2 or sd is None or (isinstance(sd, float) and math.isnan(sd)):
        return float("nan")
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1) * sd / math.sqrt(n))


def load_rows(spark: Any, out: str | Path, *, experiment: str | None = None):
    """All result rows under ``out``, one attempt per run id (a Spark DataFrame).

    The attempt kept for a run is its latest ``ok`` attempt, or its latest
    attempt when none is ``ok`` (one window over ``run_id``, no join).

    Raises
    ------
    HedgerowError
        If ``out`` holds no result rows.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not row_files(out):
        raise HedgerowError(
            f"{out}: no result rows under {rows_dir(out)} (run hedgerow sweep first)"
        )
    df = spark.read.option("mergeSchema", "true").parquet(str(rows_dir(out)))
    if experiment is not None:
        df = df.filter(F.col("experiment") == experiment)
    w = Window.partitionBy("run_id").orderBy(
        (F.col("status") == "ok").desc(), F.col("finished_at").desc(), F.col("attempt_id")
    )
    # all rows of the best attempt share status, finished_at and attempt_id: dense rank 1
    return df.withColumn("_rank", F.dense_rank().over(w)).filter(F.col("_rank") == 1).drop("_rank")


@dataclass
class Report:
    """An aggregated table and what went into it."""

    experiment: str
    by: list[str]
    metrics: list[str]
    table: pd.DataFrame
    runs_ok: int
    runs_failed: int
    runs_expected: int | None
    reference: str | None = None
    notes: list[str] = field(default_factory=list)


def _resolve_by(by: Sequence[str], columns: Sequence[str]) -> list[str]:
    out = []
    for key in by:
        col = key if key in columns else column_for_key(key)
        if col not in columns:
            raise HedgerowError(
                f"--by {key}: no such result column; available: "
                + ", ".join(c for c in columns if not is_metric_column(c) or c == "label")
            )
        out.append(col)
    return out


def _default_metrics(columns: Sequence[str], numeric: set[str]) -> list[str]:
    metrics = [
        c for c in columns if is_metric_column(c) and c in numeric and not c.startswith("stat_")
    ]
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    return sorted(metrics, key=lambda m: (order.get(m, len(order)), m))


def _choose(
    df: Any,
    manifest: dict[str, Any],
    by: Sequence[str] | None,
    metrics: Sequence[str] | None,
    experiment: str,
) -> tuple[list[str], list[str]]:
    """Resolve the group columns and metrics (defaults from the manifest)."""
    from pyspark.sql.types import NumericType

    columns = df.columns
    numeric = {f.name for f in df.schema.fields if isinstance(f.dataType, NumericType)}
    report_defaults = manifest.get("report") or {}
    if not by:
        by = report_defaults.get("by") or ["label", *manifest.get("swept_columns", [])]
        if "label" in by:  # the label already names the protocol
            by = [b for b in by if b != "protocol"]
        if manifest.get("kind") == "run" and "epoch" not in by:
            by = [*by, "epoch"]
    by_cols = list(dict.fromkeys(_resolve_by(by, columns)))
    if not metrics:
        metrics = report_defaults.get("metrics") or _default_metrics(columns, numeric)
    for m in metrics:
        if m not in columns:
            avail = ", ".join(_default_metrics(columns, numeric))
            raise HedgerowError(
                f"--metric {m}: no such metric in {experiment!r}; available: {avail}"
            )
        if m not in numeric:
            raise HedgerowError(f"--metric {m}: not a numeric column")
    return by_cols, list(metrics)


def select_epochs(df: Any, epochs: Sequence[int]) -> Any:
    """Rows of the given epochs; negative numbers count back from each run's last epoch.

    Rows without an epoch (``kind: build``) are dropped when epochs are asked for.
    """
    from pyspark.sql import functions as F

    last = df.groupBy("run_id").agg(F.max("epoch").alias("_last"))
    joined = df.join(last, on="run_id", how="left")
    cond = None
    for e in epochs:
        e = int(e)
        c = F.col("epoch") == (F.col("_last") + 1 + e if e < 0 else F.lit(e))
        cond = c if cond is None else cond | c
    return joined.filter(cond).drop("_last")


def aggregate(
    spark: Any,
    out: str | Path,
    experiment: str,
    *,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    epochs: Sequence[int] | None = None,
) -> Report:
    """Mean, 95% CI and count of each metric per group, with the paper's value where known.

    Parameters
    ----------
    spark : SparkSession
    out : path
        Sweep output directory.
    experiment : str
        Experiment name (rows of other experiments are ignored).
    by : list of str, optional
        Group columns or spec keys (``nodes``, ``scenario.workload.nodes``,
        ``params.kr``).  Default: the spec's ``report.by``, else ``label``
        plus the swept keys (plus ``epoch`` for ``kind: run``).
    metrics : list of str, optional
        Metric columns.  Default: the spec's ``report.metrics``, else every
        numeric metric.
    epochs : list of int, optional
        ``kind: run`` only: keep just these epochs of every run; a negative
        number counts from each run's last epoch (``[0, -1]``: first and last).
        Default: the spec's ``report.epochs``, else every epoch.

    Returns
    -------
    Report
        ``table`` has the group columns, then ``metric, mean, ci95, n, paper``.
    """
    from pyspark.sql import functions as F

    from hedgerow.experiment.reference import REFERENCES

    manifest = read_manifest(out, experiment) or {}
    df = load_rows(spark, out, experiment=experiment).persist()
    try:
        status = df.select("run_id", "status").distinct().toPandas()
        if status.empty:
            everything = spark.read.option("mergeSchema", "true").parquet(str(rows_dir(out)))
            known = sorted(r[0] for r in everything.select("experiment").distinct().collect())
            raise HedgerowError(
                f"{out}: no rows of experiment {experiment!r}; "
                f"found: {', '.join(known) or '(none)'}"
            )
        counts = status["status"].value_counts().to_dict()
        by_cols, metrics = _choose(df, manifest, by, metrics, experiment)
        if epochs is None:
            epochs = (manifest.get("report") or {}).get("epochs") or None
        if epochs:
            if manifest.get("kind", "run") not in ("run", "churn"):
                raise HedgerowError(
                    f"--epochs: {experiment!r} is a {manifest.get('kind')} experiment; "
                    "epochs exist only for kind: run (epochs) and kind: churn (snapshots)"
                )
            df = select_epochs(df, epochs)
        aggs = []
        for i, m in enumerate(metrics):
            c = F.col(m).cast("double")
            aggs += [
                F.avg(c).alias(f"m{i}"),
                F.stddev_samp(c).alias(f"s{i}"),
                F.count(c).alias(f"n{i}"),
            ]
        ok = df.filter(F.col("status") == "ok")
        grouped = (ok.groupBy(*by_cols) if by_cols else ok).agg(*aggs).toPandas()
    finally:
        df.unpersist()
    ref = REFERENCES.get(manifest.get("reference") or "") if manifest.get("reference") else None
    if ref is None and experiment in REFERENCES:
        ref = REFERENCES[experiment]
    records = []
    for _, g in grouped.iterrows():
        for i, m in enumerate(metrics):
            n = int(g[f"n{i}"])
            mean = g[f"m{i}"]
            rec = {c: g[c] for c in by_cols}
            rec.update(
                metric=m,
                mean=float(mean) if mean is not None and not pd.isna(mean) else float("nan"),
                ci95=ci95_halfwidth(
                    float(g[f"s{i}"]) if not pd.isna(g[f"s{i}"]) else float("nan"), n
                ),
                n=n,
            )
            if ref is not None:
                paper = None
                if "label" in by_cols and ref.key in by_cols:
                    paper = ref.value(m, str(g["label"]), g[ref.key])
                rec["paper"] = float("nan") if paper is None else float(paper)
            records.append(rec)
    table = pd.DataFrame.from_records(records)
    if len(table):
        # labels in spec order (the paper's row order), numbers numerically
        labels = [r.get("label") for r in manifest.get("runs", []) if r.get("label")]
        order = {lab: i for i, lab in enumerate(dict.fromkeys(labels))}

        def key(col: pd.Series) -> pd.Series:
            if col.name == "label" and order:
                rest = sorted(v for v in set(col) if v not in order)
                full = {**order, **{v: len(order) + i for i, v in enumerate(rest)}}
                return col.map(full)
            return _sort_key(col)

        table = table.sort_values([*by_cols, "metric"], kind="stable", key=key).reset_index(
            drop=True
        )
    notes = []
    if ref is not None:
        if not ("label" in by_cols and ref.key in by_cols):
            notes.append(f"paper values need --by to include label and {ref.key}")
        if ref.notes:
            notes.append(f"{ref.title}. {ref.notes}")
    expected = len(manifest["runs"]) if manifest.get("runs") else None
    return Report(
        experiment=experiment,
        by=by_cols,
        metrics=list(metrics),
        table=table,
        runs_ok=int(counts.get("ok", 0)),
        runs_failed=int(sum(v for k, v in counts.items() if k != "ok")),
        runs_expected=expected,
        reference=ref.name if ref is not None else None,
        notes=notes,
    )


def _sort_key(col: pd.Series) -> pd.Series:
    """Sort key: numeric where every value is a number, else the values themselves."""
    if col.dtype == object:
        num = pd.to_numeric(col, errors="coerce")
        if num.notna().all():
            return num
    return col


def _fmt(x: Any, digits: int | None = None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and digits is not None:
        return f"{x:.{digits}f}"
    if isinstance(x, float):
        digits = 3
        return f"{x:.{digits}f}".rstrip("0").rstrip(".") if abs(x) >= 1e-3 or x == 0 else f"{x:.3g}"
    return str(x)


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, sep, *body])


def _by_metric(report: Report, t: pd.DataFrame, digits: int, has_paper: bool) -> list[str]:
    """One row per group, one column per metric (``pivot: metric``): protocols x metrics."""
    keys = list(dict.fromkeys(tuple(r[c] for c in report.by) for _, r in t.iterrows()))
    cells: dict[tuple, dict[str, str]] = {k: {} for k in keys}
    for _, r in t.iterrows():
        text = f"{_fmt(r['mean'], digits)} ± {_fmt(r['ci95'], digits)}"
        if has_paper and not pd.isna(r["paper"]):
            text += f" ({_fmt(r['paper'], digits)})"
        cells[tuple(r[c] for c in report.by)][r["metric"]] = text
    rows = [[*(_fmt(k) for k in key), *(cells[key].get(m, "") for m in report.metrics)]
            for key in keys]
    n_runs = sorted(set(t["n"].tolist()))
    return [
        "mean ± 95% CI" + (" (paper)" if has_paper else ""),
        "",
        _markdown([*report.by, *report.metrics], rows),
        "",
        f"runs per cell: {', '.join(map(str, n_runs))}",
    ]


def render(
    report: Report, fmt: str = "markdown", *, pivot: str | None = None, digits: int = 2
) -> str:
    """The report as text.

    Parameters
    ----------
    fmt : {"markdown", "csv", "json"}
        CSV and JSON are the tidy table (one row per group and metric).
    pivot : str, optional
        Markdown only: one column per value of this group column, cells
        ``mean ± ci95 (paper)``; ``"metric"``: one row per group and one
        column per metric (e.g. protocols x metrics).
    """
    if fmt not in FORMATS:
        raise HedgerowError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    t = report.table
    if fmt == "csv":
        return t.to_csv(index=False)
    if fmt == "json":
        return json.dumps(json.loads(t.to_json(orient="records")), indent=1)
    title = f"## {report.experiment}"
    status = f"{report.runs_ok} runs ok, {report.runs_failed} failed"
    if report.runs_expected is not None:
        missing = report.runs_expected - report.runs_ok - report.runs_failed
        status += f", {report.runs_expected} in the spec" + (
            f" ({missing} not run yet)" if missing > 0 else ""
        )
    parts = [title, "", status, ""]
    has_paper = "paper" in t.columns
    if pivot == "metric":
        parts += _by_metric(report, t, digits, has_paper)
    elif pivot:
        col = pivot if pivot in report.by else column_for_key(pivot)
        if col not in report.by:
            raise HedgerowError(
                f"--pivot {pivot}: not one of the --by columns ({', '.join(report.by)})"
            )
        rest = [c for c in report.by if c != col]
        values = list(dict.fromkeys(t.sort_values(col, key=_sort_key)[col].tolist()))
        for m in report.metrics:
            sub = t[t["metric"] == m]
            rows = []
            keys = list(dict.fromkeys(tuple(r[c] for c in rest) for _, r in sub.iterrows()))
            for key in keys:
                cells = [_fmt(k) for k in key]
                mask = pd.Series(True, index=sub.index)
                for c, k in zip(rest, key, strict=True):
                    mask &= sub[c] == k
                for v in values:
                    hit = sub[mask & (sub[col] == v)]
                    if hit.empty:
                        cells.append("")
                        continue
                    r = hit.iloc[0]
                    cell = f"{_fmt(r['mean'], digits)} ± {_fmt(r['ci95'], digits)}"
                    if has_paper and not pd.isna(r["paper"]):
                        cell += f" ({_fmt(r['paper'], digits)})"
                    cells.append(cell)
                rows.append(cells)
            parts += [
                f"### {m} by {col}"
                + (" — ours ± 95% CI (paper)" if has_paper else " — mean ± 95% CI"),
                "",
            ]
            parts += [_markdown([*rest, *(f"{col}={_fmt(v)}" for v in values)], rows), ""]
        n_runs = sorted(set(t["n"].tolist()))
        parts.append(f"runs per cell: {', '.join(map(str, n_runs))}")
    else:
        headers = [*report.by, "metric", "mean", "ci95", "n", *(["paper"] if has_paper else [])]
        rows = []
        for _, r in t.iterrows():
            row = [_fmt(r[c]) for c in report.by] + [
                r["metric"],
                _fmt(r["mean"], digits),
                _fmt(r["ci95"], digits),
                str(r["n"]),
            ]
            if has_paper:
                row.append(_fmt(r["paper"], digits))
            rows.append(row)
        parts.append(_markdown(headers, rows))
    for note in report.notes:
        parts += ["", f"note: {note}"]
    return "\n".join(parts).rstrip() + "\n"
