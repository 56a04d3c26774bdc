"""Controls of the epoch loop: what acts on a run before (or after) each epoch.

PeerSim's split, without its globals.  The epoch loop
(:mod:`hedgerow.scenarios.epochs`) runs the protocol; *controls* change the
world around it -- who is online, which links broke, who publishes, which
relays withhold -- and *observers* (:mod:`hedgerow.scenarios.observers`) read
the finished epoch and contribute the columns of its row.  The world's
settings select both (:func:`controls_for`,
:func:`~hedgerow.scenarios.observers.observers_for`), so the loops hold no
paper-specific branch and a new attack is one control class.

A control sees one :class:`Epoch` (what the epoch runs on) and the run's
:class:`EpochRun` (what stays the same over the run).  Controls run in the
order :func:`controls_for` gives; each random draw comes from a named stream
of the run's seed, so the order of the controls changes no number.

The controls, what they do and the setting that selects them:

* :class:`OnlineChurn` (``churn``, adaptive runs): drops dead out-links, dials
  the empty slots, tells the protocol who is online;
* :class:`OnlineTraffic` (``churn``, adaptive runs): the epoch's publishers
  drawn among the online nodes;
* :class:`WorldTraffic` (every other run but a static run on a routing world,
  ``events``): the epoch's messages from :meth:`World.traffic`;
* :class:`WithholdingRelays` (``attack`` ``withhold`` or ``relay``): who holds
  an exploitation slot; under ``withhold`` those relays forward nothing.

Examples
--------
>>> from hedgerow.scenarios.world import make_world
>>> w = make_world("goldfish-churn", seed=1, epochs=3)
>>> [type(c).__name__ for c in controls_for(w, "adaptive")]
['OnlineChurn', 'OnlineTraffic']
>>> [type(c).__name__ for c in controls_for(make_world("goldfish-withhold", seed=1), "static")]
['WorldTraffic', 'WithholdingRelays']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np

from hedgerow.model.bitset import interest_matrix
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.base import AdaptiveProtocol, OverlayProtocol
from hedgerow.scenarios.attackers import RELAY_ATTACKS, withholders
from hedgerow.scenarios.epoch_churn import drop_dead, refill
from hedgerow.scenarios.world import World
from hedgerow.workloads.publishers import draw_publishers

__all__ = [
    "SHAPES",
    "Epoch",
    "EpochControl",
    "EpochRun",
    "OnlineChurn",
    "OnlineTraffic",
    "WithholdingRelays",
    "WorldTraffic",
    "controls_for",
    "run_shape",
]


#: the loops of :mod:`hedgerow.scenarios.epochs`, one per protocol shape
SHAPES = ("adaptive", "static")


def run_shape(proto: OverlayProtocol | str) -> str:
    """``"adaptive"`` or ``"static"``: which loop runs ``proto`` (a shape name passes through).

    Examples
    --------
    >>> from hedgerow.protocols import get_protocol
    >>> run_shape(get_protocol("topiary")), run_shape(get_protocol("gossipsub-split"))
    ('adaptive', 'static')
    >>> run_shape("static")
    'static'
    """
    if isinstance(proto, str):
        if proto not in SHAPES:
            raise ValueError(f"unknown run shape {proto!r}; allowed: {', '.join(SHAPES)}")
        return proto
    return "adaptive" if isinstance(proto, AdaptiveProtocol) else "static"


@dataclass
class EpochRun:
    """What stays the same over one run: the world, the protocol, the nodes that select.

    Attributes
    ----------
    world : World
        The world of the run.
    proto : OverlayProtocol
        The protocol (adaptive or built static).
    policy : str
        The dissemination policy (:func:`~hedgerow.scenarios.epochs.forwarding_policy`).
    epochs : int
        Epochs of the run (1 for a static protocol).
    selecting : numpy.ndarray
        Bool ``(n,)``: the nodes that re-select their peers (the world's active
        and adaptive nodes; a static run measures the same nodes).
    """

    world: World
    proto: OverlayProtocol
    policy: str
    epochs: int
    selecting: np.ndarray

    @property
    def shape(self) -> str:
        """``"adaptive"`` or ``"static"`` (:func:`run_shape`)."""
        return run_shape(self.proto)

    @cached_property
    def watched(self) -> np.ndarray:
        """Bool ``(n,)``: the honest selecting nodes, whose exploitation slots attacks target."""
        return self.selecting & self.world.honest

    @cached_property
    def interest(self) -> np.ndarray:
        """``(n, topics)`` bool interest matrix (made on first use: routing worlds need none)."""
        inst = self.world.instance
        return interest_matrix(inst.masks, inst.n_topics)

    def exploit(self, out: np.ndarray) -> np.ndarray:
        """The out-links of ``out`` that count as exploitation (every link of a static run)."""
        if isinstance(self.proto, AdaptiveProtocol):
            return self.proto.exploit_out(out, self.selecting)
        return out


@dataclass
class Epoch:
    """One epoch as the loop, its controls and its observers see it.

    Controls set the first group of fields before the epoch; the loop sets
    the second group; observers only read.

    Attributes
    ----------
    number : int
        The epoch (0 = an adaptive protocol's starting topology).
    out : numpy.ndarray
        ``(n, d)`` out-link table the epoch runs on (``-1`` padded; a static
        run's table of its overlay's out-links).
    selecting : numpy.ndarray
        Bool ``(n,)``: the nodes that select at the end of this epoch.
    last : bool
        The run's last epoch.
    online : numpy.ndarray or None
        Bool ``(n,)``: the nodes taking part (``None``: all).
    publisher, topic : numpy.ndarray or None
        The epoch's messages (``None``: the epoch disseminates nothing).
    silent : numpy.ndarray or None
        Bool ``(n,)``: nodes that forward nothing of the attack's topic this
        epoch (``None``: the attack's fixed silent set).
    exploit : numpy.ndarray or None
        The exploitation table an attack control read before the epoch.
    notes : dict
        Facts a control counted for an observer (e.g. churn drops).
    overlay : Overlay or None
        A static run's overlay (attackers' links included).
    indptr, indices : numpy.ndarray or None
        The undirected CSR graph the epoch ran on.
    links : tuple of numpy.ndarray or None
        ``(src, dst)`` out-links of the epoch (attackers' fixed links excluded
        for an adaptive run).
    rec : EpochDelivery or None
        The epoch's arrivals (:class:`~hedgerow.scenarios.observers.EpochDelivery`).
    new_out, score : numpy.ndarray or None
        The selection's next out-links and each node's score (adaptive runs).
    labels : EntryTopics or None
        The topics of every CSR entry when the epoch forwarded by ``mesh``.
    resend : callable or None
        ``resend(ids, on_chunk)`` sends messages ``ids`` of the epoch again exactly as the
        epoch sent them (same graph, policy, labels, silent nodes), recording the arrival on
        every link, and hands each chunk ``(sel, delivery, entry_map)`` to ``on_chunk``
        (what a trace reads; each message travels independently, so its copies are the
        epoch's).
    """

    number: int
    out: np.ndarray
    selecting: np.ndarray
    last: bool
    online: np.ndarray | None = None
    publisher: np.ndarray | None = None
    topic: np.ndarray | None = None
    silent: np.ndarray | None = None
    exploit: np.ndarray | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    overlay: Overlay | None = None
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    links: tuple[np.ndarray, np.ndarray] | None = None
    rec: Any = None
    new_out: np.ndarray | None = None
    score: np.ndarray | None = None
    labels: Any = None
    resend: Callable[[np.ndarray, Callable[..., None]], None] | None = None


class EpochControl:
    """A control: acts on the run before (and after) each epoch; the default does nothing.

    Subclasses override :meth:`start` (once, before the first epoch),
    :meth:`before` (may change the epoch's links, online nodes, messages and
    silent nodes) and :meth:`after` (after the observers read the epoch).
    """

    def start(self, run: EpochRun) -> None:
        """Prepare for ``run`` (draw schedules, open streams)."""

    def before(self, run: EpochRun, ep: Epoch) -> None:
        """Act on ``ep`` before it runs."""

    def after(self, run: EpochRun, ep: Epoch) -> None:
        """Act after the observers read ``ep``."""


class OnlineChurn(EpochControl):
    """Goldfish-world churn between epochs (:mod:`hedgerow.scenarios.epoch_churn`).

    Before each epoch: the epoch's online nodes (``World.online_schedule``),
    dead out-links dropped, empty slots of online nodes dialled (stream
    ``"churn:links"``), the protocol told who is online, only online
    selecting nodes select.  The drops and dials per node go to
    ``ep.notes`` for :class:`~hedgerow.scenarios.observers.ChurnMeasures`.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.protocols import get_protocol
    >>> from hedgerow.scenarios.world import make_world
    >>> w = make_world("goldfish-churn", seed=1, epochs=3)
    >>> g = get_protocol("goldfish", d_out=4)
    >>> run = EpochRun(w, g, "ttl", 3, w.adaptive)
    >>> c = OnlineChurn(); c.start(run)
    >>> ep = Epoch(0, np.full((100, 4), -1), w.adaptive, False)
    >>> c.before(run, ep)
    >>> int(ep.online.sum()), ep.notes["dials"].sum() == 4 * ep.online.sum()
    (100, np.True_)
    """

    def start(self, run: EpochRun) -> None:
        self.schedule = run.world.online_schedule(run.epochs)
        self.link_rng = RngStreams(run.world.seed).stream("churn:links")

    def before(self, run: EpochRun, ep: Epoch) -> None:
        assert self.schedule is not None, "a churn control in a world without churn"
        proto = cast(AdaptiveProtocol, run.proto)  # churn controls run adaptive protocols only
        online = self.schedule[ep.number]
        out, drops = drop_dead(ep.out, online)
        ep.out, dials = refill(out, online, proto.incoming_limit(), self.link_rng)
        ep.online = online
        ep.notes["drops"], ep.notes["dials"] = drops, dials
        proto.set_online(online)
        ep.selecting = ep.selecting & online


class WorldTraffic(EpochControl):
    """The epoch's messages: the next draw of :meth:`World.traffic` (stream ``"messages"``)."""

    def start(self, run: EpochRun) -> None:
        self.traffic = run.world.traffic()

    def before(self, run: EpochRun, ep: Epoch) -> None:
        ep.publisher, ep.topic = next(self.traffic)


class OnlineTraffic(EpochControl):
    """Churn worlds: publishers drawn among the epoch's online nodes (stream ``"messages"``).

    The publishing probabilities are renormalised over the online nodes
    (reading 4 of :mod:`hedgerow.scenarios.epoch_churn`); every message is on
    topic 0 (broadcast worlds).
    """

    def start(self, run: EpochRun) -> None:
        self.rng = RngStreams(run.world.seed).stream("messages")

    def before(self, run: EpochRun, ep: Epoch) -> None:
        w = run.world
        assert ep.online is not None and w.publisher_probs is not None, "the churn control ran"
        probs = np.where(ep.online, w.publisher_probs, 0.0)
        ep.publisher = draw_publishers(probs / probs.sum(), w.scenario.messages, self.rng)
        ep.topic = np.zeros(len(ep.publisher), dtype=np.int64)


class WithholdingRelays(EpochControl):
    """Fast relays that withhold while they hold an honest node's exploitation slot.

    Before each epoch the exploitation table is read (``ep.exploit``); under
    ``attack="withhold"`` the attackers holding a slot of an honest selecting
    node forward nothing this epoch (``ep.silent``,
    :func:`~hedgerow.scenarios.attackers.withholders`); under the honest
    control ``attack="relay"`` nobody is silenced.  A static overlay never
    re-selects: every link is an exploitation link, held for good.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.protocols import get_protocol
    >>> from hedgerow.scenarios.world import make_world
    >>> w = make_world("goldfish-withhold", seed=1)
    >>> run = EpochRun(w, get_protocol("random-graph"), "ttl", 1, w.adaptive)
    >>> out = np.tile(w.attack.attackers[:2], (100, 1))
    >>> ep = Epoch(0, out, w.adaptive, True)
    >>> WithholdingRelays().before(run, ep)
    >>> np.flatnonzero(ep.silent).tolist() == w.attack.attackers[:2].tolist()
    True
    """

    def before(self, run: EpochRun, ep: Epoch) -> None:
        w = run.world
        ep.exploit = run.exploit(ep.out)
        if w.attack is not None and w.attack.kind == "withhold":
            ep.silent = withholders(ep.exploit, run.watched, w.honest)


def controls_for(world: World, proto: OverlayProtocol | str) -> list[EpochControl]:
    """The controls a run of ``proto`` (or a shape name) on ``world`` takes, in order.

    The world's settings select them (module table): ``churn`` the online
    schedule and the online publishers, ``attack`` the withholding relays, the
    ``events`` of a static run whether it disseminates the epoch's traffic at
    all (routing worlds measure each event on their own).
    """
    shape = run_shape(proto)
    sc = world.scenario
    if shape == "static" and sc.events != "traffic":
        return []  # a routing world: the routing observer sends every event itself
    controls: list[EpochControl] = []
    if shape == "adaptive" and sc.churn is not None:
        controls.append(OnlineChurn())
        controls.append(OnlineTraffic())
    else:
        controls.append(WorldTraffic())
    if world.attack is not None and world.attack.kind in RELAY_ATTACKS:
        controls.append(WithholdingRelays())
    return controls
