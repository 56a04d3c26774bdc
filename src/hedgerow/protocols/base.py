"""The protocol contract, and the capabilities a protocol declares.

Like scikit-learn estimators, protocols declare their parameters once (a
class-level ``params`` mapping of :class:`~hedgerow.params.Param`),
take them as keyword arguments, store them as given and validate them in one
place (:meth:`OverlayProtocol.checked`).  State built while running ends in
``_``.  :meth:`~OverlayProtocol.get_params`, :meth:`~OverlayProtocol.set_params`
and :meth:`~OverlayProtocol.clone` come with the base class.

What a protocol can do is declared by the capability classes it derives from
(scikit-learn's mixins), read back by :func:`capabilities`:

``static`` (:class:`StaticProtocol`)
    builds an overlay from an instance (:meth:`StaticProtocol.build`).
``adaptive`` (:class:`AdaptiveProtocol`)
    starts from out-links and, each epoch, is handed what its nodes observed
    and selects neighbours (:meth:`~AdaptiveProtocol.start`,
    :meth:`~AdaptiveProtocol.observe`, :meth:`~AdaptiveProtocol.select`); the
    epoch loop (traffic, dissemination, observations, rows) is the scenario's
    (:mod:`hedgerow.scenarios.epochs`).
``maintained`` (:class:`MaintainedProtocol`)
    keeps an overlay under churn through an engine with ``join`` / ``leave``
    (:class:`hedgerow.protocols.engine_api.ChurnEngine`); the churn driver,
    controls and observers talk to it only through that interface.
``cycle`` (:class:`CycleProtocol`)
    a cycle-driven gossip protocol (PeerSim's ``CDProtocol``): an engine
    (:class:`hedgerow.protocols.engine_api.CycleEngine`) runs one gossip
    period for every online node per :meth:`~CycleEngine.cycle` and takes
    joins and leaves between cycles (:meth:`CycleProtocol.cycle_engine`);
    the churn driver of :mod:`hedgerow.scenarios.gossip_churn` runs it.
``clock`` (:class:`ClockProtocol`)
    a protocol that acts on the clock (GossipSub's heartbeats): an engine
    (:class:`hedgerow.protocols.engine_api.ClockEngine`) built on an instance,
    a contended :class:`~hedgerow.dissemination.contended.Network`, the
    link latencies, a publication schedule and the protocol's streams runs
    data messages, its own heartbeats and control messages as one
    discrete-event simulation up to a time (:meth:`ClockProtocol.clock_engine`);
    the protocol states the bounds its state keeps after every heartbeat
    (:meth:`ClockProtocol.heartbeat_bounds`).

Tags every protocol declares: ``claims_topic_connected`` (every topic
subgraph connected, without churn), ``directed`` (out-links chosen per node),
``forwarding`` (the dissemination policy its overlay is meant for:
``"topic"`` topic-only flooding, ``"ttl"`` Topiary's TTL rule, ``"flood"``,
``"mesh"`` per-topic links), ``labels_links`` (a static build also sets
``link_topics_``, the topics each link serves, which ``"mesh"`` needs),
``quick_params`` (cheap settings for the conformance checks), and the tags
that drivers read: ``repairs_tco``, ``repair_kind`` and ``invariant_hooks``
(what the event-by-event churn observer checks, :mod:`hedgerow.scenarios.events`)
and ``layout`` (how ``hedgerow draw`` places the nodes).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics.registry import Metric
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Param, validate_params

if TYPE_CHECKING:  # pragma: no cover
    from hedgerow.dissemination.contended import ControlBatch, Network
    from hedgerow.engine.core import Simulator
    from hedgerow.latency import LatencyModel
    from hedgerow.protocols.control import ControlRounds
    from hedgerow.protocols.engine_api import ClockEngine, CycleEngine

__all__ = [
    "CAPABILITIES",
    "AdaptiveProtocol",
    "ClockProtocol",
    "CycleProtocol",
    "EpochView",
    "MaintainedProtocol",
    "OverlayProtocol",
    "StaticProtocol",
    "capabilities",
    "protocol_streams",
]

#: the capabilities, in the order help texts list them
CAPABILITIES = ("static", "adaptive", "maintained", "cycle", "clock")


def protocol_streams(seed: int, key: str) -> RngStreams:
    """The random streams of protocol ``key`` for a run's ``seed`` (the one derivation).

    Examples
    --------
    >>> a = protocol_streams(1, "spidercast").stream("x").random()
    >>> a == RngStreams(1).child("protocol:spidercast").stream("x").random()
    True
    """
    return RngStreams(seed).child(f"protocol:{key}")


class OverlayProtocol:
    """Base class of every protocol: declared parameters, tags and validation.

    Subclasses set :attr:`name`, :attr:`paper`, :attr:`params` and their tags,
    derive from one or more capability classes, and may override
    :meth:`_check` (rules across parameters) and :meth:`_check_instance`
    (rules against an instance).
    """

    name: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    #: the declared parameters (name -> Param); the constructor takes exactly these
    params: ClassVar[Mapping[str, Param]] = {}
    #: whether the protocol promises every topic-induced subgraph connected (without churn)
    claims_topic_connected: ClassVar[bool] = False
    #: whether the overlay it builds is directed (out-links chosen by each node)
    directed: ClassVar[bool] = False
    #: the dissemination policy the overlay is meant for (``hedgerow.dissemination.POLICIES``)
    forwarding: ClassVar[str] = "topic"
    #: whether a build labels its links with the topics they serve (``link_topics_``: ``(k, 3)``
    #: int64 rows ``(u, v, topic)``, ``u -> v`` a link of the overlay, ``-1`` = every topic);
    #: the ``"mesh"`` policy needs them
    labels_links: ClassVar[bool] = False
    #: name of the protocol's random streams (default :attr:`name`)
    stream_key: ClassVar[str] = ""
    #: cheap parameter values for the conformance checks
    quick_params: ClassVar[Mapping[str, Any]] = {}
    #: a setting the user can try when a topic-connected promise is broken (warnings)
    connectivity_hint: ClassVar[str] = ""
    #: whether a maintained engine repairs toward a topic-connected overlay (TCO) after every
    #: join and leave, so the event-by-event churn observer checks the TCO invariants
    repairs_tco: ClassVar[bool] = False
    #: with ``repairs_tco``: the repair family the observer checks (e.g. ``"greedy"``)
    repair_kind: ClassVar[str | None] = None
    #: extra invariant checks of the event-by-event churn observer
    #: (:class:`~hedgerow.scenarios.invariants.InvariantObserver` hooks)
    invariant_hooks: ClassVar[tuple[Any, ...]] = ()
    #: how ``hedgerow draw`` places the nodes: ``"ring"`` on a circle by node id, ``""`` by
    #: the world (geography, plane or circle)
    layout: ClassVar[str] = ""
    #: the metric columns only this protocol's rows carry, beyond
    #: :data:`hedgerow.metrics.registry.METRICS` (column name -> ``Metric``; a build
    #: statistic ``links`` is declared with ``statistics(links=...)``, giving ``stat_links``);
    #: spec checks and ``hedgerow report`` read them through
    #: :func:`hedgerow.protocols.known_metrics`
    metrics: ClassVar[Mapping[str, Metric]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.params = {k: p.bind(k) for k, p in dict(cls.params).items()}
        for key, m in dict(cls.metrics).items():
            if not isinstance(m, Metric) or m.name != key:
                raise TypeError(f"{cls.__name__}.metrics[{key!r}] must be a "
                                f"hedgerow.metrics.registry.Metric named {key!r}")

    def __init__(self, **params: Any) -> None:
        for k, p in self.params.items():
            setattr(self, k, p.default)
        self.set_params(**params)

    # ------------------------------------------------------------- params
    @classmethod
    def _param_names(cls) -> list[str]:
        return list(cls.params)

    def get_params(self) -> dict[str, Any]:
        """The declared parameters and their current values."""
        return {k: getattr(self, k) for k in self.params}

    def set_params(self, **params: Any) -> OverlayProtocol:
        """Set parameters by name; an unknown name raises :class:`ParameterError`."""
        for k, v in params.items():
            if k not in self.params:
                allowed = ", ".join(self.params) or "(none)"
                raise ParameterError(
                    f"{self.name}: unknown parameter {k!r}; allowed: {allowed}", key=k
                )
            setattr(self, k, v)
        return self

    def clone(self) -> OverlayProtocol:
        """A fresh, unbuilt protocol with the same parameters."""
        return type(self)(**self.get_params())

    def checked(self) -> dict[str, Any]:
        """Every parameter validated and coerced (type, range, choices, cross rules).

        Raises :class:`ParameterError` naming the protocol and the parameter.
        """
        values = validate_params(self.name, self.params, self.get_params())
        self._check(values)
        return values

    def _check(self, values: dict[str, Any]) -> None:
        """Rules across parameters; raise :class:`ParameterError`."""

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        """Rules against an instance (e.g. a degree below the number of nodes)."""

    def check_params(self) -> None:
        """Check the parameters alone (no instance needed)."""
        self.checked()

    def _validate(self, instance: Instance) -> dict[str, Any]:
        """Check the parameters against ``instance``; returns the validated values."""
        if not isinstance(instance, Instance):
            raise ParameterError(
                f"{self.name}: instance must be a hedgerow Instance, got {type(instance).__name__}"
            )
        values = self.checked()
        self._check_instance(values, instance)
        return values

    def streams(self, seed: int) -> RngStreams:
        """This protocol's random streams for ``seed``."""
        return protocol_streams(seed, self.stream_key or self.name)

    def degree_bound(self, instance: Instance) -> int | np.ndarray | None:
        """Declared per-node maximum degree (out-degree when directed), or ``None``."""
        return None

    def control_traffic(self, rounds: ControlRounds) -> ControlBatch | None:
        """The control messages the protocol sends during one epoch, or ``None`` (none).

        Asked by the epoch loop on a contended world whose ``control_size`` is
        above 0, after the build (static protocols) or before the epoch's
        dissemination (adaptive ones); the messages carry *entries*, which the
        world turns into bytes (:mod:`hedgerow.protocols.control`,
        ``docs/network.md``).  The default sends nothing beyond the data:
        Topiary, Goldfish, Perigee and the static baselines keep it.

        Examples
        --------
        >>> import numpy as np
        >>> from hedgerow.protocols import get_protocol
        >>> from hedgerow.protocols.control import ControlRounds
        >>> get_protocol("perigee").control_traffic(
        ...     ControlRounds(1000.0, 0.0, np.random.default_rng(0))) is None
        True
        """
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class StaticProtocol(OverlayProtocol, ABC):
    """Capability ``static``: builds an overlay from an instance."""

    def build(self, instance: Instance, *, seed: int = 0, progress: Any = None) -> Overlay:
        """Build the overlay for ``instance``; sets ``overlay_`` and ``stats_``.

        ``progress`` is ``None`` or a callable ``progress(done, total)``.
        """
        self._validate(instance)
        overlay, stats = self._build(instance, self.streams(seed), progress=progress)
        self.overlay_ = overlay
        self.stats_ = stats
        return overlay

    @abstractmethod
    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        """Build and return ``(overlay, stats)``; ``stats`` holds plain values."""


