"""The catalogue of named scenarios: :class:`Scenario` and :data:`SCENARIOS`.

A named scenario is data over the declared settings of
:mod:`hedgerow.world_settings`: its fields are those settings (with
the table's defaults) plus what only a catalogue entry fixes (the workload
family, the latency model's keywords, the attack kind, the routing events).
:func:`resolve_scenario` applies a run's overrides, each checked by its
declaration; a setting used on a scenario outside the families it applies to
is an error listing the scenarios it applies to.

Protocol-bound values are stated by protocol
---------------------------------------------
A scenario's ``protocol_params`` names, for each protocol, the parameter
values it runs with on this world: ``{"perigee": {"preset": "goldfish"}}`` on
the Goldfish worlds (the paper's comparison at equal budgets), or
``{"topiary": {"d": From("d")}}``: Topiary's out-degree budget is the
scenario's ``d``.  A :class:`From` value reads a field of the resolved
scenario, so ``--rt 30`` reaches the gossip protocols the scenario binds
``rt`` to.  We chose a mapping in the catalogue over a role that protocols
opt into: the binding is a fact of the evaluation setting (the paper's
budgets), visible where the setting is written, and a protocol from another
package is never handed a value because of its parameter's name.  Nothing is
matched by name: a protocol not listed runs with its own defaults (Vitis's
gateway threshold on ``unit-square``).  A parameter the user sets again beside
the world setting it is bound to (``--rt 30`` and ``-p rt=20``) is an error
naming both (:func:`protocol_params`).

Examples
--------
>>> resolve_scenario("cities", epochs=3).epochs
3
>>> protocol_params(SCENARIOS["unit-square"], "topiary"), protocol_params(
...     SCENARIOS["unit-square"], "vitis")
({'d': 6}, {'rt': 15, 'cycles': 100})
>>> resolve_scenario("cities", attackers=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: scenario 'cities' has no attackers; attackers applies to: ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.latency import LATENCY_MODELS
from hedgerow.scenarios.epoch_churn import parse_churn, parse_trace
from hedgerow.scenarios.world.lean import parse_bimodal_churn, parse_peer_table
from hedgerow.scenarios.world.wire import parse_bandwidth, parse_publication, parse_size
from hedgerow.workloads.publishers import parse_publishers
from hedgerow.world_settings import RELAY_ATTACKS, SYBIL_ATTACKS, WORLD_SETTINGS, check_setting

__all__ = [
    "SCENARIOS",
    "SIZED_MODELS",
    "From",
    "Scenario",
    "check_bound_settings",
    "protocol_params",
    "resolve_scenario",
    "scenario_families",
    "scenario_names",
]

#: latency models whose size the run chooses (the others are real data sets of fixed size)
SIZED_MODELS = ("unit-square", "cities-placed", "constant", "regions")


@dataclass(frozen=True)
class From:
    """A protocol-bound value read from the resolved scenario's field ``setting``.

    Examples
    --------
    >>> From("rt").value(SCENARIOS["vitis-random"])
    15
    """

    setting: str

    def value(self, sc: Scenario) -> Any:
        return getattr(sc, self.setting)


def _default(name: str) -> Any:
    return WORLD_SETTINGS[name].default


#: the protocols whose out-degree budget is the scenario's ``d`` (Topiary V-A's budget, given
#: to the baselines it is compared with)
_BUDGET = {p: {"d": From("d")}
           for p in ("topiary", "random-graph", "scribe-random", "scribe-topic",
                     "gossipsub-split")}
#: the gossip protocols' routing-table size and cycles (Vitis IV-A, RVR, OPT)
_GOSSIP = {p: {"rt": From("rt"), "cycles": From("cycles")} for p in ("vitis", "rvr", "opt")}
#: the bindings of every scenario unless it states others
STANDARD_BINDINGS: dict[str, dict[str, Any]] = {**_BUDGET, **_GOSSIP}
#: the Goldfish worlds: Perigee at Goldfish's budgets (4 out, 8 in; Goldfish V-C's baseline)
_GOLDFISH_BINDINGS = {**STANDARD_BINDINGS, "perigee": {"preset": "goldfish"}}
#: the Vitis worlds: Vitis's gateway-hop threshold d is the scenario's (S0: d 5)
_VITIS_BINDINGS = {**STANDARD_BINDINGS, "vitis": {**_GOSSIP["vitis"], "d": From("d")}}


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
        The scenario's out-degree budget, handed to the protocols that
        ``protocol_params`` binds it to (``From("d")``).
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
        honest control), ``"sybil"``, ``"sybil-eclipse"``, ``"sybil-censor"``
        (the GossipSub v1.1 evaluation's sybils,
        :func:`~hedgerow.scenarios.attackers.sybil_attack`) or ``None``;
        ``attackers`` how many.
    attack_degree, attack_join_s, attack_after_s, honest_join_s, attacker_ips
        The sybils' connections each, when they connect, when they start
        dropping, when the honest nodes connect among themselves, and the IP
        addresses they share.
    churn : str or None
        Broadcast worlds: the on/off churn between epochs, ``"onoff:F:ON:OFF"``
        (:mod:`hedgerow.scenarios.epoch_churn`).
    bimodal_churn, peer_table : str or None
        Lean Gossip's churn within a run (``"F:LEAVE:REJOIN[:TICK_MS]"``) and
        peer tables (``"LO:HI"``), read by
        :func:`hedgerow.scenarios.lean_gossip.run_lean_gossip`; the epoch loop
        refuses a world that sets them.
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
    plane : {"continuous", "grid"}
        A unit-square network's positions: continuous, or the Goldfish
        authors' integer grid (``grid`` = the side in ms, ``ceil``: delays
        rounded up to whole ms), the generator of their random topologies.
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
        Routing-table size and gossip cycles, handed to the gossip protocols
        ``protocol_params`` binds them to (Vitis, RVR, OPT).
    bandwidth, download_queues, validation_ms, validation_ms_per_kb, loss, jitter_ms
        The network of bytes (:mod:`hedgerow.scenarios.world.wire`,
        ``docs/network.md``); any of them, ``size`` or ``publication`` away
        from its default makes the world contended.
    size, publication : str or None
        Payload bytes of the messages and when they are published.
    control_size, control_entry_size, control_period_ms : float
        Control messages on the wire (:func:`~hedgerow.scenarios.world.wire.epoch_control`):
        header bytes (0: none), bytes per entry carried, period of the
        maintenance rounds; ``control_size`` above 0 makes the world contended.
    note : str
        A caveat stamped on every row (e.g. a synthetic stand-in for real data).
    protocol_params : mapping
        ``protocol -> {parameter: value or From(field)}``: the values each
        protocol runs with on this world (module docstring).
    given : tuple of str
        The settings a run set explicitly (filled by :func:`resolve_scenario`).

    The defaults of the declared settings are the table's
    (:data:`~hedgerow.world_settings.WORLD_SETTINGS`).
    """

    name: str
    description: str
    latency: str
    nodes: int
    d: int
    workload: str = "interest"
    topics: int = _default("topics")
    interest: float = _default("interest")
    subs: int | str = _default("subs")
    popularity: str = "rss"
    epochs: int = _default("epochs")
    messages: int = _default("messages")
    ttl: int = _default("ttl")
    attack: str | None = _default("attack")
    attackers: int = _default("attackers")
    attack_degree: int = _default("attack_degree")
    attack_join_s: float = _default("attack_join_s")
    attack_after_s: float = _default("attack_after_s")
    honest_join_s: float = _default("honest_join_s")
    attacker_ips: int = _default("attacker_ips")
    social: str | None = _default("social")
    publishers: str | None = _default("publishers")
    adaptive: int = _default("adaptive")
    adaptive_pool: str = _default("adaptive_pool")
    latency_kw: tuple[tuple[str, Any], ...] = _default("latency_kw")
    plane: str = _default("plane")
    topology: str | None = _default("topology")
    proc_ms: float | None = _default("proc_ms")
    wasted: bool = _default("wasted")
    events: str = "traffic"
    correlation: str | None = None
    buckets: int = 100
    alpha: float = _default("alpha")
    churn: str | None = _default("churn")
    bimodal_churn: str | None = _default("bimodal_churn")
    peer_table: str | None = _default("peer_table")
    rt: int = _default("rt")
    cycles: int = _default("cycles")
    bandwidth: str | None = _default("bandwidth")
    download_queues: bool = _default("download_queues")
    validation_ms: float = _default("validation_ms")
    validation_ms_per_kb: float = _default("validation_ms_per_kb")
    loss: float = _default("loss")
    jitter_ms: float = _default("jitter_ms")
    size: str | None = _default("size")
    publication: str | None = _default("publication")
    control_size: float = _default("control_size")
    control_entry_size: float = _default("control_entry_size")
    control_period_ms: float = _default("control_period_ms")
    note: str = ""
    protocol_params: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: dict(STANDARD_BINDINGS)
    )
    given: tuple[str, ...] = ()


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
    protocol_params=_GOLDFISH_BINDINGS,
)

