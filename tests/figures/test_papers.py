"""The Vitis, OMen and Goldfish declarations: figures match their specs, checks compute right.

The checks are fed small hand-made frames (the columns a sweep writes), so
their arithmetic and their "not in these runs" answers are tested without
running a sweep.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hedgerow.experiment.reference import REFERENCES
from hedgerow.figures.papers import GOLDFISH, OMEN, PAPERS, VITIS, Results, get_paper
from hedgerow.pipeline.reproduce import spec_for

NEW = (VITIS, OMEN, GOLDFISH)


def _check(paper, text_start: str):
    """The check of ``paper`` whose text starts with ``text_start``."""
    found = [c for f in paper.figures for c in f.checks if c.text.startswith(text_start)]
    assert len(found) == 1, text_start
    return found[0]


def _results(tmp_path: Path, **frames: pd.DataFrame) -> Results:
    """Results whose experiments hold the given frames (every row ``ok``)."""
    r = Results(tmp_path)
    for name, df in frames.items():
        r._rows[name.replace("_", "-")] = df.assign(status="ok").reset_index(drop=True)
    return r


@pytest.mark.parametrize("paper", NEW, ids=lambda p: p.name)
def test_registered(paper):
    assert PAPERS[paper.name] is paper and get_paper(paper.name) is paper
    assert Path(paper.doc).name.endswith(".md")


@pytest.mark.parametrize("paper", NEW, ids=lambda p: p.name)
def test_figures_draw_declared_experiments_and_reported_metrics(paper):
    declared = {e.experiment for e in paper.experiments}
    for named in paper.experiments:
        spec_for(named, quick=True)  # every quick reduction validates
    for fig in paper.figures:
        assert fig.experiment in declared, fig.id
        spec = spec_for(paper.spec_for(fig.experiment), quick=True)
        reported = set(spec.report.metrics)
        for metric, _ in fig.panels:
            assert metric in reported, (fig.id, metric)
        if fig.labels is not None:
            labels = {r.label for r in spec.expand()}
            assert set(fig.labels) <= labels, fig.id
        assert fig.kind in ("lines", "epochs", "bars"), fig.id
        if fig.kind == "lines":
            assert fig.x is not None


@pytest.mark.parametrize("paper", NEW, ids=lambda p: p.name)
def test_tolerances_only_where_the_paper_prints_values(paper):
    for fig in paper.figures:
        if fig.tolerance is None:
            continue
        ref = spec_for(paper.spec_for(fig.experiment), quick=False).reference
        metrics = {m for m, _ in fig.panels}
        assert metrics & set(REFERENCES[ref].values), fig.id


@pytest.mark.parametrize("paper", NEW, ids=lambda p: p.name)
def test_checks_say_not_run_without_rows(paper, tmp_path):
    r = Results(tmp_path)
    for fig in paper.figures:
        for check in fig.checks:
            assert check.compute(r)[1] is None, check.text


def _vitis_fig6(high: float = 0.2) -> pd.DataFrame:
    rows = []
    base = {"random": 0.6, "low": 0.5, "high": high}
    for rt, scale in ((15, 1.0), (35, 0.7)):
        for wl, v in base.items():
            for label, over, delay in (("Vitis", v, 8 * v), ("RVR", 0.68 + 0.001 * len(wl), 9)):
                rows.append({"run_id": f"{label}-{wl}-{rt}", "epoch": 0, "label": label,
                             "scenario": f"vitis-{wl}", "rt": rt, "nodes": 2000,
                             "hit_ratio": 1.0 - 1e-5, "overhead": over * scale,
                             "delay_hops": delay * scale})
    return pd.DataFrame(rows)


def test_vitis_checks_compute_from_rows(tmp_path):
    r = _results(tmp_path, vitis_fig6=_vitis_fig6())
    assert _check(VITIS, "overhead order").compute(r) == (
        "RT 15: 0.200 < 0.500 < 0.600 < 0.683; RT 35: 0.140 < 0.350 < 0.420 < 0.478", True)
    text, ok = _check(VITIS, "RVR's overhead spread").compute(r)
    assert ok and text.startswith("RT 15: 0.0030")
    assert _check(VITIS, "Vitis(high) overhead ≤ 0.5").compute(r) == (
        "0.292 (0.200 / 0.684)", True)
    assert _check(VITIS, "Vitis(high) overhead ≤ 0.2").compute(r)[1] is None  # 10,000 only
    assert _check(VITIS, "hit ratio").compute(r)[1] is True
    assert _check(VITIS, "overhead and delay fall").compute(r)[1] is True
    worse = _results(tmp_path, vitis_fig6=_vitis_fig6(high=0.55))
    assert _check(VITIS, "overhead order").compute(worse)[1] is False
    assert _check(VITIS, "Vitis(high) overhead ≤ 0.5").compute(worse)[1] is False


def _omen_fig9(omen_max: tuple[float, ...], violations: int = 0) -> pd.DataFrame:
    rows = []
    degrees = {"OMen": omen_max, "OMen-G": (10, 10), "LowODA-Inc": (10, 10),
               "LowODA-Re": (10, 10)}
    for label, maxes in degrees.items():
        for e, d in enumerate(maxes):
            rows.append({"run_id": label, "seed": 1, "epoch": e, "label": label,
                         "max_degree": d, "avg_degree": 4.0 + (label == "OMen"),
                         "violations": violations if label == "OMen-G" else 0,
                         "view_below_5pct": 0.99})
    return pd.DataFrame(rows)


def test_omen_checks_compute_from_rows(tmp_path):
    r = _results(tmp_path, omen_fig9=_omen_fig9((10, 12)))
    text, ok = _check(OMEN, "OMen's maximum degree").compute(r)
    assert ok and text.startswith("1.100 (1 seed, 2 rounds each)")  # (10/10 + 12/10) / 2
    assert _check(OMEN, "OMen's average degree").compute(r)[0].startswith("1.000")
    assert _check(OMEN, "0 invariant violations").compute(r)[1] is True
    assert _check(OMEN, "local views").compute(r)[1] is True
    bad = _results(tmp_path, omen_fig9=_omen_fig9((12, 13), violations=1))
    assert _check(OMEN, "OMen's maximum degree").compute(bad)[1] is False  # 1.25
    text, ok = _check(OMEN, "0 invariant violations").compute(bad)
    assert not ok and "OMen-G 2 in 2 rounds" in text
    assert _check(OMEN, "OMen's median repair").compute(bad)[1] is None


def test_goldfish_checks_compute_from_rows(tmp_path):
    nan = float("nan")
    fig2 = pd.DataFrame({"run_id": [f"g{i}" for i in range(6)], "label": "goldfish",
                         "fig2a_success": [1, 1, 1, 0, 1, 0],
                         "fig2b_success": [1, 0, 0, 0, 1, 0],
                         # graphs 3 and 5 never attain the optimum; 5 never comes within 5%
                         "fig2a_success_found": [1, 1, 1, nan, 1, nan],
                         "fig2b_success_close": [1, 0, 0, 0, 1, nan],
                         "publisher_full": [0, 0, 0, 0, 0, 1]})
    table2 = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "epoch": 99,
                           "label": ["goldfish real exp:100", "perigee real exp:100"] * 2,
                           "adaptive": [32, 32, 64, 64],
                           "wasted_latency_mean_ms": [200.0, 250.0, 180.0, 170.0]})
    r = _results(tmp_path, goldfish_fig2=fig2, goldfish_table2=table2)
    # 4 of the 5 reachable graphs succeed: 0.8 < 0.9
    assert _check(GOLDFISH, "(a) success rate where").compute(r) == (
        "0.800 (4/5; all graphs 0.667)", False)
    # the authors' denominators: 4/4 graphs that attain the optimum, 2/5 that come close
    text, ok = _check(GOLDFISH, "(a) success rate over").compute(r)
    assert not ok and text.startswith("1.000 (4/4 graphs; all 6 graphs 0.667; paper 0.927)")
    ten = pd.DataFrame({"run_id": [f"t{i}" for i in range(11)], "label": "goldfish",
                        "fig2a_success": [1] * 9 + [0, 0],
                        "fig2a_success_found": [1] * 9 + [0, nan]})
    text, ok = _check(GOLDFISH, "(a) success rate over").compute(
        _results(tmp_path / "ten", goldfish_fig2=ten))
    assert ok and text.startswith("0.900 (9/10 graphs; all 11 graphs 0.818")  # within 0.05
    text, ok = _check(GOLDFISH, "(b) success rate over").compute(r)
    assert not ok and text.startswith("0.400 (2/5 graphs; all 6 graphs 0.333; paper 0.615)")
    text, ok = _check(GOLDFISH, "real network").compute(r)
    assert not ok and text.startswith("32 adaptive: 0.800") and "64 adaptive: 1.059" in text
    paper = REFERENCES["goldfish-table2"].values["wasted_latency_mean_ms"]
    inside = sum(abs(v - paper[lab][n]) / paper[lab][n] <= 0.25
                 for lab, n, v in zip(table2["label"], table2["adaptive"],
                                      table2["wasted_latency_mean_ms"], strict=True)
                 if n in paper.get(lab, {}))
    text, _ = _check(GOLDFISH, "mean wasted latency within").compute(r)
    assert text.startswith(f"{inside} of ")


def test_table2_paper_values_reach_the_figure_table(tiny_results):
    """Table II's key is ``adaptive``; the rows hold it as ``run_adaptive``."""
    from hedgerow.figures.render import figure_table

    fig = next(f for f in GOLDFISH.figures if f.id == "table2")
    table = figure_table(fig, Results(tiny_results, quick=True))
    assert table["paper"].notna().sum() >= 8  # 8 rows at 32 adaptive nodes


