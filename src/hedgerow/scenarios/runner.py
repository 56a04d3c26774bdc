"""Named epoch scenarios of the Topiary evaluation (section V) and their runner.

A scenario fixes the network (latency model, nodes, out-degree ``d``), the
workload (topics, interest rate), the messages (1000 per epoch, TTL 1) and,
for the security scenarios, the attackers.  :func:`run_scenario` runs one
protocol on it and returns one JSON-serialisable row per epoch; adaptive
protocols (Topiary) run ``epochs`` epochs, static baselines one.

Per-epoch row keys
------------------
``epoch``
    Epoch number (0 = Topiary's random starting topology).
``receive_rate``
    Mean over the epoch's messages of the fraction of the topic's honest
    subscribers (publisher excluded) that received the message (V-A measure 1).
``avg_delay_ms``
    Mean publish-to-receive time over every (message, honest subscriber) pair
    that received the message (V-A measure 2, ms).
``avg_score``
    Mean over the updating nodes of their kept subset's score ``S(Γ*)``
    (V-A measure 3; ``None`` for static baselines).
``relay_copies``
    Mean number of copies per message received by unsubscribed nodes (the
    bandwidth the TTL spends).
``victim_receive_rate``, ``victim_avg_delay_ms`` (topic attack)
    The same two measures restricted to the victim topic's messages, over honest
    subscribers.
``attacker_slot_share`` (attack scenarios)
    Share of the honest nodes' outgoing links that point to attackers.
``honest_with_honest_neighbour`` (attack scenarios)
    Fraction of honest nodes with at least one honest outgoing neighbour.
``honest_with_honest_link`` (attack scenarios)
    Fraction of honest nodes linked to at least one honest node in either
    direction (outgoing or incoming): the ones not eclipsed.

The score distribution (V-A measure 4) is the ``scores`` array of
:func:`simulate`'s :class:`ScenarioResult`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hedgerow.dissemination import disseminate_chunks, edge_delays
from hedgerow.errors import ParameterError
from hedgerow.latency import latency_model, processing_delays
from hedgerow.metrics.attack import slot_stats
from hedgerow.metrics.delivery import delivery_stats
from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.progress import progress_bar
from hedgerow.protocols.base import OverlayProtocol, as_float, as_int
from hedgerow.protocols.baselines.complete import CompleteGraph
from hedgerow.protocols.baselines.gossipsub import GossipSubSplit
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.protocols.baselines.scribe import ScribeTrees
from hedgerow.protocols.topiary import Topiary
from hedgerow.scenarios.attackers import AttackSetup, eclipse_attack, topic_attack
from hedgerow.workloads.interest import interest_instance
from hedgerow.workloads.traffic import draw_messages


@dataclass(frozen=True)
class Scenario:
    """A named evaluation setting of the Topiary paper.

    Attributes
    ----------
    name, description : str
        Registry name and one-line description (with the paper's section).
    latency : str
        Latency model name (:func:`hedgerow.latency.latency_model`).
    nodes : int
        Number of nodes (attackers included).
    d : int
        Out-degree bound.
    topics : int
        Number of topics.
    interest : float
        Per-(node, topic) subscription probability.
    epochs, messages, ttl : int
        Epochs, messages per epoch, initial TTL.
    attack : str or None
        ``"topic"``, ``"eclipse"`` or ``None``.
    attackers : int
        Default number of attackers (attack scenarios).
    """

    name: str
    description: str
    latency: str
    nodes: int
    d: int
    topics: int = 100
    interest: float = 0.2
    epochs: int = 150
    messages: int = 1000
    ttl: int = 1
    attack: str | None = None
    attackers: int = 0


#: the named scenarios
SCENARIOS: dict[str, Scenario] = {
    "unit-square": Scenario(
        "unit-square",
        "1000 nodes in the unit square, d=6, 100 topics at 20% interest, TTL 1 (V-A, V-B3 Fig. 5)",
        latency="unit-square",
        nodes=1000,
        d=6,
    ),
    "cities": Scenario(
        "cities",
        "246 WonderNetwork cities, d=5, 100 topics at 20% interest, TTL 1 (V-A, V-B5 Fig. 7)",
        latency="cities",
        nodes=246,
        d=5,
    ),
    "topic-attack": Scenario(
        "topic-attack",
        "unit square, 1000 nodes of which 300 never forward victim topic 0; 40% interest (V-D1)",
        latency="unit-square",
        nodes=1000,
        d=6,
        interest=0.4,
        attack="topic",
        attackers=300,
    ),
    "eclipse": Scenario(
        "eclipse",
        "unit square, 1000 nodes of which 300 eclipse attackers form a clique; 40% interest (V-D2)",
        latency="unit-square",
        nodes=1000,
        d=6,
        interest=0.4,
        attack="eclipse",
        attackers=300,
    ),
}

#: protocol name -> (class, fixed constructor arguments)
PROTOCOLS: dict[str, tuple[type[OverlayProtocol], dict[str, Any]]] = {
    "topiary": (Topiary, {}),
    "random": (RandomGraph, {}),
    "complete": (CompleteGraph, {}),
    "gossipsub": (GossipSubSplit, {}),
    "scribe-random": (ScribeTrees, {"groups": "random"}),
    "scribe-topic": (ScribeTrees, {"groups": "topic"}),
}

#: keys every protocol accepts in ``params``: how messages are sent
TRAFFIC_KEYS = ("messages", "ttl")
#: protocol parameters a scenario decides (not settable through ``params``)
SCENARIO_OWNED = ("latency", "epochs")


def scenario_names() -> list[str]:
    """Names accepted by :func:`run_scenario`."""
    return sorted(SCENARIOS)


def protocol_names() -> list[str]:
    """Protocol names accepted by :func:`run_scenario`."""
    return list(PROTOCOLS)


@dataclass
class ScenarioResult:
    """Everything one scenario run produced.

    Attributes
    ----------
    rows : list of dict
        One JSON-serialisable row per epoch (see the module docstring).
    scores : numpy.ndarray
        ``(epochs, n_nodes)`` score ``S(Γ*)`` of every node's kept subset per
        epoch (``nan`` for nodes that do not select, and for static baselines).
    overlay : Overlay
        The final (directed) overlay, attacker links included.
    honest : numpy.ndarray
        Bool mask of honest nodes.
    meta : dict
        Resolved settings (scenario, protocol parameters, sizes).
    """

    rows: list[dict[str, Any]]
    scores: np.ndarray
    overlay: Overlay
    honest: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- resolution
def _resolve_scenario(
    scenario: str,
    *,
    epochs: Any,
    topics: Any,
    interest: Any,
    attackers: Any,
) -> Scenario:
    if scenario not in SCENARIOS:
        allowed = ", ".join(scenario_names())
        raise ParameterError(f"unknown scenario {scenario!r}; allowed: {allowed}")
    sc = SCENARIOS[scenario]
    changes: dict[str, Any] = {}
    if epochs is not None:
        changes["epochs"] = as_int("scenario", "epochs", epochs, minimum=1)
    if topics is not None:
        changes["topics"] = as_int("scenario", "topics", topics, minimum=1)
    if interest is not None:
        x = as_float("scenario", "interest", interest, low=0.0, high=1.0)
        if x <= 0.0:
            raise ParameterError(f"scenario: parameter interest must be in (0, 1], got {x}")
        changes["interest"] = x
    if attackers is not None:
        if sc.attack is None:
            attack_names = ", ".join(n for n, s in SCENARIOS.items() if s.attack)
            raise ParameterError(
                f"scenario {scenario!r} has no attackers; attackers applies to: {attack_names}"
            )
        changes["attackers"] = as_int("scenario", "attackers", attackers, minimum=1)
    return replace(sc, **changes)


def _make_protocol(name: str, params: dict[str, Any], sc: Scenario) -> tuple[OverlayProtocol, dict]:
    if name not in PROTOCOLS:
        raise ParameterError(f"unknown protocol {name!r}; allowed: {', '.join(PROTOCOLS)}")
    cls, fixed = PROTOCOLS[name]
    proto = cls(**fixed)
    own = [p for p in proto._param_names() if p not in fixed and p not in SCENARIO_OWNED]
    allowed = sorted(set(own) | set(TRAFFIC_KEYS))
    traffic = {"messages": sc.messages, "ttl": sc.ttl}
    for k in params:
        if k not in allowed:
            raise ParameterError(f"{name}: unknown parameter {k!r}; allowed: {', '.join(allowed)}")
    if "d" in own:
        proto.set_params(d=sc.d)
    if isinstance(proto, Topiary):
        proto.set_params(latency=sc.latency, epochs=sc.epochs, messages=sc.messages, ttl=sc.ttl)
    for k, v in params.items():
        if k in own:
            proto.set_params(**{k: v})
        if k in TRAFFIC_KEYS:
            traffic[k] = v
    traffic["messages"] = as_int(name, "messages", traffic["messages"], minimum=1)
    traffic["ttl"] = as_int(name, "ttl", traffic["ttl"], minimum=0)
    return proto, traffic


def check_run(
    protocol: str,
    scenario: str,
    *,
    epochs: Any = None,
    topics: Any = None,
    interest: Any = None,
    attackers: Any = None,
    params: dict[str, Any] | None = None,
) -> Scenario:
    """Validate a run's names and parameters without running it; returns the resolved scenario.

    Examples
    --------
    >>> check_run("topiary", "cities", params={"eta": 3}).d
    5
    >>> check_run("topiary", "cities", params={"eta": 1})
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: topiary: parameter eta must be > 1 (eq. 9), got 1.0
    """
    sc = _resolve_scenario(
        scenario, epochs=epochs, topics=topics, interest=interest, attackers=attackers
    )
    proto, _ = _make_protocol(protocol, dict(params or {}), sc)
    proto._validate(Instance.from_lists([[0]] * sc.nodes, n_topics=sc.topics))
    return sc


# --------------------------------------------------------------------------- metrics
def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _row(
    epoch: int,
    arrival: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    relay: np.ndarray,
    interest: np.ndarray,
    scores: np.ndarray | None,
    attack: AttackSetup | None,
    links: tuple[np.ndarray, np.ndarray],
) -> dict[str, Any]:
    honest = None if attack is None else attack.honest
    rate, delay = delivery_stats(arrival, publisher, topic, interest, receivers=honest)
    row: dict[str, Any] = {
        "epoch": int(epoch),
        "receive_rate": _num(rate),
        "avg_delay_ms": _num(delay),
        "avg_score": None
        if scores is None or not np.isfinite(scores).any()
        else float(np.nanmean(scores)),
        "relay_copies": float(np.mean(relay)),
    }
    if attack is not None:
        if attack.victim_topic is not None:
            vic = topic == attack.victim_topic
            if vic.any():
                vr, vd = delivery_stats(
                    arrival[vic], publisher[vic], topic[vic], interest, receivers=honest
                )
            else:
                vr, vd = float("nan"), float("nan")
            row["victim_receive_rate"] = _num(vr)
            row["victim_avg_delay_ms"] = _num(vd)
        share, keep, linked = slot_stats(links[0], links[1], attack.honest)
        row["attacker_slot_share"] = share
        row["honest_with_honest_neighbour"] = keep
        row["honest_with_honest_link"] = linked
    return row


# --------------------------------------------------------------------------- running
def simulate(
    protocol: str,
    scenario: str,
    *,
    seed: int = 0,
    epochs: int | None = None,
    topics: int | None = None,
    interest: float | None = None,
    attackers: int | None = None,
    params: dict[str, Any] | None = None,
    progress: bool = False,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> ScenarioResult:
    """Run ``protocol`` on the named ``scenario``; rows, score distribution and final overlay.

    Parameters are those of :func:`run_scenario`; ``on_epoch`` is called with
    each row as soon as it is ready.

    Examples
    --------
    >>> res = simulate("topiary", "cities", epochs=2, topics=10, params={"messages": 50})
    >>> len(res.rows), res.scores.shape, res.overlay.directed
    (2, (2, 246), True)
    """
    seed = as_int("scenario", "seed", seed, minimum=0)
    sc = _resolve_scenario(
        scenario, epochs=epochs, topics=topics, interest=interest, attackers=attackers
    )
    proto, traffic = _make_protocol(protocol, dict(params or {}), sc)
    streams = RngStreams(seed)

    lat = latency_model(sc.latency, sc.nodes, streams.stream("latency"))
    n = lat.n_nodes
    base = interest_instance(n, sc.topics, sc.interest, streams.stream("workload"))
    attack: AttackSetup | None = None
    if sc.attack == "topic":
        attack = topic_attack(base, sc.attackers, streams.stream("attackers"))
    elif sc.attack == "eclipse":
        attack = eclipse_attack(base, sc.attackers, streams.stream("attackers"))
    instance = base if attack is None else attack.instance
    publishers = instance if attack is None else attack.publishers
    honest = np.ones(n, dtype=bool) if attack is None else attack.honest
    proc = processing_delays(n, streams.stream("processing"))
    interest_m = interest_matrix(instance.masks, instance.n_topics)
    proto._validate(instance)
    meta = {
        "protocol": protocol,
        "scenario": sc.name,
        "seed": seed,
        "nodes": n,
        "topics": sc.topics,
        "interest": sc.interest,
        "attackers": sc.attackers if sc.attack else 0,
        "params": {k: v for k, v in proto.get_params().items()},
        **traffic,
    }
    rows: list[dict[str, Any]] = []
    score_rows: list[np.ndarray] = []

    def emit(row: dict[str, Any]) -> None:
        rows.append(row)
        if on_epoch is not None:
            on_epoch(row)

    if isinstance(proto, Topiary):
        pstreams = RngStreams(seed).child(f"protocol:{proto.name}")
        fixed = None if attack is None else attack.fixed_edges
        it = proto.iterate(
            instance,
            lat,
            proc,
            pstreams,
            publishers=publishers,
            update=None if attack is None else attack.update,
            fixed_edges=fixed,
            silent=None if attack is None else attack.silent,
            silent_topic=None if attack is None else attack.victim_topic,
            epochs=sc.epochs,
        )
        with progress_bar(f"{protocol} on {sc.name}", enabled=progress) as bar:
            task = bar.add_task("epochs", total=sc.epochs)
            for rep in it:
                src = np.repeat(np.arange(n), rep.out.shape[1])
                dst = rep.out.reshape(-1)
                ok = dst >= 0
                emit(
                    _row(
                        rep.epoch,
                        rep.arrival,
                        rep.publisher,
                        rep.topic,
                        rep.relay_copies,
                        interest_m,
                        rep.scores,
                        attack,
                        (src[ok], dst[ok]),
                    )
                )
                score_rows.append(rep.scores)
                bar.advance(task)
        overlay = out_overlay(proto.out_, fixed)
    else:
        with progress_bar(f"{protocol} on {sc.name}", enabled=progress) as bar:
            task = bar.add_task("build", total=1)
            overlay = proto.build(instance, seed=seed)
            overlay = _with_attackers(overlay, attack)
            links = _links(overlay)
            a = overlay.undirected_csr()
            indptr = a.indptr.astype(np.int64)
            indices = a.indices.astype(np.int64)
            ed = np.asarray(edge_delays(indptr, indices, lat), dtype=np.float64)
            publisher, topic = draw_messages(
                publishers, traffic["messages"], streams.stream("messages")
            )
            arrival = np.empty((len(publisher), n))
            relay = np.zeros(len(publisher), dtype=np.int64)
            for sel, dl, _ in disseminate_chunks(
                indptr,
                indices,
                ed,
                proc,
                instance.masks,
                publisher,
                topic,
                traffic["ttl"],
                record_edges=False,
                silent=None if attack is None else attack.silent,
                silent_topic=None if attack is None else attack.victim_topic,
            ):
                arrival[sel] = np.asarray(dl.arrival)
                relay[sel] = np.asarray(dl.relay_copies)
            emit(_row(0, arrival, publisher, topic, relay, interest_m, None, attack, links))
            score_rows.append(np.full(n, np.nan))
            bar.advance(task)
    scores = np.vstack(score_rows) if score_rows else np.zeros((0, n))
    return ScenarioResult(rows=rows, scores=scores, overlay=overlay, honest=honest, meta=meta)


def _links(overlay: Overlay) -> tuple[np.ndarray, np.ndarray]:
    """Outgoing links (both directions of each link for undirected overlays)."""
    a = overlay.csr().tocoo()
    return a.row.astype(np.int64), a.col.astype(np.int64)


def _with_attackers(overlay: Overlay, attack: AttackSetup | None) -> Overlay:
    """Eclipse attackers keep only their clique as outgoing links (see ``attackers``)."""
    if attack is None or attack.fixed_edges is None:
        return overlay
    src, dst = _links(overlay)
    keep = attack.honest[src]
    if not overlay.directed:
        keep |= attack.honest[dst]
    edges = np.column_stack([src[keep], dst[keep]])
    edges = np.concatenate([edges, attack.fixed_edges])
    return Overlay.from_edges(overlay.n_nodes, edges, directed=True)


def run_scenario(
    protocol: str,
    scenario: str,
    *,
    seed: int = 0,
    epochs: int | None = None,
    topics: int | None = None,
    interest: float | None = None,
    attackers: int | None = None,
    params: dict | None = None,
    progress: bool = False,
) -> list[dict]:
    """Run ``protocol`` on the named ``scenario``; one JSON-serialisable dict per epoch.

    Parameters
    ----------
    protocol : str
        One of ``topiary, random, complete, gossipsub, scribe-random, scribe-topic``.
    scenario : str
        One of :data:`SCENARIOS`: ``unit-square``, ``cities``, ``topic-attack``, ``eclipse``.
    seed : int, default 0
        The run's seed (workload, latency positions, attackers, protocol, messages).
    epochs : int, optional
        Epochs of an adaptive protocol (default 150); static baselines always
        report one epoch.
    topics : int, optional
        Number of topics (default 100).
    interest : float, optional
        Per-(node, topic) subscription probability (default 0.2; 0.4 in the
        attack scenarios, as in section V-D).
    attackers : int, optional
        Attackers among the nodes (attack scenarios only; default 300).
    params : dict, optional
        Protocol parameters (e.g. ``{"wd": 2, "eta": 1.5}`` for Topiary, ``d``
        for every degree-bounded protocol) plus ``messages`` and ``ttl``.
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    list of dict
        Rows with keys ``epoch, receive_rate, avg_delay_ms, avg_score,
        relay_copies`` (+ attack keys), see :mod:`hedgerow.scenarios.runner`.

    Raises
    ------
    ParameterError
        Unknown protocol, scenario or parameter (the message lists the allowed values).

    Examples
    --------
    >>> rows = run_scenario("random", "cities", topics=10, params={"messages": 50})
    >>> len(rows), sorted(rows[0])[:3]
    (1, ['avg_delay_ms', 'avg_score', 'epoch'])
    >>> run_scenario("topiary", "moon")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: unknown scenario 'moon'; allowed: cities, eclipse, ...
    """
    return simulate(
        protocol,
        scenario,
        seed=seed,
        epochs=epochs,
        topics=topics,
        interest=interest,
        attackers=attackers,
        params=params,
        progress=progress,
    ).rows
