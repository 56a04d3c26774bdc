"""Vitis (IPDPS 2011): the S0 comparisons with RVR and OPT (``docs/vitis-baselines.md``).
"""

from __future__ import annotations

import itertools
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
    Tolerance,
)
from hedgerow.figures.tidy import last_epochs, over_runs

__all__ = ["VITIS"]

_VITIS_DOC = "docs/vitis.md"
_VITIS_BASE = "docs/vitis-baselines.md"
_VITIS_S0 = (f"{_VITIS_BASE}#s0-10000-nodes-5000-topics-50-subscriptions-k-3-d-5-100-cycles-"
             "t-mans-ranked-partner")
_VITIS_READINGS = f"{_VITIS_DOC}#readings-a1-a13-and-the-measured-effect-of-each-switch"
_VITIS_OURS = f"{_VITIS_DOC}#our-numbers-beside-the-papers"
_VITIS_WORKLOADS = ("vitis-random", "vitis-low", "vitis-high")
_VITIS_TWITTER = (f"{_VITIS_BASE}#twitter-like-synthetic-follower-graph-10000-users-mean-793-"
                  "subscriptions-exponent-165")
_VITIS_FIG12 = f"{_VITIS_BASE}#churn-flash-crowd-at-4000-nodes"


def _rts(df: pd.DataFrame) -> list[int]:
    """The routing-table sizes in the rows, ascending."""
    if df.empty or "rt" not in df:
        return []
    return sorted({int(v) for v in pd.to_numeric(df["rt"], errors="coerce").dropna()})


def _vitis_hit(r: Results) -> Outcome:
    """The lowest hit ratio of Vitis and RVR over the workloads and RTs of Figure 6."""
    df = r.ok("vitis-fig6")
    sub = df[df["label"].isin(["Vitis", "RVR"])] if len(df) else df
    if sub.empty or set(sub["scenario"]) != set(_VITIS_WORKLOADS):
        return _NOT_RUN
    last = last_epochs(sub, 1)
    per = (
        pd.to_numeric(last["hit_ratio"], errors="coerce")
        .groupby([last["label"], last["scenario"]])
        .min()
    )
    (label, workload), worst = per.idxmin(), float(per.min())
    return f"lowest {worst:.5f} ({label}, {workload}; {len(last)} runs)", bool(worst >= 0.9999)


def _rvr_spread(r: Results) -> Outcome:
    """RVR's overhead spread across the three workloads, at every RT of Figure 6."""
    df = r.ok("vitis-fig6")
    texts, ok = [], True
    for rt in _rts(df):
        vals = [
            over_runs(
                df, "overhead", epochs="last", where={"label": "RVR", "scenario": w, "rt": rt}
            )
            for w in _VITIS_WORKLOADS
        ]
        if any(math.isnan(v) for v in vals):
            return _NOT_RUN
        spread = max(vals) - min(vals)
        ok &= bool(spread <= 0.02)
        texts.append(f"RT {rt}: {spread:.4f} ({min(vals):.3f}-{max(vals):.3f})")
    return ("; ".join(texts), ok) if texts else _NOT_RUN


def _vitis_order(r: Results) -> Outcome:
    """Overhead order Vitis high < low < random < RVR (RVR's lowest workload), every RT."""
    df = r.ok("vitis-fig6")
    texts, ok = [], True
    for rt in _rts(df):
        vitis = [
            over_runs(
                df, "overhead", epochs="last", where={"label": "Vitis", "scenario": w, "rt": rt}
            )
            for w in reversed(_VITIS_WORKLOADS)
        ]
        rvr = min(
            over_runs(
                df, "overhead", epochs="last", where={"label": "RVR", "scenario": w, "rt": rt}
            )
            for w in _VITIS_WORKLOADS
        )
        chain = [*vitis, rvr]
        if any(math.isnan(v) for v in chain):
            return _NOT_RUN
        ok &= bool(all(a < b for a, b in itertools.pairwise(chain)))
        texts.append(f"RT {rt}: " + " < ".join(f"{v:.3f}" for v in chain))
    return ("; ".join(texts), ok) if texts else _NOT_RUN


