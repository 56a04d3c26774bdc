"""Experiment specs: validation errors name the key path and the allowed values."""

from __future__ import annotations

import pytest
from _spec_helpers import error_of, spec_with

from hedgerow.experiment import parse_spec


def test_bad_popularity_names_key_path_and_allowed_values():
    msg = error_of(spec_with(scenario__workload__popularity="zipf3"))
    assert msg == (
        "spec: scenario.workload.popularity: 'zipf3' is not one of "
        "rss, zipf1, zipf2, nyse, uniform, zipf:ALPHA"
    )


def test_zipf_alpha_popularity_is_accepted():
    spec = parse_spec(spec_with(scenario__workload__popularity="zipf:0.8"))
    assert spec.scenario.workload.popularity == "zipf:0.8"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"scenario__workload__nodez": 5},
            "scenario.workload.nodez: unknown key; allowed: nodes, topics",
        ),
        (
            {"scenario__protocol": "nope"},
            "scenario.protocol: unknown protocol 'nope'; "
            "allowed: complete, gm, goldfish, gossipsub, gossipsub-split, lowoda, lowoda-inc, "
            "lowoda-re, minmaxoda, omen, omen-g, opt, perigee,",
        ),
        ({"scenario__kind": "bake"}, "scenario.kind: 'bake' is not one of build, run"),
        (
            {"scenario__workload__nodes": 0},
            "scenario.workload.nodes: Input should be greater than or equal to 1",
        ),
        (
            {"scenario__workload__nodes": "many"},
            "scenario.workload.nodes: Input should be a valid integer",
        ),
        (
            {"scenario__workload__subs": "9:3"},
            "scenario.workload.subs: '9:3' is not S or 'MIN:MAX'",
        ),
        ({"scenario__workload__subs": 11}, "scenario.workload: subs 11 exceeds topics 10"),
        (
            {"scenario__latency": "moon"},
            "scenario.latency: 'moon' is not one of unit-square, cities",
        ),
        (
            {"scenario__latency": "cities"},
            "scenario.latency: kind build has no network; remove it or set kind: run",
        ),
        ({"scenario__seed": -1}, "scenario.seed: Input should be greater than or equal to 0"),
        ({"colour": "red"}, "colour: unknown key; allowed: experiment, description, reference"),
        ({"reference": "fig99"},
         "reference: 'fig99' is not one of goldfish-fig2, goldfish-fig3, goldfish-table2"),
        ({"experiment": "a b"}, "experiment: 'a b' is not a valid name"),
        ({"sweep__seeds": [0, 0]}, "sweep.seeds: lists a seed twice"),
        ({"sweep__seeds": []}, "sweep.seeds: needs at least one seed"),
        (
            {"sweep__grid": {"scenario.workload.nodes": []}},
            "sweep.grid.scenario.workload.nodes: needs at least one value",
        ),
        (
            {"sweep__grid": {"scenario.workload.nodez": [1]}},
            "sweep.grid.scenario.workload.nodez: 'scenario.workload.nodez' is not a settable key; "
            "allowed: scenario.protocol, scenario.params.NAME",
        ),
        (
            {"sweep__variants": [{"label": "x", "colour": 1}]},
            "sweep.variants[0].colour: unknown key; allowed: label, protocol, params, overrides",
        ),
    ],
)
def test_errors_name_the_key_path(changes, expected):
    assert expected in error_of(spec_with(**changes))


def test_unknown_protocol_parameter_lists_allowed_names():
    from hedgerow.protocols import REGISTRY

    data = spec_with(scenario__protocol="spidercast", scenario__params={"kx": 3})
    allowed = REGISTRY["spidercast"]._param_names()
    assert {"kg", "kr", "margin", "adaptive", "membership"} <= set(allowed)
    assert error_of(data) == (
        f"spec: scenario.params.kx: spidercast: unknown parameter 'kx'; "
        f"allowed: {', '.join(allowed)}"
    )


