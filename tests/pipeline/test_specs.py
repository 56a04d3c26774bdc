"""Experiment specs: validation errors name the key path, expansion, stable run ids, the runner."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import pytest

from hedgerow.errors import SpecError
from hedgerow.runner import run_one
from hedgerow.specs import canonical_json, grid_keys, load_spec, parse_spec, run_id_of

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"

BASE = {
    "experiment": "tiny",
    "scenario": {
        "protocol": "ringpt",
        "workload": {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"},
        "diameter": False,
    },
}


def spec_with(**changes):
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = data
        parts = dotted.split("__")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return data


def error_of(data) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(data)
    return str(info.value)


# --------------------------------------------------------------------------- validation errors
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
        ({"scenario__protocol": "nope"}, "scenario.protocol: 'nope' is not one of random, ringpt"),
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
            "scenario.latency: overlay builds (kind build) use no latency",
        ),
        ({"scenario__seed": -1}, "scenario.seed: Input should be greater than or equal to 0"),
        ({"colour": "red"}, "colour: unknown key; allowed: experiment, description, reference"),
        ({"reference": "fig99"}, "reference: 'fig99' is not one of spidercast-fig11, spidercast"),
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
        f"spec: scenario.params.kx: unknown parameter of spidercast; allowed: {', '.join(allowed)}"
    )


def test_grid_value_error_points_at_the_grid_entry():
    data = spec_with(sweep__grid={"scenario.workload.popularity": ["rss", "zipf3"]})
    msg = error_of(data)
    assert msg.startswith(
        "spec: sweep.grid.scenario.workload.popularity[1]: scenario.workload.popularity: 'zipf3'"
    )
    assert "is not one of rss, zipf1, zipf2, nyse, uniform, zipf:ALPHA" in msg


def test_variant_parameter_error_points_at_the_variant():
    data = spec_with(
        sweep__variants=[
            {"label": "ok", "protocol": "ringpt", "params": {}},
            {"label": "bad", "protocol": "similarity", "params": {"similar": 3, "foo": 1}},
        ]
    )
    msg = error_of(data)
    assert msg.startswith("spec: sweep.variants[1].params.foo: unknown parameter of similarity")
    assert "allowed: similar, random, margin, membership" in msg


def test_grid_over_protocol_with_foreign_parameter_is_an_error():
    data = spec_with(
        scenario__protocol="spidercast",
        scenario__params={"kg": 3},
        sweep__grid={"scenario.protocol": ["spidercast", "ringpt"]},
    )
    msg = error_of(data)
    assert "sweep.grid.scenario.protocol[1]" in msg and "scenario.params.kg" in msg


def test_duplicate_runs_are_an_error():
    data = spec_with(sweep__grid={"scenario.workload.nodes": [60, 60]})
    assert "two runs resolve to the same scenario" in error_of(data)


def test_kind_run_rejects_a_workload():
    data = spec_with(scenario__kind="run", scenario__run={"name": "x"})
    assert "scenario.workload: not used by kind run" in error_of(data)


def test_load_spec_reports_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            experiment: bad
            scenario:
              protocol: ringpt
              workload:
                nodes: 60
                popularity: zipf3
            """
        )
    )
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(info.value).startswith(f"{path}:6: scenario.workload.popularity: 'zipf3'")


