"""The conformance checks (``hedgerow.scenarios.checks``) over every registered protocol.

scikit-learn's ``check_estimator`` idea: one pytest case per (protocol, check)
that applies to the protocol's declared capabilities, so adding a protocol to
``hedgerow.protocols.REGISTRY`` subjects it to all of them, and a failure
names both (``spidercast-check_static_build``).  The checks use each
protocol's ``quick_params`` and small worlds: the whole set runs in well under
a minute.
"""

from __future__ import annotations

import pytest

from hedgerow.protocols import REGISTRY, capabilities
from hedgerow.scenarios.checks import check_protocol, protocol_checks

CASES = [
    pytest.param(cls, check, id=f"{name}-{check.__name__}")
    for name, cls in sorted(REGISTRY.items())
    for check in protocol_checks(cls)
]

#: what each registered protocol declares; a new protocol adds a line here
DECLARED = {
    "complete": ("static",),
    "goldfish": ("adaptive",),
    "gossipsub": ("static",),
    "perigee": ("adaptive",),
    "gm": ("static",),
    "lowoda": ("static",),
    "lowoda-inc": ("static", "maintained"),
    "lowoda-re": ("static", "maintained"),
    "minmaxoda": ("static",),
    "omen": ("maintained",),
    "omen-g": ("maintained",),
    "opt": ("static",),
    "random": ("static", "maintained"),
    "random-graph": ("static",),
    "ringpt": ("static",),
    "rvr": ("static", "cycle"),
    "scribe-random": ("static",),
    "scribe-topic": ("static",),
    "similarity": ("static", "maintained"),
    "spidercast": ("static", "maintained"),
    "topiary": ("adaptive",),
    "vitis": ("static", "cycle"),
}


@pytest.mark.parametrize(("cls", "check"), CASES)
def test_protocol_passes_check(cls, check):
    check(cls)


def test_registry_size_and_declared_capabilities():
    assert len(REGISTRY) == 22
    assert {name: capabilities(cls) for name, cls in REGISTRY.items()} == DECLARED


def test_checks_follow_the_capabilities():
    """Every protocol gets the three parameter checks, plus those of each capability."""
    per_capability = {
        "static": {"check_static_build", "check_static_in_epoch_loop"},
        "adaptive": {"check_adaptive_epochs"},
        "maintained": {"check_maintained_churn"},
        "cycle": {"check_cycle_engine"},
    }
    every = {"check_declared_params", "check_param_round_trip", "check_invalid_values"}
    for name, cls in REGISTRY.items():
        names = [c.__name__ for c in protocol_checks(cls)]
        expected = set(every).union(*(per_capability[c] for c in capabilities(cls)))
        assert len(names) == len(set(names)) and set(names) == expected, name
    assert len(CASES) == 3 * 22 + 2 * 17 + 3 + 7 + 2


def test_check_protocol_runs_the_checks_by_name():
    assert check_protocol("ringpt") == [
        "check_declared_params",
        "check_param_round_trip",
        "check_invalid_values",
        "check_static_build",
        "check_static_in_epoch_loop",
    ]


def test_a_broken_protocol_fails_its_check():
    """The checks are not vacuous: a protocol that accepts any value for ``d`` is caught."""
    from hedgerow.params import Int
    from hedgerow.scenarios.checks import check_invalid_values

    broken = type(
        "Broken",
        (REGISTRY["random-graph"],),
        {"params": {"d": Int(6, "out-degree", low=1)}, "check_params": lambda self: None},
    )
    with pytest.raises(AssertionError, match="random-graph: parameter d accepted invalid"):
        check_invalid_values(broken)


@pytest.mark.parametrize("name", ["vitis", "rvr"])
def test_cycle_protocols_are_declared_and_checked(name):
    """The cycle-driven shape is a capability: listed, and its engine check runs."""
    from hedgerow.protocols import protocol_names

    assert protocol_names(capability="cycle") == ["rvr", "vitis"]
    assert "check_cycle_engine" in check_protocol(name)


def test_a_broken_cycle_engine_fails_its_check():
    """The cycle check is not vacuous: an engine whose leave() keeps nodes online is caught."""
    from hedgerow.protocols.baselines.rvr import RVR, RVREngine
    from hedgerow.scenarios.checks import check_cycle_engine

    class StickyEngine(RVREngine):
        def leave(self, nodes):
            pass

    class Sticky(RVR):
        def cycle_engine(self, instance, streams):
            return StickyEngine(self._validate(instance), instance, streams)

    with pytest.raises(AssertionError, match="leave"):
        check_cycle_engine(Sticky)
