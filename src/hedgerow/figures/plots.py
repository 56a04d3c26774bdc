"""The paper figures, drawn with matplotlib from tidy tables (:mod:`hedgerow.figures.tidy`).

Every function takes a tidy table (group columns, ``metric, mean, ci95, n``
and optionally ``paper``) and returns a :class:`matplotlib.figure.Figure`
with one panel per metric, laid out as the paper lays its figure out:

* :func:`lines` — a metric against a swept value (SpiderCast Figures 6, 11,
  12, 13): one line per series, our mean with its 95% CI as error bars, the
  paper's values as hollow markers of the same colour;
* :func:`epochs` — a metric per epoch (Topiary Figures 3-7, 9, 10): one line
  per series with a shaded 95% CI; a series with a single epoch (a static
  baseline) is drawn as a dashed horizontal line;
* :func:`bars` — one bar per series, grouped by a second column (the
  head-to-head), error bars for the CI;
* :func:`score_distribution` — Topiary Figure 8: every node's score, sorted,
  one curve per epoch coloured by the epoch.

:func:`save` writes PNG and SVG.  Only figure and report code imports this
module (matplotlib stays out of the simulation and sweep code).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never a window

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["bars", "epochs", "lines", "save", "score_distribution"]

Panel = tuple[str, str]  # (metric, axis label)


def _panels(n: int, width: float = 4.6, height: float = 3.6,
            legend: float = 2.4) -> tuple[Figure, list]:
    """``n`` panels side by side, room on the right for the legend."""
    fig, axes = plt.subplots(1, n, figsize=(width * n + legend, height), squeeze=False)
    return fig, list(axes[0])


def _finish(fig: Figure, axes: list, title: str, paper: bool = False) -> None:
    """Legend outside the last panel (one entry for the paper's markers), wrapped title."""
    import textwrap

    from matplotlib.lines import Line2D

    seen: dict[str, object] = {}
    for ax in axes:  # every series once, whichever panel has it
        if ax.get_yscale() == "linear":
            ax.ticklabel_format(axis="y", useOffset=False, style="plain")
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    handles, labels = list(seen.values()), list(seen)
    if paper:
        handles.append(Line2D([], [], ls="none", marker="D", ms=7, mfc="none", mec="0.2"))
        labels.append("paper (hollow ◇, same colour)")
    if handles:
        axes[-1].legend(handles, labels, fontsize=7, loc="upper left",
                        bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize=10)
    fig.tight_layout()


def _colours(n: int) -> list:
    """``n`` distinct colours: the style's cycle when it has enough, else ``tab20``, else ``turbo``.

    A figure with more series than the cycle's ten colours would otherwise draw two
    protocols alike (the head-to-head has sixteen).

    Examples
    --------
    >>> c = _colours(16)
    >>> len(c) >= 16, len(set(map(str, c[:16]))), _colours(3) == _colours(10)
    (True, 16, True)
    """
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if n <= len(cycle):
        return list(cycle)
    if n <= 20:
        return [plt.get_cmap("tab20")(i) for i in range(20)]
    cmap = plt.get_cmap("turbo")
    return [cmap(i / (n - 1)) for i in range(n)]


def _order(values: Sequence) -> list:
    seen = list(dict.fromkeys(values))
    try:
        return sorted(seen, key=float)
    except (TypeError, ValueError):
        return seen


def _num(values: pd.Series) -> np.ndarray:
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)


#: the line styles of a figure's groups, in order
_STYLES = ("-", "--", ":", "-.")


