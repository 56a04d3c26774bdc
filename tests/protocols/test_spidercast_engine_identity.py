"""The maintenance engine's faster paths build the overlays the previous engine built.

The digests below were taken with the engine that scanned every node's mask per
candidate choice and ran the events with the collector on (before the bit-set
candidate index); they pin the overlay, the control messages by kind and the
number of events, so a change of any decision, tie or random draw shows.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol
from hedgerow.protocols.maintenance import Maintenance
from hedgerow.workloads import make_instance


def digest(overlay, control: int, events: int, messages: object) -> str:
    e = np.asarray(overlay.edges(), dtype=np.int64)
    if len(e):
        e = e[np.lexsort((e[:, 1], e[:, 0]))]
    h = hashlib.sha256(e.tobytes())
    h.update(json.dumps([control, events, messages], sort_keys=True).encode())
    return h.hexdigest()[:16]


def build_digest(name: str, params: dict, n: int, popularity: str, seed: int,
                 *, bit_index: bool = True) -> str:
    inst = make_instance(nodes=n, topics=40, subs=6, popularity=popularity, seed=seed)
    proto = get_protocol(name, **params)
    engine = proto.maintenance_engine(inst, proto.streams(seed))
    engine.bit_index = bit_index
    stats = engine.run()
    return digest(engine.overlay(), stats["control_messages"], stats["events"], stats["messages"])


BUILDS = [
    ("spidercast", {"kg": 3, "kr": 0, "ties": "sequential"}, 300, "rss", 1, "663132c35b431e31"),
    ("spidercast", {"kg": 3, "kr": 0, "ties": "sequential"}, 700, "rss", 2, "b9e3f08a724aefd9"),
    ("spidercast", {"kg": 3, "kr": 0, "ties": "uniform"}, 500, "zipf2", 3, "ae8d32a89b5313e2"),
    ("spidercast", {}, 600, "uniform", 4, "7c8d1d7a95d30687"),
    ("spidercast", {"kg": 3, "kr": 0, "adaptive": True}, 400, "zipf2", 5, "1e0f83479e39fa29"),
    ("spidercast", {"kg": 2, "kr": 1, "heartbeat": 2.0}, 400, "rss", 6, "1f3eb0cd19818327"),
    ("spidercast", {"kg": 3, "kr": 0, "membership": 0.2}, 500, "rss", 7, "d0460f26c1396a92"),
    ("similarity", {}, 400, "rss", 8, "6017cb79fca0ac9e"),
    ("random", {}, 400, "rss", 9, "3e7919762acccc3d"),
]


@pytest.mark.parametrize(("name", "params", "n", "popularity", "seed", "expected"), BUILDS)
def test_static_builds_are_the_previous_engines(name, params, n, popularity, seed, expected):
    assert build_digest(name, params, n, popularity, seed) == expected


def test_the_bit_index_and_the_scan_build_the_same_overlay():
    """The reference path (one mask read per candidate) is still there and agrees."""
    for name, params, n, pop, seed, _ in BUILDS[:2] + BUILDS[7:]:
        assert build_digest(name, params, n, pop, seed, bit_index=False) == build_digest(
            name, params, n, pop, seed
        )


@pytest.mark.parametrize(
    ("name", "params", "seed", "expected"),
    [
        ("spidercast", {"kg": 3, "kr": 1}, 1, "1a3dc9b31f673472"),
        ("similarity", {}, 1, "4c0113a9dbdc3d61"),
        ("spidercast", {"kg": 3, "kr": 1}, 2, "08abfd9b7186df50"),
        ("similarity", {}, 2, "d49c436c1964dbdc"),
    ],
)
def test_churn_runs_are_the_previous_engines(name, params, seed, expected):
    """Joins with new topics and leaves (integer masks follow the joins)."""
    inst = make_instance(nodes=300, topics=30, subs=5, popularity="rss", seed=seed)
    eng = get_protocol(name, **params).maintenance_engine(inst, RngStreams(seed))
    assert isinstance(eng, Maintenance)
    rng = np.random.default_rng(seed)
    eng.start(rng.random(300) < 0.7)
    for step in range(1, 30):
        eng.run_until(step * 2.0)
        on, off = np.flatnonzero(eng.online), np.flatnonzero(~eng.online)
        eng.leave(int(rng.choice(on)))
        eng.join(int(rng.choice(off)), topics=rng.choice(30, 5, replace=False))
    eng.run_until(100.0)
    got = digest(eng.overlay(), eng.control_messages, eng.sim.events_run, eng.lost_messages)
    assert got == expected


@pytest.mark.parametrize(
    ("params", "n", "popularity", "seed"),
    [
        ({"kg": 3, "kr": 0, "ties": "sequential"}, 500, "rss", 7),
        ({"kg": 3, "kr": 0, "ties": "uniform"}, 400, "zipf2", 3),
        ({"kg": 2, "kr": 1}, 400, "uniform", 4),
        ({"kg": 3, "kr": 0, "adaptive": True}, 400, "zipf2", 5),
    ],
)
@pytest.mark.parametrize("membership", [0.05, 0.2])
def test_implicit_views_choose_as_the_same_views_stored(params, n, popularity, seed, membership):
    """``view="implicit"`` (a hash decides membership, nothing stored) builds the overlay that
    the stored-view scan builds when it is handed the same views listed; and it is not the
    full-view overlay (the views do restrict the choice)."""
    from hedgerow.protocols._select import implicit_view

    inst = make_instance(nodes=n, topics=40, subs=6, popularity=popularity, seed=seed)
    implicit = get_protocol("spidercast", **params, membership=membership, view="implicit")
    eng = implicit.maintenance_engine(inst, implicit.streams(seed))
    assert eng.implicit_view and eng.views == []
    stats = eng.run()
    # the same streams, views listed from the same hash and scanned by the reference kernel
    full = get_protocol("spidercast", **params)
    ref = full.maintenance_engine(inst, full.streams(seed))
    ref.full_view = False
    ref.views = [implicit_view(eng.view_key, p, n, eng.view_threshold) for p in range(n)]
    assert abs(np.mean([len(v) for v in ref.views]) - membership * (n - 1)) < 0.1 * n * membership
    ref_stats = ref.run()
    got = digest(eng.overlay(), stats["control_messages"], stats["events"], stats["messages"])
    assert got == digest(ref.overlay(), ref_stats["control_messages"], ref_stats["events"],
                         ref_stats["messages"])
    full_eng = full.maintenance_engine(inst, full.streams(seed))
    fs = full_eng.run()
    assert got != digest(full_eng.overlay(), fs["control_messages"], fs["events"], fs["messages"])


def test_implicit_views_key_from_their_own_stream():
    """The implicit views' key comes from the ``interest-view`` stream: a stored-view and an
    implicit-view engine of one seed draw the same phases and latencies, and two seeds differ."""
    inst = make_instance(nodes=200, topics=20, subs=4, popularity="rss", seed=1)
    proto = get_protocol("spidercast", kg=3, kr=0, membership=0.1, view="implicit")
    a = proto.maintenance_engine(inst, RngStreams(1))
    b = get_protocol("spidercast", kg=3, kr=0).maintenance_engine(inst, RngStreams(1))
    assert a.phase == b.phase and a._lat_a == b._lat_a
    assert a.view_key != proto.maintenance_engine(inst, RngStreams(2)).view_key
    assert get_protocol("spidercast", membership=0.1).maintenance_engine(
        inst, RngStreams(1)).implicit_view is False


def test_an_unknown_view_mode_is_refused():
    from hedgerow.errors import ParameterError

    with pytest.raises(ParameterError, match="view"):
        get_protocol("spidercast", view="lazy").checked()
