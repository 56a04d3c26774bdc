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

Withholding fast relays (beyond the papers; broadcast worlds, ``attack="withhold"``):
``attackers`` nodes placed where relaying is fastest (the lowest mean latency
to every other node: the well-connected relays an adaptive node's scoring
favours).  They run like static nodes and relay every block honestly *until*
they hold an exploitation slot of an honest adaptive node; in every epoch in
which they hold one, they receive blocks and forward none (to anyone).  They
never publish.  ``attack="relay"`` is the control: the same nodes, the same
world, relaying honestly in every epoch, so the two runs differ only by the
withholding.  The epoch loop decides who withholds each epoch
(:func:`withholders`); the protocols see a withholder as a peer that sent no
copy (Goldfish's †, Perigee's ``+inf``).

Sybils of the GossipSub v1.1 evaluation (``attack="sybil"``,
``"sybil-eclipse"``, ``"sybil-censor"``; Vyzovitis et al., "Gossipsub-v1.1
Evaluation Report", Protocol Labs PL-TechRep-2020-001, and its test plans
``libp2p/gossipsub-hardening``, whose attacker is ``test/badboy.go``):
``attackers`` nodes drawn uniformly, subscribed to every topic (the attacker
answers every peer's subscriptions with its own and a GRAFT), that never
publish.  Each opens ``attack_degree`` connections to uniform honest nodes
(``sybil-eclipse``: to one target, an honest publisher, only), never to each
other, at ``attack_join_s``; the honest nodes' connections among themselves
open at ``honest_join_s``.  From ``attack_after_s`` on they forward nothing
(``sybil-censor``: nothing the target published; everything else honestly).
A tenth of the honest nodes (at least one) publish: the report's 100
publishers among 1,000 honest nodes.  ``attacker_ips`` > 0
puts the sybils on that many IP addresses (GossipSub's P6 colocation reads
it).  The five scenarios of the report are these settings
(:mod:`hedgerow.scenarios.world.catalogue`): eclipse of a target and censor
of a target (sybils join a warm network at 60 s), cold boot (everyone at
0), covert flash (the sybils relay honestly until 120 s), attack at dawn
(the sybils are connected 10 s before the honest nodes connect among
themselves).  Beyond the report, ``sybil-liar`` sybils graft nobody, announce
what they received in IHAVEs as an honest node gossips, and serve no IWANT
(broken promises, GossipSub's P7).  A protocol that does not act on the clock sees the sybils as
subscribers of every topic that forward nothing (``silent`` on every topic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.workloads.interest import with_topic, without_topic
from hedgerow.world_settings import SYBIL_ATTACKS

ATTACKS = ("topic", "eclipse", "withhold", "relay", *SYBIL_ATTACKS)
#: broadcast attacks whose attackers are fast relays (withholding or the honest control)
RELAY_ATTACKS = ("withhold", "relay")


@dataclass(frozen=True)
class SybilPlan:
    """How the sybils of a ``sybil*`` attack connect and when they act (times from the start
    of the run, in ms).

    Attributes
    ----------
    degree : int
        Connections each sybil opens to honest nodes (to the target only in an eclipse).
    join_ms : float
        When the sybils' connections open.
    after_ms : float
        When they start dropping (before it they relay what they receive).
    honest_join_ms : float
        When the honest nodes' connections among themselves open.
    ips : int
        IP addresses the sybils share (0: one each, none shared).
    target : int
        The eclipsed or censored honest node (``-1``: none).
    """

    degree: int
    join_ms: float = 0.0
    after_ms: float = 0.0
    honest_join_ms: float = 0.0
    ips: int = 0
    target: int = -1


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
        The attacked topic (topic attack; ``-1``: every topic, the sybils').
    silent : numpy.ndarray or None
        Nodes that never forward ``victim_topic`` (every topic when it is ``-1``).
    fixed_edges : numpy.ndarray or None
        The attackers' clique (eclipse), every ordered pair (each attacker's out-links).
    update : numpy.ndarray
        Nodes that run the honest neighbour selection.
    sybil : SybilPlan or None
        The sybils' connections and timing (``sybil*`` attacks).
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
    sybil: SybilPlan | None = None


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


def sybil_attack(
    instance: Instance,
    n_attackers: int,
    rng: np.random.Generator,
    *,
    kind: str = "sybil",
    degree: int = 20,
    join_s: float = 0.0,
    after_s: float = 0.0,
    honest_join_s: float = 0.0,
    ips: int = 0,
) -> AttackSetup:
    """Sybils of the GossipSub v1.1 evaluation (module docstring); ``kind`` one of
    :data:`SYBIL_ATTACKS`.

    The attackers (uniform), then the publishers (a tenth of the honest nodes,
    uniform), then the target (a uniform publisher; eclipse and censor) are
    drawn from ``rng`` in that order.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.workloads.interest import interest_instance
    >>> inst = interest_instance(40, 3, 0.5, np.random.default_rng(0))
    >>> s = sybil_attack(inst, 8, np.random.default_rng(1), kind="sybil-censor", join_s=60)
    >>> bool((s.instance.n_subs[s.attackers] == 3).all())
    True
    >>> int(s.publishers.n_subs[s.attackers].sum()), s.sybil.join_ms, bool(s.honest[s.sybil.target])
    (0, 60000.0, True)
    >>> bool(s.silent[s.attackers].all()), s.victim_topic
    (True, -1)
    """
    if kind not in SYBIL_ATTACKS:
        raise ParameterError(f"attack must be one of {', '.join(SYBIL_ATTACKS)}, got {kind!r}",
                             key="attack")
    n = instance.n_nodes
    attackers = choose_attackers(n, n_attackers, rng)
    honest = np.ones(n, dtype=bool)
    honest[attackers] = False
    sub = instance.matrix.toarray().astype(bool)
    sub[attackers] = True  # a sybil subscribes to whatever its peers announce
    inst = Instance.from_matrix(sub)
    good = np.flatnonzero(honest)
    n_pub = max(1, len(good) // 10)
    pubs = np.sort(rng.choice(good, size=n_pub, replace=False))
    pub_sub = np.zeros_like(sub)
    pub_sub[pubs] = sub[pubs]
    if not pub_sub.any():
        raise ParameterError("the publishers subscribe to no topic; use fewer attackers or a "
                             "denser workload", key="attackers")
    target = int(rng.choice(pubs)) if kind in ("sybil-eclipse", "sybil-censor") else -1
    plan = SybilPlan(degree=int(degree), join_ms=1000.0 * float(join_s),
                     after_ms=1000.0 * float(after_s),
                     honest_join_ms=1000.0 * float(honest_join_s), ips=int(ips), target=target)
    return AttackSetup(
        kind=kind,
        attackers=attackers,
        honest=honest,
        instance=inst,
        publishers=Instance.from_matrix(pub_sub),
        victim_topic=-1,
        silent=~honest,
        fixed_edges=None,
        update=np.ones(n, dtype=bool),
        sybil=plan,
    )


def relay_attack(
    instance: Instance, n_attackers: int, latency: np.ndarray, *, withhold: bool = True
) -> AttackSetup:
    """Fast-relay attackers: the ``n_attackers`` nodes of lowest mean latency (ties by id).

    ``withhold=False`` is the honest control (``kind="relay"``).

    Examples
    --------
    >>> import numpy as np
    >>> lat = np.array([[0, 1, 9, 9], [1, 0, 1, 1], [9, 1, 0, 9], [9, 1, 9, 0.]])
    >>> from hedgerow.model.instance import Instance
    >>> inst = Instance(4, 1, np.arange(5), np.zeros(4, dtype=np.int64))
    >>> s = relay_attack(inst, 1, lat)
    >>> s.kind, s.attackers.tolist(), s.honest.tolist()
    ('withhold', [1], [True, False, True, True])
    """
    n = instance.n_nodes
    if not (0 < n_attackers < n):
        raise ParameterError(f"attackers must be between 1 and {n - 1}, got {n_attackers}")
    lat = np.asarray(latency, dtype=np.float64)
    mean = (lat.sum(axis=1) - np.diag(lat)) / max(n - 1, 1)
    order = np.lexsort((np.arange(n), mean))
    attackers = np.sort(order[:n_attackers]).astype(np.int64)
    honest = np.ones(n, dtype=bool)
    honest[attackers] = False
    return AttackSetup(
        kind="withhold" if withhold else "relay",
        attackers=attackers,
        honest=honest,
        instance=instance,
        publishers=instance,
        victim_topic=0,
        silent=None,
        fixed_edges=None,
        update=np.ones(n, dtype=bool),
    )


def withholders(exploit: np.ndarray, watched: np.ndarray, honest: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: attackers holding an exploitation slot of a ``watched`` honest node.

    Parameters
    ----------
    exploit : numpy.ndarray
        ``(n, d)`` exploitation out-links (``-1`` padded).
    watched : numpy.ndarray
        ``(n,)`` bool, the honest adaptive nodes whose slots count.
    honest : numpy.ndarray
        ``(n,)`` bool honest mask.

    Examples
    --------
    >>> import numpy as np
    >>> ex = np.array([[2, 1], [2, -1], [0, -1], [1, -1]])
    >>> withholders(ex, np.array([True, False, False, False]),
    ...             np.array([True, True, False, False])).tolist()
    [False, False, True, False]
    """
    t = np.asarray(exploit, dtype=np.int64)[np.asarray(watched, dtype=bool)]
    held = np.zeros(len(honest), dtype=bool)
    held[t[t >= 0]] = True
    return held & ~np.asarray(honest, dtype=bool)
