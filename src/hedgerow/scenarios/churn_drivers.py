"""Every churn run through one entry: the driver is chosen by the protocol's capability.

``hedgerow churn`` and the ``churn`` run kind (:data:`hedgerow.scenarios.kinds.KINDS`)
hand a :class:`ChurnRequest` to :func:`run_churn_request`, which looks the
protocol's shape up in :data:`CHURN_DRIVERS` and runs it:

==============  ===========================================================  ================
capability      driver                                                       rows
==============  ===========================================================  ================
``maintained``  :func:`~hedgerow.scenarios.churn.run_churn` (synthetic       one per snapshot
                or traced churn), or with a named scenario
                :func:`~hedgerow.scenarios.events.run_events`                one per event
``cycle``       :func:`~hedgerow.scenarios.gossip_churn.run_gossip_churn`    one per sample
                over a named cycle-driven scenario (``vitis-flash-crowd``,
                ``vitis-trace``)
==============  ===========================================================  ================

Every driver shares the setup of :mod:`hedgerow.scenarios.churn_setup` (the
protocol's capability and parameters, its streams, the control), and with
network settings (:attr:`ChurnRequest.wire`) measures each row on the
contended network (:mod:`hedgerow.scenarios.churn_wire`).  A request
names the settings the user gave (:attr:`ChurnRequest.given`); a driver that
does not use one of them refuses it in one line instead of dropping it.  Rows
carry ``epoch`` (their index), the ``world`` fingerprint, and the summary holds
the parameters the protocol ran with.

Examples
--------
>>> out = run_churn_request("rvr", ChurnRequest(scenario="vitis-flash-crowd-quick"),
...                         seed=1, params={"rt": 6}, nodes=200)
>>> [r["cycle"] for r in out.rows][:3], out.summary["params"]["rt"]
([5, 10, 15], 6)
>>> try:
...     run_churn_request("rvr", ChurnRequest(lifetime=10.0, given=frozenset({"lifetime"})))
... except ParameterError as e:
...     print(e.key, "|", str(e).split(" (")[0])
scenario | rvr is a cycle protocol: it runs a named cycle churn scenario
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.protocols import REGISTRY, capabilities, get_protocol, protocol_names
from hedgerow.scenarios.churn_wire import CHURN_WIRE_KEYS, wire_settings
from hedgerow.scenarios.events import CHURN_SCENARIOS, churn_scenario_names
from hedgerow.scenarios.world import world_for_instance
from hedgerow.scenarios.world.wire import WIRE_SETTINGS
from hedgerow.world_settings import WORLD_SETTINGS

__all__ = [
    "CHURN_DRIVERS",
    "ChurnOutcome",
    "ChurnRequest",
    "churn_shape",
    "run_churn_request",
]

#: the paper's worst hit ratio under churn (Vitis IV-F, Fig. 12), printed beside ours
PAPER_WORST_HIT = {"vitis": 0.99, "rvr": 0.87}

Progress = Callable[[float, float], None]


@dataclass(frozen=True)
class ChurnRequest:
    """What a churn run was asked for (the ``churn`` section of a spec, or the CLI's options).

    Attributes
    ----------
    scenario : str or None
        A named churn scenario (:data:`~hedgerow.scenarios.events.CHURN_SCENARIOS`).
    events : int or None
        Replay only the first events (maintained, named scenario).
    lifetime, off_ratio : float or None
        Synthetic on/off churn (maintained, no scenario).
    trace : str or None
        A ``hedgerow ingest churn`` output folder replayed at ``speedup`` (maintained).
    duration, snapshot_every, timeout : float
        Simulated seconds, snapshot period, seconds per ``connect_timeout`` (maintained).
    workload : mapping or None
        ``nodes``, ``topics``, ``subs``, ``popularity`` of the synthetic workload
        (maintained, no scenario).
    diameter : bool
        Topic diameters at each snapshot.
    given : frozenset of str
        The settings the user set explicitly; a driver refuses those it does not use.
    wire : mapping
        The network settings given (``bandwidth``, ``size``, ``publication``, ...): every
        driver then measures each row's dissemination on the contended network
        (:mod:`~hedgerow.scenarios.churn_wire`); empty: no network, today's rows.
    """

    scenario: str | None = None
    events: int | None = None
    lifetime: float | None = None
    trace: str | None = None
    speedup: float = 1.0
    duration: float = WORLD_SETTINGS["duration"].default
    snapshot_every: float = WORLD_SETTINGS["snapshot_every"].default
    off_ratio: float = WORLD_SETTINGS["off_ratio"].default
    timeout: float = WORLD_SETTINGS["timeout"].default
    workload: Mapping[str, Any] | None = None
    diameter: bool = False
    given: frozenset[str] = frozenset()
    wire: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *,
                      workload: Mapping[str, Any] | None = None,
                      given: set[str] | frozenset[str] = frozenset(),
                      diameter: bool = False) -> ChurnRequest:
        """A request from churn settings (``None``: not given, the declared default).

        Examples
        --------
        >>> r = ChurnRequest.from_settings({"lifetime": 50.0, "duration": None})
        >>> r.lifetime, r.duration, r.snapshot_every, r.wire
        (50.0, 1000.0, 200.0, {})
        >>> ChurnRequest.from_settings({"lifetime": 50.0, "bandwidth": "25:50"}).wire
        {'bandwidth': '25:50'}
        """
        keys = {k: v for k, v in settings.items() if v is not None and k in _REQUEST_KEYS}
        return cls(workload=workload, diameter=diameter, given=frozenset(given),
                   wire=wire_settings(settings), **keys)

    @classmethod
    def from_spec(cls, scen: Mapping[str, Any]) -> ChurnRequest:
        """The request of a resolved ``kind: churn`` scenario (its ``churn`` section)."""
        return cls.from_settings(dict(scen.get("churn") or {}), workload=scen.get("workload"),
                                 diameter=bool(scen.get("diameter", True)))


#: the churn settings a request holds
_REQUEST_KEYS = ("scenario", "events", "lifetime", "trace", "speedup", "duration",
                 "snapshot_every", "off_ratio", "timeout")


@dataclass
class ChurnOutcome:
    """What a churn run returns, whatever its driver.

    Attributes
    ----------
    rows : list of dict
        One per snapshot, event or sample, each with ``epoch`` and ``world``.
    summary : dict
        Run-wide figures, with ``protocol``, ``params`` (as run), ``seed`` and ``warnings``.
    row_kind : str
        ``"snapshot"``, ``"event"`` or ``"sample"``.
    columns : list of (str, str)
        Row keys and titles of the printed table (empty: no table).
    lines : list of str
        The printed summary.
    engine : object
        The engine at the end of the run.
    title : str
        The printed table's title.
    """

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    row_kind: str
    columns: list[tuple[str, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    engine: Any = None
    title: str = ""


def churn_shape(protocol: str) -> str:
    """The capability by which ``protocol`` runs under churn (``maintained`` or ``cycle``).

    Examples
    --------
    >>> churn_shape("vitis"), churn_shape("spidercast")
    ('cycle', 'maintained')
    """
    if protocol in REGISTRY:
        caps = capabilities(REGISTRY[protocol])
        for shape in CHURN_DRIVERS:
            if shape in caps:
                return shape
    names = ", ".join(sorted({n for s in CHURN_DRIVERS for n in protocol_names(s)}))
    raise ParameterError(
        f"{protocol} does not run under churn; churn protocols (maintained or cycle): {names}",
        key="protocol",
    )


def _fingerprint(instance: Any, seed: int, wire: Mapping[str, Any]) -> str:
    """The ``world`` of a churn row: the world made around ``instance``, with its network
    when the run is contended (without one, that is
    :func:`~hedgerow.scenarios.world.instance_fingerprint`)."""
    return world_for_instance(instance, seed=seed, **dict(wire)).fingerprint()


def _wired(out: ChurnOutcome, wire: Mapping[str, Any]) -> ChurnOutcome:
    """A contended run's summary names its network, and the printed table shows delivery and
    bytes under load (nothing changes without network settings)."""
    if wire and any(k in r for r in out.rows[:1] for k in CHURN_WIRE_KEYS):
        out.summary["network"] = dict(wire)
        out.columns = [*out.columns, ("receive_rate", "recv"), ("delay_p90_ms", "p90 ms"),
                       ("sent_payload_mean", "sent B/node")]
    return out


#: the network settings a churn request may carry, used by every driver
_WIRE = set(WIRE_SETTINGS)


def _flag(key: str) -> str:
    """The option that sets ``key`` (``--snapshot-every``)."""
    return WORLD_SETTINGS[key].flag if key in WORLD_SETTINGS else f"--{key.replace('_', '-')}"


def _refuse(protocol: str, request: ChurnRequest, used: set[str], why: str) -> None:
    """A setting the user gave that this driver does not use: one line naming it."""
    extra = sorted(request.given - used)
    if extra:
        raise ParameterError(f"{', '.join(map(_flag, extra))} {why}", key=extra[0])


def _scenario(name: str, shape: str) -> Any:
    if name not in CHURN_SCENARIOS:
        raise ParameterError(
            f"unknown churn scenario {name!r}; allowed: {', '.join(churn_scenario_names())}",
            key="scenario")
    sc = CHURN_SCENARIOS[name]
    if sc.shape != shape:
        raise ParameterError(
            f"churn scenario {name} is for {sc.shape} protocols; {shape} scenarios: "
            f"{', '.join(churn_scenario_names(shape))}", key="scenario")
    return sc


# --------------------------------------------------------------------------- cycle
_CYCLE_COLUMNS = [("cycle", "cycle"), ("online", "online"), ("measured", "measured"),
                  ("ring_correct", "ring"), ("hit_ratio", "hit ratio"),
                  ("overhead", "overhead"), ("delay_hops", "delay (hops)")]


def _cycle(protocol: str, request: ChurnRequest, *, seed: int, params: Mapping[str, Any],
           progress: Progress | None, nodes: int | None) -> ChurnOutcome:
    """A cycle-driven protocol over a named cycle scenario; one row per sample."""
    from hedgerow.protocols import get_protocol
    from hedgerow.scenarios.events import load_churn_scenario
    from hedgerow.scenarios.gossip_churn import run_gossip_churn

    if request.scenario is None:
        raise ParameterError(
            f"{protocol} is a cycle protocol: it runs a named cycle churn scenario (--scenario "
            f"{', '.join(churn_scenario_names('cycle'))})", key="scenario")
    _refuse(protocol, request, {"scenario", "nodes"} | _WIRE,
            f"cannot be used with --scenario {request.scenario}, which brings its own churn"
            " (only --nodes reduces it, and the network settings put it on the wire)")
    sc = _scenario(request.scenario, "cycle")
    inst, online0, events = load_churn_scenario(sc.name, seed=seed, nodes=nodes)
    cycles = int(sc.cycles)

    def on_row(row: dict[str, Any]) -> None:
        if progress is not None:
            progress(float(row["cycle"]), float(cycles))

    raw = run_gossip_churn(protocol, inst, online0, events, duration=cycles,
                           sample_every=int(sc.every), seed=seed, params=params,
                           on_row=on_row, wire=request.wire)
    fp = _fingerprint(inst, seed, request.wire)
    values = get_protocol(protocol, **dict(params)).checked()
    hits = [r["hit_ratio"] for r in raw if r["hit_ratio"] is not None]
    after = [r["hit_ratio"] for r in raw
             if sc.at is not None and r["cycle"] > sc.at and r["hit_ratio"] is not None]
    worst = min(hits) if hits else None
    worst_after = min(after) if after else None
    # every row carries the run's worst sample (Fig. 12's "goes down to"), as snapshot rows
    # carry their run's join times
    rows = [{"epoch": i, **r, "nodes": inst.n_nodes, "hit_ratio_min": worst, "world": fp}
            for i, r in enumerate(raw)]
    summary = {
        "protocol": protocol, "params": values, "seed": int(seed), "scenario": sc.name,
        "nodes": inst.n_nodes, "cycles": cycles, "samples": len(rows),
        "worst_hit_ratio": worst, "worst_hit_ratio_after_crowd": worst_after,
        "paper_worst_hit_ratio": PAPER_WORST_HIT.get(protocol), "note": sc.note,
        "warnings": [],
    }
    lines = [f"{protocol} on {sc.name}: {inst.n_nodes} nodes, {cycles} cycles, a sample every"
             f" {sc.every}",
             f"worst hit ratio {_f(worst)} (after the crowd {_f(worst_after)});"
             f" paper: {PAPER_WORST_HIT.get(protocol, '-')}"]
    if sc.note:
        lines.append(f"note: {sc.note}")
    return _wired(ChurnOutcome(rows, summary, "sample", _CYCLE_COLUMNS, lines,
                               title=f"{protocol} on {sc.name}"), request.wire)


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


# --------------------------------------------------------------------------- maintained
_SNAPSHOT_COLUMNS = [("time_s", "t (s)"), ("online", "online"), ("measured", "measured"),
                     ("avg_degree", "degree"), ("max_degree", "max"),
                     ("partitioned_topics", "split topics"),
                     ("undercovered_nodes", "under-cov."), ("messages_per_op", "msgs/op")]


def _maintained(protocol: str, request: ChurnRequest, *, seed: int, params: Mapping[str, Any],
                progress: Progress | None, nodes: int | None) -> ChurnOutcome:
    """A maintained overlay: a named scenario event by event, or snapshots of synthetic or
    traced churn (the control differs; the driver interface is the engine's)."""
    if request.scenario is not None:
        return _events(protocol, request, seed=seed, params=params, progress=progress,
                       nodes=nodes)
    if nodes is not None:
        raise ParameterError(f"{protocol}: nodes= reduces a named churn scenario; a synthetic"
                             " run takes the workload's nodes", key="nodes")
    return _snapshots(protocol, request, seed=seed, params=params, progress=progress)


def _events(protocol: str, request: ChurnRequest, *, seed: int, params: Mapping[str, Any],
            progress: Progress | None, nodes: int | None) -> ChurnOutcome:
    from hedgerow.scenarios.events import load_churn_scenario, run_events

    assert request.scenario is not None
    sc = _scenario(request.scenario, "maintained")
    _refuse(protocol, request, {"scenario", "events", "timeout"} | _WIRE,
            f"cannot be used with --scenario {sc.name}, which brings its own workload and churn")
    inst, online0, events = load_churn_scenario(sc.name, seed=seed, nodes=nodes)
    total = request.events if request.events is not None else (sc.events or len(events))
    res = run_events(
        protocol, inst, online0, events, seed=seed, params=dict(params), n_events=total,
        timeout=float(request.timeout),
        progress=None if progress is None else (lambda d, t: progress(float(d), float(t))),
        wire=request.wire,
    )
    fp = _fingerprint(inst, seed, request.wire)
    rows = []
    for row in res.rows:
        r = {"epoch": int(row["event"]), **row, "world": fp}
        r["start_max_degree"] = res.summary["start_max_degree"]
        r["start_avg_degree"] = res.summary["start_avg_degree"]
        rows.append(r)
    s = {"scenario": sc.name, "note": sc.note, **res.summary, "warnings": []}
    lines = [
        f"{protocol} on {sc.name}: {s['events']} events ({s['joins']} joins, {s['leaves']}"
        f" leaves), start max/avg degree {s['start_max_degree']} /"
        f" {s['start_avg_degree']:.2f}",
        f"mean max degree {s['mean_max_degree']:.1f}, mean avg degree"
        f" {s['mean_avg_degree']:.2f}, median repair"
        f" {1000 * s['repair_seconds_median']:.2f} ms, violations"
        f" {s['violations']} {s['violations_by_kind']}",
    ]
    if sc.note:
        lines.append(f"note: {sc.note}")
    return _wired(ChurnOutcome(rows, s, "event", [], lines, res.engine), request.wire)


def _snapshots(protocol: str, request: ChurnRequest, *, seed: int, params: Mapping[str, Any],
               progress: Progress | None) -> ChurnOutcome:
    from hedgerow.scenarios.churn import run_churn
    from hedgerow.scenarios.traces import load_events, trace_churn
    from hedgerow.workloads import make_instance

    wl = dict(request.workload or {})
    if wl.get("nodes") is None:
        raise ParameterError("give --nodes (synthetic workload) or --scenario NAME", key="nodes")
    if (request.lifetime is None) == (request.trace is None):
        raise ParameterError("give exactly one of --lifetime (synthetic churn) and --trace",
                             key="lifetime")
    if request.lifetime is not None and not request.lifetime > 0:
        raise ParameterError(f"--lifetime must be positive, got {request.lifetime}",
                             key="lifetime")
    _refuse(protocol, request,
            {"nodes", "topics", "subs", "popularity", "lifetime", "trace", "duration",
             "snapshot_every", "timeout", "off_ratio"} | _WIRE
            | ({"speedup"} if request.trace else set()),
            "is not used by synthetic churn (--lifetime)" if request.trace is None
            else "is not used by a replayed trace (--trace)")
    if wl.get("topics") is None:
        raise ParameterError("give --topics (synthetic workload)", key="topics")
    if not math.isfinite(float(request.duration)):
        raise ParameterError(f"--duration must be a finite time, got {request.duration}",
                             key="duration")
    from hedgerow.workloads.memory import check_sizes
    from hedgerow.workloads.subscriptions import parse_subs

    check_sizes(f"churn on {int(wl['nodes']):,} nodes and {int(wl['topics']):,} topics",
                nodes=int(wl["nodes"]), topics=int(wl["topics"]),
                subs=parse_subs(wl.get("subs") or 1)[1], churn=True)
    inst = make_instance(seed=seed, **{k: wl[k] for k in ("nodes", "topics", "subs", "popularity")
                                       if wl.get(k) is not None})
    trace = None
    if request.trace is not None:
        trace = trace_churn(load_events(request.trace), inst.n_nodes, speedup=request.speedup,
                            duration=request.duration)
    res = run_churn(
        protocol, inst, lifetime=request.lifetime, duration=float(request.duration),
        snapshot_every=float(request.snapshot_every), off_ratio=float(request.off_ratio),
        timeout=float(request.timeout), seed=seed, params=dict(params), trace=trace,
        diameter=request.diameter, progress=progress, wire=request.wire,
    )
    fp = _fingerprint(inst, seed, request.wire)
    rows = []
    for i, row in enumerate(res.rows):
        out = {"epoch": i, **row, "world": fp}
        for k in ("join_seconds_median", "join_seconds_p99", "connected_snapshots"):
            out[k] = res.summary[k]
        rows.append(out)
    s = res.summary
    lines = [
        f"{s['connected_snapshots']} of {s['snapshots']} snapshots with every topic connected;"
        f" {s['joins']} joins, {s['leaves']} leaves, {s['messages_per_op']:.1f} control messages"
        f" per join/leave; joins complete in {s['join_seconds_median']:.2f} s (median),"
        f" {s['join_seconds_p99']:.2f} s (99th percentile)"
    ]
    return _wired(ChurnOutcome(rows, s, "snapshot", _SNAPSHOT_COLUMNS, lines, res.engine,
                               title=f"{protocol} under churn, {s['nodes']} nodes"),
                  request.wire)


#: capability -> driver; the one place a churn run is dispatched
CHURN_DRIVERS: dict[str, Callable[..., ChurnOutcome]] = {
    "maintained": _maintained,
    "cycle": _cycle,
}


def run_churn_request(
    protocol: str,
    request: ChurnRequest,
    *,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    nodes: int | None = None,
) -> ChurnOutcome:
    """Run ``protocol`` under the churn of ``request`` with the driver of its capability.

    Parameters
    ----------
    protocol : str
        A maintained or cycle-driven protocol.
    request : ChurnRequest
        The churn asked for.
    seed : int
        The run's seed.
    params : mapping, optional
        Protocol parameters.
    progress : callable, optional
        ``progress(done, total)`` during the run.
    nodes : int, optional
        A cycle-driven scenario's nodes, instead of the scenario's (a reduced run).

    Returns
    -------
    ChurnOutcome
    """
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ParameterError(f"--seed must be >= 0, got {seed}", key="seed")
    shape = churn_shape(protocol)
    get_protocol(protocol, **dict(params or {})).checked()  # a bad -p before any work
    wire_settings(request.wire)  # and a bad network setting
    out = CHURN_DRIVERS[shape](protocol, request, seed=int(seed), params=dict(params or {}),
                               progress=progress, nodes=nodes)
    out.summary.setdefault("warnings", [])
    return out


def clean(value: Any) -> Any:
    """``None`` for a non-finite float (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
