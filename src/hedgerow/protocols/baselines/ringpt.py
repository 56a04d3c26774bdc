"""Ring-per-topic overlay (SpiderCast section 3.9.2).

For every topic, its subscribers form a logical ring ordered by node id; the
rings are merged into one overlay and duplicate links collapse (the paper's
RingPT, after Sub-2-Sub, Voulgaris et al., IPTPS 2006).  A topic with two
subscribers contributes one link, with one subscriber none.  The rings are
computed centrally (they are fully determined by the subscriptions), so the
build sends no control messages.

Examples
--------
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0, 1], [0, 1], [0]], n_topics=2)
>>> ov = RingPerTopic().build(inst)
>>> sorted(map(tuple, ov.edges().tolist()))
[(0, 1), (0, 3), (1, 2), (2, 3)]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.base import StaticProtocol


def ring_edges(instance: Instance) -> np.ndarray:
    """``(m, 2)`` unique undirected ring links ``u < v`` over all topics."""
    ptr, nodes = instance.topic_indptr, instance.topic_nodes
    sizes = np.diff(ptr)
    # successor of each subscriber within its topic's ring (sorted by id)
    nxt = np.arange(1, len(nodes) + 1)
    last = ptr[1:] - 1
    nxt[last[sizes > 0]] = ptr[:-1][sizes > 0]
    u = nodes.astype(np.int64)
    v = nodes[nxt[: len(nodes)] if len(nodes) else nxt].astype(np.int64)
    keep = u != v
    a, b = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    if len(a) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.column_stack([a, b]), axis=0)


class RingPerTopic(StaticProtocol):
    """RingPT: one ring per topic ordered by node id, duplicate links merged."""

    name: ClassVar[str] = "ringpt"
    paper: ClassVar[str] = "SpiderCast (DEBS 2007) section 3.9.2; Sub-2-Sub (IPTPS 2006)."
    claims_topic_connected: ClassVar[bool] = True

    def degree_bound(self, instance: Instance) -> np.ndarray:
        """Two ring links per subscription."""
        return 2 * instance.n_subs.astype(np.int64)

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        edges = ring_edges(instance)
        ov = Overlay.from_edges(instance.n_nodes, edges)
        return ov, {"control_messages": 0, "quiescent": True}