#: the GossipSub v1.1 evaluation's world (Vyzovitis et al., Gossipsub-v1.1 Evaluation Report,
#: PL-TechRep-2020-001, section 4; test plans ``libp2p/gossipsub-hardening``,
#: ``scripts/configs/1k-*``):
#: 1,000 honest nodes (a tenth publish) and 250 sybils, one topic, 25 ms links with 10 % jitter,
#: 20 connections per honest node, 2 KiB messages; 20 per second here (the report's 120 per
#: second, scaled down; P3's threshold of 10 still holds for an honest mesh peer), 3,600 = 180 s
#: (the report's 3-minute run) after a 30 s warm-up, GossipSub with the report's mesh degrees
#: and its score parameters (score_params=hardening)
_GS_HARDENING = Scenario(
    "gs-hardening",
    "GossipSub v1.1 evaluation world: 1000 honest nodes (100 publishers) and 250 sybils, one "
    "topic, 25 ms links +-10 % jitter, 20 connections each, 2 KiB messages at 20/s for 180 s "
    "after 30 s of warm-up",
    latency="constant",
    latency_kw=(("ms", 25.0),),
    nodes=1250,
    d=8,
    topics=1,
    interest=1.0,
    epochs=1,
    messages=3600,
    ttl=0,
    attack="sybil",
    attackers=250,
    jitter_ms=2.5,
    size="2k",
    publication="poisson:20",
    protocol_params={**STANDARD_BINDINGS, "gossipsub": {
        "D": 8, "D_lo": 6, "D_hi": 12, "D_score": 6, "D_lazy": 12, "connections": 20,
        "warmup_ms": 30000.0, "drain_ms": 10000.0, "score_params": "hardening"}},
)
#: the report's attacks (sections 7, 10, 12, 13, 14), and broken promises scored with the JS
#: implementation's defaults (the evaluation's parameters give P7 no weight): name,
#: description, settings
_GS_ATTACKS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("eclipse", "eclipse of one target: every sybil connects to the target, a publisher, at 60 s "
     "and drops everything (report section 7)",
     {"attack": "sybil-eclipse", "attack_degree": 1, "attack_join_s": 60.0}),
    ("censor", "censor of one target: every sybil connects to 100 honest nodes at 60 s and drops "
     "the target publisher's messages only (report section 10)",
     {"attack": "sybil-censor", "attack_degree": 100, "attack_join_s": 60.0}),
    ("cold-boot", "cold boot: sybils (20 connections each) and honest nodes connect at once at "
     "the start; the sybils drop everything (report section 12)", {}),
    ("covert-flash", "covert flash: sybils connect at the start, relay honestly and all drop "
     "everything at 120 s (report section 13)", {"attack_after_s": 120.0}),
    ("dawn", "attack at dawn: sybils connect at the start, the honest nodes among themselves "
     "10 s later; the sybils drop everything (report section 14)", {"honest_join_s": 10.0}),
    ("broken-promises", "broken promises (beyond the report): sybils connect at the start, graft "
     "nobody, announce what they receive in IHAVEs and serve no IWANT (P7)",
     {"attack": "sybil-liar", "protocol_params": {**STANDARD_BINDINGS, "gossipsub": {
         "D": 8, "D_lo": 6, "D_hi": 12, "D_score": 6, "D_lazy": 12, "connections": 20,
         "warmup_ms": 30000.0, "drain_ms": 10000.0, "score_params": "defaults"}}}),
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
            "cities-placed",
            "the cities world at any size: 1000 nodes placed uniformly on the 246 WonderNetwork "
            "cities (1 ms within a city), d=5, 100 topics at 20% interest, TTL 1 (the "
            "head-to-head at 10,000 and 100,000 nodes)",
            latency="cities-placed",
            nodes=1000,
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
        replace(
            _GS_HARDENING,
            name="gs-baseline",
            description="GossipSub v1.1 evaluation world without sybils: 1000 honest nodes, one "
            "topic, 25 ms links +-10 % jitter, 20 connections each, 2 KiB messages at 20/s for "
            "180 s after 30 s of warm-up (report section 6)",
            nodes=1000,
            attack=None,
            attackers=_default("attackers"),
        ),
        *(
            replace(
                _GS_HARDENING,
                name=f"gs-{name}",
                description=f"{_GS_HARDENING.description}; {what}",
                **kw,
            )
            for name, what, kw in _GS_ATTACKS
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
            "unit-square-bw",
            "unit-square with bytes on the wire: 1000 nodes, 20 Mbit/s up and 50 down each, "
            "64 KiB messages published as a Poisson process of 20 per second, 100 per epoch",
            latency="unit-square",
            nodes=1000,
            d=6,
            messages=100,
            bandwidth="20:50",
            size="64k",
            publication="poisson:20",
        ),
        Scenario(
            "lean-gossip",
            "Lean Gossip's world (ankitku/lean-gossip; docs/gossipsub.md): 1000 peers in three "
            "regions (EU / US / Asia at 30 / 40 / 30 %, 30-220 ms one way, rounded up to its "
            "100 ms tick), peer tables of 40-80 made symmetric, 25 Mbit/s uplinks, one "
            "attestation topic every peer subscribes to, 1536-byte attestations (1 per peer "
            "per 384 s, at most once), bimodal churn (churny share 0 here; 0.01 leave and 0.05 "
            "rejoin per tick); run by hedgerow.scenarios.lean_gossip.run_lean_gossip",
            latency="regions",
            latency_kw=(("tick_ms", 100.0),),
            nodes=1000,
            d=8,
            topics=1,
            interest=1.0,
            epochs=1,
            ttl=0,
            bandwidth="25",
            size="1536",
            peer_table="40:80",
            bimodal_churn="0:0.01:0.05:100",
        ),
        Scenario(
            "eth-blocks",
            "1000 nodes on the 246 WonderNetwork cities, one topic (a block/blob gossip "
            "network), 80% home nodes at 25/50 Mbit/s up/down (EIP-7870) and 20% data-centre "
            "nodes at 1 Gbit/s, 128 KiB to 1 MiB messages, 0.5 per second (Poisson; about a "
            "block and its blobs per 12-s slot), 50 per epoch, 2 ms + 1 ms/MiB validation "
            "(docs/network.md)",
            latency="cities-placed",
            nodes=1000,
            d=8,
            topics=1,
            interest=1.0,
            epochs=10,
            messages=50,
            ttl=0,
            bandwidth="home:0.8:25:50,datacentre:0.2:1000:1000",
            validation_ms=2.0,
            validation_ms_per_kb=1.0 / 1024.0,
            size="uniform:128k:1m",
            publication="poisson:0.5",
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
                protocol_params=_VITIS_BINDINGS,
            )
            for level in ("random", "low", "high")
        ),
        Scenario(
            "vitis-twitter",
            "Twitter-like follower graph (synthetic: the named input vitis-tw10k, hedgerow ingest "
            "follower-graph --users 10000 --mean 80, exponent 1.65; --social replaces it), every "
            "user publishing on its own topic, RT 15, k 3, d 5 (Vitis IV-E)",
            latency="constant",
            nodes=0,
            d=5,
            workload="social",
            social="vitis-tw10k",
            events="per-topic-owner",
            protocol_params=_VITIS_BINDINGS,
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
            protocol_params=_GOLDFISH_BINDINGS,
        ),
    )
}



