"""Result rows as pandas frames, and the reporting derivations every report shares.

The figures, the reproductions' checks and ``hedgerow report`` (in process)
read a results folder (``DIR/rows/*.parquet``, :mod:`hedgerow.pipeline.store`)
with pandas.  The four derivations they share are written once, here:

* :func:`best_attempt`: for every ``run_id`` the rows of its best attempt, the
  latest ``ok`` attempt, else the latest attempt, ties to the smallest
  ``attempt_id`` (the Spark engine of :func:`hedgerow.pipeline.report.load_rows`
  orders its window the same way; a test compares them);
* :func:`ci95` / :func:`ci95_halfwidth`: the half-width of the 95% Student-t
  interval of a mean (``NaN`` below two values);
* :func:`run_means`: each run's rows averaged first, the step of every mean
  over runs; :func:`over_runs` takes it for one metric, with the epochs of
  each run (all, first, last, the last ``k``) and the reduction (the mean over
  runs, each run's value, or the rows themselves) as arguments;
* :func:`summarise`: the grouped tidy table (group columns, ``metric, mean,
  ci95, n``), per run first (figures, ``n`` counts runs) or over the rows as
  they are (``hedgerow report``).

This module does not import matplotlib.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hedgerow.errors import HedgerowError

__all__ = [
    "best_attempt",
    "ci95",
    "ci95_halfwidth",
    "group_stats",
    "last_epochs",
    "load_results",
    "over_runs",
    "run_means",
    "select_epochs",
    "summarise",
]

#: the columns that name an attempt: all rows of one attempt share them
_ATTEMPT = ["run_id", "status", "finished_at", "attempt_id"]


def _row_files(out: str | Path) -> list[Path]:
    rows = Path(out) / "rows"
    if not rows.is_dir():
        return []
    return sorted(p for p in rows.glob("*.parquet") if not p.name.startswith("."))


def best_attempt(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of every run's best attempt: latest ``ok``, else latest; ties to the first id.

    Attempts are ordered by ``status == "ok"``, then ``finished_at`` (latest
    first), then ``attempt_id`` (smallest first), the order of the Spark window
    in :func:`hedgerow.pipeline.report.load_rows`.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["r", "r", "r", "s"], "attempt_id": ["a", "b", "b", "c"],
    ...                   "status": ["ok", "failed", "failed", "failed"],
    ...                   "finished_at": [1.0, 2.0, 2.0, 1.0], "x": [1, 2, 3, 4]})
    >>> best_attempt(d)["x"].tolist()
    [1, 4]
    """
    if df.empty:
        return df
    key = df[_ATTEMPT].copy()
    key["_ok"] = (key["status"] == "ok").astype(int)
    best = key.sort_values(
        ["run_id", "_ok", "finished_at", "attempt_id"], ascending=[True, False, False, True]
    ).drop_duplicates("run_id")
    keep = pd.MultiIndex.from_frame(best[_ATTEMPT])
    mine = pd.MultiIndex.from_frame(df[_ATTEMPT])
    return df[mine.isin(keep)].reset_index(drop=True)


def load_results(out: str | Path, experiment: str | None = None) -> pd.DataFrame:
    """Every row of ``out`` (of one ``experiment``), the best attempt of each run id.

    Returns an empty frame when there are none.

    Examples
    --------
    >>> load_results("/nonexistent", "x").empty
    True
    """
    frames = []
    for f in _row_files(out):
        try:
            df = pd.read_parquet(f)
        except Exception as e:  # a damaged file names itself
            raise HedgerowError(f"{f}: cannot read result rows ({e})") from None
        if experiment is not None and "experiment" in df:
            df = df[df["experiment"] == experiment]
        if len(df):
            frames.append(df)
    if not frames:
        return pd.DataFrame()
    return best_attempt(pd.concat(frames, ignore_index=True, sort=False))


def ci95_halfwidth(sd: float, n: int) -> float:
    """Half-width of the 95% Student-t interval of a mean of ``n`` values of deviation ``sd``.

    Examples
    --------
    >>> round(ci95_halfwidth(1.0, 3), 4)
    2.4841
    >>> math.isnan(ci95_halfwidth(1.0, 1))
    True
    """
    if n is None or n < 2 or sd is None or (isinstance(sd, float) and math.isnan(sd)):
        return float("nan")
    from scipy.special import stdtrit  # the t quantile; scipy.stats costs a second to import

    return float(stdtrit(n - 1, 0.975) * sd / math.sqrt(n))


def ci95(values: Sequence[float]) -> float:
    """:func:`ci95_halfwidth` of the values given (missing ones dropped).

    Examples
    --------
    >>> round(ci95([1.0, 2.0, 3.0]), 4)
    2.4841
    >>> math.isnan(ci95([1.0]))
    True
    """
    x = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    return ci95_halfwidth(float(x.std(ddof=1)), len(x)) if len(x) >= 2 else float("nan")


