"""OMen's start leaves the state it left before the builder ran on bit masks.

The digests (``OmenEngine.state_digest``: links, every entry's ``B`` in the
order chosen, ``N`` and flags, backup loads, messages, the random streams and
the peer-sampling cache) were taken with the code before the change: the
builder on topic lists, every gain counted afresh at each step.  The same
digests now mean the same sets, the same draws and the same overlay.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from hedgerow.engine import Simulator
from hedgerow.protocols import get_protocol
from hedgerow.workloads import make_instance

#: start (15 warm-up cycles) plus 6 churn events on a skewed 300-node world, per setting
SMALL = [
    ({}, "311425867a7c5f7c"),
    ({"backups": "greedy"}, "b798e863a0ea334d"),
    ({"pd_pick": "random", "resilience": 2}, "d9c43a98ea628737"),
    ({"pd_pick": "max-gain", "ready": "cover"}, "fb64fcfff2ce4d06"),
    ({"coverage": 1, "rnd_view": 0}, "849926e24f88b358"),
]


@pytest.fixture(scope="module")
def skewed():
    # 300 nodes holding 3-80 of 300 topics (five words of a bit mask), Zipf popularity
    return make_instance(nodes=300, topics=300, subs="3:80", popularity="zipf1", seed=7)


@pytest.mark.parametrize(("params", "digest"), SMALL)
def test_small_starts_and_events_leave_the_state_they_left_before(skewed, params, digest):
    proto = get_protocol("omen", warmup_cycles=15, **params)
    eng = proto.maintenance_engine(skewed, proto.streams(3), sim=Simulator())
    on = np.ones(skewed.n_nodes, dtype=bool)
    on[270:] = False
    eng.start(on)
    rng = np.random.default_rng(4)
    for _ in range(6):
        if rng.random() < 0.5:
            eng.leave(int(rng.choice(np.flatnonzero(eng.online))))
        else:
            eng.join(int(rng.choice(np.flatnonzero(~eng.online))))
        eng.settle()
    assert eng.state_digest() == digest


#: OMen's defaults (as ``hedgerow churn omen --scenario S --seed 1`` runs them): the settled
#: start, then the engine and the event rows (without times) after the first 10 events
REAL = {
    "fb1k-google": ("7797122fce5aa069", "0936ac7fedad5328", "59a1a91768872bee"),
    "syn2k-google": ("82ed5634e75a7399", "4bda3d9615a16b02", "ce36f1702f339d58"),
}


@pytest.mark.data
@pytest.mark.parametrize("name", sorted(REAL))
def test_1k_and_2k_starts_leave_the_state_they_left_before(name):
    from hedgerow.pipeline.inputs import ensure_inputs
    from hedgerow.scenarios.events import CHURN_SCENARIOS, load_churn_scenario, run_events

    ensure_inputs(CHURN_SCENARIOS[name].inputs())
    inst, online0, events = load_churn_scenario(name, seed=1)
    assert inst.n_nodes == (1000 if name.startswith("fb1k") else 2000)
    proto = get_protocol("omen")
    eng = proto.maintenance_engine(inst, proto.streams(1), sim=Simulator())
    eng.start(online0)
    start, after, rows = REAL[name]
    assert eng.state_digest() == start
    res = run_events("omen", inst, online0, events, seed=1, n_events=10)
    kept = [{k: v for k, v in r.items() if "seconds" not in k} for r in res.rows]
    got = hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()
    assert (res.engine.state_digest(), got[:16]) == (after, rows)
