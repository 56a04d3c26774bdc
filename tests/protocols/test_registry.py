"""The one registry of protocols: names, capabilities, look-ups and declared parameters.

Nothing here counts the protocols or lists them all: what must hold for every
registered protocol is asserted for each, so adding one (built in or from a
plugin) changes no line.
"""

from __future__ import annotations

import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols import (
    BUILTIN,
    CAPABILITIES,
    REGISTRY,
    capabilities,
    get_protocol,
    protocol_class,
    protocol_help,
    protocol_names,
)
from hedgerow.scenarios.checks import check_invalid_values


def test_one_registry_keyed_by_each_class_name():
    assert protocol_names() == sorted(REGISTRY)
    assert set(BUILTIN) <= set(REGISTRY)
    for name, cls in REGISTRY.items():
        assert cls.name == name
        assert capabilities(cls), f"{name} declares no capability"
        assert cls.paper, f"{name} cites no paper"


def test_names_by_capability():
    """Each capability lists exactly the protocols deriving from it; every protocol is in one."""
    for c in CAPABILITIES:
        having = sorted(n for n, cls in REGISTRY.items() if c in capabilities(cls))
        assert protocol_names(c) == having
    assert set().union(*(protocol_names(c) for c in CAPABILITIES)) == set(REGISTRY)
    # what the papers say of these protocols, whatever else is registered
    assert {"spidercast", "similarity", "random", "lowoda-inc", "omen"} <= set(
        protocol_names("maintained")
    )
    assert {"goldfish", "perigee", "topiary"} <= set(protocol_names("adaptive"))
    assert "topiary" not in protocol_names("static") and "ringpt" in protocol_names("static")
    with pytest.raises(ParameterError, match="unknown capability 'flying'; allowed: static"):
        protocol_names("flying")


def test_renamed_protocols():
    """Topiary's random graph is ``random-graph`` (``random`` is SpiderCast's random(y));
    Scribe is two protocols that share their random streams."""
    assert "scribe" not in REGISTRY
    assert REGISTRY["random-graph"].paper != REGISTRY["random"].paper
    a, b = REGISTRY["scribe-random"], REGISTRY["scribe-topic"]
    assert a.stream_key == b.stream_key == "scribe"
    assert a().streams(1).stream("x").random() == b().streams(1).stream("x").random()


def test_lookups_name_what_is_allowed():
    assert protocol_class("ringpt") is REGISTRY["ringpt"]
    with pytest.raises(ParameterError, match=r"unknown protocol 'nope'; allowed: complete, "):
        protocol_class("nope")
    with pytest.raises(ParameterError, match="unknown protocol 'scribe'"):
        get_protocol("scribe")
    with pytest.raises(ParameterError, match=r"topiary is not a maintained protocol .* random,"):
        protocol_class("topiary", "maintained")
    with pytest.raises(ParameterError, match="unknown parameter 'kq'; allowed: kg, kr"):
        get_protocol("spidercast", kq=1)


def test_get_protocol_sets_parameters_and_clone_keeps_them():
    p = get_protocol("spidercast", kg=2)
    assert p.get_params()["kg"] == 2 and p.clone().get_params() == p.get_params()
    assert p.checked()["kr"] == 1  # the defaults: (3, 1) with uniform ties
    assert p.checked()["ties"] == "uniform"


def test_help_lists_every_protocol_with_capabilities_and_parameters():
    lines = protocol_help().splitlines()
    assert [x.split(" ", 1)[0] for x in lines] == protocol_names()
    assert "spidercast [static/maintained]: kg, kr, margin, adaptive" in protocol_help()
    adaptive = protocol_help("adaptive").splitlines()
    assert [x.split(" ", 1)[0] for x in adaptive] == protocol_names("adaptive")
    assert "topiary [adaptive]: d, wc, wd, ww, eta, keep, exploration" in adaptive
    assert all(" [adaptive]: " in x for x in adaptive)


def test_every_declared_parameter_refuses_its_invalid_values():
    """Each (protocol, parameter) pair is fed every ``Param.invalid_values()`` value and
    answers with a one-line ``ParameterError`` naming the parameter (the checks library)."""
    pairs = []
    for name, cls in sorted(REGISTRY.items()):
        check_invalid_values(cls)
        pairs += [(name, k) for k in cls.params]
        for k, p in cls.params.items():
            for bad in p.invalid_values():
                with pytest.raises(ParameterError) as info:
                    get_protocol(name, **{**cls.quick_params, k: bad}).check_params()
                assert info.value.key == k, (name, k, bad)
    assert {n for n, _ in pairs} == {n for n, cls in REGISTRY.items() if cls.params}
    assert ("spidercast", "kg") in pairs and ("vitis", "rt") in pairs


def test_docs_parameter_reference_matches_the_declarations():
    """docs/specs.md carries the generated reference verbatim (regenerate it with
    ``hedgerow.protocols.params_reference()`` after changing a declaration)."""
    from pathlib import Path

    from hedgerow.protocols import params_reference

    docs = (Path(__file__).resolve().parents[2] / "docs" / "specs.md").read_text()
    reference = params_reference()
    assert reference in docs
    assert "| `kg` | int >= 0 (neighbours per topic), default 3 | greedy coverage K_g |" in docs
    headings = [x for x in reference.splitlines() if x.startswith("#### ")]
    assert [x.split("`")[1] for x in headings] == sorted(BUILTIN)  # plugins document themselves
    for name, cls in BUILTIN.items():
        assert f"#### `{name}` (" in reference
        for k in cls.params:
            assert f"| `{k}` |" in reference
