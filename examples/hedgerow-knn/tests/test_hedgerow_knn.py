"""Tests of the example plugin: Hedgerow's conformance checks, and what the overlay promises."""

from __future__ import annotations

import numpy as np
from hedgerow_knn import TopicKNN, coordinates

from hedgerow.model import RngStreams
from hedgerow.protocols import get_protocol, protocol_origin
from hedgerow.testing import parametrize_with_checks
from hedgerow.workloads import make_instance


@parametrize_with_checks([TopicKNN, TopicKNN(k=5)])
def test_hedgerow_conformance(protocol, check):
    check(protocol)


def test_registered_through_the_entry_point():
    """Installed, the package's entry point puts the protocol in Hedgerow's registry."""
    assert type(get_protocol("topic-knn")).__name__ == "TopicKNN"
    assert protocol_origin("topic-knn") == "plugin hedgerow-knn 0.1.0"


def test_each_subscriber_links_to_its_k_nearest_per_topic():
    """Against a brute-force reading of the definition, on a small world."""
    inst = make_instance(nodes=80, topics=6, subs="1:3", popularity="rss", seed=2)
    k, seed = 3, 4
    proto = TopicKNN(k=k)
    ov = proto.build(inst, seed=seed)
    points = coordinates(inst.n_nodes, proto.streams(seed))
    expected = set()
    for t in range(inst.n_topics):
        subs = inst.subscribers(t)
        for u in subs:
            others = subs[subs != u]
            dist = np.linalg.norm(points[others] - points[u], axis=1)
            for v in others[np.argsort(dist)[:k]]:
                expected.add((min(u, v), max(u, v)))
    assert set(map(tuple, ov.edges().tolist())) == expected


def test_the_same_seed_gives_the_same_overlay_and_another_seed_another():
    inst = make_instance(nodes=100, topics=10, subs=3, seed=1)
    a = TopicKNN().build(inst, seed=1).edges()
    assert np.array_equal(a, TopicKNN().build(inst, seed=1).edges())
    assert not np.array_equal(a, TopicKNN().build(inst, seed=2).edges())
    assert coordinates(5, RngStreams(3)).min() >= 0.0
