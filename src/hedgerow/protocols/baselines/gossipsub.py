"""GossipSub-style baseline of Topiary (section V-A): the out-degree split across a node's topics.

Papers: Mao & Bojja Venkatakrishnan, "Topiary", arXiv:2312.06800 (2023),
section V-A ("Nodes equally distribute their outgoing degree to each of their
interested [topics] to enable at least one connection to that topic"), after
Vyzovitis et al., "GossipSub", arXiv:2007.02754 (2020), where each topic has
its own mesh.

Construction (the paper gives no more detail): node ``v`` with topics
``σ_v`` and ``d`` outgoing slots assigns its slots to topics round-robin over
a random order of ``σ_v`` (so when ``|σ_v| >= d`` it covers ``d`` random
topics with one slot each, and when ``|σ_v| < d`` every topic gets
``floor(d / |σ_v|)`` or one more slots).  Each slot links to a uniformly
random subscriber of its topic that is not ``v`` and not already chosen; when
a topic has no such subscriber the slot goes to a uniformly random other node.
The degree bound ``d`` is respected, which is exactly why GossipSub "cannot
support a large number of topics" (section V-B3): with 20 topics per node and
``d = 6`` most of a node's topics get no mesh link of their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.baselines._out_degree import FixedOutDegree


def gossipsub_out(instance: Instance, d: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, d)`` outgoing neighbours of the GossipSub-style split (``-1`` padded).

    Examples
    --------
    >>> import numpy as np
    >>> inst = Instance.from_lists([[0], [0], [0], [1], [1], [1]], n_topics=2)
    >>> out = gossipsub_out(inst, 2, np.random.default_rng(0))
    >>> sorted(out[0].tolist()), sorted(out[3].tolist())
    ([1, 2], [4, 5])
    """
    n = instance.n_nodes
    out = np.full((n, d), -1, dtype=np.int64)
    for v in range(n):
        topics = rng.permutation(instance.topics_of(v))
        chosen: set[int] = set()
        for slot in range(d):
            u = -1
            if len(topics):
                subs = instance.subscribers(int(topics[slot % len(topics)]))
                free = np.setdiff1d(subs, [v, *chosen], assume_unique=False)
                if len(free):
                    u = int(free[rng.integers(len(free))])
            if u < 0:
                free = np.setdiff1d(np.arange(n), [v, *chosen])
                if not len(free):
                    break
                u = int(free[rng.integers(len(free))])
            chosen.add(u)
            out[v, slot] = u
    return out


class GossipSubSplit(FixedOutDegree):
    """Per-topic mesh links within an out-degree budget ``d``.

    Parameters
    ----------
    d : int, default 6
        Outgoing degree of every node.

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1]] * 3, n_topics=2)
    >>> ov = GossipSubSplit(d=2).build(inst, seed=0)
    >>> bool((ov.degree() <= 2).all())
    True
    """

    name = "gossipsub"
    paper = "Vyzovitis et al., GossipSub, arXiv:2007.02754 (2020); Topiary baseline (V-A)"

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        out = gossipsub_out(instance, int(self.d), streams.stream("gossipsub"))
        return out_overlay(out), {"out_degree": int(self.d)}