def scenario_names() -> list[str]:
    """Names accepted by :func:`~hedgerow.scenarios.world.make_world`."""
    return sorted(SCENARIOS)


def scenario_families(sc: Scenario) -> set[str]:
    """The families a setting's ``applies`` is matched against: the workload, ``attack``
    (attackers), ``relay`` (fast-relay attackers).

    Examples
    --------
    >>> sorted(scenario_families(SCENARIOS["goldfish-withhold"]))
    ['attack', 'broadcast', 'relay']
    """
    out = {sc.workload}
    if sc.attack is not None:
        out.add("attack")
        if sc.attack in RELAY_ATTACKS:
            out.add("relay")
        if sc.attack in SYBIL_ATTACKS:
            out.add("sybil")
    return out


def _read_latency(value: str) -> None:
    if not (value in LATENCY_MODELS or value.startswith("file:")):
        allowed = ", ".join((*LATENCY_MODELS, "file:PATH"))
        raise ParameterError(
            f"scenario: parameter latency must be one of {allowed}, got {value!r}", key="latency"
        )


def _read_churn(value: str) -> None:
    if parse_trace(value) is None:
        parse_churn(value)


#: the text settings' forms, read by the code that uses them (setting -> reader that raises)
_FORMS: dict[str, Callable[[Any], Any]] = {
    "latency": _read_latency,
    "churn": _read_churn,
    "publishers": parse_publishers,
    "bandwidth": parse_bandwidth,
    "size": parse_size,
    "publication": parse_publication,
    "bimodal_churn": parse_bimodal_churn,
    "peer_table": parse_peer_table,
}