def _vitis_fig10(rvr_delay: float = 9.0) -> pd.DataFrame:
    rows = []
    for rt in (15, 35):
        for label, hit, over, delay in (("Vitis", 1.0, 0.4, 6.0), ("RVR", 0.9995, 0.6, rvr_delay),
                                        ("OPT", 0.94, 0.0, 3.0)):
            rows.append({"run_id": f"{label}-{rt}", "epoch": 0, "label": label, "rt": rt,
                         "hit_ratio": hit, "overhead": over, "delay_hops": delay})
    return pd.DataFrame(rows)


def test_vitis_twitter_checks_compute_from_rows(tmp_path):
    r = _results(tmp_path, vitis_fig10=_vitis_fig10(),
                 vitis_fig11=pd.DataFrame([{"run_id": "u", "epoch": 0, "label": "OPT-unbounded",
                                            "share_degree_above_15": 0.93}]))
    assert _check(VITIS, "Twitter-like: hit ratio").compute(r) == ("lowest 0.99950 (4 runs)", True)
    assert _check(VITIS, "Twitter-like: Vitis's overhead").compute(r) == (
        "RT 15: 0.400 < 0.600; RT 35: 0.400 < 0.600", True)
    assert _check(VITIS, "Twitter-like: RVR's delay").compute(r) == (
        "RT 15: 9.00 / 6.00 hops; RT 35: 9.00 / 6.00 hops", True)
    assert _check(VITIS, "Twitter-like: bounded OPT").compute(r)[1] is True
    assert _check(VITIS, "Twitter-like, unbounded OPT").compute(r) == (
        "93.0% above degree 15", True)
    # on the threshold from below, as our seeds 1-3 at RT 30-35: not met
    close = _results(tmp_path, vitis_fig10=_vitis_fig10(rvr_delay=8.97))
    assert _check(VITIS, "Twitter-like: RVR's delay").compute(close)[1] is False


