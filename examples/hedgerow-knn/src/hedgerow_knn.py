"""``topic-knn``: an example Hedgerow protocol from its own package.

Each node draws a point in a virtual unit square (its coordinates) and, for
each topic it subscribes to, links to the ``k`` subscribers of that topic
nearest to it there.  The links are undirected and merged, so the overlay is
the union of one k-nearest-neighbour graph per topic: a subscriber's links for
a topic lead to nearby subscribers of the same topic, and messages flood on the
topic's own subscribers (``forwarding = "topic"``).  A small topic's graph
(at most ``k + 1`` subscribers) is complete; a larger one may split into
clusters, so the protocol does not claim topic connectivity.

Why virtual coordinates, not the network's latency: a static protocol builds
from the instance alone (``StaticProtocol.build(instance, seed=...)`` is
handed who subscribes to what, never the world's network), so it cannot see
latencies.  The coordinates stand in for a network coordinate system (as
Vivaldi gives); they are drawn from the protocol's own random stream, so the
same seed gives the same overlay.

The package registers the class in ``pyproject.toml``::

    [project.entry-points."hedgerow.protocols"]
    topic-knn = "hedgerow_knn:TopicKNN"

after which ``hedgerow protocols`` lists it and ``build``, ``run``,
``compare``, ``sweep`` and specs take ``topic-knn`` like a built-in protocol.

Examples
--------
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0], [0, 1], [1], [1]], n_topics=2)
>>> ov = TopicKNN(k=2).build(inst, seed=1)
>>> sorted(map(tuple, ov.edges().tolist()))  # two topics of three: two triangles
[(0, 1), (0, 2), (1, 2), (2, 3), (2, 4), (3, 4)]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.metrics.registry import statistics
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Int
from hedgerow.protocols.base import StaticProtocol

__all__ = ["TopicKNN", "coordinates"]
__version__ = "0.1.0"


def coordinates(n_nodes: int, streams: RngStreams) -> np.ndarray:
    """``(n_nodes, 2)`` virtual coordinates, uniform in the unit square (stream ``coordinates``).

    Examples
    --------
    >>> coordinates(3, RngStreams(1)).shape
    (3, 2)
    """
    return streams.stream("coordinates").random((n_nodes, 2))


class TopicKNN(StaticProtocol):
    """Per topic, each subscriber linked to the ``k`` nearest subscribers (virtual coordinates)."""

    name: ClassVar[str] = "topic-knn"
    paper: ClassVar[str] = (
        "Example plugin (no paper): the union of one k-nearest-neighbour graph per topic."
    )
    params: ClassVar[dict] = {
        "k": Int(3, "links per subscribed topic, to the nearest subscribers of that topic",
                 low=1, unit="neighbours per topic"),
    }
    quick_params: ClassVar[dict] = {"k": 2}
    #: the build statistic this protocol adds to its rows (``stat_links`` in a build row), so
    #: a spec's ``report.metrics`` and ``hedgerow report --metric`` accept it
    metrics: ClassVar[dict] = statistics(
        links=("links of the overlay (the union of the per-topic graphs)", "links", None),
    )

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        # imported here, not at the top: the registry imports every plugin's module to list it,
        # and scipy.spatial takes longer to import than the rest of this package
        from scipy.spatial import cKDTree

        points = coordinates(instance.n_nodes, streams)
        ptr, nodes = instance.topic_indptr, instance.topic_nodes
        links = [np.zeros((0, 2), dtype=np.int64)]
        for t in range(instance.n_topics):
            subs = nodes[ptr[t] : ptr[t + 1]].astype(np.int64)
            if len(subs) >= 2:
                k = min(self.k, len(subs) - 1)
                # k + 1 nearest: each point finds itself first (distinct points almost surely)
                _, near = cKDTree(points[subs]).query(points[subs], k=k + 1)
                links.append(np.column_stack([np.repeat(subs, k), subs[near[:, 1:]].ravel()]))
            if progress is not None:
                progress(t + 1, instance.n_topics)
        e = np.concatenate(links)
        e = e[e[:, 0] != e[:, 1]]
        e = np.unique(np.sort(e, axis=1), axis=0)
        overlay = Overlay.from_edges(instance.n_nodes, e)
        return overlay, {"control_messages": 0, "quiescent": True, "links": len(e)}