def _family_error(name: str, key: str, family: str) -> ParameterError:
    names = ", ".join(n for n, s in SCENARIOS.items() if family in scenario_families(s))
    if family == "attack":
        head = f"scenario {name!r} has no attackers"
    elif family == "relay":
        head = f"scenario {name!r} has no fast relays"
    elif family == "sybil":
        head = f"scenario {name!r} has no sybils"
    else:
        head = f"scenario {name!r} is not a {family} world"
    return ParameterError(f"{head}; {key} applies to: {names}", key=key)


def resolve_scenario(name: str, **overrides: Any) -> Scenario:
    """The named scenario with ``overrides`` (``None`` values keep the default) checked.

    Every override is a declared setting of the ``run`` section
    (:data:`~hedgerow.world_settings.WORLD_SETTINGS`), checked by
    its declaration and by the families it applies to; the resolved scenario
    records which settings were given (``given``).
    """
    if not isinstance(name, str) or name not in SCENARIOS:
        raise ParameterError(
            f"unknown scenario {name!r}; allowed: {', '.join(scenario_names())}", key="name"
        )
    sc = SCENARIOS[name]
    allowed = [k for k, s in WORLD_SETTINGS.items() if s.section == "run"]
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        raise ParameterError(
            f"scenario {name!r}: unknown setting {unknown[0]!r}; allowed: {', '.join(allowed)}",
            key=unknown[0],
        )
    families = scenario_families(sc)
    changes: dict[str, Any] = {}
    for key in allowed:  # table order: one message per run, the first bad setting
        if overrides.get(key) is None:
            continue
        decl = WORLD_SETTINGS[key]
        if decl.applies and not families & set(decl.applies):
            raise _family_error(name, key, decl.applies[0])
        bad = families & set(decl.excludes)
        if bad:
            what = "without attackers" if "attack" in bad else f"outside {sorted(bad)[0]} worlds"
            raise ParameterError(
                f"scenario {name!r}: {key} worlds run {what}; choose another scenario", key=key
            )
        changes[key] = check_setting(key, overrides[key])
        if key in _FORMS:
            _FORMS[key](changes[key])
    given = tuple(changes)
    # what a setting implies for the others
    if "latency" in changes:
        if changes["latency"] not in SIZED_MODELS and "nodes" not in changes:
            changes["nodes"] = 0  # the data set's own size
        changes.setdefault("latency_kw", ())
    if "social" in changes:
        changes.update(workload="social", nodes=0)
        if sc.workload == "correlated":
            changes["events"] = "per-topic-owner"
    if "topology" in changes:
        changes["nodes"] = 0
    if changes.get("nodes") and "publishers" not in changes and sc.publishers is not None:
        law, _, k = sc.publishers.partition(":")
        if k.isdigit() and int(k) == sc.nodes:  # every node publishes: so it stays
            changes["publishers"] = f"{law}:{changes['nodes']}"
    if sc.workload == "social" and sc.social is None and "social" not in changes:
        raise ParameterError(
            f"scenario {name!r} needs its follower graph: --social DIR (the output of "
            f"hedgerow ingest follower-graph --users 10000 --mean 80)",
            key="social",
        )
    out = replace(sc, **changes, given=given)
    if out.plane == "grid":
        if out.topology is not None or out.latency != "unit-square":
            raise ParameterError(
                f"scenario {name!r}: plane=grid places the nodes of a unit-square network; "
                f"this world's network is {out.topology or out.latency}",
                key="plane",
            )
        if {k for k, _ in out.latency_kw} & {"grid", "ceil"}:
            raise ParameterError(
                f"scenario {name!r}: plane=grid sets the latency keywords grid and ceil; "
                "give one or the other",
                key="plane",
            )
    if out.workload == "broadcast" and out.nodes and out.adaptive > out.nodes:
        raise ParameterError(
            f"scenario {name!r}: {out.adaptive} adaptive nodes need at least as many nodes "
            f"({out.nodes})",
            key="adaptive",
        )
    if out.attack is not None and out.nodes and out.attackers >= out.nodes:
        raise ParameterError(
            f"scenario {name!r}: {out.attackers} attackers need more than {out.nodes} nodes",
            key="attackers",
        )
    if out.workload in ("popularity", "correlated") and isinstance(out.subs, int) and (
        out.subs > out.topics
    ):
        raise ParameterError(
            f"scenario {name!r}: {out.subs} subscriptions per node need at least as many "
            f"topics ({out.topics})",
            key="subs",
        )
    return out


