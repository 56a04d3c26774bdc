"""Lean Gossip's world, and GossipSub run on it: :func:`lean_gossip_world`, :func:`run_world`.

Lean Gossip (``ankitku/lean-gossip``, ``meshsub.py``) simulates GossipSub
v1.0 on 1,000 peers in 100 ms ticks; its sweep (``pareto_sweep.py``) publishes
``results/1000peers/pareto_results.csv``.  This module builds that world from
one seed, with the readings of ``docs/gossipsub.md`` ("Lean Gossip's world"):

* **peers and connections**: every peer picks a peer table of ``randint(40,
  80)`` uniform others, made symmetric (``MeshSubComplete.__init__``); the
  tables are the connections (about 116 per peer);
* **regions**: the ``regions`` latency model (:mod:`hedgerow.latency.regions`),
  EU / US / Asia at 30 / 40 / 30 %, with delays rounded up to the 100 ms tick
  when ``tick_ms`` is set (Lean Gossip's tick model);
* **bimodal churn** (``process_bimodal_churn``): a share ``churny_fraction``
  of the peers is churny; at every tick each online churny peer leaves with
  probability ``leave`` (0.01), then each offline peer rejoins with
  probability ``rejoin`` (0.05); stable peers never leave;
* **attestations** (``produce_step``): at every tick each online peer
  publishes with probability ``1 - exp(-rate * tick)`` (``rate`` = one
  validator's attestation per 384 s epoch), if its token bucket holds a
  token; the bucket starts with one token and is never refilled
  (``TokenBucket.refill`` is never called), so each peer publishes at most
  once; 1,536 bytes per attestation, one topic that every peer subscribes to;
* **bandwidth**: a 25 Mbit/s uplink per peer (Lean Gossip's token bucket of
  one second of 25 Mbit/s never runs dry at this load: ``drops_peer`` is 0
  in every row of its table).

:func:`run_world` runs Hedgerow's GossipSub engine
(:class:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine`) on it with
Lean Gossip's mesh rules (graft up to ``D`` below ``D``, prune above
``D + 2``, ``D_lazy`` gossip peers, v1.0) and measures what the table
reports: delivery rate (peers that got a message over all peers, the
publisher included, averaged over the messages published after warm-up),
the 99th percentile of first-delivery latency over every (message, receiver)
pair, and bytes sent (payload and control, after warm-up) per delivery.
Churn is applied between ticks with
:meth:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine.run_churn` (as
:meth:`~hedgerow.protocols.gossipsub.engine.GossipSubEngine.set_online` at each tick whose
state changes).

Examples
--------
>>> world = lean_gossip_world(60, churny_fraction=0.2, seed=1, ticks=300, warmup_ticks=100)
>>> world.n, len(world.publications) > 0, bool(world.online[-1].mean() > 0.8)
(60, True, True)
>>> row = run_world(world, D=4, D_lazy=2)
>>> bool(row["delivery_rate"] > 0.9), row["messages_published"] > 0
(True, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hedgerow.dissemination.contended import Network
from hedgerow.errors import ParameterError
from hedgerow.latency.regions import regions
from hedgerow.model import RngStreams
from hedgerow.protocols.engine_api import Publications
from hedgerow.protocols.gossipsub.engine import Connections, GossipSubEngine
from hedgerow.scenarios.world.catalogue import resolve_scenario
from hedgerow.scenarios.world.lean import BimodalChurn, parse_bimodal_churn, parse_peer_table
from hedgerow.scenarios.world.wire import parse_bandwidth, parse_size

__all__ = [
    "BimodalChurn",
    "LeanGossipWorld",
    "engine_settings",
    "lean_gossip_world",
    "parse_bimodal_churn",
    "peer_tables",
    "run_lean_gossip",
    "run_world",
    "scenario_world",
]

#: Lean Gossip's sweep: 2,000 warm-up and 10,000 measured ticks (of 100 ms)
WARMUP_TICKS = 2000
MEASURED_TICKS = 10000
#: one attestation per validator per epoch of 384 s; 1,536 bytes each
EPOCH_S = 384.0
ATTESTATION_BYTES = 1536.0
#: ids and control overheads (``meshsub.py``'s constants): an id is 32 bytes, an IHAVE
#: 32 + 32 per id; GRAFT and PRUNE are 100 bytes there (32 here: see docs/gossipsub.md)
ID_BYTES = 32.0


def peer_tables(n: int, rng: np.random.Generator, low: int = 40, high: int = 80) -> Connections:
    """Each peer dials a table of ``randint(low, high)`` uniform others; tables made symmetric.

    Examples
    --------
    >>> c = peer_tables(200, np.random.default_rng(0))
    >>> deg = np.diff(c.indptr)
    >>> bool(deg.min() >= 40), bool(95 < deg.mean() < 110)  # 60 dialed + 42 dialing in
    (True, True)
    """
    if n < 2:
        raise ParameterError(f"lean-gossip: need at least 2 peers, got {n}", key="nodes")
    hi = min(high, n - 1)
    lo = min(low, hi)
    edges = []
    for v in range(n):
        k = int(rng.integers(lo, hi + 1))
        w = rng.choice(n - 1, size=k, replace=False)
        w = w + (w >= v)
        edges.append(np.column_stack([np.full(k, v), w]))
    return Connections.from_edges(n, np.concatenate(edges))


@dataclass(frozen=True, eq=False)
class LeanGossipWorld:
    """One draw of Lean Gossip's world (:func:`lean_gossip_world`).

    Attributes
    ----------
    n : int
        Peers.
    region : numpy.ndarray
        ``(n,)`` region name of every peer.
    connections : Connections
        The symmetric peer tables.
    edge_delay : numpy.ndarray
        ``(nnz,)`` one-way delay (ms) of every connection entry.
    churny : numpy.ndarray
        ``(n,)`` bool, the churny peers.
    online : numpy.ndarray
        ``(ticks + 1, n)`` bool: online at the start of tick ``t`` (row ``t``).
    publications : Publications
        Every attestation (instant, publisher, topic 0, bytes).
    tick_ms, warmup_ticks, ticks : float, int, int
        The tick, warm-up ticks and measured ticks.
    churn : BimodalChurn
        The churn law.
    seed : int
        The seed every draw came from.
    """

    n: int
    region: np.ndarray
    connections: Connections
    edge_delay: np.ndarray
    churny: np.ndarray
    online: np.ndarray
    publications: Publications
    tick_ms: float
    warmup_ticks: int
    ticks: int
    churn: BimodalChurn
    seed: int

    @property
    def warmup_ms(self) -> float:
        return self.warmup_ticks * self.tick_ms

    @property
    def end_ms(self) -> float:
        return (self.warmup_ticks + self.ticks) * self.tick_ms


def lean_gossip_world(
    n: int = 1000,
    *,
    churny_fraction: float = 0.0,
    seed: int = 42,
    ticks: int = MEASURED_TICKS,
    warmup_ticks: int = WARMUP_TICKS,
    churn: BimodalChurn | None = None,
    quantise: bool = True,
    validators: int = 1,
    refill: bool = False,
    size: float = ATTESTATION_BYTES,
    table: tuple[int, int] = (40, 80),
) -> LeanGossipWorld:
    """Draw Lean Gossip's world: regions, peer tables, the churn schedule, the attestations.

    Parameters
    ----------
    n : int, default 1000
        Peers.
    churny_fraction : float, default 0
        Share of churny peers (``churn`` gives the whole law instead).
    seed : int, default 42
        Every draw comes from :class:`~hedgerow.model.RngStreams` of this seed
        (streams ``regions``, ``connections``, ``churn``, ``workload``).
    ticks, warmup_ticks : int
        Measured and warm-up ticks (10,000 and 2,000 in Lean Gossip's sweep).
    churn : BimodalChurn, optional
        The churn law (default: ``BimodalChurn(churny_fraction)``).
    quantise : bool, default True
        Round every link delay up to a whole tick (Lean Gossip's tick model);
        off: the drawn delays as they are.
    validators : int, default 1
        Validators per peer: the publication rate is ``validators / 384`` per s.
    refill : bool, default False
        Refill the publication token bucket (rate twice the publication rate,
        ``validators`` tokens), which Lean Gossip declares but never refills:
        off, each peer publishes at most ``validators`` attestations.
    size : float, default 1536
        Bytes of an attestation.
    table : (int, int), default (40, 80)
        The peer tables' smallest and largest size (:func:`peer_tables`).
    """
    law = churn if churn is not None else BimodalChurn(float(churny_fraction))
    if not 0.0 <= law.churny_fraction <= 1.0:
        raise ParameterError(f"lean-gossip: churny_fraction must be in [0, 1], got "
                             f"{law.churny_fraction}", key="churny_fraction")
    if ticks < 1 or warmup_ticks < 0:
        raise ParameterError("lean-gossip: need ticks >= 1 and warmup_ticks >= 0", key="ticks")
    streams = RngStreams(int(seed))
    tick = float(law.tick_ms)
    lat = regions(n, streams.stream("regions"), tick_ms=tick if quantise else 0.0)
    conn = peer_tables(n, streams.stream("connections"), *table)
    delay = lat.matrix()[conn.row_of, conn.indices]
    total = warmup_ticks + ticks
    rng = streams.stream("churn")
    churny = rng.random(n) < law.churny_fraction
    online = np.ones((total + 1, n), dtype=bool)
    state = np.ones(n, dtype=bool)
    for t in range(total):
        u_leave = rng.random(n)
        u_join = rng.random(n)
        state = state & ~(churny & (u_leave < law.leave))
        state = state | (~state & churny & (u_join < law.rejoin))
        online[t + 1] = state
    w = streams.stream("workload")
    rate = validators / EPOCH_S
    p_tick = 1.0 - math.exp(-rate * tick / 1000.0)
    tokens = np.full(n, float(max(1, validators)))
    when: list[np.ndarray] = []
    who: list[np.ndarray] = []
    for t in range(total):
        if refill:
            tokens = np.minimum(tokens + 2.0 * rate * tick / 1000.0, max(1, validators))
        fire = online[t] & (w.random(n) < p_tick) & (tokens >= 1.0)
        if fire.any():
            tokens[fire] -= 1.0
            who.append(np.flatnonzero(fire))
            when.append(np.full(int(fire.sum()), t * tick))
    pub = np.concatenate(who) if who else np.zeros(0, dtype=np.int64)
    at = np.concatenate(when) if when else np.zeros(0)
    pubs = Publications.create(pub, np.zeros(len(pub), dtype=np.int64), at,
                               np.full(len(pub), float(size)))
    return LeanGossipWorld(n, np.asarray(lat.labels), conn, np.ascontiguousarray(delay), churny,
                           online, pubs, tick, int(warmup_ticks), int(ticks), law, int(seed))


def engine_settings(D: int, D_lazy: int, horizon_ms: float) -> dict[str, Any]:
    """The engine's settings for Lean Gossip's rules at mesh degree ``D`` and ``D_lazy``.

    v1.0; graft up to ``D`` below ``D`` (``D_lo = D``), prune 2 uniform mesh
    peers above ``D + 2`` (``D_hi``, ``max_prune``); gossip to ``D_lazy``
    peers from the last 3 of 5 heartbeats' caches; a seen id never forgotten
    within the run (``horizon_ms``);
    IWANTs answered without limit; no header on a data copy (the 1,536 bytes
    are the whole message); 32-byte ids, IHAVE overhead 32 bytes; every
    control message an RPC of its own (``control_rpc`` per-message:
    ``meshsub.py`` schedules each IHAVE, GRAFT and PRUNE as its own delivery
    with its own size).

    Examples
    --------
    >>> s = engine_settings(2, 1, 1e6)
    >>> s["d"], s["d_lo"], s["d_hi"], s["d_lazy"], s["variant"]
    (2, 2, 4, 1, 'v1.0')
    """
    return {
        "variant": "v1.0", "d": int(D), "d_lo": int(D), "d_hi": int(D) + 2,
        "d_lazy": int(D_lazy), "d_score": 0, "d_out": 0, "heartbeat_ms": 1000.0,
        "mcache_len": 5, "mcache_gossip": 3, "seen_ttl_ms": 2.0 * float(horizon_ms) + 1.0,
        "gossip_retransmission": 2**31 - 1, "flood_publish": False, "idontwant_threshold": None,
        "header_bytes": 0.0, "message_id_bytes": ID_BYTES - 2.0, "topic_bytes": 24.0,
        "max_ihave_messages": 2**31 - 1, "max_prune": 2, "control_rpc": "per-message",
    }


def run_world(world: LeanGossipWorld, D: int, D_lazy: int, upload_mbps: float = 25.0,
              settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """GossipSub (Lean Gossip's rules, :func:`engine_settings`) on ``world``; one table row.

    Returns the row's measures under Lean Gossip's definitions
    (``pareto_sweep.run_single_config``): ``delivery_rate``,
    ``p99_latency_sec`` (and p50, p90, mean), ``bytes_per_delivery``,
    ``delivery_rate_settled`` (over the messages published at least 10 s
    before the end), ``p99_latency_sec_online`` (over the receivers online
    at the publication)
    and ``late_deliveries`` (to receivers offline then, caught up later),
    ``payload_bytes_MB``, ``control_bytes_MB``, ``messages_published``,
    ``total_deliveries``, ``online_rate`` (at the end), and the run's
    ``wall_s`` and ``simulated_s``.
    """
    n = world.n
    s = engine_settings(D, D_lazy, world.end_ms)
    s.update(settings or {})
    s["warmup_ms"] = world.warmup_ms
    subs = np.ones((n, 1), dtype=bool)
    net = Network.uniform(n, upload=float(upload_mbps))
    w0 = time.perf_counter()
    eng = GossipSubEngine(subs, world.connections, world.edge_delay, np.zeros(n), net,
                          world.publications, s, RngStreams(world.seed).stream("gossipsub"))
    total = world.warmup_ticks + world.ticks
    # churn of tick t, after its deliveries and heartbeat: the engine runs to each tick whose
    # state changes and takes the next row of the schedule there, in one kernel call
    change = np.flatnonzero((world.online[1:] != world.online[:-1]).any(axis=1))
    at = change * world.tick_ms
    early = at < world.warmup_ms
    eng.run_churn(at[early], world.online[change[early] + 1])
    eng.run_until(np.nextafter(world.warmup_ms, -np.inf))
    base = eng.byte_counters()
    eng.run_churn(at[~early], world.online[change[~early] + 1])
    end = total * world.tick_ms
    eng.run_until(end)
    wall = time.perf_counter() - w0
    now_b = eng.byte_counters()
    pubs = world.publications
    measured = pubs.time_ms >= world.warmup_ms
    arr = eng.arrival[measured]
    got = np.isfinite(arr)
    delivery = got.sum(axis=1) / n
    settled = pubs.time_ms[measured] <= end - 10_000.0  # published 10 s or more before the end
    origin = np.zeros_like(got)
    origin[np.arange(len(arr)), pubs.publisher[measured]] = True
    lat = (arr - pubs.time_ms[measured][:, None])[got & ~origin] / 1000.0
    # receivers online when the message was published (those that miss it while offline
    # and catch up by gossip after rejoining are the rest)
    tick = np.minimum((pubs.time_ms[measured] / world.tick_ms).astype(np.int64),
                      len(world.online) - 1)
    was_on = world.online[tick]
    lat_on = (arr - pubs.time_ms[measured][:, None])[got & ~origin & was_on] / 1000.0
    payload = float((now_b["sent"] - base["sent"]).sum())
    control = float((now_b["control_sent"] - base["control_sent"]).sum())
    deliveries = len(lat)
    mib = 1024.0 * 1024.0
    return {
        "D": int(D), "D_lazy": int(D_lazy), "churny_fraction": world.churn.churny_fraction,
        "seed": world.seed,
        "delivery_rate": float(delivery.mean()) if len(delivery) else math.nan,
        "delivery_rate_settled": float(delivery[settled].mean()) if settled.any() else math.nan,
        "p99_latency_sec": float(np.percentile(lat, 99)) if deliveries else math.nan,
        "p99_latency_sec_online": (float(np.percentile(lat_on, 99)) if len(lat_on)
                                   else math.nan),
        "late_deliveries": deliveries - len(lat_on),
        "p90_latency_sec": float(np.percentile(lat, 90)) if deliveries else math.nan,
        "p50_latency_sec": float(np.percentile(lat, 50)) if deliveries else math.nan,
        "avg_latency_sec": float(lat.mean()) if deliveries else math.nan,
        "bytes_per_delivery": (payload + control) / deliveries if deliveries else math.inf,
        "payload_bytes_MB": payload / mib, "control_bytes_MB": control / mib,
        "total_bytes_MB": (payload + control) / mib,
        "messages_published": int(measured.sum()), "total_deliveries": deliveries,
        "online_rate": float(world.online[-1].mean()),
        "offline_drops": eng.offline_drops,
        "mesh_degree_mean": float(np.nanmean(eng.mean_mesh_degree())),
        "wall_s": wall, "simulated_s": end / 1000.0,
    }


def scenario_world(name: str = "lean-gossip", *, seed: int = 42, ticks: int = MEASURED_TICKS,
                   warmup_ticks: int = WARMUP_TICKS, **overrides: Any) -> LeanGossipWorld:
    """The world of a named scenario that sets ``bimodal_churn`` and ``peer_table``.

    Reads the resolved scenario (:func:`~hedgerow.scenarios.world.resolve_scenario`,
    ``overrides`` checked as there): ``nodes``, ``bimodal_churn``,
    ``peer_table``, the ``regions`` latency model's ``tick_ms`` (rounding on
    when above 0), one ``size`` and one upload ``bandwidth`` for every node.

    Examples
    --------
    >>> w = scenario_world(nodes=80, bimodal_churn="0.5:0.01:0.05", ticks=50, warmup_ticks=10)
    >>> w.n, w.churn.churny_fraction, bool(np.all(w.edge_delay % 100 == 0))
    (80, 0.5, True)
    """
    sc = resolve_scenario(name, **overrides)
    if sc.bimodal_churn is None or sc.peer_table is None or sc.latency != "regions":
        raise ParameterError(f"scenario {name!r} is not a Lean Gossip world: it needs "
                             "latency=regions, bimodal_churn and peer_table", key="name")
    kw = dict(sc.latency_kw)
    law = parse_bimodal_churn(sc.bimodal_churn)
    if float(kw.get("tick_ms", 0.0)) not in (0.0, law.tick_ms):
        raise ParameterError(f"scenario {name!r}: the latency tick_ms {kw['tick_ms']} differs "
                             f"from the churn's tick {law.tick_ms}", key="latency_kw")
    size = parse_size(sc.size) if sc.size is not None else ("const", ATTESTATION_BYTES, 0)
    if size[0] != "const":
        raise ParameterError(f"scenario {name!r}: Lean Gossip's attestations have one size; "
                             f"got size={sc.size!r}", key="size")
    return lean_gossip_world(int(sc.nodes), churn=law, seed=seed, ticks=ticks,
                             warmup_ticks=warmup_ticks, quantise=float(kw.get("tick_ms", 0)) > 0,
                             size=float(size[1]), table=parse_peer_table(sc.peer_table))


def run_lean_gossip(D: int, D_lazy: int, name: str = "lean-gossip", *, seed: int = 42,
                    ticks: int = MEASURED_TICKS, warmup_ticks: int = WARMUP_TICKS,
                    **overrides: Any) -> dict[str, Any]:
    """One row of Lean Gossip's table, run by Hedgerow on the named world.

    ``overrides``: world settings (``bimodal_churn="0.2:0.01:0.05"``,
    ``nodes``, ...), checked by :func:`~hedgerow.scenarios.world.resolve_scenario`.
    The upload of every node is the scenario's one ``bandwidth`` value
    (25 Mbit/s on ``lean-gossip``).

    Examples
    --------
    >>> row = run_lean_gossip(3, 2, nodes=60, ticks=300, warmup_ticks=100, seed=3)
    >>> bool(row["delivery_rate"] > 0.95), row["churny_fraction"]
    (True, 0.0)
    """
    world = scenario_world(name, seed=seed, ticks=ticks, warmup_ticks=warmup_ticks, **overrides)
    sc = resolve_scenario(name, **overrides)
    up = math.inf
    if sc.bandwidth is not None:
        bw = parse_bandwidth(sc.bandwidth)
        if bw[0] != "uniform":
            raise ParameterError(f"scenario {name!r}: Lean Gossip's world has one upload for "
                                 f"every node; got bandwidth={sc.bandwidth!r}", key="bandwidth")
        up = float(bw[1][0])
    return run_world(world, D, D_lazy, upload_mbps=up)
