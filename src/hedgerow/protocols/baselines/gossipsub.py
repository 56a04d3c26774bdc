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

Forwarding (``forwarding = "mesh"``): as in GossipSub, where "each topic has
its own mesh" and a message travels only over its topic's mesh links, a link
serves the topic of the slot that made it, in both directions.  The built
protocol's ``link_topics_`` lists ``(u, v, topic)`` for every out-link
``u -> v`` made for ``topic``; two slots that make the same link for two
topics (``u -> v`` for ``a``, ``v -> u`` for ``b``) give two rows, and the link
serves both.  Readings:

* **A fallback link serves no mesh.**  A slot whose topic has no free
  subscriber links to a random node that does not subscribe to that topic
  (every subscriber is ``v`` itself or already chosen).  In GossipSub a peer
  joins a topic's mesh only if it subscribes to the topic (a GRAFT for a
  topic the peer does not subscribe to is answered with a PRUNE), and a node
  with no subscribed peer for a topic has no mesh link for it; so the link is
  not labelled with the slot's topic, nor with ``-1`` (GossipSub has no
  relay-everything link).  It stays in the overlay (it counts for the degree
  and the structure metrics) and carries nothing under ``"mesh"``; under
  ``--forwarding ttl`` it relays as any link does.
* **A link serves every topic its two ends subscribe to** (``mesh="shared"``,
  the default).  The split decides which connections a node *makes*, one topic
  per slot; once two peers are connected, GossipSub grafts the peer into the
  mesh of every topic both subscribe to (a node keeps up to D mesh peers per
  topic among its connected subscribed peers; with ``d = 6`` out-links that
  bound is never reached).  ``mesh="slot"`` keeps the literal split, a link
  serving only the topic of the slot that made it: with 20 topics per node
  and ``d = 5`` a topic's mesh then has about 12 links among its 49
  subscribers on the cities scenario, and the receive rate falls to 0.015
  (0.785 with ``"shared"``; docs/topiary.md).

With these labels every node on a topic's mesh subscribes to the topic, so no
copy reaches an uninterested node: ``relay_share`` is 0 under ``"mesh"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice
from hedgerow.protocols.baselines._out_degree import FixedOutDegree


