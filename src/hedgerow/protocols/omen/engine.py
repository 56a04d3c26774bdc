"""OMen's churn handling as message passing on the event core (sections 3.3, 5; Alg. 5-6).

:class:`OmenEngine` implements :class:`~hedgerow.protocols.engine_api.ChurnEngine`.
It keeps the overlay as a dynamic adjacency table, the identifier ring
(:mod:`~hedgerow.protocols.omen.coordinator`), every node's local view
(:mod:`~hedgerow.protocols.omen.views`), and every node's ``exeQ`` and
``standbyL``.  A churn event runs its life cycle as messages:

1. **Detection.**  A leave (or crash) of ``v'`` is detected after ``detect``
   units; the event is announced to the ``L`` live successors of ``v'``
   (``NOTIFY``).  A join is announced by ``v'`` itself to the same range.
2. **handleChurnEvent** (Alg. 5).  The first live successor (the
   coordinator) queues the event in ``exeQ``; on a leave it first takes over
   the unfinished events of ``standbyL`` that it now coordinates.  The other
   successors keep it in ``standbyL`` with a timer; on timeout, a node whose
   predecessor range holds ``v'`` moves it to ``exeQ``.
3. **processExeQ.**  One event at a time, oldest first; the coordinator
   waits until ``R(v')`` (a leave at most ``ready_timeout`` units, a join at
   most ``join_timeout``; then it proceeds with the backup set it has,
   reading R-6), then builds the shadow set and runs Algorithm 1
   (:func:`~hedgerow.protocols.omen.repair.shadow_repair`).
4. **Links.**  Each new edge is announced to both endpoints (``LINK``); the
   link exists when both have it; the second endpoint acknowledges to the
   coordinator (``LINK-OK``).  When every link is acknowledged (or after
   ``ack_timeout``, if an endpoint failed) the coordinator checks its shadow
   set again and repeats Algorithm 1 until it adds nothing; then it notifies
   the successor range (``DONE``), which garbage-collects the event
   (``gcChurnEvent``).

Readings beyond the paper (``docs/omen.md``)
--------------------------------------------
* **Assumption 0** is read with the event itself counted: at most ``L``
  simple events in one concurrent set (the paper's "``v_{l+1}`` coordinates
  all of them, where ``l <= L``").
* **Reporters** (R-13).  The live neighbours of a departed ``v'`` detect its
  failure and report to the ``L`` successors of ``v'`` (``REPORT``, one per
  neighbour and successor); the coordinator adds them to the shadow set, so
  a stale ``N(v')`` cannot miss a piece.  A reporter that sees no ``DONE``
  within ``standby_timeout`` reports again to the successors of the moment,
  so an event whose whole successor range failed is still handled.
* **Departed shadow members.**  When a member of ``N(v')`` has itself
  departed, the coordinator asks its successor range for that node's
  neighbours at departure (``QUERY``/``REPLY``) and adds the live ones: two
  adjacent nodes that crash together leave pieces adjacent to only one of
  them, which only the union reconnects.
* **OMen-G** (``view="global"``): no gossip; the coordinator builds
  ``B(v')`` over every live node sharing a topic with ``v'`` when it repairs
  (the time is part of its repair time, reading R-10).
* **Rejoin** keeps the node's topics unless the driver hands new ones.
* **A departed node's entry** (``B(v')``, ``N(v')``) stays at its successors
  until its leave is done and garbage-collected (``gcChurnEvent``), although
  the exact ring (R-12) drops ``v'`` at once: the leave's shadow set is
  ``B(v') ∪ N(v')`` plus the reporters, as section 3.2 prescribes.
* **Repair time** is the coordinator's CPU time (thread time) for shadow
  assembly and Algorithm 1, so a shared machine's preemptions do not enter.

Messages are counted by kind in :attr:`OmenEngine.messages`; failure
detection itself is not counted (section 6.8).
"""

from __future__ import annotations

import hashlib
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.gossip import PeerSampling
from hedgerow.model.bitset import pack_sets
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.omen.backups import BUILDERS, PD_PICKS, backup_set, refresh_entry
from hedgerow.protocols.omen.coordinator import Ring
from hedgerow.protocols.omen.repair import add_edge, holds_topics, remove_node, shadow_repair
from hedgerow.protocols.omen.views import Entry, ViewTable, view_of
from hedgerow.protocols.tco.engine import tco_augment

_NONE = np.zeros(0, dtype=np.int64)
#: a steady-state cycle is batched when at least 1 / _BATCH_SHARE of the online nodes are active
_BATCH_SHARE = 20

__all__ = ["MESSAGE_KINDS", "ChurnEvent", "OmenEngine"]

#: message kinds counted (failure detection excluded)
MESSAGE_KINDS = ("notify", "report", "query", "link", "link-ok", "done", "gossip")

JOIN, LEAVE = "join", "leave"


@dataclass
class ChurnEvent:
    """One simple churn event and what its life cycle did."""

    id: int
    type: str
    node: int
    t_start: float
    t_end: float = float("nan")
    done: bool = False
    coordinators: list[int] = field(default_factory=list)
    reporters: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    shadow: int = 0
    backups: int = 0
    neighbours: int = 0
    edges: list[tuple[int, int]] = field(default_factory=list)
    rounds: int = 0
    repair_seconds: float = 0.0
    #: union of the shadow sets its repairs used (``E_new ⊆ S × S``)
    shadow_set: np.ndarray | None = None
    #: ``T_chev``: the node's topics when the event happened (a node that rejoins with
    #: new topics before its leave is repaired must not change what the leave broke)
    topics: np.ndarray | None = None


