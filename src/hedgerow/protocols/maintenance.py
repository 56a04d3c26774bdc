"""SpiderCast's neighbour-maintenance protocol as message passing on the event core.

This module runs the node logic of SpiderCast (Chockler et al., DEBS'07,
section 2.3 and Figures 1-5) for every node on :class:`~hedgerow.engine.Simulator`:
the MAINTAINNEIGHBORS loop, CONNECT / DISCONNECT / DISCONNECTCANDIDATE, and the
CONNECT, CONNECT-OK, REDIRECT, LEAVE, DISCONNECT and DISCONNECT-OK handlers.
The same code runs SpiderCast's greedy and random coverage tasks and, with the
selection function swapped as in the paper's section 3.9.1, the similarity and
random baselines.

Each node runs one or more *tasks*; a task keeps its own neighbour set, target
``L``, ``L^max``, redirect candidates and coverage parameter ``K`` (section 2.3:
"each of these two tasks independently manipulates its own set of the data
structure").  The overlay is the union of all tasks' neighbour sets.

Modelling choices (the paper leaves them open; see ``docs/spidercast.md``)
---------------------------------------------------------------------------
* **Time.** Each node runs MAINTAINNEIGHBORS once per ``connect_timeout`` (1
  time unit) at a random phase.  A message from ``u`` to ``v`` takes
  ``0.05 + 0.4 * frac(a_u + b_v)`` units with seeded per-node ``a, b``: fixed
  per ordered pair, so every channel is FIFO (as over TCP) and a request is
  answered before the requester's next iteration.
* **Quiescence.** A node's loop iteration depends only on its neighbours, their
  degree/target, its redirect candidates and quarantine.  Instead of spinning
  every node forever, an iteration is scheduled (at the node's next tick) only
  after one of these changed; the build ends when no iteration and no message
  is pending — the overlay is then quiescent.  This is the paper's loop minus
  the iterations that provably do nothing.  One kind of iteration does
  something without a change: DISCONNECTCANDIDATE draws at random, and a
  neighbour that needs the link refuses silently (Figure 4, line 23), so the
  paper's next iteration may ask another one.  A node therefore looks again
  at its next tick after every DISCONNECT it sends, skipping the neighbours
  it already asked since its links (or their state) last changed.  A safety bound ``max_rounds``
  stops a run that does not settle, and ``stats["quiescent"]`` says so.
* **Target degree (Figure 4, lines 4-5 and 15-16 vs. the text).** The text
  defines a neighbour's *target* as "the minimum degree required for the
  complete coverage of their interest" and says DISCONNECTCANDIDATE picks
  neighbours "whose degree has exceeded" it, so that "over-covered nodes try
  to reduce their degree to minimum in which they are still K-covered".  The
  pseudo-code, read literally, raises ``L`` by one for every accepted link,
  which keeps ``degree == target`` for every node below ``L^max`` and leaves
  DISCONNECTCANDIDATE with no candidate at all (we measured 0 DISCONNECT
  messages in a 10K-node build), i.e. the pruning the paper describes never
  happens.  We follow the text: ``L`` is set to the degree at which the node
  is covered (Figure 2, line 26; Figure 4, line 27) and is not raised by
  accepted links, so a node that accepted links beyond its coverage needs is
  a disconnect candidate for neighbours that can do without it.  This prunes
  redundant links and brings the average degree closer to the paper's
  (Figure 12).  ``raise_target=True`` runs the literal pseudo-code.
* **Heartbeats.** The degree and target of neighbours travel on CONNECT,
  CONNECT-OK and heartbeats (Figure 4; ``heartbeat > 0``: a node sends one
  heartbeat to all neighbours at its next heartbeat tick after its values
  changed), or are read at the moment of use (``heartbeat = 0``, perfect
  heartbeats, the default).  Heartbeats are counted apart from the control
  messages, as keep-alive traffic.
* **Figure 5, line 5.** NEXTGREEDYCOVERAGENODE as printed counts coverage
  over the *candidates* (``cands = interest_view - neighbors``), which would
  make a topic "uncovered" when fewer than ``K`` non-neighbours hold it.  The
  reading that makes the protocol work — and the one the text describes
  ("selects a neighbor that minimizes the number of topics which are not yet
  K_g covered") — counts coverage over the current *neighbours*, exactly as
  CALCKUNCOVERED does.  We use that.  Greedy and random selection return
  nothing when no candidate covers an uncovered topic.
* **Quarantine.** The paper mentions quarantining nodes that rejected a
  CONNECT (section 2.3.1, end).  A node that answers REDIRECT is quarantined
  by the requester until the requester next loses a neighbour.
* **Saturation.** As in Figure 2, a node still under-covered whose degree
  reached ``L^max`` does not connect ("the node will not try to initiate new
  connections with new peers anymore", section 2.3.1).  Above ``L^max`` it
  disconnects as Figure 2 says.  At exactly ``L^max`` Figure 2 does nothing,
  and such a node — typically a hub filled by incoming links before it covered
  a rare topic of its own — would stay cut off from that topic for good.  We
  read the DISCONNECT routine's purpose ("disconnect from some existing
  neighbors whose removal would not hamper the desired coverage level",
  section 2.3) as covering this case: the node sends DISCONNECT to the
  DISCONNECTCANDIDATE if removing it loses no coverage, and uses the freed
  slot for the uncovered topic.  DISCONNECTCANDIDATE only offers neighbours
  above their own target; when none of them can go without loss, the
  saturated node asks a random neighbour whose removal costs it no coverage,
  and that neighbour refuses if it needs the link (Figure 4, line 23).  In a
  static build this rarely matters; under churn, where hubs keep filling
  with links from joining nodes, it is what frees them.  With pure random
  coverage (``K_g = 0``) a few nodes still end under-covered, which is why the
  paper pairs random coverage with greedy coverage.
* **Margin once covered** (Figure 1: "*Margin*: the number of additional
  links the node is allowed to maintain after the desired interest coverage
  has been reached").  Figure 4 line 2 accepts a CONNECT below
  ``L^max + Margin`` whatever the node's state; we accept above ``L^max``
  only when the node is covered, so an under-covered node is never filled
  past ``L^max`` by incoming links and the saturation rule below can free a
  slot for its own uncovered topic.  Static builds change by less than 0.5%
  in degree; under churn (:mod:`hedgerow.scenarios.churn`) the literal rule left a
  rejoined hub, refilled by incoming links faster than it could shed them,
  cut off from one rare topic in 2 of 15 snapshots (2,500 nodes, seed 1), and
  this rule in none of them (``docs/dynamic.md`` has the full count).
* **Redirect candidates** are used first (Figure 2, lines 18-22), skipping any
  that is already a neighbour, pending, quarantined or, for coverage tasks,
  shares no under-covered topic.
* **Ties** (``ties``).  The argmax selections (Figure 5 line 8, Figure 4
  line 8, NEXTSIMILARITYNODE) break ties "randomly".  ``"sequential"`` (the
  default) is the one-pass argmax: scan the view in node order, keep the best,
  replace it by a later tied candidate on a coin flip — late candidates
  become hubs.  ``"uniform"`` draws uniformly among the tied candidates.  The
  sequential rule reproduces the paper's Zipf(2) partitions (closed 4-cliques
  of identical-interest nodes with degree 3) and its maximum degree of about
  32; the uniform rule partitions nothing.  Random selections always draw
  uniformly.
* **Adaptive K_r for saturated nodes.**  A node whose greedy task reaches
  ``L^max`` while under-covered never "achieves K_g-greedy-coverage", so
  section 3.3.1's check never runs for it; in the adaptive setting such a node
  also starts random coverage with ``K_r = 1``.
* **Degree-target tasks.** The similarity and random baselines reuse this code
  with NEXTSIMILARITYNODE / NEXTRANDOMNODE; their "coverage" is a number of
  links: a node is under-covered while it has fewer than ``K`` neighbours in
  the task, and ``L^max = K`` (this reproduces the paper's average degrees of
  about 10 for ``similarity(10, 0)`` and ``random(10)``).

Churn
-----
:class:`Maintenance` implements :class:`~hedgerow.protocols.engine_api.ChurnEngine`,
the interface a churn scenario drives (:meth:`Maintenance.start`, ``join``,
``leave``, ``run_until`` on an event core the scenario hands in, and the
read-outs ``overlay``, ``undercovered``, ``subscriptions``,
``control_messages``, ``lost_messages``).  :func:`make_engine` and
:func:`run_engine` are the helpers the protocol classes build on.
"""

