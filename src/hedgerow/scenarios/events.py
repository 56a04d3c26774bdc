"""Event-by-event churn runs: one row per join or leave, with the invariants checked after each.

OMen (Chen, Vitenberg, Jacobsen, DEBS 2016, §6) measures its overlays per
*churn round* (one join or leave of the trace, §6.5 "churn round"): degrees,
repair time, messages.  :func:`run_events` replays a join/leave sequence on
any maintained protocol (:class:`~hedgerow.protocols.engine_api.ChurnEngine`)
and, after each event, hands the engine to an
:class:`~hedgerow.scenarios.invariants.InvariantObserver`.  The named churn
scenarios of :data:`CHURN_SCENARIOS` pair a workload with a churn source.

Readings chosen
---------------
1. **Time.**  Events are replayed in trace order, one every ``gap`` seconds
   of simulated time (default 10 s), the trace time being kept in each row's
   ``time_s``: the Google trace's gaps are minutes, far longer than any
   repair, so only the order matters for sequential events.
2. **Rejoin** keeps the node's topics (a machine that comes back is the same
   user, OMen's FB/TW reading); ``rejoin="redraw"`` draws new ones from the
   workload's popularity (SpiderCast §3.8).
3. **Ignored events**: a join of an online node or a leave of an offline one
   (a sampled trace can hold both) is skipped and counted.
4. **Repair time** is the wall time of the engine's join/leave plus its run
   up to the next event (a central repair finishes within the call; a
   message-passing engine needs the run).
5. **Messages** are the engine's control messages sent during the event;
   by kind when the engine reports them (``last_event["messages"]``).

Inputs of the named scenarios are the outputs of ``hedgerow ingest`` jobs
(``social``, ``follower-graph``, ``churn``) kept in :func:`inputs_dir`
(``$HEDGEROW_INPUTS``, default ``~/.cache/hedgerow/inputs``); ``hedgerow churn
--scenario NAME`` runs the missing jobs once (``hedgerow.pipeline.inputs``).

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=60, topics=10, subs=3, seed=1)
>>> online0, ev = synthetic_churn(inst.n_nodes, "onoff", seed=1, events=20)
>>> res = run_events("lowoda-inc", inst, online0, ev, seed=1)
>>> len(res.rows), res.summary["violations"]
(20, 0)
"""

from __future__ import annotations

import dataclasses
import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols import protocol_class
from hedgerow.protocols.base import MaintainedProtocol
from hedgerow.scenarios.churn_setup import churn_control, churn_protocol
from hedgerow.scenarios.churn_wire import ChurnWire
from hedgerow.scenarios.gossip_churn import sample_events
from hedgerow.scenarios.inputs import INPUTS, input_folder, inputs_dir, prepared_folder
from hedgerow.scenarios.invariants import Hook, InvariantObserver
from hedgerow.scenarios.traces import EVENT_DTYPE, JOIN, LEAVE, load_events, trace_churn

__all__ = [
    "CHURN_SCENARIOS",
    "INPUTS",
    "ChurnScenario",
    "EventsResult",
    "churn_scenario_names",
    "input_folder",
    "inputs_dir",
    "load_churn_scenario",
    "run_events",
    "synthetic_churn",
]

#: synthetic workloads a scenario may name (OMen's 2K instances, power-law sizes)
SYNTHETIC_WORKLOADS = {
    "syn2k-unif": "uniform",
    "syn2k-zipf": "zipf2",
    "syn2k-expo": "nyse",
}


