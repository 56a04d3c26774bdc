"""The epoch loop: any protocol run on a world, one row per epoch.

PeerSim's split: the *protocol* chooses neighbours; this loop is the
simulator that disseminates each epoch's messages with the protocol's
forwarding rule and hands every node its observations.  Everything else acts
from the outside: *controls* (:mod:`hedgerow.scenarios.controls`) act before
an epoch -- who is online, dead links dropped and refilled, the epoch's
traffic, withholding relays -- and *observers*
(:mod:`hedgerow.scenarios.observers`) read the finished epoch and contribute
the columns of its row.  The world's settings select both
(:func:`~hedgerow.scenarios.controls.controls_for`,
:func:`~hedgerow.scenarios.observers.observers_for`); the two loops below
hold no paper's branch.  The loop branches on the protocol's declared
capability, never on its class:

* an **adaptive** protocol (:class:`~hedgerow.protocols.AdaptiveProtocol`)
  starts from its own out-links and, each epoch: the out-links' undirected
  closure (plus the attackers' fixed links) carries the epoch's messages in
  memory-bounded chunks, :meth:`~hedgerow.protocols.AdaptiveProtocol.observe`
  sees each chunk, :meth:`~hedgerow.protocols.AdaptiveProtocol.select` gives
  the next out-links; only the world's active nodes (and, under churn, the
  online ones) re-select;
* a protocol that acts on the **clock**
  (:class:`~hedgerow.protocols.base.ClockProtocol`, GossipSub) gets an engine
  on the world's network (unlimited bandwidth on an uncontended world) with
  the epoch's messages scheduled after its warm-up; it runs until
  ``drain_ms`` after the last publication, data and control messages in one
  simulation, and is measured as a static run (one row) plus its control
  traffic and mesh sizes (:class:`~hedgerow.scenarios.observers.ClockMeasures`);
* a **static** protocol builds once on the world's instance and is measured
  on the first epoch's traffic (one row); a protocol that only maintains
  (OMen) is measured the same way on the overlay its engine settles on when
  every node joins at once (:func:`settled_overlay`).  Under the ``"mesh"`` policy its
  links carry the topics the build gave them (``link_topics_``); eclipse
  attackers' clique links carry every topic.

Examples
--------
>>> from hedgerow.scenarios.world import make_world
>>> from hedgerow.protocols import get_protocol
>>> w = make_world("cities", seed=1, topics=10, messages=50, epochs=2)
>>> res = run_protocol(get_protocol("topiary"), w)
>>> [r["epoch"] for r in res.rows], res.overlay.directed
([0, 1], True)
>>> run_protocol(get_protocol("ringpt"), w).rows[0]["receive_rate"]
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hedgerow.dissemination import POLICIES, Delivery, MessageBatch, edge_delays
from hedgerow.dissemination.chunks import disseminate_chunks
from hedgerow.dissemination.contended import ControlBatch, Network, disseminate_contended
from hedgerow.dissemination.mesh import EntryTopics, entry_topics
from hedgerow.engine import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.outlinks import closure_csr, entry_index, out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.params import check_memory
from hedgerow.protocols.base import (
    AdaptiveProtocol,
    ClockProtocol,
    EpochView,
    MaintainedProtocol,
    OverlayProtocol,
    StaticProtocol,
)
from hedgerow.protocols.control import ControlRounds
from hedgerow.protocols.engine_api import Publications
from hedgerow.scenarios.controls import Epoch, EpochControl, EpochRun, controls_for
from hedgerow.scenarios.observers import (
    ClockMeasures,
    EpochDelivery,
    EpochObserver,
    observers_for,
)
from hedgerow.scenarios.world import World
from hedgerow.workloads.memory import adaptive_bytes
from hedgerow.world_settings import WORLD_SETTINGS

__all__ = ["RunResult", "forwarding_policy", "run_protocol", "settled_overlay"]

#: a protocol's :meth:`~hedgerow.protocols.base.OverlayProtocol.control_traffic`
ControlSource = Callable[[ControlRounds], ControlBatch | None]


@dataclass
class RunResult:
    """What :func:`run_protocol` returns.

    Attributes
    ----------
    rows : list of dict
        One JSON-serialisable row per epoch (:func:`~hedgerow.scenarios.observers.epoch_row`).
    scores : numpy.ndarray
        ``(epochs, n)`` score of each node's kept neighbours per epoch
        (``nan`` where the protocol gives none).
    overlay : Overlay
        The final overlay the last epoch ran on (attacker links included).
    world : World
        The world the run happened in.
    stats : dict
        The protocol's build statistics (static protocols), e.g. control messages.
    outs : list of numpy.ndarray
        With ``keep_outs=True``, every epoch's ``(n, d)`` out-link table (adaptive
        protocols; the table the epoch ran on).
    """

    rows: list[dict[str, Any]]
    scores: np.ndarray
    overlay: Overlay
    world: World
    stats: dict[str, Any] = field(default_factory=dict)
    outs: list[np.ndarray] = field(default_factory=list)


def forwarding_policy(
    proto: OverlayProtocol | type[OverlayProtocol], forwarding: str | None
) -> str:
    """The policy a run of ``proto`` disseminates with: ``forwarding``, else the protocol's own.

    ``"mesh"`` needs a protocol whose build labels its links
    (``labels_links``); any other protocol is refused with a one-line error.

    Examples
    --------
    >>> from hedgerow.protocols import protocol_class
    >>> forwarding_policy(protocol_class("gossipsub-split"), None)
    'mesh'
    >>> forwarding_policy(protocol_class("gossipsub-split"), "ttl")
    'ttl'
    """
    policy = proto.forwarding if forwarding is None else forwarding
    if policy not in POLICIES:
        raise ParameterError(
            f"unknown forwarding {policy!r}; allowed: {', '.join(POLICIES)}", key="forwarding"
        )
    if policy == "mesh" and not proto.labels_links:
        raise ParameterError(
            f"forwarding 'mesh' needs the topic of every link, and {proto.name} does not label "
            f"its links; use ttl, topic or flood",
            key="forwarding",
        )
    return policy


def _disseminate(
    world: World,
    indptr: np.ndarray,
    indices: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    policy: str,
    *,
    record_edges: bool,
    on_chunk: Callable[[np.ndarray, Any, np.ndarray], None] | None = None,
    labels: EntryTopics | None = None,
    silent: np.ndarray | None = None,
    epoch: int = 0,
    control: ControlSource | None = None,
) -> EpochDelivery:
    """One epoch's messages over the CSR graph; the per-message arrays of the observers.

    ``silent`` (nodes that forward nothing of the attack's topic this epoch)
    replaces the attack's fixed silent set.  On a contended world
    (:attr:`World.contended`) every message of the epoch is simulated together
    (:func:`_disseminate_contended`), with the protocol's control messages
    (``control``, its ``control_traffic``) when the world's ``control_size`` is
    above 0; otherwise in memory-bounded chunks, as before.
    """
    attack = world.attack
    ed = np.asarray(edge_delays(indptr, indices, world.latency), dtype=np.float64)
    if world.contended:
        return _disseminate_contended(world, indptr, indices, ed, publisher, topic, policy,
                                      epoch=epoch, record_edges=record_edges,
                                      on_chunk=on_chunk, labels=labels, silent=silent,
                                      control=control)
    rec = EpochDelivery.empty(publisher, topic, world.n_nodes)
    for sel, dl, emap in disseminate_chunks(
        indptr,
        indices,
        ed,
        world.proc,
        world.instance.masks,
        publisher,
        topic,
        world.scenario.ttl,
        record_edges=record_edges,
        silent=silent if silent is not None else (None if attack is None else attack.silent),
        silent_topic=None if attack is None else attack.victim_topic,
        policy=policy,
        labels=labels,
    ):
        rec.add(sel, dl)
        if on_chunk is not None:
            on_chunk(sel, dl, emap)
    return rec


def _disseminate_contended(
    world: World,
    indptr: np.ndarray,
    indices: np.ndarray,
    ed: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    policy: str,
    *,
    epoch: int,
    record_edges: bool,
    on_chunk: Callable[[np.ndarray, Any, np.ndarray], None] | None,
    labels: EntryTopics | None,
    silent: np.ndarray | None,
    control: ControlSource | None = None,
) -> EpochDelivery:
    """The epoch's messages as one contended simulation
    (:func:`~hedgerow.dissemination.disseminate_contended`): one chunk, every message.

    Sizes, publication instants and the loss and jitter keys are the epoch's
    (:meth:`World.wire`); the :class:`~hedgerow.dissemination.ContendedDelivery`
    is kept on the record (``rec.wire``) for the byte measures.  The epoch's
    control messages (:meth:`World.control`, stream ``"control:E"``) share the
    queues with the data.
    """
    attack = world.attack
    quiet = silent if silent is not None else (None if attack is None else attack.silent)
    if quiet is not None and np.any(quiet):
        raise ParameterError(
            "bandwidth: nodes that withhold a topic are not modelled on a contended network; "
            "drop the network settings or choose a world without withholding attackers",
            key="bandwidth",
        )
    assert world.network is not None
    size, published, rng = world.wire(epoch, topic, publisher)
    batch = MessageBatch.create(publisher, topic, world.scenario.ttl)
    ctl = None if control is None else world.control(epoch, published, control)
    d = disseminate_contended(
        indptr, indices, ed, world.proc, world.instance.masks, batch, world.network,
        size=size, publish_at=published, policy=policy, labels=labels, rng=rng,
        record_edges=record_edges, control=ctl,
    )
    rec = EpochDelivery.empty(publisher, topic, world.n_nodes)
    everything = np.arange(len(publisher))
    rec.add(everything, d)
    rec.wire = d
    if on_chunk is not None:
        on_chunk(everything, d, np.arange(len(indices), dtype=np.int64))
    return rec


def _out_links(overlay: Overlay) -> tuple[np.ndarray, np.ndarray]:
    """Outgoing links (both directions of each link of an undirected overlay)."""
    a = overlay.csr().tocoo()
    return a.row.astype(np.int64), a.col.astype(np.int64)


def _out_table(overlay: Overlay) -> np.ndarray:
    """An ``(n, max out-degree)`` out-link table of ``overlay`` (``-1`` padded)."""
    src, dst = _out_links(overlay)
    n = overlay.n_nodes
    deg = np.bincount(src, minlength=n)
    table = np.full((n, max(int(deg.max(initial=0)), 1)), -1, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    start = np.r_[0, np.cumsum(deg)[:-1]]
    table[src, np.arange(len(src)) - start[src]] = dst
    return table


def with_attackers(overlay: Overlay, world: World) -> Overlay:
    """Eclipse attackers keep only their clique as outgoing links (see ``attackers``)."""
    attack = world.attack
    if attack is None or attack.fixed_edges is None:
        return overlay
    src, dst = _out_links(overlay)
    keep = attack.honest[src]
    if not overlay.directed:
        keep |= attack.honest[dst]
    edges = np.concatenate([np.column_stack([src[keep], dst[keep]]), attack.fixed_edges])
    return Overlay.from_edges(overlay.n_nodes, edges, directed=True)


def link_topics_with_attackers(
    link_topics: np.ndarray, overlay: Overlay, world: World
) -> np.ndarray:
    """The ``(u, v, topic)`` rows of :func:`with_attackers`' overlay.

    Rows of the links it keeps keep their topics; the eclipse attackers'
    clique links serve every topic (``-1``: the attackers relay everything).
    """
    lt = np.asarray(link_topics, dtype=np.int64).reshape(-1, 3)
    attack = world.attack
    if attack is None or attack.fixed_edges is None:
        return lt
    keep = attack.honest[lt[:, 0]]
    if not overlay.directed:
        keep |= attack.honest[lt[:, 1]]
    clique = np.asarray(attack.fixed_edges, dtype=np.int64).reshape(-1, 2)
    return np.concatenate([lt[keep], np.column_stack([clique, np.full(len(clique), -1)])])


def _resender(
    world: World, indptr: np.ndarray, indices: np.ndarray, ep: Epoch, policy: str,
    control: ControlSource | None = None,
) -> Callable[[np.ndarray, Callable[..., None]], None]:
    """``ep.resend``: messages ``ids`` of ``ep`` sent again as the epoch sent them, every
    link's arrival recorded, each chunk handed to ``on_chunk``.

    On a contended world messages of an epoch meet in the queues, so the whole
    epoch is sent again (same sizes, instants and draws) and ``on_chunk`` gets
    the rows of ``ids``.
    """

    # the closure holds the epoch's values, not the epoch: an epoch that referred to itself
    # through its resend would keep its arrays alive until a garbage collection, epoch after epoch
    publisher, topic, labels, silent = ep.publisher, ep.topic, ep.labels, ep.silent
    number = ep.number
    assert publisher is not None and topic is not None

    def resend(ids: np.ndarray, on_chunk: Callable[..., None]) -> None:
        if world.contended:
            ids = np.asarray(ids, dtype=np.int64)

            def rows(sel: np.ndarray, d: Any, emap: np.ndarray) -> None:
                fields: dict[str, Any] = {
                    f: None if getattr(d, f) is None else getattr(d, f)[ids]
                    for f in Delivery.__dataclass_fields__
                }
                part = Delivery(**fields)
                on_chunk(np.arange(len(ids)), part, emap)

            _disseminate(world, indptr, indices, publisher, topic, policy,
                         record_edges=True, on_chunk=rows, labels=labels, silent=silent,
                         epoch=number, control=control)
            return
        _disseminate(world, indptr, indices, publisher[ids], topic[ids], policy,
                     record_edges=True, on_chunk=on_chunk, labels=labels, silent=silent)

    return resend


def _run_epoch(
    run: EpochRun,
    ep: Epoch,
    controls: list[EpochControl],
    observers: list[EpochObserver],
    body: Callable[[Epoch], None],
    emit: Callable[[dict], None],
) -> None:
    """One epoch: the controls before, the protocol's ``body``, the observers' row, the
    controls after."""
    for control in controls:
        control.before(run, ep)
    body(ep)
    row: dict[str, Any] = {}
    for observer in observers:
        row.update(observer.observe(run, ep))
    emit(row)
    for control in controls:
        control.after(run, ep)


def _start(run: EpochRun, controls: list[EpochControl], observers: list[EpochObserver]) -> None:
    parts: list[EpochControl | EpochObserver] = [*controls, *observers]
    for part in parts:
        part.start(run)


#: timeouts a maintained protocol's engine runs between two looks at whether it settled
SETTLE_STEP = 20.0
#: at most this many steps before the overlay is taken as it is
SETTLE_STEPS = 50


def settled_overlay(proto: MaintainedProtocol, world: World) -> tuple[Overlay, dict[str, Any]]:
    """The overlay a maintained protocol's engine reaches when every node joins at once.

    The engine (:meth:`~hedgerow.protocols.MaintainedProtocol.maintenance_engine`,
    on an event core of one ``timeout`` per unit, the protocol's own streams)
    starts with every node online and runs :data:`SETTLE_STEP` timeouts at a
    time until no node is under-covered, at most :data:`SETTLE_STEPS` times;
    no node leaves.  This is how a protocol that only maintains (OMen) runs
    through :func:`run_protocol` as a static overlay.  The statistics are the
    engine's ``control_messages`` and the time it ran (``settle_timeouts``).

    Examples
    --------
    >>> from hedgerow.protocols import get_protocol
    >>> from hedgerow.scenarios.world import make_world
    >>> w = make_world("rss-unit-square", seed=1, nodes=60, messages=20)
    >>> ov, stats = settled_overlay(get_protocol("omen"), w)
    >>> ov.n_nodes, stats["control_messages"] > 0
    (60, True)
    """
    sim = Simulator(seconds_per_unit=WORLD_SETTINGS["timeout"].default)
    engine = proto.maintenance_engine(world.instance, proto.streams(world.seed), sim=sim)
    engine.start(np.ones(world.n_nodes, dtype=bool))
    t = 0.0
    for _ in range(SETTLE_STEPS):
        t += SETTLE_STEP
        engine.run_until(t)
        if not np.any(engine.undercovered()):
            break
    stats = {"control_messages": int(engine.control_messages), "settle_timeouts": t}
    return engine.overlay(), stats


def _run_static(
    proto: OverlayProtocol, world: World, policy: str, emit: Callable[[dict], None],
    extra: Sequence[EpochObserver] = (),
) -> RunResult:
    if isinstance(proto, StaticProtocol):
        built = proto.build(world.instance, seed=world.seed)
        stats = dict(proto.stats_)
    else:
        assert isinstance(proto, MaintainedProtocol)
        built, stats = settled_overlay(proto, world)
        proto.stats_ = stats  # type: ignore[attr-defined]  # what RoutingMeasures reads
    overlay = with_attackers(built, world)
    a = overlay.undirected_csr()
    indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    rows = None
    if policy == "mesh":
        link_topics = getattr(proto, "link_topics_", None)
        if link_topics is None:
            raise ParameterError(
                f"forwarding 'mesh' needs the topic of every link; {proto.name}'s build gave "
                "none (no link_topics_)",
                key="forwarding",
            )
        rows = link_topics_with_attackers(link_topics, built, world)
    run = EpochRun(world, proto, policy, 1, world.active & world.adaptive)
    controls = controls_for(world, proto)
    observers = [*observers_for(world, proto, link_topics=rows), *extra]
    _start(run, controls, observers)
    links = _out_links(overlay)
    ep = Epoch(0, _out_table(overlay), run.selecting, True, overlay=overlay, indptr=indptr,
               indices=indices, links=links)

    labels = None if rows is None else entry_topics(indptr, indices, rows)

    def disseminate(ep: Epoch) -> None:
        # a static overlay never re-selects: every link is an exploitation link
        if ep.publisher is None:
            return  # nothing to send: the observers route their own events
        assert ep.topic is not None, "a traffic control sets publisher and topic together"
        ep.labels = labels
        ep.rec = _disseminate(world, indptr, indices, ep.publisher, ep.topic, policy,
                              record_edges=False, labels=labels, silent=ep.silent,
                              epoch=ep.number, control=proto.control_traffic)
        ep.resend = _resender(world, indptr, indices, ep, policy, proto.control_traffic)

    _run_epoch(run, ep, controls, observers, disseminate, emit)
    return RunResult([], np.full((1, world.n_nodes), np.nan), overlay, world, stats)


def _run_clock(
    proto: ClockProtocol, world: World, policy: str, emit: Callable[[dict], None],
    extra: Sequence[EpochObserver] = (),
) -> RunResult:
    """One epoch of a clock-driven protocol: warm-up, the epoch's messages, the drain."""
    attack_kw: dict[str, Any] = {}
    if world.attack is not None:
        if world.attack.kind not in proto.attacks:
            models = (f"it models {', '.join(proto.attacks)}" if proto.attacks
                      else "it models no attackers")
            raise ParameterError(f"{proto.name}: {world.attack.kind} attackers are not "
                                 f"modelled ({models}); choose another world", key="attack")
        attack_kw["attack"] = world.attack
    if world.scenario.events != "traffic":
        raise ParameterError(f"{proto.name}: routing worlds (events per topic) route on a "
                             "built overlay; choose a world with traffic", key="events")
    proto._validate(world.instance)
    n = world.n_nodes
    run = EpochRun(world, proto, policy, 1, world.active & world.adaptive)
    controls = controls_for(world, proto)
    observers = [*observers_for(world, proto), ClockMeasures(), *extra]
    _start(run, controls, observers)
    ep = Epoch(0, np.full((n, 1), -1, dtype=np.int64), run.selecting, True)
    found: dict[str, Any] = {}

    def clock(ep: Epoch) -> None:
        assert ep.publisher is not None and ep.topic is not None, "clock worlds have traffic"
        m = len(ep.publisher)
        if world.contended:
            size, published, _ = world.wire(ep.number, ep.topic)
        else:
            size, published = np.zeros(m), np.zeros(m)
        network = world.network if world.network is not None else Network.uniform(n)
        warm = proto.warmup_time()
        pubs = Publications.create(ep.publisher, ep.topic, warm + published, size)
        engine = proto.clock_engine(world.instance, network, world.latency, world.proc, pubs,
                                    proto.streams(world.seed), **attack_kw)
        engine.run_until(warm)
        base = engine.byte_counters()
        end = warm + (float(published.max()) if m else 0.0) + proto.drain_time()
        engine.run_until(end)
        d = engine.delivery(base)
        rec = EpochDelivery.whole(ep.publisher, ep.topic, d)
        if world.contended:
            rec.wire = d
        ep.rec = rec
        ep.notes["clock"] = engine
        overlay = engine.overlay()
        ep.overlay = overlay
        links = _out_links(overlay)
        ep.out = _out_table(overlay)
        ep.links = links
        found["overlay"] = overlay
        found["stats"] = {"control_messages": int(engine.control_messages),
                          "heartbeats": int(engine.heartbeats)}

    _run_epoch(run, ep, controls, observers, clock, emit)
    return RunResult([], np.full((1, n), np.nan), found["overlay"], world, found["stats"])


@dataclass
class _ChunkFeed:
    """Hands each dissemination chunk of one epoch to the protocol as an :class:`EpochView`."""

    proto: AdaptiveProtocol
    state: Any
    publisher: np.ndarray
    topic: np.ndarray
    slot_full: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray

    def __call__(self, sel: np.ndarray, dl: Any, emap: np.ndarray) -> None:
        slot = np.where(self.slot_full >= 0, emap[np.maximum(self.slot_full, 0)], -1)
        view = EpochView(
            sel=sel,
            publisher=self.publisher[sel],
            topic=self.topic[sel],
            arrival=np.asarray(dl.arrival, dtype=np.float64),
            edge_recv=dl.edge_recv,
            slot_entry=slot,
            indptr=self.indptr,
            indices=self.indices,
            entry_map=emap,
        )
        self.proto.observe(self.state, view)


def _run_adaptive(
    proto: AdaptiveProtocol,
    world: World,
    policy: str,
    epochs: int,
    emit: Callable[[dict], None],
    keep_outs: bool,
    extra: Sequence[EpochObserver] = (),
) -> RunResult:
    inst = world.instance
    n = world.n_nodes
    proto._validate(inst)
    messages = int(world.scenario.messages)
    table = proto.uses_linked_table()
    pair = int(table) + proto.pair_bytes
    check_memory(f"{proto.name} on {n:,} nodes ({pair} byte{'s' * (pair != 1)} per pair of nodes "
                 f"and {messages:,} messages per epoch)",
                 adaptive_bytes(n, messages, proto.pair_bytes, table))
    d = proto.out_degree()
    fixed = None if world.attack is None else world.attack.fixed_edges
    out = proto.start(inst, proto.streams(world.seed), world.active)
    # only the world's adaptive nodes re-select (broadcast worlds); the others keep their links
    run = EpochRun(world, proto, policy, epochs, world.active & world.adaptive)
    controls = controls_for(world, proto)
    observers = [*observers_for(world, proto), *extra]
    src_of_slot = np.repeat(np.arange(n), d)
    scores: list[np.ndarray] = []
    outs: list[np.ndarray] = []
    proto.set_online(None)  # a protocol object reused after a churn run forgets its mask
    _start(run, controls, observers)

    def adapt(ep: Epoch) -> None:
        out = ep.out
        if keep_outs:
            outs.append(out.copy())
        indptr, indices = closure_csr(out, n, fixed)
        assert ep.publisher is not None and ep.topic is not None, "adaptive worlds have traffic"
        state = proto.begin_epoch(inst, out, ep.publisher, ep.topic)
        # CSR entry of the link out[v, j] -> v: where v receives what its j-th out-neighbour sent
        slot_full = entry_index(indptr, indices, out.reshape(-1), src_of_slot).reshape(n, d)
        feed = _ChunkFeed(proto, state, ep.publisher, ep.topic, slot_full, indptr, indices)
        ep.rec = _disseminate(world, indptr, indices, ep.publisher, ep.topic, policy,
                              record_edges=True, on_chunk=feed, silent=ep.silent,
                              epoch=ep.number, control=proto.control_traffic)
        linked = np.zeros((n, n) if table else (0, 0), dtype=bool)
        if table:
            linked[np.repeat(np.arange(n), np.diff(indptr)), indices] = True
        ep.new_out, ep.score = proto.select(state, inst, out, linked, ep.selecting)
        ok = out.reshape(-1) >= 0
        ep.indptr, ep.indices = indptr, indices
        ep.links = (src_of_slot[ok], out.reshape(-1)[ok])
        ep.resend = _resender(world, indptr, indices, ep, policy, proto.control_traffic)

    for epoch in range(epochs):
        ep = Epoch(epoch, out, run.selecting, epoch == epochs - 1)
        _run_epoch(run, ep, controls, observers, adapt, emit)
        assert ep.score is not None and ep.new_out is not None, "adapt selected"
        scores.append(ep.score)
        out = ep.new_out
    proto.out_ = out
    overlay = out_overlay(out, fixed)
    score_table = np.vstack(scores) if scores else np.zeros((0, n))
    return RunResult([], score_table, overlay, world, outs=outs)


def run_protocol(
    proto: OverlayProtocol,
    world: World,
    *,
    epochs: int | None = None,
    forwarding: str | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    keep_outs: bool = False,
    observers: Sequence[EpochObserver] = (),
) -> RunResult:
    """Run ``proto`` on ``world``: every epoch of an adaptive protocol, one epoch of a static one.

    Parameters
    ----------
    proto : OverlayProtocol
        An unbuilt protocol with its parameters set.
    world : World
        From :func:`hedgerow.scenarios.world.make_world`.
    epochs : int, optional
        Epochs of an adaptive protocol (default the scenario's).
    forwarding : {"ttl", "topic", "flood", "mesh"}, optional
        Dissemination policy (default the protocol's declared ``forwarding``);
        ``"mesh"`` only for a protocol that labels its links
        (:func:`forwarding_policy`).
    on_epoch : callable, optional
        Called with each row as soon as it is ready.
    keep_outs : bool, default False
        Keep every epoch's out-link table in :attr:`RunResult.outs`.
    observers : sequence of EpochObserver, optional
        Observers added to those the world selects (e.g. a
        :class:`~hedgerow.scenarios.tracing.TraceObserver`); their columns join each row.
    """
    if isinstance(proto, ClockProtocol) and forwarding is not None:
        raise ParameterError(f"{proto.name} forwards by its own rules; drop --forwarding",
                             key="forwarding")
    policy = forwarding_policy(proto, forwarding)
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        rows.append(row)
        if on_epoch is not None:
            on_epoch(row)

    if isinstance(proto, AdaptiveProtocol):
        n_epochs = world.scenario.epochs if epochs is None else int(epochs)
        res = _run_adaptive(proto, world, policy, n_epochs, emit, keep_outs, observers)
    elif isinstance(proto, ClockProtocol):
        res = _run_clock(proto, world, policy, emit, observers)
    elif isinstance(proto, (StaticProtocol, MaintainedProtocol)):
        res = _run_static(proto, world, policy, emit, observers)
    else:  # pragma: no cover - every registered protocol has one of the two
        raise ParameterError(f"{proto.name} can neither build nor adapt an overlay")
    res.rows = rows
    return res