def test_kind_run_rejects_a_workload():
    data = spec_with(scenario__kind="run", scenario__run={"name": "x"})
    assert "scenario.workload: not used by kind run" in error_of(data)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"protocol": "nope"}, "scenario.protocol: unknown protocol 'nope'; allowed: complete"),
        ({"run": {"name": "moon"}}, "scenario.run.name: unknown scenario 'moon'; allowed: cities"),
        ({"params": {"eta": 1}}, "scenario.params.eta: topiary: parameter eta must be in (1,"),
        ({"latency": "moon"}, "scenario.latency: 'moon' is not one of unit-square, cities"),
        (
            {"run": {"name": "unit-square", "interest": 7}},
            "scenario.run.interest: must be in (0, 1], got 7",
        ),
    ],
)
def test_kind_run_is_checked_against_the_epoch_scenarios(change, expected):
    scenario = {
        "kind": "run",
        "protocol": "topiary",
        "run": {"name": "unit-square", "epochs": 3, "messages": 50},
        **change,
    }
    assert expected in error_of({"experiment": "r", "scenario": scenario})
    fixed = {"protocol": "topiary", "params": {}, "run": {"name": "unit-square", "messages": 50}}
    scenario = {k: v for k, v in {**scenario, **fixed}.items() if k != "latency"}
    assert parse_spec({"experiment": "r", "scenario": scenario}).scenario.kind == "run"


_WORKLOAD = {"nodes": 60, "topics": 10, "subs": 3}
_RUN = {"name": "unit-square", "epochs": 3, "messages": 50}
_CHURN = {"lifetime": 10}


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        (
            {"kind": "build", "protocol": "spidercast", "params": {"kg": -1}},
            "scenario.params.kg: spidercast: parameter kg must be >= 0, got -1",
        ),
        (
            {"kind": "build", "protocol": "spidercast", "params": {"margin": -3}},
            "scenario.params.margin: spidercast: parameter margin must be >= 0, got -3",
        ),
        (
            {"kind": "build", "protocol": "spidercast", "params": {"kg": True}},
            "scenario.params.kg: spidercast: parameter kg must be a whole number, got True",
        ),
        (
            {"kind": "build", "protocol": "spidercast", "params": {"ties": "random"}},
            "scenario.params.ties: spidercast: parameter ties must be one of uniform, sequential",
        ),
        (
            {"kind": "build", "protocol": "random-graph", "params": {"d": 0}},
            "scenario.params.d: random-graph: parameter d must be >= 1, got 0",
        ),
        (
            {"kind": "run", "protocol": "topiary", "params": {"eta": 1}, "run": _RUN},
            "scenario.params.eta: topiary: parameter eta must be in (1, ",
        ),
        (
            {"kind": "run", "protocol": "spidercast", "params": {"kg": -1}, "run": _RUN},
            "scenario.params.kg: spidercast: parameter kg must be >= 0, got -1",
        ),
        (
            {"kind": "run", "protocol": "topiary", "run": {**_RUN, "epochs": 0}},
            "scenario.run.epochs: must be >= 1, got 0",
        ),
        (
            {"kind": "run", "protocol": "topiary", "run": {**_RUN, "topics": 0}},
            "scenario.run.topics: must be >= 1, got 0",
        ),
        (
            {"kind": "churn", "protocol": "spidercast", "params": {"kg": -1}, "churn": _CHURN},
            "scenario.params.kg: spidercast: parameter kg must be >= 0, got -1",
        ),
        (
            {"kind": "churn", "protocol": "similarity", "params": {"similar": -1},
             "churn": _CHURN},
            "scenario.params.similar: similarity: parameter similar must be >= 0, got -1",
        ),
        (
            {"kind": "churn", "protocol": "topiary", "churn": _CHURN},
            "scenario.protocol: topiary does not run under churn; churn protocols (maintained or "
            "cycle)",
        ),
    ],
    ids=lambda x: x.split(":")[0] if isinstance(x, str) else None,
)
def test_every_kind_rejects_out_of_range_parameters_at_load(scenario, expected):
    """Each kind's check runs when the spec is loaded: a bad value is a spec error naming its
    key path, not a failed row found hours into a sweep."""
    if scenario["kind"] != "run":
        scenario = {**scenario, "workload": _WORKLOAD}
    msg = error_of({"experiment": "bad", "scenario": scenario})
    assert msg.startswith("spec: " + expected.split(":")[0] + ":")
    assert expected in msg and "\n" not in msg


def test_a_bad_grid_value_names_the_grid_entry_and_the_parameter():
    data = spec_with(
        scenario__protocol="spidercast",
        sweep__grid={"scenario.params.kg": [3, -1]},
    )
    msg = error_of(data)
    assert "sweep.grid.scenario.params.kg[1]" in msg and "parameter kg must be >= 0" in msg