# ---------------------------------------------------------------------------------------------
# the settled checks of issue #30: declared verdicts, and how each computes from rows

#: (paper name, start of the check's text) -> the verdict the project settled it with
SETTLED = {
    ("goldfish", "(a) success rate over"): "met",
    ("goldfish", "(b) success rate over"): "faithful-not-reproduced",
    ("goldfish", "real network"): "met",
    ("goldfish", "random rows"): "met",
    ("omen", "OMen's repair time / LowODA-Re"): "met",
    ("omen", "OMen's repair time / OMen-G"): "undecidable",
    ("omen", "OMen-G's repair time / LowODA-Re"): "undecidable",
    ("omen", "LowODA's maximum degree"): "met",
    ("vitis", "random workload"): "faithful-not-reproduced",
    ("vitis", "Twitter-like, averaged over the RTs"): "met",
    ("vitis", "Twitter-like: RVR's delay ≥ 1.5 × Vitis's at every RT"): "undecidable",
    ("vitis", "Twitter-like: Vitis 1.7× faster than OPT"): "undecidable",
}


@pytest.mark.parametrize(("key", "verdict"), list(SETTLED.items()),
                         ids=[f"{p}:{t}" for p, t in SETTLED])
def test_settled_checks_carry_their_verdict(key, verdict):
    name, text = key
    check = _check(PAPERS[name], text)
    assert check.settled == verdict
    assert len(check.reason) > 40  # a reason a reader can check, not a word
    assert check.source.startswith("docs/")