@dataclass(frozen=True)
class ChurnScenario:
    """A named churn setting: a workload, a churn source, the number of events.

    Attributes
    ----------
    workload : str
        A social input of :data:`INPUTS` (``fb1k``...) or a synthetic workload
        (``syn2k-unif``, ``syn2k-zipf``, ``syn2k-expo``).
    churn : str
        A churn input of :data:`INPUTS` (``google1k``...) or ``onoff`` /
        ``burst`` (:func:`synthetic_churn`).
        For a cycle-driven scenario (``shape="cycle"``): ``correlated-high``,
        ``correlated-low`` or ``correlated-random`` (Vitis section IV-A's
        subscriptions, :func:`~hedgerow.workloads.correlated.correlated_instance`).
    churn : str
        A churn input of :data:`INPUTS` (``google1k``...) or ``onoff`` /
        ``burst`` (:func:`synthetic_churn`); for a cycle-driven scenario also
        ``flash`` (:func:`~hedgerow.scenarios.churn.flash_crowd`).
    events : int or None
        Events replayed by default (``None``: the whole trace).
    note : str
        What differs from the paper's setting.
    shape : {"maintained", "cycle"}
        The protocols it runs (the capability): maintained overlays event by
        event (:func:`run_events`), or cycle-driven gossip sampled every
        ``every`` cycles (:func:`~hedgerow.scenarios.gossip_churn.run_gossip_churn`).
    nodes, cycles, every : int or None
        Cycle-driven: workload nodes, cycles run, cycles between samples.
    at, lifetime : float or None
        Cycle-driven ``flash``: the crowd's cycle, then λ of the on/off churn (cycles).
    speedup : float or None
        Cycle-driven trace: trace seconds per cycle.
    """

    name: str
    description: str
    workload: str
    churn: str
    events: int | None = None
    note: str = ""
    shape: str = "maintained"
    nodes: int | None = None
    cycles: int | None = None
    every: int | None = None
    at: float | None = None
    lifetime: float | None = None
    speedup: float | None = None

    def inputs(self) -> list[str]:
        """The named ingest outputs this scenario reads."""
        return [x for x in (self.workload, self.churn) if x in INPUTS]


#: the named churn scenarios
CHURN_SCENARIOS: dict[str, ChurnScenario] = {
    s.name: s
    for s in (
        ChurnScenario("fb1k-google", "FB 1K (BFS sample of SNAP ego-Facebook) x the Google 2011 "
                      "machine events of 1,000 machines (OMen §6.1)", "fb1k", "google1k"),
        ChurnScenario("fb4k-google", "FB-4K (the whole ego-Facebook graph, 4,039 users) x the "
                      "Google trace of 4,039 machines", "fb4k", "google4k",
                      note="FB-4K stands in for the paper's FB 10K (ego-Facebook has 4,039 users)"),
        ChurnScenario("tw1k-google", "Twitter-like follower graph of 1,000 users x the Google "
                      "trace of 1,000 machines", "tw1k", "google1k",
                      note="synthetic follower graph (Vitis statistics), not a Twitter sample"),
        ChurnScenario("tw10k-google", "Twitter-like follower graph of 10,000 users x the Google "
                      "trace of 10,000 machines", "tw10k", "google10k",
                      note="synthetic follower graph (Vitis statistics), not a Twitter sample"),
        ChurnScenario("syn2k-google", "OMen's synthetic 2K (uniform popularity, power-law sizes)"
                      " x the Google trace of 4,039 machines cut to the 2,000 first nodes",
                      "syn2k-unif", "google4k"),
        ChurnScenario("fb1k-onoff", "FB 1K under synthetic on/off churn (exponential on/off "
                      "times, SpiderCast §3.8)", "fb1k", "onoff", events=500),
        ChurnScenario("fb1k-burst", "FB 1K under bursts: 3 nodes crash at once, then rejoin",
                      "fb1k", "burst", events=300),
        ChurnScenario("vitis-flash-crowd", "Vitis IV-F (Fig. 12): 2,000 of 4,000 nodes online,"
                      " the other 2,000 join within 5 cycles after cycle 100, then on/off churn"
                      " (λ 600 cycles); correlated subscriptions (IV-A, high); 160 cycles",
                      "correlated-high", "flash", shape="cycle", nodes=4000, cycles=160,
                      every=5, at=100.0, lifetime=600.0,
                      note="a flash crowd stands in for the paper's Skype superpeer trace"),
        ChurnScenario("vitis-flash-crowd-quick", "vitis-flash-crowd reduced: 1,000 nodes, the"
                      " crowd at cycle 60, 100 cycles", "correlated-high", "flash",
                      shape="cycle", nodes=1000, cycles=100, every=5, at=60.0, lifetime=600.0,
                      note="a flash crowd stands in for the paper's Skype superpeer trace"),
        ChurnScenario("vitis-trace", "Vitis IV-F under the Google 2011 machine events of 4,039"
                      " machines, one hour of trace per cycle; correlated subscriptions (IV-A,"
                      " high); 160 cycles", "correlated-high", "google4k", shape="cycle",
                      nodes=4039, cycles=160, every=5, speedup=3600.0,
                      note="machine events stand in for the paper's Skype superpeer trace"),
    )
}


