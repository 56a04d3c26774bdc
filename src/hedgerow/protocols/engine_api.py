"""The interfaces a churn scenario drives: what maintained and cycle-driven protocols offer.

A third shape, :class:`ClockEngine`, is a protocol that acts on the clock
(GossipSub's heartbeats): data copies, heartbeats and control messages of a
whole run in one discrete-event simulation on a contended network.

Two protocol shapes run under churn, each behind one interface here:
:class:`ChurnEngine` (event-driven, a maintained overlay on the scenario's
event core) and :class:`CycleEngine` (cycle-driven gossip, PeerSim's
``CDProtocol``: one period for every online node per :meth:`CycleEngine.cycle`).

A protocol whose overlay is *maintained* — kept by nodes that react to joins
and leaves, as SpiderCast's message-passing engine does — hands a churn
scenario an engine through ``proto.maintenance_engine(instance, streams,
sim=sim)``.  The scenario (:mod:`hedgerow.scenarios.churn`) and its observers
(:mod:`hedgerow.scenarios.observers`) use only the members below, so any
protocol whose engine has them runs under churn unchanged.

The scenario creates the event core and hands it in: controls and observers
are events on the same :class:`~hedgerow.engine.Simulator` as the protocol's
messages, so a run replays identically.  Times given to :meth:`ChurnEngine.run_until`
are in the core's units; the scenario converts seconds with
:meth:`Simulator.to_units <hedgerow.engine.Simulator.to_units>`.

:class:`hedgerow.protocols.maintenance.Maintenance` implements it (SpiderCast,
``similarity``, ``random``);
:func:`hedgerow.protocols.checks_maintained.check_maintained` checks an engine's
state after churn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from hedgerow.dissemination.contended import ContendedDelivery
from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay

__all__ = ["ChurnEngine", "ClockEngine", "CycleEngine", "Publications"]


@runtime_checkable
class ChurnEngine(Protocol):
    """A maintained overlay that nodes join and leave while it runs.

    Attributes
    ----------
    n : int
        Number of nodes, online or not.
    online : numpy.ndarray
        Bool mask of the nodes online now (set by :meth:`start`).
    sim : hedgerow.engine.Simulator
        The event core the engine runs on, created and handed in by the scenario.

    Arguments of the methods are positional (implementations name them freely).
    """

    n: int
    online: np.ndarray
    sim: Simulator

    @property
    def control_messages(self) -> int:
        """Control messages sent so far, all kinds together (keep-alives excluded)."""
        ...

    @property
    def lost_messages(self) -> int:
        """Messages so far that met an offline node (at either end) and were dropped."""
        ...

    def start(self, online0: np.ndarray, /) -> None:
        """Begin the churn run: every node offline, then the nodes of ``online0`` join."""
        ...

    def join(self, p: int, topics: np.ndarray | None = None, /) -> None:
        """Node ``p`` comes online with no links and, if given, new ``topics`` (same count)."""
        ...

    def leave(self, p: int, /) -> None:
        """Node ``p`` leaves in order (it tells its neighbours) and forgets all its state."""
        ...

    def run_until(self, t: float, /) -> None:
        """Run the event core up to time ``t``, in the core's units."""
        ...

    def is_covered(self, p: int, /) -> bool:
        """Whether node ``p`` has reached its protocol's goal (e.g. every topic K-covered)."""
        ...

    def overlay(self) -> Overlay:
        """The links now, on all ``n`` nodes (a link to a node that just left may linger)."""
        ...

    def undercovered(self) -> np.ndarray:
        """Bool mask of the online nodes that have not reached their goal (:meth:`is_covered`)."""
        ...

    def subscriptions(self) -> Instance:
        """The current interests of all ``n`` nodes (a rejoining node may have new topics)."""
        ...


@runtime_checkable
class CycleEngine(Protocol):
    """A cycle-driven gossip overlay that nodes join and leave between cycles.

    Returned by :meth:`CycleProtocol.cycle_engine
    <hedgerow.protocols.base.CycleProtocol.cycle_engine>` (Vitis, RVR) and run by
    :func:`hedgerow.scenarios.gossip_churn.run_gossip_churn`.  One cycle is one
    gossip period ``delta t`` for every online node (peer sampling, overlay
    construction, the protocol's own exchange); joins and leaves come between
    cycles, in the control's order.

    Attributes
    ----------
    n : int
        Number of nodes, online or not.

    Arguments of the methods are positional (implementations name them freely).
    """

    n: int

    @property
    def online(self) -> np.ndarray:
        """Bool mask of the nodes online now (set by :meth:`start`)."""
        ...

    def start(self, online0: np.ndarray, /) -> None:
        """Begin: the nodes of ``online0`` are online with bootstrap samples, no cycle run yet."""
        ...

    def join(self, nodes: np.ndarray, /) -> None:
        """``nodes`` (re)join with empty tables and a bootstrap sample of online nodes."""
        ...

    def leave(self, nodes: np.ndarray, /) -> None:
        """``nodes`` leave (crash): offline, their state forgotten."""
        ...

    def cycle(self) -> None:
        """One gossip period for every online node."""
        ...

    def ring_correct(self) -> float:
        """Share of online nodes whose table holds their true live successor and predecessor."""
        ...

    def link_topics(self) -> np.ndarray:
        """The forwarding links now, ``(k, 3)`` int64 rows ``(u, v, topic)`` between online
        nodes (the ``"mesh"`` policy's input)."""
        ...

    def overlay(self) -> Overlay:
        """The routing tables now as a directed overlay on all ``n`` nodes, links between
        online nodes only."""
        ...


