"""The gossip layer: peer sampling and T-Man, cycle-driven and vectorised over nodes.

Protocols that build their overlay by gossip (Vitis and its baselines, OMen)
share this layer.  All state is numpy arrays indexed by node; one cycle is a
few numba calls over all nodes, never a Python object per node or message.

Peer sampling (:mod:`hedgerow.gossip.sampling`)
    ``PeerSampling(n, c, kind)`` with ``kind`` in :data:`SAMPLERS`
    (``"newscast"``, ``"cyclon"``, ``"uniform"``: the ideal sampler of
    experiments).  ``bootstrap(alive, rng)`` fills the caches, ``cycle(rng)``
    runs one cycle, ``fill(nodes, rng, k)`` gives joining nodes a bootstrap
    answer, ``alive`` is the online mask (the caller flips it on churn) and
    ``cache`` (``(n, c)`` int32, ``-1`` = empty) is ``getSampleNodes()``.

T-Man (:mod:`hedgerow.gossip.tman`)
    ``TMan(R, select, partner=..., include_self=True, live_only=False)``;
    ``view = tman.empty_view(n)``; ``tman.cycle(view, sampling, rng)`` runs
    one cycle: every live node exchanges with a partner, both build the union
    of both views, both samples and both descriptors, and each replaces its
    view with ``select(rows, indptr, cand, view)``.  The selection hook is any
    callable writing the rows of ``view`` from the CSR candidate lists (so a
    protocol may keep its own per-node state and need not rank);
    ``rank_select(score)`` builds a ranking selection from a score callable,
    ``ring_select(ids)`` and ``jaccard_select(masks)`` are ready-made.  The
    partner hook ``partner(nodes, view, sample, alive, u)`` defaults to
    ``uniform_partner`` (uniform among view entries) or ``ring_partner(ids, psi)``
    (T-Man's own: uniform among the ``psi`` entries nearest on the id ring).

Randomness comes only from the ``numpy.random.Generator`` handed to each
call (a named stream of the run's :class:`hedgerow.model.RngStreams`).

Examples
--------
>>> import numpy as np
>>> from hedgerow.gossip import PeerSampling, TMan, jaccard_select
>>> rng = np.random.default_rng(3)
>>> masks = np.zeros((100, 1), np.uint64); masks[:50, 0] = 1; masks[50:, 0] = 2
>>> ps = PeerSampling(100, 8); ps.bootstrap(np.ones(100, bool), rng)
>>> tm = TMan(5, jaccard_select(masks)); view = tm.empty_view(100)
>>> for _ in range(10):
...     ps.cycle(rng); tm.cycle(view, ps, rng)
>>> bool(((view < 50) == (np.arange(100) < 50)[:, None]).all())
True
"""

from hedgerow.gossip.sampling import SAMPLERS, PeerSampling
from hedgerow.gossip.tman import (
    RingPartner,
    RingSelect,
    TMan,
    jaccard_select,
    rank_select,
    ring_partner,
    ring_select,
    uniform_partner,
)

__all__ = [
    "SAMPLERS",
    "PeerSampling",
    "RingPartner",
    "RingSelect",
    "TMan",
    "jaccard_select",
    "rank_select",
    "ring_partner",
    "ring_select",
    "uniform_partner",
]