def _vitis_high_ratio(
    metric: str, rt: int, at_most: float, nodes: int | None = None
) -> Callable[[Results], Outcome]:
    """The check "Vitis(high) / RVR(high) ``metric`` at ``rt`` is at most ``at_most``".

    ``nodes`` keeps only runs of that size (a target settled at S0's 10,000 nodes).
    """

    def compute(r: Results) -> Outcome:
        df = r.ok("vitis-fig6")
        if nodes is not None and len(df):
            df = df[pd.to_numeric(df["nodes"], errors="coerce") == nodes]
        a = over_runs(
            df, metric, epochs="last", where={"label": "Vitis", "scenario": "vitis-high", "rt": rt}
        )
        b = over_runs(
            df, metric, epochs="last", where={"label": "RVR", "scenario": "vitis-high", "rt": rt}
        )
        if math.isnan(a) or math.isnan(b):
            return _NOT_RUN
        return f"{a / b:.3f} ({a:.3f} / {b:.3f})", bool(a / b <= at_most)

    return compute


def _falls_with_rt(r: Results) -> Outcome:
    """Overhead and delay lower at the largest RT than at the smallest, every system/workload."""
    df = r.ok("vitis-fig6")
    rts = _rts(df)
    if len(rts) < 2:
        return "needs two routing-table sizes", None
    lo, hi = rts[0], rts[-1]
    falls, total = 0, 0
    for label in ("Vitis", "RVR"):
        for w in _VITIS_WORKLOADS:
            for m in ("overhead", "delay_hops"):
                a = over_runs(df, m, epochs="last", where={"label": label, "scenario": w, "rt": lo})
                b = over_runs(df, m, epochs="last", where={"label": label, "scenario": w, "rt": hi})
                if math.isnan(a) or math.isnan(b):
                    return _NOT_RUN
                total += 1
                falls += b < a
    return f"{falls} of {total} (system, workload, measure) fall from RT {lo} to {hi}", bool(
        falls == total
    )


def _twitter(
    metric: str, test: Callable[[float, float], bool], describe: str, label: str = "RVR"
) -> Callable[[Results], Outcome]:
    """A check of Figure 10 at every RT: ``test(vitis, other)`` on ``metric``, other = ``label``."""

    def compute(r: Results) -> Outcome:
        df = r.ok("vitis-fig10")
        texts, ok = [], True
        for rt in _rts(df):
            a = over_runs(df, metric, epochs="last", where={"label": "Vitis", "rt": rt})
            b = over_runs(df, metric, epochs="last", where={"label": label, "rt": rt})
            if math.isnan(a) or math.isnan(b):
                return _NOT_RUN
            ok &= bool(test(a, b))
            texts.append(f"RT {rt}: {describe.format(a=a, b=b)}")
        return ("; ".join(texts), ok) if texts else _NOT_RUN

    return compute


def _random_third(r: Results) -> Outcome:
    """Vitis(random) / RVR(random) overhead at every RT of Figure 6; passes below one third."""
    df = r.ok("vitis-fig6")
    texts, ok = [], True
    for rt in _rts(df):
        a, b = (over_runs(df, "overhead", epochs="last",
                          where={"label": lab, "scenario": "vitis-random", "rt": rt})
                for lab in ("Vitis", "RVR"))
        if math.isnan(a) or math.isnan(b):
            return _NOT_RUN
        ok &= bool(a / b < 1 / 3)
        texts.append(f"RT {rt}: {a / b:.3f} ({a:.3f} / {b:.3f})")
    return ("; ".join(texts), ok) if texts else _NOT_RUN


def _twitter_delay_mean(r: Results) -> Outcome:
    """RVR's delay over Vitis's on the Twitter-like graph, averaged over the RTs run."""
    df = r.ok("vitis-fig10")
    ratios = []
    for rt in _rts(df):
        a = over_runs(df, "delay_hops", epochs="last", where={"label": "Vitis", "rt": rt})
        b = over_runs(df, "delay_hops", epochs="last", where={"label": "RVR", "rt": rt})
        if math.isnan(a) or math.isnan(b):
            return _NOT_RUN
        ratios.append(b / a)
    if not ratios:
        return _NOT_RUN
    mean = sum(ratios) / len(ratios)
    rts = _rts(df)
    return (f"{mean:.3f} over RT {rts[0]}-{rts[-1]} ({len(ratios)} RTs; "
            + ", ".join(f"{q:.3f}" for q in ratios) + ")", bool(mean >= 1.5))


