"""LowODA-Re and LowODA-Inc: a topic-connected overlay kept under churn by a central repair.

Paper: C. Chen, R. Vitenberg, H.-A. Jacobsen, "OMen: Overlay Mending for
Topic-based Publish/Subscribe Systems Under Churn", DEBS 2016, Table 3 and
§6.1: "LowODA-Re is the standard LowODA algorithm that disregards existing
links and builds TCO from scratch upon every churn event, LowODA-Inc is our
modification of LowODA that takes existing edges as the starting point and
incrementally repairs TCO using the LowODA rule.  In contrast to OMen, both
algorithms are applied on the complete set of nodes."  §6.5: "we construct the
initial TCO by running LowODA from scratch".

Both run the engine of :mod:`hedgerow.protocols.tco.engine` (rule ``lowoda``,
the same ρ for the initial build and every repair).

Readings chosen
---------------
1. **Repair scope (LowODA-Inc).**  On a leave of ``v`` its links go; on a join
   ``v`` arrives with none; then the engine runs on every online node from the
   current edges, with the topics that must be connected restricted to
   ``v``'s topics (only those can be broken by a leave or need a link on a
   join: any other topic's subgraph did not change).  Components are those of
   the whole current overlay, degrees whole-overlay degrees.
2. **LowODA-Re** rebuilds from no edges on the online nodes at every event;
   the links it drops and adds are both counted as messages.
3. **Rejoin.**  A rejoining node keeps its topics (a machine of the Google
   trace coming back is the same user) unless the driver hands new ones.
4. **Leaves and crashes** are the same for a central algorithm: the node's
   links are gone, the repair runs at once (no detection delay modelled).
5. **Messages** (for a central algorithm, the only traffic is telling nodes
   about their links): ``new_link`` two per added link (one per endpoint),
   ``drop_link`` two per link dropped by a rebuild; the links a departed node
   held are not counted (the failure detector's traffic, excluded as in
   OMen §6.8).
6. **Time.**  A repair completes within the event (its compute time is the
   ``repair_seconds`` of the event's row); the event core only carries the
   clock.

Examples
--------
>>> from hedgerow.model import RngStreams
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=40, topics=8, subs=3, seed=1)
>>> eng = LowODAInc(rho=2.0).maintenance_engine(inst, RngStreams(1))
>>> eng.start(np.ones(40, dtype=bool))
>>> eng.leave(3); eng.last_event["type"], int(eng.partitioned_topics())
('leave', 0)
>>> eng.join(3); int(eng.partitioned_topics())
0
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics import topic_components
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Float
from hedgerow.protocols.base import MaintainedProtocol, StaticProtocol
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.protocols.tco.static import DEFAULT_RHO

if TYPE_CHECKING:  # pragma: no cover
    from hedgerow.engine.core import Simulator

__all__ = ["LowODAInc", "LowODARe", "TcoRepairEngine"]


class TcoRepairEngine:
    """A :class:`~hedgerow.protocols.engine_api.ChurnEngine` repaired centrally after each event.

    Parameters
    ----------
    instance : Instance
        Subscriptions of all ``n`` nodes.
    rng : numpy.random.Generator
        The tie-rule stream (one draw per engine run).
    rho : float
        LowODA's ρ.
    mode : {"inc", "re"}
        Repair from the current links (LowODA-Inc) or rebuild (LowODA-Re).
    sim : Simulator, optional
        The scenario's event core (only its clock is used).

    Attributes
    ----------
    last_event : dict
        What the last join/leave did: ``type``, ``node``, ``edges_added``,
        ``edges_removed``, ``repair_seconds``, ``messages`` (by kind).
    last_added : numpy.ndarray
        ``(k, 2)`` the links the last repair added.
    """

    def __init__(self, instance: Instance, rng: np.random.Generator, rho: float, mode: str,
                 sim: Simulator | None = None) -> None:
        from hedgerow.engine.core import Simulator

        if mode not in ("inc", "re"):
            raise ParameterError(f"mode must be 'inc' or 're', got {mode!r}", key="mode")
        self.n = instance.n_nodes
        self.n_topics = instance.n_topics
        self.masks = instance.masks.copy()
        self.rng = rng
        self.rho = float(rho)
        self.mode = mode
        self.sim = sim if sim is not None else Simulator()
        self.online = np.zeros(self.n, dtype=bool)
        self._u = np.zeros(0, dtype=np.int64)
        self._v = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self.degree = np.zeros(self.n, dtype=np.int64)
        self.messages: dict[str, int] = {"new_link": 0, "drop_link": 0}
        self.last_event: dict[str, Any] = {}
        self.last_added = np.zeros((0, 2), dtype=np.int64)
        self.started = False

    # ------------------------------------------------------------ edge store
    def edges(self) -> np.ndarray:
        """``(m, 2)`` current links, ``u < v``."""
        a = self._alive
        return np.column_stack([self._u[a], self._v[a]])

    def _add(self, new: np.ndarray) -> None:
        if not len(new):
            return
        self._u = np.concatenate([self._u, new[:, 0]])
        self._v = np.concatenate([self._v, new[:, 1]])
        self._alive = np.concatenate([self._alive, np.ones(len(new), dtype=bool)])
        np.add.at(self.degree, new.ravel(), 1)
        self.messages["new_link"] += 2 * len(new)

    def _drop_node(self, p: int) -> int:
        hit = self._alive & ((self._u == p) | (self._v == p))
        k = int(hit.sum())
        np.subtract.at(self.degree, self._u[hit], 1)
        np.subtract.at(self.degree, self._v[hit], 1)
        self._alive &= ~hit
        return k

    def _compact(self) -> None:
        if len(self._alive) > 2 * max(1, int(self._alive.sum())):
            keep = self._alive
            self._u, self._v, self._alive = self._u[keep], self._v[keep], self._alive[keep]

    # ------------------------------------------------------------ repair
    def _repair(self, topics: np.ndarray | None) -> np.ndarray:
        nodes = np.flatnonzero(self.online)
        if self.mode == "re":
            dropped = int(self._alive.sum())
            self.messages["drop_link"] += 2 * dropped
            self._alive[:] = False
            self.degree[:] = 0
            self._compact()
            new = tco_augment(self.masks, nodes, np.zeros((0, 2), np.int64), rule="lowoda",
                              rho=self.rho, rng=self.rng)
        else:
            new = tco_augment(self.masks, nodes, self.edges(), rule="lowoda", rho=self.rho,
                              rng=self.rng, topics=topics, degrees=self.degree)
        self._add(new)
        return new

    def _topics(self, p: int) -> np.ndarray:
        bits = np.unpackbits(self.masks[p].view(np.uint8), bitorder="little")
        return np.flatnonzero(bits[: self.n_topics]).astype(np.int64)

    def _record(self, kind: str, p: int, removed: int, new: np.ndarray, seconds: float,
                msgs0: dict[str, int]) -> None:
        self.last_added = new
        self.last_event = {
            "type": kind,
            "node": int(p),
            "edges_added": len(new),
            "edges_removed": int(removed),
            "repair_seconds": seconds,
            "messages": {k: self.messages[k] - msgs0[k] for k in self.messages},
        }

    # ------------------------------------------------------------ ChurnEngine
    @property
    def control_messages(self) -> int:
        """Link notifications so far (reading 5)."""
        return int(sum(self.messages.values()))

    @property
    def lost_messages(self) -> int:
        """Always 0: a central repair loses nothing."""
        return 0

    def start(self, online0: np.ndarray, /) -> None:
        """The nodes of ``online0`` come online and LowODA builds their overlay from scratch."""
        online0 = np.asarray(online0, dtype=bool)
        if online0.shape != (self.n,):
            raise ParameterError(f"online0 must have {self.n} entries, got {online0.shape}")
        self.online = online0.copy()
        msgs0 = dict(self.messages)
        t0 = time.perf_counter()
        new = tco_augment(self.masks, np.flatnonzero(self.online), np.zeros((0, 2), np.int64),
                          rule="lowoda", rho=self.rho, rng=self.rng)
        self._add(new)
        self.started = True
        self._record("start", -1, 0, new, time.perf_counter() - t0, msgs0)

    def join(self, p: int, topics: np.ndarray | None = None, /) -> None:
        """Node ``p`` comes online (with new ``topics`` if given) and the overlay is repaired."""
        p = int(p)
        if self.online[p]:
            raise ParameterError(f"node {p} is already online")
        if topics is not None:
            row = np.zeros(self.masks.shape[1], dtype=np.uint64)
            t = np.asarray(topics, dtype=np.int64)
            np.bitwise_or.at(row, t >> 6, np.left_shift(np.uint64(1), (t & 63).astype(np.uint64)))
            self.masks[p] = row
        msgs0 = dict(self.messages)
        t0 = time.perf_counter()
        self.online[p] = True
        new = self._repair(self._topics(p))
        self._record("join", p, 0, new, time.perf_counter() - t0, msgs0)

    def leave(self, p: int, /) -> None:
        """Node ``p`` leaves (or crashes): its links go and the overlay is repaired."""
        p = int(p)
        if not self.online[p]:
            raise ParameterError(f"node {p} is not online")
        msgs0 = dict(self.messages)
        t0 = time.perf_counter()
        self.online[p] = False
        removed = self._drop_node(p)
        self._compact()
        new = self._repair(self._topics(p))
        self._record("leave", p, removed, new, time.perf_counter() - t0, msgs0)

    def run_until(self, t: float, /) -> None:
        """Advance the event core's clock (repairs are done within each event)."""
        self.sim.run(until=t)
        if self.sim.now < t:  # nothing scheduled: the clock still moves on
            self.sim.now = float(t)

    def overlay(self) -> Overlay:
        """The current links on all ``n`` nodes."""
        return Overlay.from_edges(self.n, self.edges())

    def _instance(self, rows: np.ndarray) -> Instance:
        from hedgerow.protocols.tco._kernels import node_topic_csr

        keep = np.ones(self.n_topics, dtype=np.bool_)
        ptr, top = node_topic_csr(self.masks, np.arange(self.n, dtype=np.int64), keep)
        counts = np.diff(ptr)
        counts[~rows] = 0
        sel = np.repeat(rows, np.diff(ptr))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return Instance(self.n, self.n_topics, indptr, top[sel])

    def subscriptions(self) -> Instance:
        """The current interests of all ``n`` nodes."""
        return self._instance(np.ones(self.n, dtype=bool))

    def _online_components(self) -> tuple[np.ndarray, Instance]:
        inst = self._instance(self.online)
        return topic_components(self.overlay(), inst), inst

    def partitioned_topics(self) -> int:
        """Topics whose online subscribers lie in more than one component."""
        comps, _ = self._online_components()
        return int((comps > 1).sum())

    def undercovered(self) -> np.ndarray:
        """Online nodes subscribed to a topic whose online subscribers are split."""
        comps, inst = self._online_components()
        bad = np.flatnonzero(comps > 1)
        out = np.zeros(self.n, dtype=bool)
        if len(bad):
            out[np.unique(inst.matrix.tocsc()[:, bad].nonzero()[0])] = True
        return out & self.online

    def is_covered(self, p: int, /) -> bool:
        """Whether ``p`` is online and none of its topics is split."""
        return bool(self.online[p] and not self.undercovered()[p])