def lines(
    table: pd.DataFrame,
    *,
    x: str,
    panels: Sequence[Panel],
    series: str = "label",
    xlabel: str | None = None,
    title: str = "",
    logy: Sequence[str] = (),
    group: str | None = None,
    logx: bool = False,
) -> Figure:
    """One panel per metric: ``metric`` against ``x``, one line per ``series``.

    With ``group`` (a column), one line per ``(series, group value)``: the
    series' colour, a line style per group value.  ``logx`` draws ``x`` on a
    symmetric log scale (it may hold 0).

    Examples
    --------
    >>> t = pd.DataFrame({"label": ["a", "a"], "nodes": [1, 2], "metric": "deg",
    ...                   "mean": [1.0, 2.0], "ci95": [0.1, 0.2], "n": 3,
    ...                   "paper": [1.1, float("nan")]})
    >>> fig = lines(t, x="nodes", panels=[("deg", "degree")])
    >>> len(fig.axes), len(fig.axes[0].lines) >= 2
    (1, True)
    """
    fig, axes = _panels(len(panels), width=6.0 if len(panels) == 1 else 4.6)
    has_paper = False
    names = _order(table[series]) if len(table) else []
    if series == "label":
        names = list(dict.fromkeys(table[series]))
    colours = _colours(len(names))
    for ax, (metric, ylabel) in zip(axes, panels, strict=True):
        sub = table[table["metric"] == metric]
        groups = list(dict.fromkeys(sub[group])) if group is not None else [None]
        for i, name in enumerate(names):
            for j, g in enumerate(groups):
                s = sub[sub[series] == name]
                if g is not None:
                    s = s[s[group] == g]
                if s.empty:
                    continue
                s = s.assign(_x=_num(s[x])).sort_values("_x")
                c = colours[i % len(colours)]
                err = np.nan_to_num(_num(s["ci95"]), nan=0.0)
                ax.errorbar(s["_x"], _num(s["mean"]), yerr=err, color=c, marker="o", ms=4,
                            capsize=3, lw=1.4, ls=_STYLES[j % len(_STYLES)],
                            label=str(name) if j == 0 else "_nolegend_")
            if "paper" in s:
                p = _num(s["paper"])
                if np.isfinite(p).any():
                    ax.plot(s["_x"], p, ls="none", marker="D", ms=8, mfc="none", mec=c,
                            mew=1.5)
                    has_paper = True
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel)
        if metric in logy:
            ax.set_yscale("log")
        if logx:
            ax.set_xscale("symlog", linthresh=1024.0)
            ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    if group is not None and len(table):  # one legend entry per line style
        from matplotlib.lines import Line2D

        for j, g in enumerate(dict.fromkeys(table[group])):
            axes[-1].add_line(Line2D([], [], color="0.3", ls=_STYLES[j % len(_STYLES)],
                                     label=f"{group}: {g}"))
    _finish(fig, axes, title, has_paper)
    return fig


def epochs(
    table: pd.DataFrame,
    *,
    panels: Sequence[Panel],
    series: str = "label",
    title: str = "",
) -> Figure:
    """One panel per metric against the epoch, one line per ``series`` with a shaded CI.

    Examples
    --------
    >>> t = pd.DataFrame({"label": ["t", "t", "r"], "epoch": [0, 1, 0], "metric": "rate",
    ...                   "mean": [0.9, 1.0, 0.8], "ci95": float("nan"), "n": 1})
    >>> fig = epochs(t, panels=[("rate", "receive rate")])
    >>> len(fig.axes[0].lines), len(fig.axes[0].collections)  # "r" is static: a dashed level
    (1, 1)
    """
    fig, axes = _panels(len(panels))
    names = list(dict.fromkeys(table[series])) if len(table) else []
    if series != "label":
        names = _order(names)
    colours = _colours(len(names))
    xmax = float(_num(table["epoch"]).max()) if len(table) else 1.0
    for ax, (metric, ylabel) in zip(axes, panels, strict=True):
        sub = table[table["metric"] == metric]
        for i, name in enumerate(names):
            s = sub[sub[series] == name]
            if s.empty:
                continue
            c = colours[i % len(colours)]
            s = s.assign(_x=_num(s["epoch"])).sort_values("_x")
            y, err = _num(s["mean"]), np.nan_to_num(_num(s["ci95"]), nan=0.0)
            if len(s) == 1:  # a static overlay: the same every epoch
                ax.hlines(y[0], 0, max(xmax, 1.0), colors=c, linestyles="--", lw=1.4,
                          label=f"{name} (static)")
                continue
            ax.plot(s["_x"], y, color=c, lw=1.4, label=str(name))
            if err.any():
                ax.fill_between(s["_x"], y - err, y + err, color=c, alpha=0.2, lw=0)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    _finish(fig, axes, title)
    return fig


