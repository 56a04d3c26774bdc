"""GossipSub as deployed (libp2p gossipsub v1.0, v1.1, v1.2): the registered protocol ``gossipsub``.

Papers and specifications: Vyzovitis et al., "GossipSub: Attack-Resilient
Message Propagation in the Filecoin and ETH2.0 Networks", arXiv:2007.02754
(2020); libp2p/specs ``pubsub/gossipsub/gossipsub-v1.0.md``, ``-v1.1.md``,
``-v1.2.md``.  Where the specifications leave a choice open, the engine
follows go-libp2p-pubsub's ``gossipsub.go`` (``docs/gossipsub.md`` lists each).

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
from hedgerow.params import Bool, Choice, Float, Int
from hedgerow.protocols.base import ClockProtocol
from hedgerow.protocols.gossipsub.engine import (
    VARIANTS,
    GossipSubEngine,
    Publications,
    ScoreFn,
    random_connections,
    settings,
)

__all__ = ["GossipSub", "score_function"]


def score_function(values: Mapping[str, Any]) -> ScoreFn:
    """The peer-score function of the v1.1 scoring module, for an engine with ``scoring`` on.

    Peer scoring lives in ``hedgerow.protocols.gossipsub.scoring``; without it
    a run with ``scoring`` on is refused with a one-line error.
    """
    try:
        from hedgerow.protocols.gossipsub import scoring  # type: ignore[attr-defined]
    except ImportError:
        raise ParameterError(
            "gossipsub: scoring needs the peer-score module (hedgerow.protocols.gossipsub."
            "scoring), which this installation lacks; run with scoring=false",
            key="scoring",
        ) from None
    return scoring.engine_score_function(values)  # type: ignore[no-any-return]


class GossipSub(ClockProtocol):
    """GossipSub with meshes, heartbeats, gossip and IDONTWANT on the contended network.

    Parameters
    ----------
    variant : {"v1.0", "v1.1", "v1.2"}, default "v1.1"
        v1.0 meshes and gossip; v1.1 adds prune backoff, D_out, flood
        publishing, gossip_factor (and scoring); v1.2 adds IDONTWANT.
    d, d_lo, d_hi, d_lazy, d_score, d_out : int
        Mesh degree target and bounds, gossip peers, peers kept by score and
        outbound peers kept (6, 4, 12, 6, 4, 2: the specification's defaults).
    heartbeat_ms, mcache_len, mcache_gossip, gossip_factor, fanout_ttl_ms, seen_ttl_ms,
    prune_backoff_ms, gossip_retransmission, flood_publish, idontwant_threshold
        As the specifications name them (``docs/gossipsub.md``).
    peers : int, default 50
        Connections each node keeps (it dials half of them).
    warmup_ms, drain_ms : float
        Simulated time before the first publication and after the last one.
    header_bytes, message_id_bytes, topic_bytes : float
        The wire sizes (``docs/gossipsub.md``).
    max_ihave_length, max_ihave_messages : int
        go-libp2p-pubsub's caps on IHAVE ids asked per heartbeat and IHAVEs
        taken per peer per heartbeat.
    scoring : bool, default False
        Peer scoring (v1.1).

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
    quick_params: ClassVar[Mapping[str, Any]] = {"peers": 12, "warmup_ms": 3000.0,
                                                  "drain_ms": 3000.0}
    params = {
        "variant": Choice("v1.1", VARIANTS, "specification version"),
        "d": Int(6, "mesh degree target D", low=1, unit="peers"),
        "d_lo": Int(4, "lower mesh bound D_lo: GRAFT below it", low=0, unit="peers"),
        "d_hi": Int(12, "upper mesh bound D_hi: PRUNE above it", low=1, unit="peers"),
        "d_lazy": Int(6, "gossip peers D_lazy per topic per heartbeat", low=0, unit="peers"),
        "d_score": Int(4, "mesh peers kept by score when pruning (v1.1)", low=0, unit="peers"),
        "d_out": Int(2, "outbound mesh peers kept (v1.1)", low=0, unit="peers"),
        "heartbeat_ms": Float(1000.0, "heartbeat interval", low=0.0, low_open=True,
                              unit="ms"),
        "mcache_len": Int(5, "message cache windows (heartbeats)", low=1),
        "mcache_gossip": Int(3, "windows of ids an IHAVE lists", low=1),
        "gossip_factor": Float(0.25, "share of eligible peers gossiped to (v1.1)", low=0.0,
                               high=1.0),
        "fanout_ttl_ms": Float(60000.0, "fanout kept after the last publication", low=0.0,
                               unit="ms"),
        "seen_ttl_ms": Float(120000.0, "seen-cache lifetime of a message id", low=0.0,
                             low_open=True, unit="ms"),
        "prune_backoff_ms": Float(60000.0, "no re-GRAFT of a pruned peer before (v1.1)",
                                  low=0.0, unit="ms"),
        "gossip_retransmission": Int(3, "IWANT answers per message per peer", low=0),
        "flood_publish": Bool(True, "a publisher sends to every subscribed peer (v1.1)"),
        "idontwant_threshold": Float(1024.0, "IDONTWANT for messages of at least this many "
                                     "bytes (v1.2; none: off)", low=0.0, unit="bytes",
                                     optional=True),
        "peers": Int(50, "connections each node keeps", low=1, unit="peers"),
        "warmup_ms": Float(10000.0, "simulated time before the first publication", low=0.0,
                           unit="ms"),
        "drain_ms": Float(10000.0, "simulated time after the last publication", low=0.0,
                          unit="ms"),
        "header_bytes": Float(100.0, "bytes of a data copy beyond its payload", low=0.0,
                              unit="bytes"),
        "message_id_bytes": Float(20.0, "bytes of a message id", low=1.0, unit="bytes"),
        "topic_bytes": Float(40.0, "bytes of a topic name", low=1.0, unit="bytes"),
        "max_ihave_length": Int(5000, "ids asked per peer per heartbeat", low=1),
        "max_ihave_messages": Int(10, "IHAVEs taken per peer per heartbeat", low=1),
        "scoring": Bool(False, "peer scoring (v1.1)"),
    }

    def _check(self, values: dict[str, Any]) -> None:
        settings(self._settings(values))

    def _settings(self, values: Mapping[str, Any]) -> dict[str, Any]:
        skip = ("peers", "drain_ms")
        return {k: v for k, v in values.items() if k not in skip}

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        if instance.n_nodes < 2:
            raise ParameterError(f"{self.name}: needs at least 2 nodes", key="peers")

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
    ) -> GossipSubEngine:
        """The engine: connections from stream ``"connections"``, the kernel's draws from
        ``"gossipsub"``; ``publications`` a
        :class:`~hedgerow.protocols.gossipsub.engine.Publications`."""
        values = self._validate(instance)
        if not isinstance(publications, Publications):
            raise ParameterError(f"{self.name}: publications must be a Publications schedule",
                                 key="publications")
        s = self._settings(values)
        conn = random_connections(instance.n_nodes, values["peers"],
                                  streams.stream("connections"))
        delay = edge_delays(conn.indptr, conn.indices, latency)
        subs = interest_matrix(instance.masks, instance.n_topics)
        score = score_function(s) if s["scoring"] else None
        self.engine_ = GossipSubEngine(subs, conn, delay, proc, network, publications, s,
                                       streams.stream("gossipsub"), score_fn=score)
        return self.engine_

    def heartbeat_bounds(self, engine: Any) -> list[str]:
        """Every subscribed node's mesh within ``[d_lo, d_hi]`` right after a heartbeat, unless
        fewer than ``d_lo`` subscribed peers could be grafted (connected, not backed off)."""
        values = self.checked()
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
        spare = np.zeros_like(deg)
        np.add.at(spare, row, free.astype(np.int64))
        out = []
        bad_hi = sub & (deg > values["d_hi"])
        bad_lo = sub & (deg < values["d_lo"]) & (spare > 0)
        for v, t in np.argwhere(bad_hi)[:3]:
            out.append(f"node {v} topic {t}: mesh {deg[v, t]} > d_hi {values['d_hi']}")
        for v, t in np.argwhere(bad_lo)[:3]:
            out.append(f"node {v} topic {t}: mesh {deg[v, t]} < d_lo {values['d_lo']} with "
                       f"{spare[v, t]} peers it could graft")
        return out
