"""Observers of a churn run: what a snapshot measures (SpiderCast DEBS'07, section 3.8).

An observer reads a running engine only through
:class:`~hedgerow.protocols.engine_api.ChurnEngine` (who is online, the links,
the current interests, who is under-covered) and measures with the pure
functions of :mod:`hedgerow.metrics`; it never changes the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.metrics import degree_ci95, topic_components, topic_diameters
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.protocols.engine_api import ChurnEngine

__all__ = ["online_view", "snapshot"]


def online_view(engine: ChurnEngine, n_topics: int) -> tuple[np.ndarray, Overlay, Instance]:
    """The online part of a running engine, renumbered ``0..m-1``.

    Parameters
    ----------
    engine : ChurnEngine
        A running engine.
    n_topics : int
        Number of topics.

    Returns
    -------
    ids : numpy.ndarray
        The online nodes, in id order (local node ``i`` is ``ids[i]``).
    overlay : Overlay
        The links between online nodes (a link to a node that has just left,
        whose LEAVE is still in flight, is dropped).
    instance : Instance
        The current interests of the online nodes.
    """
    ids = np.flatnonzero(engine.online)
    local = np.full(engine.n, -1, dtype=np.int64)
    local[ids] = np.arange(len(ids))
    edges = engine.overlay().edges()
    a, b = local[edges[:, 0]], local[edges[:, 1]]
    keep = (a >= 0) & (b >= 0)
    m = len(ids)
    overlay = Overlay.from_edges(m, np.column_stack([a[keep], b[keep]]))
    subs = engine.subscriptions()
    lo, hi = subs.sub_indptr[ids], subs.sub_indptr[ids + 1]
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(hi - lo, out=indptr[1:])
    rows = np.repeat(np.arange(m), hi - lo)
    topics = subs.sub_topics[lo[rows] + np.arange(indptr[-1]) - indptr[rows]]
    return ids, overlay, Instance(m, n_topics, indptr, topics)


def snapshot(
    engine: ChurnEngine, included: np.ndarray, n_topics: int, *, diameter: bool = False
) -> dict[str, Any]:
    """Metrics of the online overlay, measured on the ``included`` nodes.

    Links count between online nodes only.  Degrees are those of the included
    nodes; a topic is partitioned when its included subscribers lie in more
    than one component of the topic subgraph of *all* online subscribers (an
    event may travel through a node that has just joined, but a node still
    building its links is not required to be reached).  See reading 5 of
    :mod:`hedgerow.scenarios.churn`.

    Parameters
    ----------
    engine : ChurnEngine
        A running engine.
    included : numpy.ndarray
        Bool mask of the nodes to measure (a subset of the online ones).
    n_topics : int
        Number of topics.
    diameter : bool, default False
        Also give ``max_topic_diameter``, over the topic subgraphs of all online nodes.

    Returns
    -------
    dict
        ``avg_degree``, ``max_degree``, ``degree_ci95``, ``partitioned_topics``,
        ``topic_components`` (summed over topics, each counting only components
        that hold an included subscriber), ``max_topic_diameter`` (with
        ``diameter``) and ``undercovered_nodes`` (included ones).
    """
    ids, overlay, inst = online_view(engine, n_topics)
    inc = np.asarray(included, dtype=bool)[ids]
    deg = overlay.degree()[inc].astype(np.float64)
    comps = topic_components(overlay, inst, measured=inc)
    row: dict[str, Any] = {
        "avg_degree": float(deg.mean()) if len(deg) else 0.0,
        "max_degree": int(deg.max()) if len(deg) else 0,
        "degree_ci95": list(degree_ci95(deg)),
        "partitioned_topics": int((comps > 1).sum()),
        "topic_components": int(comps.sum()),
    }
    if diameter:
        d = topic_diameters(overlay, inst)
        row["max_topic_diameter"] = int(d.max()) if len(d) else 0
    row["undercovered_nodes"] = int((engine.undercovered()[ids] & inc).sum())
    return row
