"""Goldfish (ICBC 2023) with Perigee beside it (``docs/goldfish.md``, ``docs/perigee.md``).
"""

from __future__ import annotations

import math
from typing import Any

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
    Tolerance,
)
from hedgerow.figures.tidy import over_runs

__all__ = ["GOLDFISH"]

_GF_DOC = "docs/goldfish.md"
_GF_FIG2 = f"{_GF_DOC}#fig-2-v-b-one-adaptive-node-3-publishers-300-epochs"
_GF_FIG3 = f"{_GF_DOC}#fig-3-v-c-convergence-of-the-per-node-wasted-latency"
_GF_TABLE2 = f"{_GF_DOC}#table-ii-all-14-rows-10-seeds-through-hedgerow-sweep"
_GF_TABLE2_SKIP = f"{_GF_DOC}#table-ii-with-perigee-as-the-authors-scored-it-silentskip"
_GF_BEYOND = f"{_GF_DOC}#beyond-the-paper-churn-withholding-relays-static-baselines"
_GF_READINGS = f"{_GF_DOC}#readings-chosen-where-the-paper-is-ambiguous"
_WASTED = "wasted_latency_mean_ms"


def _fig2_reachable(r: Results) -> Outcome:
    """Fig. 2(a) success rate of the paper's reading where no publisher is full from the start."""
    df = r.ok("goldfish-fig2")
    sub = df[df["label"] == "goldfish"] if len(df) else df
    if sub.empty or "publisher_full" not in sub:
        return _NOT_RUN
    full = pd.to_numeric(sub["publisher_full"], errors="coerce").fillna(0).astype(bool)
    ok = pd.to_numeric(sub["fig2a_success"], errors="coerce")
    reach, won = ok[~full], int(ok[~full].sum())
    if reach.empty:
        return "no graph with every publisher accepting", None
    rate = won / len(reach)
    return f"{rate:.3f} ({won}/{len(reach)}; all graphs {ok.mean():.3f})", bool(rate >= 0.9)


def _fig2_rate(r: Results, metric: str, paper: float, label: str = "goldfish") -> Outcome:
    """Mean of a Fig. 2 flag over the graphs it counts (``nan`` rows drop out), against the
    paper's rate (±0.05), with the all-graph rate beside it."""
    df = r.ok("goldfish-fig2")
    sub = df[df["label"] == label] if len(df) else df
    if sub.empty or metric not in sub:
        return _NOT_RUN
    flags = pd.to_numeric(sub[metric], errors="coerce")
    kept = flags.dropna()
    if kept.empty:
        return "no graph enters the denominator", None
    rate = float(kept.mean())
    every = pd.to_numeric(sub[metric.rsplit("_", 1)[0]], errors="coerce")
    return (f"{rate:.3f} ({int(kept.sum())}/{len(kept)} graphs; all {len(every)} graphs "
            f"{every.mean():.3f}; paper {paper})", bool(abs(rate - paper) <= 0.05))


def _fig2a_found(r: Results) -> Outcome:
    """Fig. 2(a) over the graphs whose node attains the optimum (the authors' denominator)."""
    return _fig2_rate(r, "fig2a_success_found", 0.927)


def _fig2b_close(r: Results) -> Outcome:
    """Fig. 2(b) over the graphs whose node comes within 5% in some epoch (the authors')."""
    return _fig2_rate(r, "fig2b_success_close", 0.615)


def _adaptive_column(df: pd.DataFrame) -> str:
    """The column of the number of adaptive nodes: ``adaptive`` if swept, else ``run_adaptive``."""
    return "adaptive" if "adaptive" in df else "run_adaptive"


def _at_size(df: pd.DataFrame, n: int) -> dict[str, Any]:
    """The ``where`` of the runs with ``n`` adaptive nodes (``run_adaptive`` holds text)."""
    col = _adaptive_column(df)
    return {col: n if col == "adaptive" else str(n)}


def _gf_sizes(df: pd.DataFrame) -> list[int]:
    col = _adaptive_column(df)
    if df.empty or col not in df:
        return []
    return sorted({int(v) for v in pd.to_numeric(df[col], errors="coerce").dropna()})


