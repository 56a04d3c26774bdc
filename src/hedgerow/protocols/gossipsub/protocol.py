"""GossipSub as deployed (libp2p gossipsub v1.0, v1.1, v1.2): the registered protocol ``gossipsub``.

Papers and specifications: Vyzovitis et al., "GossipSub: Attack-Resilient
Message Propagation in the Filecoin and ETH2.0 Networks", arXiv:2007.02754
(2020); libp2p/specs ``pubsub/gossipsub/gossipsub-v1.0.md``, ``-v1.1.md``,
``-v1.2.md``.  Where the specifications leave a choice open, the engine
follows go-libp2p-pubsub's ``gossipsub.go`` (``docs/gossipsub.md`` lists each).
One such choice is ``control_rpc``: go-libp2p-pubsub and the JS implementation send
a heartbeat's IHAVEs, GRAFTs and PRUNEs to one peer in one RPC, so ``per-peer`` is
the default; ``per-message`` sends each alone, as Lean Gossip's simulator does.

The protocol is of capability ``clock`` (:class:`~hedgerow.protocols.base.ClockProtocol`):
its engine (:class:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine`)
connects every node to about ``peers`` others, forms per-topic meshes by
heartbeats during ``warmup_ms``, then carries the scheduled messages over the
contended network with its control traffic.

Examples
--------
>>> from hedgerow.scenarios.run import compare
>>> row = compare(["gossipsub"], "cities", topics=10, messages=50)[0]
>>> row["receive_rate"], row["graft_per_node_heartbeat"] >= 0
(1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from hedgerow.dissemination.contended import Network
from hedgerow.dissemination.engine import edge_delays
from hedgerow.errors import ParameterError
from hedgerow.latency import LatencyModel
from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Float, check_memory
from hedgerow.protocols.base import ClockProtocol
from hedgerow.protocols.engine_api import Publications
from hedgerow.protocols.gossipsub.engine import (
    CASE_PARAMS,
    Connections,
    EngineAttack,
    GossipSubEngine,
    engine_bytes,
    idontwant_ring,
    random_connections,
    settings,
)
from hedgerow.protocols.gossipsub.params import (
    HARDENING_THRESHOLDS,
    PARAMS,
    check_gossipsub,
    hardening_score_params,
    score_preset,
)
from hedgerow.protocols.gossipsub.scoring import (
    PeerScoreParams,
    ScoreCounters,
    add_penalty,
    first_delivery,
    graft,
    mesh_delivery,
    prune,
    refresh,
    score,
)

__all__ = ["ENGINE_PARAMS", "EngineScore", "GossipSub", "attack_connections"]


#: the declared GossipSub parameters (``params.PARAMS``) the engine runs with
ENGINE_PARAMS = (
    "variant", "D", "D_lo", "D_hi", "D_lazy", "D_score", "D_out", "heartbeat_ms",
    "fanout_ttl_ms", "mcache_len", "mcache_gossip", "seen_ttl_ms", "gossip_factor",
    "prune_backoff_ms", "gossip_retransmission", "max_ihave_length", "max_ihave_messages",
    "flood_publish", "idontwant_threshold", "scoring", "graft_on_subscribe", "heartbeat_phase",
    "iwant_followup_ms", "opportunistic_graft_ticks", "opportunistic_graft_peers",
    "peer_exchange", "prune_peers", "control_rpc",
    "connections",
)


class EngineScore:
    """The v1.1 score of every connection, from the engine's running counters, per heartbeat.

    The engine (:class:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine`)
    counts in its kernel; at each heartbeat this hands what changed since the
    last one to :mod:`~hedgerow.protocols.gossipsub.scoring`'s events (grafts
    and prunes from the mesh flags, first and near-first deliveries, behaviour
    penalties), runs its decay tick every ``decay_interval_ms``
    (:func:`~hedgerow.protocols.gossipsub.scoring.refresh`) and returns
    :func:`~hedgerow.protocols.gossipsub.scoring.score` at that instant.  A
    peer pruned and grafted again between two heartbeats counts as one
    continuous stay in the mesh.

    ``ip_group`` gives the IP group of every connection's remote peer (P6's
    colocation; ``-1``: its own address).

    With ``native`` (the default) the engine does not call it: its kernel
    computes the same scores itself at every heartbeat
    (:mod:`hedgerow.protocols.gossipsub._scorekernel`, equal bit for bit, without
    stopping before each heartbeat); ``native=False`` keeps this Python path, the
    reference the kernel's is tested against.

    Examples
    --------
    >>> from hedgerow.protocols.gossipsub.scoring import PeerScoreParams, TopicScoreParams
    >>> tp = TopicScoreParams(topic_weight=1.0, first_deliveries_weight=1.0,
    ...                       time_in_mesh_weight=0.0, mesh_deliveries_weight=0.0,
    ...                       mesh_failure_penalty_weight=0.0)
    >>> sc = EngineScore(PeerScoreParams(topics=(tp,)))
    >>> c = {"in_mesh": np.array([False, False]), "graft_ms": np.full(2, np.nan),
    ...      "first_message_deliveries": np.array([3.0, 0.0]),
    ...      "near_first_mesh_deliveries": np.zeros(2), "behaviour_penalty": np.zeros(2),
    ...      "conn_node": np.array([0, 1])}
    >>> sc(c, 1000.0).tolist()
    [3.0, 0.0]
    """

    def __init__(self, params: PeerScoreParams, ip_group: np.ndarray | None = None,
                 native: bool = True) -> None:
        self.params = params
        #: the engine scores in its kernel instead of calling this object
        self.native = bool(native)
        #: ``(nnz,)`` the IP group of each connection's remote peer (P6; ``None``: none shared)
        self.ip_group = ip_group
        self.counters: ScoreCounters | None = None

    def __call__(self, c: Mapping[str, np.ndarray], now_ms: float) -> np.ndarray:
        conn_node = np.asarray(c["conn_node"])
        in_mesh = np.asarray(c["in_mesh"], dtype=bool)
        n_conn = len(conn_node)
        T = len(in_mesh) // max(n_conn, 1)
        if self.counters is None:
            self.counters = ScoreCounters.empty(
                slot_conn=np.repeat(np.arange(n_conn), T), slot_topic=np.tile(np.arange(T),
                                                                              n_conn),
                conn_node=conn_node, ip_group=self.ip_group)
            self._first = np.zeros(len(in_mesh))
            self._near = np.zeros(len(in_mesh))
            self._penalty = np.zeros(n_conn)
            self._next_decay = now_ms + self.params.decay_interval_ms
        sc, p = self.counters, self.params
        graft_ms = np.asarray(c["graft_ms"])
        gone = np.flatnonzero(sc.in_mesh & ~in_mesh)
        if len(gone):
            prune(sc, p, gone)
        new = np.flatnonzero(in_mesh & ~sc.in_mesh)
        for t in np.unique(graft_ms[new]):
            at = new[graft_ms[new] == t]
            graft(sc, at, float(t))
        for name, last, event in (("first_message_deliveries", self._first, first_delivery),
                                  ("near_first_mesh_deliveries", self._near, mesh_delivery)):
            now = np.asarray(c[name])
            delta = np.rint(now - last).astype(np.int64)
            hit = np.flatnonzero(delta > 0)
            if len(hit):
                event(sc, p, np.repeat(hit, delta[hit]))
            last[:] = now
        pen = np.asarray(c["behaviour_penalty"])
        delta_pen = pen - self._penalty
        hit = np.flatnonzero(delta_pen > 0)
        if len(hit):
            add_penalty(sc, np.repeat(hit, np.rint(delta_pen[hit]).astype(np.int64)))
        self._penalty[:] = pen
        while now_ms >= self._next_decay:
            refresh(sc, p, now_ms)
            self._next_decay += p.decay_interval_ms
        return score(sc, p, now_ms=now_ms)


def attack_connections(
    honest: np.ndarray, plan: Any, peers: int, rng: np.random.Generator, subs: np.ndarray,
    topic_peers: int,
) -> Connections:
    """The connections of a sybil world: the honest nodes among themselves as
    :func:`~hedgerow.protocols.gossipsub.engine.random_connections` draws them, then each
    sybil, in node order, dialing ``plan.degree`` distinct uniform honest nodes (the target
    only when ``plan.target`` is set and the attack is an eclipse, ``plan.degree`` 1).

    Sybils never connect to each other (the evaluation's sybils do not).

    Examples
    --------
    >>> from hedgerow.scenarios.attackers import SybilPlan
    >>> honest = np.ones(30, dtype=bool); honest[[3, 7]] = False
    >>> subs = np.ones((30, 1), dtype=bool)
    >>> c = attack_connections(honest, SybilPlan(degree=5), 6, np.random.default_rng(0), subs, 4)
    >>> row = c.row_of
    >>> bool(honest[c.indices[~honest[row]]].all()), int((~honest[row]).sum())
    (True, 10)
    """
    honest = np.asarray(honest, dtype=bool)
    good = np.flatnonzero(honest)
    bad = np.flatnonzero(~honest)
    n = len(honest)
    inner = random_connections(len(good), peers, rng, subs[good], topic_peers=topic_peers)
    edges = [np.column_stack([good[inner.row_of], good[inner.indices]])[
        inner.outbound.astype(bool)]]
    for s in bad.tolist():
        if plan.target >= 0 and plan.degree == 1:
            peers_of = np.array([plan.target])
        else:
            k = min(plan.degree, len(good))
            peers_of = good[rng.choice(len(good), size=k, replace=False)]
        edges.append(np.column_stack([np.full(len(peers_of), s), peers_of]))
    return Connections.from_edges(n, np.concatenate(edges).astype(np.int64))


def _engine_attack(attack: Any, conn: Connections) -> EngineAttack:
    """The kernel's view of a world's attackers (topic attackers or sybils)."""
    honest = np.asarray(attack.honest, dtype=bool)
    plan = attack.sybil
    if plan is None:  # Topiary's topic attackers: honest but for the victim topic
        return EngineAttack(sybil=np.zeros(len(honest), dtype=bool), drop=~honest,
                            topic=int(attack.victim_topic), start_ms=0.0)
    row = conn.row_of
    both = honest[row] & honest[conn.indices]
    conn_up = np.where(both, plan.honest_join_ms, plan.join_ms)
    censor = attack.kind == "sybil-censor"
    return EngineAttack(sybil=~honest, drop=~honest, conn_up_ms=conn_up,
                        target=plan.target if censor else -1, start_ms=plan.after_ms,
                        liar=~honest if attack.kind == "sybil-liar" else None)


def _refuse_early(n: int, topics: int, peers: int, messages: int, ring: int,
                  min_subs: int = 0) -> None:
    """Refuse a size whose engine cannot fit before its connections are drawn.

    Drawing them costs minutes at 100,000 nodes (186 CPU s measured), and the engine's own
    check (:func:`~hedgerow.protocols.gossipsub.engine.engine_bytes`) comes after.  This one
    counts the connection entries every node's own dials already make, ``2 n ceil(peers/2)``
    less the expected share of pairs that dial each other, no (connection, topic) slot (which
    topics two ends share is known only once they are drawn) and ``min_subs`` (the fewest
    topics a node subscribes to) kept topic peers per entry, so it refuses only what the
    engine would refuse too.

    Examples
    --------
    >>> _refuse_early(1000, 100, 50, 1000, 32)
    >>> _refuse_early(10**7, 100, 50, 1000, 32)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub engine (10,000,000 nodes, at least 499,997,499 ...
    """
    if n < 2:
        return
    k = min(math.ceil(peers / 2), n - 1)
    nnz = int(2 * n * k * max(0.0, 1.0 - 2.0 * k / (n - 1)))
    check_memory(f"gossipsub engine ({n:,} nodes, at least {nnz:,} connection entries, "
                 f"{topics:,} topics)", engine_bytes(n, topics, nnz, k, messages, messages, ring,
                                                     slots=0.0, topic_peers=nnz * min_subs,
                                                     subscriptions=n * min_subs))


class GossipSub(ClockProtocol):
    """GossipSub with meshes, heartbeats, gossip and IDONTWANT on the contended network.

    Parameters
    ----------
    variant, D, D_lo, D_hi, D_lazy, D_score, D_out, heartbeat_ms, fanout_ttl_ms, mcache_len,
    mcache_gossip, seen_ttl_ms, gossip_factor, prune_backoff_ms, gossip_retransmission,
    max_ihave_length, max_ihave_messages, flood_publish, idontwant_threshold, scoring,
    graft_on_subscribe, iwant_followup_ms, opportunistic_graft_ticks,
    opportunistic_graft_peers, peer_exchange, prune_peers, control_rpc, connections
        The GossipSub parameters declared once in
        :data:`hedgerow.protocols.gossipsub.params.PARAMS` (their defaults are
        the v1.1 specification's; ``docs/gossipsub.md``), checked together by
        :func:`~hedgerow.protocols.gossipsub.params.check_gossipsub`.
    score_params : {"defaults", "ethereum", "hardening"}, default "defaults"
        With ``scoring``: the score parameters and thresholds of
        :func:`~hedgerow.protocols.gossipsub.params.score_preset` (the
        variant's, or Ethereum's), or the v1.1 evaluation's.
    opportunistic_graft_threshold : float, optional
        With ``scoring``: the opportunistic-graft threshold instead of the
        score parameters' one (the v1.1 evaluation's ``oppgraft`` plans).
    warmup_ms, drain_ms : float
        Simulated time before the first publication and after the last one.
    header_bytes, message_id_bytes, topic_bytes, px_record_bytes : float
        The wire sizes (``docs/gossipsub.md``).

    Attributes
    ----------
    engine_ : GossipSubEngine
        The engine of the last run (set by :meth:`clock_engine`).
    """

    name = "gossipsub"
    paper = ("libp2p gossipsub v1.0/v1.1/v1.2 specifications; Vyzovitis et al., GossipSub, "
             "arXiv:2007.02754 (2020)")
    forwarding = "topic"
    stream_key = "libp2p-gossipsub"
    #: the Topiary topic attackers (subscribed to the victim topic, forwarding none of it) and
    #: the GossipSub v1.1 evaluation's sybils (:class:`~hedgerow.scenarios.attackers.SybilPlan`)
    attacks = ("topic", "sybil", "sybil-eclipse", "sybil-censor", "sybil-liar")
    quick_params: ClassVar[Mapping[str, Any]] = {"connections": 12, "warmup_ms": 3000.0,
                                                  "drain_ms": 3000.0}
    params = {
        **{k: PARAMS[k] for k in ENGINE_PARAMS},
        "score_params": Choice("defaults", ("defaults", "ethereum", "hardening"),
                               "peer-score parameters with scoring: the JS implementation's "
                               "defaults, Ethereum's (score_preset), or the v1.1 evaluation's "
                               "(hardening_score_params)"),
        "opportunistic_graft_threshold": Float(
            None, "with scoring: the median mesh score below which a heartbeat grafts "
            "opportunistically (none: the score parameters' threshold; the v1.1 evaluation's "
            "oppgraft plans set 1 or 10)", optional=True),
        "warmup_ms": Float(10000.0, "simulated time before the first publication", low=0.0,
                           unit="ms"),
        "drain_ms": Float(60000.0, "simulated time after the last publication", low=0.0,
                          unit="ms"),
        "header_bytes": Float(100.0, "bytes of a data copy beyond its payload", low=0.0,
                              unit="bytes"),
        "message_id_bytes": Float(20.0, "bytes of a message id", low=1.0, unit="bytes"),
        "topic_bytes": Float(40.0, "bytes of a topic name", low=1.0, unit="bytes"),
        "px_record_bytes": Float(215.0, "bytes of one peer-exchange record in a PRUNE (an "
                                 "Ed25519 peer id and its signed peer record)", low=0.0,
                                 unit="bytes"),
    }

    def _check(self, values: dict[str, Any]) -> None:
        checked = check_gossipsub({k: values[k] for k in ENGINE_PARAMS}, owner=self.name)
        values.update({k: checked[k] for k in ENGINE_PARAMS})  # derived values filled in
        settings(self._settings(values))

    def _settings(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The engine's settings of checked parameter values."""
        s = {CASE_PARAMS.get(k, k): values[k] for k in ENGINE_PARAMS if k != "connections"}
        for k in ("warmup_ms", "header_bytes", "message_id_bytes", "topic_bytes",
                  "px_record_bytes"):
            s[k] = values[k]
        return s

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        if instance.n_nodes < 2:
            raise ParameterError(f"{self.name}: needs at least 2 nodes", key="connections")

    def warmup_time(self) -> float:
        return float(self.checked()["warmup_ms"])

    def drain_time(self) -> float:
        return float(self.checked()["drain_ms"])

    def clock_engine(
        self,
        instance: Instance,
        network: Network,
        latency: LatencyModel,
        proc: np.ndarray,
        publications: Any,
        streams: RngStreams,
        attack: Any = None,
    ) -> GossipSubEngine:
        """The engine: connections from stream ``"connections"`` (about ``connections`` per
        node, and at least ``D`` subscribed peers per topic where there are as many,
        :func:`~hedgerow.protocols.gossipsub.engine.random_connections`), the kernel's draws
        from ``"gossipsub"``; ``publications`` a
        :class:`~hedgerow.protocols.engine_api.Publications`.  ``attack`` (an
        :class:`~hedgerow.scenarios.attackers.AttackSetup` of :attr:`attacks`):
        topic attackers drop the victim topic; sybils connect as
        :func:`attack_connections` draws, act as
        :class:`~hedgerow.protocols.gossipsub.engine.EngineAttack` states and,
        with ``attacker_ips``, share IP groups (P6)."""
        values = self._validate(instance)
        if not isinstance(publications, Publications):
            raise ParameterError(f"{self.name}: publications must be a Publications schedule",
                                 key="publications")
        s = self._settings(values)
        subs = interest_matrix(instance.masks, instance.n_topics)
        plan = None if attack is None else attack.sybil
        if plan is None:
            _refuse_early(instance.n_nodes, instance.n_topics, values["connections"],
                          len(publications), idontwant_ring(settings(s), publications.size),
                          int(subs.sum(axis=1).min(initial=0)))
            conn = random_connections(instance.n_nodes, values["connections"],
                                      streams.stream("connections"), subs,
                                      topic_peers=values["D"])
        else:
            conn = attack_connections(attack.honest, plan, values["connections"],
                                      streams.stream("connections"), subs, values["D"])
        score_fn = None
        if s["scoring"]:
            ip_group = None
            if plan is not None and plan.ips > 0:
                group = np.full(instance.n_nodes, -1, dtype=np.int64)
                group[attack.attackers] = np.arange(len(attack.attackers)) % plan.ips
                ip_group = group[conn.indices]
            if values["score_params"] == "hardening":
                params = hardening_score_params(instance.n_topics,
                                                colocation=ip_group is not None)
                thresholds = HARDENING_THRESHOLDS
                first = params.topics[0] if params.topics else None
                if first is not None:  # the kernel's near-first window is the topics' one
                    s["mesh_window_ms"] = first.mesh_deliveries_window_ms
            else:
                params, thresholds = score_preset(
                    "ethereum" if values["score_params"] == "ethereum" else s["variant"],
                    instance.n_topics)
            s["gossip_threshold"], s["publish_threshold"] = thresholds.gossip, thresholds.publish
            s["accept_px_threshold"] = thresholds.accept_px
            s["opportunistic_graft_threshold"] = (
                thresholds.opportunistic_graft if values["opportunistic_graft_threshold"] is None
                else values["opportunistic_graft_threshold"])
            score_fn = EngineScore(params, ip_group)
        delay = edge_delays(conn.indptr, conn.indices, latency)
        engine_attack = None
        if attack is not None:
            engine_attack = _engine_attack(attack, conn)
        self.engine_ = GossipSubEngine(subs, conn, delay, proc, network, publications, s,
                                       streams.stream("gossipsub"), score_fn=score_fn,
                                       attack=engine_attack)
        return self.engine_

    def heartbeat_bounds(self, engine: Any) -> list[str]:
        """Every subscribed node's mesh within ``[d_lo, d_hi]`` right after a heartbeat, unless
        fewer than ``d_lo`` subscribed peers could be grafted (connected, the connection open,
        not backed off); sybils keep no bounds and are not checked.  With scoring (v1.1),
        an opportunistic graft may leave a mesh up to ``opportunistic_graft_peers`` above
        ``D_hi`` until the next heartbeat prunes it, as go-libp2p-pubsub's does."""
        values = self.checked()
        d_lo, d_hi = values["D_lo"], values["D_hi"]
        hi_ok = d_hi
        if values["scoring"] and values["variant"] != "v1.0":
            hi_ok += values["opportunistic_graft_peers"]
        deg = engine.mesh_degree()
        flags = engine.mesh_flags()
        back = engine.backoff_until()
        conn = engine.connections
        sub = engine.subs
        row = conn.row_of
        peer_sub = sub[conn.indices]  # (nnz, T)
        free = peer_sub & ~flags
        if values["variant"] != "v1.0":
            free &= back <= engine.now
        attack = engine.attack
        if attack is not None:
            if attack.conn_up_ms is not None:
                free &= (np.asarray(attack.conn_up_ms) <= engine.now)[:, None]
            sub = sub & ~np.asarray(attack.sybil, dtype=bool)[:, None]
        spare = np.zeros_like(deg)
        np.add.at(spare, row, free.astype(np.int64))
        out = []
        bad_hi = sub & (deg > hi_ok)
        bad_lo = sub & (deg < d_lo) & (spare > 0)
        for v, t in np.argwhere(bad_hi)[:3]:
            out.append(f"node {v} topic {t}: mesh {deg[v, t]} > D_hi {d_hi}")
        for v, t in np.argwhere(bad_lo)[:3]:
            out.append(f"node {v} topic {t}: mesh {deg[v, t]} < D_lo {d_lo} with "
                       f"{spare[v, t]} peers it could graft")
        return out
