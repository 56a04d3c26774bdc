"""The churn-engine interface: every maintained protocol's engine offers it, and stays sound."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.engine import Simulator
from hedgerow.model import RngStreams
from hedgerow.protocols import REGISTRY, get_protocol, protocol_names
from hedgerow.protocols.checks_maintained import check_maintained
from hedgerow.protocols.engine_api import ChurnEngine
from hedgerow.workloads import make_instance

MAINTAINED = protocol_names("maintained")


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=80, topics=10, subs=3, popularity="rss", seed=2)


def _churned(name, inst, sim=None):
    eng = get_protocol(name).maintenance_engine(inst, RngStreams(1), sim=sim)
    rng = np.random.default_rng(0)
    eng.start(rng.random(inst.n_nodes) < 0.8)
    eng.run_until(30.0)
    for p in rng.choice(inst.n_nodes, 20, replace=False).tolist():
        if eng.online[p]:
            eng.leave(p)
        else:
            eng.join(p, rng.choice(inst.n_topics, int(inst.n_subs[p]), replace=False))
    eng.run_until(eng.sim.now + 200.0)
    return eng


def test_the_maintained_protocols_are_the_message_passing_ones():
    assert MAINTAINED == [
        "lowoda-inc", "lowoda-re", "omen", "omen-g", "random", "similarity", "spidercast"
    ]
    # the capability is declared exactly where an engine is offered
    assert MAINTAINED == sorted(n for n, c in REGISTRY.items() if hasattr(c, "maintenance_engine"))


@pytest.mark.parametrize("name", MAINTAINED)
def test_engine_implements_the_interface_and_stays_sound(name, inst):
    sim = Simulator(seconds_per_unit=0.1)
    eng = _churned(name, inst, sim)
    assert isinstance(eng, ChurnEngine)
    assert eng.sim is sim and sim.pending == 0 and sim.now > 0
    assert check_maintained(eng) == []
    assert eng.control_messages > 0 and eng.lost_messages >= 0
    subs = eng.subscriptions()
    assert subs.n_nodes == eng.n == inst.n_nodes and subs.n_topics == inst.n_topics
    assert np.array_equal(subs.n_subs, inst.n_subs)  # rejoins keep their number of topics
    under = eng.undercovered()
    assert under.dtype == bool and not under[~eng.online].any()
    assert [not eng.is_covered(p) for p in np.flatnonzero(eng.online)] == under[eng.online].tolist()
    edges = eng.overlay().edges()
    assert eng.online[edges].all()


def test_static_engine_makes_its_own_core_and_reports_the_instance(inst):
    eng = get_protocol("spidercast").maintenance_engine(inst, RngStreams(1))
    assert isinstance(eng.sim, Simulator) and eng.sim.seconds_per_unit == 1.0
    assert eng.subscriptions() is inst and eng.lost_messages == 0
    stats = eng.run()
    assert stats["control_messages"] == eng.control_messages
    assert check_maintained(eng) == []


def test_check_maintained_names_what_is_wrong(inst):
    eng = _churned("spidercast", inst)
    g = eng.tasks[0]
    p = next(v for v in range(eng.n) if len(g.nbrs[v]) >= 2)
    q = min(g.nbrs[p])
    g.nbrs[q].discard(p)  # a one-sided link, and q's degree and coverage now disagree
    off = int(np.flatnonzero(~eng.online)[0])
    g.nbrs[p].add(off)  # a link to an offline node
    found = "\n".join(check_maintained(eng))
    assert f"link {p}-{q} is one-sided" in found
    assert f"task 0, node {q}: degree" in found
    assert f"keeps offline neighbour {off}" in found
    assert "neighbours hold topic" in found
    assert "touches offline node" in found
