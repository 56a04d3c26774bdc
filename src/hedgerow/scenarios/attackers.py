"""Attackers of Topiary section V-D: topic-based attackers and eclipse attackers.

Topic-based attack (V-D1): attackers "participate in the pub/sub network by
professing interest in the victim topic but abstain from engaging in message
forwarding under that specific topic".  Readings: the attackers are drawn
uniformly among the network's nodes (300 or 500 *of* the 1000 nodes); they
subscribe to the victim topic on top of their own interests; they receive its
messages but forward none of them (their outgoing links are removed for that
topic's messages); they behave honestly on every other topic and run the
protocol like everyone else; they never publish on the victim topic (a
publisher that withholds its own message publishes nothing).

Eclipse attack (V-D2): 300 attackers among the 1000 nodes with the same
random topic interest, "complete connections among attacker[s]".  Readings:
attackers forward every message honestly and fast through their clique (this
is what makes them attractive, Fig. 10: "the network can get advantage from
the complete 300-attacker connections"); they keep the clique as their only
outgoing links and accept every incoming connection, hoping to fill the honest
nodes' outgoing slots; they do not run the honest neighbour selection.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.workloads.interest import with_topic, without_topic

ATTACKS = ("topic", "eclipse")


@dataclass(frozen=True)
class AttackSetup:
    """Everything a run needs to know about its attackers.

    Attributes
    ----------
    kind : str
        ``"topic"`` or ``"eclipse"``.
    attackers : numpy.ndarray
        Sorted attacker ids.
    honest : numpy.ndarray
        Bool mask of honest nodes.
    instance : Instance
        Subscriptions including the attackers' (fake) interest.
    publishers : Instance
        Who may publish on each topic.
    victim_topic : int or None
        The attacked topic (topic attack).
    silent : numpy.ndarray or None
        Nodes that never forward ``victim_topic``.
    fixed_edges : numpy.ndarray or None
        The attackers' clique (eclipse), every ordered pair (each attacker's out-links).
    update : numpy.ndarray
        Nodes that run the honest neighbour selection.
    """

    kind: str
    attackers: np.ndarray
    honest: np.ndarray
    instance: Instance
    publishers: Instance
    victim_topic: int | None
    silent: np.ndarray | None
    fixed_edges: np.ndarray | None
    update: np.ndarray


def choose_attackers(n_nodes: int, n_attackers: int, rng: np.random.Generator) -> np.ndarray:
    """``n_attackers`` distinct uniformly random node ids, sorted.

    Examples
    --------
    >>> import numpy as np
    >>> a = choose_attackers(10, 3, np.random.default_rng(0))
    >>> len(set(a.tolist())), bool((np.diff(a) > 0).all())
    (3, True)
    """
    if not (0 < n_attackers < n_nodes):
        raise ParameterError(f"attackers must be between 1 and {n_nodes - 1}, got {n_attackers}")
    return np.sort(rng.choice(n_nodes, size=n_attackers, replace=False)).astype(np.int64)


def topic_attack(
    instance: Instance, n_attackers: int, rng: np.random.Generator, *, victim_topic: int = 0
) -> AttackSetup:
    """Topic-based attackers on ``victim_topic`` (V-D1).

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.workloads.interest import interest_instance
    >>> inst = interest_instance(50, 5, 0.3, np.random.default_rng(0))
    >>> s = topic_attack(inst, 10, np.random.default_rng(1))
    >>> bool(np.isin(s.attackers, s.instance.subscribers(0)).all())
    True
    >>> bool(np.isin(s.attackers, s.publishers.subscribers(0)).any())
    False
    """
    n = instance.n_nodes
    attackers = choose_attackers(n, n_attackers, rng)
    inst = with_topic(instance, attackers, victim_topic)
    pubs = without_topic(inst, attackers, victim_topic)
    if pubs.topic_sizes[victim_topic] == 0:
        raise ParameterError("the victim topic has no honest subscriber; use fewer attackers")
    honest = np.ones(n, dtype=bool)
    honest[attackers] = False
    return AttackSetup(
        kind="topic",
        attackers=attackers,
        honest=honest,
        instance=inst,
        publishers=pubs,
        victim_topic=int(victim_topic),
        silent=~honest,
        fixed_edges=None,
        update=np.ones(n, dtype=bool),
    )


def eclipse_attack(instance: Instance, n_attackers: int, rng: np.random.Generator) -> AttackSetup:
    """Eclipse attackers fully connected among themselves (V-D2).

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.workloads.interest import interest_instance
    >>> inst = interest_instance(20, 5, 0.3, np.random.default_rng(0))
    >>> s = eclipse_attack(inst, 4, np.random.default_rng(1))
    >>> len(s.fixed_edges), int(s.update.sum())
    (12, 16)
    """
    n = instance.n_nodes
    attackers = choose_attackers(n, n_attackers, rng)
    i, j = np.nonzero(~np.eye(len(attackers), dtype=bool))
    clique = np.column_stack([attackers[i], attackers[j]]).astype(np.int64)  # both directions
    honest = np.ones(n, dtype=bool)
    honest[attackers] = False
    return AttackSetup(
        kind="eclipse",
        attackers=attackers,
        honest=honest,
        instance=instance,
        publishers=instance,
        victim_topic=None,
        silent=None,
        fixed_edges=clique,
        update=honest.copy(),
    )
