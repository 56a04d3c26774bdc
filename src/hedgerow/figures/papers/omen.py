"""OMen (DEBS 2016): mending a TCO under churn (``docs/omen.md``, ``docs/tco.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from hedgerow.figures.papers._checks import _NOT_RUN
from hedgerow.figures.papers._declare import (
    Check,
    FigureSpec,
    Named,
    Outcome,
    Paper,
    Quick,
    Results,
)
from hedgerow.figures.tidy import over_runs

__all__ = ["OMEN"]

_OMEN_DOC = "docs/omen.md"
_OMEN_FB1K = f"{_OMEN_DOC}#fb-1k-x-google-1k-64-66"
_OMEN_READINGS = f"{_OMEN_DOC}#readings-chosen-where-the-paper-is-silent-or-ambiguous"
_OMEN_INVARIANTS = f"{_OMEN_DOC}#invariants-checked-after-every-event"
_OMEN_COST = f"{_OMEN_DOC}#the-cost-ratios-as-the-paper-reports-them"
_TCO_RHO = "docs/tco.md#lowodas-trade-off-as-the-paper-states-it"
_OMEN_LABELS = ("OMen", "OMen-G", "LowODA-Inc", "LowODA-Re")


def _omen_violations(r: Results) -> Outcome:
    """Invariant violations summed over every round of OMen, OMen-G and both LowODAs."""
    df = r.ok("omen-fig9")
    if df.empty or "violations" not in df or not set(_OMEN_LABELS) <= set(df["label"]):
        return _NOT_RUN
    texts, total = [], 0
    for label in _OMEN_LABELS:
        sub = df[df["label"] == label]
        v = int(pd.to_numeric(sub["violations"], errors="coerce").fillna(0).sum())
        total += v
        texts.append(f"{label} {v} in {len(sub)} rounds")
    return ", ".join(texts), total == 0


def _per_round(df: pd.DataFrame, metric: str, a: str, b: str) -> pd.DataFrame:
    """``a``'s and ``b``'s ``metric`` side by side, one row per (seed, round) both have."""
    cols = ["seed", "epoch", metric]
    left = df[df["label"] == a][cols].rename(columns={metric: "a"})
    right = df[df["label"] == b][cols].rename(columns={metric: "b"})
    both = left.merge(right, on=["seed", "epoch"])
    return both.assign(
        a=pd.to_numeric(both["a"], errors="coerce"), b=pd.to_numeric(both["b"], errors="coerce")
    ).dropna()


def _omen_vs(
    metric: str, other: str, limit: float, ratio: bool = True
) -> Callable[[Results], Outcome]:
    """OMen against ``other`` per round (ratio or difference), averaged over rounds and seeds.

    Each seed's rounds are averaged first, then the seeds; passes when at most ``limit``.
    """

    def compute(r: Results) -> Outcome:
        df = r.ok("omen-fig9")
        if df.empty or metric not in df:
            return _NOT_RUN
        both = _per_round(df, metric, "OMen", other)
        if both.empty:
            return _NOT_RUN
        q = both["a"] / both["b"] if ratio else both["a"] - both["b"]
        v = float(q.groupby(both["seed"]).mean().mean())
        rounds = both.groupby("seed").size()
        return (
            f"{v:.3f} ({len(rounds)} seed{'s' * (len(rounds) > 1)}, "
            f"{int(rounds.min())} rounds each)"
        ), bool(v <= limit)

    return compute


def _omen_views(r: Results) -> Outcome:
    """Share of nodes whose local view is below 5% of the nodes, OMen (λ 5), every round."""
    s = over_runs(r.ok("omen-fig9"), "view_below_5pct", reduce="rows", where={"label": "OMen"})
    if s is None:
        return _NOT_RUN
    return f"lowest {s.min():.4f}, mean {s.mean():.4f} over {len(s)} rounds", bool(s.min() >= 0.95)


def _omen_repair_median(r: Results) -> Outcome:
    """Median of OMen's repair compute time per round, in ms."""
    s = over_runs(r.ok("omen-fig10"), "omen_repair_seconds", reduce="rows", where={"label": "OMen"})
    if s is None:
        return _NOT_RUN
    s = s * 1000
    return f"median {s.median():.2f} ms, p90 {s.quantile(0.9):.2f} ms ({len(s)} rounds)", bool(
        s.median() <= 2.0
    )


def _omen_fewer_messages(r: Results) -> Outcome:
    """Mean messages per churn round, OMen against SpiderCast (3,1)."""
    df = r.ok("omen-fig12")
    o, s = (
        over_runs(df, "messages", where={"label": "OMen"}),
        over_runs(df, "messages", where={"label": "SpiderCast(3,1)"}),
    )
    if math.isnan(o) or math.isnan(s):
        return _NOT_RUN
    return f"{s:.0f} against {o:.0f} ({s / o:.2f}×)", bool(s > o)


