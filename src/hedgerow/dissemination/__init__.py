"""The dissemination engine: batched message propagation over CSR overlays.

See :mod:`hedgerow.dissemination.engine` (the model and the kernels' API),
:mod:`hedgerow.dissemination.chunks` (memory-bounded epochs, silent nodes),
:mod:`hedgerow.dissemination.mesh` (the ``"mesh"`` policy: per-topic links),
:mod:`hedgerow.dissemination.contended` (bandwidth, message sizes and queues;
``docs/network.md``) and ``docs/dissemination.md``.
"""

from hedgerow.dissemination.chunks import EDGE_BUDGET_BYTES, disseminate_chunks
from hedgerow.dissemination.contended import (
    ContendedDelivery,
    ControlBatch,
    Network,
    disseminate_contended,
)
from hedgerow.dissemination.engine import (
    POLICIES,
    Delivery,
    MessageBatch,
    disseminate,
    edge_delays,
    restrict_csr,
)
from hedgerow.dissemination.mesh import EntryTopics, disseminate_mesh, entry_topics

__all__ = [
    "EDGE_BUDGET_BYTES",
    "POLICIES",
    "ContendedDelivery",
    "ControlBatch",
    "Delivery",
    "EntryTopics",
    "MessageBatch",
    "Network",
    "disseminate",
    "disseminate_chunks",
    "disseminate_contended",
    "disseminate_mesh",
    "edge_delays",
    "entry_topics",
    "restrict_csr",
]
