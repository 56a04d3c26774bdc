"""The GossipSub engine: connections, publications and the kernel's state, driven by the clock.

:class:`GossipSubEngine` implements
:class:`hedgerow.protocols.engine_api.ClockEngine`.  It holds the connection
graph (undirected CSR, each connection's dialer), the publication schedule,
the contended network (:class:`~hedgerow.dissemination.contended.Network`:
each node's uplink, the validation delay) and every array of the numba kernel
(:mod:`hedgerow.protocols.gossipsub._kernel`), and runs it with
:meth:`~GossipSubEngine.run_until`.  With peer scoring on, the kernel brings
every connection's score up to date at each heartbeat itself
(:mod:`~hedgerow.protocols.gossipsub._scorekernel`); a score function of its
own stops the kernel before every heartbeat and is called on the counters
(:meth:`~GossipSubEngine.counters`), once per heartbeat.

Examples
--------
>>> import numpy as np
>>> from hedgerow.dissemination.contended import Network
>>> subs = np.ones((4, 1), dtype=bool)
>>> conn = Connections.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
>>> pubs = Publications.create([0], [0], [1500.0], [1000.0])
>>> eng = GossipSubEngine(subs, conn, np.full(conn.nnz, 10.0), np.zeros(4),
...                       Network.uniform(4), pubs, {"d": 2, "d_lo": 1, "d_hi": 3,
...                       "d_lazy": 1, "d_score": 1, "d_out": 0}, np.random.default_rng(1))
>>> eng.run_until(5000.0)
>>> bool(np.isfinite(eng.arrival).all()), eng.heartbeats
(True, 5)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from hedgerow.dissemination.contended import (
    BYTES_PER_MS_PER_MBPS,
    ContendedDelivery,
    Network,
)
from hedgerow.errors import ParameterError
from hedgerow.metrics.delivery import delivery_measures
from hedgerow.model.overlay import Overlay
from hedgerow.params import check_memory
from hedgerow.protocols.engine_api import Publications
from hedgerow.protocols.gossipsub import _kernel as K
from hedgerow.protocols.gossipsub import _scorekernel as ZK
from hedgerow.protocols.gossipsub.params import VARIANTS
from hedgerow.protocols.gossipsub.scoring import ScoreCounters

__all__ = [
    "CASE_PARAMS",
    "DEFAULTS",
    "Connections",
    "EngineAttack",
    "GossipSubEngine",
    "Publications",
    "engine_bytes",
    "idontwant_ring",
    "random_connections",
]

#: every setting of the engine and its default (the v1.1 specification's and go-libp2p-pubsub's
#: values; ``docs/gossipsub.md``); a protocol's declared parameters fill them
DEFAULTS: dict[str, Any] = {
    "variant": "v1.1",
    "d": 6,
    "d_lo": 4,
    "d_hi": 12,
    "d_lazy": 6,
    "d_score": 4,
    "d_out": 2,
    "heartbeat_ms": 1000.0,
    "mcache_len": 5,
    "mcache_gossip": 3,
    "gossip_factor": 0.25,
    "fanout_ttl_ms": 60000.0,
    "seen_ttl_ms": 120000.0,
    "prune_backoff_ms": 60000.0,
    "gossip_retransmission": 3,
    "flood_publish": True,
    "idontwant_threshold": 1024.0,
    "max_ihave_length": 5000,
    "max_ihave_messages": 10,
    "header_bytes": 100.0,
    "message_id_bytes": 20.0,
    "topic_bytes": 40.0,
    "warmup_ms": 0.0,
    "scoring": False,
    "gossip_threshold": -math.inf,
    "publish_threshold": -math.inf,
    "mesh_window_ms": 10.0,
    "idontwant_memory": 32,
    "graft_on_subscribe": False,
    "heartbeat_phase": "sync",
    "control_rpc": "per-peer",
    "iwant_followup_ms": 3000.0,
    "max_prune": 0,
    "opportunistic_graft_ticks": 60,
    "opportunistic_graft_peers": 2,
    "opportunistic_graft_threshold": 0.0,
    "peer_exchange": False,
    "prune_peers": 16,
    "accept_px_threshold": 0.0,
    "px_record_bytes": 215.0,
}

#: how the nodes' heartbeats are placed in time (``heartbeat_phase``)
HEARTBEAT_PHASES = ("sync", "random")
#: how control messages leave (``control_rpc``): a heartbeat's to one peer in one RPC, as the
#: deployed implementations send them, or each in an RPC of its own
CONTROL_RPCS = ("per-peer", "per-message")

#: the case format's (and the declared parameters') names -> the engine's settings
CASE_PARAMS = {
    "variant": "variant",
    "D": "d",
    "D_lo": "d_lo",
    "D_hi": "d_hi",
    "D_lazy": "d_lazy",
    "D_score": "d_score",
    "D_out": "d_out",
    "heartbeat_ms": "heartbeat_ms",
    "mcache_len": "mcache_len",
    "mcache_gossip": "mcache_gossip",
    "gossip_factor": "gossip_factor",
    "fanout_ttl_ms": "fanout_ttl_ms",
    "seen_ttl_ms": "seen_ttl_ms",
    "prune_backoff_ms": "prune_backoff_ms",
    "gossip_retransmission": "gossip_retransmission",
    "max_ihave_length": "max_ihave_length",
    "max_ihave_messages": "max_ihave_messages",
    "flood_publish": "flood_publish",
    "idontwant_threshold": "idontwant_threshold",
    "scoring": "scoring",
    "graft_on_subscribe": "graft_on_subscribe",
    "heartbeat_phase": "heartbeat_phase",
    "control_rpc": "control_rpc",
    "iwant_followup_ms": "iwant_followup_ms",
    "opportunistic_graft_ticks": "opportunistic_graft_ticks",
    "opportunistic_graft_peers": "opportunistic_graft_peers",
    "peer_exchange": "peer_exchange",
    "prune_peers": "prune_peers",
}


@dataclass(frozen=True, eq=False)
class Connections:
    """An undirected connection graph as CSR, with the dialer of every connection.

    Attributes
    ----------
    indptr, indices : numpy.ndarray
        CSR rows (int64), both directions of every connection, sorted.
    outbound : numpy.ndarray
        ``(nnz,)`` uint8: entry ``v -> w`` is outbound for ``v`` (``v`` dialed ``w``).
    rev : numpy.ndarray
        ``(nnz,)`` int64: the entry ``w -> v`` of every entry ``v -> w``.
    """

    indptr: np.ndarray
    indices: np.ndarray
    outbound: np.ndarray
    rev: np.ndarray

    @property
    def n(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.indices)

    @property
    def row_of(self) -> np.ndarray:
        """``(nnz,)`` the node each CSR entry starts at."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    @classmethod
    def from_edges(cls, n: int, edges: ArrayLike) -> Connections:
        """Connections from ``[a, b]`` pairs, ``a`` the dialer (0-based; a pair given both ways
        is one connection, outbound for both ends).

        Examples
        --------
        >>> c = Connections.from_edges(3, [(0, 1), (2, 1)])
        >>> c.indices.tolist(), c.outbound.tolist(), c.rev.tolist()
        ([1, 0, 2, 1], [1, 0, 0, 1], [1, 0, 3, 2])
        """
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if len(e) and (e.min() < 0 or e.max() >= n):
            raise ParameterError(f"edges: node ids must be in 0..{n - 1}", key="edges")
        if (e[:, 0] == e[:, 1]).any():
            raise ParameterError("edges: a node cannot connect to itself", key="edges")
        src = np.concatenate([e[:, 0], e[:, 1]])
        dst = np.concatenate([e[:, 1], e[:, 0]])
        out = np.concatenate([np.ones(len(e), np.uint8), np.zeros(len(e), np.uint8)])
        order = np.lexsort((-out.astype(np.int64), dst, src))
        src, dst, out = src[order], dst[order], out[order]
        # one entry per ordered pair: outbound if any of its copies is
        first = np.ones(len(src), dtype=bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst, out = src[first], dst[first], out[first]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        key = src * n + dst
        rev = np.searchsorted(key, dst * n + src).astype(np.int64)
        return cls(indptr, dst.astype(np.int64), out.astype(np.uint8), rev)


@dataclass(frozen=True, eq=False)
class EngineAttack:
    """Attackers as the kernel sees them: per-node flags, when each connection opens, what
    they drop.

    Attributes
    ----------
    sybil : numpy.ndarray
        ``(n,)`` bool: nodes that behave as the hardening evaluation's sybils
        (``gossipsub-hardening``'s ``badboy.go``): they graft every peer of
        every topic the peer subscribes to, accept every GRAFT, send no IHAVE,
        ignore IHAVE and IWANT, and after a PRUNE graft again once the backoff
        and a uniform delay in ``[0, regraft_ms)`` have passed.
    drop : numpy.ndarray
        ``(n,)`` bool: nodes that forward nothing of the messages named by
        ``topic`` and ``target`` from ``start_ms`` on (nor cache them, so they
        neither announce nor serve them).
    conn_up_ms : numpy.ndarray or None
        ``(nnz,)``: the instant each connection (CSR entry) opens; before it no
        GRAFT, IHAVE, fanout or flood-published copy uses it (``None``: all open
        from the start).
    topic : int
        The topic whose messages are dropped (``-1``: every topic).
    target : int
        The publisher whose messages are dropped (``-1``: every publisher's).
    start_ms : float
        When the dropping starts.
    regraft_ms : float
        A sybil's extra random wait after a PRUNE's backoff.
    liar : numpy.ndarray or None
        ``(n,)`` bool: sybils that announce what they receive (an IHAVE of its
        id to every peer as soon as they have it, and their gossip at every
        heartbeat) but serve no IWANT, forward nothing and graft nobody: every
        IWANT sent to them is a broken promise (P7).

    Examples
    --------
    >>> a = EngineAttack(sybil=np.array([False, True]), drop=np.array([False, True]))
    >>> a.flags().tolist()
    [0, 3]
    """

    sybil: np.ndarray
    drop: np.ndarray
    conn_up_ms: np.ndarray | None = None
    topic: int = -1
    target: int = -1
    start_ms: float = 0.0
    regraft_ms: float = 15000.0
    liar: np.ndarray | None = None

    def flags(self) -> np.ndarray:
        """``(n,)`` uint8: the kernel's flags (``ATK_SYBIL | ATK_DROP | ATK_LIAR``)."""
        f = (np.asarray(self.sybil, dtype=bool) * K.ATK_SYBIL
             + np.asarray(self.drop, dtype=bool) * K.ATK_DROP)
        if self.liar is not None:
            f = f + np.asarray(self.liar, dtype=bool) * K.ATK_LIAR
        return f.astype(np.uint8)


def random_connections(
    n: int,
    peers: int,
    rng: np.random.Generator,
    subs: np.ndarray | None = None,
    topic_peers: int = 0,
) -> Connections:
    """Each node dials ``ceil(peers / 2)`` distinct uniform others (so about ``peers`` each).

    As a libp2p node keeps a target number of peers, half of them dialed by
    itself; ``peers`` is capped at ``n - 1``.  With ``subs`` (``(n, T)`` bool)
    and ``topic_peers``, a node then dials, for each topic it subscribes to
    with fewer than ``topic_peers`` connected subscribers, uniform other
    subscribers of that topic up to ``topic_peers`` (or all there are), as
    Ethereum clients look for peers on their subnets; nodes in node order,
    topics in topic order.

    Examples
    --------
    >>> c = random_connections(100, 20, np.random.default_rng(0))
    >>> bool(15 <= np.diff(c.indptr).mean() <= 20), bool((c.indices != c.row_of).all())
    (True, True)
    >>> subs = np.zeros((100, 1), dtype=bool); subs[:8] = True
    >>> c = random_connections(100, 4, np.random.default_rng(0), subs, topic_peers=6)
    >>> have = np.bincount(c.row_of, weights=subs[c.indices, 0], minlength=100)
    >>> bool((have[:8] >= 6).all())
    True
    """
    if n < 2:
        return Connections.from_edges(n, np.zeros((0, 2), dtype=np.int64))
    k = min(math.ceil(peers / 2), n - 1)
    pick = np.empty((n, k), dtype=np.int64)
    for v in range(n):
        w = rng.choice(n - 1, size=k, replace=False)
        pick[v] = w + (w >= v)
    edges = np.column_stack([np.repeat(np.arange(n), k), pick.reshape(-1)])
    conn = Connections.from_edges(n, edges)
    if subs is None or topic_peers <= 0:
        return conn
    sub = np.asarray(subs, dtype=bool)
    have = np.zeros(sub.shape, dtype=np.int64)
    np.add.at(have, conn.row_of, sub[conn.indices])
    members = [np.flatnonzero(sub[:, t]) for t in range(sub.shape[1])]
    extra: list[tuple[int, int]] = []
    linked = [set(conn.indices[conn.indptr[v]:conn.indptr[v + 1]].tolist()) for v in range(n)]
    for v, t in np.argwhere(sub & (have < topic_peers)).tolist():
        need = topic_peers - int(have[v, t])
        # the free subscribers are members[t] without v and v's peers, in id order; the
        # k-th of them is found by stepping over the taken ids' places (as if listed)
        pool = members[t]
        taken = np.fromiter(linked[v], dtype=np.int64, count=len(linked[v]))
        taken = np.unique(np.append(taken, v))
        at = np.searchsorted(pool, taken)
        inside = at < len(pool)
        at = at[inside][pool[at[inside]] == taken[inside]]
        n_free = len(pool) - len(at)
        if n_free <= 0 or need <= 0:
            continue
        chosen = rng.choice(n_free, size=min(need, n_free), replace=False)
        places = chosen + np.searchsorted(at - np.arange(len(at)), chosen, side="right")
        for i in places.tolist():
            u = int(pool[i])
            extra.append((v, u))
            linked[v].add(u)
            linked[u].add(v)
            have[u, sub[v] & sub[u]] += 1
            have[v, sub[v] & sub[u]] += 1
    if not extra:
        return conn
    return Connections.from_edges(n, np.concatenate([edges, np.array(extra, dtype=np.int64)]))


def settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """:data:`DEFAULTS` overridden by ``values`` (unknown names refused), checked."""
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        raise ParameterError(f"gossipsub: unknown setting {unknown[0]!r}; allowed: "
                             f"{', '.join(DEFAULTS)}", key=unknown[0])
    s = {**DEFAULTS, **values}
    if s["variant"] not in VARIANTS:
        raise ParameterError(f"gossipsub: variant must be one of {', '.join(VARIANTS)}, got "
                             f"{s['variant']!r}", key="variant")
    if not (0 <= s["d_lo"] <= s["d"] <= s["d_hi"]):
        raise ParameterError(f"gossipsub: need d_lo <= d <= d_hi, got {s['d_lo']}, {s['d']}, "
                             f"{s['d_hi']}", key="d")
    if s["d_out"] > s["d_lo"] or 2 * s["d_out"] > s["d"]:
        raise ParameterError(f"gossipsub: need d_out <= d_lo and d_out <= d / 2 (v1.1), got "
                             f"{s['d_out']}", key="d_out")
    if s["d_score"] > s["d"]:
        raise ParameterError(f"gossipsub: need d_score <= d, got {s['d_score']}", key="d_score")
    if not (1 <= s["mcache_gossip"] <= s["mcache_len"]):
        raise ParameterError(f"gossipsub: need 1 <= mcache_gossip <= mcache_len, got "
                             f"{s['mcache_gossip']}", key="mcache_gossip")
    if s["heartbeat_phase"] not in HEARTBEAT_PHASES:
        raise ParameterError(f"gossipsub: heartbeat_phase must be one of "
                             f"{', '.join(HEARTBEAT_PHASES)}, got {s['heartbeat_phase']!r}",
                             key="heartbeat_phase")
    if s["control_rpc"] not in CONTROL_RPCS:
        raise ParameterError(f"gossipsub: control_rpc must be one of {', '.join(CONTROL_RPCS)}, "
                             f"got {s['control_rpc']!r}", key="control_rpc")
    if not s["heartbeat_ms"] > 0:
        raise ParameterError("gossipsub: heartbeat_ms must be positive", key="heartbeat_ms")
    for key in ("opportunistic_graft_ticks", "opportunistic_graft_peers", "prune_peers"):
        low = 1 if key == "opportunistic_graft_ticks" else 0
        if isinstance(s[key], bool) or not isinstance(s[key], (int, np.integer)) \
                or s[key] < low:
            raise ParameterError(f"gossipsub: {key} must be a whole number >= {low}, got "
                                 f"{s[key]!r}", key=key)
    if not s["px_record_bytes"] >= 0:
        raise ParameterError(f"gossipsub: px_record_bytes must be >= 0, got "
                             f"{s['px_record_bytes']!r}", key="px_record_bytes")
    return s


def _staging(s: Mapping[str, Any], nnz: int, max_deg: int, T: int) -> tuple[np.ndarray, ...]:
    """The kernel's room for the control messages of one heartbeat (or one answer) while they
    wait for their per-peer RPCs (``W[13:17]``): the parts (peer entry, kind, topic, ids'
    offset, count), a link per part, each entry's group (``-1``: none) and the groups (entry,
    first and last part); empty with ``control_rpc`` per-message."""
    if s["control_rpc"] != "per-peer":
        z = np.zeros(0, dtype=np.int64)
        return (z.reshape(0, 5), z, z, z.reshape(0, 3))
    parts = 2 * max(max_deg, 1) * T + T * (int(s["opportunistic_graft_peers"]) + 1) + 8
    return (np.zeros((parts, 5), dtype=np.int64), np.zeros(parts, dtype=np.int64),
            np.full(nnz, -1, dtype=np.int64), np.zeros((max(max_deg, 1) + 1, 3), dtype=np.int64))


def _param_vector(s: Mapping[str, Any]) -> np.ndarray:
    P = np.zeros(K.N_PARAMS)
    P[K.P_D], P[K.P_DLO], P[K.P_DHI] = s["d"], s["d_lo"], s["d_hi"]
    P[K.P_DLAZY], P[K.P_DSCORE], P[K.P_DOUT] = s["d_lazy"], s["d_score"], s["d_out"]
    P[K.P_HB], P[K.P_MCLEN], P[K.P_MCGOSSIP] = s["heartbeat_ms"], s["mcache_len"], s[
        "mcache_gossip"]
    P[K.P_GFACTOR], P[K.P_FANOUT_TTL] = s["gossip_factor"], s["fanout_ttl_ms"]
    P[K.P_SEEN_TTL], P[K.P_BACKOFF] = s["seen_ttl_ms"], s["prune_backoff_ms"]
    P[K.P_RETRANS], P[K.P_FLOOD] = s["gossip_retransmission"], float(bool(s["flood_publish"]))
    thr = s["idontwant_threshold"]
    P[K.P_IDW] = math.inf if thr is None else float(thr)
    P[K.P_VARIANT] = VARIANTS.index(s["variant"])
    P[K.P_MAX_IHAVE_LEN], P[K.P_MAX_IHAVE_MSGS] = s["max_ihave_length"], s["max_ihave_messages"]
    P[K.P_HEADER], P[K.P_ID_BYTES], P[K.P_TOPIC_BYTES] = (
        s["header_bytes"], s["message_id_bytes"], s["topic_bytes"])
    P[K.P_GOSSIP_THR], P[K.P_PUBLISH_THR] = s["gossip_threshold"], s["publish_threshold"]
    P[K.P_MESH_WINDOW], P[K.P_WARMUP] = s["mesh_window_ms"], s["warmup_ms"]
    P[K.P_SCORING] = float(bool(s["scoring"]))
    P[K.P_GRAFT_ON_SUB] = float(bool(s["graft_on_subscribe"]))
    P[K.P_HB_PHASE] = float(HEARTBEAT_PHASES.index(s["heartbeat_phase"]))
    P[K.P_FOLLOWUP] = s["iwant_followup_ms"]
    P[K.P_MAX_PRUNE] = s["max_prune"]
    P[K.P_OG_TICKS], P[K.P_OG_PEERS] = (s["opportunistic_graft_ticks"],
                                        s["opportunistic_graft_peers"])
    P[K.P_OG_THR] = s["opportunistic_graft_threshold"]
    P[K.P_PX], P[K.P_PRUNE_PEERS] = float(bool(s["peer_exchange"])), s["prune_peers"]
    P[K.P_PX_RECORD_BYTES] = s["px_record_bytes"]
    P[K.P_ACCEPT_PX_THR] = s["accept_px_threshold"]
    P[K.P_CONTROL_RPC] = float(CONTROL_RPCS.index(s["control_rpc"]) == 0)
    return P


#: rows (slots) the engine starts with when it does not keep every arrival; they double as needed
_FIRST_SLOTS = 64
#: the width (ms) of the delay histogram's bins when arrivals are not kept, and their number
#: (the last bin also holds every longer delay)
HIST_BIN_MS = 0.1
_HIST_BINS = 1 << 21


#: a score function: ``score(counters, now_ms) -> (nnz,)`` score of every connection
ScoreFn = Callable[[Mapping[str, np.ndarray], float], np.ndarray]


def engine_bytes(n: int, topics: int, nnz: int, max_deg: int, rows: int, messages: int,
                 ring: int = 32, slots: float | None = None,
                 topic_peers: float | None = None, subscriptions: float | None = None) -> float:
    """Bytes a run of :class:`GossipSubEngine` holds beyond its world, counted before it starts.

    Per (message row, node): arrival and queue delay (8 B each), hops and parent (4 B each),
    and the arrivals relative to publication that the epoch's delivery keeps (8 B).  Per
    (connection, topic) slot (``slots`` of them, the topics both ends of a connection may
    use, :func:`~hedgerow.protocols.gossipsub._kernel.slot_map`; ``None``: every connection
    entry x every topic): the mesh flag, backoff, graft time, two delivery counters, its
    topic and connection (42 B at most, counted as 48) and its place in a mesh list (4 B).
    Per kept topic peer (``topic_peers``, an entry and a topic its peer subscribes to;
    ``None``: every entry x every topic): 4 B.  Per (node, topic): the mesh size, last
    publication, mesh-size sums, the mesh list's and the topic peers' row pointers and the
    subscription (48 B).  Per connection entry: the IDONTWANT ring (``ring`` ids and times,
    12 B each) and about 88 B of counters.  The event heap (40 B an event): it holds about
    32 events per (node, subscribed topic) at its largest (``subscriptions``; ``None``: every
    node subscribes to every topic), at least ``4 (messages + n)``, while a heartbeat's
    GRAFTs and gossip and the copies of the messages in flight wait (32 B an event:
    an instant, a key, two ``int32`` ids and a packed word; counted as 40).

    Tested against the engine's own arrays after a whole run (within 25 %), and measured
    against peak resident memory: 15 % over the rise at 10,000 and 100,000 nodes
    (``docs/performance.md``, "Where the heavy 100,000-node runs' memory goes").

    Examples
    --------
    >>> round(engine_bytes(10_000, 100, 528_652, 75, 1000, 1000) / 2**30, 2)  # every slot
    4.52
    >>> round(engine_bytes(10_000, 100, 528_652, 75, 1000, 1000, slots=528_652 * 4.0,
    ...                    topic_peers=528_652 * 20.0, subscriptions=200_000) / 2**30, 2)
    0.96
    """
    nf, T, e = float(n), float(topics), float(nnz)
    sl = e * T if slots is None else float(slots)
    tpe = e * T if topic_peers is None else float(topic_peers)
    subs = nf * T if subscriptions is None else float(subscriptions)
    heap = 40.0 * max(32.0 * subs, 4.0 * (float(messages) + nf))
    return (float(rows) * nf * 32.0 + sl * 52.0 + tpe * 4.0 + nf * T * 48.0
            + 4.0 * max(max_deg, 1) + e * (12.0 * max(ring, 1) + 88.0) + heap)


def idontwant_ring(params: Mapping[str, Any], sizes: ArrayLike) -> int:
    """The ids each connection's IDONTWANT ring keeps: ``idontwant_memory`` when an IDONTWANT
    can be sent (v1.2 and some message of at least ``idontwant_threshold`` bytes), else 1.

    A ring is written only by an IDONTWANT and read only under v1.2, so a run that sends none
    reads the same from a ring of one unused place as from ``idontwant_memory`` of them
    (12 bytes a place per connection entry: 1.9 GiB at 100,000 nodes for nothing).

    Examples
    --------
    >>> idontwant_ring({"variant": "v1.1", "idontwant_memory": 32}, [5000.0])
    1
    >>> s = {"variant": "v1.2", "idontwant_memory": 32, "idontwant_threshold": 1000}
    >>> idontwant_ring(s, [5000.0]), idontwant_ring(s, [10.0, 999.0])
    (32, 1)
    """
    ring = max(int(params["idontwant_memory"]), 1)
    thr = params.get("idontwant_threshold")
    size = np.asarray(sizes, dtype=np.float64)
    if (VARIANTS.index(params["variant"]) < 2 or thr is None or not size.size
            or float(size.max()) < float(thr)):
        return 1
    return ring


def topics_used(sub: np.ndarray, publisher: np.ndarray, topic: np.ndarray,
                attackers: np.ndarray | None = None) -> np.ndarray:
    """``(n, T)`` uint8: the topics each node may use, those it subscribes to or publishes on
    (fanout), every topic for an attacker (a sybil grafts every topic its peers subscribe
    to); a (connection, topic) slot exists where both ends use the topic
    (:func:`~hedgerow.protocols.gossipsub._kernel.slot_map`).

    Examples
    --------
    >>> sub = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=bool)
    >>> topics_used(sub, np.array([2]), np.array([0]), np.array([0, 1, 0])).tolist()
    [[1, 0, 0], [1, 1, 1], [1, 0, 0]]
    """
    uses = np.ascontiguousarray(sub, dtype=np.uint8).copy()
    uses[np.asarray(publisher, dtype=np.int64), np.asarray(topic, dtype=np.int64)] = 1
    if attackers is not None:
        uses[np.asarray(attackers) != 0] = 1
    return uses


class GossipSubEngine:
    """GossipSub on a contended network (:class:`~hedgerow.protocols.engine_api.ClockEngine`).

    Parameters
    ----------
    subs : numpy.ndarray
        ``(n, T)`` bool, node subscribes to topic.
    connections : Connections
        The connection graph.
    edge_delay : numpy.ndarray
        ``(nnz,)`` one-way delay (ms) of every CSR entry.
    proc : numpy.ndarray
        ``(n,)`` processing delay (ms) before a node forwards.
    network : Network
        Upload bandwidth, validation delay, loss and jitter (download queues
        are not modelled by this engine and are refused).  A lost data copy
        occupies the uplink and never arrives; control messages are never
        lost (``docs/network.md``); loss and jitter draw from the kernel's
        sequence, message by message as sent.
    publications : Publications
        Every message of the run.
    params : mapping
        Settings of :data:`DEFAULTS` (missing ones take the default).  With
        ``graft_on_subscribe`` every node announces its topics on every
        connection at t = 0 and a subscribed receiver below ``d_lo`` grafts
        the announcer at once (the JS implementation's ``graftOnSubscribe``).
    rng : numpy.random.Generator
        The run's stream (one 64-bit draw seeds the kernel's sequence).
    score_fn : callable, optional
        With ``scoring``: ``score_fn(counters, now_ms)`` at every heartbeat, the kernel
        stopping before each.  A score function with ``native`` set and its
        :class:`~hedgerow.protocols.gossipsub.scoring.PeerScoreParams` as ``params``
        (:class:`~hedgerow.protocols.gossipsub.protocol.EngineScore` by default) is not
        called: the kernel computes the same scores itself at each heartbeat
        (:mod:`~hedgerow.protocols.gossipsub._scorekernel`), without stopping.
    log : int, default 0
        Keep a log of the first ``log`` messages sent, data and control
        (:meth:`sent_log`; 0: none).
    keep_arrivals : bool, default True
        Keep every message's first arrival (and hops, parent, queueing delay)
        at every node for the whole run, as :meth:`delivery` returns them.
        ``False``: a message holds one of a few recycled rows (*slots*) only
        while it can still matter (a copy or a READY pending, an IHAVE or
        IWANT listing it in flight, an entry in some node's message cache);
        when the last of these goes its row is folded into per-message sums
        and a delay histogram (:meth:`delivery_summary`) and the slot is
        reused.  The run is the same event for event; memory is
        O(messages in flight x nodes) instead of O(messages x nodes).
    attack : EngineAttack, optional
        Attacker nodes and connections that open later (``None``: every node
        honest, every connection open from the start).
    phases : array_like, optional
        With ``heartbeat_phase="random"``: the instant (ms) of each node's
        first heartbeat, each in ``(0, heartbeat_ms]``, instead of drawing them
        (a case that fixes both implementations' heartbeats, ``case.py``).
    parallel_scores : bool, default False
        With the scores in the kernel: their pass over the connections at each heartbeat
        runs on numba's threads (each connection's arithmetic on its own state, so the
        scores and the run are the same bit for bit).  It pays only with a core to spare:
        on a shared machine the second thread costs more than it saves (``docs/gossipsub.md``).
    """

    def __init__(
        self,
        subs: np.ndarray,
        connections: Connections,
        edge_delay: ArrayLike,
        proc: ArrayLike,
        network: Network,
        publications: Publications,
        params: Mapping[str, Any],
        rng: np.random.Generator,
        score_fn: ScoreFn | None = None,
        log: int = 0,
        attack: EngineAttack | None = None,
        keep_arrivals: bool = True,
        phases: ArrayLike | None = None,
        parallel_scores: bool = False,
    ) -> None:
        s = settings(params)
        if phases is not None:
            phases = np.asarray(phases, dtype=np.float64)
            if s["heartbeat_phase"] != "random":
                raise ParameterError("gossipsub: phases are given with heartbeat_phase=random "
                                     "only", key="heartbeat_phase")
            if phases.shape != (len(subs),) or not (
                    np.all(phases > 0) and np.all(phases <= s["heartbeat_ms"])):
                raise ParameterError("gossipsub: phases must be one per node, each in "
                                     "(0, heartbeat_ms]", key="phases")
        sub = np.ascontiguousarray(subs, dtype=np.uint8)
        n, T = sub.shape
        conn = connections
        if conn.n != n:
            raise ParameterError(f"connections have {conn.n} nodes, the subscriptions {n}",
                                 key="edges")
        if network.n_nodes != n:
            raise ParameterError(f"network has {network.n_nodes} nodes, the subscriptions {n}",
                                 key="bandwidth")
        if network.download_queues:
            raise ParameterError("gossipsub: download queues are not modelled by the GossipSub "
                                 "engine; drop download_queues", key="download_queues")
        pubs = publications
        M = len(pubs)
        if M and (pubs.publisher.min() < 0 or pubs.publisher.max() >= n):
            raise ParameterError("publications: a publisher is not a node", key="publications")
        if M and (pubs.topic.min() < 0 or pubs.topic.max() >= T):
            raise ParameterError("publications: a topic is out of range", key="publications")
        if M >= 2**31 or n >= 2**31 or connections.nnz >= 2**31:
            raise ParameterError("gossipsub: at most 2**31 messages, nodes and connection "
                                 "entries", key="messages")
        if s["scoring"] and score_fn is None:
            raise ParameterError("gossipsub: scoring needs a score function", key="scoring")
        nnz = conn.nnz
        self.keep_arrivals = bool(keep_arrivals)
        rows = M if self.keep_arrivals else min(M, _FIRST_SLOTS)
        max_deg = int(np.diff(conn.indptr).max(initial=0))
        flags = np.zeros(n, dtype=np.uint8) if attack is None else attack.flags()
        if flags.shape != (n,):
            raise ParameterError(f"attack: flags for {len(flags)} nodes, the subscriptions "
                                 f"have {n}", key="attackers")
        ring = idontwant_ring(s, pubs.size)
        # the (connection, topic) slots: only the topics both ends may use
        slot_map = K.slot_map(conn.indptr, conn.indices,
                              topics_used(sub, pubs.publisher, pubs.topic, flags))
        n_slots = len(slot_map[1])
        topic_peers = float(sub.sum(axis=1, dtype=np.int64)[conn.indices].sum())
        # with scoring, the score's counters of each slot too (about 55 B)
        check_memory(f"gossipsub engine ({n:,} nodes, {nnz:,} connection entries, {T:,} topics)",
                     engine_bytes(n, T, nnz, max_deg, rows, M, ring, n_slots, topic_peers,
                                  float(sub.sum(dtype=np.int64)))
                     + (n_slots * 55.0 if s["scoring"] else 0.0))
        self.n = n
        self.n_topics = T
        #: ``(n, T)`` bool subscriptions
        self.subs = sub.astype(bool)
        #: the heartbeat period (ms); heartbeat ``k`` runs at ``k * heartbeat_ms``
        self.heartbeat_ms = float(s["heartbeat_ms"])
        self.settings = s
        self.connections = conn
        self.publications = pubs
        self.network = network
        self.score_fn = score_fn
        delay = np.ascontiguousarray(np.broadcast_to(np.asarray(edge_delay, dtype=np.float64),
                                                     (nnz,)))
        up = network.upload * BYTES_PER_MS_PER_MBPS
        self.attack = attack
        if attack is None:
            conn_up = np.full(nnz, -np.inf)
        else:
            conn_up = (np.full(nnz, -np.inf) if attack.conn_up_ms is None
                       else np.ascontiguousarray(attack.conn_up_ms, dtype=np.float64))
            if conn_up.shape != (nnz,):
                raise ParameterError(f"attack: conn_up_ms must give the {nnz} connection entries",
                                     key="attackers")
        #: ``(n,)`` uint8, 1 while the node is online (:meth:`set_online`; all 1 without churn)
        self.online = np.ones(n, dtype=np.uint8)
        self._G = (conn.indptr, conn.indices, conn.row_of, conn.rev, delay, conn.outbound, sub,
                   np.ascontiguousarray(proc, dtype=np.float64), np.ascontiguousarray(up),
                   pubs.publisher, pubs.topic, self.online, flags, conn_up,
                   *K.candidate_lists(conn.indptr, conn.indices, sub), *slot_map)
        #: the number of (connection, topic) slots (the topics both ends may use)
        self.n_slots = n_slots
        self._P = _param_vector(s)
        if attack is not None:
            self._P[K.P_ATK_TOPIC], self._P[K.P_ATK_TARGET] = attack.topic, attack.target
            self._P[K.P_ATK_START], self._P[K.P_ATK_REGRAFT] = attack.start_ms, attack.regraft_ms
        else:
            self._P[K.P_ATK_TOPIC] = self._P[K.P_ATK_TARGET] = -1
        self._P[K.P_VAL_MS] = network.validation_ms
        self._P[K.P_VAL_PER_BYTE] = network.validation_ms_per_byte
        self._P[K.P_LOSS] = network.loss
        self._P[K.P_JITTER] = network.jitter_ms
        self._P[K.P_HIST_BIN] = HIST_BIN_MS
        arrival = np.full((rows, n), np.inf)
        hops = np.full((rows, n), -1, dtype=np.int32)
        parent = np.full((rows, n), -1, dtype=np.int32)
        queue_delay = np.zeros((rows, n))
        if self.keep_arrivals:
            #: ``(M, n)`` first arrival (ms) of every message at every node (``inf``: never)
            self.arrival = arrival
            #: ``(M, n)`` hops of the first copy (``-1``: never)
            self.hops = hops
            #: ``(M, n)`` the node the first copy came from (``-1``: none)
            self.parent = parent
            #: ``(M, n)`` the first copy's queueing delay (ms) summed over its hops
            self.queue_delay = queue_delay
        self.copies = np.zeros(M, dtype=np.int64)
        self.duplicates = np.zeros(M, dtype=np.int64)
        self.queue_wait = np.zeros(M)
        self.lost = np.zeros(M, dtype=np.int64)
        z = np.zeros
        if self.keep_arrivals:  # message m in row m for the whole run; no slot bookkeeping
            slots = (np.arange(M, dtype=np.int64), z(0, dtype=np.int64), z(0, dtype=np.int64),
                     z((0, 5)), z(0, dtype=np.int64), z(0, dtype=np.int64),
                     z(0, dtype=np.int64), z(0, dtype=np.uint8))
        else:
            slots = (np.full(M, -1, dtype=np.int64), z(rows, dtype=np.int64),
                     np.arange(rows - 1, -1, -1, dtype=np.int64), z((M, 5)),
                     z(_HIST_BINS, dtype=np.int64), np.full(rows, -1, dtype=np.int64),
                     z(rows, dtype=np.int64), z(rows, dtype=np.uint8))
        self._M: tuple[np.ndarray, ...] = (
            pubs.publisher, pubs.topic, pubs.time_ms, pubs.size, self.copies, arrival, hops,
            self.duplicates, queue_delay, self.queue_wait, parent, self.lost, *slots)
        self._W = (np.full(n, -np.inf), z(n), z(n), z(n), z(n),
                   z((len(K.CONTROL_KINDS), n), dtype=np.int64), z(n), z(n), z(n),
                   z((log, 2)), z((log, 5), dtype=np.int64), z(64 * log, dtype=np.int32),
                   z(3, dtype=np.int64), *_staging(s, nnz, max_deg, T),
                   # the arrival of the last moot IHAVE per connection entry (the kernel's
                   # _ihave_moot: synchronised heartbeats, no jitter)
                   np.full(nnz if s["heartbeat_phase"] == "sync" and network.jitter_ms == 0
                           else 0, -np.inf))
        ns = n_slots + 1  # the slots and the spare one a missing slot reads (K._slot)
        # the mesh (or fanout) list of (node v, topic tp), row v * T + tp, holds entries of v
        # that have a slot on tp (a mesh change writes the slot: _check_spare_slot), so its
        # row has one place per such slot (not one per connection of the best-connected node
        # for every (node, topic): 3 GiB at 100,000 nodes); the spare places after the last
        # row keep a missing slot's write (an error the run then reports) inside the array
        mesh_ptr = np.zeros(n * T + 1, dtype=np.int64)
        np.cumsum(np.bincount(conn.row_of[slot_map[2]].astype(np.int64) * T + slot_map[1],
                              minlength=n * T), out=mesh_ptr[1:])
        self._X = (
            z(ns, dtype=np.uint8),                                  # 0 mesh (or fanout) flag
            np.full(int(mesh_ptr[-1]) + max_deg + 1, -1, dtype=np.int32),  # 1 mesh lists
            z(n * T, dtype=np.int64),                               # 2 mesh size
            np.full(ns, -np.inf),                                   # 3 backoff until
            np.full(n * T, -np.inf),                                # 4 last publication
            np.full(ns, np.nan),                                    # 5 graft time
            z(ns),                                                  # 6 first deliveries
            z(ns),                                                  # 7 mesh deliveries
            z(nnz),                                                 # 8 score
            z(nnz, dtype=np.int64),                                 # 9 IHAVEs this heartbeat
            z(nnz, dtype=np.int64),                                 # 10 ids asked
            z(nnz),                                                 # 11 behaviour penalty
            z(n, dtype=np.int64),                                   # 12 mcache entries
            z(n * T),                                               # 13 mesh size sums
            np.full(nnz, -1, dtype=np.int32),                       # 14 promised message
            np.full(nnz, np.inf),                                   # 15 promise deadline
            z(n, dtype=np.int64),                                   # 16 own heartbeats run
            z(ns if s["scoring"] else 0, dtype=np.uint8),           # 17 counted since read
            z(nnz if s["scoring"] else 0, dtype=np.uint8),          # 18 penalised since read
            mesh_ptr,                                               # 19 mesh lists' rows
        )
        #: scores computed in the kernel at each heartbeat (``score_fn.native``)
        self.score_in_kernel = bool(s["scoring"]) and ZK.check_native(score_fn)
        self._P[K.P_SCORE_IN_KERNEL] = float(self.score_in_kernel)
        self._P[K.P_SCORE_PARALLEL] = float(bool(parallel_scores))
        if self.score_in_kernel:
            self._Z = ZK.build_state(score_fn.params, conn.row_of, T,  # type: ignore[union-attr]
                                     getattr(score_fn, "ip_group", None), n_slots + 1)
        else:
            self._Z = ZK.empty_state()
        self._U = (np.full((nnz, ring), -1, dtype=np.int32), z(nnz, dtype=np.int32),
                   np.full((nnz, ring), np.inf))
        cap = max(64, 4 * M + 4 * n)
        self._heap_room = cap  # the heap's first room, the least _shrink_heap leaves
        self._heap_most = cap  # the most room it has had
        # an event's instant, its kind and order, two ids (an entry, node, message or
        # heartbeat number, or a control kind and topic: each below 2**31) and a packed word
        heap = (np.empty(cap), np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int32),
                np.empty(cap, dtype=np.int32), np.empty(cap, dtype=np.int64))
        self._GR = (heap, np.empty(1024, dtype=np.int32), np.empty((n, 16), dtype=np.int32),
                    np.empty((n, 16), dtype=np.int32), K.retrans_table(), K.ready_queue())
        self._S = z(K.N_SCALARS, dtype=np.int64)
        if not self.keep_arrivals:
            self._S[K.S_FREE] = rows
        # now, -, the latest instant reached, the heartbeat a scoring caller stopped at, the
        # next synchronised heartbeat, the end of the kernel's current call
        self._F = np.array([0.0, 0.0, 0.0, -np.inf, float(s["heartbeat_ms"]), 0.0])
        self._rs = np.array([rng.integers(0, 2**63, dtype=np.int64)], dtype=np.uint64)
        for m in range(M):
            K._push(heap, self._S, pubs.time_ms[m], K.PUBLISH, m, 0, 0)
        K._push(heap, self._S, s["heartbeat_ms"], K.HEARTBEAT, 1, 0, 0)
        #: ``(n,)`` the instant (ms) of each node's first heartbeat; the k-th comes
        #: ``(k - 1) * heartbeat_ms`` later (synchronised: every node's at ``heartbeat_ms``)
        self.heartbeat_phase = np.full(n, float(s["heartbeat_ms"]))
        if s["heartbeat_phase"] == "random":
            # uniform in (0, heartbeat_ms], drawn from the run's stream after the kernel's seed
            self.heartbeat_phase = (s["heartbeat_ms"] * (1.0 - rng.random(n)) if phases is None
                                    else phases.copy())
            for v in range(n):
                K._push(heap, self._S, self.heartbeat_phase[v], K.NODE_HEARTBEAT, v, 0, 0)
        if s["graft_on_subscribe"]:
            # every node announces its topics on every connection at t = 0; a subscribed
            # receiver grafts the announcer at once while its mesh is below D_lo
            heap = K.subscribe_all(self._G, self._P, heap, self._S, self._F, self._W, self._M,
                                   self._X, self._rs, self._GR[1])
            self._GR = (heap, *self._GR[1:])

    # ------------------------------------------------------------------ running
    @property
    def now(self) -> float:
        """The time (ms) the engine has run to."""
        return float(self._F[0])

    @property
    def heartbeats(self) -> int:
        """Heartbeats run so far."""
        return int(self._S[K.S_HBC])

    def run_until(self, t_ms: float) -> None:
        """Handle every event (data, control, heartbeats) up to ``t_ms``."""
        t = float(t_ms)
        stop = bool(self.settings["scoring"]) and not self.score_in_kernel
        perm = np.arange(self.n)
        while True:
            status, self._GR = K.advance(
                self._G, self._P, self._M, self._W, self._X, self._U, self._GR, self._S,
                self._F, self._rs, t, stop, perm, self._Z)
            if status == 0:
                break
            if status == 2:  # every message slot taken: twice the rows, the same order
                self._grow_slots()
                continue
            perm = np.arange(self.n)  # each call starts the heartbeat order afresh
            self._refresh_scores()
        self._F[0] = max(self._F[0], t)
        self._check_spare_slot()
        self._shrink_heap()

    def _shrink_heap(self) -> None:
        """Give back the event heap's room when it holds under an eighth of it.

        The heap doubles while messages and a heartbeat's control are in flight (to about
        50 million events at 100,000 nodes, 2 GiB); a drained run holds a few heartbeats.
        The events keep their places (the heap's order is that of its first entries), so the
        run is the same; only the room beyond twice what is held goes.
        """
        heap = self._GR[0]
        self._heap_most = max(self._heap_most, len(heap[0]))
        cap = max(self._heap_room, 2 * int(self._S[K.S_HEAP]))
        if len(heap[0]) > 4 * cap:
            h0, h1, h2, h3, h4 = (a[:cap].copy() for a in heap)
            self._GR = ((h0, h1, h2, h3, h4), *self._GR[1:])

    def _refresh_scores(self) -> None:
        """The scores, computed at the heartbeat that comes next (the kernel stopped before it)."""
        self._F[3] = self._GR[0][0][0]
        self._F[0] = self._F[3]
        assert self.score_fn is not None
        self._X[8][:] = self.score_fn(self.counters(), self.now)

    def run_churn(self, times_ms: ArrayLike, online: ArrayLike) -> None:
        """Run to each instant of ``times_ms`` in turn, and after each set the nodes' online
        flags to the matching row of ``online`` (``(k, n)`` bool).

        The same run as :meth:`run_until` to each instant followed by
        :meth:`set_online` of the nodes that leave (``False``) and of those
        that come back (``True``), in one call of the kernel instead of three
        calls per instant (it returns here only to compute scores or add
        message slots).

        Examples
        --------
        >>> from hedgerow.dissemination.contended import Network
        >>> conn = Connections.from_edges(3, [(0, 1), (1, 2), (2, 0)])
        >>> pubs = Publications.create([0], [0], [2500.0], [100.0])
        >>> eng = GossipSubEngine(np.ones((3, 1), bool), conn, np.full(conn.nnz, 10.0),
        ...                       np.zeros(3), Network.uniform(3), pubs, {"d": 2, "d_lo": 1,
        ...                       "d_hi": 2, "d_lazy": 1, "d_score": 1, "d_out": 0},
        ...                       np.random.default_rng(0))
        >>> eng.run_churn([2000.0, 3000.0], [[True, True, False], [True, True, True]])
        >>> np.isfinite(eng.arrival[0]).tolist(), eng.offline_drops, eng.online.tolist()
        ([True, True, False], 1, [1, 1, 1])
        """
        times = np.ascontiguousarray(times_ms, dtype=np.float64).reshape(-1)
        states = np.ascontiguousarray(online, dtype=np.uint8)
        if states.shape != (len(times), self.n):
            raise ParameterError(f"churn: online must be ({len(times)}, {self.n}), got "
                                 f"{states.shape}", key="churn")
        if len(times) > 1 and (np.diff(times) < 0).any():
            raise ParameterError("churn: the instants must not decrease", key="churn")
        stop = bool(self.settings["scoring"]) and not self.score_in_kernel
        perm = np.arange(self.n)
        start, resume = 0, False
        while True:
            status, start, self._GR = K.advance_churn(
                self._G, self._P, self._M, self._W, self._X, self._U, self._GR, self._S,
                self._F, self._rs, times, states, start, resume, stop, perm,
                not self.keep_arrivals, self._Z)
            if status == 0:
                break
            resume = True
            if status == 2:
                self._grow_slots()
                continue
            perm = np.arange(self.n)
            self._refresh_scores()
        self._check_spare_slot()

    def _grow_slots(self) -> None:
        """Double the message slots' rows (``keep_arrivals=False``), the new ones free."""
        Mt = list(self._M)
        R, n = Mt[K.M_ARRIVAL].shape
        R2 = 2 * R
        check_memory("gossipsub engine", R2 * n * 24.0)
        for i, fill in ((K.M_ARRIVAL, np.inf), (K.M_HOPS, -1), (K.M_QDELAY, 0.0),
                        (K.M_PARENT, -1)):
            grown = np.full((R2, n), fill, dtype=Mt[i].dtype)
            grown[:R] = Mt[i]
            Mt[i] = grown
        for i, fill in ((K.M_REFS, 0), (K.M_SLOT_MSG, -1), (K.M_PENDING, 0), (K.M_PEND, 0)):
            grown = np.full(R2, fill, dtype=Mt[i].dtype)
            grown[:R] = Mt[i]
            Mt[i] = grown
        free = np.empty(R2, dtype=np.int64)
        k = int(self._S[K.S_FREE])
        free[:k] = Mt[K.M_FREE][:k]
        free[k:k + R] = np.arange(R2 - 1, R - 1, -1)  # the new rows, lowest on top
        Mt[K.M_FREE] = free
        self._S[K.S_FREE] = k + R
        self._M = tuple(Mt)

    # ------------------------------------------------------------------ churn
    def set_online(self, nodes: ArrayLike, up: bool) -> None:
        """Nodes leave (``up`` false) or rejoin (``up`` true) the network at :attr:`now`.

        Churn acts here, between two calls of :meth:`run_until`, as libp2p sees
        a peer go: a node that leaves closes its connections, so it drops out
        of every mesh and fanout at both ends at once (no PRUNE is sent) and
        forgets its meshes, fanouts and message cache.  While offline it runs
        no heartbeat, no peer grafts it or sends it gossip, and a data copy or
        control message arriving at it is dropped (:attr:`offline_drops`).
        A node that rejoins is reconnected to the same peers and builds its
        meshes at its next heartbeat; it keeps its seen cache (a message it
        had before leaving is still a duplicate).  Publications of an offline
        node are the caller's to avoid.

        Examples
        --------
        >>> from hedgerow.dissemination.contended import Network
        >>> conn = Connections.from_edges(3, [(0, 1), (1, 2), (2, 0)])
        >>> pubs = Publications.create([0], [0], [2500.0], [100.0])  # at 2.5 s, 100 bytes
        >>> eng = GossipSubEngine(np.ones((3, 1), bool), conn, np.full(conn.nnz, 10.0),
        ...                       np.zeros(3), Network.uniform(3), pubs, {"d": 2, "d_lo": 1,
        ...                       "d_hi": 2, "d_lazy": 1, "d_score": 1, "d_out": 0},
        ...                       np.random.default_rng(0))
        >>> eng.run_until(2000.0)
        >>> eng.set_online([2], False)
        >>> eng.mesh_degree().ravel().tolist()
        [1, 1, 0]
        >>> eng.run_until(3000.0)
        >>> np.isfinite(eng.arrival[0]).tolist(), eng.offline_drops
        ([True, True, False], 1)
        """
        v_all = np.unique(np.asarray(nodes, dtype=np.int64).reshape(-1))
        if len(v_all) and (v_all.min() < 0 or v_all.max() >= self.n):
            raise ParameterError(f"churn: node ids must be in 0..{self.n - 1}", key="churn")
        if up:
            self.online[v_all] = 1
            return
        if not self.keep_arrivals:  # the emptied caches no longer hold their messages' slots
            K.drop_cache_refs(self._M, self._S, self._GR[2], self._X[12], v_all, self.online)
        K.leave(self._G, self._X, v_all, self.n_topics)

    @property
    def offline_drops(self) -> int:
        """Data copies and control messages dropped because their receiver was offline."""
        return int(self._S[K.S_OFFLINE])

    # ------------------------------------------------------------------ state
    def _dense_at(self) -> np.ndarray:
        """Each slot's place ``e * T + t`` in the table of every connection x every topic."""
        return (self._G[18].astype(np.int64) * self.n_topics + self._G[17])

    def _dense(self, a: np.ndarray, fill: float) -> np.ndarray:
        """A per-slot array as ``(nnz * T,)`` (``fill`` where a connection has no slot)."""
        out = np.full(self.connections.nnz * self.n_topics, fill, dtype=a.dtype)
        out[self._dense_at()] = a[:self.n_slots]
        return out

    def _check_spare_slot(self) -> None:
        """The spare slot (what a (connection, topic) without a slot reads) is untouched: the
        slots' map holds every slot the run used (``K.slot_map``)."""
        X = self._X
        i = self.n_slots
        if X[0][i] or X[3][i] != -np.inf or not np.isnan(X[5][i]) or X[6][i] or X[7][i]:
            raise RuntimeError("gossipsub: a (connection, topic) without a slot was written; "
                               "the slots' map (topics_used) misses a topic a node uses")

    def counters(self) -> dict[str, np.ndarray]:
        """What peer scoring reads, over slots ``e * T + t`` (``(nnz * T,)``) or connections.

        ``in_mesh`` (bool), ``graft_ms`` (the slot's last GRAFT), ``time_in_mesh_ms``,
        ``first_message_deliveries`` (running counts, never decayed: a score
        function applies its own caps and decay to what was added since it last
        read them), ``near_first_mesh_deliveries`` (duplicates from a mesh peer
        within ``mesh_window_ms`` of the first copy), per slot;
        ``behaviour_penalty`` per connection (GRAFTs during a backoff, a running
        count); ``conn_node`` the node of each connection (CSR entry).  The per-slot
        arrays are built from the engine's slots (:attr:`n_slots`) at each call.
        """
        X = self._X
        # mesh slots only: a flag of a topic the node does not subscribe to is its fanout
        flag = (self._dense(X[0], 0).astype(bool)
                & self.subs[self.connections.row_of].reshape(-1))
        graft = self._dense(X[5], np.nan)
        tim = np.where(flag, self.now - graft, 0.0)
        return {
            "in_mesh": flag,
            "graft_ms": graft,
            "time_in_mesh_ms": tim,
            "first_message_deliveries": self._dense(X[6], 0.0),
            "near_first_mesh_deliveries": self._dense(X[7], 0.0),
            "behaviour_penalty": X[11],
            "conn_node": self.connections.row_of,
        }

    def score_counters(self) -> ScoreCounters | None:
        """The score's counters as of the last heartbeat (copies; ``None`` before the first one
        or without scoring): the kernel's own with the scores computed in the kernel, else
        what the score function keeps (``score_fn.counters``, if it keeps any).

        The counters the two paths hold after the same heartbeats are equal
        (``mesh_time_ms`` apart: the kernel's path does not keep it, the score at an instant
        reads the graft instants).
        """
        if not self.settings["scoring"]:
            return None
        if not self.score_in_kernel:
            return getattr(self.score_fn, "counters", None)
        if not self._Z[9][ZK.Z_STARTED]:
            return None
        Z = tuple(a[:self.n_slots] if i < 5 else a for i, a in enumerate(self._Z))
        return ZK.counters_of(Z, self.connections.row_of, self.n_topics,
                              getattr(self.score_fn, "ip_group", None), self._dense_at())

    def mesh_degree(self) -> np.ndarray:
        """``(n, T)`` mesh size of every node and topic (fanout size where not subscribed)."""
        return self._X[2].reshape(self.n, self.n_topics).copy()

    def mesh_flags(self) -> np.ndarray:
        """``(nnz, T)`` bool: entry ``v -> w`` is in ``v``'s mesh (or fanout) of the topic."""
        return self._dense(self._X[0], 0).reshape(-1, self.n_topics).astype(bool)

    def mesh_lists(self) -> list[list[np.ndarray]]:
        """Per node and topic, the CSR entries of its mesh (or fanout) list, as kept."""
        ml, md, mp = self._X[1], self._X[2], self._X[19]
        T = self.n_topics
        return [[ml[mp[r]:mp[r] + md[r]].copy() for r in range(v * T, v * T + T)]
                for v in range(self.n)]

    def backoff_until(self) -> np.ndarray:
        """``(nnz, T)`` time (ms) until which ``v`` does not graft ``w`` (``-inf``: none)."""
        return self._dense(self._X[3], -np.inf).reshape(-1, self.n_topics)

    def mean_mesh_degree(self) -> np.ndarray:
        """``(n, T)`` mean mesh size over the heartbeats after warm-up (``nan``: none or not
        subscribed)."""
        k = int(self._S[K.S_SAMPLES])
        sub = self._G[6].astype(bool)
        mean = self._X[13].reshape(self.n, self.n_topics) / max(k, 1)
        return np.where(sub & (k > 0), mean, np.nan)

    @property
    def heartbeats_after_warmup(self) -> int:
        return int(self._S[K.S_SAMPLES])

    @property
    def bound_violations(self) -> int:
        """Times a node's own heartbeat left a mesh above D_hi, or below D_lo with candidates
        left (the kernel's own count; the conformance check recounts)."""
        return int(self._S[K.S_VIOL])

    @property
    def opportunistic_grafts(self) -> int:
        """GRAFTs sent by opportunistic grafting (v1.1, with scoring) so far."""
        return int(self._S[K.S_OG_GRAFTS])

    def peer_exchange(self) -> dict[str, int]:
        """Peer exchange so far: ``offered`` (records received in PRUNEs), ``accepted`` (those
        from a pruner scored at least the accept-PX threshold) and ``new`` (accepted records
        naming a peer the receiver has no open connection to: the dials go-libp2p-pubsub's
        ``pxConnect`` would start; the connection graph is fixed, so none is opened)."""
        return {"offered": int(self._S[K.S_PX_OFFERED]),
                "accepted": int(self._S[K.S_PX_ACCEPTED]),
                "new": int(self._S[K.S_PX_NEW])}

    @property
    def iwant_served(self) -> int:
        """Copies sent in answer to an IWANT."""
        return int(self._S[K.S_IWANT_SERVED])

    def control_sent(self) -> dict[str, np.ndarray]:
        """Control messages each node sent after warm-up, by kind (``ihave`` ... ``idontwant``)."""
        c = self._W[5]
        return {k: c[i].copy() for i, k in enumerate(K.CONTROL_KINDS)}

    @property
    def control_messages(self) -> int:
        """Control messages sent after warm-up, all kinds."""
        return int(self._W[5].sum())

    def byte_counters(self) -> dict[str, np.ndarray]:
        """Running totals per node: ``sent``, ``received``, ``duplicate`` bytes of data
        copies (payload and header), ``control_sent``, ``control_received``,
        ``control_lost`` bytes of control messages (none is lost: zeros), uplink
        ``busy`` ms; ``at_ms`` the time they were taken."""
        W = self._W
        return {"sent": W[2].copy(), "received": W[6].copy(), "duplicate": W[7].copy(),
                "control_sent": W[3].copy(), "control_received": W[4].copy(),
                "control_lost": W[8].copy(), "busy": W[1].copy(),
                "at_ms": np.array([self.now])}

    @property
    def uplink_free(self) -> np.ndarray:
        """``(n,)`` when each uplink has sent everything queued (ms)."""
        return self._W[0].copy()

    @property
    def last_event_ms(self) -> float:
        return float(self._F[2])

    def memory_bytes(self) -> dict[str, int]:
        """Bytes the engine's arrays hold now, by what they grow with.

        ``per_message_node``: the arrival, hops, parent and queueing rows
        (messages x nodes with every arrival kept, slots x nodes otherwise);
        ``per_message``: the publications and per-message counters (and the
        folded sums); ``per_connection_topic``: mesh flags, backoffs, graft
        times, scoring counters and the mesh lists (a place per slot); ``per_connection``:
        scores, gossip counters, the IDONTWANT rings and the connection graph; ``per_node``:
        mesh sizes and the mesh lists' row pointers, message caches, uplinks and byte
        counters; ``queues``: the event heap and the id buffer; ``heap_most``: the event heap
        at its largest (a drained run gives back the room it no longer needs).

        Examples
        --------
        >>> import numpy as np
        >>> from hedgerow.dissemination.contended import Network
        >>> subs = np.ones((4, 1), dtype=bool)
        >>> conn = Connections.from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
        >>> pubs = Publications.create([0, 1], [0, 0], [1500.0, 1600.0], [1000.0, 1000.0])
        >>> eng = GossipSubEngine(subs, conn, np.full(conn.nnz, 10.0), np.zeros(4),
        ...                       Network.uniform(4), pubs, {"d": 2, "d_lo": 1, "d_hi": 3,
        ...                       "d_lazy": 1, "d_score": 1, "d_out": 0}, np.random.default_rng(1))
        >>> eng.memory_bytes()["per_message_node"]  # 2 messages x 4 nodes x 24 bytes
        192
        """
        Mt = self._M
        rows = sum(Mt[i].nbytes for i in (K.M_ARRIVAL, K.M_HOPS, K.M_QDELAY, K.M_PARENT))
        X, W, U = self._X, self._W, self._U
        return {
            "per_message_node": int(rows),
            "per_message": int(sum(a.nbytes for a in Mt) - rows),
            "per_connection_topic": int(sum(X[i].nbytes for i in (0, 1, 3, 5, 6, 7))),
            "per_connection": int(sum(X[i].nbytes for i in (8, 9, 10, 11, 14, 15))
                                  + sum(a.nbytes for a in U) + sum(a.nbytes for a in self._G)),
            "per_node": int(sum(X[i].nbytes for i in (2, 4, 12, 13, 16, 19))
                            + sum(a.nbytes for a in W) + self._GR[2].nbytes
                            + self._GR[3].nbytes),
            "heap_most": int(self._heap_most * sum(a.itemsize for a in self._GR[0])),
            "queues": int(sum(a.nbytes for a in self._GR[0]) + self._GR[1].nbytes
                          + sum(a.nbytes for a in self._GR[4])
                          + sum(a.nbytes for a in self._GR[5])),
        }

    @property
    def slots_peak(self) -> int:
        """The most messages held in slots at once (``keep_arrivals=False``; 0 otherwise)."""
        return int(self._S[K.S_LIVE_PEAK])

    @property
    def slot_rows(self) -> int:
        """Rows of the per-node arrival arrays: the messages when every arrival is kept, the
        slots (grown to the peak of messages that can still matter, doubling) otherwise."""
        return int(self._M[K.M_ARRIVAL].shape[0])

    def delivery_summary(self, q: tuple[float, ...] = (50, 90, 99)) -> dict[str, float]:
        """The delivery measures of :func:`hedgerow.metrics.delivery.delivery_measures`, in both
        storage modes.

        ``receive_rate``, ``delay_mean_ms``, ``delay_pXX_ms``, ``hops_mean``
        over (message, subscriber other than the publisher) pairs, plus
        ``queue_delay_mean_ms`` (the first copy's queueing delay over the same
        pairs) and ``reached`` (nodes that have a message, publishers
        included, summed over messages).  With every arrival kept they are
        computed from the arrays; otherwise from the sums folded when a slot
        was released (and the slots still held), the same numbers up to the
        order of summation, except the percentiles, read from a histogram of
        :data:`HIST_BIN_MS`-wide bins (within half a bin of the exact value).

        Examples
        --------
        >>> import numpy as np
        >>> from hedgerow.dissemination.contended import Network
        >>> subs = np.ones((6, 1), dtype=bool)
        >>> conn = Connections.from_edges(6, [(i, (i + 1) % 6) for i in range(6)])
        >>> pubs = Publications.create([0, 3], [0, 0], [1500.0, 2500.0], [1000.0, 1000.0])
        >>> def run(keep):
        ...     eng = GossipSubEngine(subs, conn, np.full(conn.nnz, 10.0), np.zeros(6),
        ...                           Network.uniform(6), pubs, {"d": 2, "d_lo": 1, "d_hi": 3,
        ...                           "d_lazy": 1, "d_score": 1, "d_out": 0},
        ...                           np.random.default_rng(1), keep_arrivals=keep)
        ...     eng.run_until(9000.0)
        ...     return eng.delivery_summary(q=(50,))
        >>> full, slots = run(True), run(False)
        >>> full["receive_rate"], slots["receive_rate"], full["reached"], slots["reached"]
        (1.0, 1.0, 12, 12)
        >>> full["delay_p50_ms"], round(slots["delay_p50_ms"], 2)  # the bin's middle
        (20.0, 20.05)
        """
        pubs = self.publications
        want = self.subs.sum(axis=0)[pubs.topic] - self.subs[pubs.publisher, pubs.topic]
        if self.keep_arrivals:
            out = delivery_measures(self.arrival - pubs.time_ms[:, None], pubs.publisher,
                                    pubs.topic, self.subs, hops=self.hops, q=q)
            mask = (np.isfinite(self.arrival) & self.subs[:, pubs.topic].T
                    & (np.arange(self.n)[None, :] != pubs.publisher[:, None]))
            qd = self.queue_delay[mask]
            out["queue_delay_mean_ms"] = float(qd.mean()) if len(qd) else float("nan")
            out["reached"] = int(np.isfinite(self.arrival).sum())
            return out
        fold = self._M[K.M_FOLD].copy()
        hist = self._M[K.M_HIST].copy()
        K.fold_live(self._G, self._P, self._M, fold, hist)
        got = fold[:, K.FOLD_GOT]
        has = want > 0
        n_got = float(got.sum())
        out = {"receive_rate": float((got[has] / want[has]).mean()) if has.any()
               else float("nan")}
        out["delay_mean_ms"] = float(fold[:, K.FOLD_DELAY].sum() / n_got) if n_got else math.nan
        cum = np.cumsum(hist)
        for x in q:
            if not n_got:
                out[f"delay_p{x:g}_ms"] = math.nan
                continue
            pos = x / 100.0 * (n_got - 1)
            lo, hi = math.floor(pos), math.ceil(pos)
            b = np.searchsorted(cum, [lo, hi], side="right")
            v = (b + 0.5) * HIST_BIN_MS
            out[f"delay_p{x:g}_ms"] = float(v[0] + (pos - lo) * (v[1] - v[0]))
        out["hops_mean"] = float(fold[:, K.FOLD_HOPS].sum() / n_got) if n_got else math.nan
        out["queue_delay_mean_ms"] = (float(fold[:, K.FOLD_QDELAY].sum() / n_got) if n_got
                                      else math.nan)
        out["reached"] = int(fold[:, K.FOLD_REACHED].sum())
        return out

    def delivery(self, since: Mapping[str, np.ndarray] | None = None) -> ContendedDelivery:
        """The run's messages as a :class:`ContendedDelivery` (times relative to publication).

        ``since``: :meth:`byte_counters` taken earlier; bytes and busy time
        are then counted from there (e.g. from the end of the warm-up), and
        the span starts there when that is before the first publication.
        """
        if not self.keep_arrivals:
            raise ParameterError("gossipsub: the engine was built with keep_arrivals=False, so "
                                 "the arrivals were folded as they went; read "
                                 "delivery_summary() instead", key="keep_arrivals")
        pubs = self.publications
        now = self.byte_counters()
        base = since if since is not None else {k: np.zeros_like(v) for k, v in now.items()}
        d = {k: now[k] - base[k] for k in now}
        first = float(pubs.time_ms.min()) if len(pubs) else 0.0
        if since is not None:  # the window the busy time was counted over
            first = min(first, float(base["at_ms"][0]))
        last = max(self.last_event_ms, float(np.max(self._W[0], initial=-np.inf)), first)
        return ContendedDelivery(
            arrival=self.arrival - pubs.time_ms[:, None],
            hops=self.hops,
            parent=self.parent,
            edge_recv=None,
            copies=self.copies.copy(),
            relay_copies=np.zeros(len(pubs), dtype=np.int64),
            duplicates=self.duplicates.copy(),
            publisher=pubs.publisher.copy(),
            topic=pubs.topic.copy(),
            published=pubs.time_ms.copy(),
            size=pubs.size + self.settings["header_bytes"],  # a copy's bytes on the wire
            lost=self.lost.copy(),
            queue_wait=self.queue_wait.copy(),
            queue_delay=self.queue_delay,
            sent_bytes=d["sent"],
            received_bytes=d["received"],
            duplicate_bytes=d["duplicate"],
            control_sent_bytes=d["control_sent"],
            control_received_bytes=d["control_received"],
            uplink_busy=d["busy"],
            span_ms=(first, last),
        )

    def mesh_rows(self) -> np.ndarray:
        """``(k, 3)`` int64 rows ``(v, w, topic)``: ``w`` in ``v``'s mesh of ``topic``."""
        slots = np.flatnonzero(self._X[0][:self.n_slots])
        e, t = self._G[18][slots].astype(np.int64), self._G[17][slots].astype(np.int64)
        sub = self._G[6]
        v = self.connections.row_of[e]
        keep = sub[v, t].astype(bool)
        return np.column_stack([v[keep], self.connections.indices[e[keep]], t[keep]])

    def link_topics(self) -> np.ndarray:
        """The mesh rows (:meth:`mesh_rows`), as :class:`ClockEngine` names them."""
        return self.mesh_rows()

    def overlay(self) -> Overlay:
        """The union of the topics' meshes, undirected.

        The links are those of :meth:`mesh_rows`, each connection once, in the order its first
        row comes (so the neighbour sets are filled as from every row), found on ``int32``
        entries instead of ``(k, 3)`` ``int64`` rows: 16 million rows at 100,000 nodes.
        """
        conn = self.connections
        row_of = self._G[2]
        slots = np.flatnonzero(self._X[0][:self.n_slots])
        e, t = self._G[18][slots], self._G[17][slots]
        del slots
        e = e[self._G[6][row_of[e], t].astype(bool)]
        del t
        # a connection is one entry each way (``rev``): the smaller names it
        _, first = np.unique(np.minimum(e, conn.rev[e].astype(e.dtype)), return_index=True)
        e = e[np.sort(first)]
        return Overlay.from_edges(self.n, np.column_stack([row_of[e], conn.indices[e]]))

    def connections_overlay(self) -> Overlay:
        """The connection graph."""
        c = self.connections
        return Overlay.from_edges(self.n, np.column_stack([c.row_of, c.indices]))

    def sent_log(self) -> dict[str, Any]:
        """The log of messages sent (engine built with ``log > 0``), in the order sent.

        Keys: ``t_send`` and ``t_arrive`` (ms; ``-1`` for a lost message),
        ``kind`` (``"ihave"`` ... ``"idontwant"``, ``"data"``, ``"iwant-answer"``),
        ``sender``, ``receiver``, ``what`` (the topic of a control message, the message of
        a data copy),
        ``ids`` (the message ids a control message lists; a PRUNE's: the nodes of its
        peer-exchange records), and ``full``
        (the log ran out of room: later messages are missing).
        """
        lf, li, lids, lc = self._W[9], self._W[10], self._W[11], self._W[12]
        r = int(lc[0])
        names = (*K.CONTROL_KINDS, "data", "iwant-answer")
        e = li[:r, 1]
        return {
            "t_send": lf[:r, 0].copy(),
            "t_arrive": lf[:r, 1].copy(),
            "kind": [names[k] for k in li[:r, 0].tolist()],
            "sender": self.connections.row_of[e],
            "receiver": self.connections.indices[e],
            "what": li[:r, 2].copy(),
            "ids": [lids[o:o + c].copy() for o, c in zip(li[:r, 3].tolist(),
                                                         li[:r, 4].tolist(), strict=True)],
            "full": bool(lc[2]),
        }
