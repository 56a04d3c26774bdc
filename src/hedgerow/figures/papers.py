"""The reproductions, declared: paper -> named experiments (specs) -> figures and checks.

A :class:`Paper` names the experiment specs (``experiments/*.yaml``) that
reproduce it, how each is reduced for ``--quick`` (:class:`Quick`), the
figures drawn from their rows (:class:`FigureSpec`) and the acceptance
checks settled for it (:class:`Check`, each computed from the rows).  Adding a
protocol's paper is one more entry in :data:`PAPERS`; ``hedgerow reproduce``
(:mod:`hedgerow.pipeline.reproduce`) runs it and ``hedgerow reproduce --list``
prints it.

Paper values come from :mod:`hedgerow.experiment.reference` (the spec's
``reference:``); a figure's :class:`Tolerance` says when our mean counts as
matching one.  The checks are the acceptance settled in ``docs/spidercast.md``
("Settled acceptance"), ``docs/topiary.md`` (the checks of
``benchmarks/bench_topiary.py`` and "Settled acceptance: the eclipse attack")
and the paper's exact statements.  A check whose runs are not in the results
(e.g. 10,000 nodes in a quick run) is reported as *not run*, not as passed.

This module imports neither matplotlib nor Spark.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hedgerow.errors import HedgerowError
from hedgerow.figures.tidy import last_epochs, load_results

__all__ = [
    "PAPERS",
    "Check",
    "FigureSpec",
    "Named",
    "Paper",
    "Quick",
    "Results",
    "ScoreRun",
    "Tolerance",
    "get_paper",
]


@dataclass(frozen=True)
class Quick:
    """How ``--quick`` reduces a spec: replaced grid values, seeds, kept variants, settings.

    ``scenario`` sets dotted keys under the spec's ``scenario`` (``run.epochs``).
    The quick experiment is named ``<experiment>-quick`` so its rows never mix
    with the full experiment's.
    """

    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    seeds: Sequence[int] | None = None
    labels: Sequence[str] | None = None
    scenario: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the report, e.g. ``nodes 1000, 2000; seeds 0``."""
        parts = [f"{k.rsplit('.', 1)[-1]} {', '.join(map(str, v))}" for k, v in self.grid.items()]
        if self.seeds is not None:
            parts.append(f"seeds {', '.join(map(str, self.seeds))}")
        if self.labels is not None:
            parts.append(f"series {', '.join(self.labels)}")
        parts += [f"{k.rsplit('.', 1)[-1]} {v}" for k, v in self.scenario.items()]
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


@dataclass(frozen=True)
class Check:
    """One acceptance item: what, the settled target, and how to compute it from the rows."""

    text: str
    target: str
    compute: Callable[[Results], Outcome]
    source: str = ""