def bars(
    table: pd.DataFrame,
    *,
    panels: Sequence[Panel],
    series: str = "label",
    group: str | None = None,
    title: str = "",
    logy: Sequence[str] = (),
) -> Figure:
    """One panel per metric: a bar per ``series``, grouped by ``group``, CI as error bars.

    Examples
    --------
    >>> t = pd.DataFrame({"label": ["a", "b"], "scenario": "u", "metric": "rate",
    ...                   "mean": [0.9, 1.0], "ci95": [0.01, 0.02], "n": 3})
    >>> fig = bars(t, panels=[("rate", "receive rate")], group="scenario")
    >>> len(fig.axes[0].patches)
    2
    """
    groups = list(dict.fromkeys(table[group])) if group and len(table) else [None]
    names = list(dict.fromkeys(table[series])) if len(table) else []
    width = max(4.6, 0.13 * len(names) * len(groups) + 1.5)
    if len(panels) > 2:  # two rows: the panels stay readable side by side
        cols = (len(panels) + 1) // 2
        fig, grid = plt.subplots(2, cols, figsize=(width * cols + 2.4, 7.0), squeeze=False)
        axes = list(grid.ravel())
        for extra in axes[len(panels):]:
            extra.remove()
        axes = axes[: len(panels)]
    else:
        fig, axes = _panels(len(panels), width=width)
    colours = _colours(len(names))
    width = 0.8 / max(1, len(names))
    for ax, (metric, ylabel) in zip(axes, panels, strict=True):
        sub = table[table["metric"] == metric]
        for i, name in enumerate(names):
            xs, ys, es = [], [], []
            for j, g in enumerate(groups):
                s = sub[(sub[series] == name) & ((sub[group] == g) if group else True)]
                if s.empty:
                    continue
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(float(s["mean"].iloc[0]))
                e = float(s["ci95"].iloc[0])
                es.append(0.0 if np.isnan(e) else e)
            ax.bar(xs, ys, width=width, yerr=es, capsize=2, color=colours[i % len(colours)],
                   label=str(name))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([str(g) if g is not None else "" for g in groups], fontsize=8)
        ax.set_ylabel(ylabel)
        if metric in logy:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    _finish(fig, axes, title)
    return fig


def score_distribution(scores: np.ndarray, *, title: str = "", every: int = 1) -> Figure:
    """Topiary Figure 8: each epoch's node scores sorted, coloured by the epoch.

    ``scores`` is ``(epochs, nodes)`` (``NaN`` where a node has none).

    Examples
    --------
    >>> fig = score_distribution(np.arange(12.0).reshape(3, 4))
    >>> len(fig.axes[0].lines)
    3
    """
    fig, axes = _panels(1, width=6.0, height=3.8, legend=0.5)
    ax = axes[0]
    scores = np.asarray(scores, dtype=float)
    n_epochs = scores.shape[0]
    cmap = plt.get_cmap("viridis")
    for e in range(0, n_epochs, max(1, every)):
        row = np.sort(scores[e][np.isfinite(scores[e])])
        if row.size == 0:
            continue
        ax.plot(np.arange(row.size), row, color=cmap(e / max(1, n_epochs - 1)), lw=0.9)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, max(1, n_epochs - 1)))
    fig.colorbar(sm, ax=ax, label="epoch")
    ax.set_xlabel("nodes (sorted by score)")
    ax.set_ylabel("score of the kept neighbours")
    ax.grid(alpha=0.3)
    _finish(fig, axes, title)
    return fig


def save(fig: Figure, stem: str | Path) -> dict[str, Path]:
    """Write ``stem.png`` (120 dpi) and ``stem.svg``; close the figure."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = {"png": stem.with_suffix(".png"), "svg": stem.with_suffix(".svg")}
    fig.savefig(out["png"], dpi=120)
    fig.savefig(out["svg"])
    plt.close(fig)
    return out
