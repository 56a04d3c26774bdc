"""A declared figure from a results folder: its tidy table (with the paper's values) and its image.

:func:`figure_table` turns the rows of a figure's experiment into the tidy
table it is drawn from (our mean, 95% CI, runs and the paper's value where
:mod:`hedgerow.experiment.reference` has one); :func:`draw_figure` draws it
with :mod:`hedgerow.figures.plots`.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from hedgerow.errors import ParameterError
from hedgerow.experiment.reference import REFERENCES, Reference
from hedgerow.figures.papers import FigureSpec, Results
from hedgerow.figures.tidy import last_epochs, summarise

__all__ = ["draw_figure", "figure_rows", "figure_table", "reference_of"]


def reference_of(results: Results, experiment: str) -> Reference | None:
    """The paper values of an experiment: its manifest's ``reference:``, else by name."""
    path = results.out / "_manifests" / f"{results.name(experiment)}.json"
    name = None
    if path.is_file():
        name = json.loads(path.read_text(encoding="utf-8")).get("reference")
    return REFERENCES.get(name or experiment)


def figure_table(fig: FigureSpec, results: Results) -> pd.DataFrame:
    """The tidy table of ``fig``: group columns, ``metric, mean, ci95, n, paper``.

    ``paper`` is ``NaN`` where the paper states no value for the cell.
    """
    df = figure_rows(fig, results)
    metrics = [m for m, _ in fig.panels]
    if df.empty or fig.kind == "scores":
        return pd.DataFrame(columns=["label", "metric", "mean", "ci95", "n", "paper"])
    if fig.labels is not None:
        df = df[df["label"].isin(fig.labels)]
    if fig.kind == "epochs":
        by = [fig.series, "epoch"]
    else:
        if fig.last:
            df = last_epochs(df, 1)
        by = [c for c in (fig.group, fig.x, fig.series) if c]
    ref = reference_of(results, fig.experiment)
    key = _key_column(ref.key, df.columns) if ref is not None else None
    if key is not None:
        by.append(key)
    table = summarise(df, list(dict.fromkeys(by)), metrics)
    paper = []
    for _, r in table.iterrows():
        v = None
        if ref is not None and fig.kind != "epochs":
            v = ref.value(str(r["metric"]), str(r["label"]), r.get(key))
        paper.append(float("nan") if v is None else float(v))
    table["paper"] = paper
    order_list = list(fig.labels or ()) + [
        lab for e in (fig.experiment, *fig.also) for lab in _manifest_labels(results, e)]
    order = {lab: i for i, lab in enumerate(dict.fromkeys(order_list))}
    if order and len(table):  # the paper's series order (the spec's variant order)
        table = table.sort_values("label", key=lambda s: s.map(order).fillna(len(order)),
                                  kind="stable")
    return table.reset_index(drop=True)


def figure_rows(fig: FigureSpec, results: Results) -> pd.DataFrame:
    """The ok rows a figure is drawn from: its experiment's, then those of ``fig.also`` held.

    The ``group`` column's values are renamed by ``fig.families``.

    Examples
    --------
    >>> import tempfile
    >>> from hedgerow.figures.papers import FigureSpec, Results
    >>> fig = FigureSpec("f", "t", "none", "lines", panels=[("avg_degree", "degree")],
    ...                  x="nodes", also=("none-either",))
    >>> len(figure_rows(fig, Results(tempfile.mkdtemp())))
    0
    """
    frames = [results.ok(e) for e in (fig.experiment, *fig.also)]
    frames = [f for f in frames if len(f)]
    if not frames:
        return results.ok(fig.experiment)
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True, sort=False)
    if fig.families and fig.group is not None and fig.group in df:
        df = df.assign(**{fig.group: df[fig.group].replace(dict(fig.families))})
    return df


def _key_column(key: str, columns: pd.Index) -> str | None:
    """The result column holding a reference's key (``adaptive`` may be ``run_adaptive``).

    Examples
    --------
    >>> _key_column("adaptive", pd.Index(["label", "run_adaptive"]))
    'run_adaptive'
    >>> _key_column("nodes", pd.Index(["label"])) is None
    True
    """
    for col in (key, f"run_{key}"):
        if col in columns:
            return col
    return None


def _manifest_labels(results: Results, experiment: str) -> list[str]:
    path = results.out / "_manifests" / f"{results.name(experiment)}.json"
    if not path.is_file():
        return []
    runs = json.loads(path.read_text(encoding="utf-8")).get("runs", [])
    return list(dict.fromkeys(r.get("label") for r in runs if r.get("label")))


def draw_figure(fig: FigureSpec, results: Results, table: pd.DataFrame | None = None):
    """The matplotlib figure of ``fig`` (``None`` when it has no data)."""
    from hedgerow.figures import plots

    title = f"{fig.title}" + (" — quick run" if results.quick else "")
    if fig.kind == "scores":
        scores = results.scores(fig.score_run) if fig.score_run else None
        if scores is None:
            return None
        return plots.score_distribution(scores, title=title)
    table = figure_table(fig, results) if table is None else table
    if table.empty:
        return None
    if fig.kind == "lines":
        if fig.x is None:
            raise ParameterError(f"figure {fig.id}: a lines figure needs x", key="x")
        if fig.x not in table:  # rows of another kind of run (e.g. snapshots, not cycles)
            return None
        return plots.lines(table, x=fig.x, panels=fig.panels, series=fig.series,
                           xlabel=fig.xlabel, title=title, logy=fig.logy, group=fig.group,
                           logx=fig.logx)
    if fig.kind == "epochs":
        return plots.epochs(table, panels=fig.panels, series=fig.series, title=title)
    if fig.kind == "bars":
        return plots.bars(table, panels=fig.panels, series=fig.series, group=fig.group,
                          title=title, logy=fig.logy)
    raise ValueError(f"figure {fig.id}: unknown kind {fig.kind!r}")


def is_missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))