@dataclass
class EpochView:
    """One chunk of an epoch's messages as every node observed them.

    Attributes
    ----------
    sel : numpy.ndarray
        ``(m,)`` indices of the chunk's messages in the epoch.
    publisher, topic : numpy.ndarray
        ``(m,)`` publisher and topic of each message of the chunk.
    arrival : numpy.ndarray
        ``(m, n)`` first arrival at every node (ms, ``inf`` = never).
    edge_recv : numpy.ndarray
        ``(m, nnz')`` arrival of the copy sent along each CSR entry of the
        graph the chunk used (``inf`` = no copy).
    slot_entry : numpy.ndarray
        ``(n, d)`` for node ``v`` and out-slot ``j``, the column of
        ``edge_recv`` holding the copies ``out[v, j]`` sent to ``v``
        (``-1`` for an empty slot or a link the chunk did not use).
    indptr, indices : numpy.ndarray
        The epoch's undirected CSR (full graph).
    entry_map : numpy.ndarray
        Full-graph CSR entry -> column of ``edge_recv`` (``-1`` when unused).
    """

    sel: np.ndarray
    publisher: np.ndarray
    topic: np.ndarray
    arrival: np.ndarray
    edge_recv: np.ndarray
    slot_entry: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    entry_map: np.ndarray


