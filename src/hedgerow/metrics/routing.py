"""Hit ratio, traffic overhead and delay in hops (Vitis, IPDPS 2011, section IV).

Paper: Rahimian et al., "Vitis: A Gossip-based Hybrid Overlay for
Internet-scale Publish/Subscribe", IPDPS 2011.  Section IV measures:

* *Hit ratio*: "the fraction of events, on all topics, that are received by
  the subscriber nodes";
* *Traffic overhead*: "the proportion of relay (uninteresting) traffic that
  nodes experience";
* *Propagation delay*: "the average number of hops events take to reach to
  all the subscriber nodes".

Readings (``docs/vitis.md``, A7, A8, A10):

``hit_ratio``
    Pooled over (event, subscriber) pairs, the publisher excluded: reached
    subscribers / subscribers, each event weighted by its weight (its topic's
    publication rate when one event per topic is measured).
``overhead`` (node-based, the headline figure)
    Receptions by nodes not subscribed to the event's topic / all receptions,
    pooled over events (weighted) and nodes; a reception is a node other than
    the publisher that got the event (the payload is pulled once per node,
    section III-C).
``overhead_copies``
    The same with every copy counted (duplicate notifications included):
    copies received by non-subscribers / all copies received.
``overhead_node_mean``
    Mean over nodes that received anything of each node's own (weighted) share
    of uninteresting receptions (:func:`node_overhead` gives the per-node
    values, the distribution of Fig. 5).
``delay_hops``
    Mean hop count of the first copy over reached (event, subscriber) pairs
    (weighted).  ``delay_hops_max``: per event the largest hop count to a
    reached subscriber, averaged over events (weighted).

Every function reads the arrays the dissemination kernels return (``hops``:
``-1`` = never reached, ``0`` at the publisher) and the bit-packed
subscriptions (``Instance.masks``); a :class:`RoutingTally` adds them up over
chunks of events so the ``(events, nodes)`` arrays need not be held at once.

Examples
--------
Node 0 publishes on topic 0 (subscribers 0, 1, 2); node 3 (not subscribed)
relays to node 2, node 1 is reached directly, 5 copies in all of which 2
reached node 3:

>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0], [0], [1]], n_topics=2)
>>> hops = np.array([[0, 1, 2, 1]], dtype=np.int32)
>>> m = routing_measures(hops, [0], [0], inst.masks, copies=[5], relay_copies=[2])
>>> m["hit_ratio"], round(m["overhead"], 4), m["overhead_copies"], m["delay_hops"]
(1.0, 0.3333, 0.4, 1.5)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ROUTING_KEYS", "RoutingTally", "node_overhead", "routing_measures"]

#: the keys :meth:`RoutingTally.measures` returns
ROUTING_KEYS = (
    "hit_ratio",
    "overhead",
    "overhead_copies",
    "overhead_node_mean",
    "delay_hops",
    "delay_hops_max",
    "events",
)


@numba.njit(cache=True)
def _tally(
    hops, publisher, topic, masks, weight, receivers, node_recv, node_relay
):  # pragma: no cover
    """Weighted sums over the (event, node) pairs of one chunk.

    Returns ``(wanted, hit, recv, relay, hop_sum, hop_max_sum, weight_sum)``;
    adds each node's weighted receptions / uninteresting receptions to
    ``node_recv`` / ``node_relay``.
    """
    m, n = hops.shape
    wanted = 0.0
    hit = 0.0
    recv = 0.0
    relay = 0.0
    hop_sum = 0.0
    hop_max_sum = 0.0
    weight_sum = 0.0
    for i in range(m):
        t = topic[i]
        word = t >> 6
        bit = np.uint64(1) << np.uint64(t & 63)
        p = publisher[i]
        w = weight[i]
        hmax = -1
        n_want = 0
        for v in range(n):
            if v == p:
                continue
            sub = (masks[v, word] & bit) != 0
            h = hops[i, v]
            if sub and receivers[v]:
                n_want += 1
                wanted += w
                if h >= 0:
                    hit += w
                    hop_sum += w * h
                    if h > hmax:
                        hmax = h
            if h >= 0:
                recv += w
                node_recv[v] += w
                if not sub:
                    relay += w
                    node_relay[v] += w
        if n_want > 0:
            weight_sum += w
            if hmax >= 0:
                hop_max_sum += w * hmax
    return wanted, hit, recv, relay, hop_sum, hop_max_sum, weight_sum


@dataclass
class RoutingTally:
    """Running weighted sums of the routing measures over chunks of events.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0], [0], [1]], n_topics=2)
    >>> t = RoutingTally(3)
    >>> t.add(np.array([[0, 1, -1]], dtype=np.int32), [0], [0], inst.masks, weights=[1.0])
    >>> t.add(np.array([[1, 1, 0]], dtype=np.int32), [2], [1], inst.masks, weights=[3.0])
    >>> m = t.measures()
    >>> m["hit_ratio"], m["overhead"], m["delay_hops"]
    (1.0, 0.8571428571428571, 1.0)
    """

    n_nodes: int
    wanted: float = 0.0
    hit: float = 0.0
    recv: float = 0.0
    relay: float = 0.0
    copies: float = 0.0
    relay_copies: float = 0.0
    hop_sum: float = 0.0
    hop_max_sum: float = 0.0
    weight_sum: float = 0.0
    events: int = 0
    has_copies: bool = True
    node_recv: np.ndarray = field(default=None)  # type: ignore[arg-type]  # set in __post_init__
    node_relay: np.ndarray = field(default=None)  # type: ignore[arg-type]  # set in __post_init__

    def __post_init__(self) -> None:
        if self.node_recv is None:
            self.node_recv = np.zeros(self.n_nodes)
        if self.node_relay is None:
            self.node_relay = np.zeros(self.n_nodes)

    def add(
        self,
        hops: ArrayLike,
        publisher: ArrayLike,
        topic: ArrayLike,
        masks: np.ndarray,
        *,
        weights: ArrayLike | None = None,
        copies: ArrayLike | None = None,
        relay_copies: ArrayLike | None = None,
        receivers: ArrayLike | None = None,
    ) -> None:
        """Add one chunk: ``hops`` ``(m, n)`` (``-1`` = never), per-event publisher and topic.

        ``copies`` / ``relay_copies`` (``(m,)``, the kernels' counters against the
        true subscriptions) feed ``overhead_copies``; without them it is ``nan``.
        ``receivers`` (``(n,)`` bool) restricts the subscribers the hit ratio and
        the delay count (e.g. nodes online for at least 10 cycles, Vitis IV-E/F);
        the overhead counts every reception.
        """
        h = np.ascontiguousarray(hops, dtype=np.int32)
        m = h.shape[0]
        pub = np.ascontiguousarray(publisher, dtype=np.int64).reshape(m)
        top = np.ascontiguousarray(topic, dtype=np.int64).reshape(m)
        w = (np.ones(m) if weights is None
             else np.ascontiguousarray(weights, dtype=np.float64).reshape(m))
        rec = (np.ones(h.shape[1], dtype=np.bool_) if receivers is None
               else np.ascontiguousarray(receivers, dtype=np.bool_))
        sums = _tally(h, pub, top, np.ascontiguousarray(masks, dtype=np.uint64), w, rec,
                      self.node_recv, self.node_relay)
        wanted, hit, recv, relay, hop_sum, hop_max_sum, weight_sum = sums
        self.wanted += wanted
        self.hit += hit
        self.recv += recv
        self.relay += relay
        self.hop_sum += hop_sum
        self.hop_max_sum += hop_max_sum
        self.weight_sum += weight_sum
        self.events += m
        if copies is None or relay_copies is None:
            self.has_copies = False
        else:
            self.copies += float(np.dot(w, np.asarray(copies, dtype=np.float64).reshape(m)))
            self.relay_copies += float(
                np.dot(w, np.asarray(relay_copies, dtype=np.float64).reshape(m))
            )

    def node_overhead(self) -> np.ndarray:
        """Per node: weighted uninteresting receptions / receptions (``nan`` if none)."""
        out = np.full(self.n_nodes, np.nan)
        got = self.node_recv > 0
        out[got] = self.node_relay[got] / self.node_recv[got]
        return out

    def measures(self) -> dict[str, Any]:
        """The keys of :data:`ROUTING_KEYS` (``nan`` where undefined)."""
        nan = float("nan")
        per_node = self.node_overhead()
        return {
            "hit_ratio": self.hit / self.wanted if self.wanted else nan,
            "overhead": self.relay / self.recv if self.recv else nan,
            "overhead_copies": (self.relay_copies / self.copies
                                if self.has_copies and self.copies else nan),
            "overhead_node_mean": (float(np.nanmean(per_node))
                                   if np.isfinite(per_node).any() else nan),
            "delay_hops": self.hop_sum / self.hit if self.hit else nan,
            "delay_hops_max": self.hop_max_sum / self.weight_sum if self.weight_sum else nan,
            "events": self.events,
        }


def routing_measures(
    hops: ArrayLike,
    publisher: ArrayLike,
    topic: ArrayLike,
    masks: np.ndarray,
    *,
    weights: ArrayLike | None = None,
    copies: ArrayLike | None = None,
    relay_copies: ArrayLike | None = None,
    receivers: ArrayLike | None = None,
) -> dict[str, Any]:
    """The routing measures of one batch of events (keys :data:`ROUTING_KEYS`).

    Examples
    --------
    An event nobody else subscribes to counts for nothing:

    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0], [1], [1]], n_topics=2)
    >>> m = routing_measures(np.array([[0, -1, -1], [-1, 0, 3]], dtype=np.int32),
    ...                      [0, 1], [0, 1], inst.masks)
    >>> m["hit_ratio"], m["overhead"], m["delay_hops"], m["delay_hops_max"]
    (1.0, 0.0, 3.0, 3.0)
    """
    h = np.asarray(hops)
    tally = RoutingTally(h.shape[1])
    tally.add(h, publisher, topic, masks, weights=weights, copies=copies,
              relay_copies=relay_copies, receivers=receivers)
    return tally.measures()


def node_overhead(
    hops: ArrayLike,
    publisher: ArrayLike,
    topic: ArrayLike,
    masks: np.ndarray,
    *,
    weights: ArrayLike | None = None,
) -> np.ndarray:
    """Each node's share of uninteresting receptions (Fig. 5's distribution; ``nan`` = none).

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0], [0], [1]], n_topics=2)
    >>> node_overhead(np.array([[0, 1, 1], [-1, -1, 0]], dtype=np.int32), [0, 2], [0, 1],
    ...               inst.masks).tolist()
    [nan, 0.0, 1.0]
    """
    h = np.asarray(hops)
    tally = RoutingTally(h.shape[1])
    tally.add(h, publisher, topic, masks, weights=weights)
    return tally.node_overhead()
