"""Core data model: instances (who subscribes to what), overlays, RNG streams."""

from hedgerow.model.bitset import interest_matrix, pack_bool, pack_sets, popcount_and
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams

__all__ = [
    "Instance",
    "Overlay",
    "RngStreams",
    "interest_matrix",
    "pack_bool",
    "pack_sets",
    "popcount_and",
]