@dataclass
class _Repair:
    """A coordinator's repair in progress."""

    ev: ChurnEvent
    shadow: np.ndarray
    topics: np.ndarray
    pending: set = field(default_factory=set)
    round: int = 0
    #: a link of this round failed (an endpoint left): the next round re-checks
    failed: bool = False


class OmenEngine:
    """OMen / OMen-G under churn (see the module docstring).

    Parameters
    ----------
    instance : Instance
        Subscriptions of all ``n`` nodes.
    streams : RngStreams
        The protocol's random streams (``ring``, ``gossip``, ``backups``, ``latency``).
    sim : Simulator
        The event core.
    coverage : int
        λ, the coverage factor of backup sets.
    resilience : int
        L, the concurrent events tolerated (predecessors kept, successors notified).
    backups : {"pd", "greedy", "all"}
        Backup builder; ``"all"`` = every live node sharing a topic (global view only).
    pd_pick : {"dual", "random", "max-gain"}
        Primal-dual subscriber choice (reading R-5): ``"dual"`` raises the
        topic's dual until a subscriber priced at ``1 + backup load`` is tight.
    ready : {"cover", "lambda"}
        When ``R(v')`` holds (reading R-6): every topic covered once, or
        ``min(λ, live others)`` times.
    rho : float
        LowODA's trade-off in Algorithm 1 (and the initial build).
    view : {"partial", "global"}
        OMen (gossip-maintained views) or OMen-G.
    components : {"true", "local"}
        Components Algorithm 1 sees (reading R-1).
    rnd_view, warmup_cycles : int
        Peer-sampling sample per buffer; full gossip cycles before the first event.
    sampler : {"uniform", "newscast", "cyclon"}
        The peer-sampling service behind ``rnd.view`` (:class:`hedgerow.gossip.PeerSampling`).
    detect, ready_timeout, standby_timeout, ack_timeout : float
        Failure-detection delay and timers, in units (one unit = one gossip period).
    join_timeout : float
        Longest wait of a join for a ready backup set (reading R-6); long enough
        for a λ-backup set in most joins, short enough to finish within a round.
    initial : callable, optional
        ``initial(masks, nodes) -> (m, 2) edges``: the initial TCO on the
        online nodes (default: LowODA from scratch with the same ``rho``,
        section 6.5).
    batched_gossip : bool
        Run each gossip cycle's exchanges in one compiled pass over array views
        (:class:`~hedgerow.protocols.omen.views.ViewTable`, default), or node by
        node in Python (the reference).  Both draw the same numbers in the same
        order and give bit-identical views, loads and messages.
    """

    def __init__(
        self,
        instance: Instance,
        streams: RngStreams,
        sim: Simulator | None = None,
        *,
        coverage: int = 5,
        resilience: int = 1,
        backups: str = "pd",
        pd_pick: str = "dual",
        ready: str = "lambda",
        rho: float = 1.0,
        view: str = "partial",
        components: str = "true",
        rnd_view: int = 10,
        sampler: str = "uniform",
        warmup_cycles: int = 100,
        detect: float = 1.0,
        ready_timeout: float = 10.0,
        join_timeout: float = 60.0,
        standby_timeout: float = 20.0,
        ack_timeout: float = 2.0,
        initial: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
        batched_gossip: bool = True,
    ) -> None:
        self.inst = instance
        self.n = n = instance.n_nodes
        self.n_topics = instance.n_topics
        self.sim = sim if sim is not None else Simulator()
        self.lam, self.L = int(coverage), int(resilience)
        self.builder, self.pd_pick, self.rho = backups, pd_pick, float(rho)
        self.ready_rule = ready
        self.global_view = view == "global"
        self.components = components
        self.rnd_view, self.warmup_cycles = int(rnd_view), int(warmup_cycles)
        self.detect, self.ready_timeout = float(detect), float(ready_timeout)
        self.join_timeout = float(join_timeout)
        self.standby_timeout, self.ack_timeout = float(standby_timeout), float(ack_timeout)
        self.initial = initial
        self.batched_gossip = bool(batched_gossip)
        self.rng_gossip = streams.stream("gossip")
        self.rng_sampling = streams.stream("sampling")
        self.sampling = PeerSampling(n, max(self.rnd_view, 1), sampler)
        self.rng_backups = streams.stream("backups")
        self.rng_ties = streams.stream("ties")
        lat = streams.stream("latency")
        self._la, self._lb = lat.random(n), lat.random(n)
        self.ring = Ring(streams.stream("ring").random(n))
        self._set_topics(instance.sub_indptr, instance.sub_topics)
        self.online = np.zeros(n, dtype=bool)
        self.adj = np.full((n, 16), -1, dtype=np.int64)
        self.deg = np.zeros(n, dtype=np.int64)
        self.live_subs = np.zeros(self.n_topics, dtype=np.int64)
        #: backup load: how many current backup sets name each node (reading R-5)
        self.backup_load = np.zeros(n, dtype=np.int64)
        self._gsets: dict[int, np.ndarray] = {}  # OMen-G: each node's latest backup set
        self.entries: list[dict[int, Entry]] = [{} for _ in range(n)]
        self.exeq: list[list[int]] = [[] for _ in range(n)]
        self.standby: list[set[int]] = [set() for _ in range(n)]
        self.busy: list[_Repair | None] = [None] * n
        self.waiting_since: dict[tuple[int, int], float] = {}
        self.events: list[ChurnEvent] = []
        self.current: list[int] = [-1] * n  # the node's latest event id
        self.last_nbrs: dict[int, np.ndarray] = {}
        self.messages = dict.fromkeys(MESSAGE_KINDS, 0)
        self.lost = 0
        self.cycles = 0
        self._gossip_on = False
        self._links_half: dict[tuple[int, int], int] = {}
        self._recheck: set[int] = set()
        self._last: ChurnEvent | None = None
        self._msgs0 = dict(self.messages)
        self._added: list[tuple[int, int]] = []
        self.initial_edges_ = np.zeros((0, 2), dtype=np.int64)

    # ------------------------------------------------------------------ topics
    def _set_topics(self, indptr: np.ndarray, topics: np.ndarray) -> None:
        self.sub_indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.sub_topics = np.ascontiguousarray(topics, dtype=np.int64)
        self.masks = np.ascontiguousarray(
            pack_sets(self.sub_indptr, self.sub_topics, self.n_topics)
        )

    def topics_of(self, v: int) -> np.ndarray:
        return self.sub_topics[self.sub_indptr[v] : self.sub_indptr[v + 1]]

    def subscriptions(self) -> Instance:
        """The current interests of all nodes."""
        return Instance(self.n, self.n_topics, self.sub_indptr.copy(), self.sub_topics.copy())

    # ------------------------------------------------------------------ interface
    @property
    def control_messages(self) -> int:
        """Every counted message (all kinds)."""
        return int(sum(self.messages.values()))

    @property
    def lost_messages(self) -> int:
        return self.lost

    def overlay(self) -> Overlay:
        """The current links on all nodes."""
        return Overlay.from_edges(self.n, self.edges())

    def edges(self) -> np.ndarray:
        """``(m, 2)`` current links, ``u < v``, sorted."""
        rows = np.repeat(np.arange(self.n), self.deg)
        cols = self.adj[np.arange(self.adj.shape[1])[None, :] < self.deg[:, None]]
        e = np.stack([rows, cols], axis=1)
        e = e[e[:, 0] < e[:, 1]]
        return e[np.lexsort((e[:, 1], e[:, 0]))]

    def is_covered(self, p: int) -> bool:
        """Whether ``p`` is online and every event touching it is handled."""
        return bool(self.online[p]) and self._node_settled(p)

    def _node_settled(self, p: int) -> bool:
        e = self.current[p]
        return e < 0 or self.events[e].done

    def undercovered(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        for p in np.flatnonzero(self.online).tolist():
            out[p] = not self._node_settled(p)
        return out

    def run_until(self, t: float) -> None:
        self.sim.run(until=t)

    def settle(self, max_events: int | None = None) -> int:
        """Run the core until nothing is pending (every life cycle ended)."""
        return self.sim.run(max_events=max_events)

    @property
    def quiescent(self) -> bool:
        """No event under way (every event done, no gossip needed)."""
        return all(ev.done for ev in self.events[-64:]) and not self._gossip_on

    # ------------------------------------------------------------------ start
    def start(self, online0: np.ndarray) -> None:
        """Nodes of ``online0`` form the initial TCO (built by LowODA) and warm up their views."""
        online0 = np.asarray(online0, dtype=bool)
        self.online[:] = online0
        for v in np.flatnonzero(online0).tolist():
            self.ring.add(v)
        self._count_subs()
        nodes = np.flatnonzero(online0)
        if self.initial is not None:
            edges = np.asarray(self.initial(self.masks, nodes), dtype=np.int64).reshape(-1, 2)
        else:
            edges = tco_augment(
                self.masks, nodes, np.zeros((0, 2), dtype=np.int64), rule="lowoda",
                rho=self.rho, rng=self.rng_ties,
            )
        for u, v in edges.tolist():
            self.adj = add_edge(self.adj, self.deg, u, v)
        self.initial_edges_ = edges
        if not self.global_view:
            self.sampling.bootstrap(self.online, self.rng_sampling)
            for v in nodes.tolist():
                self._sync_entries(v)
            if self.batched_gossip:
                self._warmup_batched(self.warmup_cycles)
            else:
                for _ in range(self.warmup_cycles):
                    self._cycle(everyone=True)
        self._load_kernels(nodes)

    def _load_kernels(self, nodes: np.ndarray) -> None:
        """Run the repair's compiled kernels once on a throw-away input, before any event.

        The first call of a compiled kernel in a process loads it (10-20 ms),
        a start-up cost that would otherwise be charged to the first repair
        timed.  Nothing of the run is touched: the calls get their own
        generator, and ``shadow_repair`` returns edges without adding them.
        """
        rng = np.random.default_rng(0)
        for u in nodes.tolist():
            ts = self.topics_of(u)
            if not len(ts):
                continue
            t = int(ts[0])
            held = (self.masks[nodes, t >> 6] >> np.uint64(t & 63)) & np.uint64(1)
            others = nodes[(held != 0) & (nodes != u)]
            if not len(others):
                continue
            pair = np.array([u, int(others[0])], dtype=np.int64)
            shadow_repair(self.masks, self.adj, self.deg, pair, ts, rng=rng, rho=self.rho,
                          components=self.components)
            holds_topics(self.masks, pair, u, ts, self.live_subs)
            if self.global_view and self.builder != "all":
                backup_set(self.sub_indptr, self.sub_topics, u, others, max(self.lam, 1),
                           self.builder, rng, pick=self.pd_pick, n_topics=self.n_topics,
                           load=self._load(), masks=self.masks)
            return

    def _count_subs(self) -> None:
        self.live_subs[:] = 0
        on = np.flatnonzero(self.online)
        if len(on):
            ts = np.concatenate([self.topics_of(v) for v in on.tolist()])
            np.add.at(self.live_subs, ts, 1)

    # ------------------------------------------------------------------ messages
    def _delay(self, u: int, v: int) -> float:
        return 0.05 + 0.4 * float((self._la[u] + self._lb[v]) % 1.0)

    def _send(self, kind: str, u: int, v: int, action: Callable[..., Any], *args: Any) -> None:
        self.messages[kind] += 1
        self.sim.schedule(self._delay(u, v), self._deliver, v, action, args)

    def _deliver(self, v: int, action: Callable[..., Any], args: tuple) -> None:
        if not self.online[v]:
            self.lost += 1
            return
        action(*args)

    # ------------------------------------------------------------------ churn
    def join(self, p: int, topics: np.ndarray | None = None) -> None:
        """``p`` comes online (with new ``topics`` when given) and announces itself."""
        if self.online[p]:
            return
        self._begin()
        if topics is not None:
            new = np.unique(np.asarray(topics, dtype=np.int64))
            if not np.array_equal(new, self.topics_of(p)):
                self._replace_topics(p, new)
        self.online[p] = True
        self.live_subs[self.topics_of(p)] += 1
        self.ring.add(p)
        if not self.global_view:
            self.sampling.fill(np.array([p]), self.rng_sampling, self.sampling.c)
        ev = self._new_event(JOIN, p)
        self._ring_changed(p)
        self._announce(ev, p)

    def leave(self, p: int) -> None:
        """``p`` leaves (gracefully or by crashing: handled alike, section 3.1)."""
        if not self.online[p]:
            return
        self._begin()
        self.online[p] = False
        self.live_subs[self.topics_of(p)] -= 1
        self.ring.remove(p)
        nb = remove_node(self.adj, self.deg, p)
        self.last_nbrs[p] = nb
        ev = self._new_event(LEAVE, p)
        ev.reporters = nb
        # the node's own queues and views die with it
        for e in self.entries[p].values():
            self._set_backups(e, _NONE)
        self.entries[p] = {}
        old = self._gsets.pop(p, None)
        if old is not None:
            self.backup_load[old] -= 1
        self.exeq[p] = []
        self.standby[p] = set()
        self.busy[p] = None
        self._ring_changed(p)
        for holder in np.flatnonzero(self.online).tolist():
            for e in self.entries[holder].values():
                if p in e.backups or p in e.neighbours:
                    e.dirty = True
        self.sim.schedule(self.detect, self._detected, ev.id)

    crash = leave

    def _begin(self) -> None:
        self._msgs0 = dict(self.messages)
        self._added = []

    @property
    def last_added(self) -> np.ndarray:
        """``(k, 2)`` links created since the last join or leave call."""
        return np.asarray(self._added, dtype=np.int64).reshape(-1, 2)

    @property
    def last_event(self) -> dict[str, Any]:
        """The latest event's figures (for the per-event rows of a churn run)."""
        if not self.events:
            return {}
        ev = self.events[-1]
        views = self.view_sizes()[self.online] if not self.global_view else np.zeros(1)
        return {
            "view_mean": float(views.mean()) if len(views) else 0.0,
            "view_max": int(views.max()) if len(views) else 0,
            "view_below_5pct": float((views < 0.05 * self.n).mean()) if len(views) else 1.0,
            "view_below_10pct": float((views < 0.10 * self.n).mean()) if len(views) else 1.0,
            "type": ev.type,
            "node": ev.node,
            "coordinator": ev.coordinators[0] if ev.coordinators else -1,
            "coordinators": len(ev.coordinators),
            "shadow_size": ev.shadow,
            "backup_size": ev.backups,
            "neighbour_size": ev.neighbours,
            "edges_added": len(self._added),
            "repair_rounds": ev.rounds,
            "omen_repair_seconds": ev.repair_seconds,
            "lifecycle_cycles": ev.t_end - ev.t_start if ev.done else float("nan"),
            "gossip_cycles": self.cycles,
            "messages": {k: self.messages[k] - self._msgs0[k] for k in MESSAGE_KINDS},
        }

    def _new_event(self, kind: str, p: int) -> ChurnEvent:
        ev = ChurnEvent(len(self.events), kind, p, self.sim.now, topics=self.topics_of(p).copy())
        self.events.append(ev)
        # an unfinished join of a node that leaves again is superseded (its
        # partial links are the leave's to repair); an unfinished leave is not
        old = self.current[p]
        if old >= 0 and not self.events[old].done and self.events[old].type == JOIN:
            self._finish(self.events[old], superseded=True)
        self.current[p] = ev.id
        return ev

    def _replace_topics(self, p: int, new: np.ndarray) -> None:
        lists = [self.topics_of(v) for v in range(self.n)]
        lists[p] = new
        indptr = np.zeros(self.n + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(x) for x in lists])
        self._set_topics(indptr, np.concatenate(lists) if indptr[-1] else np.zeros(0, np.int64))

    def _detected(self, eid: int) -> None:
        ev = self.events[eid]
        if ev.done:
            return
        self._announce(ev, ev.node)
        # reporters: live neighbours of the departed node (reading R-13)
        succ = self.ring.successors(ev.node, self.L)
        for r in ev.reporters.tolist():
            if self.online[r]:
                for s in succ:
                    self._send("report", r, s, self._on_report, s, eid)
        self.sim.schedule(self.standby_timeout, self._reannounce, eid)

    def _announce(self, ev: ChurnEvent, sender: int) -> None:
        for s in self.ring.successors(ev.node, self.L):
            self._send("notify", sender, s, self._on_notify, s, ev.id)
        if ev.type == JOIN:
            self.sim.schedule(self.standby_timeout, self._reannounce, ev.id)

    def _reannounce(self, eid: int) -> None:
        """An owner (the joiner, or a reporter) saw no DONE: announce again."""
        ev = self.events[eid]
        if ev.done:
            return
        if ev.type == JOIN:
            if not self.online[ev.node]:
                return
            self._announce(ev, ev.node)
            return
        live = [r for r in ev.reporters.tolist() if self.online[r]]
        sender = live[0] if live else ev.node
        for s in self.ring.successors(ev.node, self.L):
            self._send("notify", sender, s, self._on_notify, s, eid)
        self.sim.schedule(self.standby_timeout, self._reannounce, eid)

    def _on_report(self, s: int, eid: int) -> None:
        """Reports only confirm what the ring announces; the coordinator reads ``ev.reporters``."""

    # ------------------------------------------------------------------ Alg. 5
    def _on_notify(self, s: int, eid: int) -> None:
        ev = self.events[eid]
        if ev.done or eid in self.standby[s] or eid in self.exeq[s]:
            if not ev.done and self.ring.coordinator(ev.node) == s and eid in self.standby[s]:
                self.standby[s].discard(eid)
                self.exeq[s].append(eid)
                self._process(s)
            return
        if self.ring.coordinator(ev.node) == s:
            if ev.type == LEAVE:
                for other in sorted(self.standby[s]):
                    o = self.events[other]
                    if not o.done and self.ring.coordinator(o.node) == s:
                        self.standby[s].discard(other)
                        self.exeq[s].append(other)
            self.exeq[s].append(eid)
            self._process(s)
        else:
            self.standby[s].add(eid)
            self.sim.schedule(self.standby_timeout, self._standby_timeout, s, eid)

    def _standby_timeout(self, s: int, eid: int) -> None:
        ev = self.events[eid]
        if not self.online[s] or eid not in self.standby[s]:
            return
        if ev.done:  # its DONE went to the range of the moment, which s had left
            self._gc(s, eid)
            return
        if self.ring.in_pred_range(ev.node, s, self.L):
            self.standby[s].discard(eid)
            self.exeq[s].append(eid)
            self._process(s)
        else:  # out of range: keep it until its DONE (or a later timeout) clears it
            self.sim.schedule(self.standby_timeout, self._standby_timeout, s, eid)

    def _process(self, c: int) -> None:
        """processExeQ: the oldest event first, once the view is ready."""
        if not self.online[c] or self.busy[c] is not None:
            return
        q = self.exeq[c]
        while q:
            q.sort(key=lambda e: (self.events[e].t_start, e))
            eid = q[0]
            ev = self.events[eid]
            if ev.done:
                q.pop(0)
                continue
            if not self.ring.in_pred_range(ev.node, c, self.L) and ev.node != c:
                q.pop(0)
                self.standby[c].add(eid)
                self.sim.schedule(self.standby_timeout, self._standby_timeout, c, eid)
                continue
            if not self._ready(c, ev):
                key = (c, eid)
                since = self.waiting_since.setdefault(key, self.sim.now)
                bound = self.join_timeout if ev.type == JOIN else self.ready_timeout
                # within its bound an event waits; after it, it proceeds with the set it has
                if self.sim.now - since < bound:
                    self._want_gossip()
                    if c not in self._recheck:
                        self._recheck.add(c)
                        self.sim.schedule(1.0, self._recheck_process, c)
                    return
            q.pop(0)
            self.waiting_since.pop((c, eid), None)
            self._start_repair(c, ev)
            return

    def _recheck_process(self, c: int) -> None:
        self._recheck.discard(c)
        self._process(c)

    def _ready(self, c: int, ev: ChurnEvent) -> bool:
        if self.global_view:
            return True
        e = self.entries[c].get(ev.node)
        if e is None:
            return False
        if ev.type == JOIN and not self.online[ev.node]:
            return True
        return e.ready

    # ------------------------------------------------------------------ repair
    def _start_repair(self, c: int, ev: ChurnEvent) -> None:
        t0 = _time.thread_time()
        v = ev.node
        if ev.type == JOIN and not self.online[v]:
            self._finish(ev)
            return
        topics = ev.topics
        assert topics is not None, "a churn event carries its node's topics"
        if self.global_view:
            cands = self._global_candidates(v)
            if self.builder == "all":
                B = cands
            else:
                lam = max(self.lam, 1) if ev.type == JOIN else self.lam
                old = self._gsets.pop(v, None)
                if old is not None:
                    self.backup_load[old] -= 1
                B = backup_set(
                    self.sub_indptr, self.sub_topics, v, cands, lam, self.builder,
                    self.rng_backups, pick=self.pd_pick, n_topics=self.n_topics,
                    load=self._load(), masks=self.masks,
                )
                if self.online[v]:
                    self._gsets[v] = B
                    self.backup_load[B] += 1
            N = self.adj[v, : self.deg[v]] if ev.type == JOIN else ev.reporters
        else:
            e = self.entries[c].get(v, Entry())
            B, N = e.backups, e.neighbours
        if ev.type == JOIN:
            shadow = np.unique(np.append(B, v).astype(np.int64, copy=False))
        else:
            shadow = np.unique(np.concatenate((B, N, ev.reporters)).astype(np.int64, copy=False))
            shadow = self._expand_departed(c, shadow)
        shadow = shadow[self.online[shadow]]
        ev.coordinators.append(c)
        ev.shadow_set = (
            shadow if ev.shadow_set is None else np.union1d(ev.shadow_set, shadow)
        )
        ev.shadow = max(ev.shadow, len(shadow))
        ev.backups = max(ev.backups, len(B))
        ev.neighbours = max(ev.neighbours, len(N))
        rep = _Repair(ev, shadow, topics)
        self.busy[c] = rep
        ev.repair_seconds += _time.thread_time() - t0
        self._repair_round(c, rep)

    def _join_covered(self, v: int, shadow: np.ndarray) -> bool:
        """Whether ``shadow`` (minus ``v``) holds every topic of ``v`` another live node holds."""
        return bool(holds_topics(self.masks, shadow, v, self.topics_of(v), self.live_subs))

    def _global_candidates(self, v: int) -> np.ndarray:
        shares = (self.masks & self.masks[v]).any(axis=1) & self.online
        shares[v] = False
        return np.flatnonzero(shares)

    def _expand_departed(self, c: int, shadow: np.ndarray) -> np.ndarray:
        """Add the live neighbours-at-departure of departed shadow members (QUERY/REPLY)."""
        seen: set[int] = set()
        todo = [int(u) for u in shadow.tolist() if not self.online[u]]
        extra: list[int] = []
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            seen.add(u)
            self.messages["query"] += 2
            for w in self.last_nbrs.get(u, np.zeros(0, np.int64)).tolist():
                if self.online[w]:
                    extra.append(w)
                elif w not in seen:
                    todo.append(w)
        if not extra:
            return shadow
        return np.union1d(shadow, np.asarray(extra, dtype=np.int64))

    def _repair_round(self, c: int, rep: _Repair) -> None:
        if not self.online[c] or self.busy[c] is not rep:
            return
        t0 = _time.thread_time()
        ev = rep.ev
        if rep.round and ev.type == LEAVE:
            # members that failed meanwhile hand over their neighbours-at-departure
            rep.shadow = self._expand_departed(c, rep.shadow)
        shadow = rep.shadow[self.online[rep.shadow]]
        rep.shadow = shadow
        if ev.type == JOIN and not self._join_covered(ev.node, shadow):
            # a backup failed before its link landed: cover the node again first
            ev.repair_seconds += _time.thread_time() - t0
            self.busy[c] = None
            e = self.entries[c].get(ev.node)
            if e is not None:
                e.ready, e.dirty = False, True
            self.exeq[c].insert(0, ev.id)
            self._process(c)
            return
        if rep.round:  # round 0 uses the set _start_repair has just recorded
            assert ev.shadow_set is not None
            ev.shadow_set = np.union1d(ev.shadow_set, shadow)
        new = shadow_repair(
            self.masks, self.adj, self.deg, shadow, rep.topics,
            rng=self.rng_ties, rho=self.rho, components=self.components,
        )
        rep.ev.repair_seconds += _time.thread_time() - t0
        rep.ev.rounds += 1
        rep.round += 1
        if not len(new):
            self.busy[c] = None
            self._finish(rep.ev, coordinator=c)
            self._process(c)
            return
        rep.pending = set()
        rep.failed = False
        for u, w in new.tolist():
            rep.pending.add((u, w))
            rep.ev.edges.append((u, w))
            self._send("link", c, u, self._on_link, u, w, c, rep)
            self._send("link", c, w, self._on_link, w, u, c, rep)
        self.sim.schedule(self.ack_timeout, self._ack_timeout, c, rep, rep.round)

    def _on_link(self, me: int, other: int, c: int, rep: _Repair) -> None:
        key = (min(me, other), max(me, other))
        got = self._links_half.get(key, 0) + 1
        if got < 2:
            self._links_half[key] = got
            return
        self._links_half.pop(key, None)
        if not self.online[other]:
            rep.failed = True
        elif other not in self.adj[me, : self.deg[me]]:
            self.adj = add_edge(self.adj, self.deg, me, other)
            self._added.append(key)
            for end in (me, other):
                for h in self.ring.successors(end, self.L):
                    e = self.entries[h].get(end)
                    if e is not None:
                        e.dirty = True
        self._send("link-ok", me, c, self._on_link_ok, c, rep, key)

    def _on_link_ok(self, c: int, rep: _Repair, key: tuple[int, int]) -> None:
        rep.pending.discard(key)
        if not rep.pending and self.busy[c] is rep:
            if rep.failed or not self.online[rep.shadow].all():
                self._repair_round(c, rep)
            else:  # every link of Algorithm 1's answer is in place: S is connected
                self.busy[c] = None
                self._finish(rep.ev, coordinator=c)
                self._process(c)

    def _ack_timeout(self, c: int, rep: _Repair, rnd: int) -> None:
        if rep.round == rnd and rep.pending and self.busy[c] is rep:
            for key in rep.pending:
                self._links_half.pop(key, None)
            rep.pending = set()
            self._repair_round(c, rep)

    def _finish(self, ev: ChurnEvent, coordinator: int = -1, superseded: bool = False) -> None:
        if ev.done:
            return
        ev.done = True
        ev.t_end = self.sim.now
        if superseded or coordinator < 0:
            targets = self.ring.successors(ev.node, self.L)
        else:
            targets = [s for s in self.ring.successors(ev.node, self.L) if s != coordinator]
        sender = coordinator if coordinator >= 0 else ev.node
        for s in targets:
            self._send("done", sender, s, self._gc, s, ev.id)
        if coordinator >= 0:
            self._gc(coordinator, ev.id)

    def _gc(self, s: int, eid: int) -> None:
        """gcChurnEvent: drop the event and the view entries no longer needed."""
        self.standby[s].discard(eid)
        if eid in self.exeq[s]:
            self.exeq[s].remove(eid)
        self._sync_entries(s)

    # ------------------------------------------------------------------ views
    def _pending_nodes(self, s: int) -> set[int]:
        ids = list(self.standby[s]) + list(self.exeq[s])
        busy = self.busy[s]
        if busy is not None:
            ids.append(busy.ev.id)
        return {self.events[e].node for e in ids if not self.events[e].done}

    def _leave_pending(self, v: int) -> bool:
        """``v`` departed and its leave is not done: its entry waits for ``gcChurnEvent``.

        The ring drops ``v`` at once (R-12), before its successors hear of the
        event; without this its prepared ``B(v)`` and ``N(v)`` would be lost
        and the repair would see only the reporters.
        """
        if self.online[v] or self.current[v] < 0:
            return False
        ev = self.events[self.current[v]]
        return ev.type == LEAVE and not ev.done

    def _sync_entries(self, s: int) -> None:
        """Entries for the L live predecessors, kept for departed ones with pending events."""
        if self.global_view or not self.online[s]:
            return
        preds = self.ring.predecessors(s, self.L)
        keep = set(preds) | self._pending_nodes(s)
        ent = self.entries[s]
        for v in list(ent):
            if v not in keep and not self._leave_pending(v):
                self._set_backups(ent[v], _NONE)
                del ent[v]
        for v in preds:
            if v not in ent:
                ent[v] = Entry()
                self._want_gossip()

    def _ring_changed(self, p: int) -> None:
        """Nodes whose predecessor range changed with ``p``: its successors (and ``p``)."""
        if self.global_view:
            return
        for s in self.ring.successors(p, self.L + 1):
            self._sync_entries(s)
        if self.online[p]:
            self._sync_entries(p)
        self._want_gossip()

    def _want_gossip(self) -> None:
        if self.global_view or self._gossip_on:
            return
        self._gossip_on = True
        self.sim.schedule(1.0, self._gossip_tick)

    def _gossip_tick(self) -> None:
        active = self._cycle(everyone=False)
        if active or self._recheck:
            self.sim.schedule(1.0, self._gossip_tick)
        else:
            self._gossip_on = False

    def _needs(self, v: int) -> bool:
        return any(
            (e.dirty or not e.ready) and self.online[u] for u, e in self.entries[v].items()
        )

    def _table(self) -> ViewTable:
        """Every node's entries packed for the batched cycle."""
        lam_of = np.full(self.n, self.lam, dtype=np.int64)
        joins = [u for u, e in enumerate(self.current) if e >= 0 and self.events[e].type == JOIN]
        lam_of[joins] = max(self.lam, 1)
        rlam_of = lam_of if self.ready_rule == "lambda" else np.ones(self.n, dtype=np.int64)
        return ViewTable(self.entries, self.online, self.adj, self.deg, self.sub_indptr,
                         lam_of, rlam_of)

    def _gossip_arrays(self) -> tuple:
        return (
            self.online, self.adj, self.deg, self.sub_indptr, self.sub_topics, self.masks,
            self.live_subs,
            self.backup_load, self.pd_pick == "dual", BUILDERS[self.builder],
            PD_PICKS[self.pd_pick], self.sampling.cache, self.rnd_view,
        )

    def _warmup_batched(self, cycles: int) -> None:
        """``cycles`` full cycles on one packed table (nothing but gossip runs meanwhile)."""
        table = self._table()
        on = np.flatnonzero(self.online)
        for _ in range(cycles):
            self.cycles += 1
            self.sampling.cycle(self.rng_sampling)
            if not len(on):
                continue
            order = self.rng_gossip.permutation(on)
            ex = table.run(order, on, self._gossip_arrays(), self.rng_gossip, self.rng_backups)
            self.messages["gossip"] += 2 * ex
        table.unpack()

    def _cycle(self, *, everyone: bool) -> int:
        """One gossip cycle; returns how many nodes were active."""
        self.cycles += 1
        on = np.flatnonzero(self.online)
        self.sampling.cycle(self.rng_sampling)
        if everyone:
            active = on
        else:
            active = np.array([v for v in on.tolist() if self.entries[v] and self._needs(v)])
        if not len(active):
            return 0
        rng = self.rng_gossip
        if self.batched_gossip and len(active) * _BATCH_SHARE >= len(on):
            # packing every view costs about as much as a few dozen Python exchanges:
            # batch the cycles where many nodes are active (same draws, same result)
            table = self._table()
            order = rng.permutation(active)
            ex = table.run(order, on, self._gossip_arrays(), rng, self.rng_backups)
            self.messages["gossip"] += 2 * ex
            table.unpack()
            return len(active)
        for v in rng.permutation(active).tolist():
            view = view_of(self.entries[v])
            view = view[self.online[view]] if len(view) else view
            view = view[view != v]
            p = int(view[rng.integers(len(view))]) if len(view) else int(on[rng.integers(len(on))])
            if p == v:
                continue
            self.messages["gossip"] += 2
            buf_v = self._buffer(v, view)
            view_p = view_of(self.entries[p])
            buf_p = self._buffer(p, view_p)
            self._select_view(v, np.concatenate((view, buf_p)))
            self._select_view(p, np.concatenate((view_p, buf_v)))
        return len(active)

    def _buffer(self, v: int, view: np.ndarray) -> np.ndarray:
        rnd = self.sampling.cache[v, : self.rnd_view]
        rnd = rnd[rnd >= 0].astype(np.int64)
        return np.concatenate((view, rnd, np.array([v], dtype=np.int64)))

    def _select_view(self, v: int, cands: np.ndarray) -> None:
        """selectView (Alg. 4): refresh N and rebuild B for every live predecessor."""
        for u, e in self.entries[v].items():
            if not self.online[u]:
                continue  # a departed predecessor's entry is frozen until its event is done
            e.neighbours = self.adj[u, : self.deg[u]].copy()
            joining = self.current[u] >= 0 and self.events[self.current[u]].type == JOIN
            lam = max(self.lam, 1) if joining else self.lam
            pool = np.concatenate((cands, e.backups))
            self._set_backups(e, _NONE)  # a set is priced without its own membership
            B, e.ready = refresh_entry(
                u, pool, self.online, self.sub_indptr,
                self.sub_topics, lam, self.builder, self.rng_backups, self.live_subs,
                pick=self.pd_pick, load=self._load(), ready=self.ready_rule, masks=self.masks,
            )
            self._set_backups(e, B)
            e.dirty = False

    def _load(self) -> np.ndarray | None:
        """Prices of the primal-dual builder (``pd_pick="dual"``), else none."""
        return self.backup_load if self.pd_pick == "dual" else None

    def _set_backups(self, e: Entry, B: np.ndarray) -> None:
        """Replace ``e.backups`` and keep :attr:`backup_load` in step."""
        self.backup_load[e.backups] -= 1
        self.backup_load[B] += 1
        e.backups = B

    # ------------------------------------------------------------------ read-outs
    def state_digest(self) -> str:
        """A digest (16 hex digits of sha256) of the engine's whole state.

        Covers the links, every node's entries (predecessor, ``B`` in the order
        chosen, ``N``, ready and dirty flags), the backup loads, the message
        counts, the cycle and loss counters, the state of each random stream
        (gossip, backups, sampling, ties) and the peer-sampling cache: two
        engines with equal digests will go on identically.  Pinned for the
        settled starts of FB 1K and the synthetic 2K by
        ``tests/protocols/omen/test_start.py``.

        Examples
        --------
        >>> from hedgerow.protocols import get_protocol
        >>> from hedgerow.workloads import make_instance
        >>> inst = make_instance(nodes=30, topics=6, subs="1:3", seed=1)
        >>> proto = get_protocol("omen", coverage=2, warmup_cycles=3)
        >>> a, b = (proto.maintenance_engine(inst, proto.streams(1)) for _ in range(2))
        >>> a.start(np.ones(30, bool)); b.start(np.ones(30, bool))
        >>> a.state_digest() == b.state_digest(), len(a.state_digest())
        (True, 16)
        """
        h = hashlib.sha256()

        def put(x: Any) -> None:
            h.update(repr(x).encode())

        h.update(np.ascontiguousarray(self.edges(), dtype=np.int64).tobytes())
        for v, ent in enumerate(self.entries):
            for u, e in ent.items():
                put((v, u, e.backups.tolist(), e.neighbours.tolist(), bool(e.ready),
                     bool(e.dirty)))
        h.update(np.ascontiguousarray(self.backup_load, dtype=np.int64).tobytes())
        put(sorted(self.messages.items()))
        put((self.cycles, self.lost))
        for g in (self.rng_gossip, self.rng_backups, self.rng_sampling, self.rng_ties):
            put(g.bit_generator.state)
        h.update(np.ascontiguousarray(self.sampling.cache).tobytes())
        return h.hexdigest()[:16]

    def view_sizes(self) -> np.ndarray:
        """``|getView()|`` of every online node (0 for offline ones)."""
        out = np.zeros(self.n, dtype=np.int64)
        for v in np.flatnonzero(self.online).tolist():
            out[v] = len(view_of(self.entries[v]))
        return out

    def backup_sets(self) -> dict[int, np.ndarray]:
        """``B(v')`` held by the coordinator of every online node."""
        out = {}
        for v in np.flatnonzero(self.online).tolist():
            c = self.ring.coordinator(v)
            if c >= 0 and v in self.entries[c]:
                out[v] = self.entries[c][v].backups
        return out
