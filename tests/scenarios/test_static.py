"""``hedgerow.build`` and the build record: bad input names the argument, broken promises warn."""

from __future__ import annotations

import json

import pytest

import hedgerow as hr
from hedgerow.errors import ParameterError
from hedgerow.scenarios import build, build_record
from hedgerow.workloads import make_instance


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=100, topics=10, subs=3, seed=1)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"nodes": "abc"}, "nodes"),
        ({"nodes": None}, "nodes"),
        ({"nodes": 1.5}, "nodes"),
        ({"nodes": True}, "nodes"),
        ({"topics": float("nan")}, "topics"),
        ({"subs": 3.7}, "subs"),
        ({"seed": "x"}, "seed"),
        ({"popularity": "zipf:nan"}, "popularity"),
    ],
)
def test_make_instance_bad_input_names_the_argument(kwargs, named):
    args = {"nodes": 100, "topics": 10, "subs": 3, **kwargs}
    with pytest.raises(ParameterError, match=named) as info:
        hr.make_instance(**args)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda inst: hr.build("spidercast", "not an instance"), "instance"),
        (lambda inst: hr.build("spidercast", inst, seed="x"), "seed"),
        (lambda inst: hr.build("spidercast", inst, seed=-1), "seed"),
        (lambda inst: hr.build("spidercast", inst, params={"kg": True}), "kg"),
        (lambda inst: hr.build("spidercast", inst, params={"kg": 1.5}), "kg"),
        (lambda inst: hr.build("spidercast", inst, params=[("kg", 3)]), "params"),
        (lambda inst: hr.build("spidercast", inst, params={"kq": 3}), "kq"),
        (lambda inst: hr.build("nope", inst), "nope"),
        (lambda inst: hr.build("random-graph", inst, params={"d": 100}), "d"),
    ],
)
def test_build_bad_input_names_the_argument(inst, call, named):
    with pytest.raises(ParameterError, match=named) as info:
        call(inst)
    assert "\n" not in str(info.value)


def test_build_any_protocol_static_or_adaptive(inst):
    ov, stats = build("ringpt", inst)
    assert ov.is_symmetric() and stats["control_messages"] == 0
    small = make_instance(nodes=30, topics=4, subs=2, seed=1)  # 150 epochs: keep it small
    ov, stats = build("topiary", small, seed=1, params={"d": 3})
    assert ov.directed and stats["epochs"] == 150 and 0 <= stats["receive_rate"] <= 1


def test_build_record_keys_and_timings():
    r = build_record("ringpt", nodes=100, topics=10, subs="3", seed=1)
    assert {"warnings", "world", "timings", "quiescent", "params"} <= set(r)
    assert "build_seconds" not in r and set(r["timings"]) == {"build_seconds"}
    assert r["warnings"] == [] and len(r["world"]) == 16
    json.dumps(r, allow_nan=False)  # plain JSON


def test_build_record_is_the_same_for_one_seed_but_its_timings():
    a = build_record("spidercast", nodes=200, topics=20, subs=3, seed=4)
    b = build_record("spidercast", nodes=200, topics=20, subs=3, seed=4)
    a.pop("timings"), b.pop("timings")
    assert json.dumps(a) == json.dumps(b)


def test_max_rounds_stop_is_a_warning_not_a_silent_result():
    r = build_record("spidercast", nodes=300, topics=20, subs=3, seed=1,
                     params={"max_rounds": 2}, diameter=False)
    assert r["quiescent"] is False
    assert any("stopped at max_rounds" in w for w in r["warnings"])


def test_partitioned_topics_warn_with_the_setting_that_helps():
    paper = {"kg": 3, "kr": 0, "ties": "sequential"}
    r = build_record("spidercast", nodes=500, topics=20, subs=3, params=paper, diameter=False)
    assert r["quiescent"] and r["partitioned_topics"] > 0
    [w] = r["warnings"]
    assert "topics partitioned" in w and "kr=1" in w
    default = build_record("spidercast", nodes=500, topics=20, subs=3, diameter=False)
    assert default["partitioned_topics"] == 0 and default["warnings"] == []


def test_protocols_that_promise_nothing_do_not_warn():
    r = build_record("random", nodes=300, topics=30, subs=3, params={"links": 2}, diameter=False)
    assert r["partitioned_topics"] > 0 and r["warnings"] == []
