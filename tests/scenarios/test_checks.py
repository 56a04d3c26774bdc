"""The conformance checks (``hedgerow.scenarios.checks``) over every registered protocol.

scikit-learn's ``check_estimator`` idea: one pytest case per (protocol, check)
that applies to the protocol's declared capabilities, through the public
``hedgerow.testing.parametrize_with_checks``, so every registered protocol
(built in or from an installed plugin) is subjected to all of them, and a
failure names both (``spidercast-check_static_build``).  Nothing here counts
the protocols: adding one adds its cases and changes no line.
"""

from __future__ import annotations

import pytest

from hedgerow.params import Int
from hedgerow.protocols import CAPABILITIES, REGISTRY, capabilities
from hedgerow.scenarios.checks import check_invalid_values, check_protocol, protocol_checks
from hedgerow.testing import parametrize_with_checks

#: the checks every protocol gets, and those of each capability
EVERY = ("check_declared_params", "check_param_round_trip", "check_invalid_values")
PER_CAPABILITY = {
    "static": ("check_static_build", "check_build_statistics_declared",
               "check_static_in_epoch_loop", "check_bandwidth_limited"),
    "adaptive": ("check_adaptive_epochs", "check_bandwidth_limited"),
    "maintained": ("check_maintained_churn", "check_bandwidth_limited"),
    "cycle": ("check_cycle_engine",),
    "clock": ("check_clock_engine", "check_bandwidth_limited"),
}


@parametrize_with_checks(sorted(REGISTRY))
def test_protocol_passes_check(protocol, check):
    check(protocol)


def test_every_protocol_declares_a_known_capability():
    for name, cls in REGISTRY.items():
        caps = capabilities(cls)
        assert caps and set(caps) <= set(CAPABILITIES), name


def test_checks_follow_the_capabilities():
    """Every protocol gets the three parameter checks, plus those of each capability, once."""
    for name, cls in REGISTRY.items():
        names = [c.__name__ for c in protocol_checks(cls)]
        expected = set(EVERY).union(*(PER_CAPABILITY.get(c, ()) for c in capabilities(cls)))
        assert len(names) == len(set(names)), name
        assert expected <= set(names), name
        assert names[: len(EVERY)] == list(EVERY), name


def test_check_protocol_runs_the_checks_by_name():
    assert check_protocol("ringpt") == [
        "check_declared_params",
        "check_param_round_trip",
        "check_invalid_values",
        "check_static_build",
        "check_build_statistics_declared",
        "check_static_in_epoch_loop",
        "check_bandwidth_limited",
    ]


def test_check_protocol_takes_a_class_or_an_instance():
    """A class is checked as it is; an instance with its own values (not quick_params)."""
    cls = REGISTRY["random-graph"]
    assert check_protocol(cls) == check_protocol("random-graph")
    seen = []

    class Watched(cls):
        def _build(self, instance, streams, *, progress):
            seen.append(self.get_params()["d"])
            return super()._build(instance, streams, progress=progress)

    check_protocol(Watched(d=3))
    assert seen and set(seen) == {3}
    with pytest.raises(Exception, match="a protocol to check is a registered name"):
        check_protocol(42)


def test_a_maintained_class_under_development_is_checked_without_registering_it():
    """The churn check runs the class itself (not the registered one) and leaves the
    registry as it found it."""
    base = REGISTRY["random"]

    class Dev(base):
        pass

    assert "check_maintained_churn" in check_protocol(Dev)
    assert REGISTRY["random"] is base


def test_a_broken_protocol_fails_its_check():
    """The checks are not vacuous: a protocol that accepts any value for ``d`` is caught."""
    broken = type(
        "Broken",
        (REGISTRY["random-graph"],),
        {"params": {"d": Int(6, "out-degree", low=1)}, "check_params": lambda self: None},
    )
    with pytest.raises(AssertionError, match="random-graph: parameter d accepted invalid"):
        check_invalid_values(broken)


def test_a_badly_named_protocol_fails_the_declaration_check():
    bad = type("Bad", (REGISTRY["ringpt"],), {"name": "Ring.PT"})
    with pytest.raises(AssertionError, match=r"'Ring\.PT' is not a protocol name"):
        check_protocol(bad)
    clash = type("Clash", (REGISTRY["ringpt"],), {"name": "spidercast"})
    with pytest.raises(AssertionError, match="'spidercast' is registered for another class"):
        check_protocol(clash)


def test_an_undeclared_build_statistic_fails_its_check():
    """A build statistic a row would carry as ``stat_<name>`` must be a declared metric."""
    from hedgerow.metrics.registry import statistics

    cls = REGISTRY["ringpt"]

    class Counting(cls):
        def _build(self, instance, streams, *, progress):
            overlay, stats = super()._build(instance, streams, progress=progress)
            return overlay, {**stats, "rings_drawn": instance.n_topics}

    with pytest.raises(AssertionError, match="ringpt: build statistics not declared as "
                       "metrics: stat_rings_drawn"):
        check_protocol(Counting)
    declared = type("Declared", (Counting,), {
        "metrics": statistics(rings_drawn=("rings drawn, one per topic", "rings", None))})
    assert "check_build_statistics_declared" in check_protocol(declared)


def test_a_nondeterministic_build_fails_its_check():
    """Same seed, other overlay: a build that ignores its streams is caught."""
    cls = REGISTRY["random-graph"]
    draws = iter(range(1000))

    class Unseeded(cls):
        def _build(self, instance, streams, *, progress):
            from hedgerow.model import RngStreams

            return super()._build(instance, RngStreams(next(draws)), progress=progress)

    with pytest.raises(AssertionError, match="same seed, other overlay"):
        check_protocol(Unseeded)


@pytest.mark.parametrize("name", ["vitis", "rvr"])
def test_cycle_protocols_are_declared_and_checked(name):
    """The cycle-driven shape is a capability: listed, and its engine check runs."""
    from hedgerow.protocols import protocol_names

    assert {"rvr", "vitis"} <= set(protocol_names(capability="cycle"))
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


def test_clock_protocols_are_declared_and_checked():
    """The clock-driven shape is a capability: listed, and its engine check runs."""
    from hedgerow.protocols import protocol_names

    assert "gossipsub" in protocol_names(capability="clock")
    assert "check_clock_engine" in check_protocol("gossipsub")


def test_a_broken_clock_engine_fails_its_check():
    """The clock check is not vacuous: bounds the engine breaks, or draws that ignore the
    seed, are caught."""
    import numpy as np

    from hedgerow.protocols.gossipsub import GossipSub
    from hedgerow.scenarios.checks import check_clock_engine

    class Tight(GossipSub):  # declares a bound its meshes do not keep
        name = "tight-gossipsub"

        def heartbeat_bounds(self, engine):
            deg = engine.mesh_degree()[engine.subs]
            return [f"mesh {deg.max()} > 5"] if (deg > 5).any() else []

    with pytest.raises(AssertionError, match="after heartbeat"):
        check_clock_engine(Tight)

    class Unseeded(GossipSub):  # the kernel's draws from outside the run's streams
        name = "unseeded-gossipsub"
        drawn = iter(range(1, 100))

        def clock_engine(self, instance, network, latency, proc, publications, streams):
            eng = super().clock_engine(instance, network, latency, proc, publications, streams)
            eng._rs[0] = np.uint64(next(self.drawn))
            return eng

    with pytest.raises(AssertionError, match="same seed"):
        check_clock_engine(Unseeded)