#: OPT's two forwarding readings in the rows of Figure 10
_OPT_READINGS = (("OPT", "forward=topic"), ("OPT (forward=own)", "forward=own"))


def _vitis_vs_opt(r: Results) -> Outcome:
    """Vitis's delay over OPT's at every RT, per forwarding reading of OPT (paper 1/1.7 = 0.59).

    Passes when one reading is within ±25 % of 0.59 at every RT it ran.
    """
    df = r.ok("vitis-fig10")
    texts, any_ok = [], False
    for label, reading in _OPT_READINGS:
        qs = []
        for rt in _rts(df):
            a = over_runs(df, "delay_hops", epochs="last", where={"label": "Vitis", "rt": rt})
            b = over_runs(df, "delay_hops", epochs="last", where={"label": label, "rt": rt})
            if not (math.isnan(a) or math.isnan(b)):
                qs.append((rt, a / b))
        if qs:
            any_ok |= all(abs(q - 1 / 1.7) <= 0.25 / 1.7 for _, q in qs)
            texts.append(f"{reading}: " + ", ".join(f"RT {rt} {q:.3f}" for rt, q in qs))
    return ("; ".join(texts), bool(any_ok)) if texts else _NOT_RUN


def _twitter_hit(r: Results) -> Outcome:
    """The lowest hit ratio of Vitis and RVR over the RTs of Figure 10."""
    s = over_runs(
        r.ok("vitis-fig10"),
        "hit_ratio",
        epochs="last",
        reduce="rows",
        where={"label": ["Vitis", "RVR"]},
    )
    if s is None:
        return _NOT_RUN
    return f"lowest {s.min():.5f} ({len(s)} runs)", bool(s.min() >= 0.999)


def _opt_bounded_misses(r: Results) -> Outcome:
    s = over_runs(
        r.ok("vitis-fig10"), "hit_ratio", epochs="last", reduce="rows", where={"label": "OPT"}
    )
    if s is None:
        return _NOT_RUN
    return f"highest {s.max():.4f} over {len(s)} RTs", bool(s.max() < 1.0)


def _opt_unbounded_degree(r: Results) -> Outcome:
    df = r.ok("vitis-fig11")
    v = over_runs(df, "share_degree_above_15", epochs="last", where={"label": "OPT-unbounded"})
    if math.isnan(v):
        return _NOT_RUN
    return f"{v:.1%} above degree 15", bool(v > 2 / 3)


def _fig12_worst(r: Results) -> Outcome:
    """Figure 12: Vitis's worst sample above RVR's, over every run of the flash crowd."""
    df = r.ok("vitis-fig12")
    v = over_runs(df, "hit_ratio", reduce="rows", where={"label": "Vitis"})
    b = over_runs(df, "hit_ratio", reduce="rows", where={"label": "RVR"})
    if v is None or b is None or v.empty or b.empty:
        return _NOT_RUN
    a, c = float(v.min()), float(b.min())
    return f"worst samples: Vitis {a:.3f}, RVR {c:.3f}", bool(a > c)


def _fig12_recovery(r: Results) -> Outcome:
    """Figure 12: in every run Vitis is back to a hit ratio >= 0.99 within 10 cycles of its
    worst sample and stays there."""
    df = r.ok("vitis-fig12")
    if df.empty or not {"hit_ratio", "cycle"} <= set(df):
        return _NOT_RUN
    sub = df[df["label"] == "Vitis"]
    if sub.empty:
        return _NOT_RUN
    lags = []
    for _, run in sub.groupby("run_id"):
        hit = pd.to_numeric(run["hit_ratio"], errors="coerce")
        cyc = pd.to_numeric(run["cycle"], errors="coerce")
        worst = float(cyc[hit.idxmin()])
        below = cyc[(cyc > worst) & (hit < 0.99)]
        lags.append(float(below.max() - worst + 5) if len(below) else 5.0)
    return (f"back to ≥ 0.99 after at most {max(lags):g} cycles ({len(lags)} runs)",
            bool(max(lags) <= 10))