from __future__ import annotations

import gc
import itertools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.bitset import pack_sets
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import check_memory
from hedgerow.protocols._select import (
    GREEDY,
    RANDOM_COVER,
    RANDOM_NODE,
    SIMILARITY,
    TIES_SEQUENTIAL,
    TIES_UNIFORM,
    bit_scratch_rows,
    loss_if_removed,
    pick_candidate,
    pick_candidate_bits,
    reset_row,
    topic_bitsets,
    update_coverage,
    view_threshold,
)
from hedgerow.workloads.memory import interest_view_bytes

#: message kinds, in the paper's names
CONNECT, CONNECT_OK, REDIRECT, LEAVE, DISCONNECT, DISCONNECT_OK, HEARTBEAT = range(7)
MESSAGE_NAMES = ("CONNECT", "CONNECT-OK", "REDIRECT", "LEAVE", "DISCONNECT", "DISCONNECT-OK")

TIE_RULES = {"uniform": TIES_UNIFORM, "sequential": TIES_SEQUENTIAL}
#: how a partial interest view is kept (:class:`Maintenance`, ``view``)
VIEW_MODES = ("stored", "implicit")

SELECTIONS = {
    "greedy": GREEDY,
    "random-cover": RANDOM_COVER,
    "similarity": SIMILARITY,
    "random": RANDOM_NODE,
}


@dataclass(frozen=True)
class TaskSpec:
    """One neighbour-maintenance task.

    Parameters
    ----------
    selection : {"greedy", "random-cover", "similarity", "random"}
        The NEXTCOVERAGENODE function.
    k : int
        Coverage parameter ``K`` (topic coverage) or number of links (degree tasks).
    degree_target : bool
        ``False``: K-coverage of the node's topics; ``True``: ``K`` links.
    adaptive_random : bool
        Section 3.3.1 adaptive ``K_r`` (only for the random-cover task of SpiderCast).
    """

    selection: str
    k: int
    degree_target: bool = False
    adaptive_random: bool = False


