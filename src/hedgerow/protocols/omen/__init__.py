"""OMen: overlay mending for topic-based pub/sub under churn (DEBS 2016).

Modules: :mod:`~.backups` (greedy and primal-dual backup sets),
:mod:`~.coordinator` (the identifier ring), :mod:`~.views` (local views and
gossip), :mod:`~.repair` (Algorithm 1 with the LowODA rule),
:mod:`~.engine` (the churn handling on the event core) and
:mod:`~.protocol` (the registered ``omen`` and ``omen-g``).
"""

from hedgerow.protocols.omen.protocol import Omen, OmenG

__all__ = ["Omen", "OmenG"]
