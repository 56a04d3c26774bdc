"""Worlds made from a scenario and a seed (the workload dispatch), or from parts.

:func:`make_world` turns a named scenario (or a :class:`Scenario`) and a seed
into a :class:`World`, which every protocol of a comparison receives
unchanged: the same seed gives the same world whatever the protocol, so two
rows of a comparison differ only by the protocol.
:func:`world_for_instance` and :func:`custom_world` make worlds around parts a
caller already has; :func:`instance_fingerprint` is the ``world`` of a build or
churn row.

Examples
--------
>>> w = make_world("cities", seed=1, topics=10)
>>> w.n_nodes, w.scenario.topics
(246, 10)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.latency import LatencyModel, latency_model, processing_delays
from hedgerow.latency.model import UNIT_SQUARE_SCALE_MS
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import as_int, check_memory
from hedgerow.scenarios.attackers import (
    RELAY_ATTACKS,
    SYBIL_ATTACKS,
    AttackSetup,
    eclipse_attack,
    relay_attack,
    sybil_attack,
    topic_attack,
)
from hedgerow.scenarios.inputs import social_folder
from hedgerow.scenarios.world.catalogue import _FORMS, Scenario, resolve_scenario
from hedgerow.scenarios.world.core import World
from hedgerow.scenarios.world.formats import read_topology_json
from hedgerow.scenarios.world.wire import WIRE_SETTINGS, world_network
from hedgerow.workloads import make_instance
from hedgerow.workloads.correlated import correlated_instance, with_owner_subscriptions
from hedgerow.workloads.interest import interest_bytes, interest_instance
from hedgerow.workloads.memory import check_sizes
from hedgerow.workloads.publishers import publisher_probabilities
from hedgerow.world_settings import check_setting

__all__ = [
    "ATTACK_SETUPS",
    "broadcast_instance",
    "custom_world",
    "draw_adaptive",
    "instance_fingerprint",
    "make_world",
    "world_for_instance",
]

#: attack name -> function(instance, attackers, rng) -> AttackSetup
ATTACK_SETUPS = {"topic": topic_attack, "eclipse": eclipse_attack}


def _check_traffic(sc: Scenario, nodes: int) -> None:
    """Refuse an epoch's traffic whose deliveries do not fit in memory (one estimate,
    :func:`hedgerow.workloads.memory.check_sizes`)."""
    messages = int(getattr(sc, "messages", 0) or 0)
    check_sizes(f"scenario {sc.name!r} with {messages:,} messages per epoch among "
                f"{int(nodes):,} nodes", nodes=int(nodes), messages=messages)


def make_world(scenario: str | Scenario, *, seed: int = 0, **overrides: Any) -> World:
    """Build the world of ``scenario`` (a name or a :class:`Scenario`) for ``seed``.

    ``overrides``: any setting of the ``run`` section of
    :data:`~hedgerow.world_settings.WORLD_SETTINGS` (``None`` keeps the
    scenario's value), checked by :func:`resolve_scenario`.
    """
    seed = as_int("scenario", "seed", seed, minimum=0)
    sc = scenario if isinstance(scenario, Scenario) else resolve_scenario(scenario, **overrides)
    if sc.bimodal_churn is not None or sc.peer_table is not None:
        raise ParameterError(
            f"scenario {sc.name!r}: bimodal_churn and peer_table (Lean Gossip's world) are run "
            "by hedgerow.scenarios.lean_gossip.run_lean_gossip, not by the epoch loop",
            key="bimodal_churn" if sc.bimodal_churn is not None else "peer_table",
        )
    streams = RngStreams(seed)
    social = None
    if sc.workload == "social":
        from hedgerow.workloads.social import load_instance

        if sc.social is None:
            raise ParameterError("the social workload needs a social setting", key="social")
        social = load_instance(social_folder(sc.social))
        if sc.events == "per-topic-owner":
            social = with_owner_subscriptions(social)
        sc = replace(sc, nodes=social.n_nodes, topics=social.n_topics)
    topo = None
    if sc.topology is not None:
        topo = read_topology_json(sc.topology)
        lat = topo["latency"]
        sc = replace(sc, latency=lat.name, nodes=lat.n_nodes)
    else:
        if sc.latency == "constant" and social is not None:
            sc = replace(sc, nodes=social.n_nodes)
        lat_kw = {"ms": 1.0} if sc.latency == "constant" else {}
        lat_kw.update(sc.latency_kw)
        if sc.plane == "grid":  # the Goldfish authors' generator: integer points, ceil delays
            side = float(lat_kw.get("scale_ms", UNIT_SQUARE_SCALE_MS))
            lat_kw.update(grid=max(round(side), 1), ceil=True)
        if sc.nodes:
            _check_traffic(sc, sc.nodes)  # before the network is drawn
        lat = latency_model(sc.latency, sc.nodes or None, streams.stream("latency"), **lat_kw)
    n = lat.n_nodes
    _check_traffic(sc, n)
    if social is not None and n != social.n_nodes:
        raise ParameterError(
            f"scenario: the social sample has {social.n_nodes} users but the {sc.latency} network"
            f" {n} nodes; use a sized network (latency unit-square)",
            key="social",
        )
    if sc.nodes == 0:
        sc = replace(sc, nodes=n)
    if social is not None:
        base = social
    elif sc.workload == "broadcast":
        base = broadcast_instance(n)
    elif sc.workload == "correlated":
        base = correlated_instance(
            n, topics=sc.topics, buckets=sc.buckets, subs=int(sc.subs),
            correlation=sc.correlation or "random", alpha=sc.alpha, seed=seed,
        )
    elif sc.workload == "popularity":
        base = make_instance(
            nodes=n, topics=sc.topics, subs=sc.subs, popularity=sc.popularity, seed=seed
        )
    else:
        check_memory(
            f"scenario {sc.name!r} with {n:,} nodes, {sc.topics:,} topics at "
            f"{sc.interest:g} interest",
            interest_bytes(n, sc.topics, sc.interest),
        )
        base = interest_instance(n, sc.topics, sc.interest, streams.stream("workload"))
    attack = None
    if sc.attack in RELAY_ATTACKS:
        if sc.workload != "broadcast":
            raise ParameterError(f"scenario {sc.name!r}: {sc.attack} attackers need a broadcast "
                                 "world", key="attack")
        attack = relay_attack(base, sc.attackers, lat.matrix(), withhold=sc.attack == "withhold")
    elif sc.attack in SYBIL_ATTACKS:
        attack = sybil_attack(base, sc.attackers, streams.stream("attackers"), kind=sc.attack,
                              degree=sc.attack_degree, join_s=sc.attack_join_s,
                              after_s=sc.attack_after_s, honest_join_s=sc.honest_join_s,
                              ips=sc.attacker_ips)
    elif sc.attack is not None:
        attack = ATTACK_SETUPS[sc.attack](base, sc.attackers, streams.stream("attackers"))
    instance = base if attack is None else attack.instance
    publishers = instance if attack is None else attack.publishers
    proc_kw: dict[str, Any] = {} if sc.proc_ms is None else {"mean_ms": sc.proc_ms}
    proc = processing_delays(n, streams.stream("processing"), **proc_kw)
    probs = adaptive_mask = None
    if sc.workload == "broadcast":
        if topo is not None:
            proc, probs = topo["proc"], topo["pub_prob"]
        else:
            probs = publisher_probabilities(
                sc.publishers or f"unif:{n}", n, streams.stream("publishers")
            )
        exclude = None
        if attack is not None:
            # attackers never publish and never count among the adaptive (honest) nodes
            probs = np.where(attack.honest, probs, 0.0)
            probs = probs / probs.sum()
            exclude = ~attack.honest
        adaptive_mask = draw_adaptive(
            n, sc.adaptive, probs, sc.adaptive_pool, streams, exclude=exclude
        )
    return World(
        scenario=sc,
        seed=seed,
        instance=instance,
        publishers=publishers,
        latency=lat,
        proc=np.asarray(proc, dtype=np.float64),
        attack=attack,
        publisher_probs=probs,
        adaptive_mask=adaptive_mask,
        network=world_network(sc, n, streams),
    )


def broadcast_instance(n_nodes: int) -> Instance:
    """One topic every node subscribes to (a broadcast world).

    Examples
    --------
    >>> inst = broadcast_instance(4)
    >>> inst.n_topics, inst.topic_sizes.tolist()
    (1, [4])
    """
    n = int(n_nodes)
    return Instance(n, 1, np.arange(n + 1, dtype=np.int64), np.zeros(n, dtype=np.int64))


def draw_adaptive(
    n_nodes: int,
    count: int,
    probs: np.ndarray,
    pool: str,
    streams: RngStreams,
    *,
    exclude: np.ndarray | None = None,
) -> np.ndarray | None:
    """The adaptive nodes of a broadcast world (``None`` when every node adapts).

    ``count`` nodes uniformly without replacement from stream ``"adaptive"``,
    among all nodes or (``pool="non-publishers"``) among nodes that never publish;
    never an ``exclude`` node (attackers; with attackers, ``count=0`` means every
    honest node).

    Examples
    --------
    >>> m = draw_adaptive(10, 3, np.r_[np.ones(2) / 2, np.zeros(8)], "non-publishers",
    ...                   RngStreams(0))
    >>> int(m.sum()), bool(m[:2].any())
    (3, False)
    """
    if exclude is None and (count <= 0 or (count >= n_nodes and pool == "all")):
        return None
    cand = np.arange(n_nodes) if pool == "all" else np.flatnonzero(np.asarray(probs) <= 0)
    if exclude is not None:
        cand = cand[~np.asarray(exclude, dtype=bool)[cand]]
        if count <= 0:
            count = len(cand)
    if count > len(cand):
        raise ParameterError(
            f"scenario: {count} adaptive nodes drawn from {pool} but only {len(cand)} qualify",
            key="adaptive",
        )
    mask = np.zeros(n_nodes, dtype=bool)
    mask[streams.stream("adaptive").choice(cand, size=count, replace=False)] = True
    return mask


def instance_fingerprint(instance: Instance, *, seed: int = 0) -> str:
    """The ``world`` of a build or churn row: the fingerprint of the world made around
    ``instance`` for ``seed`` (:func:`world_for_instance`, :meth:`World.fingerprint`).

    A build and a run in that world carry the same value, whatever the run's
    epochs or the protocol's budget.

    Examples
    --------
    >>> from hedgerow.workloads import make_instance
    >>> inst = make_instance(nodes=50, topics=5, subs=2, seed=1)
    >>> a = instance_fingerprint(inst, seed=1)
    >>> a == world_for_instance(inst, seed=1, epochs=3).fingerprint(), len(a)
    (True, 16)
    """
    return world_for_instance(instance, seed=seed).fingerprint()


def world_for_instance(
    instance: Instance,
    *,
    seed: int = 0,
    latency: str = "unit-square",
    d: int = 6,
    epochs: int = 150,
    messages: int = 1000,
    ttl: int = 1,
    **wire: Any,
) -> World:
    """A world made around a given ``instance``: its nodes placed on ``latency``, no attackers.

    This is where :func:`hedgerow.build` runs an adaptive protocol; ``wire``
    are network settings, as :func:`custom_world`'s.

    Examples
    --------
    >>> from hedgerow.workloads import make_instance
    >>> w = world_for_instance(make_instance(nodes=30, topics=5, subs=2), epochs=2)
    >>> w.n_nodes, w.scenario.workload, w.latency.name
    (30, 'given', 'unit-square')
    """
    if not isinstance(instance, Instance):
        raise ParameterError(f"instance must be a hedgerow Instance, got {type(instance).__name__}")
    seed = as_int("scenario", "seed", seed, minimum=0)
    n = instance.n_nodes
    streams = RngStreams(seed)
    lat = latency_model(latency, n, streams.stream("latency"))
    if lat.n_nodes != n:
        raise ParameterError(
            f"latency model {latency!r} has {lat.n_nodes} nodes, the instance {n}"
        )
    proc = processing_delays(n, streams.stream("processing"))
    return custom_world(
        instance, lat, proc, seed=seed, d=d, epochs=epochs, messages=messages, ttl=ttl, **wire
    )


def custom_world(
    instance: Instance,
    latency: LatencyModel,
    proc: np.ndarray,
    *,
    seed: int = 0,
    d: int = 6,
    epochs: int = 150,
    messages: int = 1000,
    ttl: int = 1,
    attack: AttackSetup | None = None,
    **wire: Any,
) -> World:
    """A world from parts a caller already has (tests, notebooks, other workloads).

    ``instance`` is the subscriptions without attackers' professed interest
    when ``attack`` is given (the attack setup carries its own instance).
    ``wire`` takes the network settings
    (:data:`~hedgerow.scenarios.world.wire.WIRE_SETTINGS`: ``bandwidth``,
    ``size``, ``publication``, ...), checked as a scenario's.

    Examples
    --------
    >>> from hedgerow.latency import constant
    >>> from hedgerow.workloads import make_instance
    >>> inst = make_instance(nodes=20, topics=4, subs=2)
    >>> custom_world(inst, constant(20, 10.0), np.full(20, 1.0), epochs=3).scenario.epochs
    3
    >>> w = custom_world(inst, constant(20, 10.0), np.full(20, 1.0), bandwidth="10:20",
    ...                  size="16k")
    >>> w.contended, float(w.network.upload[0]), w.wire(0, np.array([0, 1]))[0].tolist()
    (True, 10.0, [16384.0, 16384.0])
    """
    unknown = sorted(set(wire) - set(WIRE_SETTINGS))
    if unknown:
        raise ParameterError(
            f"custom world: unknown setting {unknown[0]!r}; network settings: "
            f"{', '.join(WIRE_SETTINGS)}",
            key=unknown[0],
        )
    checked: dict[str, Any] = {}
    for key, value in wire.items():
        if value is None:
            continue
        checked[key] = check_setting(key, value)
        if key in _FORMS:
            _FORMS[key](checked[key])
    n = instance.n_nodes if attack is None else attack.instance.n_nodes
    if latency.n_nodes != n or len(proc) != n:
        raise ParameterError(
            f"custom world: {n} nodes, latency model {latency.n_nodes}, processing {len(proc)}"
        )
    sc = Scenario(
        "custom",
        f"a custom world of {n} nodes on {latency.name}",
        latency=latency.name,
        nodes=n,
        d=as_int("scenario", "d", d, minimum=1),
        workload="given",
        topics=instance.n_topics,
        epochs=as_int("scenario", "epochs", epochs, minimum=1),
        messages=as_int("scenario", "messages", messages, minimum=1),
        ttl=as_int("scenario", "ttl", ttl, minimum=0),
        attack=None if attack is None else attack.kind,
        attackers=0 if attack is None else len(attack.attackers),
        **checked,
    )
    inst = instance if attack is None else attack.instance
    pubs = instance if attack is None else attack.publishers
    seed = as_int("scenario", "seed", seed, minimum=0)
    return World(sc, seed, inst, pubs, latency, np.asarray(proc, dtype=np.float64), attack,
                  network=world_network(sc, n, RngStreams(seed)))