class _Task:
    """Per-task state for all nodes (arrays indexed by node)."""

    def __init__(self, spec: TaskSpec, inst: Instance, margin: int) -> None:
        n = inst.n_nodes
        w = inst.masks.shape[1]
        self.spec = spec
        self.mode = SELECTIONS[spec.selection]
        self.degree_target = spec.degree_target
        # scalar per-node state lives in Python lists: far cheaper to index from Python
        self.k: list[int] = [int(spec.k)] * n
        self.nbrs: list[set[int]] = [set() for _ in range(n)]
        self.deg: list[int] = [0] * n
        self.redirect: list[list[int]] = [[] for _ in range(n)]
        self.quarantine: list[set[int]] = [set() for _ in range(n)]
        #: neighbours asked to DISCONNECT since the node's links or their state last changed
        self.asked: list[set[int]] = [set() for _ in range(n)]
        self.pending: list[set[int]] = [set() for _ in range(n)]
        # flags read and set from Python on every event: lists, cheaper to index than arrays
        self.scheduled: list[bool] = [False] * n
        self.hb_scheduled: list[bool] = [False] * n
        #: what each node last heard of each neighbour: ``info[p][q] = (degree, target)``
        self.info: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]
        self.margin = margin
        subs = inst.n_subs.astype(np.int64)
        self.subs = subs
        if spec.degree_target:
            self.cov = np.zeros((1, 1), dtype=np.int16)
            self.unc = np.zeros((1, w), dtype=np.uint64)
            self.atk = np.zeros((1, w), dtype=np.uint64)
            self.uc = np.full(n, spec.k, dtype=np.int64)
        else:
            self.cov = np.zeros((n, inst.n_topics), dtype=np.int16)
            self.unc = inst.masks.copy()
            self.atk = np.zeros((n, w), dtype=np.uint64)
            self.uc = subs.copy() if spec.k > 0 else np.zeros(n, dtype=np.int64)
            if spec.k == 0:
                self.unc[:] = 0
        self.lmax: list[int] = [int(spec.k) * (1 if spec.degree_target else int(s)) for s in subs]
        self.L: list[int] = list(self.lmax)

    def set_k(self, p: int, k: int, sub_indptr: np.ndarray, sub_topics: np.ndarray) -> None:
        self.k[p] = k
        self.lmax[p] = k * (1 if self.degree_target else self.subs[p])
        if self.degree_target:
            self.uc[p] = max(0, k - self.deg[p])
        else:
            reset_row(p, k, sub_indptr, sub_topics, self.cov, self.unc, self.atk, self.uc)

    def forget(self, p: int) -> None:
        """Drop everything node ``p`` knows (it left): links, requests, coverage counts."""
        self.nbrs[p].clear()
        self.info[p].clear()
        self.pending[p].clear()
        self.quarantine[p].clear()
        self.asked[p].clear()
        self.redirect[p].clear()
        self.deg[p] = 0
        if not self.degree_target:
            self.cov[p, :] = 0


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the events run.

    The events allocate millions of short-lived tuples and no reference
    cycles, yet each of the collector's passes walks every set and dict of
    every node's state (a fifth of a 20,000-node build's time).  Reference
    counting still frees everything; the collector's previous state is restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Maintenance:
    """Runs the neighbour-maintenance tasks of every node to quiescence.

    Also a :class:`~hedgerow.protocols.engine_api.ChurnEngine`: after
    :meth:`start`, nodes :meth:`join` and :meth:`leave` while it runs.

    Parameters
    ----------
    instance : Instance
        Who subscribes to what.
    tasks : list of TaskSpec
        The tasks every node runs (SpiderCast: greedy then random coverage).
    margin : int
        ``Margin``: extra links a node accepts above ``L^max``.
    rng : numpy.random.Generator
        Source of all randomness (phases, latencies, ties, views).
    membership : float
        Fraction of other nodes in each node's interest view (1.0 = full).
    view : {"stored", "implicit"}
        How a partial view (``membership < 1``) is kept: ``"stored"``, a
        sorted array of exactly ``round(membership * (n - 1))`` nodes per
        node, drawn from ``rng`` before the build; ``"implicit"``, never
        stored: each other node is in the view with probability
        ``membership``, decided by a counter-based hash of ``(view_key,
        node, candidate)`` whenever a choice needs it
        (:func:`~hedgerow.protocols._select.in_implicit_view`), so a million
        nodes with 5% views need no view memory.  The choices are those of a
        stored view holding the same nodes (tested).
    view_key : int
        The key of the implicit views (drawn by :func:`make_engine` from the
        ``"interest-view"`` stream); unused otherwise.
    heartbeat : float
        Heartbeat period (0: neighbours' degree and target are read live).
    join_window : float
        Nodes start their tasks at uniform times in ``[0, join_window)``.
    ties : {"sequential", "uniform"}
        How the argmax selections (greedy coverage, similarity) break ties:
        a one-pass coin flip in view order, or uniformly (see the module notes).
    raise_target : bool
        Figure 4 lines 4-5 and 15-16 literally: a node raises its target ``L``
        by one for every link it accepts (see the module notes).
    max_rounds : float
        Safety bound on simulated time, in ``connect_timeout`` units.
    sim : Simulator, optional
        The event core to run on, its unit one ``connect_timeout`` (a churn
        scenario creates it and schedules its own events on it); ``None``
        makes a new one, as a static build does.
    """

    def __init__(
        self,
        instance: Instance,
        tasks: list[TaskSpec],
        *,
        margin: int,
        rng: np.random.Generator,
        membership: float = 1.0,
        view: str = "stored",
        view_key: int = 0,
        heartbeat: float = 0.0,
        join_window: float = 0.0,
        ties: str = "sequential",
        raise_target: bool = False,
        max_rounds: float = 5000.0,
        sim: Simulator | None = None,
    ) -> None:
        self.raise_target = bool(raise_target)
        self.ties = TIE_RULES[ties]
        self.join_window = float(join_window)
        self.inst = instance
        self.heartbeat = float(heartbeat)
        self.heartbeats = 0
        self.n = instance.n_nodes
        self.masks = instance.masks
        self.sub_indptr = instance.sub_indptr
        self.sub_topics = instance.sub_topics
        #: churn (see :meth:`start`); ``None`` in a static build
        self.online: np.ndarray | None = None
        #: messages that met an offline node (churn only)
        self.lost_messages = 0
        self._online_ids = np.zeros(0, dtype=np.int64)
        self.rng = rng
        self.margin = int(margin)
        self.max_rounds = float(max_rounds)
        self.tasks = [_Task(spec, instance, self.margin) for spec in tasks]
        self.sim = Simulator() if sim is None else sim
        self._sent: list[int] = [0] * len(MESSAGE_NAMES)
        n = self.n
        self.phase: list[float] = rng.random(n).tolist()
        self.hb_phase: list[float] = (rng.random(n) * max(self.heartbeat, 1e-9)).tolist()
        self._lat_a: list[float] = rng.random(n).tolist()
        self._lat_b: list[float] = rng.random(n).tolist()
        self._mark = np.zeros(n, dtype=np.int64)
        self._keys = np.zeros(n, dtype=np.int64)
        self._stamp = 0
        #: the uniform variates, drawn 4,096 at a time (as Python floats: read from Python)
        self._u: list[float] = rng.random(4096).tolist()
        self._ui = 0
        self.full_view = membership >= 1.0
        if view not in VIEW_MODES:
            raise ParameterError(f"view must be one of {', '.join(VIEW_MODES)}, not {view!r}",
                                 key="view")
        #: partial views decided by a hash on demand (``view="implicit"``), never stored
        self.implicit_view = not self.full_view and view == "implicit"
        self.view_key = int(view_key) & (2**63 - 1)
        self.view_threshold = view_threshold(membership)
        self.views: list[np.ndarray] = []
        if not self.full_view and not self.implicit_view:
            check_memory(
                f"interest views of {membership:g} of {n:,} nodes",
                interest_view_bytes(n, membership),
            )
            size = max(1, round(membership * (n - 1)))
            for p in range(n):
                v = rng.choice(n - 1, size=size, replace=False)
                v[v >= p] += 1
                self.views.append(np.sort(v).astype(np.int64))
        self._empty_view = np.zeros(0, dtype=np.int64)
        self.adapt_started = np.zeros(n, dtype=bool)
        #: score full views with the per-topic subscriber bit sets (:func:`pick_candidate_bits`,
        #: the same choices as the per-node scan of :func:`pick_candidate`, which stays the
        #: path of partial views, churn and ``False``: the reference the tests compare with)
        self.bit_index = True
        self._bits: np.ndarray | None = None
        self._scratch = np.zeros((0, 0), dtype=np.uint64)
        self._ints: list[int] | None = None

    # ------------------------------------------------------------ utilities
    def _uniform(self) -> float:
        if self._ui >= 4096:
            self._u = self.rng.random(4096).tolist()
            self._ui = 0
        x = self._u[self._ui]
        self._ui += 1
        return x

    def _latency(self, u: int, v: int) -> float:
        x = self._lat_a[u] + self._lat_b[v]
        return 0.05 + 0.4 * (x - int(x))

    def _send(self, kind: int, ti: int, src: int, dst: int, arg: int = -1) -> None:
        """Send a message; CONNECT, CONNECT-OK and HEARTBEAT carry the sender's
        current ``(|neighbors|, L)``, as in Figures 2 and 4."""
        task = self.tasks[ti]
        if kind == HEARTBEAT:
            self.heartbeats += 1
        else:
            self._sent[kind] += 1
        x = self._lat_a[src] + self._lat_b[dst]
        self.sim.schedule(
            0.05 + 0.4 * (x - int(x)),
            self._receive,
            kind,
            ti,
            src,
            dst,
            (arg, task.deg[src], task.L[src]),
        )

    @property
    def sent(self) -> np.ndarray:
        """Control messages sent so far, by kind (:data:`MESSAGE_NAMES`)."""
        return np.array(self._sent, dtype=np.int64)

    def _wake(self, ti: int, p: int) -> None:
        task = self.tasks[ti]
        if task.scheduled[p] or (task.k[p] <= 0 and not task.nbrs[p]):
            return
        task.scheduled[p] = True
        now = self.sim.now
        ph = self.phase[p]
        self.sim.schedule_at(ph + math.floor(now - ph) + 1.0, self._iterate, ti, p)

    def _view_of(self, task: _Task, p: int, q: int) -> tuple[int, int]:
        """``(degree, target)`` of neighbour ``q`` as ``p`` knows it."""
        if self.heartbeat <= 0:
            return task.deg[q], task.L[q]
        return task.info[p].get(q, (task.deg[q], task.L[q]))

    def _high(self, task: _Task, p: int, q: int) -> bool:
        if self.heartbeat <= 0:
            return task.deg[q] > task.L[q]
        deg, tgt = task.info[p].get(q, (task.deg[q], task.L[q]))
        return deg > tgt

    def _raise_after_accept(self, ti: int, task: _Task, p: int) -> None:
        """Figure 4 lines 4-5 and 15-16 (``raise_target`` only): an accepted link raises ``L``."""
        if self.raise_target and task.L[p] < task.lmax[p] and task.deg[p] < task.L[p] + self.margin:
            self._set_deg_target(ti, p, L=int(task.L[p] + 1))

    def _set_deg_target(
        self, ti: int, p: int, deg: int | None = None, L: int | None = None
    ) -> None:
        """Change ``p``'s degree/target and let the neighbours learn it.

        With ``heartbeat > 0`` the new values travel on ``p``'s next heartbeat
        (sent at ``p``'s next heartbeat tick when they changed); with
        ``heartbeat = 0`` neighbours read them at once.
        """
        task = self.tasks[ti]
        old_deg, old_L = task.deg[p], task.L[p]
        new_deg = old_deg if deg is None else deg
        new_L = old_L if L is None else L
        if new_deg == old_deg and new_L == old_L:
            return
        task.deg[p] = new_deg
        task.L[p] = new_L
        if self.heartbeat <= 0:
            if (old_deg > old_L) != (new_deg > new_L):
                asked, scheduled = task.asked, task.scheduled
                for q in task.nbrs[p]:
                    asked[q].discard(p)
                    if not scheduled[q]:
                        self._wake(ti, q)
        elif not task.hb_scheduled[p]:
            task.hb_scheduled[p] = True
            ph, h = self.hb_phase[p], self.heartbeat
            self.sim.schedule_at(
                ph + h * (math.floor((self.sim.now - ph) / h) + 1.0), self._beat, ti, p
            )

    def _beat(self, ti: int, p: int) -> None:
        """Heartbeat: send ``(|neighbors|, L)`` to every neighbour."""
        task = self.tasks[ti]
        task.hb_scheduled[p] = False
        if self.online is not None and not self.online[p]:
            return
        for q in sorted(task.nbrs[p]):
            self._send(HEARTBEAT, ti, p, q)

    def _uncovered_without(self, task: _Task, p: int, q: int) -> int:
        if task.degree_target:
            return max(0, int(task.k[p]) - (task.deg[p] - 1))
        return int(task.uc[p]) + int(loss_if_removed(task.atk[p], self.masks[q]))

    # ------------------------------------------------------------ link changes
    def _link_changed(self, ti: int, p: int, q: int, sign: int) -> None:
        """Update ``p``'s coverage and degree after gaining (+1) or losing (-1) neighbour ``q``."""
        task = self.tasks[ti]
        task.asked[p].clear()
        if task.degree_target:
            task.uc[p] = max(0, int(task.k[p]) - (task.deg[p] + sign))
        else:
            update_coverage(
                p,
                q,
                sign,
                task.k[p],
                self.sub_indptr,
                self.sub_topics,
                self.masks,
                task.cov,
                task.unc,
                task.atk,
                task.uc,
            )
        self._set_deg_target(ti, p, deg=task.deg[p] + sign)

    def _add(self, ti: int, p: int, q: int, info: tuple[int, int]) -> None:
        task = self.tasks[ti]
        if q in task.nbrs[p]:
            return
        task.nbrs[p].add(q)
        task.info[p][q] = info
        self._link_changed(ti, p, q, 1)
        self._wake(ti, p)

    def _remove(self, ti: int, p: int, q: int) -> None:
        """REMOVECONNECTION (Figure 4, lines 34-38)."""
        task = self.tasks[ti]
        if q not in task.nbrs[p]:
            return
        task.nbrs[p].discard(q)
        task.info[p].pop(q, None)
        self._link_changed(ti, p, q, -1)
        task.quarantine[p].clear()
        self._wake(ti, p)

    # ------------------------------------------------------------ node loop
    def _iterate(self, ti: int, p: int) -> None:
        """One iteration of MAINTAINNEIGHBORS (Figure 2, lines 3-15)."""
        task = self.tasks[ti]
        task.scheduled[p] = False
        if task.k[p] <= 0 or (self.online is not None and not self.online[p]):
            return
        under = int(task.uc[p])
        gap = 0
        if under > 0:
            self._set_deg_target(ti, p, L=int(task.lmax[p]))
            gap = int(task.L[p] - task.deg[p])
            if gap > 0:
                self._connect(ti, p)
        if under == 0 or gap < 0:
            self._disconnect(ti, p)
        elif gap == 0:
            self._disconnect(ti, p, make_room=True)
        if under == 0 or gap <= 0:
            self._adapt(ti, p, saturated=under > 0)

    def _connect(self, ti: int, p: int) -> None:
        """CONNECT (Figure 2, lines 17-23)."""
        task = self.tasks[ti]
        target = -1
        red = task.redirect[p]
        while red:
            m = red.pop(0)
            if m == p or m in task.nbrs[p] or m in task.pending[p] or m in task.quarantine[p]:
                continue
            if not task.degree_target and not loss_if_removed(task.unc[p], self.masks[m]):
                continue  # shares no under-covered topic: useless link
            target = m
            break
        if target < 0:
            target = self._next_node(task, p)
        if target < 0:
            return
        task.pending[p].add(target)
        self._send(CONNECT, ti, p, target)

    def _next_node(self, task: _Task, p: int) -> int:
        """NEXTGREEDYCOVERAGENODE / NEXTRANDOMCOVERAGENODE / similarity / random."""
        target = task.unc[p] if task.mode in (GREEDY, RANDOM_COVER) else self.masks[p]
        if self.online is None and (self.implicit_view or (self.bit_index and self.full_view)):
            return self._next_node_bits(task, p, target)
        self._stamp += 1
        stamp = self._stamp
        mark = self._mark
        mark[p] = stamp
        for s in (task.nbrs[p], task.pending[p], task.quarantine[p]):
            for q in s:
                mark[q] = stamp
        if self.online is not None:  # churn: full membership of the nodes online now
            view, full = self._online_ids, False
        else:
            view, full = (self._empty_view, True) if self.full_view else (self.views[p], False)
        return int(
            pick_candidate(
                task.mode,
                self.masks,
                target,
                view,
                full,
                self.n,
                mark,
                stamp,
                self._uniform(),
                self._keys,
                self.ties,
            )
        )

    def _next_node_bits(self, task: _Task, p: int, target: np.ndarray) -> int:
        """:meth:`_next_node` of a static full-view build, scored 64 candidates a word
        (or of an implicit partial view: the same scores, filtered by ``p``'s view)."""
        if self._bits is None:
            self._bits = topic_bitsets(self.n, self.inst.n_topics, self.sub_indptr, self.sub_topics)
            rows = bit_scratch_rows(int(self.inst.n_subs.max(initial=1)))
            self._scratch = np.zeros((rows, self._bits.shape[1]), dtype=np.uint64)
        marked = np.fromiter(
            itertools.chain((p,), task.nbrs[p], task.pending[p], task.quarantine[p]),
            dtype=np.int64,
        )
        return int(
            pick_candidate_bits(
                task.mode,
                self._bits,
                target,
                self.n,
                marked,
                self._uniform(),
                self.ties,
                self._scratch,
                p if self.implicit_view else -1,
                self.view_key,
                self.view_threshold,
            )
        )

    def _disconnect(self, ti: int, p: int, make_room: bool = False) -> None:
        """DISCONNECT (Figure 2, lines 25-35) with DISCONNECTCANDIDATE (Figure 3).

        A *saturated* node — under-covered with ``L^max`` links or more — that
        Figure 2 cannot help (``make_room``: exactly ``L^max``; or above it with
        no neighbour above its target to send to) asks a neighbour that gives it
        nothing it needs: none of its topics is uncovered or exactly covered for
        ``p``.  Neighbours above their target come first (see the module notes).
        """
        task = self.tasks[ti]
        self._set_deg_target(ti, p, L=int(min(task.lmax[p], task.deg[p])))
        asked = task.asked[p]
        if make_room:
            self._ask_useless(ti, p)
            return
        over = int(task.deg[p] - task.L[p])
        best: list[int] = []
        u_min = None
        deg, tgt, live = task.deg, task.L, self.heartbeat <= 0
        for q in sorted(task.nbrs[p]):
            if q in asked:
                continue
            if live:
                if not deg[q] > tgt[q]:
                    continue
            elif not self._high(task, p, q):
                continue
            u = self._uncovered_without(task, p, q)
            if u_min is None or u < u_min:
                best, u_min = [q], u
            elif u == u_min:
                best.append(q)
        if best:
            m = best[int(self._uniform() * len(best)) % len(best)]
            if over > 0 or u_min == 0:
                self._ask(ti, p, m)
                return
        if task.uc[p] > 0 and task.deg[p] >= task.lmax[p]:
            self._ask_useless(ti, p)

    def _ask_useless(self, ti: int, p: int) -> None:
        """Saturated ``p`` asks a random neighbour it does not need (high-degree ones first)."""
        task = self.tasks[ti]
        need = task.unc[p] | task.atk[p]
        pool: list[int] = []
        high: list[int] = []
        for q in sorted(task.nbrs[p]):
            if q in task.asked[p] or loss_if_removed(need, self.masks[q]) > 0:
                continue
            pool.append(q)
            if self._high(task, p, q):
                high.append(q)
        pool = high or pool
        if pool:
            self._ask(ti, p, pool[int(self._uniform() * len(pool)) % len(pool)])

    def _ask(self, ti: int, p: int, m: int) -> None:
        """Send DISCONNECT to ``m`` and look again next iteration (``m`` may refuse).

        A refusal is silent (Figure 4, line 23), and the paper's loop simply
        tries DISCONNECTCANDIDATE again at its next iteration; a node remembers
        whom it asked until its links or their state change, so the retries
        end when every candidate has refused.
        """
        self.tasks[ti].asked[p].add(m)
        self._send(DISCONNECT, ti, p, m)
        self._wake(ti, p)

    def _adapt(self, ti: int, p: int, saturated: bool = False) -> None:
        """Adaptive K_r (section 3.3.1): raise K_r while the node looks too narrow.

        Called when a task is covered, or saturated (under-covered at ``L^max``).
        A node whose greedy task ends covered with degree ``K_g``, or saturated
        (it will never be greedily covered, so the paper's check never runs),
        starts random coverage with ``K_r = 1``.
        """
        if len(self.tasks) < 2 or not self.tasks[1].spec.adaptive_random:
            return
        g, r = self.tasks[0], self.tasks[1]
        if ti == 1 and saturated:
            return
        if ti == 0 and saturated and r.k[p] == 0:
            self.adapt_started[p] = True
            r.set_k(p, 1, self.sub_indptr, self.sub_topics)
            self._wake(1, p)
        elif ti == 0 and not self.adapt_started[p]:
            self.adapt_started[p] = True
            if g.deg[p] <= g.k[p] and r.k[p] == 0:
                r.set_k(p, 1, self.sub_indptr, self.sub_topics)
                self._wake(1, p)
        elif ti == 1 and r.k[p] >= 1 and r.uc[p] == 0:
            degree = len(g.nbrs[p] | r.nbrs[p])
            if degree < self.inst.n_subs[p] and r.k[p] < 3:
                r.set_k(p, int(r.k[p]) + 1, self.sub_indptr, self.sub_topics)
                self._wake(1, p)

    # ------------------------------------------------------------ handlers
    def _receive(
        self, kind: int, ti: int, src: int, dst: int, payload: tuple[int, int, int]
    ) -> None:
        task = self.tasks[ti]
        p, n = dst, src
        arg, n_deg, n_tgt = payload
        if self.online is not None and not (self.online[p] and (self.online[n] or kind == LEAVE)):
            self._lost(kind, ti, n, p)
            return
        if kind == HEARTBEAT:
            if n in task.nbrs[p]:
                old = task.info[p].get(n)
                task.info[p][n] = (n_deg, n_tgt)
                if old is None or (old[0] > old[1]) != (n_deg > n_tgt):
                    task.asked[p].discard(n)
                    self._wake(ti, p)
            return
        if kind == CONNECT:  # Figure 4, lines 1-9; Margin only once covered (Figure 1)
            if n in task.nbrs[p]:
                self._send(CONNECT_OK, ti, p, n)
            elif task.deg[p] < task.lmax[p] + (self.margin if task.uc[p] == 0 else 0):
                self._add(ti, p, n, (n_deg, n_tgt))
                self._send(CONNECT_OK, ti, p, n)
                self._raise_after_accept(ti, task, p)
            else:
                m = self._redirect_candidate(task, p, n)
                self._send(REDIRECT, ti, p, n, m)
        elif kind == CONNECT_OK:  # lines 12-18
            task.pending[p].discard(n)
            if n in task.nbrs[p]:
                return
            if task.deg[p] < task.lmax[p] + self.margin:
                self._add(ti, p, n, (n_deg, n_tgt))
                self._raise_after_accept(ti, task, p)
            else:
                self._send(LEAVE, ti, p, n)
        elif kind == REDIRECT:  # lines 10-11, plus quarantine of the rejecting node
            task.pending[p].discard(n)
            task.quarantine[p].add(n)
            if arg >= 0:
                task.redirect[p].append(arg)
            self._wake(ti, p)
        elif kind == LEAVE:  # lines 19-20
            task.pending[p].discard(n)
            self._remove(ti, p, n)
        elif kind == DISCONNECT:  # lines 21-27
            if n not in task.nbrs[p]:
                self._send(DISCONNECT_OK, ti, p, n)
                return
            under = self._uncovered_without(task, p, n)
            if task.deg[p] > task.L[p] or under == 0:
                self._remove(ti, p, n)
                self._send(DISCONNECT_OK, ti, p, n)
                if under == 0:
                    self._set_deg_target(ti, p, L=int(task.deg[p]))
        elif kind == DISCONNECT_OK:  # line 28
            self._remove(ti, p, n)

    def _int_masks(self) -> list[int]:
        """Every node's interest as one Python integer (bit ``t`` = topic ``t``), made on first use.

        Scoring a few dozen neighbours from Python, ``(a & b).bit_count()`` on
        integers costs a fraction of a numpy call per neighbour.
        """
        if self._ints is None:
            self._ints = [int.from_bytes(row.tobytes(), "little") for row in self.masks]
        return self._ints

    def _redirect_candidate(self, task: _Task, p: int, n: int) -> int:
        """Figure 4, lines 7-8: the neighbour below target+Margin sharing most interest with n.

        Ties follow the same rule as the argmax selections (``ties``).
        """
        best: list[int] = []
        best_s = -1
        ints = self._int_masks()
        mask_n = ints[n]
        for q in sorted(task.nbrs[p]):
            if q == n:
                continue
            q_deg, q_tgt = self._view_of(task, p, q)
            if not q_deg < q_tgt + self.margin:
                continue
            s = (ints[q] & mask_n).bit_count()
            if s > best_s:
                best, best_s = [q], s
            elif s == best_s:
                if self.ties == TIES_SEQUENTIAL:
                    if self._uniform() < 0.5:
                        best = [q]
                else:
                    best.append(q)
        if not best:
            return -1
        return best[int(self._uniform() * len(best)) % len(best)]

    # ------------------------------------------------------------ churn
    def start(self, online: np.ndarray) -> None:
        """Switch to a dynamic run (section 3.8) with every node offline.

        From here on only online nodes take part: the interest view of a node
        is every node online at the moment it chooses (the paper's dynamic runs
        assume full membership), messages to or from a node that is offline
        when they arrive are lost, and subscriptions may change at each join,
        so the engine works on its own copies of them.  ``online`` marks the
        nodes that :meth:`join` at time 0; call :meth:`run_until` to advance.
        """
        if not self.full_view:
            raise ValueError("a dynamic run uses full membership of the online nodes")
        self.online = np.zeros(self.n, dtype=bool)
        self._online_ids = np.zeros(0, dtype=np.int64)
        self.masks = np.array(self.masks, copy=True)
        self.sub_topics = np.array(self.sub_topics, copy=True)
        self.lost_messages = 0
        for p in np.flatnonzero(np.asarray(online, dtype=bool)):
            self.join(int(p))

    def join(self, p: int, topics: np.ndarray | None = None) -> None:
        """Node ``p`` comes online with no links (and the new ``topics``, if given).

        The new subscription list must have the node's old length.  The node
        starts its tasks at its next iteration tick.
        """
        if self.online is None:
            raise ValueError("call start() before join()")
        if self.online[p]:
            raise ValueError(f"node {p} is already online")
        if topics is not None:
            lo, hi = int(self.sub_indptr[p]), int(self.sub_indptr[p + 1])
            new = np.unique(np.asarray(topics, dtype=np.int64))
            if len(new) != hi - lo:
                raise ValueError(f"node {p} needs {hi - lo} distinct topics, got {len(topics)}")
            self.sub_topics[lo:hi] = new
            self.masks[p] = pack_sets(np.array([0, len(new)]), new, self.inst.n_topics)[0]
            if self._ints is not None:
                self._ints[p] = int.from_bytes(self.masks[p].tobytes(), "little")
        self.online[p] = True
        self._online_ids = np.insert(
            self._online_ids, np.searchsorted(self._online_ids, p), np.int64(p)
        )
        self.adapt_started[p] = False
        for ti, task in enumerate(self.tasks):
            task.forget(p)
            k = int(task.spec.k)
            task.k[p] = k
            task.lmax[p] = k * (1 if task.degree_target else int(task.subs[p]))
            task.L[p] = task.lmax[p]
            if task.degree_target:
                task.uc[p] = k
            elif k > 0:
                reset_row(
                    p, k, self.sub_indptr, self.sub_topics, task.cov, task.unc, task.atk, task.uc
                )
            else:
                task.unc[p] = 0
                task.atk[p] = 0
                task.uc[p] = 0
            self._wake(ti, p)

    def leave(self, p: int) -> None:
        """Orderly leave (section 2.4): LEAVE to every neighbour, then forget everything."""
        if self.online is None or not self.online[p]:
            raise ValueError(f"node {p} is not online")
        for ti, task in enumerate(self.tasks):
            for q in sorted(task.nbrs[p]):
                self._send(LEAVE, ti, p, q)
            task.forget(p)
        self.online[p] = False
        i = int(np.searchsorted(self._online_ids, p))
        self._online_ids = np.delete(self._online_ids, i)

    def _lost(self, kind: int, ti: int, src: int, dst: int) -> None:
        """A message met an offline node; the live end suspects the other one.

        To an offline receiver: the sender learns of it one latency later (a
        refused or timed-out connection).  From a sender that left meanwhile:
        the receiver drops any request it still had pending with it.
        """
        self.lost_messages += 1
        assert self.online is not None, "messages are lost only under churn"
        if not self.online[dst]:
            if self.online[src] and kind not in (LEAVE, HEARTBEAT):
                self.sim.schedule(self._latency(dst, src), self._suspect, ti, src, dst)
        else:
            self._suspect(ti, dst, src)

    def _suspect(self, ti: int, p: int, q: int) -> None:
        """FAILUREDETECTIONSUSPECT (Figure 4, lines 29-30): ``q`` is gone."""
        assert self.online is not None, "suspicions arise only under churn"
        if not self.online[p] or self.online[q]:
            return
        task = self.tasks[ti]
        if q in task.pending[p]:
            task.pending[p].discard(q)
            self._wake(ti, p)
        if q in task.nbrs[p]:
            self._remove(ti, p, q)

    def run_until(self, time: float) -> None:
        """Advance the simulation to ``time`` (``connect_timeout`` units)."""
        with _collector_paused():
            self.sim.run(until=time)

    # ------------------------------------------------------------ read-outs
    @property
    def control_messages(self) -> int:
        """Control messages sent so far (every kind but heartbeats)."""
        return int(self.sent.sum())

    def undercovered(self) -> np.ndarray:
        """Bool mask of the nodes with a task under-covered (online ones only, under churn)."""
        under = np.zeros(self.n, dtype=bool)
        for task in self.tasks:
            under |= (np.asarray(task.uc) > 0) & (np.asarray(task.k) > 0)
        if self.online is not None:
            under &= self.online
        return under

    def subscriptions(self) -> Instance:
        """The current interests of all nodes (under churn a rejoined node has new ones)."""
        if self.online is None:
            return self.inst
        return Instance(
            self.n,
            self.inst.n_topics,
            self.sub_indptr,
            np.array(self.sub_topics, copy=True),
            topic_rates=self.inst.topic_rates,
        )

    # ------------------------------------------------------------ running
    def is_covered(self, p: int) -> bool:
        """Whether node ``p`` has every task covered (or switched off)."""
        return all(t.uc[p] == 0 or t.k[p] <= 0 for t in self.tasks)

    def covered_nodes(self) -> int:
        """Nodes with every task satisfied."""
        ok = np.ones(self.n, dtype=bool)
        for t in self.tasks:
            ok &= (t.uc == 0) | (np.asarray(t.k) == 0)
        return int(ok.sum())

    def run(self, progress: Callable[[int, int], None] | None = None) -> dict:
        """Start every node's tasks and run to quiescence (or ``max_rounds``)."""
        start = self.rng.random(self.n) * self.join_window
        for ti, task in enumerate(self.tasks):
            for p in range(self.n):
                if task.k[p] > 0:
                    task.scheduled[p] = True
                    self.sim.schedule_at(start[p] + self.phase[p], self._iterate, ti, p)
        quiescent = True
        with _collector_paused():
            while self.sim.pending:
                self.sim.run(until=self.max_rounds, max_events=20000)
                if progress is not None:
                    progress(self.covered_nodes(), self.n)
                if self.sim.now >= self.max_rounds and self.sim.pending:
                    quiescent = False
                    break
        return {
            "control_messages": int(self.sent.sum()),
            "messages": {name: int(c) for name, c in zip(MESSAGE_NAMES, self.sent, strict=True)},
            "rounds": float(self.sim.now),
            "events": int(self.sim.events_run),
            "heartbeats": int(self.heartbeats),
            "quiescent": quiescent,
            "covered_nodes": self.covered_nodes(),
            "asymmetric_links": self.asymmetric_links(),
        }

    def asymmetric_links(self) -> int:
        """Half-links ``p -> q`` whose reverse ``q -> p`` is missing in the same task."""
        bad = 0
        for task in self.tasks:
            for p, s in enumerate(task.nbrs):
                for q in s:
                    if p not in task.nbrs[q]:
                        bad += 1
        return bad

    def overlay(self) -> Overlay:
        """The union of all tasks' neighbour sets (duplicate links merged)."""
        ov = Overlay(self.n)
        for task in self.tasks:
            for p, s in enumerate(task.nbrs):
                for q in s:
                    if p < q or p not in task.nbrs[q]:
                        ov.add_edge(p, q)
        return ov


