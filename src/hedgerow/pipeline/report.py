"""Aggregation of sweep results: mean, 95% CI and count per group, in-process or on Spark.

:func:`load_rows` reads ``DIR/rows`` and keeps, for every ``run_id``, the rows
of its best attempt: the latest ``ok`` attempt, or the latest attempt when none
is ``ok``.  :func:`aggregate` groups the ``ok`` rows of one experiment by the
requested columns and returns one tidy row per ``(group, metric)`` with
``mean``, ``ci95`` (half-width of the 95% Student-t interval of the mean over
runs, ``NaN`` for fewer than two runs), ``n`` and, for named reproductions
(:mod:`hedgerow.experiment.reference`), the paper's value.  :func:`render`
prints it as Markdown, CSV or JSON; with ``pivot`` the Markdown table is laid
out like the paper's (one column per value of the pivot key).

What a report aggregates, so that it cannot mislead:

* exactly the runs of the spec named: the run ids in
  ``DIR/_manifests/<experiment>.json``.  Rows of the same experiment whose run
  ids are not in it (an earlier version of the spec, e.g. ``kg: 3`` edited to
  ``kg: 1``) are counted and aggregated apart (:attr:`Report.other_table`),
  never pooled;
* never different parameter values under one label: a configuration column
  (``param_*``, ``nodes``, ``protocol``, ...) that varies inside a group is
  added to the group columns (this is what keeps a results folder without a
  manifest from averaging 500- and 1,000-node runs);
* never rows of different code pooled silently: when the spec's runs were made
  by more than one code version (:mod:`hedgerow.fingerprint`), ``code`` becomes
  a group column and a note says so.

Two engines give the same numbers: ``spark=None`` aggregates in process with
pyarrow and pandas (a results folder of a few thousand runs answers in about a
second), a Spark session aggregates with Spark SQL (cluster-scale folders;
:func:`choose_engine` picks Spark above :data:`LOCAL_LIMIT_BYTES` of row files).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hedgerow.errors import HedgerowError
from hedgerow.experiment.rows import METRIC_ORDER, column_for_key, is_metric_column
from hedgerow.figures.tidy import best_attempt, ci95_halfwidth, group_stats
from hedgerow.pipeline.store import (
    file_schema,
    good_row_files,
    read_manifest,
    row_files,
    rows_dir,
)

__all__ = [
    "LOCAL_LIMIT_BYTES",
    "Report",
    "aggregate",
    "check_options",
    "choose_engine",
    "ci95_halfwidth",
    "load_rows",
    "load_rows_local",
    "render",
    "row_schema",
]

FORMATS = ("markdown", "csv", "json")

#: above this many bytes of row files ``hedgerow report`` uses Spark (``--engine auto``)
LOCAL_LIMIT_BYTES = 512 * 2**20

#: columns that identify an attempt or time it, not the configuration of a run
_NOT_CONFIG = {
    "run_id", "attempt_id", "experiment", "status", "error", "traceback", "wall_seconds",
    "cpu_seconds", "peak_rss_mib", "finished_at", "host", "code", "spec_json", "point_json",
    "seed", "epoch", "build_seconds", "label",
}  # fmt: skip


def choose_engine(out: str | Path, master: str | None = None, engine: str = "auto") -> str:
    """``"local"`` (pandas, in process) or ``"spark"`` for a report on ``out``.

    ``auto`` is Spark when a master is given, under ``spark-submit``, or when
    the row files exceed :data:`LOCAL_LIMIT_BYTES`; otherwise local.

    Examples
    --------
    >>> import tempfile
    >>> choose_engine(tempfile.mkdtemp()), choose_engine(".", "local[2]")
    ('local', 'spark')
    """
    import os

    if engine not in ("auto", "local", "spark"):
        raise HedgerowError(f"--engine {engine!r} is not one of auto, local, spark")
    if engine != "auto":
        return engine
    if master is not None or os.environ.get("SPARK_ENV_LOADED"):
        return "spark"
    size = 0
    for f in row_files(out):
        try:
            size += f.stat().st_size
        except OSError:
            continue
    return "spark" if size > LOCAL_LIMIT_BYTES else "local"


def row_schema(files: Sequence[Path]) -> tuple[list[str], set[str]]:
    """Column names (first-seen order) and the numeric ones over ``files``, without Spark."""
    import pyarrow as pa

    names: dict[str, None] = {}
    numeric: set[str] = set()
    for f in files:
        for fld in file_schema(f):
            names.setdefault(fld.name)
            t = fld.type
            if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
                numeric.add(fld.name)
    return list(names), numeric


def _no_rows(out: str | Path) -> HedgerowError:
    return HedgerowError(f"{out}: no result rows under {rows_dir(out)} (run hedgerow sweep first)")


def load_rows(
    spark: Any,
    out: str | Path,
    *,
    experiment: str | None = None,
    warn: Callable[[str], None] | None = None,
):
    """All result rows under ``out``, one attempt per run id (a Spark DataFrame).

    The attempt kept for a run is its latest ``ok`` attempt, or its latest
    attempt when none is ``ok`` (one window over ``run_id``, no join).  Corrupt
    or foreign files are skipped and named through ``warn``.

    Raises
    ------
    HedgerowError
        If ``out`` holds no result rows.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    files = good_row_files(out, warn)
    if not files:
        raise _no_rows(out)
    df = spark.read.option("mergeSchema", "true").parquet(*[str(f) for f in files])
    if experiment is not None:
        df = df.filter(F.col("experiment") == experiment)
    w = Window.partitionBy("run_id").orderBy(
        (F.col("status") == "ok").desc(), F.col("finished_at").desc(), F.col("attempt_id")
    )
    # all rows of the best attempt share status, finished_at and attempt_id: dense rank 1
    return df.withColumn("_rank", F.dense_rank().over(w)).filter(F.col("_rank") == 1).drop("_rank")


