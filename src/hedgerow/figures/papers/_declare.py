"""What a reproduction is: a paper, its named experiments, figures and checks, and its rows.

A :class:`Paper` names the experiment specs (``experiments/*.yaml``) that
reproduce it, how each is reduced for ``--quick`` (:class:`Quick`), the
figures drawn from their rows (:class:`FigureSpec`) and the acceptance checks
settled for it (:class:`Check`, each computed from the rows, :class:`Results`).
A figure's :class:`Tolerance` says when our mean counts as matching the
paper's value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hedgerow.errors import HedgerowError
from hedgerow.figures.tidy import load_results

__all__ = [
    "VERDICTS",
    "Check",
    "FigureSpec",
    "Named",
    "Outcome",
    "Paper",
    "Quick",
    "Results",
    "ScoreRun",
    "Tolerance",
]


@dataclass(frozen=True)
class Quick:
    """How ``--quick`` reduces a spec: replaced grid values, seeds, kept variants, settings.

    ``scenario`` sets dotted keys under the spec's ``scenario`` (``run.epochs``);
    ``overrides`` sets keys of one variant's ``overrides`` by its label
    (``{"goldfish": {"scenario.run.epochs": 4}}``: a variant that sets its own
    epochs in the full spec).  The quick experiment is named
    ``<experiment>-quick`` so its rows never mix with the full experiment's.
    """

    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    seeds: Sequence[int] | None = None
    labels: Sequence[str] | None = None
    scenario: Mapping[str, Any] = field(default_factory=dict)
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the report, e.g. ``nodes 1000, 2000; seeds 0``."""
        parts = [f"{k.rsplit('.', 1)[-1]} {', '.join(map(str, v))}" for k, v in self.grid.items()]
        if self.seeds is not None:
            parts.append(f"seeds {', '.join(map(str, self.seeds))}")
        if self.labels is not None:
            parts.append(f"series {', '.join(self.labels)}")
        parts += [f"{k.rsplit('.', 1)[-1]} {v}" for k, v in self.scenario.items()]
        parts += [f"{label}: {k.rsplit('.', 1)[-1]} {v}"
                  for label, keys in self.overrides.items() for k, v in keys.items()]
        return "; ".join(parts) or "as the full spec"


@dataclass(frozen=True)
class Named:
    """A named experiment of a paper: a spec file and its quick reduction."""

    spec: str
    experiment: str
    quick: Quick
    minutes: float
    quick_minutes: float


@dataclass(frozen=True)
class ScoreRun:
    """An in-process run whose per-node scores a figure draws (Topiary Figure 8)."""

    name: str
    protocol: str
    scenario: str
    seed: int
    epochs: int
    quick_epochs: int
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    """Our mean matches the paper's value when ``|ours - paper| <= max(abs, rel |paper|)``."""

    rel: float = 0.0
    abs: float = 0.0

    def ok(self, ours: float, paper: float) -> bool:
        """Examples
        --------
        >>> Tolerance(rel=0.1).ok(10.9, 10.0), Tolerance(abs=0).ok(1, 0)
        (True, False)
        """
        return abs(ours - paper) <= max(self.abs, self.rel * abs(paper)) + 1e-9

    def text(self) -> str:
        """Human form, e.g. ``±10%`` or ``±3``."""
        parts = []
        if self.rel:
            parts.append(f"±{self.rel * 100:g}%")
        if self.abs or not parts:
            parts.append(f"±{self.abs:g}")
        return " or ".join(parts)


class Results:
    """The rows of one reproduction's experiments, read once from a results folder."""

    def __init__(self, out: str | Path, quick: bool = False) -> None:
        self.out = Path(out)
        self.quick = quick
        self._rows: dict[str, pd.DataFrame] = {}

    def name(self, experiment: str) -> str:
        """The stored experiment name (``-quick`` appended for quick runs)."""
        return f"{experiment}-quick" if self.quick else experiment

    def rows(self, experiment: str) -> pd.DataFrame:
        """Best attempt of every run of ``experiment`` (empty when never run).

        Only the runs of the spec last swept into the folder (its manifest)
        count: rows of an earlier version of the spec stay on disk but out of
        the figures.
        """
        if experiment not in self._rows:
            df = load_results(self.out, self.name(experiment))
            manifest = self.out / "_manifests" / f"{self.name(experiment)}.json"
            if len(df) and manifest.is_file():
                runs = json.loads(manifest.read_text(encoding="utf-8")).get("runs") or []
                if runs:
                    df = df[df["run_id"].isin({r["run_id"] for r in runs})]
            self._rows[experiment] = df.reset_index(drop=True)
        return self._rows[experiment]

    def ok(self, experiment: str) -> pd.DataFrame:
        df = self.rows(experiment)
        return df[df["status"] == "ok"] if len(df) else df

    def scores_path(self, run: ScoreRun) -> Path:
        epochs = run.quick_epochs if self.quick else run.epochs
        return self.out / "scores" / f"{run.name}-seed{run.seed}-e{epochs}.npy"

    def scores(self, run: ScoreRun) -> np.ndarray | None:
        path = self.scores_path(run)
        return np.load(path) if path.is_file() else None