def _gf_real_beats(r: Results) -> Outcome:
    """Goldfish below Perigee on the real city network at every number of adaptive nodes run."""
    df = r.ok("goldfish-table2")
    texts, wins, total = [], 0, 0
    for n in _gf_sizes(df):
        where = _at_size(df, n)
        g = over_runs(
            df,
            _WASTED,
            epochs="last",
            where={"label": "goldfish real exp:100", **where},
        )
        p = over_runs(
            df, _WASTED, epochs="last", where={"label": "perigee real exp:100", **where}
        )
        if math.isnan(g) or math.isnan(p):
            continue
        total += 1
        wins += g < p
        texts.append(f"{n} adaptive: {g / p:.3f} ({g:.0f} / {p:.0f} ms)")
    return ("; ".join(texts), bool(wins == total)) if total else _NOT_RUN


def _gf_random_rows(r: Results) -> Outcome:
    """Table II's random rows: how many Goldfish wins (paper 10 of 10) and the mean ratio.

    Passes with Goldfish below Perigee in at least 9 of 10 rows and a mean Goldfish / Perigee
    ratio at most 0.92 (the targets settled with Perigee scored as the authors score it);
    with fewer rows (a quick run), in all but at most one of them.
    """
    df = r.ok("goldfish-table2")
    laws = ("exp:100", "unif:32", "unif:64")
    ratios = []
    for law in laws:
        for n in _gf_sizes(df):
            where = _at_size(df, n)
            g = over_runs(df, _WASTED, epochs="last",
                          where={"label": f"goldfish random {law}", **where})
            p = over_runs(df, _WASTED, epochs="last",
                          where={"label": f"perigee random {law}", **where})
            if not (math.isnan(g) or math.isnan(p)):
                ratios.append(g / p)
    if not ratios:
        return _NOT_RUN
    wins, mean = sum(q < 1 for q in ratios), sum(ratios) / len(ratios)
    return (f"{wins} of {len(ratios)} rows, mean ratio {mean:.3f} (paper 10 of 10, 0.880)",
            bool(wins >= len(ratios) - 1 and mean <= 0.92))


def _gf_within_paper(r: Results) -> Outcome:
    """How many of Table II's published means (both protocols) ours is within ±25% of."""
    from hedgerow.experiment.reference import REFERENCES

    df = r.ok("goldfish-table2")
    table = REFERENCES["goldfish-table2"].values.get(_WASTED, {})
    inside, total, worst = 0, 0, 0.0
    for label in dict.fromkeys(df["label"]) if len(df) else ():
        for n in _gf_sizes(df):
            paper = table.get(label, {}).get(n)
            ours = over_runs(
                df,
                _WASTED,
                epochs="last",
                where={"label": label, **_at_size(df, n)},
            )
            if paper is None or math.isnan(ours):
                continue
            dev = abs(ours - paper) / paper
            total += 1
            inside += dev <= 0.25
            worst = max(worst, dev)
    if not total:
        return _NOT_RUN
    return f"{inside} of {total} (largest deviation {worst:.1%})", bool(inside == total)


def _gf_fig3_final(r: Results) -> Outcome:
    """Goldfish's mean wasted latency at the last epoch against Perigee's (same seeds)."""
    df = r.ok("goldfish-fig3")
    g, p = (
        over_runs(df, _WASTED, epochs="last", where={"label": "goldfish"}),
        over_runs(df, _WASTED, epochs="last", where={"label": "perigee"}),
    )
    if math.isnan(g) or math.isnan(p):
        return _NOT_RUN
    return f"{g:.0f} against {p:.0f} ms ({g / p:.3f})", bool(g < p)


def _gf_honest_peer(r: Results) -> Outcome:
    """Least share of honest adaptive nodes keeping an honest exploit peer, Goldfish withheld."""
    s = over_runs(
        r.ok("goldfish-beyond"),
        "honest_exploit_peer_share",
        reduce="rows",
        where={"label": "goldfish withhold"},
    )
    if s is None:
        return _NOT_RUN
    return f"least {s.min():.3f} over {len(s)} epochs", bool(s.min() >= 0.99)


