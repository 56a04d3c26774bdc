"""Worlds: one seed gives one world whatever the protocol; bad settings and sizes are refused."""

from __future__ import annotations

import time

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.scenarios import SCENARIOS, make_world, scenario_names, world_for_instance
from hedgerow.scenarios.world import resolve_scenario
from hedgerow.workloads import interest_bytes, make_instance


def test_named_scenarios():
    assert scenario_names() == sorted(SCENARIOS)
    assert {"unit-square", "rss-unit-square", "cities", "topic-attack", "eclipse"} <= set(SCENARIOS)


def test_same_seed_same_world_other_seed_other_world():
    a = make_world("unit-square", seed=1, topics=10, nodes=200, messages=50)
    b = make_world("unit-square", seed=1, topics=10, nodes=200, messages=50)
    c = make_world("unit-square", seed=2, topics=10, nodes=200, messages=50)
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert np.array_equal(a.instance.sub_topics, b.instance.sub_topics)
    pa, ta = next(a.traffic())
    pb, tb = next(b.traffic())
    assert np.array_equal(pa, pb) and np.array_equal(ta, tb) and len(pa) == 50


def test_every_world_setting_is_in_the_fingerprint():
    base = dict(seed=1, topics=10, nodes=200, messages=50)
    fp = make_world("unit-square", **base).fingerprint()
    for change in ({"messages": 60}, {"ttl": 2}, {"interest": 0.3}, {"proc_ms": 5.0}):
        assert make_world("unit-square", **{**base, **change}).fingerprint() != fp, change
    # the run's length and the protocols' budgets are not the world
    for change in ({"epochs": 7}, {"rt": 20}, {"cycles": 3}):
        assert make_world("unit-square", **{**base, **change}).fingerprint() == fp, change


def test_popularity_workload_scenario():
    w = make_world("rss-unit-square", seed=1, nodes=300)
    assert w.scenario.workload == "popularity"
    assert (w.instance.n_subs == 10).all() and w.n_nodes == 300


@pytest.mark.parametrize(
    ("name", "overrides", "key"),
    [
        ("moon", {}, "name"),
        ("unit-square", {"epochs": 0}, "epochs"),
        ("unit-square", {"epochs": 1.5}, "epochs"),
        ("unit-square", {"topics": True}, "topics"),
        ("unit-square", {"messages": "many"}, "messages"),
        ("unit-square", {"interest": 0}, "interest"),
        ("unit-square", {"interest": float("nan")}, "interest"),
        ("unit-square", {"nodes": 1}, "nodes"),
        ("unit-square", {"latency": "moon"}, "latency"),
    ],
)
def test_bad_settings_name_their_key(name, overrides, key):
    with pytest.raises(ParameterError) as info:
        resolve_scenario(name, **overrides)
    assert info.value.key == key and "\n" not in str(info.value)


def test_unknown_setting_and_misplaced_attackers():
    with pytest.raises(ParameterError, match="unknown setting 'speed'"):
        make_world("unit-square", speed=2)
    with pytest.raises(ParameterError, match="has no attackers"):
        make_world("cities", attackers=3)
    with pytest.raises(ParameterError, match="seed"):
        make_world("unit-square", seed="x")


def test_interest_workload_too_big_is_refused_before_allocating():
    assert interest_bytes(1000, 10**8, 0.2) > 1e12
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=r"needs about [\d,.]+ GiB of memory"):
        make_world("unit-square", topics=10**8)
    assert time.perf_counter() - t0 < 5.0


def test_world_for_instance_places_the_given_instance():
    inst = make_instance(nodes=40, topics=5, subs=2, seed=3)
    w = world_for_instance(inst, seed=2, epochs=3, messages=20)
    assert w.instance is inst and w.n_nodes == 40 and w.latency.n_nodes == 40
    assert w.scenario.epochs == 3 and w.honest.all() and w.active.all()
    with pytest.raises(ParameterError, match="instance"):
        world_for_instance("not an instance")


def _social_folder(tmp_path, n=40, seed=0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    (tmp_path / "users").mkdir()
    (tmp_path / "subscriptions").mkdir()
    pd.DataFrame({"node": np.arange(n)}).to_parquet(tmp_path / "users" / "p.parquet")
    node = np.repeat(np.arange(n), 4)
    topic = (node + rng.integers(1, n, len(node))) % n
    pd.DataFrame({"node": node, "topic": topic}).drop_duplicates().to_parquet(
        tmp_path / "subscriptions" / "p.parquet"
    )
    return tmp_path


def test_a_social_sample_is_a_world_workload(tmp_path):
    """The scenario assembles a social sample (hedgerow ingest social) as its workload."""
    from hedgerow.scenarios import compare, make_world
    from hedgerow.workloads.social import load_instance

    folder = str(_social_folder(tmp_path))
    world = make_world("unit-square", seed=2, social=folder, messages=50, epochs=2)
    inst = load_instance(folder)
    assert world.n_nodes == inst.n_nodes == 40 and world.scenario.workload == "social"
    assert np.array_equal(world.instance.sub_topics, inst.sub_topics)
    rows = compare(["spidercast", "topiary"], "unit-square", seed=2, social=folder,
                   messages=50, epochs=2, diameter=False)
    assert rows[0]["world"] == rows[1]["world"] == world.fingerprint()
    assert rows[0]["receive_rate"] == 1.0


def test_a_social_sample_needs_a_sized_network(tmp_path):
    from hedgerow.scenarios import make_world

    folder = str(_social_folder(tmp_path, n=300))
    assert make_world("unit-square", seed=1, social=folder).n_nodes == 300
    with pytest.raises(ParameterError, match="has 246 nodes"):  # a data set of fixed size
        make_world("cities", seed=1, social=folder)
    with pytest.raises(ParameterError, match="without attackers"):
        make_world("eclipse", seed=1, social=folder)
