"""Spec expansion: variants x grid x seeds, errors at the sweep entry, stable run ids."""

from __future__ import annotations

from _spec_helpers import error_of, spec_with

from hedgerow.experiment import canonical_json, grid_keys, parse_spec, run_id_of


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
    assert msg.startswith(
        "spec: sweep.variants[1].params.foo: similarity: unknown parameter 'foo'"
    )
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


def test_a_churn_run_without_a_network_keeps_its_id():
    """The network settings a churn section takes enter the id only when given: a churn spec
    that sets none has the id it had before churn runs took them."""
    base = {"kind": "churn", "protocol": "spidercast", "seed": 1, "churn": {"lifetime": 20.0},
            "workload": {"nodes": 60, "topics": 6, "subs": 2}}
    (run,) = parse_spec({"experiment": "e", "scenario": base}).expand()
    assert run.run_id == "5fa595caf373fb7c"
    assert "bandwidth" not in run.scenario["churn"]
    wired = {**base, "churn": {"lifetime": 20.0, "bandwidth": "25:50"}}
    (other,) = parse_spec({"experiment": "e", "scenario": wired}).expand()
    assert other.run_id != run.run_id and other.scenario["churn"]["bandwidth"] == "25:50"