#: the timer of each system's repair: the coordinator's CPU time for OMen and OMen-G, the
#: rebuild's CPU time for LowODA-Re
_TIMER = {"OMen": "omen_repair_seconds", "OMen-G": "omen_repair_seconds",
          "OMen-G (all)": "omen_repair_seconds", "LowODA-Re": "repair_cpu_seconds"}


def _cost(df: pd.DataFrame, a: str, b: str) -> tuple[float, float, int] | None:
    """``a``'s repair time over ``b``'s on the events both ran: (ratio of the means, ratio of
    the medians, events), each seed's ratios first, then averaged over the seeds."""
    if df.empty or not {_TIMER[a], _TIMER[b]} <= set(df):
        return None
    cols = ["seed", "epoch"]
    left = df[df["label"] == a][[*cols, _TIMER[a]]].rename(columns={_TIMER[a]: "a"})
    right = df[df["label"] == b][[*cols, _TIMER[b]]].rename(columns={_TIMER[b]: "b"})
    both = left.merge(right, on=cols)
    both = both.assign(a=pd.to_numeric(both["a"], errors="coerce"),
                       b=pd.to_numeric(both["b"], errors="coerce")).dropna()
    if both.empty:
        return None
    g = both.groupby("seed")
    means = (g["a"].mean() / g["b"].mean()).mean()
    medians = (g["a"].median() / g["b"].median()).mean()
    return float(means), float(medians), int(g.size().min())


def _cost_text(q: tuple[float, float, int]) -> str:
    return f"mean {q[0]:.2%} (median {q[1]:.2%})"


def _omen_vs_rebuild(r: Results) -> Outcome:
    """OMen's repair over LowODA-Re's rebuild; passes at most 0.5 % on the median."""
    q = _cost(r.ok("omen-fig10"), "OMen", "LowODA-Re")
    if q is None:
        return _NOT_RUN
    return f"{_cost_text(q)}, {q[2]} events", bool(q[1] <= 0.005)


def _reading_pair(r: Results, a: str, b: str, a_all: str, b_all: str,
                  paper: float) -> Outcome:
    """A cost ratio under both readings of OMen-G's global view; passes when either reading
    is within a factor of 1.5 of the paper's value."""
    df = r.ok("omen-fig10")
    q, q_all = _cost(df, a, b), _cost(df, a_all, b_all)
    if q is None:
        return _NOT_RUN
    text = f"{_cost_text(q)} (λ-backup global view)"
    near = [q]
    if q_all is not None:
        text += f"; {_cost_text(q_all)} (backups=all)"
        near.append(q_all)
    ok = any(paper / 1.5 <= x <= paper * 1.5 for v in near for x in v[:2])
    return f"{text}, {q[2]} events", bool(ok)


def _omen_vs_omen_g(r: Results) -> Outcome:
    """OMen's repair over OMen-G's, under both readings of OMen-G's view (paper 4.67 %)."""
    return _reading_pair(r, "OMen", "OMen-G", "OMen", "OMen-G (all)", 0.0467)


def _omen_g_vs_rebuild(r: Results) -> Outcome:
    """OMen-G's repair over LowODA-Re's rebuild, both readings (paper implies 0.20 / 4.67)."""
    return _reading_pair(r, "OMen-G", "LowODA-Re", "OMen-G (all)", "LowODA-Re", 0.0020 / 0.0467)


_RHO_LABELS = ("LowODA rho=1", "LowODA rho=2", "LowODA rho=3", "LowODA rho=4", "LowODA rho=8")


def _rho_trend(r: Results) -> Outcome:
    """LowODA's initial maximum degree: D(1) > D(2) > D(4) on the means over seeds, and every
    D(ρ) at least MinMaxODA's less one degree (a greedy's step)."""
    df = r.ok("omen-rho")
    d = {lab: over_runs(df, "start_max_degree", where={"label": lab})
         for lab in (*_RHO_LABELS, "MinMaxODA")}
    if any(math.isnan(v) for v in d.values()):
        return _NOT_RUN
    one, two, four, mm = d["LowODA rho=1"], d["LowODA rho=2"], d["LowODA rho=4"], d["MinMaxODA"]
    low = min(d[lab] for lab in _RHO_LABELS)
    seeds = df["seed"].nunique()
    return (f"D(1) {one:.1f} > D(2) {two:.1f} > D(4) {four:.1f}; lowest D(ρ) {low:.1f} against "
            f"MinMaxODA's {mm:.1f} ({seeds} seeds)",
            bool(one > two > four and low >= mm - 1.0))