#: a check's result: (our value as text, passed; None = its runs are not in the results)
Outcome = tuple[str, bool | None]


#: the verdicts a check can be declared settled with: the paper's number is reproduced
#: (``met``); the model follows the paper and the number still differs
#: (``faithful-not-reproduced``); the paper leaves open what decides it (``undecidable``)
VERDICTS = ("met", "faithful-not-reproduced", "undecidable")


@dataclass(frozen=True)
class Check:
    """One acceptance item: what, the settled target, and how to compute it from the rows.

    ``settled`` is the verdict the project has declared for the item (one of
    :data:`VERDICTS`, with ``reason`` saying why), or ``None`` for an item with
    no declared verdict.  The report shows the verdict beside the computed
    pass/fail, so a check settled as not reproduced that fails reads as such,
    not as a bare failure; one settled as met that fails is a regression.

    Examples
    --------
    >>> c = Check("x ≤ 1", "≤ 1", lambda r: ("0.5", True), settled="met", reason="paper: 0.9")
    >>> c.settled, c.status(True), c.status(False)
    ('met', 'pass', 'regression')
    >>> Check("y", "t", lambda r: ("2", False), settled="faithful-not-reproduced",
    ...       reason="the model follows the paper").status(False)
    'as-settled'
    >>> Check("z", "t", lambda r: ("", None), settled="maybe")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.HedgerowError: check 'z': settled 'maybe' is not one of met, ...
    """

    text: str
    target: str
    compute: Callable[[Results], Outcome]
    source: str = ""
    settled: str | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        if self.settled is not None and self.settled not in VERDICTS:
            raise HedgerowError(f"check {self.text!r}: settled {self.settled!r} is not one of "
                                f"{', '.join(VERDICTS)}")
        if self.settled is not None and not self.reason:
            raise HedgerowError(f"check {self.text!r}: a settled verdict needs its reason")

    def status(self, ok: bool | None) -> str:
        """The computed outcome read against the declared verdict.

        ``pass``, ``fail`` or ``not-run`` for a check with no verdict, and for a
        computed pass or a missing run of a settled one; a failure of a check
        settled as not reproduced or undecidable is ``as-settled``; a failure of
        one settled as met is ``regression``.
        """
        if ok is None:
            return "not-run"
        if ok:
            return "pass"
        if self.settled is None:
            return "fail"
        return "regression" if self.settled == "met" else "as-settled"


@dataclass(frozen=True)
class FigureSpec:
    """One paper figure and how it is drawn from an experiment's rows.

    ``kind`` is ``lines`` (a metric against ``x``; with ``group`` a line per
    series and group value, ``logx`` a log x axis), ``epochs`` (per epoch),
    ``bars`` (one bar per series, grouped by ``group``) or ``scores``
    (:class:`ScoreRun`).  ``labels`` keeps only these series; ``last``
    (``lines``/``bars``) uses each run's last epoch only.  ``also`` names
    further experiments whose rows join the figure's where the results folder
    holds them (a figure across sizes: the head-to-head at 1,000, 10,000 and
    100,000 nodes); ``families`` renames values of the ``group`` column
    before grouping, so worlds of one family at different sizes draw as one
    line (``{"cities-placed": "cities"}``).
    """

    id: str
    title: str
    experiment: str
    kind: str
    panels: Sequence[tuple[str, str]]
    x: str | None = None
    xlabel: str | None = None
    series: str = "label"
    group: str | None = None
    labels: Sequence[str] | None = None
    last: bool = False
    tolerance: Tolerance | None = None
    checks: Sequence[Check] = ()
    readings: Sequence[tuple[str, str]] = ()
    logy: Sequence[str] = ()
    score_run: ScoreRun | None = None
    logx: bool = False
    also: Sequence[str] = ()
    families: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Paper:
    """A reproduction: its experiments, figures and the page that documents it."""

    name: str
    title: str
    doc: str
    experiments: Sequence[Named]
    figures: Sequence[FigureSpec]

    def minutes(self, quick: bool = False) -> float:
        """Estimated wall minutes on 2 cores (sum over the experiments)."""
        return sum(e.quick_minutes if quick else e.minutes for e in self.experiments)

    def spec_for(self, experiment: str) -> Named:
        for e in self.experiments:
            if e.experiment == experiment:
                return e
        raise HedgerowError(f"{self.name}: no experiment {experiment!r}")


# ---------------------------------------------------------------------------------------------
# helpers the checks are written with