def test_load_spec_line_of_grid_entry_and_duplicate_keys(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(
        "experiment: g\nscenario: {protocol: ringpt}\nsweep:\n  grid:\n"
        "    scenario.workload.popularity:\n      - rss\n      - zipf3\n"
    )
    with pytest.raises(
        SpecError, match=r"grid\.yaml:7: sweep\.grid\.scenario\.workload\.popularity\[1\]"
    ):
        load_spec(path)
    dup = tmp_path / "dup.yaml"
    dup.write_text("experiment: d\nscenario: {protocol: ringpt}\nexperiment: e\n")
    with pytest.raises(SpecError, match=r"line 3: experiment: duplicate key"):
        load_spec(dup)
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("experiment: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(broken)


# --------------------------------------------------------------------------- expansion and ids
def test_expansion_is_variants_by_grid_by_seeds():
    data = spec_with(
        sweep={
            "grid": {
                "scenario.workload.nodes": [60, 80],
                "scenario.workload.popularity": ["rss", "uniform"],
            },
            "seeds": [3, 4, 5],
            "variants": [
                {"label": "ring", "protocol": "ringpt", "params": {}},
                {
                    "label": "sim(4,1)",
                    "protocol": "similarity",
                    "params": {"similar": 4, "random": 1},
                },
            ],
        }
    )
    spec = parse_spec(data)
    runs = spec.expand()
    assert len(runs) == 2 * 2 * 2 * 3
    first = runs[0]
    assert first.label == "ring" and first.scenario["seed"] == 3
    assert first.point == {
        "scenario.protocol": "ringpt",
        "scenario.workload.nodes": 60,
        "scenario.workload.popularity": "rss",
    }
    sim = [r for r in runs if r.label == "sim(4,1)"]
    assert {r.scenario["protocol"] for r in sim} == {"similarity"}
    assert all(r.scenario["params"] == {"similar": 4, "random": 1} for r in sim)
    assert sorted(
        {(r.scenario["workload"]["nodes"], r.scenario["workload"]["popularity"]) for r in sim}
    ) == [(60, "rss"), (60, "uniform"), (80, "rss"), (80, "uniform")]
    assert len({r.run_id for r in runs}) == len(runs)
    assert grid_keys(spec) == ["scenario.workload.nodes", "scenario.workload.popularity"]


def test_default_label_and_param_grid():
    data = spec_with(
        scenario__protocol="spidercast",
        scenario__params={"kg": 3, "kr": 0},
        sweep__grid={"scenario.params.kr": [0, 1]},
    )
    runs = parse_spec(data).expand()
    assert [r.label for r in runs] == ["spidercast(kg=3,kr=0)", "spidercast(kg=3,kr=1)"]
    assert [r.scenario["params"]["kr"] for r in runs] == [0, 1]


def test_run_ids_are_stable_hashes_of_the_resolved_spec():
    spec = parse_spec(spec_with(sweep__seeds=[0, 1]))
    runs = spec.expand()
    again = parse_spec(spec_with(sweep__seeds=[0, 1])).expand()
    assert [r.run_id for r in runs] == [r.run_id for r in again]
    r = runs[1]
    assert r.run_id == run_id_of({"experiment": "tiny", "label": r.label, "scenario": r.scenario})
    assert len(r.run_id) == 16
    # key order in the file does not matter, defaults are filled in before hashing
    reordered = {
        "scenario": {
            "diameter": False,
            "workload": {"popularity": "rss", "subs": 3, "topics": 10, "nodes": 60},
            "protocol": "ringpt",
            "kind": "build",
            "params": {},
        },
        "experiment": "tiny",
        "sweep": {"seeds": [0, 1]},
    }
    assert [x.run_id for x in parse_spec(reordered).expand()] == [x.run_id for x in runs]
    # anything that changes the run changes the id
    other = parse_spec(spec_with(sweep__seeds=[0, 1], scenario__workload__subs=4)).expand()
    assert not {x.run_id for x in other} & {x.run_id for x in runs}
    assert canonical_json(r.scenario) == canonical_json(dict(sorted(r.scenario.items())))


def test_repository_experiments_validate():
    fig12 = load_spec(EXPERIMENTS / "spidercast-fig12.yaml")
    runs = fig12.expand()
    assert len(runs) == 8 * 6 * 3
    labels = {r.label for r in runs}
    assert {
        "SpiderCast(3,0)",
        "similarity(9,1)",
        "random(10)",
        "similarity(20,0)",
        "RingPT",
    } <= labels
    assert {r.scenario["workload"]["nodes"] for r in runs} == {1000, 2000, 4000, 6000, 8000, 10000}
    assert all(r.scenario["workload"]["popularity"] == "rss" for r in runs)
    assert fig12.reference == "spidercast-fig12"
    fig6 = load_spec(EXPERIMENTS / "spidercast-fig6.yaml")
    assert len(fig6.expand()) == 3 * 6 * 3 and fig6.reference == "spidercast-fig6"
    assert {r.scenario["workload"]["popularity"] for r in fig6.expand()} == {"zipf2"}
    topiary = {
        "topiary-fig5.yaml": 6,
        "topiary-fig3-4.yaml": 10,
        "topiary-fig6.yaml": 5,
        "topiary-cities.yaml": 6,
        "topiary-attacks.yaml": 3,
    }
    for name, n_runs in topiary.items():
        spec = load_spec(EXPERIMENTS / name)
        runs = spec.expand()
        assert len(runs) == n_runs and {r.scenario["kind"] for r in runs} == {"run"}
        assert spec.report.epochs and all(r.scenario["run"]["epochs"] == 150 for r in runs)
    quick = load_spec(EXPERIMENTS / "quickstart.yaml")
    assert 4 <= len(quick.expand()) <= 16


# --------------------------------------------------------------------------- the runner
def test_run_one_gives_an_ok_row_with_the_build_metrics():
    [run] = parse_spec(spec_with()).expand()
    [row] = run_one(run)
    assert (
        row["status"] == "ok" and row["error"] is None if "error" in row else row["status"] == "ok"
    )
    assert row["run_id"] == run.run_id and row["nodes"] == 60 and row["seed"] == 0
    for key in (
        "avg_degree",
        "max_degree",
        "partitioned_topics",
        "topic_components",
        "control_messages",
        "build_seconds",
        "degree_ci95_lo",
        "degree_ci95_hi",
    ):
        assert key in row
    assert row["partitioned_topics"] == 0.0  # a ring per topic connects every topic
    assert row["topic_components"] == 10.0
    # deterministic: the same run gives the same metrics
    [again] = run_one(run.payload())
    assert again["avg_degree"] == row["avg_degree"] and again["max_degree"] == row["max_degree"]


def test_run_one_turns_an_exception_into_a_failed_row():
    data = spec_with(scenario__protocol="spidercast", scenario__params={"kg": -1})
    [run] = parse_spec(data).expand()
    [row] = run_one(run)
    assert row["status"] == "failed"
    assert row["error"].startswith("ParameterError: spidercast: parameter kg")
    assert "Traceback" in row["traceback"]
    assert row["param_kg"] == "-1" and "avg_degree" not in row


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"protocol": "nope"}, "scenario.protocol: 'nope' is not one of topiary"),
        ({"run": {"name": "moon"}}, "scenario.run.name: 'moon' is not one of cities, eclipse"),
        ({"params": {"eta": 1}}, "scenario.params.eta: topiary: parameter eta must be > 1"),
        ({"latency": "cities"}, "scenario.latency: run_scenario takes no latency model"),
        (
            {"run": {"name": "unit-square", "interest": 7}},
            "scenario.run: scenario: parameter interest",
        ),
    ],
)
def test_kind_run_is_checked_against_the_epoch_scenarios(change, expected):
    scenario = {
        "kind": "run",
        "protocol": "topiary",
        "params": {"messages": 50},
        "run": {"name": "unit-square", "epochs": 3},
        **change,
    }
    assert expected in error_of({"experiment": "r", "scenario": scenario})
    fixed = {"protocol": "topiary", "params": {"messages": 50}, "run": {"name": "unit-square"}}
    scenario = {k: v for k, v in {**scenario, **fixed}.items() if k != "latency"}
    assert parse_spec({"experiment": "r", "scenario": scenario}).scenario.kind == "run"
