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

The roles follow PeerSim's split: the *protocol* is the message-passing engine
of :mod:`hedgerow.protocols.maintenance` (SpiderCast, ``similarity``,
``random``), which gains :meth:`~hedgerow.protocols.maintenance.Maintenance.join`
and :meth:`~hedgerow.protocols.maintenance.Maintenance.leave`; the *control* is
a join/leave event sequence (:func:`exponential_churn` or a replayed trace,
:func:`trace_churn`); the *observer* is :func:`snapshot`.

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
>>> res = run_dynamic("spidercast", inst, lifetime=20.0, duration=40.0,
...                   snapshot_every=20.0, seed=1)
>>> [int(r["time_s"]) for r in res.rows], [r["partitioned_topics"] for r in res.rows]
([20, 40], [0, 0])
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hedgerow.churn import EVENT_DTYPE, JOIN, LEAVE
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams

__all__ = [
    "DynamicResult",
    "exponential_churn",
    "redraw_topics",
    "run_dynamic",
    "snapshot",
    "trace_churn",
]

#: protocols whose overlays are kept by the message-passing maintenance engine
DYNAMIC_PROTOCOLS = ("spidercast", "similarity", "random")


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
        time 0, an array of :data:`hedgerow.churn.EVENT_DTYPE` sorted by time.

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
    means = np.array([off_ratio * lifetime, lifetime])
    times: list[np.ndarray] = []
    nodes: list[np.ndarray] = []
    kinds: list[np.ndarray] = []
    state = online0.copy()
    clock = np.zeros(n_nodes)
    active = np.arange(n_nodes)
    while len(active):
        clock[active] += rng.exponential(means[state[active].astype(int)])
        active = active[clock[active] < duration]
        times.append(clock[active].copy())
        nodes.append(active.copy())
        kinds.append(np.where(state[active], LEAVE, JOIN).astype(np.int8))
        state[active] = ~state[active]
    events = np.empty(sum(len(t) for t in times), dtype=EVENT_DTYPE)
    events["time_s"] = np.concatenate(times) if times else []
    events["node"] = np.concatenate(nodes) if nodes else []
    events["event"] = np.concatenate(kinds) if kinds else []
    order = np.lexsort((events["node"], events["time_s"]))
    return online0, events[order]