def load_rows_local(
    out: str | Path,
    *,
    experiment: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """:func:`load_rows` in process: a pandas DataFrame read with pyarrow.

    The attempt kept is :func:`hedgerow.figures.tidy.best_attempt`, the order
    of :func:`load_rows`'s window (a test compares the two engines' rows).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = good_row_files(out, warn)
    if not files:
        raise _no_rows(out)
    tables = []
    for f in files:
        t = pq.read_table(f)
        if experiment is not None:
            t = t.filter(pc.equal(t["experiment"], experiment))
        if t.num_rows:
            tables.append(t)
    if not tables:
        return pq.read_table(files[0]).schema.empty_table().to_pandas()
    df = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    return best_attempt(df)


@dataclass
class Report:
    """An aggregated table and what went into it.

    ``table`` aggregates the runs of the current spec; ``other_table`` (same
    layout, ``other_by`` columns) the rows of the experiment that are not in it,
    ``other_runs`` of them.
    """

    experiment: str
    by: list[str]
    metrics: list[str]
    table: pd.DataFrame
    runs_ok: int
    runs_failed: int
    runs_expected: int | None
    reference: str | None = None
    notes: list[str] = field(default_factory=list)
    other_runs: int = 0
    other_by: list[str] = field(default_factory=list)
    other_table: pd.DataFrame | None = None
    engine: str = "spark"


def _ref_column(key: str, by_cols: Sequence[str]) -> str | None:
    """The grouping column holding a reference's key (``adaptive`` may be ``run_adaptive``)."""
    for col in (key, f"run_{key}"):
        if col in by_cols:
            return col
    return None


def _resolve_by(by: Sequence[str], columns: Sequence[str]) -> list[str]:
    out = []
    for key in by:
        col = key if key in columns else column_for_key(key)
        if col not in columns and f"run_{key}" in columns:
            col = f"run_{key}"  # a scenario.run setting (adaptive, rt, publishers...)
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


def resolve_options(
    columns: Sequence[str],
    numeric: set[str],
    manifest: dict[str, Any],
    by: Sequence[str] | None,
    metrics: Sequence[str] | None,
    experiment: str,
) -> tuple[list[str], list[str]]:
    """Resolve the group columns and metrics (defaults from the manifest); no engine needed."""
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
    known: dict[str, Any] | None = None
    for m in metrics:
        if m not in columns:
            # (imported here: the metrics package compiles its kernels on import)
            from hedgerow.metrics.registry import unknown_metric

            if known is None:
                from hedgerow.protocols import known_metrics

                known = known_metrics()
            if m not in known:  # a typo: the nearest declared names, not this folder's columns
                raise HedgerowError(f"--metric {m}: {unknown_metric(m, known)}")
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


def _select_epochs_local(df: pd.DataFrame, epochs: Sequence[int]) -> pd.DataFrame:
    last = df.groupby("run_id")["epoch"].transform("max")
    keep = pd.Series(False, index=df.index)
    for e in epochs:
        e = int(e)
        keep |= df["epoch"] == (last + 1 + e if e < 0 else e)
    return df[keep]


class _LocalEngine:
    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df

    def index(self, cols: list[str]) -> pd.DataFrame:
        return self.df[cols].drop_duplicates("run_id").reset_index(drop=True)

    def epochs(self, epochs: Sequence[int]) -> None:
        self.df = _select_epochs_local(self.df, epochs)

    def group(self, in_spec: set[str], by: list[str], metrics: list[str], spec: bool):
        d = self.df[(self.df["status"] == "ok") & (self.df["run_id"].isin(in_spec) == spec)]
        if not by and not len(d):
            return pd.DataFrame()
        return group_stats(d, by, metrics, per_run_first=False, sort=True)


class _SparkEngine:
    def __init__(self, df: Any) -> None:
        self.df = df

    def index(self, cols: list[str]) -> pd.DataFrame:
        return self.df.select(*cols).dropDuplicates(["run_id"]).toPandas()

    def epochs(self, epochs: Sequence[int]) -> None:
        self.df = select_epochs(self.df, epochs)

    def group(self, in_spec: set[str], by: list[str], metrics: list[str], spec: bool):
        from pyspark.sql import functions as F

        aggs = []
        for i, m in enumerate(metrics):
            c = F.col(m).cast("double")
            aggs += [
                F.avg(c).alias(f"mean{i}"),
                F.stddev_samp(c).alias(f"sd{i}"),
                F.count(c).alias(f"n{i}"),
            ]
        member = F.col("run_id").isin(sorted(in_spec)) if in_spec else F.lit(False)
        ok = self.df.filter((F.col("status") == "ok") & (member == F.lit(spec)))
        return (ok.groupBy(*by) if by else ok).agg(*aggs).toPandas()


def _varying(index: pd.DataFrame, by: list[str], config: list[str]) -> list[str]:
    """Configuration columns that take more than one value inside a group of ``by``."""
    if index.empty:
        return []
    cols = [c for c in config if c not in by]
    if not cols:
        return []
    filled = index[by + cols].astype(object).where(index[by + cols].notna(), "<null>")
    if by:
        counts = filled.groupby(by, dropna=False)[cols].nunique()
        return [c for c in cols if (counts[c] > 1).any()]
    return [c for c in cols if filled[c].nunique() > 1]


def _records(grouped: pd.DataFrame, by_cols: list[str], metrics: list[str], ref: Any):
    records = []
    for _, g in grouped.iterrows():
        for i, m in enumerate(metrics):
            n = int(g[f"n{i}"])
            mean = g[f"mean{i}"]
            rec = {c: g[c] for c in by_cols}
            rec.update(
                metric=m,
                mean=float(mean) if mean is not None and not pd.isna(mean) else float("nan"),
                ci95=ci95_halfwidth(
                    float(g[f"sd{i}"]) if not pd.isna(g[f"sd{i}"]) else float("nan"), n
                ),
                n=n,
            )
            if ref is not None:
                paper = None
                kcol = _ref_column(ref.key, by_cols)
                if "label" in by_cols and kcol is not None:
                    paper = ref.value(m, str(g["label"]), g[kcol])
                rec["paper"] = float("nan") if paper is None else float(paper)
            records.append(rec)
    return pd.DataFrame.from_records(records)


def _sorted(table: pd.DataFrame, by_cols: list[str], manifest: dict[str, Any]) -> pd.DataFrame:
    if not len(table):
        return table
    # labels in spec order (the paper's row order), numbers numerically
    labels = [r.get("label") for r in manifest.get("runs", []) if r.get("label")]
    order = {lab: i for i, lab in enumerate(dict.fromkeys(labels))}

    def key(col: pd.Series) -> pd.Series:
        if col.name == "label" and order:
            rest = sorted(v for v in set(col) if v not in order)
            full = {**order, **{v: len(order) + i for i, v in enumerate(rest)}}
            return col.map(full)
        return _sort_key(col)

    return table.sort_values([*by_cols, "metric"], kind="stable", key=key).reset_index(drop=True)


def check_options(
    out: str | Path,
    experiment: str,
    *,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    epochs: Sequence[int] | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[list[str], list[str]]:
    """Check a report's options against the row files' schema and manifest, without an engine.

    Returns the group columns and metrics :func:`aggregate` will use (before
    columns that vary inside a group are added).  ``hedgerow report`` calls it
    before the JVM starts, so a typo costs a second, not a Spark start.
    """
    manifest = read_manifest(out, experiment) or {}
    files = good_row_files(out, warn)
    if not files:
        raise _no_rows(out)
    known = _experiments(files)
    if experiment not in known:  # before the columns of other experiments are resolved
        raise HedgerowError(f"{out}: no rows of experiment {experiment!r}; "
                            f"found: {', '.join(known) or '(none)'}")
    columns, numeric = row_schema(files)
    by_cols, mets = resolve_options(columns, numeric, manifest, by, metrics, experiment)
    if epochs is None:
        epochs = (manifest.get("report") or {}).get("epochs") or None
    if epochs and manifest.get("kind", "run") not in ("run", "churn"):
        raise HedgerowError(
            f"--epochs: {experiment!r} is a {manifest.get('kind')} experiment; "
            "epochs exist only for kind: run (epochs) and kind: churn (snapshots)"
        )
    return by_cols, mets


def aggregate(
    spark: Any,
    out: str | Path,
    experiment: str,
    *,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    epochs: Sequence[int] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Report:
    """Mean, 95% CI and count of each metric per group, with the paper's value where known.

    Parameters
    ----------
    spark : SparkSession or None
        ``None``: aggregate in process (pyarrow + pandas); a session: Spark SQL.
        Both give the same numbers (tested).
    out : path
        Sweep output directory.
    experiment : str
        Experiment name (rows of other experiments are ignored).
    by : list of str, optional
        Group columns or spec keys (``nodes``, ``scenario.workload.nodes``,
        ``params.kr``).  Default: the spec's ``report.by``, else ``label``
        plus the swept keys (plus ``epoch`` for ``kind: run``).  Configuration
        columns that vary inside a group are added (never pooled).
    metrics : list of str, optional
        Metric columns.  Default: the spec's ``report.metrics``, else every
        numeric metric.
    epochs : list of int, optional
        ``kind: run`` only: keep just these epochs of every run; a negative
        number counts from each run's last epoch (``[0, -1]``: first and last).
        Default: the spec's ``report.epochs``, else every epoch.
    warn : callable, optional
        Called with one line per corrupt or foreign file skipped.

    Returns
    -------
    Report
        ``table`` has the group columns, then ``metric, mean, ci95, n, paper``;
        only runs of the current spec (the manifest's run ids) are in it.

    Raises
    ------
    HedgerowError
        Unknown ``--by``/``--metric`` (checked before any engine starts), no
        rows of the experiment, every run failed, or a corrupt manifest.
    """
    from hedgerow.experiment.reference import REFERENCES

    by_cols, metrics = check_options(
        out, experiment, by=by, metrics=metrics, epochs=epochs, warn=warn
    )
    manifest = read_manifest(out, experiment) or {}
    files = good_row_files(out)
    columns, _ = row_schema(files)
    if epochs is None:
        epochs = (manifest.get("report") or {}).get("epochs") or None
    if spark is None:
        local = load_rows_local(out, experiment=experiment)
        # columns that only other experiments' files have are null here, as Spark's merged
        # schema makes them
        missing = [c for c in columns if c not in local.columns]
        if missing:
            local = pd.concat([local, pd.DataFrame(None, index=local.index, columns=missing)],
                              axis=1)  # fmt: skip
        eng: Any = _LocalEngine(local)
    else:
        eng = _SparkEngine(load_rows(spark, out, experiment=experiment).persist())
    config = [c for c in columns if not is_metric_column(c) and c not in _NOT_CONFIG]
    idx_cols = list(dict.fromkeys(["run_id", "status", *by_cols, *config,
                                   *(["code"] if "code" in columns else [])]))  # fmt: skip
    try:
        index = eng.index(idx_cols)
        if index.empty:
            known = _experiments(files)
            raise HedgerowError(
                f"{out}: no rows of experiment {experiment!r}; "
                f"found: {', '.join(known) or '(none)'}"
            )
        spec_ids = {r["run_id"] for r in manifest.get("runs", []) if r.get("run_id")}
        notes: list[str] = []
        if not manifest:
            spec_ids = set(index["run_id"])
            notes.append(
                f"no manifest of {experiment!r} in {out}/_manifests: every row of the "
                "experiment is taken as one spec"
            )
        mine = index[index["run_id"].isin(spec_ids)]
        others = index[~index["run_id"].isin(spec_ids)]
        ok_mine = mine[mine["status"] == "ok"]
        if ok_mine.empty:
            if len(mine):
                first = _first_error(out, experiment, files)
                raise HedgerowError(
                    f"{experiment}: all {len(mine)} runs in {out} failed ({first}); fix the "
                    f"cause and rerun hedgerow sweep SPEC --out {out}"
                )
            raise HedgerowError(
                f"{experiment}: none of the {len(spec_ids)} runs of the current spec has a row "
                f"in {out} ({len(others)} rows of other versions of the spec); "
                f"run hedgerow sweep SPEC --out {out}"
            )
        extra = _varying(ok_mine, by_cols, config)
        if extra:
            notes.append(
                "grouped also by " + ", ".join(extra) + ": they differ inside a group"
            )
        if "code" in ok_mine.columns and ok_mine["code"].fillna("unknown").nunique() > 1:
            extra.append("code")
            notes.append(
                "the runs were made by different Hedgerow code versions (column code); "
                "hedgerow sweep SPEC --out DIR --redo-stale recomputes the older ones"
            )
        by_final = [*by_cols, *extra]
        if epochs:
            eng.epochs(epochs)
        ref = REFERENCES.get(manifest.get("reference") or "") if manifest.get("reference") else None
        if ref is None and experiment in REFERENCES:
            ref = REFERENCES[experiment]
        table = _records(eng.group(spec_ids, by_final, metrics, True), by_final, metrics, ref)
        table = _sorted(table, by_final, manifest)
        other_table = None
        other_by: list[str] = []
        if len(others):
            ok_others = others[others["status"] == "ok"]
            cfg = [c for c in config if c not in by_cols]
            differ = [
                c for c in cfg
                if set(ok_others[c].astype(str)) != set(ok_mine[c].astype(str))
            ]  # fmt: skip
            other_by = [*by_cols, *dict.fromkeys([*differ, *_varying(ok_others, by_cols, cfg)])]
            if len(ok_others):
                grouped = eng.group(spec_ids, other_by, metrics, False)
                other_table = _sorted(_records(grouped, other_by, metrics, None), other_by, {})
    finally:
        if spark is not None:
            eng.df.unpersist()
    if ref is not None:
        if not ("label" in by_final and _ref_column(ref.key, by_final) is not None):
            notes.append(f"paper values need --by to include label and {ref.key}")
        if ref.notes:
            notes.append(f"{ref.title}. {ref.notes}")
    counts = mine["status"].value_counts().to_dict()
    return Report(
        experiment=experiment,
        by=by_final,
        metrics=list(metrics),
        table=table,
        runs_ok=int(counts.get("ok", 0)),
        runs_failed=int(sum(v for k, v in counts.items() if k != "ok")),
        runs_expected=len(manifest["runs"]) if manifest.get("runs") else None,
        reference=ref.name if ref is not None else None,
        notes=notes,
        other_runs=len(others),
        other_by=other_by,
        other_table=other_table,
        engine="local" if spark is None else "spark",
    )


def _experiments(files: Sequence[Path]) -> list[str]:
    import pyarrow.parquet as pq

    names: set[str] = set()
    for f in files:
        names.update(v for v in pq.read_table(f, columns=["experiment"])["experiment"].to_pylist()
                     if v)  # fmt: skip
    return sorted(names)


def _first_error(out: str | Path, experiment: str, files: Sequence[Path]) -> str:
    import pyarrow.parquet as pq

    for f in files:
        t = pq.read_table(f)
        if "error" not in t.column_names:
            continue
        for exp, err in zip(t["experiment"].to_pylist(), t["error"].to_pylist(), strict=True):
            if exp == experiment and err:
                return "first error: " + err.splitlines()[0][:200]
    return "no error recorded"


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


def _tidy_markdown(t: pd.DataFrame, by: list[str], digits: int, has_paper: bool) -> str:
    headers = [*by, "metric", "mean", "ci95", "n", *(["paper"] if has_paper else [])]
    rows = []
    for _, r in t.iterrows():
        row = [_fmt(r[c]) for c in by] + [
            r["metric"],
            _fmt(r["mean"], digits),
            _fmt(r["ci95"], digits),
            str(r["n"]),
        ]
        if has_paper:
            row.append(_fmt(r["paper"], digits))
        rows.append(row)
    return _markdown(headers, rows)


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
    if report.other_runs:
        status += (
            f"; {report.other_runs} more runs of {report.experiment!r} in the folder are not "
            "in the current spec (an earlier version of it) and are shown apart below"
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
        parts.append(_tidy_markdown(t, report.by, digits, has_paper))
    if report.other_table is not None and len(report.other_table):
        parts += ["", f"### not in the current spec: {report.other_runs} runs, not included above",
                  ""]  # fmt: skip
        parts.append(_tidy_markdown(report.other_table, report.other_by, digits, False))
    for note in report.notes:
        parts += ["", f"note: {note}"]
    return "\n".join(parts).rstrip() + "\n"
