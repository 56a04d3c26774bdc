"""The dissemination engine: batched message propagation over CSR overlays.

See :mod:`hedgerow.dissemination.engine` and ``docs/dissemination.md``.
"""

from hedgerow.dissemination.engine import (
    POLICIES,
    Delivery,
    MessageBatch,
    disseminate,
    edge_delays,
)

__all__ = ["POLICIES", "Delivery", "MessageBatch", "disseminate", "edge_delays"]