def last_epochs(df: pd.DataFrame, count: int = 1) -> pd.DataFrame:
    """The rows of each run's last ``count`` epochs (rows without epochs are kept whole).

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["a"] * 3 + ["b"], "epoch": [0, 1, 2, 0]})
    >>> last_epochs(d)["epoch"].tolist()
    [2, 0]
    """
    if df.empty or "epoch" not in df or df["epoch"].isna().all():
        return df
    last = df.groupby("run_id")["epoch"].transform("max")
    return df[df["epoch"] > last - count]


def select_epochs(df: pd.DataFrame, epochs: str | int = "all") -> pd.DataFrame:
    """The rows of each run's ``epochs``: ``"all"``, ``"first"``, ``"last"`` or the last ``k``.

    Rows without epochs are kept whole by ``"last"`` and ``k`` (:func:`last_epochs`);
    ``"first"`` keeps epoch 0.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["a"] * 3 + ["b"], "epoch": [0, 1, 2, 0]})
    >>> select_epochs(d, "first")["epoch"].tolist(), select_epochs(d, 2)["epoch"].tolist()
    ([0, 0], [1, 2, 0])
    """
    if epochs == "all":
        return df
    if epochs == "first":
        return df[df["epoch"] == 0] if len(df) else df
    if epochs == "last":
        return last_epochs(df, 1)
    if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 0:
        return last_epochs(df, epochs)
    raise ValueError(f"epochs: {epochs!r} is not 'all', 'first', 'last' or a count > 0")


def over_runs(
    df: pd.DataFrame,
    metric: str,
    *,
    epochs: str | int = "all",
    reduce: str = "mean",
    where: Mapping[str, Any] | None = None,
) -> Any:
    """``metric`` over runs: each run's rows (of the ``epochs`` chosen) averaged first.

    Parameters
    ----------
    df : DataFrame
        Result rows (one attempt per run, :func:`load_results`).
    metric : str
        A metric column; its values are read as numbers.
    epochs : {"all", "first", "last"} or int
        Which rows of each run count (:func:`select_epochs`).
    reduce : {"mean", "runs", "rows"}
        ``"mean"``: the mean over runs of each run's mean (``NaN`` without
        rows); ``"runs"``: each run's mean (a Series by ``run_id``);
        ``"rows"``: the values of the rows themselves, missing ones dropped
        (``None`` without rows or without the column).
    where : mapping, optional
        Keep rows whose column equals the value (or is in it, for a list,
        tuple or set); a column that does not exist keeps nothing.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["a", "a", "b"], "epoch": [0, 1, 0],
    ...                   "label": "x", "deg": [1.0, 3.0, 6.0]})
    >>> over_runs(d, "deg"), over_runs(d, "deg", epochs="first")
    (4.0, 3.5)
    >>> over_runs(d, "deg", reduce="runs").tolist(), over_runs(d, "deg", reduce="rows").tolist()
    ([2.0, 6.0], [1.0, 3.0, 6.0])
    >>> import math; math.isnan(over_runs(d, "deg", where={"label": "y"}))
    True
    """
    if reduce not in ("mean", "runs", "rows"):
        raise ValueError(f"reduce: {reduce!r} is not 'mean', 'runs' or 'rows'")
    sub = df
    for k, v in (where or {}).items():
        if k not in sub:
            sub = sub.iloc[0:0]
            break
        col = sub[k]
        sub = sub[col.isin(v) if isinstance(v, (list, tuple, set)) else col == v]
    if len(sub) and epochs != "all":
        sub = select_epochs(sub, epochs)
    if sub.empty or metric not in sub:
        return None if reduce == "rows" else float("nan")
    vals = pd.to_numeric(sub[metric], errors="coerce")
    if reduce == "rows":
        vals = vals.dropna()
        return None if vals.empty else vals
    per_run = run_means(sub, [], [metric], sort=True).set_index("run_id")[metric]
    return per_run if reduce == "runs" else float(per_run.mean())


def run_means(
    df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str], *, sort: bool = False
) -> pd.DataFrame:
    """Each run's rows averaged: one row per ``(*by, run_id)``, the metrics read as numbers.

    The first step of every mean over runs (:func:`over_runs`, :func:`group_stats`):
    a run with several rows in a group (epochs, snapshots, rounds) counts once.
    Rows come in first-seen order, or sorted with ``sort``.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["a", "a", "b"], "deg": [1, 3, 6]})
    >>> run_means(d, [], ["deg"]).values.tolist()
    [['a', 2.0], ['b', 6.0]]
    """
    by = list(by)
    frame = pd.DataFrame(
        {m: pd.to_numeric(df[m], errors="coerce").astype(float) for m in metrics},
        index=df.index,
    )
    frame = pd.concat([df[[*by, "run_id"]], frame], axis=1)
    grouped = frame.groupby([*by, "run_id"], dropna=False, sort=sort)[list(metrics)]
    return grouped.mean().reset_index()