@pytest.mark.parametrize("paper", NEW, ids=lambda p: p.name)
def test_every_verdict_is_declared_with_a_reason(paper):
    from hedgerow.figures.papers import VERDICTS

    for fig in paper.figures:
        for c in fig.checks:
            assert c.settled is None or (c.settled in VERDICTS and c.reason), c.text


def test_a_check_refuses_an_unknown_verdict_or_a_missing_reason():
    from hedgerow.errors import HedgerowError
    from hedgerow.figures.papers import Check

    with pytest.raises(HedgerowError, match="settled 'reproduced' is not one of met"):
        Check("x", "t", lambda r: ("", None), settled="reproduced", reason="why")
    with pytest.raises(HedgerowError, match="needs its reason"):
        Check("x", "t", lambda r: ("", None), settled="met")


def test_status_reads_the_outcome_against_the_verdict():
    from hedgerow.figures.papers import Check

    def make(v):
        return Check("x", "t", lambda r: ("", None), settled=v, reason="r" if v else "")

    assert [make(None).status(ok) for ok in (True, False, None)] == ["pass", "fail", "not-run"]
    assert make("met").status(False) == "regression"
    assert make("faithful-not-reproduced").status(False) == "as-settled"
    assert make("undecidable").status(False) == "as-settled"
    assert make("undecidable").status(None) == "not-run"
    assert make("faithful-not-reproduced").status(True) == "pass"


def test_vitis_settled_checks_compute_from_rows(tmp_path):
    # random workload: Vitis 0.6 against RVR ~0.686 at RT 15 (0.875), far above one third
    r = _results(tmp_path, vitis_fig6=_vitis_fig6())
    text, ok = _check(VITIS, "random workload").compute(r)
    assert not ok and text.startswith("RT 15: 0.875 (0.600 / 0.686)")
    third = _vitis_fig6()
    third.loc[(third["label"] == "Vitis") & (third["scenario"] == "vitis-random"),
              "overhead"] = 0.1
    assert _check(VITIS, "random workload").compute(_results(tmp_path, vitis_fig6=third))[1]
    # the delay ratio averaged over the RTs: 9 / 6 = 1.5 at both
    r = _results(tmp_path, vitis_fig10=_vitis_fig10())
    assert _check(VITIS, "Twitter-like, averaged").compute(r) == (
        "1.500 over RT 15-35 (2 RTs; 1.500, 1.500)", True)
    close = _results(tmp_path, vitis_fig10=_vitis_fig10(rvr_delay=8.97))
    assert _check(VITIS, "Twitter-like, averaged").compute(close)[1] is False
    # Vitis against OPT: 6 / 3 = 2.0 under forward=topic; forward=own not in these rows
    text, ok = _check(VITIS, "Twitter-like: Vitis 1.7×").compute(r)
    assert text == "forward=topic: RT 15 2.000, RT 35 2.000" and ok is False
    own = pd.concat([_vitis_fig10(), pd.DataFrame(
        [{"run_id": f"own-{rt}", "epoch": 0, "label": "OPT (forward=own)", "rt": rt,
          "hit_ratio": 0.9, "overhead": 0.0, "delay_hops": 10.0} for rt in (15, 35)])])
    text, ok = _check(VITIS, "Twitter-like: Vitis 1.7×").compute(
        _results(tmp_path, vitis_fig10=own))
    assert ok and text.endswith("forward=own: RT 15 0.600, RT 35 0.600")  # 0.6 ≈ 1/1.7


def _omen_fig10(omen_ms=(0.2, 0.4, 0.3), g_ms=(0.6, 0.8, 0.7), all_ms=(2.0, 3.0, 4.0),
                re_ms=(100.0, 100.0, 100.0)) -> pd.DataFrame:
    rows = []
    for label, ms, key in (("OMen", omen_ms, "omen_repair_seconds"),
                           ("OMen-G", g_ms, "omen_repair_seconds"),
                           ("OMen-G (all)", all_ms, "omen_repair_seconds"),
                           ("LowODA-Re", re_ms, "repair_cpu_seconds")):
        for e, v in enumerate(ms):
            rows.append({"run_id": label, "seed": 1, "epoch": e, "label": label,
                         key: v / 1000, "type": "join"})
    return pd.DataFrame(rows)


