"""Complete graph baseline of Topiary (section V-A): every pair of nodes is linked.

Paper: Mao & Bojja Venkatakrishnan, "Topiary", arXiv:2312.06800 (2023),
section V-A: "All the nodes have direct connections to all other nodes. A
complete graph is an unrealistic topology, but serves as a reasonable lower
bound for performance."  It ignores any degree bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import check_memory
from hedgerow.protocols.base import StaticProtocol

#: bytes one link of the complete graph holds at the peak of a run: its build's pair arrays,
#: the overlay's adjacency both ways and the flood over it (measured at 1,000-3,000 nodes:
#: 330-400 bytes per link; 2,000 nodes peak at 1.0 GiB, 3,000 at 1.9 GiB)
LINK_BYTES = 400.0


class CompleteGraph(StaticProtocol):
    """All ``n (n-1) / 2`` links (undirected).

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> ov = CompleteGraph().build(Instance.from_lists([[0]] * 5, n_topics=1))
    >>> ov.n_edges, ov.is_symmetric()
    (10, True)
    """

    name = "complete"
    paper = "Mao & Bojja Venkatakrishnan, Topiary, arXiv:2312.06800 (2023), section V-A"
    claims_topic_connected = True
    forwarding = "ttl"

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        n = instance.n_nodes
        links = n * (n - 1) // 2
        check_memory(f"complete on {n:,} nodes ({links:,} links)", links * LINK_BYTES)
        u, v = np.triu_indices(n, k=1)
        return Overlay.from_edges(n, np.column_stack([u, v])), {}
