"""A tiny deterministic discrete-event core."""

from hedgerow.engine.core import Simulator

__all__ = ["Simulator"]