@dataclass(frozen=True)
class FigureSpec:
    """One paper figure and how it is drawn from an experiment's rows.

    ``kind`` is ``lines`` (a metric against ``x``), ``epochs`` (per epoch),
    ``bars`` (one bar per series, grouped by ``group``) or ``scores``
    (:class:`ScoreRun`).  ``labels`` keeps only these series; ``last``
    (``lines``/``bars``) uses each run's last epoch only.
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


def _fmt(x: float, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _mean(df: pd.DataFrame, metric: str, **where: Any) -> float:
    """Mean over runs of ``metric`` (each run's rows averaged first), rows matching ``where``."""
    sub = df
    for k, v in where.items():
        if k not in sub:
            return float("nan")
        col = sub[k]
        sub = sub[col.isin(v) if isinstance(v, (list, tuple, set)) else col == v]
    if sub.empty or metric not in sub:
        return float("nan")
    vals = pd.to_numeric(sub[metric], errors="coerce")
    return float(vals.groupby(sub["run_id"]).mean().mean())


def _final(df: pd.DataFrame, metric: str, label: str, tail: int = 10) -> float:
    """Mean over runs of a run's last ``tail`` epochs (Topiary's "final")."""
    return _mean(last_epochs(df[df["label"] == label], tail), metric)


def _first(df: pd.DataFrame, metric: str, label: str) -> float:
    sub = df[(df["label"] == label)]
    return _mean(sub[sub["epoch"] == 0], metric) if len(sub) else float("nan")


def _final_at_least(
    experiment: str, metric: str, label: str, at_least: float
) -> Callable[[Results], Outcome]:
    """The check "``label``'s final ``metric`` is at least ``at_least``" (a rate, 4 decimals)."""

    def compute(r: Results) -> Outcome:
        df = r.ok(experiment)
        v = _final(df, metric, label) if len(df) else float("nan")
        return ("not in these runs", None) if math.isnan(v) else (f"{v:.4f}", v >= at_least)

    return compute


def _ratio_check(num: str, den: str, nodes: int, at_least: float) -> Callable[[Results], Outcome]:
    def compute(r: Results) -> Outcome:
        df = r.ok("spidercast-fig12")
        a = _mean(df, "avg_degree", label=num, nodes=nodes)
        b = _mean(df, "avg_degree", label=den, nodes=nodes)
        if math.isnan(a) or math.isnan(b):
            return "not in these runs", None
        return f"{a / b:.2f}× ({a:.2f} / {b:.2f})", a / b >= at_least

    return compute


def _ringpt_rises(r: Results) -> Outcome:
    df = r.ok("spidercast-fig12")
    if df.empty:
        return "not in these runs", None
    sizes = sorted(set(df["nodes"].dropna().astype(int)))
    ratios = []
    for n in sizes:
        a = _mean(df, "avg_degree", label="RingPT", nodes=n)
        b = _mean(df, "avg_degree", label="SpiderCast(3,0)", nodes=n)
        if not (math.isnan(a) or math.isnan(b)):
            ratios.append((n, a / b))
    if len(ratios) < 2:
        return "needs two sizes", None
    text = ", ".join(f"{n // 1000}K {q:.2f}" for n, q in ratios)
    return text, all(q2 >= q1 - 0.01 for (_, q1), (_, q2) in itertools.pairwise(ratios))


def _all_runs(experiment: str, label: str, metric: str, test: Callable[[float], bool],
              describe: str) -> Callable[[Results], Outcome]:
    def compute(r: Results) -> Outcome:
        df = r.ok(experiment)
        sub = df[df["label"] == label] if len(df) else df
        if sub.empty:
            return "not in these runs", None
        per_run = pd.to_numeric(sub[metric], errors="coerce").groupby(sub["run_id"])
        good = sum(bool(all(test(v) for v in g)) for _, g in per_run)
        return f"{good} of {per_run.ngroups} runs {describe}", good == per_run.ngroups

    return compute


def _adaptive(r: Results) -> Outcome:
    df = r.ok("spidercast-adaptive")
    if df.empty:
        return "not in these runs", None
    parts = pd.to_numeric(df["partitioned_topics"], errors="coerce").groupby(df["run_id"]).max()
    connected = int((parts == 0).sum())
    share = connected / len(parts)
    return (
        f"{connected} of {len(parts)} runs connected ({share:.0%}); worst run {int(parts.max())}",
        share >= 0.8 and parts.max() <= 1,
    )


def _flat_degree(r: Results) -> Outcome:
    df = r.ok("spidercast-fig11")
    if df.empty:
        return "not in these runs", None
    texts, ok = [], True
    for n, g in df.groupby("nodes"):
        per = pd.to_numeric(g["avg_degree"], errors="coerce").groupby(g["churn_lifetime"]).mean()
        if len(per) < 2:
            return "needs two churn rates", None
        spread = (per.max() - per.min()) / per.mean()
        ok &= spread <= 0.05
        texts.append(f"{int(n)} nodes: {per.min():.2f}-{per.max():.2f} ({spread:.1%})")
    return "; ".join(texts), ok


def _convergence(experiment: str, label: str) -> list[Check]:
    def delay(r: Results) -> Outcome:
        df = r.ok(experiment)
        if df.empty:
            return "not in these runs", None
        a, b = _first(df, "delay_mean_ms", label), _final(df, "delay_mean_ms", label)
        if math.isnan(a) or math.isnan(b):
            return "not in these runs", None
        return f"{b / a:.2f} ({a:.0f} → {b:.0f} ms)", b / a <= 0.6

    def early(r: Results) -> Outcome:
        df = r.ok(experiment)
        sub = df[df["label"] == label] if len(df) else df
        if sub.empty:
            return "not in these runs", None
        per = pd.to_numeric(sub["receive_rate"], errors="coerce").groupby(sub["epoch"]).mean()
        hit = [int(e) for e, v in per.items() if e <= 20 and v >= 0.9]
        return (f"epoch {hit[0]}" if hit else "not within 20 epochs"), bool(hit)

    src = "benchmarks/bench_topiary.py"
    return [
        Check(f"{label}: final receive rate ≥ 0.98", "~98% (V-B3)",
              _final_at_least(experiment, "receive_rate", label, 0.98), src),
        Check(f"{label}: final delay ≤ 0.6 × epoch 0", "~50% lower (V-B1)", delay, src),
        Check(f"{label}: receive rate ≥ 0.9 within 20 epochs", "> 90% after ~10 epochs", early,
              src),
    ]


def _fig5_beats(r: Results) -> Outcome:
    df = r.ok("topiary-fig5")
    if df.empty:
        return "not in these runs", None
    t_rate, t_delay = _final(df, "receive_rate", "topiary"), _final(df, "delay_mean_ms", "topiary")
    texts, ok = [], True
    for b in ("random", "gossipsub", "scribe-random", "scribe-topic"):
        rate, delay = _final(df, "receive_rate", b, 1), _final(df, "delay_mean_ms", b, 1)
        if math.isnan(delay):
            continue
        ok &= t_delay < delay and t_rate >= rate
        texts.append(f"{b} {delay:.0f} ms/{rate:.2f}")
    return f"topiary {t_delay:.0f} ms/{t_rate:.2f} vs " + ", ".join(texts), ok


def _fig5_complete(r: Results) -> Outcome:
    df = r.ok("topiary-fig5")
    c = _final(df, "delay_mean_ms", "complete", 1) if len(df) else float("nan")
    if math.isnan(c):
        return "not in these runs", None
    t = _final(df, "delay_mean_ms", "topiary")
    return f"{c:.0f} ms ≤ {t:.0f} ms", c <= t


def _cities(r: Results) -> Outcome:
    df = r.ok("topiary-cities")
    if df.empty:
        return "not in these runs", None
    t, b = _final(df, "delay_mean_ms", "topiary"), _final(df, "delay_mean_ms", "random", 1)
    gain = 1 - t / b
    return f"{gain:.1%} ({b:.0f} → {t:.0f} ms)", gain >= 0.4


def _eclipse_share(r: Results) -> Outcome:
    df = r.ok("topiary-attacks")
    sub = df[df["label"] == "eclipse 300"] if len(df) else df
    if sub.empty:
        return "not in these runs", None
    last = int(sub["epoch"].max())
    window = min(50, (last + 1) // 2)  # the last 50 epochs, or the last half of a short run
    s = pd.to_numeric(last_epochs(sub, window)["attacker_slot_share"], errors="coerce")
    return (
        f"{s.min():.3f}-{s.max():.3f} over the last {window} epochs",
        0.30 < s.min() and s.max() < 0.90,
    )


def _eclipse_delay(r: Results) -> Outcome:
    df = r.ok("topiary-attacks")
    if df.empty:
        return "not in these runs", None
    a, c = _final(df, "delay_mean_ms", "eclipse 300"), _final(df, "delay_mean_ms", "no attackers")
    if math.isnan(a) or math.isnan(c):
        return "not in these runs", None
    return f"{a:.1f} vs {c:.1f} ms", a <= c


def _eclipse_streak(r: Results) -> Outcome:
    df = r.ok("topiary-attacks")
    v = _final(df, "eclipse_streak_max", "eclipse 300", 1) if len(df) else float("nan")
    if math.isnan(v):
        return "not in these runs", None
    return f"longest streak {v:.0f} epochs", v <= 5


# ---------------------------------------------------------------------------------------------
# the papers

_SC_DOC = "docs/spidercast.md"
_TOP_DOC = "docs/topiary.md"
_SC_READINGS = f"{_SC_DOC}#readings-chosen-where-the-paper-is-ambiguous"
_TOP_READINGS = f"{_TOP_DOC}#readings-chosen-where-the-paper-is-ambiguous"
_SC_SETTLED = f"{_SC_DOC}#settled-acceptance-decided-for-the-reproduction"
_ECLIPSE = f"{_TOP_DOC}#settled-acceptance-the-eclipse-attack"
_TOP_SCEN = f"{_TOP_DOC}#scenarios-hedgerowscenarios"

SPIDERCAST = Paper(
    name="spidercast",
    title="SpiderCast: A Scalable Interest-Aware Overlay for Topic-Based Pub/Sub "
    "Communication (Chockler, Melamed, Tock, Vitenberg; DEBS 2007)",
    doc=_SC_DOC,
    experiments=(
        Named("spidercast-fig12.yaml", "spidercast-fig12",
              Quick(grid={"scenario.workload.nodes": [1000, 2000]}, seeds=[0]), 8.0, 0.8),
        Named("spidercast-fig6.yaml", "spidercast-fig6",
              Quick(grid={"scenario.workload.nodes": [1000, 8000]}, seeds=[1]), 6.0, 1.2),
        Named("spidercast-adaptive.yaml", "spidercast-adaptive",
              Quick(grid={"scenario.workload.nodes": [6000]}, seeds=[1, 2]), 7.0, 0.8),
        Named("spidercast-fig11.yaml", "spidercast-fig11",
              Quick(grid={"scenario.workload.nodes": [1250],
                          "scenario.churn.lifetime": [100, 500]}), 3.5, 1.2),
    ),
    figures=(
        FigureSpec(
            "fig12", "Figure 12: average degree for a given number of nodes (RSS, 100 topics, "
            "10 subscriptions per node)", "spidercast-fig12", "lines",
            panels=[("avg_degree", "average degree")], x="nodes", xlabel="number of nodes",
            tolerance=Tolerance(rel=0.10),
            checks=(
                Check("RingPT degree ≥ 1.3 × SpiderCast(3,0) at 1,000 nodes", "≥ 1.3×",
                      _ratio_check("RingPT", "SpiderCast(3,0)", 1000, 1.3),
                      _SC_SETTLED),
                Check("RingPT/SpiderCast degree ratio rises with the number of nodes",
                      "rising with N", _ringpt_rises, _SC_SETTLED),
                Check("RingPT degree ≥ 1.6 × SpiderCast(3,0) at 10,000 nodes", "≥ 1.6×",
                      _ratio_check("RingPT", "SpiderCast(3,0)", 10000, 1.6),
                      _SC_SETTLED),
            ),
            readings=(
                ("reading 11: ties in the argmax selections (sequential)", _SC_READINGS),
                ("baselines: similarity and random as in section 3.9",
                 f"{_SC_DOC}#baselines-section-39"),
            ),
        ),
        FigureSpec(
            "fig13", "Figure 13: topic connectivity (total components over the 100 topic "
            "subgraphs; 100 = every topic connected)", "spidercast-fig12", "lines",
            panels=[("topic_components", "topic components")], x="nodes",
            xlabel="number of nodes", tolerance=Tolerance(abs=0), logy=("topic_components",),
            checks=(
                Check("every SpiderCast(3,0) run connects all 100 topics", "100 components",
                      _all_runs("spidercast-fig12", "SpiderCast(3,0)", "topic_components",
                                lambda v: v == 100, "with 100 components"),
                      "paper, section 3.9.1"),
                Check("every similarity(10,0) run splits topics", "> 100 components",
                      _all_runs("spidercast-fig12", "similarity(10,0)", "topic_components",
                                lambda v: v > 100, "with more than 100"),
                      "paper, Figure 13"),
                Check("every random(10) run splits topics", "> 100 components",
                      _all_runs("spidercast-fig12", "random(10)", "topic_components",
                                lambda v: v > 100, "with more than 100"),
                      "paper, Figure 13"),
            ),
        ),
        FigureSpec(
            "fig6", "Figure 6: Zipf(2) popularity — (a) partitioned topics, (b) average degree",
            "spidercast-fig6", "lines",
            panels=[("partitioned_topics", "partitioned topics"), ("avg_degree", "average degree")],
            x="nodes", xlabel="number of nodes", tolerance=Tolerance(abs=3),
            checks=(
                Check("SpiderCast(3,1) connects every topic in every run", "0 partitioned",
                      _all_runs("spidercast-fig6", "SpiderCast(3,1)", "partitioned_topics",
                                lambda v: v == 0, "fully connected"),
                      "paper, section 3.3"),
                Check("adaptive setting, Zipf(2), 6K-10K nodes: ≥ 80% of runs fully connected, "
                      "at most one split topic in any run", "≥ 80%, ≤ 1", _adaptive,
                      _SC_SETTLED),
            ),
            readings=(
                ("reading 11: sequential ties make the paper's Zipf(2) partitions reappear",
                 _SC_READINGS),
                ("Figure 6: the adaptive setting misses closed groups",
                 f"{_SC_DOC}#our-numbers-beside-the-papers"),
            ),
        ),
        FigureSpec(
            "fig11", "Figure 11: under churn — average degree and control messages per "
            "join/leave against the mean online time λ", "spidercast-fig11", "lines",
            panels=[("avg_degree", "average degree"),
                    ("messages_per_op", "messages per join/leave"),
                    ("partitioned_topics", "partitioned topics per snapshot")],
            x="churn_lifetime", xlabel="λ, mean online time (s)", series="nodes",
            tolerance=Tolerance(rel=0.20, abs=0.5),
            checks=(
                Check("every topic connected in every snapshot", "0 partitioned",
                      _all_runs("spidercast-fig11", "SpiderCast(3,0)", "partitioned_topics",
                                lambda v: v == 0, "with every snapshot connected"),
                      "paper, section 3.8"),
                Check("the average degree does not change with the churn rate", "spread ≤ 5%",
                      _flat_degree, "paper, Figure 11"),
            ),
            readings=(("the dynamic setting and its readings", "docs/dynamic.md"),),
        ),
    ),
)

_FIG3_LABELS = ("topics=10", "topics=25", "topics=50", "topics=100", "topics=150")
_FIG4_LABELS = ("interest=0.1", "interest=0.2", "interest=0.6", "interest=0.8", "interest=1.0")
_TOP_PANELS = (("receive_rate", "receive rate"), ("delay_mean_ms", "average delay (ms)"))
_TOP_READ = (("Forwarding: the paper's figures use the TTL rule for every topology",
              _TOP_DOC),)
_FIG8 = ScoreRun("topiary-fig8", "topiary", "cities", seed=0, epochs=150, quick_epochs=40,
                 settings={"forwarding": "ttl"})

TOPIARY = Paper(
    name="topiary",
    title="Topiary: Fast, Scalable Publish/Subscribe for Peer-to-Peer (D)Apps "
    "(Mao, Bojja Venkatakrishnan; arXiv 2312.06800, 2023)",
    doc=_TOP_DOC,
    experiments=(
        Named("topiary-fig3-4.yaml", "topiary-fig3-4",
              Quick(labels=("topics=10", "topics=150", "interest=0.1"),
                    scenario={"run.epochs": 40}), 6.0, 0.6),
        Named("topiary-fig5.yaml", "topiary-fig5", Quick(scenario={"run.epochs": 40}), 1.0, 0.4),
        Named("topiary-fig6.yaml", "topiary-fig6",
              Quick(grid={"scenario.params.wd": [1000, 10000]}, scenario={"run.epochs": 40}),
              2.5, 0.4),
        # 246 nodes are cheap: the quick run keeps the 150 epochs (at 40 the delay cut is
        # 35%, short of the settled 40%, which the full length reaches)
        Named("topiary-cities.yaml", "topiary-cities", Quick(seeds=[0]), 1.0, 0.4),
        Named("topiary-attacks.yaml", "topiary-attacks", Quick(scenario={"run.epochs": 40}),
              4.5, 0.8),
    ),
    figures=(
        FigureSpec("fig3", "Figure 3: 10-150 topics at 40% interest, per epoch", "topiary-fig3-4",
                   "epochs", panels=_TOP_PANELS, labels=_FIG3_LABELS, readings=_TOP_READ),
        FigureSpec("fig4", "Figure 4: 10-100% interest at 100 topics, per epoch",
                   "topiary-fig3-4", "epochs", panels=_TOP_PANELS, labels=_FIG4_LABELS,
                   checks=tuple(_convergence("topiary-fig3-4", "interest=0.1")),
                   readings=_TOP_READ),
        FigureSpec("fig5", "Figure 5: topologies compared (100 topics at 20%); static "
                   "baselines dashed", "topiary-fig5", "epochs", panels=_TOP_PANELS,
                   checks=(*_convergence("topiary-fig5", "topiary"),
                           Check("Topiary beats random, GossipSub and both Scribes on delay at "
                                 "≥ coverage", "lowest delay but complete", _fig5_beats,
                                 "benchmarks/bench_topiary.py"),
                           Check("the complete graph is the lower bound", "lower bound",
                                 _fig5_complete, "benchmarks/bench_topiary.py")),
                   readings=(*_TOP_READ, ("Scenarios and baselines", _TOP_SCEN))),
        FigureSpec("fig6", "Figure 6: delay weight wd = 1000-10000 (wc = 1, ww = 0)",
                   "topiary-fig6", "epochs", panels=_TOP_PANELS, series="param_wd",
                   readings=(("reading 3: our default wc", _TOP_READINGS),)),
        FigureSpec("fig7", "Figure 7: the 246-city network (d = 5), Topiary against a random "
                   "graph", "topiary-cities", "epochs", panels=_TOP_PANELS,
                   checks=(Check("delay ≥ 40% lower than the random graph", "~50% lower",
                                 _cities, "benchmarks/bench_topiary.py"),
                           Check("final receive rate ≥ 0.97", "close to 100%",
                                 _final_at_least("topiary-cities", "receive_rate", "topiary",
                                                 0.97),
                                 "benchmarks/bench_topiary.py")),
                   readings=_TOP_READ),
        FigureSpec("fig8", "Figure 8: score distribution per epoch, 246-node network",
                   "topiary-cities", "scores", panels=(("score", "score"),), score_run=_FIG8),
        FigureSpec("fig9", "Figure 9: 300 / 500 topic attackers — receive rate, delay and the "
                   "victim topic's delay", "topiary-attacks", "epochs",
                   panels=(("victim_receive_rate", "victim topic receive rate"),
                           ("delay_mean_ms", "average delay, all topics (ms)"),
                           ("victim_delay_mean_ms", "victim topic delay (ms)")),
                   labels=("topic-attack 300", "topic-attack 500"),
                   checks=(Check("300 topic attackers: victim receive rate ≥ 0.95 at the end",
                                 "victim delay aligns with the average",
                                 _final_at_least("topiary-attacks", "victim_receive_rate",
                                                 "topic-attack 300", 0.95),
                                 "benchmarks/bench_topiary.py"),),
                   readings=(("Attackers (V-D), readings", _TOP_SCEN),)),
        FigureSpec("fig10", "Figure 10: 300 eclipse attackers — delay and the attackers' share "
                   "of honest out-slots", "topiary-attacks", "epochs",
                   panels=(("delay_mean_ms", "average delay (ms)"),
                           ("attacker_slot_share", "attackers' share of honest out-slots"),
                           ("honest_with_honest_neighbour", "honest nodes with an honest "
                            "out-neighbour")),
                   labels=("eclipse 300", "no attackers"),
                   checks=(Check("attackers' share of honest out-slots in (0.30, 0.90)",
                                 "(0.30, 0.90), last 50 epochs", _eclipse_share,
                                 _ECLIPSE),
                           Check("delay no worse than the same world without attackers",
                                 "≤ without attackers", _eclipse_delay,
                                 _ECLIPSE),
                           Check("no honest node without an honest out-neighbour > 5 epochs "
                                 "in a row", "≤ 5 epochs", _eclipse_streak,
                                 _ECLIPSE)),
                   readings=(("Settled acceptance: the eclipse attack",
                              _ECLIPSE),)),
    ),
)

_H2H_METRICS = (("receive_rate", "receive rate"), ("delay_mean_ms", "average delay (ms)"),
                ("avg_degree", "average degree"), ("partitioned_topics", "partitioned topics"))

HEAD_TO_HEAD = Paper(
    name="head-to-head",
    title="Head to head: every registered protocol on the same worlds (unit square, "
    "246 cities, RSS on the unit square)",
    doc="docs/head-to-head.md",
    experiments=(
        Named("head-to-head.yaml", "head-to-head",
              Quick(seeds=[1], scenario={"run.epochs": 30}), 3.5, 1.5),
    ),
    figures=(
        FigureSpec("h2h", "Every protocol on the same worlds, each forwarding by its own rule "
                   "(last epoch of each run)", "head-to-head", "bars", panels=_H2H_METRICS,
                   group="scenario", last=True, logy=("delay_mean_ms", "avg_degree"),
                   readings=(("How to read the table", "docs/head-to-head.md"),)),
    ),
)

#: every reproduction ``hedgerow reproduce`` knows, by name
PAPERS: dict[str, Paper] = {p.name: p for p in (SPIDERCAST, TOPIARY, HEAD_TO_HEAD)}


def get_paper(name: str) -> Paper:
    """The reproduction called ``name``.

    Examples
    --------
    >>> get_paper("spidercast").figures[0].id
    'fig12'
    >>> get_paper("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.HedgerowError: no paper 'nope'; known: head-to-head, spidercast, topiary
    """
    try:
        return PAPERS[name]
    except KeyError:
        raise HedgerowError(f"no paper {name!r}; known: {', '.join(sorted(PAPERS))}") from None