def make_engine(
    instance: Instance,
    tasks: list[TaskSpec],
    margin: int,
    membership: float,
    heartbeat: float,
    max_rounds: float,
    streams: RngStreams,
    *,
    raise_target: bool = False,
    ties: str = "sequential",
    sim: Simulator | None = None,
    view: str = "stored",
) -> Maintenance:
    """A :class:`Maintenance` drawing from the ``"maintenance"`` stream, on ``sim`` if given
    (implicit views keyed from the ``"interest-view"`` stream)."""
    key = int(streams.stream("interest-view").integers(0, 2**63 - 1)) if view == "implicit" else 0
    return Maintenance(
        instance,
        tasks,
        margin=margin,
        rng=streams.stream("maintenance"),
        membership=membership,
        view=view,
        view_key=key,
        heartbeat=heartbeat,
        raise_target=raise_target,
        ties=ties,
        max_rounds=max_rounds,
        sim=sim,
    )


def run_engine(
    engine: Maintenance, progress: bool | Callable[[int, int], None] | None, label: str
) -> tuple[Overlay, dict[str, Any]]:
    """Run a static build to quiescence; return ``(overlay, stats)``.

    Parameters
    ----------
    engine : Maintenance
        A configured engine, not yet run.
    progress : bool or callable or None
        A callable is called as ``progress(covered_nodes, n)`` while the build
        runs.  ``True`` draws the package's progress bar, titled ``label``
        (the bar is looked up only then: the protocols do not depend on the
        user interface); ``False`` or ``None``: nothing.
    label : str
        The protocol's name, for the bar.
    """
    if callable(progress) or not progress:
        stats = engine.run(progress=progress or None)
    else:
        from hedgerow.progress import build_progress

        with build_progress(label, engine.n, enabled=True) as update:
            stats = engine.run(progress=update)
    stats["kr_final_mean"] = float(np.mean(engine.tasks[1].k)) if len(engine.tasks) > 1 else 0.0
    return engine.overlay(), stats