def churn_scenario_names(shape: str | None = None) -> list[str]:
    """Names of :data:`CHURN_SCENARIOS` (only those for protocols of ``shape`` when given).

    Examples
    --------
    >>> churn_scenario_names("cycle")
    ['vitis-flash-crowd', 'vitis-flash-crowd-quick', 'vitis-trace']
    """
    return sorted(n for n, s in CHURN_SCENARIOS.items() if shape in (None, s.shape))


def synthetic_churn(n: int, kind: str, *, seed: int, events: int = 500, lifetime: float = 100.0,
                    burst: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic churn controls: ``(online0, events)``.

    ``onoff``: each node online with probability 0.8 at the start, on/off
    times exponential (means ``lifetime`` and ``lifetime / 4``, SpiderCast
    §3.8), cut to ``events`` events.  ``burst``: 90 % online at the start;
    repeatedly ``burst`` random online nodes leave at the same instant, then
    rejoin one by one (concurrent crashes).
    """
    from hedgerow.scenarios.churn import exponential_churn

    rng = RngStreams(seed).stream(f"churn:{kind}")
    if kind == "onoff":
        online0, ev = exponential_churn(n, lifetime, lifetime * max(1.0, events / n * 2.5), rng)
        return online0, ev[:events]
    if kind == "burst":
        online0 = rng.random(n) < 0.9
        on = online0.copy()
        out: list[tuple[float, int, int]] = []
        t = 0.0
        while len(out) < events:
            t += 1.0
            k = min(burst, int(on.sum()) - 1)
            who = rng.choice(np.flatnonzero(on), size=k, replace=False)
            for p in who:
                out.append((t, int(p), LEAVE))
            on[who] = False
            for p in who:
                t += 1.0
                out.append((t, int(p), JOIN))
            on[who] = True
        ev = np.array(out[:events], dtype=EVENT_DTYPE)
        return online0, ev
    raise ParameterError(f"unknown synthetic churn {kind!r}; allowed: onoff, burst", key="churn")


def load_churn_scenario(
    name: str, *, seed: int = 0, nodes: int | None = None
) -> tuple[Instance, np.ndarray, np.ndarray]:
    """``(instance, online0, events)`` of a named churn scenario.

    ``nodes`` replaces a cycle-driven scenario's number of nodes (a reduced run; the other
    scenarios read their workload from their inputs and refuse it).  Raises
    :class:`DataError` when an input is not prepared and :class:`ParameterError` when the
    trace has more nodes than the workload.

    Examples
    --------
    >>> inst, on, ev = load_churn_scenario("vitis-flash-crowd", seed=1, nodes=100)
    >>> inst.n_nodes, int(on.sum()), float(ev["time_s"].max()) <= 160.0
    (100, 50, True)
    """
    if name not in CHURN_SCENARIOS:
        raise ParameterError(
            f"unknown churn scenario {name!r}; allowed: {', '.join(churn_scenario_names())}",
            key="scenario",
        )
    sc = CHURN_SCENARIOS[name]
    if sc.shape == "cycle":
        if nodes is not None:
            if int(nodes) < 2:
                raise ParameterError(f"nodes must be >= 2, got {nodes}", key="nodes")
            sc = dataclasses.replace(sc, nodes=int(nodes))
        return _cycle_scenario(sc, seed)
    if nodes is not None:
        raise ParameterError(f"churn scenario {name} reads its nodes from its workload"
                             f" ({sc.workload}); drop nodes", key="nodes")
    if sc.workload in SYNTHETIC_WORKLOADS:
        from hedgerow.workloads.powerlaw import powerlaw_instance

        inst = powerlaw_instance(popularity=SYNTHETIC_WORKLOADS[sc.workload], seed=seed)
    else:
        from hedgerow.workloads.social import load_instance

        inst = load_instance(prepared_folder(sc.workload))
    n = inst.n_nodes
    if sc.churn in INPUTS:
        ev = load_events(prepared_folder(sc.churn))
        if sc.workload in SYNTHETIC_WORKLOADS:
            ev = ev[ev["node"] < n]  # the first n machines of the larger sample
        online0, events = trace_churn(ev, n)
    else:
        online0, events = synthetic_churn(n, sc.churn, seed=seed, events=sc.events or 500)
    return inst, online0, events


def _cycle_scenario(sc: ChurnScenario, seed: int) -> tuple[Instance, np.ndarray, np.ndarray]:
    """A cycle-driven scenario's workload and control (times in cycles)."""
    from hedgerow.workloads.correlated import correlated_instance

    assert sc.nodes is not None and sc.cycles is not None
    inst = correlated_instance(sc.nodes, correlation=sc.workload.split("-", 1)[1], seed=seed)
    if sc.churn == "flash":
        from hedgerow.scenarios.churn import flash_crowd

        assert sc.lifetime is not None and sc.at is not None
        online0, events = flash_crowd(sc.nodes, sc.lifetime, float(sc.cycles),
                                      RngStreams(seed).stream("churn"), at=sc.at)
        return inst, online0, events
    online0, events = trace_churn(load_events(prepared_folder(sc.churn)), sc.nodes,
                                  speedup=sc.speedup or 1.0, duration=float(sc.cycles))
    return inst, online0, events


