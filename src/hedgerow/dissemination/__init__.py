"""The dissemination engine: batched message propagation over CSR overlays.

See :mod:`hedgerow.dissemination.engine` (the model and the kernels' API),
:mod:`hedgerow.dissemination.chunks` (memory-bounded epochs, silent nodes) and
``docs/dissemination.md``.
"""

from hedgerow.dissemination.chunks import EDGE_BUDGET_BYTES, disseminate_chunks
from hedgerow.dissemination.engine import (
    POLICIES,
    Delivery,
    MessageBatch,
    disseminate,
    edge_delays,
)

__all__ = [
    "EDGE_BUDGET_BYTES",
    "POLICIES",
    "Delivery",
    "MessageBatch",
    "disseminate",
    "disseminate_chunks",
    "edge_delays",
]