_VITIS_PANELS = (("hit_ratio", "hit ratio"), ("overhead", "traffic overhead (node)"),
                 ("delay_hops", "delay (hops)"))
_VITIS_QUICK = {"run.nodes": 2000, "run.cycles": 50}
_VITIS_READ = (("our numbers beside the paper's (S0, 10,000 nodes)", _VITIS_OURS),
               ("the readings A1-A13 and what each switch moves", _VITIS_READINGS))

VITIS = Paper(
    name="vitis",
    title="Vitis: A Gossip-based Hybrid Overlay for Internet-scale Publish/Subscribe Enabling "
    "Rendezvous Routing in Unstructured Overlay Networks (Rahimian, Girdzijauskas, Payberah, "
    "Haridi; IPDPS 2011)",
    doc=_VITIS_DOC,
    experiments=(
        Named("vitis-fig6.yaml", "vitis-fig6",
              Quick(grid={"scenario.run.rt": [15, 35]}, scenario=_VITIS_QUICK), 15.0, 1.1),
        Named("vitis-fig4.yaml", "vitis-fig4",
              Quick(labels=("Vitis(k=2)", "Vitis(k=15)", "RVR"), scenario=_VITIS_QUICK),
              9.0, 0.3),
        Named("vitis-fig5.yaml", "vitis-fig5", Quick(scenario=_VITIS_QUICK), 2.0, 0.2),
        Named("vitis-fig7.yaml", "vitis-fig7",
              Quick(grid={"scenario.run.name": ["vitis-random", "vitis-high"],
                          "scenario.run.alpha": [0.3, 3.0]}, scenario=_VITIS_QUICK), 8.0, 0.3),
        # the Twitter-like graph (named input vitis-tw10k, ingested once by the sweep): its
        # 10,000 users are the nodes, so the quick run keeps two RTs and 30 cycles
        Named("vitis-fig10.yaml", "vitis-fig10",
              Quick(grid={"scenario.run.rt": [15, 35]}, labels=("Vitis", "RVR", "OPT"),
                    scenario={"run.cycles": 30}), 23.0, 4.0),
        Named("vitis-fig11.yaml", "vitis-fig11", Quick(), 3.5, 3.5),
        # the flash crowd of section IV-F (named cycle churn scenario); quick: 1,000 nodes
        Named("vitis-fig12.yaml", "vitis-fig12",
              Quick(seeds=(1,), scenario={"churn.scenario": "vitis-flash-crowd-quick"}),
              5.0, 1.5),
    ),
    figures=(
        FigureSpec("fig4", "Figure 4: friends against small-world links at RT 15 (k = ring "
                   "links; k = 2 keeps 13 friends, k = 15 none), RVR beside, per workload",
                   "vitis-fig4", "bars",
                   panels=(*_VITIS_PANELS, ("overhead_copies", "traffic overhead (copies)")),
                   group="scenario", last=True, tolerance=Tolerance(abs=0.0001),
                   readings=_VITIS_READ),
        FigureSpec("fig5", "Figure 5: per-node traffic overhead at RT 15, Vitis against RVR",
                   "vitis-fig5", "bars",
                   panels=(("share_overhead_above_20", "share of nodes above 20% overhead"),
                           ("overhead_node_p50", "per-node overhead, median"),
                           ("overhead_node_p90", "per-node overhead, 90th percentile")),
                   group="scenario", last=True, readings=_VITIS_READ),
        FigureSpec("fig6", "Figure 6: Vitis against the routing-table size, one line per "
                   "workload", "vitis-fig6", "lines", panels=_VITIS_PANELS, x="rt",
                   xlabel="routing-table size", series="scenario", labels=("Vitis",), last=True,
                   tolerance=Tolerance(abs=0.0001),
                   checks=(
                       Check("hit ratio ≥ 0.9999 for Vitis and RVR on the three workloads",
                             "≥ 0.9999 (paper: 100%)", _vitis_hit, _VITIS_S0),
                       Check("overhead order Vitis high < low < random < RVR at every RT",
                             "high < low < random < RVR", _vitis_order, _VITIS_S0),
                       Check("Vitis(high) overhead ≤ 0.5 × RVR's at RT 15", "≤ 0.5",
                             _vitis_high_ratio("overhead", 15, 0.5), _VITIS_S0),
                       Check("Vitis(high) overhead ≤ 0.2 × RVR's at RT 35, S0's 10,000 nodes",
                             "≤ 0.2", _vitis_high_ratio("overhead", 35, 0.2, nodes=10000),
                             _VITIS_S0),
                       Check("Vitis(high) delay ≤ 0.5 × RVR's at RT 15", "≤ 0.5",
                             _vitis_high_ratio("delay_hops", 15, 0.5), _VITIS_S0),
                       Check("random workload: Vitis's overhead below one third of RVR's",
                             "< 1/3 (paper: 'less than one third')", _random_third, _VITIS_S0,
                             settled="faithful-not-reproduced",
                             reason="0.862 at RT 15 and 0.582 at RT 35 at S0's 10,000 nodes; "
                             "every reading tried (A1, A2, A4, A5a/b, A6, sampler, relay "
                             "forwarding, k) moves Vitis's overhead by at most 0.06; with 50 "
                             "random topics of 5,000 the clusters stay tiny, so the relay "
                             "structure, not a parameter, is what costs"),
                       Check("overhead and delay fall with the RT for both systems on every "
                             "workload", "falling", _falls_with_rt, _VITIS_S0),
                   ),
                   readings=(*_VITIS_READ,
                             ("the paper's 'less than one third' of RVR (random) and the "
                              "crossing above RT 30: not reproduced", _VITIS_S0))),
        FigureSpec("fig6-rvr", "Figure 6: RVR against the routing-table size, one line per "
                   "workload (the paper draws one line)", "vitis-fig6", "lines",
                   panels=_VITIS_PANELS, x="rt", xlabel="routing-table size", series="scenario",
                   labels=("RVR",), last=True, tolerance=Tolerance(abs=0.0001),
                   checks=(Check("RVR's overhead spread across the workloads ≤ 0.02 at every RT",
                                 "≤ 0.02 (one line)", _rvr_spread, _VITIS_S0),),
                   readings=(("RVR and the workloads", f"{_VITIS_BASE}#rvr-rvr"),)),
        FigureSpec("fig7", "Figure 7: Vitis under power-law publication rates (α, log scale in "
                   "the paper), one line per workload", "vitis-fig7", "lines",
                   panels=_VITIS_PANELS, x="run_alpha", xlabel="α", series="scenario",
                   labels=("Vitis",), last=True,
                   readings=(("workloads and rates",
                              f"{_VITIS_BASE}#workloads-workloadscorrelatedpy"),)),
        FigureSpec("fig7-rvr", "Figure 7: RVR under power-law publication rates, one line per "
                   "workload", "vitis-fig7", "lines", panels=_VITIS_PANELS, x="run_alpha",
                   xlabel="α", series="scenario", labels=("RVR",), last=True),
        FigureSpec("fig10", "Figure 10: Twitter-like follower graph (synthetic, 10,000 users, "
                   "mean 80 subscriptions; not the paper's sample), Vitis, RVR and OPT against "
                   "the routing-table size", "vitis-fig10", "lines", panels=_VITIS_PANELS,
                   x="rt", xlabel="routing-table size", last=True,
                   tolerance=Tolerance(abs=0.0001),
                   checks=(
                       Check("Twitter-like: hit ratio ≥ 0.999 for Vitis and RVR at every RT",
                             "≥ 0.999 "
                             "(paper: 100%)", _twitter_hit, _VITIS_TWITTER),
                       Check("Twitter-like: Vitis's overhead below RVR's at every RT",
                             "below",
                             _twitter("overhead", lambda a, b: a < b, "{a:.3f} < {b:.3f}"),
                             _VITIS_TWITTER),
                       Check("Twitter-like, averaged over the RTs: RVR's delay ≥ 1.5 × "
                             "Vitis's", "≥ 1.5× (paper: 'more than 1.5 times')",
                             _twitter_delay_mean, _VITIS_TWITTER, settled="met",
                             reason="1.527 averaged over RT 15-35 (seed 1: 1.591, 1.532, "
                             "1.520, 1.494, 1.497), on the synthetic Twitter-like graph"),
                       Check("Twitter-like: RVR's delay ≥ 1.5 × Vitis's at every RT",
                             "≥ 1.5× (paper: "
                             "'more than 1.5 times')",
                             _twitter("delay_hops", lambda a, b: b >= 1.5 * a,
                                      "{b:.2f} / {a:.2f} hops"), _VITIS_TWITTER,
                             settled="undecidable",
                             reason="at RT 30 and 35 the ratio sits on the threshold (seeds "
                             "1-3: 1.494-1.505, means 1.499 and 1.500), met on some seeds and "
                             "not on others, on substitute data, not the paper's Twitter "
                             "sample"),
                       Check("Twitter-like: Vitis 1.7× faster than OPT, under each forwarding "
                             "reading of OPT", "Vitis / OPT delay 0.59 ± 25 % (paper: 1.7×)",
                             _vitis_vs_opt, _VITIS_TWITTER, settled="undecidable",
                             reason="the paper does not say which links OPT forwards an event "
                             "on: on the topic's subgraph (forward=topic) OPT is faster (Vitis "
                             "/ OPT 1.74 at RT 15, 1.54 at RT 35), on the topic's own ring "
                             "(forward=own) Vitis is 10-19× faster; neither gives 1.7×, and "
                             "'similar to SpiderCast' points to forward=topic"),
                       Check("Twitter-like: bounded OPT misses subscribers",
                             "< 1 (paper: 80% at RT 35)", _opt_bounded_misses, _VITIS_TWITTER),
                   ),
                   readings=(("OPT's two forwarding readings and the 1.7x not reproduced",
                              _VITIS_TWITTER),)),
        FigureSpec("fig11", "Figure 11: OPT without a degree bound on the Twitter-like graph",
                   "vitis-fig11", "bars",
                   panels=(("share_degree_above_15", "share of nodes above degree 15"),
                           ("share_degree_above_200", "share of nodes above degree 200"),
                           ("degree_max", "maximum degree"), ("hit_ratio", "hit ratio")),
                   group="nodes", last=True, tolerance=Tolerance(rel=0.25, abs=0.005),
                   checks=(Check("Twitter-like, unbounded OPT: more than two thirds of the "
                                 "nodes above degree 15", "> 2/3 (paper)",
                                 _opt_unbounded_degree, _VITIS_TWITTER),),
                   readings=(("OPT (opt)", f"{_VITIS_BASE}#opt-opt"),)),
        FigureSpec("fig12", "Figure 12: churn, Vitis against RVR through a flash crowd (half "
                   "the nodes join within 5 cycles, then on/off churn; the paper replays a "
                   "Skype trace), a sample every 5 cycles", "vitis-fig12", "lines",
                   panels=(*_VITIS_PANELS, ("ring_correct", "ring correct")), x="cycle",
                   xlabel="cycle",
                   checks=(
                       Check("Flash crowd: Vitis's worst hit ratio above RVR's",
                             "Vitis > RVR (paper: about 99% against 87%)", _fig12_worst,
                             _VITIS_FIG12),
                       Check("Flash crowd: Vitis back to a hit ratio ≥ 0.99 within 10 cycles "
                             "of its worst sample, in every run", "≤ 10 cycles",
                             _fig12_recovery, _VITIS_FIG12),
                   ),
                   readings=(("the flash crowd at 4,000 nodes, and why RVR falls below 87%",
                              _VITIS_FIG12),)),
        FigureSpec("fig12-worst", "Figure 12: the worst sample of each run (the paper: RVR "
                   "'goes down to 87%', Vitis's worst case 'about 99%')", "vitis-fig12",
                   "bars", panels=(("hit_ratio_min", "worst hit ratio"),), last=True,
                   readings=(("the flash crowd at 4,000 nodes", _VITIS_FIG12),)),
    ),
)

# ---------------------------------------------------------------------------------------------
