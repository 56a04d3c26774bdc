"""The world a run happens in: workload, network, clock, traffic and attackers.

A :class:`Scenario` is a named setting written as data (the papers'
evaluation settings); :func:`make_world` turns it and a seed into a
:class:`World`, which every protocol of a comparison receives unchanged.  The
same seed gives the same world whatever the protocol, so two rows of a
comparison differ only by the protocol; :meth:`World.fingerprint` is a hash of
the instance, the latencies, the processing delays, the attackers and the
traffic, stamped on every row so a reader can see that two rows shared a world.

Random streams of the world (from ``RngStreams(seed)``): ``"workload"`` (the
subscriptions), ``"latency"`` (positions or a subset of a real data set),
``"processing"`` (processing delays), ``"attackers"`` and ``"messages"`` (the
traffic: epoch ``e`` takes the ``e``-th draw of that stream); broadcast worlds
add ``"publishers"`` (who publishes, with which probability) and
``"adaptive"`` (which nodes re-select their peers).

Broadcast worlds (``workload="broadcast"``; Goldfish section V, Perigee): one
topic every node subscribes to; each message's publisher is drawn i.i.d. from
the world's publishing probabilities (:mod:`hedgerow.workloads.publishers`),
from the ``"messages"`` stream, so every protocol sees the same message
sequence under one seed.  Only ``adaptive`` nodes (``--adaptive N``, drawn
uniformly) re-select their out-links; the others keep their starting ones.

Examples
--------
>>> w = make_world("cities", seed=1, topics=10)
>>> w.n_nodes, w.instance.n_topics, w.latency.name
(246, 10, 'cities')
>>> w.fingerprint() == make_world("cities", seed=1, topics=10).fingerprint()
True
>>> w.fingerprint() == make_world("cities", seed=2, topics=10).fingerprint()
False
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hedgerow.errors import DataError, ParameterError
from hedgerow.latency import LATENCY_MODELS, LatencyModel, latency_model, processing_delays
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import as_float, as_int, check_memory
from hedgerow.scenarios.attackers import (
    RELAY_ATTACKS,
    AttackSetup,
    eclipse_attack,
    relay_attack,
    topic_attack,
)
from hedgerow.scenarios.epoch_churn import (
    onoff_schedule,
    parse_churn,
    parse_trace,
    trace_schedule,
)
from hedgerow.scenarios.inputs import social_folder
from hedgerow.workloads import make_instance
from hedgerow.workloads.correlated import correlated_instance, with_owner_subscriptions
from hedgerow.workloads.interest import interest_bytes, interest_instance
from hedgerow.workloads.publishers import (
    draw_publishers,
    parse_publishers,
    publisher_probabilities,
)
from hedgerow.workloads.traffic import draw_messages

__all__ = [
    "SCENARIOS",
    "Scenario",
    "World",
    "broadcast_instance",
    "custom_world",
    "instance_fingerprint",
    "make_world",
    "read_topology_json",
    "resolve_scenario",
    "scenario_names",
    "world_for_instance",
]

#: attack name -> function(instance, attackers, rng) -> AttackSetup
ATTACK_SETUPS = {"topic": topic_attack, "eclipse": eclipse_attack}


@dataclass(frozen=True)
class Scenario:
    """A named evaluation setting, as data.

    Attributes
    ----------
    name, description : str
        Registry name and one line (with the paper's section).
    latency : str
        Latency model name (:func:`hedgerow.latency.latency_model`).
    nodes : int
        Number of nodes (attackers included; real data sets may fix it).
    d : int
        Degree budget handed to protocols that declare a ``d`` parameter.
    workload : {"interest", "popularity", "social", "given"}
        ``interest``: every (node, topic) pair subscribed with probability
        ``interest`` (Topiary V-A); ``popularity``: ``subs`` topics per node
        drawn from the ``popularity`` law (SpiderCast 3.1); ``social``: the
        users of an ingested social sample (``social`` is the output folder of
        ``hedgerow ingest social`` / ``follower-graph``: every user a node and
        a topic, subscribed to whom it follows); ``given``: an instance the
        caller hands in.
    topics, interest, subs, popularity
        The workload's settings.
    epochs, messages, ttl : int
        Epochs of adaptive protocols, messages per epoch, initial TTL.
    attack : str or None
        ``"topic"``, ``"eclipse"``, ``"withhold"`` / ``"relay"`` (broadcast worlds:
        fast relays that withhold while they hold exploitation slots, or the
        honest control) or ``None``; ``attackers`` how many.
    churn : str or None
        Broadcast worlds: the on/off churn between epochs, ``"onoff:F:ON:OFF"``
        (:mod:`hedgerow.scenarios.epoch_churn`).
    publishers : str or None
        Broadcast workload: the publishing law ``"unif:K"`` or ``"exp:K"``
        (:func:`hedgerow.workloads.publishers.publisher_probabilities`).
    adaptive : int
        Broadcast workload: how many nodes re-select their peers (0 = all).
    adaptive_pool : {"all", "non-publishers"}
        Where the adaptive nodes are drawn from (Goldfish Fig. 2 reads "1
        other node": not a publisher).
    latency_kw : tuple of (str, value)
        Keywords of the latency model (e.g. ``grid``, ``ceil``, ``one_way``,
        ``complete_only``: the Goldfish authors' exact inputs).
    topology : str or None
        A Goldfish-format topology JSON (:func:`read_topology_json`): its
        delays, node delays and publishing probabilities replace the drawn
        ones, so this code and the authors' run on identical inputs.
    proc_ms : float or None
        Fixed node (processing) delay in ms (default 20 ms,
        :func:`hedgerow.latency.processing_delays`).
    wasted : bool
        Broadcast worlds: measure the wasted latency every epoch (all-pairs
        shortest paths; off for the 1000-node Perigee matrix, whose reference
        simulator reports only arrival times).
    events : {"traffic", "per-topic", "per-topic-owner"}
        ``traffic``: ``messages`` random messages per epoch; ``per-topic``: one
        event per topic with a subscriber, from a uniform subscriber, weighted
        by the topic's rate (Vitis section IV, reading A10); ``per-topic-owner``:
        the same published by the user who is the topic (Vitis IV-E, A9).
        Per-topic scenarios report the routing measures of
        :mod:`hedgerow.metrics.routing`.
    correlation, buckets, alpha
        ``workload="correlated"``: Vitis IV-A's random / low / high levels
        (:func:`hedgerow.workloads.correlated.correlated_instance`) and IV-D's
        publication-rate skew.
    rt, cycles : int
        Routing-table size and gossip cycles handed to protocols declaring
        ``rt`` / ``cycles`` (Vitis, RVR, OPT).
    note : str
        A caveat stamped on every row (e.g. a synthetic stand-in for real data).
    """

    name: str
    description: str
    latency: str
    nodes: int
    d: int
    workload: str = "interest"
    topics: int = 100
    interest: float = 0.2
    subs: int | str = 10
    popularity: str = "rss"
    epochs: int = 150
    messages: int = 1000
    ttl: int = 1
    attack: str | None = None
    attackers: int = 0
    social: str | None = None
    publishers: str | None = None
    adaptive: int = 0
    adaptive_pool: str = "all"
    latency_kw: tuple[tuple[str, Any], ...] = ()
    topology: str | None = None
    proc_ms: float | None = None
    wasted: bool = True
    events: str = "traffic"
    correlation: str | None = None
    buckets: int = 100
    alpha: float = 0.0
    churn: str | None = None
    rt: int = 15
    cycles: int = 100
    note: str = ""


#: Goldfish's random world; its variants below change only what their descriptions name
_GOLDFISH_RANDOM = Scenario(
    "goldfish-random",
    "100 nodes uniform on a 500x500 ms plane, 100 publishers with the exp law, 32 "
    "adaptive nodes, 40 messages per epoch, 100 epochs, 20 ms node delay "
    "(Goldfish V-A, V-C Table II)",
    latency="unit-square",
    nodes=100,
    d=4,
    workload="broadcast",
    topics=1,
    epochs=100,
    messages=40,
    ttl=0,
    publishers="exp:100",
    adaptive=32,
)

#: the named scenarios
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "unit-square",
            "1000 nodes in the unit square, d=6, 100 topics at 20% interest, TTL 1 "
            "(Topiary V-A, V-B3 Fig. 5)",
            latency="unit-square",
            nodes=1000,
            d=6,
        ),
        Scenario(
            "cities",
            "246 WonderNetwork cities, d=5, 100 topics at 20% interest, TTL 1 "
            "(Topiary V-A, V-B5 Fig. 7)",
            latency="cities",
            nodes=246,
            d=5,
        ),
        Scenario(
            "rss-unit-square",
            "SpiderCast's RSS workload (1000 nodes, 100 topics, 10 subscriptions, Zipf 0.5) "
            "on the unit-square network, d=6, TTL 1",
            latency="unit-square",
            nodes=1000,
            d=6,
            workload="popularity",
            subs=10,
            popularity="rss",
        ),
        Scenario(
            "topic-attack",
            "unit square, 1000 nodes of which 300 never forward victim topic 0; "
            "40% interest (Topiary V-D1)",
            latency="unit-square",
            nodes=1000,
            d=6,
            interest=0.4,
            attack="topic",
            attackers=300,
        ),
        Scenario(
            "eclipse",
            "unit square, 1000 nodes of which 300 eclipse attackers form a clique; "
            "40% interest (Topiary V-D2)",
            latency="unit-square",
            nodes=1000,
            d=6,
            interest=0.4,
            attack="eclipse",
            attackers=300,
        ),
        _GOLDFISH_RANDOM,
        replace(
            _GOLDFISH_RANDOM,
            name="goldfish-real",
            description="100 WonderNetwork cities (round-trip delays, cities with complete data), "
            "100 publishers with the exp law, 32 adaptive nodes, 40 messages per epoch, 100 "
            "epochs (Goldfish V-A, V-D Table II)",
            latency="cities",
            latency_kw=(("one_way", False), ("complete_only", True)),
        ),
        replace(
            _GOLDFISH_RANDOM,
            name="goldfish-churn",
            description="goldfish-random with on/off churn between epochs: 30% of the nodes "
            "alternate online sessions of mean 10 epochs and offline ones of mean 5 (beyond the "
            "paper)",
            churn="onoff:0.3:10:5",
        ),
        replace(
            _GOLDFISH_RANDOM,
            name="goldfish-withhold",
            description="goldfish-random with the 8 lowest-latency nodes as relays that withhold "
            "every block while they hold an exploit slot of an honest adaptive node (beyond the "
            "paper; attack=relay is the honest control)",
            attack="withhold",
            attackers=8,
        ),
        Scenario(
            "perigee-matrix",
            "1000 nodes on the Perigee one-way latency matrix, uniform miners, every node "
            "adaptive, 99 blocks per round, 55 ms header+body validation (blocknet, header only)",
            latency="perigee",
            nodes=1000,
            d=8,
            workload="broadcast",
            topics=1,
            epochs=4,
            messages=99,
            ttl=0,
            publishers="unif:1000",
            proc_ms=55.0,
            wasted=False,
        ),
        *(
            Scenario(
                f"vitis-{level}",
                f"Vitis S0: 10,000 nodes, 5,000 topics in 100 buckets, 50 subscriptions, "
                f"{level} correlation, RT 15, k 3, d 5, uniform rates, 100 cycles "
                f"(Vitis IV-A)",
                latency="constant",
                nodes=10000,
                d=5,
                workload="correlated",
                topics=5000,
                subs=50,
                correlation=level,
                events="per-topic",
            )
            for level in ("random", "low", "high")
        ),
        Scenario(
            "vitis-twitter",
            "Twitter-like follower graph (synthetic: hedgerow ingest follower-graph --users 10000 "
            "--mean 80, exponent 1.65; --social DIR), every user publishing on its own topic, "
            "RT 15, k 3, d 5 (Vitis IV-E)",
            latency="constant",
            nodes=0,
            d=5,
            workload="social",
            events="per-topic-owner",
            note="synthetic Twitter-like follower graph, not the paper's Twitter sample",
        ),
        Scenario(
            "goldfish-fig2",
            "one Goldfish V-B Fig. 2 graph: 100 nodes on the 500x500 ms plane, 3 publishers at "
            "1/3, one other node adaptive, 300 epochs of 40 messages; rows carry "
            "star_optimal and star_lambda_ms",
            latency="unit-square",
            nodes=100,
            d=4,
            workload="broadcast",
            topics=1,
            epochs=300,
            messages=40,
            ttl=0,
            publishers="unif:3",
            adaptive=1,
            adaptive_pool="non-publishers",
            wasted=False,
        ),
    )
}

#: the scenario settings a run may override (name -> checker)
OVERRIDABLE = (
    "epochs", "topics", "interest", "attackers", "messages", "ttl", "nodes", "latency", "social",
    "adaptive", "publishers", "topology", "latency_kw", "adaptive_pool", "proc_ms", "wasted",
    "rt", "cycles", "alpha", "churn", "attack",
)
#: where adaptive nodes of a broadcast world may be drawn from
ADAPTIVE_POOLS = ("all", "non-publishers")
#: latency models whose size the run chooses (the others are real data sets of fixed size)
SIZED_MODELS = ("unit-square", "constant")


def instance_fingerprint(instance: Instance) -> str:
    """A 16-hex hash of an instance's subscriptions (the ``world`` of build and churn rows).

    Examples
    --------
    >>> from hedgerow.workloads import make_instance
    >>> a = instance_fingerprint(make_instance(nodes=50, topics=5, subs=2, seed=1))
    >>> a == instance_fingerprint(make_instance(nodes=50, topics=5, subs=2, seed=1)), len(a)
    (True, 16)
    """
    h = hashlib.sha256()
    for a in (np.int64(instance.n_topics), instance.sub_indptr, instance.sub_topics):
        arr = np.ascontiguousarray(a)
        h.update(str(arr.dtype).encode() + arr.tobytes())
    return h.hexdigest()[:16]


def scenario_names() -> list[str]:
    """Names accepted by :func:`make_world`."""
    return sorted(SCENARIOS)


def resolve_scenario(name: str, **overrides: Any) -> Scenario:
    """The named scenario with ``overrides`` (``None`` values keep the default) checked.

    Examples
    --------
    >>> resolve_scenario("cities", epochs=3).epochs
    3
    >>> resolve_scenario("cities", attackers=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: scenario 'cities' has no attackers; attackers applies to: ...
    """
    if not isinstance(name, str) or name not in SCENARIOS:
        raise ParameterError(
            f"unknown scenario {name!r}; allowed: {', '.join(scenario_names())}", key="name"
        )
    sc = SCENARIOS[name]
    unknown = sorted(set(overrides) - set(OVERRIDABLE))
    if unknown:
        raise ParameterError(
            f"scenario {name!r}: unknown setting {unknown[0]!r}; allowed: {', '.join(OVERRIDABLE)}"
        )
    changes: dict[str, Any] = {}
    for key, minimum in (("epochs", 1), ("topics", 1), ("messages", 1), ("ttl", 0), ("nodes", 2),
                         ("rt", 3), ("cycles", 1)):
        if overrides.get(key) is not None:
            changes[key] = as_int("scenario", key, overrides[key], minimum=minimum)
    if overrides.get("interest") is not None:
        x = as_float("scenario", "interest", overrides["interest"], low=0.0, high=1.0)
        if x <= 0.0:
            raise ParameterError(
                f"scenario: parameter interest must be in (0, 1], got {x}", key="interest"
            )
        changes["interest"] = x
    if overrides.get("alpha") is not None:
        if sc.workload != "correlated":
            names = ", ".join(n for n, s in SCENARIOS.items() if s.workload == "correlated")
            raise ParameterError(
                f"scenario {name!r}: alpha (publication-rate skew) applies to: {names}",
                key="alpha",
            )
        changes["alpha"] = as_float("scenario", "alpha", overrides["alpha"], low=0.0, high=100.0)
    if sc.workload == "social" and sc.social is None and overrides.get("social") is None:
        raise ParameterError(
            f"scenario {name!r} needs its follower graph: --social DIR (the output of "
            f"hedgerow ingest follower-graph --users 10000 --mean 80)",
            key="social",
        )
    if overrides.get("attackers") is not None:
        if sc.attack is None:
            names = ", ".join(n for n, s in SCENARIOS.items() if s.attack)
            raise ParameterError(
                f"scenario {name!r} has no attackers; attackers applies to: {names}"
            )
        changes["attackers"] = as_int("scenario", "attackers", overrides["attackers"], minimum=1)
    if overrides.get("attack") is not None:
        kind = overrides["attack"]
        if sc.attack not in RELAY_ATTACKS or kind not in RELAY_ATTACKS:
            names = ", ".join(n for n, s in SCENARIOS.items() if s.attack in RELAY_ATTACKS)
            raise ParameterError(
                f"scenario {name!r}: attack switches between {' and '.join(RELAY_ATTACKS)} in "
                f"{names}, got {kind!r}",
                key="attack",
            )
        changes["attack"] = kind
    if overrides.get("churn") is not None:
        if sc.workload != "broadcast":
            names = ", ".join(n for n, s in SCENARIOS.items() if s.workload == "broadcast")
            raise ParameterError(
                f"scenario {name!r} is not a broadcast world; churn applies to: {names}",
                key="churn",
            )
        if parse_trace(overrides["churn"]) is None:
            parse_churn(overrides["churn"])
        changes["churn"] = str(overrides["churn"])
    if overrides.get("latency") is not None:
        lat = overrides["latency"]
        if not isinstance(lat, str) or not (lat in LATENCY_MODELS or lat.startswith("file:")):
            allowed = ", ".join((*LATENCY_MODELS, "file:PATH"))
            raise ParameterError(
                f"scenario: parameter latency must be one of {allowed}, got {lat!r}", key="latency"
            )
        changes["latency"] = lat
        if lat not in SIZED_MODELS and "nodes" not in changes:
            changes["nodes"] = 0  # the data set's own size
    if overrides.get("social") is not None:
        folder = overrides["social"]
        if not isinstance(folder, str) or not folder:
            raise ParameterError(
                f"scenario: parameter social must be an ingest output folder, got {folder!r}",
                key="social",
            )
        if sc.attack is not None:
            raise ParameterError(
                f"scenario {name!r}: social workloads run without attackers; use unit-square",
                key="social",
            )
        changes.update(workload="social", social=folder, nodes=0)
        if sc.workload == "correlated":
            changes["events"] = "per-topic-owner"
    broadcast_keys = ("adaptive", "publishers", "topology", "adaptive_pool")
    given = [k for k in broadcast_keys if overrides.get(k) is not None]
    if given and sc.workload != "broadcast":
        names = ", ".join(n for n, s in SCENARIOS.items() if s.workload == "broadcast")
        raise ParameterError(
            f"scenario {name!r} is not a broadcast world; {given[0]} applies to: {names}",
            key=given[0],
        )
    if overrides.get("adaptive") is not None:
        changes["adaptive"] = as_int("scenario", "adaptive", overrides["adaptive"], minimum=0)
    if overrides.get("publishers") is not None:
        spec = overrides["publishers"]
        parse_publishers(spec)
        changes["publishers"] = spec
    if overrides.get("adaptive_pool") is not None:
        pool = overrides["adaptive_pool"]
        if pool not in ADAPTIVE_POOLS:
            raise ParameterError(
                f"scenario: parameter adaptive_pool must be one of {', '.join(ADAPTIVE_POOLS)}, "
                f"got {pool!r}",
                key="adaptive_pool",
            )
        changes["adaptive_pool"] = pool
    if overrides.get("wasted") is not None:
        changes["wasted"] = bool(overrides["wasted"])
    if overrides.get("proc_ms") is not None:
        changes["proc_ms"] = as_float(
            "scenario", "proc_ms", overrides["proc_ms"], low=0.0, high=1e6
        )
    if overrides.get("topology") is not None:
        changes.update(topology=str(overrides["topology"]), nodes=0)
    if overrides.get("latency_kw") is not None:
        kw = overrides["latency_kw"]
        items = kw.items() if isinstance(kw, dict) else kw
        changes["latency_kw"] = tuple((str(k), v) for k, v in items)
    elif "latency" in changes:
        changes["latency_kw"] = ()
    out = replace(sc, **changes)
    if out.workload == "broadcast" and out.nodes and out.adaptive > out.nodes:
        raise ParameterError(
            f"scenario {name!r}: {out.adaptive} adaptive nodes need at least as many nodes "
            f"({out.nodes})",
            key="adaptive",
        )
    if out.attack is not None and out.nodes and out.attackers >= out.nodes:
        raise ParameterError(
            f"scenario {name!r}: {out.attackers} attackers need more than {out.nodes} nodes"
        )
    return out


@dataclass(frozen=True)
class World:
    """Everything a protocol runs in, built once per (scenario, seed).

    Attributes
    ----------
    scenario : Scenario
        The resolved setting.
    seed : int
        The run's seed.
    instance : Instance
        Subscriptions (attackers' professed interest included).
    publishers : Instance
        Who may publish on each topic.
    latency : LatencyModel
        One-way link delays (ms).
    proc : numpy.ndarray
        ``(n,)`` processing delay of each node (ms).
    attack : AttackSetup or None
        The attackers, when the scenario has any.
    publisher_probs : numpy.ndarray or None
        Broadcast worlds: ``(n,)`` publishing probability of each node.
    adaptive_mask : numpy.ndarray or None
        Broadcast worlds: bool ``(n,)``, the nodes that re-select their peers
        (``None``: every node).
    """

    scenario: Scenario
    seed: int
    instance: Instance
    publishers: Instance
    latency: LatencyModel
    proc: np.ndarray
    attack: AttackSetup | None = None
    publisher_probs: np.ndarray | None = None
    adaptive_mask: np.ndarray | None = None
    _fingerprint: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return self.instance.n_nodes

    @property
    def honest(self) -> np.ndarray:
        """Bool mask of honest nodes (all when there are no attackers)."""
        if self.attack is None:
            return np.ones(self.n_nodes, dtype=bool)
        return self.attack.honest

    @property
    def active(self) -> np.ndarray:
        """Nodes that run the protocol's own neighbour selection."""
        if self.attack is None:
            return np.ones(self.n_nodes, dtype=bool)
        return np.asarray(self.attack.update, dtype=bool)

    @property
    def adaptive(self) -> np.ndarray:
        """Bool mask of the nodes that re-select their peers (all unless the world says)."""
        if self.adaptive_mask is None:
            return np.ones(self.n_nodes, dtype=bool)
        return np.asarray(self.adaptive_mask, dtype=bool)

    def online_schedule(self, epochs: int) -> np.ndarray | None:
        """``(epochs, n)`` bool: who takes part in each epoch (``None`` without churn).

        Stream ``"churn"``; see :mod:`hedgerow.scenarios.epoch_churn`.
        """
        if self.scenario.churn is None:
            return None
        trace = parse_trace(self.scenario.churn)
        if trace is not None:
            # lazy: the trace readers pull in pandas and the churn-scenario registry
            from hedgerow.scenarios.inputs import input_folder
            from hedgerow.scenarios.traces import load_events

            name, hours = trace
            folder = input_folder(name)
            if not folder.exists():
                raise DataError(f"churn trace {name!r} missing: run hedgerow ingest churn "
                                f"(expected {folder})")
            ev = load_events(folder)
            return trace_schedule(ev["time_s"], ev["node"], ev["event"], self.n_nodes,
                                  int(epochs), hours * 3600.0)
        frac, on, off = parse_churn(self.scenario.churn)
        rng = RngStreams(self.seed).stream("churn")
        return onoff_schedule(self.n_nodes, int(epochs), frac, on, off, rng)

    def traffic(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The epochs' messages ``(publisher, topic)``, epoch after epoch (the same for all).

        Topic uniform among topics with a possible publisher, publisher
        uniform among the topic's publishers (:func:`hedgerow.workloads.traffic.draw_messages`).
        """
        rng = RngStreams(self.seed).stream("messages")
        m = self.scenario.messages
        if self.publisher_probs is not None:
            topic = np.zeros(m, dtype=np.int64)
            while True:
                yield draw_publishers(self.publisher_probs, m, rng), topic
        while True:
            if self.scenario.events == "traffic":
                yield draw_messages(self.publishers, m, rng)
            else:
                publisher, topic, _ = self.routing_events(rng)
                yield publisher, topic

    def routing_events(
        self, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One event per topic with a subscriber: ``(publisher, topic, weight)``.

        The publisher is a uniform subscriber of the topic (``per-topic``) or
        the user who is the topic (``per-topic-owner``); the weight is the
        topic's publication rate (1 when the instance has none), so weighted
        aggregates are the exact expectation over the publication law (Vitis
        reading A10).
        """
        inst = self.publishers
        rng = RngStreams(self.seed).stream("messages") if rng is None else rng
        sizes = inst.topic_sizes
        topic = np.flatnonzero(sizes > 0).astype(np.int64)
        if self.scenario.events == "per-topic-owner":
            publisher = topic.copy()
        else:
            offset = np.minimum((rng.random(len(topic)) * sizes[topic]).astype(np.int64),
                                sizes[topic] - 1)
            publisher = inst.topic_nodes[inst.topic_indptr[topic] + offset].astype(np.int64)
        rates = inst.topic_rates
        weight = np.ones(len(topic)) if rates is None else np.asarray(rates)[topic]
        return publisher, topic, weight

    def fingerprint(self) -> str:
        """A 16-hex hash of the instance, latencies, processing delays, attackers and traffic."""
        if self._fingerprint:
            return self._fingerprint[0]
        h = hashlib.sha256()

        def add(*arrays: Any) -> None:
            for a in arrays:
                arr = np.ascontiguousarray(a)
                h.update(str(arr.dtype).encode() + str(arr.shape).encode())
                h.update(arr.tobytes())

        inst, pubs, lat = self.instance, self.publishers, self.latency
        add(np.int64(inst.n_topics), inst.sub_indptr, inst.sub_topics)
        add(pubs.sub_indptr, pubs.sub_topics)
        h.update(lat.name.encode())
        for attr in ("_matrix", "positions", "constant_ms", "scale_ms"):
            value = getattr(lat, attr, None)
            if value is not None:
                add(np.asarray(value))
        add(self.proc)
        for extra in (self.publisher_probs, self.adaptive_mask):
            if extra is not None:
                add(extra)
        sc = self.scenario
        add(np.array([sc.messages, sc.ttl, sc.epochs, sc.d], dtype=np.int64))
        if sc.churn is not None:
            h.update(f"churn={sc.churn}".encode())
        if sc.events != "traffic":
            h.update(sc.events.encode())
            if inst.topic_rates is not None:
                add(inst.topic_rates)
        if self.attack is not None:
            a = self.attack
            h.update(a.kind.encode())
            add(a.attackers, a.update)
            if a.fixed_edges is not None:
                add(a.fixed_edges)
            if a.silent is not None:
                add(a.silent, np.int64(-1 if a.victim_topic is None else a.victim_topic))
        publisher, topic = next(self.traffic())
        add(publisher, topic)
        self._fingerprint.append(h.hexdigest()[:16])
        return self._fingerprint[0]


def make_world(scenario: str | Scenario, *, seed: int = 0, **overrides: Any) -> World:
    """Build the world of ``scenario`` (a name or a :class:`Scenario`) for ``seed``.

    ``overrides``: any of ``epochs, topics, interest, attackers, messages,
    ttl, nodes`` (``None`` keeps the scenario's value).
    """
    seed = as_int("scenario", "seed", seed, minimum=0)
    sc = scenario if isinstance(scenario, Scenario) else resolve_scenario(scenario, **overrides)
    streams = RngStreams(seed)
    social = None
    if sc.workload == "social":
        from hedgerow.workloads.social import load_instance

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
        lat = latency_model(sc.latency, sc.nodes or None, streams.stream("latency"), **lat_kw)
    n = lat.n_nodes
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
    elif sc.attack is not None:
        attack = ATTACK_SETUPS[sc.attack](base, sc.attackers, streams.stream("attackers"))
    instance = base if attack is None else attack.instance
    publishers = instance if attack is None else attack.publishers
    proc_kw = {} if sc.proc_ms is None else {"mean_ms": sc.proc_ms}
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


def read_topology_json(path: str) -> dict[str, Any]:
    """Read a Goldfish-format topology JSON (the authors' generators' output).

    The file is ``{"summary": {...}, "nodes": [{"id", "adj", "proc_delay",
    "pub_prob", ...}, ...]}``: ``adj`` the row of link delays in ms as the
    authors' simulator uses them (integer ceil distances on the plane, round
    trips on the city network), ``proc_delay`` the node delay in ms and
    ``pub_prob`` the publishing probability (absent in older files: then every
    node with ``role == "PUB"`` publishes with equal probability).

    Returns
    -------
    dict
        ``latency`` (a matrix :class:`~hedgerow.latency.LatencyModel` named
        ``file:PATH``), ``proc`` ``(n,)`` and ``pub_prob`` ``(n,)``.
    """
    import json
    from pathlib import Path

    from hedgerow.errors import DataError
    from hedgerow.latency import from_matrix

    p = Path(path)
    if not p.exists():
        raise DataError(f"topology file missing: {p}")
    try:
        data = json.loads(p.read_text())
        nodes = sorted(data["nodes"], key=lambda x: int(x["id"]))
        adj = np.array([nd["adj"] for nd in nodes], dtype=np.float64)
        proc = np.array([float(nd["proc_delay"]) for nd in nodes])
        if all("pub_prob" in nd for nd in nodes):
            probs = np.array([float(nd["pub_prob"]) for nd in nodes])
        else:
            probs = np.array([1.0 if nd.get("role") == "PUB" else 0.0 for nd in nodes])
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{p}: not a Goldfish topology file ({exc})") from exc
    n = len(nodes)
    if [int(nd["id"]) for nd in nodes] != list(range(n)) or adj.shape != (n, n):
        raise DataError(f"{p}: node ids must be 0..{n - 1}, each with {n} adj delays")
    if probs.sum() <= 0:
        raise DataError(f"{p}: no node publishes (pub_prob all zero)")
    lat = from_matrix(adj, name=f"file:{p}", info={"source": str(p), "format": "goldfish"})
    return {"latency": lat, "proc": proc, "pub_prob": probs / probs.sum()}


def world_for_instance(
    instance: Instance,
    *,
    seed: int = 0,
    latency: str = "unit-square",
    d: int = 6,
    epochs: int = 150,
    messages: int = 1000,
    ttl: int = 1,
) -> World:
    """A world made around a given ``instance``: its nodes placed on ``latency``, no attackers.

    This is where :func:`hedgerow.build` runs an adaptive protocol.

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
        instance, lat, proc, seed=seed, d=d, epochs=epochs, messages=messages, ttl=ttl
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
) -> World:
    """A world from parts a caller already has (tests, notebooks, other workloads).

    ``instance`` is the subscriptions without attackers' professed interest
    when ``attack`` is given (the attack setup carries its own instance).

    Examples
    --------
    >>> from hedgerow.latency import constant
    >>> from hedgerow.workloads import make_instance
    >>> inst = make_instance(nodes=20, topics=4, subs=2)
    >>> custom_world(inst, constant(20, 10.0), np.full(20, 1.0), epochs=3).scenario.epochs
    3
    """
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
    )
    inst = instance if attack is None else attack.instance
    pubs = instance if attack is None else attack.publishers
    seed = as_int("scenario", "seed", seed, minimum=0)
    return World(sc, seed, inst, pubs, latency, np.asarray(proc, dtype=np.float64), attack)