def test_omen_cost_checks_compute_from_rows(tmp_path):
    r = _results(tmp_path, omen_fig10=_omen_fig10())
    # OMen 0.3 ms mean and median against 100 ms: 0.30 %
    assert _check(OMEN, "OMen's repair time / LowODA-Re").compute(r) == (
        "mean 0.30% (median 0.30%), 3 events", True)
    # OMen / OMen-G: 0.3 / 0.7 (42.86 %) and 0.3 / 3.0 (10 %), neither near 4.67 %
    text, ok = _check(OMEN, "OMen's repair time / OMen-G").compute(r)
    assert not ok and text == ("mean 42.86% (median 42.86%) (λ-backup global view); mean 10.00% "
                               "(median 10.00%) (backups=all), 3 events")
    # OMen-G (all) at 4.3 ms against 100 ms: the paper's implied 4.28 % is met by that reading
    near = _results(tmp_path, omen_fig10=_omen_fig10(all_ms=(4.3, 4.3, 4.3)))
    text, ok = _check(OMEN, "OMen-G's repair time / LowODA-Re").compute(near)
    assert ok and "mean 4.30% (median 4.30%) (backups=all)" in text
    # without LowODA-Re's rows the checks against it are not run
    no_re = _omen_fig10()
    no_re = no_re[no_re["label"] != "LowODA-Re"]
    assert _check(OMEN, "OMen's repair time / LowODA-Re").compute(
        _results(tmp_path, omen_fig10=no_re))[1] is None


def _omen_rho(maxes: dict[str, tuple[int, ...]]) -> pd.DataFrame:
    return pd.DataFrame([{"run_id": f"{label}-{s}", "seed": s, "epoch": 1, "label": label,
                          "start_max_degree": d, "start_avg_degree": 4.0}
                         for label, ds in maxes.items() for s, d in enumerate(ds, 1)])


def test_omen_rho_trend_computes_from_rows(tmp_path):
    good = {"LowODA rho=1": (318, 318), "LowODA rho=2": (80, 80), "LowODA rho=3": (56, 57),
            "LowODA rho=4": (53, 52), "LowODA rho=8": (51, 52), "MinMaxODA": (52, 52)}
    text, ok = _check(OMEN, "LowODA's maximum degree").compute(
        _results(tmp_path, omen_rho=_omen_rho(good)))
    assert ok and text == ("D(1) 318.0 > D(2) 80.0 > D(4) 52.5; lowest D(ρ) 51.5 against "
                           "MinMaxODA's 52.0 (2 seeds)")
    flat = dict(good, **{"LowODA rho=4": (80, 80)})  # D(2) = D(4): the trend fails
    assert _check(OMEN, "LowODA's maximum degree").compute(
        _results(tmp_path, omen_rho=_omen_rho(flat)))[1] is False
    below = dict(good, **{"LowODA rho=8": (49, 50)})  # two degrees under MinMaxODA's
    assert _check(OMEN, "LowODA's maximum degree").compute(
        _results(tmp_path, omen_rho=_omen_rho(below)))[1] is False


def test_goldfish_random_rows_compute_from_rows(tmp_path):
    rows = []
    for law, (g, p) in {"exp:100": (200.0, 250.0), "unif:32": (230.0, 240.0),
                        "unif:64": (231.0, 229.0)}.items():
        for proto, v in (("goldfish", g), ("perigee", p)):
            rows.append({"run_id": f"{proto}-{law}", "epoch": 99, "adaptive": 32,
                         "label": f"{proto} random {law}", "wasted_latency_mean_ms": v})
    r = _results(tmp_path, goldfish_table2=pd.DataFrame(rows))
    text, ok = _check(GOLDFISH, "random rows").compute(r)
    # 0.8, 0.958, 1.009: two of three below 1, mean 0.922 > 0.92
    assert text == "2 of 3 rows, mean ratio 0.922 (paper 10 of 10, 0.880)" and ok is False