def trace_churn(
    events: np.ndarray, n_nodes: int, *, speedup: float = 1.0, duration: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Turn a replayed join/leave trace into ``(online0, events)``.

    Parameters
    ----------
    events : numpy.ndarray
        :data:`hedgerow.churn.EVENT_DTYPE` events in order, e.g. from
        :func:`hedgerow.churn.load_events` (an output of ``hedgerow ingest churn``).
    n_nodes : int
        Nodes of the instance; every trace node must be below it.
    speedup : float, default 1.0
        Trace seconds per simulated second.
    duration : float, optional
        Keep events up to this simulated time.

    Returns
    -------
    online0, events
        Nodes that join at time 0 (they start online) and the later events, in
        simulated seconds.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.churn import EVENT_DTYPE
    >>> ev = np.array([(0.0, 0, 1), (0.0, 1, 1), (50.0, 1, -1), (80.0, 2, 1)], dtype=EVENT_DTYPE)
    >>> on, later = trace_churn(ev, 3, speedup=10.0)
    >>> on.tolist(), later["time_s"].tolist()
    ([True, True, False], [5.0, 8.0])
    """
    if not speedup > 0:
        raise ParameterError(f"speedup must be positive, got {speedup}")
    ev = np.asarray(events, dtype=EVENT_DTYPE)
    if len(ev) and int(ev["node"].max()) >= n_nodes:
        raise ParameterError(
            f"the trace has node {int(ev['node'].max())}, but the workload has {n_nodes} nodes;"
            f" use at least {int(ev['node'].max()) + 1} nodes"
        )
    at0 = (ev["time_s"] <= 0.0) & (ev["event"] == JOIN)
    online0 = np.zeros(n_nodes, dtype=bool)
    online0[ev["node"][at0]] = True
    later = ev[~(ev["time_s"] <= 0.0)].copy()
    later["time_s"] = later["time_s"] / speedup
    if duration is not None:
        later = later[later["time_s"] <= duration]
    return online0, later


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


def snapshot(
    engine: Any, included: np.ndarray, n_topics: int, *, diameter: bool = False
) -> dict[str, Any]:
    """Metrics of the online overlay, measured on the ``included`` nodes (reading 5).

    Links count between online nodes only.  Degrees are those of the included
    nodes; a topic is partitioned when its included subscribers lie in more
    than one component of the topic subgraph of *all* online subscribers (an
    event may travel through a node that has just joined, but a node still
    building its links is not required to be reached).

    Parameters
    ----------
    engine : hedgerow.protocols.maintenance.Maintenance
        A running dynamic engine.
    included : numpy.ndarray
        Bool mask of the nodes to measure (a subset of the online ones).
    n_topics : int
        Number of topics.
    diameter : bool, default False
        Also give ``max_topic_diameter``, over the topic subgraphs of all online nodes.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from hedgerow.metrics import degree_ci95

    ids = np.flatnonzero(engine.online)
    local = np.full(engine.n, -1, dtype=np.int64)
    local[ids] = np.arange(len(ids))
    edges = engine.overlay().edges()
    if len(edges):
        a, b = local[edges[:, 0]], local[edges[:, 1]]
        keep = (a >= 0) & (b >= 0)
        a, b = a[keep], b[keep]
    else:
        a = b = np.zeros(0, dtype=np.int64)
    m = len(ids)
    adj = sp.coo_array(
        (np.ones(2 * len(a), dtype=np.int8), (np.r_[a, b], np.r_[b, a])), shape=(m, m)
    ).tocsr()
    adj.data[:] = 1
    inc = np.asarray(included, dtype=bool)[ids]
    deg = np.diff(adj.indptr)[inc].astype(np.float64)
    lo, hi = engine.sub_indptr[ids], engine.sub_indptr[ids + 1]
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(hi - lo, out=indptr[1:])
    rows = np.repeat(np.arange(m), hi - lo)
    topics = engine.sub_topics[lo[rows] + np.arange(indptr[-1]) - indptr[rows]]
    inst = Instance(m, n_topics, indptr, topics)
    comps = np.zeros(n_topics, dtype=np.int64)
    for t in range(n_topics):
        members = inst.subscribers(t)
        measured = inc[members]
        if not measured.any():
            continue
        _, labels = connected_components(adj[members][:, members], directed=False)
        comps[t] = len(np.unique(labels[measured]))
    row: dict[str, Any] = {
        "avg_degree": float(deg.mean()) if len(deg) else 0.0,
        "max_degree": int(deg.max()) if len(deg) else 0,
        "degree_ci95": list(degree_ci95(deg)),
        "partitioned_topics": int((comps > 1).sum()),
        "topic_components": int(comps.sum()),
    }
    if diameter:
        from hedgerow.metrics import topic_diameters

        ov = Overlay(m)
        ov.add_edges(zip(a.tolist(), b.tolist(), strict=True))
        d = topic_diameters(ov, inst)
        row["max_topic_diameter"] = int(d.max()) if len(d) else 0
    under = np.zeros(len(ids), dtype=bool)
    for task in engine.tasks:
        k = np.asarray(task.k)[ids]
        under |= (np.asarray(task.uc)[ids] > 0) & (k > 0)
    row["undercovered_nodes"] = int((under & inc).sum())
    return row


@dataclass
class DynamicResult:
    """What :func:`run_dynamic` returns.

    Attributes
    ----------
    rows : list of dict
        One per snapshot: ``time_s``, ``online``, ``measured``, the
        :func:`snapshot` metrics, ``joins``, ``leaves``, ``control_messages``
        and ``messages_per_op`` (since ``warmup``), ``lost_messages``.
    summary : dict
        Whole-run figures (also the last row's counters) and ``wall_seconds``.
    join_seconds : numpy.ndarray
        For every join after ``warmup`` that completed, the time until the
        node first had all its tasks covered (s).
    engine : hedgerow.protocols.maintenance.Maintenance or None
        The engine in its final state (``engine.run_until`` goes on from there).
    """

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    join_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    engine: Any = None


def run_dynamic(
    protocol: str,
    instance: Instance,
    *,
    lifetime: float | None = None,
    duration: float = 1000.0,
    snapshot_every: float = 200.0,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    trace: tuple[np.ndarray, np.ndarray] | None = None,
    off_ratio: float = 0.25,
    timeout: float = 0.1,
    exclude: float = 2.0,
    warmup: float = 10.0,
    min_off: float | None = None,
    diameter: bool = False,
    progress: Callable[[float, float], None] | None = None,
) -> DynamicResult:
    """Run a maintenance-based overlay under churn and take snapshots (section 3.8).

    Parameters
    ----------
    protocol : {"spidercast", "similarity", "random"}
        The overlay protocol (its parameters in ``params``).
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
        A join/leave sequence from :func:`trace_churn` instead of synthetic churn.
    off_ratio : float, default 0.25
        Mean offline time / λ (synthetic churn).
    timeout : float, default 0.1
        Seconds per ``connect_timeout`` (reading 1).
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

    Returns
    -------
    DynamicResult
    """
    from hedgerow.protocols import get_protocol

    if protocol not in DYNAMIC_PROTOCOLS:
        raise ParameterError(
            f"churn runs need a message-passing overlay protocol ({', '.join(DYNAMIC_PROTOCOLS)});"
            f" got {protocol!r}"
        )
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
        raise ParameterError("churn runs use full membership (section 3.8); drop membership")
    proto = get_protocol(protocol, **params)
    proto.check_params()
    proto._validate(instance)
    streams = RngStreams(seed)
    if trace is None:
        if lifetime is None:
            raise ParameterError("give a lifetime (synthetic churn) or a trace")
        online0, events = exponential_churn(
            instance.n_nodes,
            float(lifetime),
            float(duration),
            streams.stream("churn:times"),
            off_ratio=off_ratio,
        )
    else:
        online0, events = trace
        online0 = np.asarray(online0, dtype=bool)
        if len(online0) != instance.n_nodes:
            raise ParameterError("the trace's online mask does not match the number of nodes")
    min_off = 2.0 * timeout if min_off is None else float(min_off)
    probs = instance.meta.get("popularity_vector")
    probs = np.ones(instance.n_topics) if probs is None else np.asarray(probs, dtype=np.float64)
    topic_rng = streams.stream("churn:interest")

    engine = proto.maintenance_engine(instance, streams.child(f"protocol:{protocol}"))
    engine.start(online0)
    counts = instance.n_subs  # a rejoining node keeps its number of topics
    joined_at = np.where(online0, 0.0, -np.inf)
    left_at = np.full(instance.n_nodes, -np.inf)
    state = {"joins": 0, "leaves": 0, "ignored": 0, "delayed": 0, "msgs0": None}
    #: per node, how many events it has had (a delayed join yields to any later event)
    generation = np.zeros(instance.n_nodes, dtype=np.int64)
    join_times: list[float] = []
    watching: dict[int, float] = {}

    def on_join(p: int, t_s: float, t_event: float) -> None:
        counted = t_event > warmup
        if engine.online[p]:
            state["ignored"] += counted
            return
        topics = redraw_topics(probs, int(counts[p]), topic_rng)
        engine.join(p, topics)
        joined_at[p] = t_s
        if counted:
            state["joins"] += 1
            watching[p] = t_s

    def on_leave(p: int, t_s: float) -> None:
        counted = t_s > warmup
        if not engine.online[p]:
            state["ignored"] += counted
            return
        engine.leave(p)
        watching.pop(p, None)
        left_at[p] = t_s
        if counted:
            state["leaves"] += 1

    def dispatch(kind: int, p: int, t_s: float) -> None:
        generation[p] += 1
        if kind == JOIN:
            earliest = left_at[p] + min_off
            if t_s < earliest and not engine.online[p]:
                state["delayed"] += 1
                engine.sim.schedule_at(
                    earliest / timeout, delayed_join, p, earliest, t_s, generation[p]
                )
                return
            on_join(p, t_s, t_s)
        else:
            on_leave(p, t_s)

    def delayed_join(p: int, t_s: float, t_event: float, gen: int) -> None:
        if generation[p] == gen:
            on_join(p, t_s, t_event)
        else:
            state["ignored"] += t_event > warmup

    def start_counting() -> None:
        state["msgs0"] = int(engine.sent.sum())

    for t_s, p, kind in zip(
        events["time_s"].tolist(), events["node"].tolist(), events["event"].tolist(), strict=True
    ):
        engine.sim.schedule_at(t_s / timeout, dispatch, int(kind), int(p), float(t_s))
    engine.sim.schedule_at(warmup / timeout, start_counting)

    def check_joins() -> None:
        for p in [p for p in watching if engine.is_covered(p)]:
            join_times.append(engine.sim.now * timeout - watching.pop(p))
        if engine.sim.now * timeout < duration:
            engine.sim.schedule(1.0, check_joins)

    engine.sim.schedule_at(0.0, check_joins)
    if progress is not None:
        step = duration / 100.0

        def tick() -> None:
            progress(min(engine.sim.now * timeout, duration), float(duration))
            if engine.sim.now * timeout + step <= duration:
                engine.sim.schedule(step / timeout, tick)

        engine.sim.schedule_at(step / timeout, tick)

    rows: list[dict[str, Any]] = []
    t0 = _time.perf_counter()
    times = np.arange(snapshot_every, duration + 1e-9, snapshot_every)
    for t_snap in times:
        engine.run_until(t_snap / timeout)
        included = engine.online & (joined_at < t_snap - exclude)
        row: dict[str, Any] = {
            "time_s": float(t_snap),
            "online": int(engine.online.sum()),
            "measured": int(included.sum()),
        }
        row.update(snapshot(engine, included, instance.n_topics, diameter=diameter))
        msgs = int(engine.sent.sum()) - (state["msgs0"] or 0) if state["msgs0"] is not None else 0
        ops = state["joins"] + state["leaves"]
        row.update(
            joins=state["joins"],
            leaves=state["leaves"],
            control_messages=msgs,
            messages_per_op=msgs / ops if ops else float("nan"),
            lost_messages=int(engine.lost_messages),
        )
        rows.append(row)
    wall = _time.perf_counter() - t0
    js = np.asarray(join_times, dtype=np.float64)
    last = rows[-1] if rows else {}
    summary = {
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
        "ignored_events": state["ignored"],  # after warmup, like joins and leaves
        "delayed_joins": state["delayed"],
        "wall_seconds": wall,
    }
    return DynamicResult(rows=rows, summary=summary, join_seconds=js, engine=engine)
