"""Checks every overlay protocol in the registry passes (scikit-learn's check_estimator idea).

Adding a protocol to ``hedgerow.protocols.REGISTRY`` subjects it to all of these.
"""

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.metrics import partitioned_topics
from hedgerow.protocols import REGISTRY, get_protocol
from hedgerow.workloads import make_instance

NAMES = sorted(REGISTRY)


@pytest.fixture(scope="module")
def instance():
    return make_instance(nodes=400, topics=30, subs=5, popularity="rss", seed=5)


@pytest.fixture(scope="module")
def built(instance):
    out = {}
    for name in NAMES:
        proto = get_protocol(name)
        out[name] = (proto, proto.build(instance, seed=3))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_builds_from_defaults(name, built, instance):
    proto, ov = built[name]
    assert ov.n_nodes == instance.n_nodes
    assert ov.n_edges > 0
    assert isinstance(proto.stats_, dict)
    assert proto.stats_.get("quiescent", True)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_overlay(name, built, instance):
    _, ov = built[name]
    again = get_protocol(name).build(instance, seed=3)
    assert again == ov


@pytest.mark.parametrize("name", NAMES)
def test_no_self_loops_or_unknown_nodes(name, built, instance):
    _, ov = built[name]
    e = ov.edges()
    assert np.all(e[:, 0] != e[:, 1])
    assert e.min() >= 0 and e.max() < instance.n_nodes


@pytest.mark.parametrize("name", NAMES)
def test_links_symmetric(name, built):
    proto, ov = built[name]
    if not proto.directed:
        assert ov.is_symmetric()
    assert proto.stats_.get("asymmetric_links", 0) == 0


@pytest.mark.parametrize("name", NAMES)
def test_degree_bound_respected(name, built, instance):
    proto, ov = built[name]
    bound = proto.degree_bound(instance)
    if bound is not None:
        assert np.all(ov.degree() <= bound)


@pytest.mark.parametrize("name", NAMES)
def test_topic_connected_where_claimed(name, built, instance):
    proto, ov = built[name]
    if proto.claims_topic_connected:
        assert partitioned_topics(ov, instance) == 0


@pytest.mark.parametrize("name", NAMES)
def test_params_roundtrip_and_unknown_param(name):
    proto = get_protocol(name)
    clone = proto.clone()
    assert clone.get_params() == proto.get_params()
    assert not hasattr(clone, "overlay_")
    with pytest.raises(ParameterError, match="unknown parameter"):
        get_protocol(name, no_such_parameter=1)


def test_unknown_protocol():
    with pytest.raises(ParameterError, match="allowed"):
        get_protocol("nope")