class AdaptiveProtocol(OverlayProtocol, ABC):
    """Capability ``adaptive``: out-links re-selected every epoch from observations.

    The scenario's epoch loop calls, per epoch: :meth:`begin_epoch`, then
    :meth:`observe` for every chunk of messages, then :meth:`select`.  Each
    node holds at most :meth:`out_degree` out-links (an ``(n, d)`` table,
    ``-1`` padded); links carry traffic both ways.
    """

    directed: ClassVar[bool] = True
    forwarding: ClassVar[str] = "ttl"
    #: bytes per pair of nodes the protocol holds beside the epoch loop's ``n x n`` ``linked``
    #: table (Perigee's kernels: a boolean table, 1; Topiary's selection: a float32 ``n x n``
    #: product, 4); the loop refuses, before its first epoch, a size whose tables and deliveries
    #: do not fit (:func:`hedgerow.workloads.memory.adaptive_bytes`)
    pair_bytes: ClassVar[int] = 0
    #: whether :meth:`select` reads the loop's ``linked`` table; a protocol that does not
    #: (Perigee, Goldfish) is handed an empty ``(0, 0)`` one and the loop skips its ``n**2``
    #: bytes (9.3 GiB at 100,000 nodes)
    needs_linked: ClassVar[bool] = True
    #: the last epoch's out-link table, set by the scenario's epoch loop
    out_: np.ndarray

    def uses_linked_table(self) -> bool:
        """Whether this run's :meth:`select` reads the loop's ``n x n`` ``linked`` table.

        :attr:`needs_linked` by default; a protocol whose parameters decide it (Topiary's
        ``exploration``) overrides this.  The epoch loop allocates the table, and counts it
        in its memory estimate, only when this is true.

        Examples
        --------
        >>> from hedgerow.protocols import get_protocol
        >>> get_protocol("perigee").uses_linked_table()
        False
        """
        return self.needs_linked

    @abstractmethod
    def out_degree(self) -> int:
        """``d``, the out-link slots of every node."""

    @abstractmethod
    def start(
        self, instance: Instance, streams: RngStreams, active: np.ndarray
    ) -> np.ndarray:
        """Epoch-0 out-links ``(n, d)`` (``-1`` padded; inactive nodes hold none)."""

    @abstractmethod
    def begin_epoch(
        self, instance: Instance, out: np.ndarray, publisher: np.ndarray, topic: np.ndarray
    ) -> Any:
        """Fresh per-epoch observation state for the epoch's messages."""

    @abstractmethod
    def observe(self, state: Any, view: EpochView) -> None:
        """Add one chunk of observations to ``state``."""

    @abstractmethod
    def select(
        self,
        state: Any,
        instance: Instance,
        out: np.ndarray,
        linked: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Next epoch's out-links and each node's score (``nan`` where it has none).

        ``linked[v, u]`` is true when ``u`` is a neighbour of ``v`` in either
        direction (an empty ``(0, 0)`` table when :meth:`uses_linked_table` is false);
        only ``active`` nodes re-select.  Random draws come from
        streams taken in :meth:`start` (the epoch loop passes none).
        """

    def degree_bound(self, instance: Instance) -> int | np.ndarray | None:
        """Out-degree bound ``d`` (incoming links are not bounded)."""
        return self.out_degree()

    def incoming_limit(self) -> int:
        """Incoming links a node accepts (0 = no limit); the churn refill respects it."""
        return 0

    def set_online(self, online: np.ndarray | None) -> None:
        """The epoch loop's churn hook: ``online`` (bool ``(n,)``) are the nodes taking part
        in the epoch that is ending; :meth:`select` must not pick any other (``None``: all)."""
        self.online_ = None if online is None else np.asarray(online, dtype=bool)

    def exploit_out(self, out: np.ndarray, adaptive: np.ndarray) -> np.ndarray:
        """The out-links that count as exploitation (``-1`` elsewhere) for broadcast metrics.

        Goldfish section V-C measures latency "using only exploitation edges":
        a protocol that keeps exploration slots returns ``out`` with those
        slots of the ``adaptive`` nodes blanked.  Default: every out-link.
        """
        return out


class MaintainedProtocol(OverlayProtocol, ABC):
    """Capability ``maintained``: an overlay kept under churn by an engine.

    :meth:`maintenance_engine` returns an object implementing
    :class:`hedgerow.protocols.engine_api.ChurnEngine` on the scenario's
    event core ``sim``.
    """

    @abstractmethod
    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> Any:
        """The configured engine (not yet started) for ``instance``."""


class CycleProtocol(OverlayProtocol, ABC):
    """Capability ``cycle``: a cycle-driven gossip protocol (PeerSim's ``CDProtocol``).

    :meth:`cycle_engine` returns an object implementing
    :class:`hedgerow.protocols.engine_api.CycleEngine`: the state of every
    node, one gossip period per :meth:`~hedgerow.protocols.engine_api.CycleEngine.cycle`,
    joins and leaves between cycles.  A static build of such a protocol is the
    same engine run for its ``cycles`` with every node online.
    """

    @abstractmethod
    def cycle_engine(self, instance: Instance, streams: RngStreams) -> CycleEngine:
        """The configured engine (not yet started) for ``instance``."""


class ClockProtocol(OverlayProtocol, ABC):
    """Capability ``clock``: a protocol that acts on the clock, with data on a contended network.

    :meth:`clock_engine` returns an object implementing
    :class:`hedgerow.protocols.engine_api.ClockEngine`: every data copy,
    heartbeat and control message of a run in one discrete-event simulation,
    run up to a time by :meth:`~hedgerow.protocols.engine_api.ClockEngine.run_until`.
    The scenario's loop (:mod:`hedgerow.scenarios.epochs`) publishes the
    epoch's messages after :meth:`warmup_time` and runs :meth:`drain_time` past
    the last publication.

    A protocol that models attackers names the attack kinds it runs in
    :attr:`attacks` (of :data:`hedgerow.scenarios.attackers.ATTACKS`); on such
    a world the loop calls :meth:`clock_engine` with ``attack=`` the world's
    :class:`~hedgerow.scenarios.attackers.AttackSetup`.  Other attack worlds
    are refused by name.
    """

    #: the attack kinds whose attackers the engine models (``clock_engine(..., attack=)``)
    attacks: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def clock_engine(
        self,
        instance: Instance,
        network: Network,
        latency: LatencyModel,
        proc: np.ndarray,
        publications: Any,
        streams: RngStreams,
    ) -> ClockEngine:
        """The engine for ``instance`` with the ``publications`` scheduled (not yet run)."""

    @abstractmethod
    def warmup_time(self) -> float:
        """Simulated time before the first publication (the protocol's state forms)."""

    @abstractmethod
    def drain_time(self) -> float:
        """Simulated time after the last publication before the run's results are read."""

    @abstractmethod
    def heartbeat_bounds(self, engine: ClockEngine) -> list[str]:
        """The bounds the engine's state breaks now, right after a heartbeat (empty: none)."""


def capabilities(proto: OverlayProtocol | type[OverlayProtocol]) -> tuple[str, ...]:
    """The capabilities a protocol (class or instance) declares, in :data:`CAPABILITIES` order.

    Examples
    --------
    >>> from hedgerow.protocols import REGISTRY
    >>> capabilities(REGISTRY["spidercast"])
    ('static', 'maintained')
    """
    cls = proto if isinstance(proto, type) else type(proto)
    found = {
        "static": issubclass(cls, StaticProtocol),
        "adaptive": issubclass(cls, AdaptiveProtocol),
        "maintained": issubclass(cls, MaintainedProtocol),
        "cycle": issubclass(cls, CycleProtocol),
        "clock": issubclass(cls, ClockProtocol),
    }
    return tuple(c for c in CAPABILITIES if found[c])


def params_doc(cls: type[OverlayProtocol]) -> Mapping[str, str]:
    """``name -> 'description (type, range, default)'`` of a protocol's parameters."""
    return {k: f"{p.doc} ({p.describe()})" for k, p in cls.params.items()}