def _gf_evicts(r: Results) -> Outcome:
    """Withholding relays hold Goldfish's exploit slots for fewer epochs than honest ones."""
    df = r.ok("goldfish-beyond")
    m = "attacker_tenure_mean_epochs"
    w, h = (
        over_runs(df, m, epochs="last", where={"label": "goldfish withhold"}),
        over_runs(df, m, epochs="last", where={"label": "goldfish relay"}),
    )
    if math.isnan(w) or math.isnan(h):
        return _NOT_RUN
    return f"{w:.2f} against {h:.2f} epochs", bool(w < h)


def _gf_churn(r: Results) -> Outcome:
    """Goldfish below Perigee under on/off churn (final epoch)."""
    df = r.ok("goldfish-beyond")
    g, p = (
        over_runs(df, _WASTED, epochs="last", where={"label": "goldfish churn"}),
        over_runs(df, _WASTED, epochs="last", where={"label": "perigee churn"}),
    )
    if math.isnan(g) or math.isnan(p):
        return _NOT_RUN
    return f"{g:.0f} against {p:.0f} ms ({g / p:.3f})", bool(g < p)


_GF_PCT = (("wasted_latency_p25_ms", "25th percentile (ms)"),
           ("wasted_latency_p50_ms", "median (ms)"),
           ("wasted_latency_p75_ms", "75th percentile (ms)"), (_WASTED, "mean (ms)"))

