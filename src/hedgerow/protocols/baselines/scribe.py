"""Scribe-style group trees, the two Scribe baselines of Topiary (section V-A, V-B3).

Papers: Castro, Druschel, Kermarrec, Rowstron, "Scribe: a large-scale and
decentralized application-level multicast infrastructure", IEEE JSAC 20(8),
2002; used as a baseline by Mao & Bojja Venkatakrishnan, "Topiary",
arXiv:2312.06800 (2023): "Nodes construct groups and build tree structures
inside each group. Here we consider grouping with topic or without topic
information" (V-A); "Scribe groups nodes, and builds tree structure based on
the nodes' id ... Randomly groups has 40 groups ... Topic based grouping has
100 groups" (V-B3).

Construction chosen (the paper gives no more detail):

* every node draws a random Scribe identifier (a random permutation, as
  Pastry node ids are random);
* inside a group the members, sorted by identifier, form a heap-shaped
  ``fanout``-ary tree: the member at sorted position ``i > 0`` links to the
  one at position ``(i - 1) // fanout`` (its parent, an outgoing link); the
  first member is the root (Scribe's rendezvous point).  ``fanout`` defaults
  to ``d - 1`` so a node holding one position has at most ``d`` links;
* ``groups="random"`` (scribe-random): nodes are split uniformly at random
  into ``n_groups`` (default 40) disjoint groups, one tree each, so a node has
  at most one outgoing link.  Trees are short (low delay) but a topic's
  subscribers are spread over 40 disconnected trees (poor coverage), which is
  the behaviour the paper reports;
* ``groups="topic"`` (scribe-topic): one group per topic; each node joins the
  trees of at most ``d`` of its topics (a uniformly random choice), one parent
  link per tree, so its out-degree stays ``<= d``.  Topics a node did not
  join reach it only through TTL relays (lower coverage, as reported).

Forwarding: in Scribe a multicast message of a group travels down (and here,
from any member, along) that group's tree only.  scribe-topic therefore
forwards by ``"mesh"``: its ``link_topics_`` lists ``(child, parent, topic)``
for every tree link, so a message of topic ``t`` travels only along ``t``'s
tree, in both directions; a link two trees share serves both topics.  Every
tree member subscribes to its topic, so ``relay_share`` is 0 and a node
reaches only the members of its topic's tree (topics it did not join never
reach it).  scribe-random keeps Topiary's ``"ttl"`` rule: its groups carry no
topic, so there is no topic tree to restrict a message to.  The Topiary
paper's section V-A evaluation runs every topology with the TTL rule; its
figure specs ask for ``forwarding: ttl``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Int
from hedgerow.protocols.base import StaticProtocol


def tree_edges(members: np.ndarray, ident: np.ndarray, fanout: int) -> np.ndarray:
    """``(len(members) - 1, 2)`` child -> parent links of the id-ordered ``fanout``-ary tree.

    Examples
    --------
    >>> import numpy as np
    >>> tree_edges(np.array([5, 6, 7, 8]), np.array([0, 0, 0, 0, 0, 3, 0, 1, 2]), 2).tolist()
    [[7, 6], [8, 6], [5, 7]]
    """
    order = np.asarray(members)[np.argsort(ident[members], kind="stable")]
    pos = np.arange(1, len(order))
    return np.column_stack([order[pos], order[(pos - 1) // fanout]]).astype(np.int64)


class ScribeTrees(StaticProtocol):
    """Scribe-style trees inside groups; :class:`ScribeRandom` and :class:`ScribeTopic` pick
    the grouping.

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1]] * 5, n_topics=2)
    >>> ov = ScribeTopic(d=3).build(inst, seed=0)
    >>> bool((ov.degree() <= 3).all())
    True
    >>> ScribeRandom(n_groups=4).build(inst, seed=0).n_edges
    16
    """

    paper = "Castro et al., Scribe, IEEE JSAC 2002; as a Topiary baseline, arXiv:2312.06800 V-A"
    directed = True
    forwarding = "ttl"
    #: both groupings draw from the same streams (one protocol in the Topiary paper)
    stream_key = "scribe"
    #: "random" or "topic"
    groups: ClassVar[str] = "random"
    params = {
        "d": Int(6, "degree budget (out-degree bound; default fanout d - 1)", low=1, unit="links"),
        "fanout": Int(None, "children per tree node (default max(1, d - 1))", low=1,
                      optional=True),
    }
    quick_params = {"d": 3}

    def degree_bound(self, instance: Instance) -> int | None:
        """Out-degree bound (``d`` for topic groups, 1 for random groups)."""
        return self.checked()["d"] if self.groups == "topic" else 1


    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = {"n_groups": 0, **self.checked()}
        n, d = instance.n_nodes, v["d"]
        fanout = max(1, d - 1) if v["fanout"] is None else v["fanout"]
        ident = streams.stream("scribe:ids").permutation(n)
        rng = streams.stream("scribe:groups")
        parts: list[np.ndarray] = []
        labels: list[np.ndarray] = []
        if self.groups == "random":
            g = rng.integers(0, v["n_groups"], size=n)
            for grp in range(v["n_groups"]):
                members = np.flatnonzero(g == grp)
                if len(members) > 1:
                    parts.append(tree_edges(members, ident, fanout))
            n_groups = v["n_groups"]
        else:
            # each node joins at most d of its topics: random keys, keep the d smallest per node
            keys = rng.random(len(instance.sub_topics))
            node = np.repeat(np.arange(n), instance.n_subs)
            order = np.lexsort((keys, node))
            rank = np.arange(len(order)) - np.repeat(instance.sub_indptr[:-1], instance.n_subs)
            joined = np.zeros(len(order), dtype=bool)
            joined[order] = rank < d
            j_node, j_topic = node[joined], instance.sub_topics[joined]
            by_topic = np.argsort(j_topic, kind="stable")
            bounds = np.searchsorted(j_topic[by_topic], np.arange(instance.n_topics + 1))
            for t in range(instance.n_topics):
                members = j_node[by_topic[bounds[t] : bounds[t + 1]]]
                if len(members) > 1:
                    tree = tree_edges(members, ident, fanout)
                    parts.append(tree)
                    labels.append(np.column_stack([tree, np.full(len(tree), t)]))
            n_groups = instance.n_topics
            self.link_topics_ = (
                np.concatenate(labels) if labels else np.zeros((0, 3))
            ).astype(np.int64)
        edges = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
        overlay = Overlay.from_edges(n, edges, directed=True)
        return overlay, {"groups": self.groups, "n_groups": n_groups, "fanout": fanout}


class ScribeRandom(ScribeTrees):
    """scribe-random: nodes split uniformly at random into ``n_groups`` groups, one tree each.

    Forwards by Topiary's TTL rule (``forwarding = "ttl"``): its groups carry
    no topic, so its links have no topic labels and ``"mesh"`` does not apply.
    """

    name = "scribe-random"
    groups = "random"
    params = {
        **ScribeTrees.params,
        "n_groups": Int(40, "number of random groups (V-B3: 40)", low=1),
    }


class ScribeTopic(ScribeTrees):
    """scribe-topic: one group per topic; a node joins the trees of at most ``d`` of its topics.

    A message of topic ``t`` travels only along ``t``'s tree (``forwarding =
    "mesh"``); after :meth:`build`, ``link_topics_`` holds ``(child, parent,
    topic)`` for every tree link.
    """

    name = "scribe-topic"
    groups = "topic"
    forwarding = "mesh"
    labels_links = True