def group_stats(
    df: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    *,
    per_run_first: bool = True,
    sort: bool = False,
) -> pd.DataFrame:
    """Mean, sample deviation and count of each metric per group of ``by``.

    One row per group (first seen first, or sorted with ``sort``): the ``by``
    columns, then ``mean<i>``, ``sd<i>`` and ``n<i>`` for the ``i``-th metric
    (read as numbers).  With
    ``per_run_first`` each run's rows in a group are averaged first, so ``n``
    counts runs; without, every row counts (``hedgerow report``).  Missing
    groups values (``NaN``) form groups of their own.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": ["a", "a", "b"], "label": "x", "deg": [1.0, 3.0, 6.0]})
    >>> group_stats(d, ["label"], ["deg"])[["label", "mean0", "n0"]].values.tolist()
    [['x', 4.0, 2]]
    >>> group_stats(d, ["label"], ["deg"], per_run_first=False)["n0"].tolist()
    [3]
    """
    by = list(by)
    vals = [f"_v{i}" for i in range(len(metrics))]
    if per_run_first:  # each run's rows in a group averaged first
        frame = run_means(df, by, metrics, sort=sort).drop(columns="run_id")
        frame.columns = [*by, *vals]
    else:
        frame = pd.DataFrame(
            {v: pd.to_numeric(df[m], errors="coerce").astype(float)
             for v, m in zip(vals, metrics, strict=True)},
            index=df.index,
        )  # fmt: skip
        frame = pd.concat([df[by], frame], axis=1)
    # over runs: numpy's mean and deviation of each group's run values (the figures' numbers
    # since they exist); over rows: pandas' grouped reductions (the numbers the Spark engine
    # of ``hedgerow report`` is compared with)
    mean, sd = (_values_mean, _values_sd) if per_run_first else ("mean", "std")
    agg: dict[str, tuple[str, Any]] = {}
    for i, v in enumerate(vals):
        agg.update({f"mean{i}": (v, mean), f"sd{i}": (v, sd), f"n{i}": (v, "count")})
    if not by:
        if frame.empty:
            return pd.DataFrame()
        row = {k: f(frame[v]) if callable(f) else getattr(frame[v], f)()
               for k, (v, f) in agg.items()}  # fmt: skip
        return pd.DataFrame([row])
    return frame.groupby(by, dropna=False, sort=sort).agg(**agg).reset_index()


def _values_mean(s: pd.Series) -> float:
    x = s.dropna().to_numpy(dtype=float)
    return float(x.mean()) if len(x) else float("nan")


def _values_sd(s: pd.Series) -> float:
    x = s.dropna().to_numpy(dtype=float)
    return float(x.std(ddof=1)) if len(x) > 1 else float("nan")


def summarise(
    df: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    *,
    per_run_first: bool = True,
) -> pd.DataFrame:
    """The tidy table of a figure: ``label``, the ``by`` columns, ``metric, mean, ci95, n``.

    Only ``ok`` rows count; ``label`` is always a group column (when present);
    groups without a value of a metric are left out.  With ``per_run_first``
    (default) ``n`` counts runs (:func:`group_stats`).

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": list("abc"), "status": "ok", "label": "x",
    ...                   "deg": [1.0, 2.0, 3.0]})
    >>> t = summarise(d, ["label"], ["deg"])
    >>> t[["label", "metric", "mean", "n"]].values.tolist()
    [['x', 'deg', 2.0, 3]]
    """
    cols = list(dict.fromkeys(["label", *by, "metric", "mean", "ci95", "n"]))
    if df.empty:
        return pd.DataFrame(columns=cols)
    ok = df[df["status"] == "ok"] if "status" in df else df
    by = [b for b in dict.fromkeys(["label", *by]) if b in ok.columns]
    metrics = [m for m in metrics if m in ok.columns]
    stats = group_stats(ok, by, metrics, per_run_first=per_run_first) if metrics else None
    records = []
    for i, m in enumerate(metrics):
        assert stats is not None  # metrics is not empty
        for row in stats.itertuples(index=False):
            r = dict(zip(stats.columns, row, strict=True))
            n = int(r[f"n{i}"])
            if n == 0:
                continue
            rec = {b: r[b] for b in by}
            rec.update(metric=m, mean=float(r[f"mean{i}"]),
                       ci95=ci95_halfwidth(float(r[f"sd{i}"]), n), n=n)  # fmt: skip
            records.append(rec)
    return pd.DataFrame.from_records(records, columns=[*by, "metric", "mean", "ci95", "n"])


def spec_of(df: pd.DataFrame) -> dict:
    """The scenario of the first row (``spec_json``), or ``{}``."""
    if df.empty or "spec_json" not in df:
        return {}
    return json.loads(df["spec_json"].iloc[0])