@dataclass
class EventsResult:
    """What :func:`run_events` returns: per-event ``rows``, a ``summary``, the final ``engine``."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    engine: Any = None
    start: dict[str, Any] = field(default_factory=dict)


def _observer_for(protocol: str, n_topics: int, hooks) -> InvariantObserver:
    cls = protocol_class(protocol)
    repairs = bool(cls.repairs_tco)
    kind = cls.repair_kind if repairs else None
    hooks = (*hooks, *cls.invariant_hooks)
    return InvariantObserver(n_topics, expect_tco=repairs, repair=kind, hooks=tuple(hooks))


def run_events(
    protocol: str,
    instance: Instance,
    online0: np.ndarray,
    events: np.ndarray,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    n_events: int | None = None,
    gap: float = 10.0,
    timeout: float = 0.1,
    rejoin: str = "same",
    hooks: tuple[Hook, ...] | list = (),
    progress: Callable[[int, int], None] | None = None,
    wire: Mapping[str, Any] | None = None,
) -> EventsResult:
    """Replay ``events`` one by one on ``protocol``'s engine; one row per event.

    Parameters
    ----------
    protocol : str
        A maintained protocol (``lowoda-inc``, ``lowoda-re``, ``spidercast``...).
    instance : Instance
        The workload.
    online0, events : numpy.ndarray
        Nodes online at the start, then :data:`~hedgerow.scenarios.traces.EVENT_DTYPE`
        events (e.g. from :func:`load_churn_scenario`).
    seed : int
        The run's seed (the protocol's streams: ``proto.streams(seed)``).
    params : dict, optional
        Protocol parameters.
    n_events : int, optional
        Replay only the first ``n_events`` events.
    gap : float, default 10
        Simulated seconds between events (reading 1).
    timeout : float, default 0.1
        Seconds per event-core unit (SpiderCast's ``connect_timeout``).
    rejoin : {"same", "redraw"}
        A rejoining node's topics (reading 2).
    hooks : sequence
        Extra invariant checks (:class:`~hedgerow.scenarios.invariants.InvariantObserver`).
    progress : callable, optional
        ``progress(done, total)`` after each event.
    wire : mapping, optional
        Network settings (``bandwidth``, ``size``, ``publication``, ...): after each
        event one message per topic with an online subscriber is sent through the
        contended network over the online overlay, and the row gains
        :data:`~hedgerow.scenarios.churn_wire.CHURN_WIRE_KEYS` (over the online nodes).

    Returns
    -------
    EventsResult
        Rows with ``event, round, time_s, type, node, online, edges, edges_added,
        max_degree, avg_degree, partitioned_topics, repair_seconds`` (wall),
        ``repair_cpu_seconds``, ``messages``,
        ``msg_<kind>``, the engine's own per-event figures, ``viol_<name>`` and
        ``violations``.
    """
    if rejoin not in ("same", "redraw"):
        raise ParameterError(f"rejoin must be 'same' or 'redraw', got {rejoin!r}", key="rejoin")
    if not gap > 0 or not timeout > 0:
        raise ParameterError("gap and timeout must be positive")
    setup = churn_protocol(protocol, instance, capability="maintained", seed=seed,
                           params=params)
    online0, events = churn_control(instance, online0, events)
    if n_events is not None:
        if int(n_events) < 1:
            raise ParameterError(f"events must be >= 1, got {n_events}", key="events")
        events = events[: int(n_events)]
    streams = RngStreams(seed)
    sim = Simulator(seconds_per_unit=timeout)
    engine = cast(MaintainedProtocol, setup.proto).maintenance_engine(instance, setup.streams,
                                                                      sim=sim)
    t0 = _time.perf_counter()
    engine.start(online0)
    engine.run_until(sim.to_units(gap))
    start_seconds = _time.perf_counter() - t0
    observer = _observer_for(protocol, instance.n_topics, hooks)
    start_row = observer.after_event(engine, {"type": "start", "node": -1})
    start_violations = dict(observer.totals)
    observer.reset(engine)
    observer.totals = {"events": 0, "violations": 0}
    topic_rng = streams.stream("churn:interest")
    probs = instance.meta.get("popularity_vector")
    probs = np.ones(instance.n_topics) if probs is None else np.asarray(probs, dtype=np.float64)
    rows: list[dict[str, Any]] = []
    ignored = 0
    on_wire = ChurnWire.create(instance, seed=seed, wire=wire or {},
                               policy=setup.proto.forwarding)
    messages = streams.stream("messages")
    wall0 = _time.perf_counter()
    for i, (t_s, p, kind) in enumerate(
        zip(events["time_s"].tolist(), events["node"].tolist(), events["event"].tolist(),
            strict=True)
    ):
        p = int(p)
        typ = "join" if kind == JOIN else "leave"
        if (kind == JOIN) == bool(engine.online[p]):
            ignored += 1
            continue
        msgs0 = engine.control_messages
        t_next = sim.to_units(gap * (len(rows) + 2))
        tw = _time.perf_counter()
        tc = _time.process_time()
        if kind == JOIN:
            if rejoin == "redraw":
                from hedgerow.scenarios.churn import redraw_topics

                engine.join(p, redraw_topics(probs, int(instance.n_subs[p]), topic_rng))
            else:
                engine.join(p)
        else:
            engine.leave(p)
        engine.run_until(t_next)
        repair = _time.perf_counter() - tw
        repair_cpu = _time.process_time() - tc
        row: dict[str, Any] = {
            "event": len(rows) + 1,
            "round": len(rows) + 1,
            "trace_index": i,
            "time_s": float(t_s),
            "type": typ,
            "node": p,
        }
        row.update(observer.after_event(engine, {"type": typ, "node": p}))
        row["repair_seconds"] = repair
        row["repair_cpu_seconds"] = repair_cpu
        row["messages"] = int(engine.control_messages - msgs0)
        last = getattr(engine, "last_event", None) or {}
        for k, v in dict(last.get("messages", {})).items():
            row[f"msg_{k}"] = int(v)
        for k, v in last.items():
            if k in ("type", "node", "messages", "edges_added", "repair_seconds"):
                continue
            if isinstance(v, int | float | bool | np.integer | np.floating):
                row.setdefault(k, v.item() if hasattr(v, "item") else v)
        if on_wire is not None:
            subs = engine.subscriptions()
            publisher, topic, _ = sample_events(subs, engine.online, messages)
            row.update(on_wire.measure(engine.online, engine.overlay().edges(), subs.masks,
                                       publisher, topic, engine.online))
        rows.append(row)
        if progress is not None:
            progress(len(rows), len(events))
    wall = _time.perf_counter() - wall0
    rep = np.array([r["repair_seconds"] for r in rows]) if rows else np.zeros(0)
    rep_cpu = np.array([r["repair_cpu_seconds"] for r in rows]) if rows else np.zeros(0)
    summary = {
        "protocol": protocol,
        "params": setup.values,
        "seed": int(seed),
        "nodes": instance.n_nodes,
        "events": len(rows),
        "ignored_events": ignored,
        "joins": sum(r["type"] == "join" for r in rows),
        "leaves": sum(r["type"] == "leave" for r in rows),
        "violations": int(observer.totals["violations"]),
        "violations_by_kind": {k: v for k, v in observer.totals.items()
                               if k not in ("events", "violations")},
        "start_violations": int(start_violations["violations"]),
        "start_max_degree": start_row["max_degree"],
        "start_avg_degree": start_row["avg_degree"],
        "start_seconds": start_seconds,
        "mean_max_degree": float(np.mean([r["max_degree"] for r in rows])) if rows else 0.0,
        "mean_avg_degree": float(np.mean([r["avg_degree"] for r in rows])) if rows else 0.0,
        "max_partitioned_topics": max((r["partitioned_topics"] for r in rows), default=0),
        "repair_seconds_median": float(np.median(rep)) if len(rep) else 0.0,
        "repair_cpu_seconds_median": float(np.median(rep_cpu)) if len(rep_cpu) else 0.0,
        "messages": int(sum(r["messages"] for r in rows)),
        "wall_seconds": wall,
    }
    return EventsResult(rows=rows, summary=summary, engine=engine, start=start_row)