def gossipsub_slots(
    instance: Instance, d: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, slot_topic)``: each node's ``d`` out-neighbours and the topic each slot serves.

    Both are ``(n, d)`` int64; ``out`` is ``-1`` padded, ``slot_topic`` is
    ``-1`` for an empty slot and for a fallback link (its topic had no free
    subscriber; see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> inst = Instance.from_lists([[0], [0], [0], [1], [1, 2]], n_topics=3)
    >>> out, topic = gossipsub_slots(inst, 2, np.random.default_rng(0))
    >>> sorted(zip(out[0].tolist(), topic[0].tolist()))
    [(1, 0), (2, 0)]
    >>> sorted(topic[4].tolist())  # topic 2 has no other subscriber: a fallback slot
    [-1, 1]
    """
    n = instance.n_nodes
    out = np.full((n, d), -1, dtype=np.int64)
    slot_topic = np.full((n, d), -1, dtype=np.int64)
    everyone = np.arange(n)
    for v in range(n):
        topics = rng.permutation(instance.topics_of(v))
        taken = [v]
        for slot in range(d):
            u = -1
            if len(topics):
                t = int(topics[slot % len(topics)])
                u = draw_outside(instance.subscribers(t), taken, rng)
                if u >= 0:
                    slot_topic[v, slot] = t
            if u < 0:
                u = draw_outside(everyone, taken, rng)
                if u < 0:
                    break
            taken.append(u)
            out[v, slot] = u
    return out, slot_topic


def draw_outside(pool: np.ndarray, taken: list[int], rng: np.random.Generator) -> int:
    """A uniform draw from the sorted, distinct ``pool`` without ``taken`` (``-1`` if none is left).

    The same draw, from the same stream, as ``free[rng.integers(len(free))]``
    with ``free = np.setdiff1d(pool, taken)``, without building ``free``: the
    ``k``-th free entry is found by stepping over the positions of the few
    taken ids, so a pick costs ``O(len(taken) log len(pool))`` instead of a
    sort of the pool (100,000 nodes with 20,000 subscribers a topic: seconds
    instead of tens of minutes). No draw is made when nothing is free.

    Examples
    --------
    >>> import numpy as np
    >>> pool = np.array([2, 3, 5, 7, 11])
    >>> a = draw_outside(pool, [3, 11, 4], np.random.default_rng(1))
    >>> free = np.setdiff1d(pool, [3, 11, 4])
    >>> a == int(free[np.random.default_rng(1).integers(len(free))])
    True
    >>> draw_outside(np.array([4]), [4], np.random.default_rng(1))
    -1
    """
    ids = np.unique(np.asarray(taken, dtype=np.int64))
    pos = np.searchsorted(pool, ids)
    inside = pos < len(pool)
    pos = pos[inside][pool[pos[inside]] == ids[inside]]
    left = len(pool) - len(pos)
    if left <= 0:
        return -1
    k = int(rng.integers(left))
    for p in pos.tolist():  # ascending: step over each taken entry at or before the k-th free one
        if p <= k:
            k += 1
        else:
            break
    return int(pool[k])


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
    return gossipsub_slots(instance, d, rng)[0]


def shared_topics(instance: Instance, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """``(k, 3)`` rows ``(u, v, topic)`` for every link ``u -> v`` and topic both subscribe to.

    Examples
    --------
    >>> inst = Instance.from_lists([[0, 1], [1, 2], [0, 1, 2]], n_topics=3)
    >>> shared_topics(inst, np.array([0, 1, -1]), np.array([2, 2, 0])).tolist()
    [[0, 2, 0], [0, 2, 1], [1, 2, 1], [1, 2, 2]]
    """
    ok = (np.asarray(src) >= 0) & (np.asarray(dst) >= 0)
    u, v = np.asarray(src)[ok], np.asarray(dst)[ok]
    both = interest_matrix(instance.masks[u] & instance.masks[v], instance.n_topics)
    link, topic = np.nonzero(both)
    return np.column_stack([u[link], v[link], topic]).astype(np.int64)


class GossipSubSplit(FixedOutDegree):
    """Per-topic mesh links within an out-degree budget ``d``; messages stay on their topic's mesh.

    Parameters
    ----------
    d : int, default 6
        Outgoing degree of every node.
    mesh : {"shared", "slot"}, default "shared"
        Which topics a link serves under ``"mesh"`` forwarding (module docstring).

    Attributes
    ----------
    link_topics_ : numpy.ndarray
        After :meth:`build`: ``(k, 3)`` int64 rows ``(u, v, topic)``, the
        out-link ``u -> v`` serves ``topic``'s mesh (``mesh`` says which
        topics); what the ``"mesh"`` forwarding policy reads.

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1]] * 3, n_topics=2)
    >>> ov = GossipSubSplit(d=2).build(inst, seed=0)
    >>> bool((ov.degree() <= 2).all())
    True
    """

    name = "gossipsub-split"
    #: the streams of the name it had before ``gossipsub`` became the deployed protocol, so
    #: every reproduction draws the same overlays
    stream_key = "gossipsub"
    paper = "Vyzovitis et al., GossipSub, arXiv:2007.02754 (2020); Topiary baseline (V-A)"
    forwarding = "mesh"
    labels_links = True
    params = {
        **FixedOutDegree.params,
        "mesh": Choice(
            "shared", ("shared", "slot"),
            "topics a link serves: all its ends share (GRAFT), or its slot's only",
        ),
    }

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        out, slot_topic = gossipsub_slots(instance, v["d"], streams.stream("gossipsub"))
        src = np.repeat(np.arange(instance.n_nodes, dtype=np.int64), out.shape[1])
        mesh = slot_topic.reshape(-1) >= 0
        if v["mesh"] == "slot":
            self.link_topics_ = np.column_stack(
                [src[mesh], out.reshape(-1)[mesh], slot_topic.reshape(-1)[mesh]]
            ).astype(np.int64)
        else:
            self.link_topics_ = shared_topics(instance, src, out.reshape(-1))
        fallback = int(((out.reshape(-1) >= 0) & ~mesh).sum())
        return out_overlay(out), {"out_degree": int(self.d), "fallback_links": fallback}