GOLDFISH = Paper(
    name="goldfish",
    title="Goldfish: Peer Selection Using Matrix Completion in Unstructured P2P Network "
    "(Xue, Mao, Bojja Venkatakrishnan, Kannan; ICBC 2023)",
    doc=_GF_DOC,
    experiments=(
        Named("goldfish-fig2.yaml", "goldfish-fig2", Quick(seeds=list(range(40))), 6.0, 2.3),
        Named("goldfish-fig3.yaml", "goldfish-fig3", Quick(seeds=[1, 2, 3]), 1.5, 0.5),
        Named("goldfish-table2.yaml", "goldfish-table2",
              Quick(grid={"scenario.run.adaptive": [32]}, seeds=[1, 2]), 14.0, 0.5),
        Named("goldfish-beyond.yaml", "goldfish-beyond",
              Quick(seeds=[1], scenario={"run.epochs": 40}), 2.0, 0.2),
    ),
    figures=(
        FigureSpec("fig2", "Figure 2: one adaptive node, 3 publishers — success rates over the "
                   "random graphs: (a) finds the optimum, (b) stays close to it",
                   "goldfish-fig2", "bars",
                   panels=(("fig2a_success", "(a) success rate, every graph"),
                           ("fig2a_success_found", "(a) success rate, graphs that attain the "
                            "optimum (the authors' denominator)"),
                           ("fig2b_success", "(b) success rate, every graph"),
                           ("fig2b_success_close", "(b) success rate, graphs that come within "
                            "5% (the authors' denominator)"),
                           ("publisher_full", "share of graphs with a publisher full at "
                            "the start")),
                   tolerance=Tolerance(abs=0.05),
                   checks=(Check("(a) success rate where every publisher can accept the node "
                                 "≥ 0.9", "≥ 0.9 (paper 0.927)", _fig2_reachable,
                                 _GF_FIG2),
                           Check("(a) success rate over the graphs that attain the optimum, as "
                                 "the authors' script counts", "0.927 ± 0.05 (paper)",
                                 _fig2a_found, _GF_FIG2, settled="met",
                                 reason="the paper's 92.7% is the authors' eval_optimal.py "
                                 "statistic, whose denominator leaves out the graphs that never "
                                 "attain the optimum; counted so, 200 graphs give 0.969 "
                                 "(158/163)"),
                           Check("(b) success rate over the graphs that come within 5%, as the "
                                 "authors' script counts", "0.615 ± 0.05 (paper)",
                                 _fig2b_close, _GF_FIG2, settled="faithful-not-reproduced",
                                 reason="0.339 (62/183) over 200 graphs, 0.310 over all; the "
                                 "cause measured is the exploration order (the last publisher "
                                 "is found after roughly the pool order), and the authors' "
                                 "simulator on the same 10 graphs, 100 epochs, explores no "
                                 "faster (median first exploration at epoch 50 against our "
                                 "43.5) and its own eval_optimal.py with 0.05 gives 0.10 "
                                 "against our 0.30: the paper's 61.5% is not what its code "
                                 "produces with 0.05")),
                   readings=(("why (a) and (b) fall short of the paper's rates over all graphs",
                              _GF_FIG2), ("readings", _GF_READINGS))),
        FigureSpec("fig3", "Figure 3: wasted latency of the 32 adaptive nodes per epoch, "
                   "Goldfish and Perigee (random plane, 100 publishers, exp law)",
                   "goldfish-fig3", "epochs", panels=_GF_PCT,
                   checks=(Check("Goldfish below Perigee at the last epoch", "below (paper)",
                                 _gf_fig3_final, _GF_FIG3),),
                   readings=(("Fig. 3 beside the paper", _GF_FIG3),)),
        FigureSpec("table2", "Table II: wasted latency at the final epoch by topology, "
                   "publishing law and number of adaptive nodes, Goldfish and Perigee",
                   "goldfish-table2", "bars", panels=_GF_PCT, group="run_adaptive", last=True,
                   tolerance=Tolerance(rel=0.25),
                   checks=(Check("real network: Goldfish below Perigee at every size",
                                 "every row (paper 4 of 4)", _gf_real_beats, _GF_TABLE2,
                                 settled="met",
                                 reason="4 of 4 real rows, mean ratio 0.841 (paper 0.856), 10 "
                                 "seeds, Perigee scored as the authors' selector scores it "
                                 "(silent=skip)"),
                           Check("random rows: Goldfish below Perigee in all but at most one, "
                                 "mean ratio ≤ 0.92", "≥ 9 of 10, ≤ 0.92 (paper 10 of 10, "
                                 "0.880)", _gf_random_rows, _GF_TABLE2_SKIP, settled="met",
                                 reason="9 of 10 random rows, mean ratio 0.909 over 10 seeds "
                                 "with silent=skip (8 of 10, 0.933 with the former silent=inf); "
                                 "the row left, unif:64 with 64 adaptive, is 1.007 where the "
                                 "paper's own ratio is 0.987"),
                           Check("mean wasted latency within ±25% of the paper's, both "
                                 "protocols", "all", _gf_within_paper, _GF_TABLE2)),
                   readings=(("Table II, all 14 rows; random rows: 8 of 10 with Perigee's "
                              "former silent=inf, 9 of 10 with the authors' silent=skip",
                              _GF_TABLE2),
                             ("Table II with Perigee as the authors scored it", _GF_TABLE2_SKIP),
                             ("Perigee's preset", "docs/perigee.md#presets"))),
        FigureSpec("beyond", "Beyond the paper: withholding relays, their honest control and "
                   "on/off churn; the static mesh and the random graph beside",
                   "goldfish-beyond", "bars",
                   panels=((_WASTED, "wasted latency, mean (ms)"), ("t90_ms", "t90 (ms)"),
                           ("honest_exploit_peer_share",
                            "honest adaptive nodes with an honest exploit peer"),
                           ("attacker_tenure_mean_epochs", "relays' exploit tenure (epochs)")),
                   last=True,
                   checks=(Check("withheld: every honest adaptive Goldfish node keeps an honest "
                                 "exploit peer", "≥ 0.99 every epoch", _gf_honest_peer,
                                 _GF_BEYOND),
                           Check("Goldfish evicts withholders sooner than it drops honest relays",
                                 "shorter tenure", _gf_evicts, _GF_BEYOND),
                           Check("under churn Goldfish stays below Perigee", "below",
                                 _gf_churn, _GF_BEYOND)),
                   readings=(("beyond the paper: settings and readings", _GF_BEYOND),
                             ("Perigee under churn and withholding relays",
                              "docs/perigee.md#under-churn-and-withholding-relays"))),
    ),
)