@runtime_checkable
class ClockEngine(Protocol):
    """A protocol acting on the clock: data, heartbeats and control messages as one simulation.

    Returned by :meth:`ClockProtocol.clock_engine
    <hedgerow.protocols.base.ClockProtocol.clock_engine>` (GossipSub) with the
    run's publications scheduled, and run by the scenario's loop
    (:mod:`hedgerow.scenarios.epochs`) and the conformance checks.  Every
    message, data or control, goes over the contended network's uplinks.

    Attributes
    ----------
    n : int
        Number of nodes.
    heartbeat_ms : float
        The heartbeat period: heartbeat ``k`` runs at ``k * heartbeat_ms``, after
        every other event of that instant, so ``run_until(k * heartbeat_ms)``
        stops right after it.
    """

    n: int
    heartbeat_ms: float

    @property
    def now(self) -> float:
        """The time (ms) the engine has run to."""
        ...

    @property
    def heartbeats(self) -> int:
        """Heartbeats run so far."""
        ...

    @property
    def control_messages(self) -> int:
        """Control messages sent after the warm-up, all kinds together."""
        ...

    def run_until(self, t_ms: float, /) -> None:
        """Handle every event up to ``t_ms`` (ms)."""
        ...

    def control_sent(self) -> dict[str, np.ndarray]:
        """Control messages each node sent after the warm-up, by kind."""
        ...

    def byte_counters(self) -> dict[str, np.ndarray]:
        """Running byte and busy-time totals per node (``sent``, ``received``, ``duplicate``,
        ``control_sent``, ``control_received``, ``busy``)."""
        ...

    def delivery(self, since: dict[str, np.ndarray] | None = None, /) -> ContendedDelivery:
        """The scheduled messages' arrivals, copies and bytes (bytes counted from ``since``,
        :meth:`byte_counters` taken earlier)."""
        ...

    def overlay(self) -> Overlay:
        """The links that carry data now (a mesh's union over topics), undirected."""
        ...

    def connections_overlay(self) -> Overlay:
        """The connection graph: who may send to whom."""
        ...

    def link_topics(self) -> np.ndarray:
        """``(k, 3)`` int64 rows ``(u, v, topic)``: ``v`` in ``u``'s mesh of ``topic``."""
        ...


@dataclass(frozen=True, eq=False)
class Publications:
    """The publication schedule a :class:`ClockEngine` runs: message ``m`` published by
    ``publisher[m]`` on ``topic[m]`` at ``time_ms[m]``, ``size[m]`` payload bytes.

    Examples
    --------
    >>> p = Publications.create([0, 2], [1, 0], [5.0, 7.5], 1000)
    >>> len(p), p.size.tolist()
    (2, [1000.0, 1000.0])
    """

    publisher: np.ndarray
    topic: np.ndarray
    time_ms: np.ndarray
    size: np.ndarray

    @classmethod
    def create(
        cls, publisher: ArrayLike, topic: ArrayLike, time_ms: ArrayLike, size: ArrayLike
    ) -> Publications:
        """Checked, contiguous arrays (sizes and instants finite, non-negative)."""
        p = np.ascontiguousarray(publisher, dtype=np.int64).reshape(-1)
        t = np.ascontiguousarray(topic, dtype=np.int64).reshape(-1)
        when = np.ascontiguousarray(time_ms, dtype=np.float64).reshape(-1)
        s = np.ascontiguousarray(np.broadcast_to(np.asarray(size, dtype=np.float64),
                                                 p.shape))
        if not (len(p) == len(t) == len(when)):
            raise ParameterError("publications: publisher, topic and time need one value per "
                                 "message", key="publications")
        if not (np.isfinite(when).all() and (when >= 0).all()):
            raise ParameterError("publications: instants must be finite and >= 0 (ms)",
                                 key="publications")
        if not (np.isfinite(s).all() and (s >= 0).all()):
            raise ParameterError("publications: sizes must be finite and >= 0 (bytes)",
                                 key="publications")
        return cls(p, t, when, s)

    def __len__(self) -> int:
        return len(self.publisher)
