"""Hop counts of per-topic link sets, one breadth-first pass per event (the ``"mesh"`` rule, fast).

The ``"mesh"`` policy (:mod:`hedgerow.dissemination.mesh`) floods a message of
topic ``t`` over the links labelled ``t``, first copy only, never back to the
sender.  When only hop counts matter (constant link delays and processing
times, as in Vitis's measurements, section IV), the first copy a node gets is
the one over the fewest hops, so a breadth-first pass over the topic's links
gives the same ``hops``; every reached node forwards to all its labelled
neighbours but the sender of its first copy, so ``copies`` is also the
kernel's.  This module does that pass for many topics at once from the
``(u, v, topic)`` rows protocols give (``link_topics_``), without building a
sub-graph per topic: the generic path restricts the whole CSR once per topic,
which costs ``topics x links`` (about 40 s for RVR's 5,000 trees at 10,000
nodes against well under a second here).

Ties: when two first copies arrive over the same number of hops, the sender
is the neighbour reached first in breadth-first order (lower node id among
equals of the same parent); only ``relay_copies`` can depend on it (whether
the copy *not* sent back goes to a subscriber), never ``hops`` or ``copies``.
Rows with topic ``-1`` (every topic) are not supported here.

Examples
--------
A path 0 - 1 - 2 labelled topic 0, and 2 - 3 labelled topic 1; node 1 does
not subscribe to topic 0:

>>> import numpy as np
>>> from hedgerow.model import Instance
>>> masks = Instance.from_lists([[0], [], [0, 1], [1]], n_topics=2).masks
>>> rows = np.array([[0, 1, 0], [1, 2, 0], [2, 3, 1]])
>>> net = TopicLinks.from_rows(4, 2, rows)
>>> hops, copies, relay = net.flood(np.array([0, 3]), np.array([0, 1]), masks)
>>> hops.tolist(), copies.tolist(), relay.tolist()
([[0, 1, 2, -1], [-1, -1, 1, 0]], [2, 1], [1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.sorted_search import lower_bound

__all__ = ["TopicLinks"]


@numba.njit(cache=True)
def _flood(n, tptr, src, dst, publisher, topic, masks):  # pragma: no cover
    m = publisher.shape[0]
    hops = np.full((m, n), -1, np.int32)
    copies = np.zeros(m, np.int64)
    relay = np.zeros(m, np.int64)
    parent = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for i in range(m):
        t = topic[i]
        a = tptr[t]
        b = tptr[t + 1]
        word = t >> 6
        bit = np.uint64(1) << np.uint64(t & 63)
        p = publisher[i]
        hops[i, p] = 0
        parent[p] = -1
        head = 0
        tail = 1
        queue[0] = p
        while head < tail:
            x = queue[head]
            head += 1
            # x's neighbours on topic t: src sorted within the topic slice
            e = lower_bound(src, a, b, x)
            while e < b and src[e] == x:
                y = dst[e]
                e += 1
                if y == parent[x]:
                    continue
                copies[i] += 1
                if (masks[y, word] & bit) == 0:
                    relay[i] += 1
                if hops[i, y] < 0:
                    hops[i, y] = hops[i, x] + 1
                    parent[y] = x
                    queue[tail] = y
                    tail += 1
        for j in range(tail):
            parent[queue[j]] = -1
    return hops, copies, relay


@dataclass(frozen=True)
class TopicLinks:
    """Per-topic undirected links: entries ``(src, dst)`` sorted by ``(topic, src, dst)``.

    Attributes
    ----------
    n_nodes, n_topics : int
    tptr : numpy.ndarray
        ``(n_topics + 1,)``: topic ``t``'s entries are ``tptr[t]:tptr[t+1]``.
    src, dst : numpy.ndarray
        Both directions of every labelled link, no duplicates.
    """

    n_nodes: int
    n_topics: int
    tptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    @classmethod
    def from_rows(cls, n_nodes: int, n_topics: int, rows: np.ndarray) -> TopicLinks:
        """From ``(u, v, topic)`` rows (either direction; duplicates merge)."""
        r = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
        if len(r) and (r[:, 2].min() < 0 or r[:, 2].max() >= n_topics):
            raise ParameterError(
                f"topic links: a topic outside 0..{n_topics - 1} (-1 = every topic is not "
                "supported by the breadth-first pass)"
            )
        if len(r) and (r[:, :2].min() < 0 or r[:, :2].max() >= n_nodes):
            raise ParameterError(f"topic links: a node outside 0..{n_nodes - 1}")
        u, v, top = r[:, 0], r[:, 1], r[:, 2]
        keep = u != v
        u, v, top = u[keep], v[keep], top[keep]
        base = top * n_nodes
        key = np.concatenate([(base + u) * n_nodes + v, (base + v) * n_nodes + u])
        key.sort()
        key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
        t = key // (n_nodes * n_nodes)
        rest = key % (n_nodes * n_nodes)
        src, dst = rest // n_nodes, rest % n_nodes
        tptr = np.zeros(n_topics + 1, dtype=np.int64)
        np.cumsum(np.bincount(t, minlength=n_topics), out=tptr[1:])
        return cls(int(n_nodes), int(n_topics), tptr, src.astype(np.int64), dst.astype(np.int64))

    def flood(
        self, publisher: np.ndarray, topic: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(hops (m, n) int32, copies (m,), relay_copies (m,))`` of flooding each event's topic.

        ``relay_copies`` counts copies received by nodes not subscribed to the
        topic (``masks``: the true subscriptions, ``Instance.masks``).
        """
        return _flood(
            self.n_nodes, self.tptr, self.src, self.dst,
            np.asarray(publisher, dtype=np.int64), np.asarray(topic, dtype=np.int64),
            np.ascontiguousarray(masks, dtype=np.uint64),
        )
