"""The metric registry cannot drift from the row builders.

A small run of every kind of run of every registered protocol (built-in or plugin), on the
worlds that add their own observers (attacks, churn, fast relays, Fig. 2's star, bytes on
the wire, routing), and every numeric column of its rows must be a declared metric of that
kind of run; every metric a shipped spec reports must be declared; the table in
``docs/specs.md`` is the generated one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hedgerow.experiment import parse_spec
from hedgerow.experiment.models import ChurnOptions
from hedgerow.experiment.rows import CORE_COLUMNS
from hedgerow.experiment.run import run_one
from hedgerow.metrics.registry import METRICS, Metric, metrics_reference, statistics
from hedgerow.protocols import REGISTRY, capabilities, known_metrics

ROOT = Path(__file__).resolve().parents[2]
WL = {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"}


def _quick(name: str) -> dict[str, Any]:
    return dict(REGISTRY[name].quick_params or {})


def _cases() -> list[tuple[str, dict[str, Any]]]:
    """``(id, scenario)``: every kind of run each registered protocol takes, small."""
    cases = []
    for name in sorted(REGISTRY):
        caps = capabilities(REGISTRY[name])
        p = {"protocol": name, "params": _quick(name)}
        for world in ("unit-square", "unit-square-bw"):  # the second: bytes on the wire
            cases.append((f"{world}-{name}", {"kind": "run", **p, "run": {
                "name": world, "nodes": 60, "topics": 10, "epochs": 2, "messages": 20}}))
        if "static" in caps:
            cases.append((f"build-{name}", {"kind": "build", **p, "workload": WL}))
            # a routing world: the build's statistics under their own names
            # (the world hands rt and cycles to the protocols that take them)
            bound = {k: v for k, v in p["params"].items() if k in ("rt", "cycles")}
            rest = {k: v for k, v in p["params"].items() if k not in bound}
            cases.append((f"routing-{name}", {"kind": "run", **p, "params": rest,
                          "diameter": False, "run": {"name": "vitis-random", "nodes": 120,
                                                     "topics": 100, "subs": 4, **bound}}))
        if "maintained" in caps:
            cases.append((f"churn-snapshots-{name}", {"kind": "churn", **p, "workload": WL,
                          "churn": {"lifetime": 10, "duration": 30, "snapshot_every": 10}}))
            cases.append((f"churn-events-{name}", {"kind": "churn", **p, "churn": {
                "scenario": "fb1k-onoff", "events": 20}}))
        if "cycle" in caps:
            cases.append((f"churn-cycles-{name}", {"kind": "churn", **p, "churn": {
                "scenario": "vitis-flash-crowd-quick"}}))
        if "adaptive" in caps:
            for world in ("goldfish-churn", "goldfish-withhold", "goldfish-fig2"):
                cases.append((f"{world}-{name}", {"kind": "run", **p, "run": {
                    "name": world, "epochs": 2}}))
            for world in ("topic-attack", "eclipse"):
                cases.append((f"{world}-{name}", {"kind": "run", **p, "run": {
                    "name": world, "nodes": 60, "epochs": 2, "messages": 20,
                    "attackers": 10}}))
    # churn on the contended network: the delivery and byte columns of churn rows
    wire = {"bandwidth": "5:10", "size": "16k"}
    cases.append(("churn-snapshots-wire-spidercast", {
        "kind": "churn", "protocol": "spidercast", "workload": WL,
        "churn": {"lifetime": 10, "duration": 20, "snapshot_every": 10, **wire}}))
    cases.append(("churn-cycles-wire-rvr", {
        "kind": "churn", "protocol": "rvr", "params": _quick("rvr"),
        "churn": {"scenario": "vitis-flash-crowd-quick", **wire}}))
    cases.append(("relay-goldfish", {"kind": "run", "protocol": "goldfish", "run": {
        "name": "goldfish-withhold", "attack": "relay", "epochs": 2}}))
    cases.append(("optimum-goldfish", {"kind": "optimum", "protocol": "goldfish", "run": {
        "name": "goldfish-fig2", "epochs": 3}}))
    return cases


#: the descriptive columns of a row: not metrics
_CHURN_OPTIONS = {f"churn_{k}" for k in ChurnOptions.model_fields}


def _numeric_columns(rows: list[dict[str, Any]]) -> set[str]:
    out = set()
    for row in rows:
        for k, v in row.items():
            if (k in CORE_COLUMNS or k.startswith(("param_", "run_")) or k in _CHURN_OPTIONS
                    or isinstance(v, bool) or not isinstance(v, (int, float))):
                continue
            out.add(k)
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def observed() -> dict[str, tuple[str, set[str], str | None]]:
    """Per case: its kind, the numeric columns of its rows, and the error of a failed run."""
    out = {}
    for case, scenario in CASES:
        spec = parse_spec({"experiment": "registry", "scenario": {"seed": 1, **scenario}})
        rows = run_one(spec.expand()[0])
        error = None if rows[0]["status"] == "ok" else rows[0]["error"]
        out[case] = (scenario["kind"], _numeric_columns(rows), error)
    return out


@pytest.mark.parametrize("case", [c for c, _ in CASES])
def test_every_numeric_column_of_a_run_is_a_declared_metric_of_its_kind(case, observed):
    kind, columns, error = observed[case]
    assert error is None, error
    assert columns  # a run without a metric would test nothing
    known = known_metrics()
    undeclared = sorted(c for c in columns if c not in known)
    assert not undeclared, f"{case}: undeclared metric columns {undeclared}"
    wrong = sorted(c for c in columns if kind not in known[c].kinds)
    assert not wrong, f"{case}: declared without kind {kind!r}: {wrong}"


#: declared metrics the small runs do not show, and why
NOT_IN_SMALL_RUNS = {
    # None (no column value) until 99% of Vitis's ring is correct, which the routing run's
    # few cycles on its small world do not reach; the build row shows stat_ring_99_cycle
    ("ring_99_cycle", "run"),
    # Goldfish Fig. 2 under the authors' denominators: empty for a graph whose node never
    # attains the optimum / comes within 5%, which a 3-epoch graph does not
    ("fig2a_success_found", "optimum"),
    ("fig2b_success_close", "optimum"),
}


def test_every_declared_metric_comes_from_some_run_of_each_of_its_kinds(observed):
    """The other way round: no stale declaration, no kind a metric never comes from."""
    seen: set[tuple[str, str]] = set()
    for kind, columns, _ in observed.values():
        seen |= {(c, kind) for c in columns}
    declared = {(name, k) for name, m in METRICS.items() for k in m.kinds}
    assert sorted(declared - seen - NOT_IN_SMALL_RUNS) == []
    assert NOT_IN_SMALL_RUNS <= declared - seen  # the exceptions are still needed


def test_the_row_builders_key_lists_are_declared():
    """The key lists the observers and comparisons name (no run needed)."""
    from hedgerow.metrics.routing import ROUTING_KEYS
    from hedgerow.scenarios.observers import BYTES_KEYS, CLOCK_KEYS
    from hedgerow.scenarios.run import BEYOND_KEYS, BROADCAST_KEYS, COMPARE_KEYS

    described = {"protocol", "world", "epochs"}  # a comparison row's descriptive keys
    keys = {*ROUTING_KEYS, *BYTES_KEYS, *BEYOND_KEYS, *BROADCAST_KEYS, *COMPARE_KEYS,
            *CLOCK_KEYS} - described
    assert sorted(keys - set(METRICS)) == []


def test_every_metric_a_shipped_spec_reports_is_declared():
    known = known_metrics()
    named = {m for f in sorted((ROOT / "experiments").glob("*.yaml"))
             for m in (yaml.safe_load(f.read_text()).get("report") or {}).get("metrics", [])}
    assert len(named) > 40
    assert sorted(named - set(known)) == []


def test_declarations_are_whole():
    for name, m in METRICS.items():
        assert m.name == name and m.doc and not m.doc.endswith(".")
        assert "\n" not in m.doc and m.better in ("higher", "lower", None)
    with pytest.raises(ValueError, match="kinds must be among"):
        Metric("x", "x", kinds=("epoch",))


def test_a_plugin_protocol_declares_its_own_metrics():
    from hedgerow.protocols.base import StaticProtocol

    with pytest.raises(TypeError, match=r"Bad.metrics\['stat_x'\] must be a"):
        type("Bad", (StaticProtocol,), {"name": "bad", "metrics": {"stat_x": "links"}})
    ok = type("Good", (StaticProtocol,), {
        "name": "good", "metrics": statistics(x=("x links", "links", None))})
    assert ok.metrics["stat_x"].kinds == ("build",) and ok.metrics["x"].kinds == ("run",)
    # the example plugin's statistic, when its package is installed
    if "topic-knn" in REGISTRY:
        assert known_metrics()["stat_links"].unit == "links"


def test_docs_table_is_the_generated_one():
    docs = (ROOT / "docs" / "specs.md").read_text()
    assert metrics_reference() in docs