_DEGREES = (("max_degree", "maximum degree"), ("avg_degree", "average degree"))
_OMEN_QUICK = {"churn.events": 30}

OMEN = Paper(
    name="omen",
    title="OMen: Overlay Mending for Topic-based Publish/Subscribe Systems under Churn "
    "(Chen, Vitenberg, Jacobsen; DEBS 2016)",
    doc=_OMEN_DOC,
    experiments=(
        Named("omen-fig9.yaml", "omen-fig9", Quick(seeds=[1], scenario=_OMEN_QUICK), 34.0, 0.4),
        Named("omen-fig9-lowoda.yaml", "omen-fig9-lowoda",
              Quick(seeds=[1], scenario=_OMEN_QUICK), 16.0, 0.2),
        Named("omen-fig8.yaml", "omen-fig8",
              Quick(grid={"scenario.params.coverage": [0, 5, 9]}, scenario=_OMEN_QUICK),
              37.0, 0.5),
        Named("omen-fig5.yaml", "omen-fig5", Quick(scenario=_OMEN_QUICK), 9.0, 0.1),
        Named("omen-fig10.yaml", "omen-fig10", Quick(scenario=_OMEN_QUICK), 10.0, 0.3),
        # FB-4K (the paper's FB 10K stand-in) must be prepared like FB 1K; quick keeps FB 1K
        Named("omen-fig10-lowoda.yaml", "omen-fig10-lowoda",
              Quick(grid={"scenario.churn.scenario": ["fb1k-google"]},
                    scenario=_OMEN_QUICK), 4.0, 0.1),
        Named("omen-fig12.yaml", "omen-fig12", Quick(scenario=_OMEN_QUICK), 27.0, 0.6),
        Named("omen-rho.yaml", "omen-rho", Quick(seeds=[1, 2, 3]), 3.0, 1.0),
    ),
    figures=(
        FigureSpec("fig5", "Figure 5: OMen-G with greedy against primal-dual backups (L = 1, "
                   "λ = 3), synthetic 2K × Google trace, per churn round", "omen-fig5",
                   "epochs", panels=_DEGREES,
                   readings=(("backup sets, greedy against primal-dual",
                              f"{_OMEN_DOC}#backup-sets-greedy-vs-primal-dual-63-figures-3-4"),)),
        FigureSpec("fig8", "Figure 8 (and 6): OMen's coverage factor λ — local view and degree "
                   "(each run's rounds averaged)", "omen-fig8", "lines",
                   panels=(("view_mean", "mean local view"),
                           ("view_below_5pct", "share of views below 5% of the nodes"),
                           ("max_degree", "maximum degree")),
                   x="param_coverage", xlabel="coverage factor λ", series="protocol",
                   readings=(("FB 1K × Google 1K, measured", _OMEN_FB1K),)),
        FigureSpec("fig9", "Figure 9: maximum and average degree per churn round, FB 1K × "
                   "Google 1K: OMen, OMen-G and the central LowODA baselines", "omen-fig9",
                   "epochs", panels=_DEGREES,
                   checks=(
                       Check("0 invariant violations after every round: OMen, OMen-G, "
                             "LowODA-Inc, LowODA-Re", "0", _omen_violations, _OMEN_INVARIANTS),
                       Check("OMen's maximum degree ≤ 1.15 × LowODA-Re's, averaged over the "
                             "rounds", "≤ 1.15 (paper)",
                             _omen_vs("max_degree", "LowODA-Re", 1.15), _OMEN_FB1K),
                       Check("OMen's average degree − LowODA-Re's, averaged over the rounds",
                             "≤ 1.5 (paper ≤ 1.12)",
                             _omen_vs("avg_degree", "LowODA-Re", 1.5, ratio=False), _OMEN_FB1K),
                       Check("local views below 5% of the nodes for ≥ 95% of them, every round",
                             "≥ 95% (paper)", _omen_views, _OMEN_FB1K),
                   ),
                   readings=(("readings where the paper is silent", _OMEN_READINGS),
                             ("OMen against OMen-G (≤ 1.10 not met) and the growth per round",
                              _OMEN_FB1K))),
        FigureSpec("fig9-lowoda", "Figure 9: the central repairs and SpiderCast per churn round, "
                   "FB 1K × Google 1K", "omen-fig9-lowoda", "epochs",
                   panels=(*_DEGREES, ("messages", "messages per round")),
                   readings=(("churn: event-by-event runs and invariants",
                              "docs/tco.md#churn-event-by-event-runs-and-invariants"),)),
        FigureSpec("fig10", "Figure 10: repair time per churn round, joins and leaves "
                   "(OMen's compute time and the whole life cycle's wall time)", "omen-fig10",
                   "bars", panels=(("repair_seconds", "life-cycle wall time (s)"),
                                   ("omen_repair_seconds", "OMen's repair compute time (s)")),
                   group="type", logy=("omen_repair_seconds", "repair_seconds"),
                   checks=(Check("OMen's median repair time ≤ 2 ms", "≤ 2 ms",
                                 _omen_repair_median, _OMEN_FB1K),
                           Check("OMen's repair time / LowODA-Re's rebuild",
                                 "≤ 0.5 % on the median (paper 0.20 % at 1K)",
                                 _omen_vs_rebuild, _OMEN_COST, settled="met",
                                 reason="OMen's side of the paper's ratios is reproduced: "
                                 "0.24-0.27 % on the median over FB 1K seeds 1-3 on a quiet "
                                 "machine (0.31-0.33 % on the mean) against the paper's 0.20 % "
                                 "at 1K, and 0.029 % at TW 10K against its 0.01 %"),
                           Check("OMen's repair time / OMen-G's, under both readings of "
                                 "OMen-G's global view", "4.67 % (paper) within a factor 1.5",
                                 _omen_vs_omen_g, _OMEN_COST, settled="undecidable",
                                 reason="the paper does not define what OMen-G's global view "
                                 "holds; ours (λ-backup sets built from every node) is the "
                                 "cheaper reading, backups=all (every node sharing a topic, "
                                 "LowODA-Inc's edges) the dearer; the gap is OMen-G's cost, "
                                 "not OMen's (see the check against LowODA-Re)"),
                           Check("OMen-G's repair time / LowODA-Re's rebuild, under both "
                                 "readings", "≈ 4.3 % (0.20 / 4.67, implied) within a factor 1.5",
                                 _omen_g_vs_rebuild, _OMEN_COST, settled="undecidable",
                                 reason="the paper's OMen-G costs about 4.3 % of LowODA-Re's "
                                 "rebuild by its two ratios; ours costs 0.5-1.0 % with the "
                                 "λ-backup view (FB 1K, TW 1K) and 1.7-3.0 % with backups=all, "
                                 "which comes within a factor 1.5 on some runs' means: the "
                                 "paper does not state its global view, so which reading it "
                                 "timed cannot be decided")),
                   readings=(("the cost of a repair, profiled", _OMEN_FB1K),
                             ("OMen's cost ratios as the paper reports them, per instance",
                              _OMEN_COST))),
        FigureSpec("fig10-lowoda", "Figure 10: repair time per churn round of LowODA-Inc and "
                   "LowODA-Re, joins and leaves", "omen-fig10-lowoda", "bars",
                   panels=(("repair_seconds", "repair time (s)"),
                           ("edges_added", "links added per round")),
                   group="type", logy=("repair_seconds",)),
        FigureSpec("rho", "Table 1 / Lemma 1: LowODA's initial overlay on FB 1K against ρ, "
                   "MinMaxODA beside it (maximum and average degree before the first event)",
                   "omen-rho", "bars", panels=(("start_max_degree", "maximum degree"),
                                               ("start_avg_degree", "average degree")),
                   last=True,
                   checks=(Check("LowODA's maximum degree: D(1) > D(2) > D(4), every D(ρ) ≥ "
                                 "MinMaxODA's less one degree", "the trend (the paper states "
                                 "only asymptotic bounds)", _rho_trend, _TCO_RHO, settled="met",
                                 reason="Table 1 and Lemma 1 give only O((|V|/ρ) log |V||T|); "
                                 "the former item 'maximum degree not rising as ρ grows' was "
                                 "never the paper's and is retired: beyond ρ ≈ 3 a greedy's D "
                                 "moves in steps of about one degree (FB 1K, 10 seeds: 318, "
                                 "80.0, 52.9 at ρ 1, 2, 4; MinMaxODA 51.8)"),),
                   readings=(("the ρ trade-off as the paper states it", _TCO_RHO),)),
        FigureSpec("fig12", "Figure 12: messages per churn round, TW 1K × Google 1K",
                   "omen-fig12", "bars", panels=(("messages", "messages per round"),),
                   group="type", logy=("messages",),
                   checks=(Check("SpiderCast (3,1) sends more messages per round than OMen",
                                 "higher (paper: 'significantly')", _omen_fewer_messages,
                                 "paper, §6.8"),),
                   readings=(("TW 1K is a synthetic follower graph", _OMEN_READINGS),)),
    ),
)

# ---------------------------------------------------------------------------------------------
