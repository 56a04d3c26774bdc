"""Result rows of a results folder as pandas frames: one attempt per run, tidy summaries.

The figures and the HTML report read a results folder (``DIR/rows/*.parquet``,
:mod:`hedgerow.pipeline.store`) with pandas, without starting Spark: a
reproduction's rows are small (one file per run).  :func:`load_results` keeps,
for every ``run_id``, its best attempt (the latest ``ok`` attempt, else the
latest attempt: the rule of :func:`hedgerow.pipeline.report.load_rows`), and
:func:`summarise` gives the tidy table the figures draw from: group columns,
``metric, mean, ci95, n`` (``ci95`` is the half-width of the 95% Student-t
interval of the mean over runs, ``NaN`` for a single run).

This module does not import matplotlib.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from hedgerow.errors import HedgerowError

__all__ = ["ci95", "last_epochs", "load_results", "summarise"]


def _row_files(out: str | Path) -> list[Path]:
    rows = Path(out) / "rows"
    if not rows.is_dir():
        return []
    return sorted(p for p in rows.glob("*.parquet") if not p.name.startswith("."))


def load_results(out: str | Path, experiment: str | None = None) -> pd.DataFrame:
    """Every row of ``out`` (of one ``experiment``), one attempt per run id.

    Returns an empty frame when there are none.

    Examples
    --------
    >>> load_results("/nonexistent", "x").empty
    True
    """
    files = _row_files(out)
    frames = []
    for f in files:
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
    df = pd.concat(frames, ignore_index=True, sort=False)
    # best attempt per run: ok first, then the latest
    att = (
        df.assign(_ok=(df["status"] == "ok").astype(int))
        .groupby(["run_id", "attempt_id"], sort=False)
        .agg(_ok=("_ok", "max"), _t=("finished_at", "max"))
        .reset_index()
        .sort_values(["run_id", "_ok", "_t"], ascending=[True, False, False])
        .drop_duplicates("run_id")
    )
    keep = set(zip(att["run_id"], att["attempt_id"], strict=True))
    mask = [(r, a) in keep for r, a in zip(df["run_id"], df["attempt_id"], strict=True)]
    return df[mask].reset_index(drop=True)


def ci95(values: Sequence[float]) -> float:
    """Half-width of the 95% Student-t interval of the mean (``NaN`` below two values).

    Examples
    --------
    >>> round(ci95([1.0, 2.0, 3.0]), 4)
    2.4841
    >>> math.isnan(ci95([1.0]))
    True
    """
    x = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    if len(x) < 2:
        return float("nan")
    from scipy.stats import t

    return float(t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


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


def summarise(
    df: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    *,
    per_run_first: bool = True,
) -> pd.DataFrame:
    """Mean, 95% CI and number of runs of each metric per group.

    With ``per_run_first`` (default) the rows of a run inside one group
    (several epochs or snapshots) are averaged first, so ``n`` counts runs.

    Examples
    --------
    >>> d = pd.DataFrame({"run_id": list("abc"), "status": "ok", "label": "x",
    ...                   "deg": [1.0, 2.0, 3.0]})
    >>> t = summarise(d, ["label"], ["deg"])
    >>> t[["label", "metric", "mean", "n"]].values.tolist()
    [['x', 'deg', 2.0, 3]]
    """
    cols = ["label", *by, "metric", "mean", "ci95", "n"]
    cols = list(dict.fromkeys(cols))
    if df.empty:
        return pd.DataFrame(columns=cols)
    ok = df[df["status"] == "ok"] if "status" in df else df
    by = [b for b in dict.fromkeys(["label", *by]) if b in ok.columns]
    records = []
    for m in metrics:
        if m not in ok.columns:
            continue
        sub = ok[[*by, "run_id", m]].copy()
        sub[m] = pd.to_numeric(sub[m], errors="coerce")
        sub = sub.dropna(subset=[m])
        if per_run_first:
            sub = sub.groupby([*by, "run_id"], dropna=False, sort=False)[m].mean().reset_index()
        for key, g in sub.groupby(by, dropna=False, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            vals = g[m].to_numpy(dtype=float)
            rec = dict(zip(by, key, strict=True))
            rec.update(metric=m, mean=float(vals.mean()), ci95=ci95(vals), n=len(vals))
            records.append(rec)
    out = pd.DataFrame.from_records(records, columns=[*by, "metric", "mean", "ci95", "n"])
    return out


def spec_of(df: pd.DataFrame) -> dict:
    """The scenario of the first row (``spec_json``), or ``{}``."""
    if df.empty or "spec_json" not in df:
        return {}
    return json.loads(df["spec_json"].iloc[0])
