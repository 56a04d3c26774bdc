"""World settings declared once: every consumer generated from WORLD_SETTINGS, protocol-bound
values stated by protocol, a value given twice an error naming both, one world fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError, SpecError
from hedgerow.experiment import SETTABLE_KEYS, parse_spec
from hedgerow.experiment.spec import ChurnOptions, RunOptions, ScenarioSpec
from hedgerow.scenarios.kinds import KINDS, RUN_SETTINGS
from hedgerow.scenarios.run import check_run, compare, simulate
from hedgerow.scenarios.static import build_record
from hedgerow.scenarios.world import (
    SCENARIOS,
    Scenario,
    instance_fingerprint,
    protocol_params,
    resolve_scenario,
    world_for_instance,
)
from hedgerow.workloads import make_instance
from hedgerow.world_settings import RELAY_ATTACKS, WORLD_SETTINGS, settings_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "specs.md"


def _options(command: str) -> set[str]:
    return {p.name for p in cli.commands[command].params}


def test_every_consumer_is_generated_from_the_one_table():
    """The spec models, the sweepable keys, the CLI options and the docs table hold every
    declared setting, and nothing else."""
    assert {"nodes", "topics", "rt", "bandwidth", "size", "plane"} <= set(WORLD_SETTINGS)
    models = {"run": RunOptions, "churn": ChurnOptions}
    docs = DOCS.read_text()
    assert settings_reference() in docs
    for name, s in WORLD_SETTINGS.items():
        if name == "latency":
            assert "latency" in ScenarioSpec.model_fields
        else:
            assert name in models[s.section].model_fields, name
        assert (s.spec_path in SETTABLE_KEYS) == (not s.sweep), name
        # a setting held by a second section (the network's, by churn runs) is there too
        for section in s.also:
            assert name in models[section].model_fields, (section, name)
            assert (f"scenario.{section}.{name}" in SETTABLE_KEYS) == (not s.sweep), name
        if not s.cli:
            commands = ("run", "compare", "draw") if s.section == "run" else ("churn",)
            commands += ("churn",) if "churn" in s.also else ()
            for command in commands:
                assert name in _options(command), (command, name)
        else:
            assert name not in _options("run"), name
        assert f"| `{name}` |" in settings_reference()
        # the named scenarios are data over the declarations: the declared default is theirs
        if s.section == "run" and name in Scenario.__dataclass_fields__:
            field = Scenario.__dataclass_fields__[name]
            if s.default is not None:
                assert field.default == s.default, name
    # nothing declared twice: the spec sections hold the table's keys plus their own
    assert set(RunOptions.model_fields) - {"name", "forwarding"} == {
        k for k, s in WORLD_SETTINGS.items() if s.section == "run" and k != "latency"
    }
    assert set(ChurnOptions.model_fields) - {"scenario"} == {
        k for k, s in WORLD_SETTINGS.items() if s.section == "churn" or "churn" in s.also
    }
    assert set(RUN_SETTINGS) | {"latency"} == {
        k for k, s in WORLD_SETTINGS.items() if s.section == "run"
    }
    from hedgerow.scenarios.attackers import RELAY_ATTACKS as SET_UP

    assert SET_UP == RELAY_ATTACKS


def test_subs_sets_the_subscriptions_of_popularity_and_correlated_worlds():
    assert resolve_scenario("rss-unit-square", subs=5).subs == 5
    with pytest.raises(ParameterError, match="subs applies to: rss-unit-square"):
        resolve_scenario("unit-square", subs=5)
    with pytest.raises(ParameterError, match="need at least as many topics"):
        resolve_scenario("vitis-low", subs=60, topics=50)


def test_a_bad_value_names_its_key_path_and_its_option():
    spec = {"experiment": "e", "scenario": {"kind": "run", "protocol": "vitis",
                                            "run": {"name": "vitis-random", "rt": 2}}}
    with pytest.raises(SpecError, match=r"scenario\.run\.rt: must be >= 3, got 2"):
        parse_spec(spec)
    res = CliRunner().invoke(cli, ["run", "vitis", "--scenario", "vitis-random", "--rt", "2"])
    assert res.exit_code == 2 and res.output.strip() == "error: --rt: must be >= 3, got 2"
    with pytest.raises(ParameterError, match="alpha applies to: vitis-random"):
        resolve_scenario("unit-square", alpha=1.0)


def test_scenarios_state_their_protocol_values_by_protocol():
    us = SCENARIOS["unit-square"]
    assert protocol_params(us, "topiary") == {"d": 6}
    # Vitis keeps its own gateway threshold: no value is matched by parameter name
    assert "d" not in protocol_params(us, "vitis")
    assert protocol_params(us, "perigee") == {}
    for name in ("goldfish-random", "goldfish-real", "goldfish-churn", "goldfish-withhold",
                 "goldfish-fig2"):
        assert protocol_params(SCENARIOS[name], "perigee") == {"preset": "goldfish"}, name
    assert protocol_params(SCENARIOS["vitis-low"], "vitis") == {"rt": 15, "cycles": 100, "d": 5}
    # a default the user replaces is not a value given twice
    assert protocol_params(SCENARIOS["goldfish-random"], "perigee", {"preset": "none"}) == {
        "preset": "none"
    }


def test_goldfish_worlds_compare_perigee_at_goldfishs_budgets():
    rows = compare(["goldfish", "perigee"], "goldfish-random", seed=1, epochs=2, diameter=False)
    by = {r["protocol"]: r for r in rows}
    assert (by["perigee"]["out_degree"], by["perigee"]["in_limit"]) == (4, 8)
    assert by["perigee"]["params"]["preset"] == "goldfish"
    assert (by["goldfish"]["out_degree"], by["goldfish"]["in_limit"]) == (4, 8)
    json.dumps(rows)


def test_unit_square_rows_carry_each_protocols_own_values():
    rows = compare(["topiary", "vitis"], "unit-square", nodes=200, topics=10, epochs=2,
                   messages=50, cycles=3, diameter=False)
    by = {r["protocol"]: r["params"] for r in rows}
    assert by["topiary"]["d"] == 6
    vitis_default = __import__("hedgerow.protocols", fromlist=["REGISTRY"]).REGISTRY["vitis"]
    assert by["vitis"]["d"] == vitis_default.params["d"].default
    assert (by["vitis"]["rt"], by["vitis"]["cycles"]) == (15, 3)


# ------------------------------------------------------------------ a value given twice
def _one_line_error(args: list[str], *names: str) -> None:
    res = CliRunner().invoke(cli, args)
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for n in names:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["run", "vitis", "--scenario", "vitis-random", "--rt", "30", "-p", "rt=20"],
         ("rt=30", "rt=20")),
        (["compare", "--protocols", "vitis,topiary", "--scenario", "vitis-random",
          "--cycles", "5", "-p", "cycles=8"], ("cycles=5", "cycles=8")),
        (["run", "rvr", "--scenario", "vitis-low", "--cycles", "5", "-p", "cycles=8"],
         ("cycles=5", "cycles=8")),
        (["compare", "--protocols", "vitis,rvr", "--scenario", "vitis-random",
          "-p", "vitis.rt=20", "-p", "rt=25"], ("vitis.rt=20", "rt=25")),
        (["build", "spidercast", "--nodes", "50", "--membership", "0.5",
          "-p", "membership=0.2"], ("--membership 0.5", "membership=0.2")),
        (["build", "spidercast", "--social", "fb1k", "--nodes", "100"],
         ("--nodes", "--social fb1k")),
        (["churn", "spidercast", "--scenario", "fb1k-google", "--lifetime", "100"],
         ("--lifetime", "--scenario fb1k-google")),
        (["churn", "spidercast", "--scenario", "fb1k-google", "--trace", "some/dir"],
         ("--trace", "--scenario fb1k-google")),
        (["churn", "spidercast", "--scenario", "fb1k-google", "--nodes", "100",
          "--topics", "10"], ("--nodes", "--scenario fb1k-google")),
    ],
)
def test_a_value_given_twice_is_one_line_naming_both(args, names):
    _one_line_error(args, *names)


def test_a_value_given_twice_in_python_and_specs():
    with pytest.raises(ParameterError, match="rt=30 and as the parameter rt=20"):
        simulate("vitis", "vitis-random", nodes=200, rt=30, params={"rt": 20})
    with pytest.raises(ParameterError, match="cycles=5 and as the parameter cycles=8"):
        check_run("opt", "unit-square", cycles=5, params={"cycles": 8})
    spec = {"experiment": "e", "scenario": {"kind": "run", "protocol": "vitis",
                                            "params": {"rt": 20},
                                            "run": {"name": "vitis-random", "rt": 30}}}
    with pytest.raises(SpecError, match=r"scenario\.params\.rt: .*rt=30 .* rt=20"):
        parse_spec(spec)
    spec = {"experiment": "e", "scenario": {
        "kind": "churn", "protocol": "lowoda-inc", "workload": {"nodes": 100},
        "churn": {"scenario": "fb1k-google"}}}
    with pytest.raises(SpecError, match=r"scenario\.workload: .*fb1k-google"):
        parse_spec(spec)
    # a sweep that sets both is refused at the grid point that does
    spec = {"experiment": "e",
            "scenario": {"kind": "run", "protocol": "vitis", "params": {"rt": 20},
                         "run": {"name": "vitis-random"}},
            "sweep": {"grid": {"scenario.run.rt": [30]}}}
    with pytest.raises(SpecError, match=r"scenario\.run\.rt=30\): scenario\.params\.rt: .*"
                                        r"twice"):
        parse_spec(spec).expand()


# ------------------------------------------------------------------ one world fingerprint
def test_the_same_world_has_one_fingerprint_on_build_run_and_churn_rows():
    wl = {"nodes": 80, "topics": 8, "subs": 2, "popularity": "rss"}
    seed = 3
    [build] = KINDS["build"].run({"kind": "build", "protocol": "spidercast", "params": {},
                                  "workload": wl, "seed": seed, "diameter": False})
    churn = KINDS["churn"].run({"kind": "churn", "protocol": "spidercast", "params": {},
                                "workload": wl, "seed": seed, "diameter": False,
                                "churn": {"lifetime": 50.0, "duration": 40.0,
                                          "snapshot_every": 20.0}})
    inst = make_instance(seed=seed, **wl)
    from hedgerow.protocols import get_protocol
    from hedgerow.scenarios.epochs import run_protocol

    world = world_for_instance(inst, seed=seed, epochs=2)
    run = run_protocol(get_protocol("topiary"), world).rows
    assert build["world"] == churn[0]["world"] == world.fingerprint()
    assert build["world"] == instance_fingerprint(inst, seed=seed)
    assert len(run) == 2
    rec = build_record("topiary", nodes=80, topics=8, subs=2, seed=seed, diameter=False)
    assert rec["world"] == build["world"]


def test_sweep_rows_carry_every_parameter_the_protocol_ran_with():
    from hedgerow.experiment import run_one

    spec = parse_spec({"experiment": "e", "scenario": {
        "kind": "run", "protocol": "random-graph", "diameter": False,
        "run": {"name": "cities", "topics": 5, "messages": 20}}})
    [row] = run_one(spec.expand()[0])
    assert row["status"] == "ok" and row["param_d"] == "5"  # the scenario's, not in the spec
    spec = parse_spec({"experiment": "e", "scenario": {
        "protocol": "spidercast", "diameter": False,
        "workload": {"nodes": 60, "topics": 8, "subs": 2}}})
    [row] = run_one(spec.expand()[0])
    assert row["param_kg"] == "3" and row["param_membership"] == "1.0"


def test_a_setting_no_run_protocol_takes_is_not_dropped_silently():
    with pytest.raises(ParameterError, match="rt is handed to opt, rvr, vitis; topiary takes no"):
        check_run("topiary", "unit-square", rt=30)
    check_run("vitis", "unit-square", rt=30)
    _one_line_error(["run", "topiary", "--scenario", "unit-square", "--cycles", "5"],
                    "cycles is handed to", "topiary takes no cycles")
    _one_line_error(["compare", "--protocols", "topiary,random-graph", "--scenario", "cities",
                     "--rt", "20"], "random-graph take no rt")