class _TcoMaintained(StaticProtocol, MaintainedProtocol):
    mode: ClassVar[str] = ""
    claims_topic_connected: ClassVar[bool] = True
    #: a TCO after every event's repair (checked by hedgerow.scenarios.invariants)
    repairs_tco: ClassVar[bool] = True
    #: what a repair may do to existing links: "add-only" or "rebuild"
    repair_kind: ClassVar[str] = ""
    stream_key: ClassVar[str] = "tco"
    params = {
        "rho": Float(DEFAULT_RHO, "LowODA's trade-off ρ (initial build and every repair)",
                     low=1.0),
    }
    quick_params = {"rho": 2.0}

    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> TcoRepairEngine:
        """The repair engine (not yet started) for ``instance``."""
        v = self.checked()
        return TcoRepairEngine(instance, streams.stream("ties"), v["rho"], self.mode, sim=sim)

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        edges = tco_augment(instance.masks, None, np.zeros((0, 2), np.int64), rule="lowoda",
                            rho=v["rho"], rng=streams.stream("ties"))
        return Overlay.from_edges(instance.n_nodes, edges), {"control_messages": 0,
                                                            "quiescent": True}


class LowODARe(_TcoMaintained):
    """LowODA-Re: LowODA rebuilt from scratch on the online nodes at every churn event."""

    repair_kind: ClassVar[str] = "rebuild"

    name: ClassVar[str] = "lowoda-re"
    paper: ClassVar[str] = "Chen, Vitenberg, Jacobsen, DEBS 2016 (OMen), Table 3: LowODA-Re."
    mode: ClassVar[str] = "re"


class LowODAInc(_TcoMaintained):
    """LowODA-Inc: the current links kept, the overlay repaired with the LowODA rule."""

    repair_kind: ClassVar[str] = "add-only"

    name: ClassVar[str] = "lowoda-inc"
    paper: ClassVar[str] = "Chen, Vitenberg, Jacobsen, DEBS 2016 (OMen), Table 3: LowODA-Inc."
    mode: ClassVar[str] = "inc"
