"""Overlays under churn: SpiderCast's dynamic setting (DEBS'07, section 3.8).

Paper: G. Chockler, R. Melamed, Y. Tock, R. Vitenberg, "SpiderCast: A Scalable
Interest-Aware Overlay for Topic-Based Pub/Sub Communication", DEBS 2007.

Section 3.8: "each node alternates between being connected and disconnected
... it remains connected for a time interval that is distributed
exponentially with an expectation of λ ... disconnected ... with an
expectation of λ/4.  Every time a node (re-)joins the overlay, it does so with
a different interest."  1,250 and 2,500 nodes (about 1,000 and 2,000 online),
λ from 100 to 500 s, 1,000 s of simulated time, a snapshot every 200 s that
excludes "the nodes that joined the overlay in the interval [t − 2, t]", full
membership.  Reported: every topic connected in every snapshot, an average
degree not affected by λ (Figure 11; 13 and 12 in section 3.8.1), and 38 and
34 control messages per join/leave operation.

The roles follow PeerSim's split.  The *protocol* is any maintained overlay:
one that hands out a :class:`~hedgerow.protocols.engine_api.ChurnEngine`
through ``maintenance_engine(instance, streams, sim=sim)`` (today the
message-passing engine of :mod:`hedgerow.protocols.maintenance`: SpiderCast,
``similarity``, ``random``); the driver talks to it only through that
interface.  The *control* is a join/leave event sequence
(:func:`exponential_churn`, or a replayed trace from
:func:`hedgerow.scenarios.traces.trace_churn`); the *observer* is
:func:`hedgerow.scenarios.observers.snapshot`.  The scenario creates the event
core (:class:`~hedgerow.engine.Simulator`, one unit = one ``connect_timeout``)
and schedules controls and observers on it in seconds, beside the protocol's
messages, so one seed replays the same run anywhere.

Readings chosen where the paper is silent
-----------------------------------------
1. **Time.**  One ``connect_timeout`` (the period of MAINTAINNEIGHBORS) is
   ``timeout`` seconds, default 0.1 s, and messages take 5-45 ms.  The paper
   gives no value; its 2-second exclusion window says a join is complete
   within 2 s, and a join takes several iterations (one CONNECT each), so the
   timeout cannot be much above 0.2 s.  ``docs/dynamic.md`` gives the measured
   join times.
2. **Start.**  Each node is online at time 0 with the stationary probability
   λ / (λ + λ/4) = 0.8; its on and off periods are exponential from the
   start (memoryless, so this is the stationary process).  The nodes online
   at time 0 build the overlay from scratch, as in a static run.
3. **Leaving** is orderly: LEAVE to every neighbour (section 2.4 says a
   failure "has essentially the same effect").  A message to or from a node
   that is offline when it arrives is lost, and the live end treats the other
   as suspected (Figure 4, lines 29-30): a requester stops waiting for an
   answer, a neighbour is removed.
4. **Rejoining.**  A node stays offline at least ``min_off`` = 2 timeouts, so
   nothing it sent before leaving is still in flight when it returns (an
   exponential off time of mean λ/4 ≥ 25 s is below 0.2 s with probability
   under 1 %); it rejoins with no links and a new interest drawn from the
   workload's popularity law, with the same number of topics.
5. **Snapshots** measure the nodes online at ``t`` that joined before
   ``t − exclude`` (default 2 s): their average and maximum degree (links to
   online nodes), how many of them are under-covered, and per topic the
   number of components of the topic subgraph of *all* online subscribers
   that hold at least one measured subscriber (a topic is partitioned when
   that number exceeds 1).  Paths may pass through a node that has just
   joined: removing such nodes and their links from the graph (the other
   reading of "excluded") split a topic in one of five snapshots of a test
   run, each time because a settled node's only subscribers of that topic
   were three nodes that had joined in the last 2 s, i.e. a measurement
   artefact, not a partition of the overlay.
6. **Messages per operation**: control messages sent after ``warmup``
   seconds (default 10 s, after the initial build has settled) divided by
   the joins and leaves in the same interval.

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=200, topics=30, subs=5, seed=1)
>>> res = run_churn("spidercast", inst, lifetime=20.0, duration=40.0,
...                 snapshot_every=20.0, seed=1)
>>> [int(r["time_s"]) for r in res.rows], [r["partitioned_topics"] for r in res.rows]
([20, 40], [0, 0])
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols import protocol_names
from hedgerow.protocols.base import MaintainedProtocol
from hedgerow.protocols.engine_api import ChurnEngine
from hedgerow.scenarios.churn_setup import churn_control, churn_protocol
from hedgerow.scenarios.churn_wire import ChurnWire
from hedgerow.scenarios.gossip_churn import sample_events
from hedgerow.scenarios.observers import snapshot
from hedgerow.scenarios.traces import EVENT_DTYPE, JOIN, LEAVE
from hedgerow.world_settings import WORLD_SETTINGS

__all__ = [
    "ChurnResult",
    "churn_warnings",
    "exponential_churn",
    "flash_crowd",
    "maintained_protocols",
    "redraw_topics",
    "run_churn",
]


def maintained_protocols() -> list[str]:
    """Names of the registered protocols that can run under churn (capability ``maintained``).

    Examples
    --------
    >>> maintained_protocols()
    ['lowoda-inc', 'lowoda-re', 'omen', 'omen-g', 'random', 'similarity', 'spidercast']
    """
    return protocol_names("maintained")


def _on_off(
    state: np.ndarray,
    clock: np.ndarray,
    duration: float,
    lifetime: float,
    off_ratio: float,
    rng: np.random.Generator,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Alternate every node between on ~ Exp(lifetime) and off ~ Exp(off_ratio * lifetime).

    Node ``v`` starts in ``state[v]`` (``True`` = online, updated in place) at
    ``clock[v]``; its switches before ``duration`` are returned as one
    ``(time_s, node, event)`` triple of arrays per round.
    """
    means = np.array([off_ratio * lifetime, lifetime])
    parts = []
    active = np.arange(len(state))
    while len(active):
        clock[active] += rng.exponential(means[state[active].astype(int)])
        active = active[clock[active] < duration]
        parts.append(
            (
                clock[active].copy(),
                active.copy(),
                np.where(state[active], LEAVE, JOIN).astype(np.int8),
            )
        )
        state[active] = ~state[active]
    return parts


