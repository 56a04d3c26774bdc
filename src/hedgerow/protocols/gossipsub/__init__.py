"""GossipSub as deployed (libp2p specs v1.0, v1.1, v1.2): meshes, gossip, peer scoring, presets.

``params`` (every parameter declared once, the presets) and ``scoring`` (v1.1
peer scoring over (connection, topic) slots); ``engine``
(:class:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine`: the connections,
the schedule and the state) over ``_kernel`` (the numba event simulation);
``protocol`` the registered protocol ``gossipsub`` (capability ``clock``);
``case`` the case format shared with the production-implementation harness
(:func:`~hedgerow.protocols.gossipsub.case.simulate_case`).
``docs/gossipsub.md`` has the model and every choice.
"""

from hedgerow.protocols.gossipsub.case import simulate_case
from hedgerow.protocols.gossipsub.engine import (
    Connections,
    GossipSubEngine,
    Publications,
    random_connections,
)
from hedgerow.protocols.gossipsub.protocol import GossipSub

__all__ = [
    "Connections",
    "GossipSub",
    "GossipSubEngine",
    "Publications",
    "random_connections",
    "simulate_case",
]
