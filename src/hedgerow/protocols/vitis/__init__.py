"""Vitis (IPDPS 2011): a gossip-built hybrid overlay with rendezvous routing between clusters.

:mod:`hedgerow.protocols.vitis.ring` holds the identifier ring shared with the
RVR baseline (ids, distances, ring and small-world slots, greedy lookups).
"""

from hedgerow.protocols.vitis.protocol import Vitis, VitisRun

__all__ = ["Vitis", "VitisRun"]