def protocol_params(
    sc: Scenario, protocol: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The parameters ``protocol`` runs with on ``sc``: its bound values, then ``params``.

    A parameter in ``params`` replaces the scenario's default for it, unless
    the run also gave the world setting that parameter is bound to: then the
    value is given twice, a :class:`ParameterError` naming both.

    Examples
    --------
    >>> sc = resolve_scenario("vitis-random", rt=30)
    >>> protocol_params(sc, "vitis")["rt"], protocol_params(sc, "vitis", {"d": 4})["d"]
    (30, 4)
    >>> protocol_params(sc, "vitis", {"rt": 20})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: vitis: rt is given twice, as the world setting rt=30 and ...
    """
    params = dict(params or {})
    out: dict[str, Any] = {}
    for key, value in sc.protocol_params.get(protocol, {}).items():
        if isinstance(value, From):
            if key in params and value.setting in sc.given:
                flag = "--" + value.setting.replace("_", "-")
                raise ParameterError(
                    f"{protocol}: {key} is given twice, as the world setting "
                    f"{value.setting}={value.value(sc)!r} and as the parameter "
                    f"{key}={params[key]!r} ({flag} or run.{value.setting}, and -p or "
                    f"params.{key}); give one",
                    key=key,
                )
            value = value.value(sc)
        out[key] = value
    out.update(params)
    return out


def check_bound_settings(sc: Scenario, protocols: list[str] | tuple[str, ...]) -> None:
    """Refuse a given setting that ``sc`` binds only to protocols the run does not include.

    ``--rt 30`` on ``unit-square`` reaches Vitis, RVR and OPT; a run of Topiary
    alone would drop it without a word, so it is an error naming the protocols
    that take it.

    Examples
    --------
    >>> check_bound_settings(resolve_scenario("unit-square", rt=30), ["vitis", "topiary"])
    >>> check_bound_settings(resolve_scenario("unit-square", rt=30), ["topiary"])
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: scenario 'unit-square': rt is handed to opt, rvr, vitis; ...
    """
    takers: dict[str, set[str]] = {}
    for proto, values in sc.protocol_params.items():
        for value in values.values():
            if isinstance(value, From):
                takers.setdefault(value.setting, set()).add(proto)
    for setting in sc.given:
        if setting in takers and not takers[setting] & set(protocols):
            verb = "takes" if len(protocols) == 1 else "take"
            names = ", ".join(sorted(takers[setting]))
            raise ParameterError(
                f"scenario {sc.name!r}: {setting} is handed to {names};"
                f" {', '.join(protocols)} {verb} no {setting}",
                key=setting,
            )

