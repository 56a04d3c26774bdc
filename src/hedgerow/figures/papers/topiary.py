"""Topiary (arXiv 2312.06800): Figures 3-10, the checks of ``benchmarks/bench_topiary.py``
and the settled acceptance of the eclipse attack (``docs/topiary.md``).
"""

from __future__ import annotations

import math

import pandas as pd

from hedgerow.figures.papers._checks import _NOT_RUN, final_at_least
from hedgerow.figures.papers._declare import (
    Check,
    FigureSpec,
    Named,
    Outcome,
    Paper,
    Quick,
    Results,
    ScoreRun,
)
from hedgerow.figures.tidy import last_epochs, over_runs

__all__ = ["TOPIARY"]

_TOP_DOC = "docs/topiary.md"
_TOP_READINGS = f"{_TOP_DOC}#readings-chosen-where-the-paper-is-ambiguous"
_ECLIPSE = f"{_TOP_DOC}#settled-acceptance-the-eclipse-attack"
_TOP_SCEN = f"{_TOP_DOC}#scenarios-hedgerowscenarios"


def _convergence(experiment: str, label: str) -> list[Check]:
    def delay(r: Results) -> Outcome:
        df = r.ok(experiment)
        if df.empty:
            return _NOT_RUN
        a, b = (
            over_runs(df, "delay_mean_ms", epochs="first", where={"label": label}),
            over_runs(df, "delay_mean_ms", epochs=10, where={"label": label}),
        )
        if math.isnan(a) or math.isnan(b):
            return _NOT_RUN
        return f"{b / a:.2f} ({a:.0f} → {b:.0f} ms)", b / a <= 0.6

    def early(r: Results) -> Outcome:
        df = r.ok(experiment)
        sub = df[df["label"] == label] if len(df) else df
        if sub.empty:
            return _NOT_RUN
        per = pd.to_numeric(sub["receive_rate"], errors="coerce").groupby(sub["epoch"]).mean()
        hit = [int(e) for e, v in per.items() if e <= 20 and v >= 0.9]
        return (f"epoch {hit[0]}" if hit else "not within 20 epochs"), bool(hit)

    src = "benchmarks/bench_topiary.py"
    return [
        Check(
            f"{label}: final receive rate ≥ 0.98",
            "~98% (V-B3)",
            final_at_least(experiment, "receive_rate", label, 0.98),
            src,
        ),
        Check(f"{label}: final delay ≤ 0.6 × epoch 0", "~50% lower (V-B1)", delay, src),
        Check(
            f"{label}: receive rate ≥ 0.9 within 20 epochs", "> 90% after ~10 epochs", early, src
        ),
    ]


def _fig5_beats(r: Results) -> Outcome:
    df = r.ok("topiary-fig5")
    if df.empty:
        return _NOT_RUN
    t_rate, t_delay = (
        over_runs(df, "receive_rate", epochs=10, where={"label": "topiary"}),
        over_runs(df, "delay_mean_ms", epochs=10, where={"label": "topiary"}),
    )
    texts, ok = [], True
    for b in ("random", "gossipsub", "scribe-random", "scribe-topic"):
        rate, delay = (
            over_runs(df, "receive_rate", epochs="last", where={"label": b}),
            over_runs(df, "delay_mean_ms", epochs="last", where={"label": b}),
        )
        if math.isnan(delay):
            continue
        ok &= t_delay < delay and t_rate >= rate
        texts.append(f"{b} {delay:.0f} ms/{rate:.2f}")
    return f"topiary {t_delay:.0f} ms/{t_rate:.2f} vs " + ", ".join(texts), ok


def _fig5_complete(r: Results) -> Outcome:
    df = r.ok("topiary-fig5")
    c = (
        over_runs(df, "delay_mean_ms", epochs="last", where={"label": "complete"})
        if len(df)
        else float("nan")
    )
    if math.isnan(c):
        return _NOT_RUN
    t = over_runs(df, "delay_mean_ms", epochs=10, where={"label": "topiary"})
    return f"{c:.0f} ms ≤ {t:.0f} ms", c <= t


def _cities(r: Results) -> Outcome:
    df = r.ok("topiary-cities")
    if df.empty:
        return _NOT_RUN
    t, b = (
        over_runs(df, "delay_mean_ms", epochs=10, where={"label": "topiary"}),
        over_runs(df, "delay_mean_ms", epochs="last", where={"label": "random"}),
    )
    gain = 1 - t / b
    return f"{gain:.1%} ({b:.0f} → {t:.0f} ms)", gain >= 0.4


def _eclipse_share(r: Results) -> Outcome:
    df = r.ok("topiary-attacks")
    sub = df[df["label"] == "eclipse 300"] if len(df) else df
    if sub.empty:
        return _NOT_RUN
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
        return _NOT_RUN
    a, c = (
        over_runs(df, "delay_mean_ms", epochs=10, where={"label": "eclipse 300"}),
        over_runs(df, "delay_mean_ms", epochs=10, where={"label": "no attackers"}),
    )
    if math.isnan(a) or math.isnan(c):
        return _NOT_RUN
    return f"{a:.1f} vs {c:.1f} ms", a <= c


def _eclipse_streak(r: Results) -> Outcome:
    df = r.ok("topiary-attacks")
    v = (
        over_runs(df, "eclipse_streak_max", epochs="last", where={"label": "eclipse 300"})
        if len(df)
        else float("nan")
    )
    if math.isnan(v):
        return _NOT_RUN
    return f"longest streak {v:.0f} epochs", v <= 5


# ---------------------------------------------------------------------------------------------


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
                                 final_at_least("topiary-cities", "receive_rate", "topiary",
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
                                 final_at_least("topiary-attacks", "victim_receive_rate",
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