def _sorted_events(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """``(time_s, node, event)`` triples as one ``EVENT_DTYPE`` array sorted by time, then node."""
    events = np.empty(sum(len(t) for t, _, _ in parts), dtype=EVENT_DTYPE)
    for name, i in (("time_s", 0), ("node", 1), ("event", 2)):
        events[name] = np.concatenate([p[i] for p in parts]) if parts else []
    return events[np.lexsort((events["node"], events["time_s"]))]


def exponential_churn(
    n_nodes: int,
    lifetime: float,
    duration: float,
    rng: np.random.Generator,
    *,
    off_ratio: float = 0.25,
) -> tuple[np.ndarray, np.ndarray]:
    """On/off churn of section 3.8: on ~ Exp(λ), off ~ Exp(off_ratio · λ).

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    lifetime : float
        λ, the mean online time (s).
    duration : float
        Length of the run (s); events after it are not generated.
    rng : numpy.random.Generator
        Source of the on/off times.
    off_ratio : float, default 0.25
        Mean offline time as a fraction of λ (the paper: λ/4).

    Returns
    -------
    online0, events : numpy.ndarray
        Bool mask of the nodes online at time 0 (each with probability
        ``1 / (1 + off_ratio)``, the stationary share) and the events after
        time 0, an array of :data:`hedgerow.scenarios.traces.EVENT_DTYPE` sorted by time.

    Examples
    --------
    >>> import numpy as np
    >>> on, ev = exponential_churn(1000, 100.0, 1000.0, np.random.default_rng(0))
    >>> bool(0.75 < on.mean() < 0.85), bool((np.diff(ev["time_s"]) >= 0).all())
    (True, True)
    """
    if not lifetime > 0 or not duration > 0 or not off_ratio > 0:
        raise ParameterError("lifetime, duration and off_ratio must be positive")
    online0 = rng.random(n_nodes) < 1.0 / (1.0 + off_ratio)
    parts = _on_off(online0.copy(), np.zeros(n_nodes), duration, lifetime, off_ratio, rng)
    return online0, _sorted_events(parts)


def flash_crowd(
    n_nodes: int,
    lifetime: float,
    duration: float,
    rng: np.random.Generator,
    *,
    initial: int | None = None,
    at: float = 100.0,
    spread: float = 5.0,
    off_ratio: float = 0.25,
) -> tuple[np.ndarray, np.ndarray]:
    """A flash crowd, then on/off churn: the control standing in for Vitis's Skype trace.

    Vitis (IPDPS 2011) section IV-F replays 4,000 Skype superpeers, whose trace
    we do not have; its Fig. 12 singles out *flash crowds*, "a large number of
    nodes join at nearly the same time".  This control makes one: ``initial``
    nodes (default half, e.g. 2,000 of 4,000) are online from time 0, the
    others join at uniform times in ``[at, at + spread]`` (default within 5 s =
    5 gossip cycles of 1 s, after 100 cycles of settling), and from
    ``at + spread`` every node alternates on ~ Exp(λ) and off ~ Exp(off_ratio
    · λ) as in :func:`exponential_churn` (moderate churn).

    Returns
    -------
    online0, events : numpy.ndarray
        As :func:`exponential_churn`.

    Examples
    --------
    >>> import numpy as np
    >>> on, ev = flash_crowd(4000, 600.0, 200.0, np.random.default_rng(0))
    >>> int(on.sum())
    2000
    >>> crowd = ev[(ev["time_s"] >= 100.0) & (ev["time_s"] <= 105.0) & (ev["event"] == 1)]
    >>> len(crowd) >= 2000, bool((np.diff(ev["time_s"]) >= 0).all())
    (True, True)
    """
    if not lifetime > 0 or not duration > 0 or not off_ratio > 0 or not at >= 0 or not spread >= 0:
        raise ParameterError(
            "flash crowd: lifetime, duration and off_ratio must be positive, at and spread >= 0"
        )
    first = n_nodes // 2 if initial is None else int(initial)
    if not 0 < first < n_nodes:
        raise ParameterError(
            f"flash crowd: initial must be in 1..{n_nodes - 1} nodes, got {first}", key="initial"
        )
    order = rng.permutation(n_nodes)
    online0 = np.zeros(n_nodes, dtype=bool)
    online0[order[:first]] = True
    crowd = order[first:]
    join_t = at + rng.random(len(crowd)) * spread
    start = at + spread
    parts = [(join_t, crowd, np.full(len(crowd), JOIN, dtype=np.int8))]
    if duration > start:
        state = np.ones(n_nodes, dtype=bool)
        parts += _on_off(state, np.full(n_nodes, start), duration, lifetime, off_ratio, rng)
    events = _sorted_events(parts)
    return online0, events[events["time_s"] <= duration]


def redraw_topics(probs: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct topics by successive sampling with weights ``probs`` (section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> t = redraw_topics(np.ones(10), 4, np.random.default_rng(0))
    >>> len(t), len(set(t.tolist())), bool((t == np.sort(t)).all())
    (4, 4, True)
    """
    from hedgerow.workloads.subscriptions import draw_subscriptions

    _, topics = draw_subscriptions(1, probs, (count, count), rng)
    return topics.astype(np.int64)


@dataclass
class ChurnResult:
    """What :func:`run_churn` returns.

    Attributes
    ----------
    rows : list of dict
        One per snapshot: ``time_s``, ``online``, ``measured``, the
        :func:`~hedgerow.scenarios.observers.snapshot` metrics, ``joins``,
        ``leaves``, ``control_messages`` and ``messages_per_op`` (since
        ``warmup``), ``lost_messages``.
    summary : dict
        Whole-run figures (also the last row's counters), ``wall_seconds`` and
        ``warnings`` (one line each where the run measured less than asked:
        no snapshot, nodes that never appear in a replayed trace).
    join_seconds : numpy.ndarray
        For every join after ``warmup`` that completed, the time until the
        node first had all its tasks covered (s).
    engine : ChurnEngine or None
        The engine in its final state (``engine.run_until`` goes on from there,
        in ``engine.sim`` units).
    """

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    join_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    engine: ChurnEngine | None = None


class _Control:
    """Applies the join/leave events to the engine and counts them (readings 4 and 6).

    Every time is in seconds; the event core converts (``sim.*_seconds``).
    Operations and control messages are counted after ``warmup``.  A node
    that rejoins sooner than ``min_off`` after leaving joins at that bound,
    unless a later event of the node comes first.  Joins after ``warmup`` are
    timed until the node is covered, checked once per ``connect_timeout``.
    """

    def __init__(
        self,
        engine: ChurnEngine,
        sim: Simulator,
        instance: Instance,
        online0: np.ndarray,
        topic_rng: np.random.Generator,
        *,
        min_off: float,
        warmup: float,
        duration: float,
    ) -> None:
        self.engine, self.sim = engine, sim
        self.min_off, self.warmup, self.duration = min_off, warmup, duration
        probs = instance.meta.get("popularity_vector")
        n_topics = instance.n_topics
        self.probs = np.ones(n_topics) if probs is None else np.asarray(probs, dtype=np.float64)
        self.topic_rng = topic_rng
        self.counts = instance.n_subs  # a rejoining node keeps its number of topics
        self.joined_at = np.where(online0, 0.0, -np.inf)
        self.left_at = np.full(instance.n_nodes, -np.inf)
        #: per node, how many events it has had (a delayed join yields to any later event)
        self.generation = np.zeros(instance.n_nodes, dtype=np.int64)
        self.joins = self.leaves = self.ignored = self.delayed = 0
        self.msgs0: int | None = None
        self.join_times: list[float] = []
        self.watching: dict[int, float] = {}

    # ------------------------------------------------------------ scheduling
    def schedule(self, events: np.ndarray) -> None:
        """Put the events, the start of counting and the join timer on the core."""
        sim = self.sim
        for t_s, p, kind in zip(
            events["time_s"].tolist(),
            events["node"].tolist(),
            events["event"].tolist(),
            strict=True,
        ):
            sim.schedule_at_seconds(t_s, self.dispatch, int(kind), int(p), float(t_s))
        sim.schedule_at_seconds(self.warmup, self.start_counting)
        sim.schedule_at_seconds(0.0, self.check_joins)

    # ------------------------------------------------------------ events
    def dispatch(self, kind: int, p: int, t_s: float) -> None:
        self.generation[p] += 1
        if kind == JOIN:
            earliest = self.left_at[p] + self.min_off
            if t_s < earliest and not self.engine.online[p]:
                self.delayed += 1
                self.sim.schedule_at_seconds(
                    earliest, self.delayed_join, p, earliest, t_s, self.generation[p]
                )
                return
            self.on_join(p, t_s, t_s)
        else:
            self.on_leave(p, t_s)

    def delayed_join(self, p: int, t_s: float, t_event: float, gen: int) -> None:
        if self.generation[p] == gen:
            self.on_join(p, t_s, t_event)
        else:
            self.ignored += t_event > self.warmup

    def on_join(self, p: int, t_s: float, t_event: float) -> None:
        counted = t_event > self.warmup
        if self.engine.online[p]:
            self.ignored += counted
            return
        topics = redraw_topics(self.probs, int(self.counts[p]), self.topic_rng)
        self.engine.join(p, topics)
        self.joined_at[p] = t_s
        if counted:
            self.joins += 1
            self.watching[p] = t_s

    def on_leave(self, p: int, t_s: float) -> None:
        counted = t_s > self.warmup
        if not self.engine.online[p]:
            self.ignored += counted
            return
        self.engine.leave(p)
        self.watching.pop(p, None)
        self.left_at[p] = t_s
        if counted:
            self.leaves += 1

    def start_counting(self) -> None:
        self.msgs0 = self.engine.control_messages

    def check_joins(self) -> None:
        now = self.sim.now_seconds
        for p in [p for p in self.watching if self.engine.is_covered(p)]:
            self.join_times.append(now - self.watching.pop(p))
        if now < self.duration:
            self.sim.schedule_in_seconds(self.sim.seconds_per_unit, self.check_joins)

    # ------------------------------------------------------------ counters
    def counters(self) -> dict[str, Any]:
        """Operations and control messages since ``warmup``, and lost messages so far."""
        msgs = self.engine.control_messages - self.msgs0 if self.msgs0 is not None else 0
        ops = self.joins + self.leaves
        return {
            "joins": self.joins,
            "leaves": self.leaves,
            "control_messages": msgs,
            "messages_per_op": msgs / ops if ops else float("nan"),
            "lost_messages": int(self.engine.lost_messages),
        }


def _report_progress(sim: Simulator, progress: Callable[[float, float], None], duration: float):
    """Call ``progress(now_s, duration)`` every hundredth of the run (from the core)."""
    step = duration / 100.0

    def tick() -> None:
        progress(min(sim.now_seconds, duration), float(duration))
        if sim.now_seconds + step <= duration:
            sim.schedule_in_seconds(step, tick)

    sim.schedule_at_seconds(step, tick)


def _churn_events(
    instance: Instance,
    streams: RngStreams,
    lifetime: float | None,
    duration: float,
    off_ratio: float,
    trace: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(online0, events)``: synthetic on/off churn, or the given trace."""
    if trace is None:
        if lifetime is None:
            raise ParameterError("give a lifetime (synthetic churn) or a trace")
        return exponential_churn(
            instance.n_nodes,
            float(lifetime),
            float(duration),
            streams.stream("churn:times"),
            off_ratio=off_ratio,
        )
    return trace


def churn_warnings(
    instance: Instance,
    online0: np.ndarray,
    events: np.ndarray,
    duration: float,
    snapshot_every: float,
    trace: bool,
) -> list[str]:
    """One-line warnings for a churn run that cannot measure what it was asked.

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0], [0], [0]], n_topics=1)
    >>> ev = np.array([(5.0, 1, JOIN)], dtype=EVENT_DTYPE)
    >>> churn_warnings(inst, np.array([True, False, False]), ev, 10.0, 20.0, True)
    ... # doctest: +NORMALIZE_WHITESPACE
    ['no snapshot: the duration (10 s) is shorter than the snapshot period (20 s)',
     '1 of 3 nodes never appear in the trace and stay offline (the trace has fewer nodes
      than the workload; use --nodes 2)']
    """
    out = []
    if duration < snapshot_every:
        out.append(
            f"no snapshot: the duration ({duration:g} s) is shorter than the snapshot period"
            f" ({snapshot_every:g} s)"
        )
    if trace:
        seen = np.asarray(online0, dtype=bool).copy()
        seen[np.asarray(events["node"], dtype=np.int64)] = True
        missing = int((~seen).sum())
        if missing:
            used = int(np.flatnonzero(seen).max()) + 1 if seen.any() else 0
            why = (f"the trace has fewer nodes than the workload; use --nodes {used}"
                   if used < instance.n_nodes else "the trace's node ids leave gaps")
            out.append(
                f"{missing} of {instance.n_nodes} nodes never appear in the trace and stay"
                f" offline ({why})"
            )
    return out


def _summary(
    protocol: str,
    instance: Instance,
    lifetime: float | None,
    duration: float,
    rows: list[dict[str, Any]],
    control: _Control,
    js: np.ndarray,
    wall: float,
) -> dict[str, Any]:
    last = rows[-1] if rows else {}
    return {
        "protocol": protocol,
        "nodes": instance.n_nodes,
        "lifetime": lifetime,
        "duration": duration,
        "snapshots": len(rows),
        "connected_snapshots": sum(1 for r in rows if r["partitioned_topics"] == 0),
        "max_partitioned_topics": max((r["partitioned_topics"] for r in rows), default=0),
        "mean_avg_degree": float(np.mean([r["avg_degree"] for r in rows])) if rows else 0.0,
        "joins": last.get("joins", 0),
        "leaves": last.get("leaves", 0),
        "control_messages": last.get("control_messages", 0),
        "messages_per_op": last.get("messages_per_op", float("nan")),
        "join_seconds_median": float(np.median(js)) if len(js) else float("nan"),
        "join_seconds_p99": float(np.quantile(js, 0.99)) if len(js) else float("nan"),
        "ignored_events": control.ignored,  # after warmup, like joins and leaves
        "delayed_joins": control.delayed,
        "wall_seconds": wall,
    }


def _on_wire(on_wire: ChurnWire, engine: ChurnEngine, receivers: np.ndarray,
             rng: np.random.Generator) -> dict[str, Any]:
    """One sample of the engine's online overlay on the contended network: a message per
    topic with an online subscriber, from a uniform one (the current interests)."""
    subs = engine.subscriptions()
    publisher, topic, _ = sample_events(subs, engine.online, rng)
    return on_wire.measure(engine.online, engine.overlay().edges(), subs.masks, publisher,
                           topic, receivers)


def run_churn(
    protocol: str,
    instance: Instance,
    *,
    lifetime: float | None = None,
    duration: float = WORLD_SETTINGS["duration"].default,
    snapshot_every: float = WORLD_SETTINGS["snapshot_every"].default,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    trace: tuple[np.ndarray, np.ndarray] | None = None,
    off_ratio: float = WORLD_SETTINGS["off_ratio"].default,
    timeout: float = WORLD_SETTINGS["timeout"].default,
    exclude: float = 2.0,
    warmup: float = 10.0,
    min_off: float | None = None,
    diameter: bool = False,
    progress: Callable[[float, float], None] | None = None,
    wire: Mapping[str, Any] | None = None,
) -> ChurnResult:
    """Run a maintained overlay under churn and take snapshots (section 3.8).

    Parameters
    ----------
    protocol : str
        A registered protocol that can run under churn (:func:`maintained_protocols`:
        ``"spidercast"``, ``"similarity"``, ``"random"``); its parameters in ``params``.
    instance : Instance
        Initial subscriptions; rejoining nodes redraw theirs from
        ``instance.meta["popularity_vector"]`` (uniform when absent).
    lifetime : float, optional
        λ, mean online time in seconds (synthetic churn); give this or ``trace``.
    duration : float, default 1000
        Simulated seconds.
    snapshot_every : float, default 200
        Snapshot period (s).
    seed : int, default 0
        Seed of every random choice (protocol, churn, new interests).
    params : dict, optional
        Protocol parameters (``membership`` must stay 1).
    trace : (online0, events), optional
        A join/leave sequence from :func:`hedgerow.scenarios.traces.trace_churn`
        instead of synthetic churn.
    off_ratio : float, default 0.25
        Mean offline time / λ (synthetic churn).
    timeout : float, default 0.1
        Seconds per ``connect_timeout`` (reading 1): the event core's unit.
    exclude : float, default 2.0
        Snapshots leave out nodes that joined in the last ``exclude`` seconds.
    warmup : float, default 10.0
        Messages and operations are counted after this time (reading 6).
    min_off : float, optional
        Shortest offline time (default 2 timeouts, reading 4).
    diameter : bool, default False
        Compute topic diameters at each snapshot.
    progress : callable, optional
        Called as ``progress(now_s, duration)`` a hundred times over the run.
    wire : mapping, optional
        Network settings (``bandwidth``, ``size``, ``publication``, ...): at each
        snapshot one message per topic with an online subscriber is sent through the
        contended network over the online overlay (the protocol's forwarding rule), and
        the row gains :data:`~hedgerow.scenarios.churn_wire.CHURN_WIRE_KEYS`, measured on
        the snapshot's nodes.

    Returns
    -------
    ChurnResult
    """
    for name, value in (
        ("duration", duration),
        ("snapshot_every", snapshot_every),
        ("timeout", timeout),
    ):
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ParameterError(f"{name} must be a positive number, got {value!r}")
    if exclude < 0 or warmup < 0:
        raise ParameterError("exclude and warmup must not be negative")
    params = dict(params or {})
    if float(params.get("membership", 1.0)) != 1.0:
        raise ParameterError("churn runs use full membership (section 3.8); drop membership",
                             key="membership")
    setup = churn_protocol(protocol, instance, capability="maintained", seed=seed,
                           params=params)
    streams = RngStreams(seed)
    online0, events = _churn_events(instance, streams, lifetime, duration, off_ratio, trace)
    online0, events = churn_control(instance, online0, events)
    warnings = churn_warnings(
        instance, online0, events, duration, snapshot_every, trace is not None
    )
    min_off = 2.0 * timeout if min_off is None else float(min_off)
    topic_rng = streams.stream("churn:interest")

    sim = Simulator(seconds_per_unit=timeout)
    engine: ChurnEngine = cast(MaintainedProtocol, setup.proto).maintenance_engine(
        instance, setup.streams, sim=sim)
    engine.start(online0)
    control = _Control(
        engine,
        sim,
        instance,
        online0,
        topic_rng,
        min_off=min_off,
        warmup=warmup,
        duration=duration,
    )
    control.schedule(events)
    if progress is not None:
        _report_progress(sim, progress, duration)
    on_wire = ChurnWire.create(instance, seed=seed, wire=wire or {},
                               policy=setup.proto.forwarding)
    messages = streams.stream("messages")

    rows: list[dict[str, Any]] = []
    t0 = _time.perf_counter()
    for t_snap in np.arange(snapshot_every, duration + 1e-9, snapshot_every):
        engine.run_until(sim.to_units(t_snap))
        included = engine.online & (control.joined_at < t_snap - exclude)
        row: dict[str, Any] = {
            "time_s": float(t_snap),
            "online": int(engine.online.sum()),
            "measured": int(included.sum()),
        }
        row.update(snapshot(engine, included, instance.n_topics, diameter=diameter))
        row.update(control.counters())
        if on_wire is not None:
            row.update(_on_wire(on_wire, engine, included, messages))
        rows.append(row)
    wall = _time.perf_counter() - t0
    js = np.asarray(control.join_times, dtype=np.float64)
    summary = _summary(protocol, instance, lifetime, duration, rows, control, js, wall)
    summary["warnings"] = warnings
    summary["params"] = setup.values
    summary["seed"] = int(seed)
    return ChurnResult(rows=rows, summary=summary, join_seconds=js, engine=engine)
