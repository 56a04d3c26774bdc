"""GossipSub v1.1 peer scoring, vectorised over (connection, topic) slots.

The score function of the GossipSub v1.1 specification (libp2p/specs,
``pubsub/gossipsub/gossipsub-v1.1.md``, "The Score Function")::

    Score(p) = TopicCap(Σ t_i (w1 P1 + w2 P2 + w3 P3 + w3b P3b + w4 P4)) + w5 P5 + w6 P6 + w7 P7

computed by each node for each peer it is connected to.  Here a *connection*
is directed: row ``c`` is the view of node ``conn_node[c]`` (the scoring node)
of one remote peer; a *slot* is a (connection, topic) pair, which holds the
per-topic counters.  Everything is a numpy array, so one call scores every
connection of every node (``np.bincount`` over slots, no Python per slot).

The terms, as go-libp2p-pubsub (``score.go``) and the JS implementation
(``@chainsafe/libp2p-gossipsub``, ``src/score/compute-score.ts``) compute them:

* **P1**, time in mesh: ``min(mesh_time / quantum, cap)`` for a slot in the mesh;
* **P2**, first message deliveries: the counter, capped (at increment and when read);
* **P3**, mesh message deliveries: ``(threshold - counter)²`` when the counter is
  below the threshold, once the slot has been in the mesh longer than the
  activation window (``mesh_deliveries_active``), else 0;
* **P3b**, mesh failure penalty: a sticky counter, raised by the P3 deficit²
  when a slot is pruned with an active deficit;
* **P4**, invalid messages: the counter squared;
* **P5**, application-specific: a value per connection;
* **P6**, IP colocation: ``(peers of the scoring node in the remote's IP group -
  threshold)²`` when positive;
* **P7**, behaviour penalty: ``(counter - threshold)²`` when positive (the
  specification squares the counter; the implementations' threshold, 0 by
  default, gives the specification's formula).

The topic sum is capped by ``topic_score_cap`` (0 = no cap) before P5-P7 are
added.  The counters of P2, P3, P3b, P4 and P7 decay once per
``decay_interval_ms`` (:func:`decay`); a value below ``decay_to_zero`` becomes
0.  Where the two implementations differ we follow the JS one (Lodestar's, the
implementation run beside Hedgerow): P1 is the real quotient
``mesh_time / quantum`` (go-libp2p-pubsub counts whole quanta), and a prune
clears the P3 activation (go-libp2p-pubsub keeps it until the next graft).
Time in mesh is refreshed lazily, at each decay tick (:func:`refresh`), as both
implementations and the specification do; :func:`score` can also take it at
an instant (``now_ms``).

Examples
--------
One node (0) connected to two peers, one topic; the first peer has delivered
3 messages first, the second is in the mesh since 0 and has been there 4 s:

>>> tp = TopicScoreParams(topic_weight=1.0, time_in_mesh_weight=0.5, time_in_mesh_quantum_ms=1000,
...                       time_in_mesh_cap=10, first_deliveries_weight=2.0,
...                       first_deliveries_decay=0.5, first_deliveries_cap=100,
...                       mesh_deliveries_weight=0.0, mesh_failure_penalty_weight=0.0,
...                       invalid_deliveries_weight=0.0)
>>> params = PeerScoreParams(topics=(tp,), topic_score_cap=0.0, ip_colocation_factor_weight=0.0,
...                          behaviour_penalty_weight=0.0)
>>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
>>> first_delivery(c, params, np.array([0, 0, 0]))
>>> graft(c, np.array([1]), now_ms=0.0)
>>> score(c, params, now_ms=4000.0).tolist()   # 2 * 3 and 0.5 * 4
[6.0, 2.0]
>>> refresh(c, params, now_ms=4000.0)          # decay: 3 * 0.5; time in mesh now 4 s
>>> score(c, params).tolist()
[3.0, 2.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError

__all__ = [
    "PeerScoreParams",
    "PeerScoreThresholds",
    "ScoreCounters",
    "ThresholdMasks",
    "TopicScoreParams",
    "add_penalty",
    "decay",
    "decay_convergence",
    "decay_factor",
    "disconnect",
    "first_delivery",
    "graft",
    "group_median",
    "invalid_delivery",
    "ip_colocation",
    "mesh_delivery",
    "opportunistic_graft",
    "prune",
    "refresh",
    "score",
    "threshold_masks",
    "topic_scores",
]

_OWNER = "gossipsub scoring"


# --------------------------------------------------------------------------- checks
def _fail(key: str, what: str, value: Any) -> ParameterError:
    return ParameterError(f"{_OWNER}: {key} must be {what}, got {value!r}", key=key)


def _number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _fail(key, "a number", value)
    x = float(value)
    if not math.isfinite(x):
        raise _fail(key, "a finite number", value)
    return x


def _check_sign(key: str, value: Any, sign: str) -> None:
    x = _number(key, value)
    if sign == ">=0" and x < 0:
        raise _fail(key, ">= 0", value)
    if sign == "<=0" and x > 0:
        raise _fail(key, "<= 0 (a penalty)", value)
    if sign == ">0" and x <= 0:
        raise _fail(key, "> 0", value)


def _check_decay(key: str, value: Any) -> None:
    x = _number(key, value)
    if not 0.0 < x < 1.0:
        raise _fail(key, "in (0, 1)", value)


def _check_fields(obj: Any, prefix: str, rules: dict[str, str]) -> None:
    for name, rule in rules.items():
        value = getattr(obj, name)
        key = prefix + name
        if rule == "decay":
            _check_decay(key, value)
        elif rule == "unit":
            if not 0.0 <= _number(key, value) <= 1.0:
                raise _fail(key, "in [0, 1]", value)
        elif rule == "any":
            _number(key, value)
        else:
            _check_sign(key, value, rule)


# --------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class TopicScoreParams:
    """The score parameters of one topic (the specification's per-topic table).

    Durations are in milliseconds.  Defaults are the JS implementation's
    ``defaultTopicScoreParams`` (including its time-in-mesh quantum of 1 ms);
    a preset states every value (:mod:`hedgerow.protocols.gossipsub.params`).
    The constraints are the specification's and the implementations' checks:
    weights of rewards ``>= 0`` and of penalties ``<= 0``, decays in ``(0, 1)``
    and caps ``> 0`` wherever their weight is not 0 (an unused decay in
    ``[0, 1]``, an unused cap or threshold ``>= 0``), the mesh-delivery cap at
    least its threshold, an activation window of at least 1 s.

    Attributes
    ----------
    topic_weight : float
        ``t_i``, the topic's weight in the sum (``>= 0``).
    time_in_mesh_weight, time_in_mesh_quantum_ms, time_in_mesh_cap : float
        P1: weight (``>= 0``), the time worth one point, the cap of P1.
    first_deliveries_weight, first_deliveries_decay, first_deliveries_cap : float
        P2: weight (``>= 0``), decay factor, cap of the counter.
    mesh_deliveries_weight, mesh_deliveries_decay, mesh_deliveries_cap, mesh_deliveries_threshold
        P3: weight (``<= 0``), decay factor, cap and threshold of the counter.
    mesh_deliveries_window_ms : float
        How late a duplicate from a mesh peer still counts for P3 ("near-first").
    mesh_deliveries_activation_ms : float
        Time in the mesh before P3 applies.
    mesh_failure_penalty_weight, mesh_failure_penalty_decay : float
        P3b: weight (``<= 0``) and decay factor.
    invalid_deliveries_weight, invalid_deliveries_decay : float
        P4: weight (``<= 0``) and decay factor (always in ``(0, 1)``).

    Examples
    --------
    >>> TopicScoreParams(first_deliveries_decay=1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub scoring: first_deliveries_decay must be in (0, 1), ...
    >>> TopicScoreParams(mesh_deliveries_weight=0.0, mesh_deliveries_decay=0.0).topic_weight
    0.5
    """

    topic_weight: float = 0.5
    time_in_mesh_weight: float = 1.0
    time_in_mesh_quantum_ms: float = 1.0
    time_in_mesh_cap: float = 3600.0
    first_deliveries_weight: float = 1.0
    first_deliveries_decay: float = 0.5
    first_deliveries_cap: float = 2000.0
    mesh_deliveries_weight: float = -1.0
    mesh_deliveries_decay: float = 0.5
    mesh_deliveries_cap: float = 100.0
    mesh_deliveries_threshold: float = 20.0
    mesh_deliveries_window_ms: float = 10.0
    mesh_deliveries_activation_ms: float = 5000.0
    mesh_failure_penalty_weight: float = -1.0
    mesh_failure_penalty_decay: float = 0.5
    invalid_deliveries_weight: float = -1.0
    invalid_deliveries_decay: float = 0.3

    def __post_init__(self) -> None:
        self.check()

    def check(self, prefix: str = "") -> None:
        """Raise a one-line :class:`ParameterError` naming the first field that breaks a rule."""
        p = prefix
        _check_fields(self, p, {"topic_weight": ">=0", "time_in_mesh_weight": ">=0",
                                "time_in_mesh_quantum_ms": ">0",
                                "first_deliveries_weight": ">=0",
                                "mesh_deliveries_weight": "<=0",
                                "mesh_deliveries_window_ms": ">=0",
                                "mesh_deliveries_activation_ms": ">=0",
                                "mesh_failure_penalty_weight": "<=0",
                                "invalid_deliveries_weight": "<=0",
                                "invalid_deliveries_decay": "decay",
                                "time_in_mesh_cap": ">=0", "first_deliveries_decay": "unit",
                                "first_deliveries_cap": ">=0", "mesh_deliveries_decay": "unit",
                                "mesh_deliveries_cap": ">=0", "mesh_deliveries_threshold": ">=0",
                                "mesh_failure_penalty_decay": "unit"})
        if self.time_in_mesh_weight != 0:
            _check_sign(p + "time_in_mesh_cap", self.time_in_mesh_cap, ">0")
        if self.first_deliveries_weight != 0:
            _check_decay(p + "first_deliveries_decay", self.first_deliveries_decay)
            _check_sign(p + "first_deliveries_cap", self.first_deliveries_cap, ">0")
        if self.mesh_deliveries_weight != 0:
            _check_decay(p + "mesh_deliveries_decay", self.mesh_deliveries_decay)
            _check_sign(p + "mesh_deliveries_cap", self.mesh_deliveries_cap, ">0")
            _check_sign(p + "mesh_deliveries_threshold", self.mesh_deliveries_threshold, ">0")
            if self.mesh_deliveries_cap < self.mesh_deliveries_threshold:
                raise _fail(p + "mesh_deliveries_cap",
                            f">= mesh_deliveries_threshold ({self.mesh_deliveries_threshold:g})",
                            self.mesh_deliveries_cap)
            if self.mesh_deliveries_activation_ms < 1000:
                raise _fail(p + "mesh_deliveries_activation_ms", "at least 1000 ms",
                            self.mesh_deliveries_activation_ms)
        if self.mesh_failure_penalty_weight != 0:
            _check_decay(p + "mesh_failure_penalty_decay", self.mesh_failure_penalty_decay)


@dataclass(frozen=True)
class PeerScoreParams:
    """The score parameters of a node: the topics' and P5-P7, decay and retention.

    ``topics[t]`` holds topic ``t``'s parameters; a topic with ``None`` or past
    the end of ``topics`` is not scored (the specification: "if a topic is not
    configured, a peer's behavior in that topic will not contribute").
    Defaults are the JS implementation's ``defaultPeerScoreParams``; durations
    in milliseconds.

    Attributes
    ----------
    topics : tuple of TopicScoreParams or None
        The per-topic parameters by topic id.
    topic_score_cap : float
        Cap of the (weighted) topic sum, ``>= 0`` (0 = no cap).
    app_specific_weight : float
        w5 (``>= 0``; P5 itself may be negative).
    ip_colocation_factor_weight : float
        w6 (``<= 0``).
    ip_colocation_factor_threshold : int
        Peers in one IP group a node accepts before P6 applies (``>= 1``).
    behaviour_penalty_weight : float
        w7 (``<= 0``).
    behaviour_penalty_threshold : float
        P7 counts the counter's excess over this value (``>= 0``; 0 = the specification's square).
    behaviour_penalty_decay : float
        Decay of the P7 counter, in ``(0, 1)`` when w7 is not 0.
    decay_interval_ms : float
        How often counters decay (at least 1000 ms, as both implementations require).
    decay_to_zero : float
        A decayed counter below this value becomes 0, in ``(0, 1)``.
    retain_score_ms : float
        How long a disconnected peer's counters are kept (``>= 0``).

    Examples
    --------
    >>> PeerScoreParams(behaviour_penalty_weight=1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub scoring: behaviour_penalty_weight must be <= 0 ...
    >>> PeerScoreParams(topics=(None, {"topic_weight": 1.0}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub scoring: topics[1] must be a TopicScoreParams or ...
    """

    topics: tuple[TopicScoreParams | None, ...] = ()
    topic_score_cap: float = 10.0
    app_specific_weight: float = 10.0
    ip_colocation_factor_weight: float = -5.0
    ip_colocation_factor_threshold: int = 10
    behaviour_penalty_weight: float = -10.0
    behaviour_penalty_threshold: float = 0.0
    behaviour_penalty_decay: float = 0.2
    decay_interval_ms: float = 1000.0
    decay_to_zero: float = 0.1
    retain_score_ms: float = 3_600_000.0
    _table: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.topics, tuple):
            object.__setattr__(self, "topics", tuple(self.topics))
        for t, tp in enumerate(self.topics):
            if tp is not None and not isinstance(tp, TopicScoreParams):
                raise _fail(f"topics[{t}]", "a TopicScoreParams or None", tp)
            if tp is not None:
                tp.check(prefix=f"topics[{t}].")
        _check_fields(self, "", {"topic_score_cap": ">=0", "app_specific_weight": ">=0",
                                 "ip_colocation_factor_weight": "<=0",
                                 "behaviour_penalty_weight": "<=0",
                                 "behaviour_penalty_threshold": ">=0",
                                 "behaviour_penalty_decay": "unit",
                                 "decay_to_zero": "decay", "retain_score_ms": ">=0"})
        thr = self.ip_colocation_factor_threshold
        if isinstance(thr, bool) or not isinstance(thr, (int, np.integer)) or thr < 1:
            raise _fail("ip_colocation_factor_threshold", "a whole number >= 1", thr)
        if self.behaviour_penalty_weight != 0:
            _check_decay("behaviour_penalty_decay", self.behaviour_penalty_decay)
        if _number("decay_interval_ms", self.decay_interval_ms) < 1000:
            raise _fail("decay_interval_ms", "at least 1000 ms", self.decay_interval_ms)

    def topic_table(self) -> dict[str, np.ndarray]:
        """The topics' parameters as arrays by topic id, plus one row for unscored topics.

        Row ``len(topics)`` stands for every topic past the end; an unscored
        row has weights 0, decay factors 1 and quantum 1.  ``scored`` marks
        the scored rows; ``w1`` ... ``w4`` (and ``w3b``) are the term weights
        already multiplied by the topic weight.  Computed once per object.

        Examples
        --------
        >>> table = PeerScoreParams(topics=(None, TopicScoreParams(topic_weight=0.5))).topic_table()
        >>> table["scored"].tolist(), table["w2"].tolist()
        ([False, True, False], [0.0, 0.5, 0.0])
        """
        if not self._table:
            n_rows = len(self.topics) + 1
            names = [f.name for f in fields(TopicScoreParams)]
            table = {n: np.zeros(n_rows) for n in names}
            for n in names:
                if n.endswith("_decay"):
                    table[n][:] = 1.0
            table["time_in_mesh_quantum_ms"][:] = 1.0
            scored = np.zeros(n_rows, dtype=bool)
            for t, tp in enumerate(self.topics):
                if tp is None:
                    continue
                scored[t] = True
                for n in names:
                    table[n][t] = getattr(tp, n)
            table["scored"] = scored
            tw = table["topic_weight"]
            for key, name in (("w1", "time_in_mesh_weight"), ("w2", "first_deliveries_weight"),
                              ("w3", "mesh_deliveries_weight"),
                              ("w3b", "mesh_failure_penalty_weight"),
                              ("w4", "invalid_deliveries_weight")):
                table[key] = tw * table[name]
            for arr in table.values():
                arr.setflags(write=False)
            self._table.update(table)
        return self._table


@dataclass(frozen=True)
class PeerScoreThresholds:
    """The five thresholds of the specification ("Score Thresholds").

    Checked as both implementations check them: ``gossip <= 0``,
    ``publish <= gossip``, ``graylist <= publish``, ``accept_px >= 0``,
    ``opportunistic_graft >= 0``.  Defaults are the JS implementation's.

    Examples
    --------
    >>> PeerScoreThresholds(gossip=-10.0, publish=-5.0)
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub scoring: publish must be <= gossip (-10), got -5.0
    """

    gossip: float = -10.0
    publish: float = -50.0
    graylist: float = -80.0
    accept_px: float = 10.0
    opportunistic_graft: float = 20.0

    def __post_init__(self) -> None:
        _check_fields(self, "", {"gossip": "<=0", "publish": "<=0", "graylist": "<=0",
                                 "accept_px": ">=0", "opportunistic_graft": ">=0"})
        if self.publish > self.gossip:
            raise _fail("publish", f"<= gossip ({self.gossip:g})", self.publish)
        if self.graylist > self.publish:
            raise _fail("graylist", f"<= publish ({self.publish:g})", self.graylist)


# --------------------------------------------------------------------------- counters
_SLOT_FLOATS = ("graft_ms", "mesh_time_ms", "first_deliveries", "mesh_deliveries",
                "mesh_failure_penalty", "invalid_deliveries")
_CONN_FLOATS = ("behaviour_penalty", "app_score")


@dataclass(eq=False)
class ScoreCounters:
    """The counters of every slot and connection (1-D arrays, changed in place).

    Slots (one per (connection, topic) pair): ``slot_conn``, ``slot_topic``
    (int64), ``in_mesh`` and ``mesh_deliveries_active`` (bool), ``graft_ms``
    (the instant of the slot's last GRAFT), ``mesh_time_ms`` (its time in the
    mesh as of the last :func:`refresh`), ``first_deliveries``,
    ``mesh_deliveries``, ``mesh_failure_penalty``, ``invalid_deliveries``
    (float64).  Connections (row ``c`` = node ``conn_node[c]``'s view of one
    peer): ``conn_node`` (int64), ``behaviour_penalty``, ``app_score``
    (float64), ``ip_group`` (int64, the remote peer's IP group; ``-1`` = none
    shared, never colocated).

    Examples
    --------
    >>> c = ScoreCounters.empty(slot_conn=[0, 0, 1], slot_topic=[0, 1, 0], conn_node=[0, 1])
    >>> c.n_slots, c.n_conns, c.first_deliveries.dtype.name
    (3, 2, 'float64')
    >>> ScoreCounters.empty(slot_conn=[2], slot_topic=[0], conn_node=[0, 1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: gossipsub scoring: slot_conn must be connection ids ...
    """

    slot_conn: np.ndarray
    slot_topic: np.ndarray
    in_mesh: np.ndarray
    graft_ms: np.ndarray
    mesh_time_ms: np.ndarray
    first_deliveries: np.ndarray
    mesh_deliveries: np.ndarray
    mesh_deliveries_active: np.ndarray
    mesh_failure_penalty: np.ndarray
    invalid_deliveries: np.ndarray
    conn_node: np.ndarray
    behaviour_penalty: np.ndarray
    app_score: np.ndarray
    ip_group: np.ndarray

    def __post_init__(self) -> None:
        n_s, n_c = len(self.slot_conn), len(self.conn_node)
        for name in ("slot_conn", "slot_topic", "in_mesh", "mesh_deliveries_active",
                     *_SLOT_FLOATS):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.ndim != 1 or len(a) != n_s:
                raise _fail(name, f"a 1-D array over the {n_s} slots", type(a).__name__)
        for name in ("conn_node", "ip_group", *_CONN_FLOATS):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.ndim != 1 or len(a) != n_c:
                raise _fail(name, f"a 1-D array over the {n_c} connections", type(a).__name__)
        if n_s and (self.slot_conn.min() < 0 or self.slot_conn.max() >= n_c):
            bad = self.slot_conn[(self.slot_conn < 0) | (self.slot_conn >= n_c)][0]
            raise _fail("slot_conn", f"connection ids in [0, {n_c})", int(bad))
        if n_s and self.slot_topic.min() < 0:
            raise _fail("slot_topic", "topic ids >= 0", int(self.slot_topic.min()))

    @classmethod
    def empty(cls, *, slot_conn: Any, slot_topic: Any, conn_node: Any,
              ip_group: Any = None) -> ScoreCounters:
        """Counters at zero (nothing in a mesh) for the given slots and connections."""
        sc = np.asarray(slot_conn, dtype=np.int64)
        n_s, n_c = len(sc), len(np.asarray(conn_node))
        ipg = np.full(n_c, -1, np.int64) if ip_group is None else np.asarray(ip_group, np.int64)
        return cls(
            slot_conn=sc, slot_topic=np.asarray(slot_topic, dtype=np.int64),
            in_mesh=np.zeros(n_s, bool), mesh_deliveries_active=np.zeros(n_s, bool),
            **{n: np.zeros(n_s) for n in _SLOT_FLOATS},
            conn_node=np.asarray(conn_node, dtype=np.int64), ip_group=ipg,
            **{n: np.zeros(n_c) for n in _CONN_FLOATS},
        )

    @property
    def n_slots(self) -> int:
        """Number of (connection, topic) slots."""
        return len(self.slot_conn)

    @property
    def n_conns(self) -> int:
        """Number of (directed) connections."""
        return len(self.conn_node)


def _rows(params: PeerScoreParams, counters: ScoreCounters) -> np.ndarray:
    """Each slot's row of :meth:`PeerScoreParams.topic_table`."""
    return np.minimum(counters.slot_topic, len(params.topics))


# --------------------------------------------------------------------------- the score
def ip_colocation(counters: ScoreCounters, threshold: int) -> np.ndarray:
    """P6 per connection: ``(peers of the scoring node in the remote's IP group - threshold)²``.

    Examples
    --------
    Node 0 sees four peers, three of them in group 7; with a threshold of 1
    each of those three has a surplus of 2:

    >>> c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=[0, 0, 0, 0, 1],
    ...                         ip_group=[7, 7, 7, 3, 7])
    >>> ip_colocation(c, 1).tolist()
    [4.0, 4.0, 4.0, 0.0, 0.0]
    """
    g = counters.ip_group
    out = np.zeros(counters.n_conns)
    has = g >= 0
    if not has.any():
        return out
    node = counters.conn_node[has]
    key = node * (int(g[has].max()) + 1) + g[has]
    if key.max() < 4 * key.size + 1024:        # few (node, group) pairs: count directly
        per_key = np.bincount(key)[key]
    else:
        _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
        per_key = counts[inverse]
    surplus = np.maximum(per_key - threshold, 0).astype(np.float64)
    out[has] = surplus * surplus
    return out


def topic_scores(counters: ScoreCounters, params: PeerScoreParams,
                 now_ms: float | None = None) -> np.ndarray:
    """Each slot's weighted topic score ``t_i (w1 P1 + w2 P2 + w3 P3 + w3b P3b + w4 P4)``.

    ``now_ms`` as in :func:`score`.

    Examples
    --------
    P4 alone: 3 invalid messages, weight -2, topic weight 0.5 give
    ``0.5 * -2 * 3² = -9``:

    >>> tp = TopicScoreParams(topic_weight=0.5, time_in_mesh_weight=0.0,
    ...                       first_deliveries_weight=0.0, mesh_deliveries_weight=0.0,
    ...                       mesh_failure_penalty_weight=0.0, invalid_deliveries_weight=-2.0)
    >>> c = ScoreCounters.empty(slot_conn=[0], slot_topic=[0], conn_node=[0])
    >>> invalid_delivery(c, PeerScoreParams(topics=(tp,)), np.array([0, 0, 0]))
    >>> topic_scores(c, PeerScoreParams(topics=(tp,))).tolist()
    [-9.0]
    """
    tab = params.topic_table()
    row = _rows(params, counters)
    # P2 (dense: most slots that ever delivered first keep a decaying count)
    out = tab["w2"][row] * np.minimum(counters.first_deliveries, tab["first_deliveries_cap"][row])
    # the other terms over the slots where they can be non-zero (distinct indices: `+=`)
    m = np.flatnonzero(counters.in_mesh)                                        # P1
    if m.size:
        r = row[m]
        t = counters.mesh_time_ms[m] if now_ms is None else now_ms - counters.graft_ms[m]
        out[m] += tab["w1"][r] * np.minimum(t / tab["time_in_mesh_quantum_ms"][r],
                                            tab["time_in_mesh_cap"][r])
    active = counters.mesh_deliveries_active                                   # P3
    if now_ms is None:
        a = np.flatnonzero(active)
    else:
        a = np.flatnonzero(active | counters.in_mesh)
        now_active = active[a] | (now_ms - counters.graft_ms[a]
                                  > tab["mesh_deliveries_activation_ms"][row[a]])
        a = a[now_active]
    if a.size:
        r = row[a]
        deficit = np.maximum(tab["mesh_deliveries_threshold"][r] - counters.mesh_deliveries[a],
                             0.0)
        out[a] += tab["w3"][r] * deficit * deficit
    if counters.mesh_failure_penalty.any():                                    # P3b
        b = np.flatnonzero(counters.mesh_failure_penalty)
        out[b] += tab["w3b"][row[b]] * counters.mesh_failure_penalty[b]
    if counters.invalid_deliveries.any():                                      # P4
        i = np.flatnonzero(counters.invalid_deliveries)
        x = counters.invalid_deliveries[i]
        out[i] += tab["w4"][row[i]] * x * x
    return out


def score(counters: ScoreCounters, params: PeerScoreParams,
          now_ms: float | None = None) -> np.ndarray:
    """The score of every connection's remote peer (float64 over connections).

    Parameters
    ----------
    counters : ScoreCounters
        The slots' and connections' counters (read, never changed).
    params : PeerScoreParams
        The parameters.
    now_ms : float, optional
        The clock.  Given, time in mesh (P1) and the P3 activation are taken
        at this instant from ``graft_ms``, as the next :func:`refresh` would
        set them; ``None`` reads ``mesh_time_ms`` and
        ``mesh_deliveries_active`` as the last refresh left them (what the
        implementations read between their decay ticks).

    Returns
    -------
    numpy.ndarray
        ``TopicCap(Σ slots) + w5 P5 + w6 P6 + w7 P7`` per connection.

    Examples
    --------
    The topic score cap applies to the topic sum only; P5 is added after it.
    Two topics, each contributing 2 first deliveries × weight 5 = 10, capped at 15:

    >>> tp = TopicScoreParams(topic_weight=1.0, time_in_mesh_weight=0.0,
    ...                       first_deliveries_weight=5.0, mesh_deliveries_weight=0.0,
    ...                       mesh_failure_penalty_weight=0.0)
    >>> params = PeerScoreParams(topics=(tp, tp), topic_score_cap=15.0, app_specific_weight=2.0)
    >>> c = ScoreCounters.empty(slot_conn=[0, 0], slot_topic=[0, 1], conn_node=[0])
    >>> first_delivery(c, params, np.array([0, 0, 1, 1]))
    >>> c.app_score[:] = -1.0
    >>> score(c, params).tolist()   # min(20, 15) + 2 * -1
    [13.0]

    P7 is the squared excess of the behaviour counter over its threshold:
    a counter of 5, threshold 2 and weight -1 give ``-(5 - 2)² = -9``:

    >>> params = PeerScoreParams(behaviour_penalty_weight=-1.0, behaviour_penalty_threshold=2.0)
    >>> c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=[0])
    >>> add_penalty(c, np.array([0]), 5)
    >>> score(c, params).tolist()
    [-9.0]
    """
    total = np.bincount(counters.slot_conn, weights=topic_scores(counters, params, now_ms),
                        minlength=counters.n_conns)[: counters.n_conns].astype(np.float64)
    if params.topic_score_cap > 0:
        np.minimum(total, params.topic_score_cap, out=total)
    total += params.app_specific_weight * counters.app_score
    if params.ip_colocation_factor_weight != 0:
        total += params.ip_colocation_factor_weight * ip_colocation(
            counters, params.ip_colocation_factor_threshold)
    excess = np.maximum(counters.behaviour_penalty - params.behaviour_penalty_threshold, 0.0)
    total += params.behaviour_penalty_weight * excess * excess
    return total


# --------------------------------------------------------------------------- decay
def decay(counters: ScoreCounters, params: PeerScoreParams) -> None:
    """Decay the counters of P2, P3, P3b, P4 and P7 once, in place.

    Each is multiplied by its decay factor; a value that falls below
    ``decay_to_zero`` becomes 0.  Call it once per ``decay_interval_ms``
    (:func:`refresh` does, and brings time in mesh up to date).  Unscored
    topics' counters are left as they are.

    Examples
    --------
    The specification's example: 120 first deliveries with a decay of 0.97
    become 116.4; a counter of 0.1 becomes 0.097, below ``decay_to_zero = 0.1``,
    so 0; the behaviour counters decay by half:

    >>> tp = TopicScoreParams(first_deliveries_decay=0.97)
    >>> params = PeerScoreParams(topics=(tp,), behaviour_penalty_decay=0.5, decay_to_zero=0.1)
    >>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
    >>> c.first_deliveries[:] = [120.0, 0.1]
    >>> c.behaviour_penalty[:] = [0.15, 3.0]
    >>> decay(c, params)
    >>> c.first_deliveries.round(6).tolist(), c.behaviour_penalty.tolist()
    ([116.4, 0.0], [0.0, 1.5])
    """
    dz = params.decay_to_zero
    tab = params.topic_table()
    row = _rows(params, counters)
    scored = tab["scored"][row]
    for name, factor in (("first_deliveries", "first_deliveries_decay"),
                         ("mesh_deliveries", "mesh_deliveries_decay"),
                         ("mesh_failure_penalty", "mesh_failure_penalty_decay"),
                         ("invalid_deliveries", "invalid_deliveries_decay")):
        a = getattr(counters, name)
        if not a.any():
            continue
        a *= tab[factor][row]
        a[(a < dz) & scored] = 0.0
    bp = counters.behaviour_penalty
    bp *= params.behaviour_penalty_decay
    bp[bp < dz] = 0.0


def refresh(counters: ScoreCounters, params: PeerScoreParams, now_ms: float) -> None:
    """One decay tick as the implementations run it: :func:`decay`, then time in mesh.

    In-mesh slots get ``mesh_time_ms = now_ms - graft_ms`` and become
    P3-active once that exceeds the activation window (the flag stays until
    the slot is pruned or grafted again).

    Examples
    --------
    >>> tp = TopicScoreParams(mesh_deliveries_activation_ms=2000.0)
    >>> params = PeerScoreParams(topics=(tp,))
    >>> c = ScoreCounters.empty(slot_conn=[0], slot_topic=[0], conn_node=[0])
    >>> graft(c, np.array([0]), now_ms=1000.0)
    >>> refresh(c, params, now_ms=3000.0); bool(c.mesh_deliveries_active[0])
    False
    >>> refresh(c, params, now_ms=3001.0)
    >>> bool(c.mesh_deliveries_active[0]), c.mesh_time_ms.tolist()
    (True, [2001.0])
    """
    decay(counters, params)
    tab = params.topic_table()
    m = np.flatnonzero(counters.in_mesh)
    r = _rows(params, counters)[m]
    m, r = m[tab["scored"][r]], r[tab["scored"][r]]
    counters.mesh_time_ms[m] = now_ms - counters.graft_ms[m]
    counters.mesh_deliveries_active[m] |= (counters.mesh_time_ms[m]
                                           > tab["mesh_deliveries_activation_ms"][r])


# --------------------------------------------------------------------------- events
def graft(counters: ScoreCounters, slots: np.ndarray, now_ms: float) -> None:
    """Slots grafted at ``now_ms``: in the mesh, time in mesh 0, P3 not yet active.

    Examples
    --------
    >>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
    >>> graft(c, np.array([1]), now_ms=250.0)
    >>> c.in_mesh.tolist(), c.graft_ms.tolist()
    ([False, True], [0.0, 250.0])
    """
    counters.in_mesh[slots] = True
    counters.graft_ms[slots] = now_ms
    counters.mesh_time_ms[slots] = 0.0
    counters.mesh_deliveries_active[slots] = False


def prune(counters: ScoreCounters, params: PeerScoreParams, slots: np.ndarray) -> None:
    """Slots pruned (or whose peer left the mesh): the sticky P3b penalty, then out of the mesh.

    A slot pruned while its P3 is active with a deficit adds ``deficit²`` to
    its mesh failure penalty (P3b).

    Examples
    --------
    Threshold 4, 1 mesh delivery, active: the penalty grows by ``(4 - 1)² = 9``:

    >>> tp = TopicScoreParams(mesh_deliveries_threshold=4.0, mesh_deliveries_cap=10.0)
    >>> params = PeerScoreParams(topics=(tp,))
    >>> c = ScoreCounters.empty(slot_conn=[0], slot_topic=[0], conn_node=[0])
    >>> c.in_mesh[0] = c.mesh_deliveries_active[0] = True; c.mesh_deliveries[0] = 1.0
    >>> prune(c, params, np.array([0]))
    >>> c.mesh_failure_penalty.tolist(), bool(c.in_mesh[0]), bool(c.mesh_deliveries_active[0])
    ([9.0], False, False)
    """
    slots = np.unique(np.asarray(slots, dtype=np.int64))
    thr = params.topic_table()["mesh_deliveries_threshold"][_rows(params, counters)[slots]]
    md = counters.mesh_deliveries[slots]
    hit = counters.mesh_deliveries_active[slots] & (md < thr)
    deficit = np.where(hit, thr - md, 0.0)
    counters.mesh_failure_penalty[slots] += deficit * deficit
    counters.mesh_deliveries_active[slots] = False
    counters.in_mesh[slots] = False


def first_delivery(counters: ScoreCounters, params: PeerScoreParams, slots: np.ndarray) -> None:
    """First deliveries (a slot may repeat): P2's counter, and P3's where the slot is in the mesh.

    Both counters are capped at increment, as the specification states.

    Examples
    --------
    >>> tp = TopicScoreParams(first_deliveries_cap=2.0)
    >>> params = PeerScoreParams(topics=(tp,))
    >>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
    >>> c.in_mesh[1] = True
    >>> first_delivery(c, params, np.array([0, 0, 0, 1]))
    >>> c.first_deliveries.tolist(), c.mesh_deliveries.tolist()
    ([2.0, 1.0], [0.0, 1.0])
    """
    idx, k = _scored_counts(params, counters, slots)
    cap = params.topic_table()["first_deliveries_cap"][_rows(params, counters)[idx]]
    counters.first_deliveries[idx] = np.minimum(counters.first_deliveries[idx] + k, cap)
    _mesh_add(counters, params, idx, k)


def mesh_delivery(counters: ScoreCounters, params: PeerScoreParams, slots: np.ndarray) -> None:
    """Near-first deliveries (duplicates within ``mesh_deliveries_window_ms``): P3's counter only.

    Only slots in the mesh count; the kernel decides what is near-first.

    Examples
    --------
    >>> params = PeerScoreParams(topics=(TopicScoreParams(mesh_deliveries_cap=100.0),))
    >>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
    >>> c.in_mesh[0] = True
    >>> mesh_delivery(c, params, np.array([0, 0, 1]))
    >>> c.mesh_deliveries.tolist(), c.first_deliveries.tolist()
    ([2.0, 0.0], [0.0, 0.0])
    """
    idx, k = _scored_counts(params, counters, slots)
    _mesh_add(counters, params, idx, k)


def _scored_counts(params: PeerScoreParams, counters: ScoreCounters,
                   slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct slots of ``slots`` on scored topics, and how often each occurs."""
    idx, k = np.unique(np.asarray(slots, dtype=np.int64), return_counts=True)
    keep = params.topic_table()["scored"][_rows(params, counters)[idx]]
    return idx[keep], k[keep].astype(np.float64)


def _mesh_add(counters: ScoreCounters, params: PeerScoreParams, idx: np.ndarray,
              k: np.ndarray) -> None:
    in_mesh = counters.in_mesh[idx]
    idx, k = idx[in_mesh], k[in_mesh]
    cap = params.topic_table()["mesh_deliveries_cap"][_rows(params, counters)[idx]]
    counters.mesh_deliveries[idx] = np.minimum(counters.mesh_deliveries[idx] + k, cap)


def invalid_delivery(counters: ScoreCounters, params: PeerScoreParams,
                     slots: np.ndarray) -> None:
    """Messages that failed validation (a slot may repeat): P4's counter (uncapped).

    Examples
    --------
    >>> params = PeerScoreParams(topics=(TopicScoreParams(),))
    >>> c = ScoreCounters.empty(slot_conn=[0], slot_topic=[0], conn_node=[0])
    >>> invalid_delivery(c, params, np.array([0, 0, 0]))
    >>> c.invalid_deliveries.tolist()
    [3.0]
    """
    idx, k = _scored_counts(params, counters, slots)
    counters.invalid_deliveries[idx] += k


def add_penalty(counters: ScoreCounters, conns: np.ndarray, count: float = 1.0) -> None:
    """Behaviour penalties (P7's counter) for connections (a connection may repeat).

    go-libp2p-pubsub and the JS implementation add one for a GRAFT during
    the backoff and one per IHAVE whose promised message never came.

    Examples
    --------
    >>> c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=[0, 0])
    >>> add_penalty(c, np.array([1, 1, 0]))
    >>> c.behaviour_penalty.tolist()
    [1.0, 2.0]
    """
    np.add.at(counters.behaviour_penalty, np.asarray(conns, dtype=np.int64), float(count))


def disconnect(counters: ScoreCounters, params: PeerScoreParams, conns: np.ndarray,
               now_ms: float | None = None) -> np.ndarray:
    """Connections closed: what the implementations keep of their peers' counters.

    A peer whose score is positive is forgotten (every counter of the
    connection and its slots back to 0).  Otherwise the counters are kept
    for ``retain_score_ms`` so that a peer cannot reset a negative score by
    reconnecting: first deliveries are zeroed, a slot that was in the mesh
    with an active P3 deficit takes the P3b penalty, and every slot leaves
    the mesh.  Returns the mask (over ``conns``) of the retained ones; the
    expiry is the caller's bookkeeping.

    Examples
    --------
    >>> params = PeerScoreParams(topics=(TopicScoreParams(),))
    >>> c = ScoreCounters.empty(slot_conn=[0, 1], slot_topic=[0, 0], conn_node=[0, 0])
    >>> first_delivery(c, params, np.array([0]))
    >>> c.behaviour_penalty[1] = 2.0                  # score -10 * 2² = -40: kept
    >>> disconnect(c, params, np.array([0, 1])).tolist()
    [False, True]
    >>> c.first_deliveries.tolist(), c.behaviour_penalty.tolist()
    ([0.0, 0.0], [0.0, 2.0])
    """
    conns = np.unique(np.asarray(conns, dtype=np.int64))
    keep = score(counters, params, now_ms)[conns] <= 0.0
    closing = np.zeros(counters.n_conns, dtype=bool)
    closing[conns] = True
    slots = np.flatnonzero(closing[counters.slot_conn])
    kept = np.zeros(counters.n_conns, dtype=bool)
    kept[conns[keep]] = True
    kept_slots = slots[kept[counters.slot_conn[slots]]]
    gone_slots = slots[~kept[counters.slot_conn[slots]]]
    counters.first_deliveries[kept_slots] = 0.0
    prune(counters, params, kept_slots[counters.in_mesh[kept_slots]])
    counters.in_mesh[kept_slots] = False
    for name in _SLOT_FLOATS:
        getattr(counters, name)[gone_slots] = 0.0
    counters.in_mesh[gone_slots] = False
    counters.mesh_deliveries_active[gone_slots] = False
    gone = conns[~keep]
    counters.behaviour_penalty[gone] = 0.0
    return keep


# --------------------------------------------------------------------------- heartbeat helpers
@dataclass(frozen=True)
class ThresholdMasks:
    """What each threshold says about every connection's peer (boolean arrays over connections).

    Attributes
    ----------
    negative : numpy.ndarray
        Score below 0: pruned from every mesh, never grafted, no PX to or from it.
    below_gossip : numpy.ndarray
        No IHAVE/IWANT to it, its gossip ignored.
    below_publish : numpy.ndarray
        Not sent our own publications (flood publishing, fanout).
    below_graylist : numpy.ndarray
        Its RPCs ignored altogether.
    accept_px : numpy.ndarray
        Its peer exchange is followed (score at least the accept-PX threshold).
    """

    negative: np.ndarray
    below_gossip: np.ndarray
    below_publish: np.ndarray
    below_graylist: np.ndarray
    accept_px: np.ndarray


def threshold_masks(scores: np.ndarray, thresholds: PeerScoreThresholds) -> ThresholdMasks:
    """The masks of :class:`ThresholdMasks` for scores from :func:`score`.

    Examples
    --------
    >>> m = threshold_masks(np.array([-100.0, -20.0, -1.0, 0.0, 15.0]), PeerScoreThresholds())
    >>> m.negative.tolist(), m.below_gossip.tolist()
    ([True, True, True, False, False], [True, True, False, False, False])
    >>> m.below_graylist.tolist()
    [True, False, False, False, False]
    >>> m.accept_px.tolist()
    [False, False, False, False, True]
    """
    s = np.asarray(scores, dtype=np.float64)
    return ThresholdMasks(negative=s < 0.0, below_gossip=s < thresholds.gossip,
                          below_publish=s < thresholds.publish,
                          below_graylist=s < thresholds.graylist,
                          accept_px=s >= thresholds.accept_px)


def group_median(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Each group's median as the implementations take it: the ``len // 2``-th smallest value.

    Empty groups give NaN.  Used on the mesh peers' scores of each (node,
    topic) mesh for opportunistic grafting.

    Examples
    --------
    >>> values = np.array([5.0, 1.0, 3.0, 2.0, 9.0, 4.0])
    >>> group_median(values, np.array([0, 0, 0, 1, 1, 1]), 3).tolist()
    [3.0, 4.0, nan]
    >>> group_median(np.array([1.0, 2.0]), np.array([0, 0]), 1).tolist()   # upper of two
    [2.0]
    """
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    out = np.full(n_groups, np.nan)
    if len(v) == 0:
        return out
    order = np.lexsort((v, g))
    counts = np.bincount(g, minlength=n_groups)[:n_groups]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    has = counts > 0
    out[has] = v[order][starts[has] + counts[has] // 2]
    return out


def opportunistic_graft(mesh_scores: np.ndarray, mesh_group: np.ndarray, n_groups: int,
                        thresholds: PeerScoreThresholds) -> tuple[np.ndarray, np.ndarray]:
    """Which meshes graft opportunistically, and above which score.

    A mesh (group) whose median peer score is below the opportunistic-graft
    threshold grafts peers scoring above that median.  Both implementations
    look only at meshes of more than one peer.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The boolean mask over groups, and each group's median (NaN if empty).

    Examples
    --------
    >>> need, med = opportunistic_graft(np.array([1.0, 2.0, 3.0, 30.0, 40.0, 50.0]),
    ...                                 np.array([0, 0, 0, 1, 1, 1]), 2, PeerScoreThresholds())
    >>> need.tolist(), med.tolist()
    ([True, False], [2.0, 40.0])
    """
    med = group_median(mesh_scores, mesh_group, n_groups)
    sizes = np.bincount(np.asarray(mesh_group, dtype=np.int64), minlength=n_groups)[:n_groups]
    with np.errstate(invalid="ignore"):
        need = (sizes > 1) & (med < thresholds.opportunistic_graft)
    return need, med


# --------------------------------------------------------------------------- tuning helpers
def decay_factor(decay_ms: float, interval_ms: float, decay_to_zero: float) -> float:
    """The factor taking a counter to ``decay_to_zero`` in ``decay_ms``.

    go-libp2p-pubsub's ``ScoreParameterDecayWithBase``, which Lodestar copies.

    Examples
    --------
    >>> round(decay_factor(10_000, 1000, 0.01), 6)   # 0.01 ** (1 / 10)
    0.630957
    """
    ticks = decay_ms / interval_ms
    return float(decay_to_zero ** (1.0 / ticks))


def decay_convergence(decay: float, rate: float) -> float:
    """The value a counter settles at when it gains ``rate`` per tick and decays by ``decay``.

    Examples
    --------
    >>> decay_convergence(0.5, 1.0)
    2.0
    """
    return rate / (1.0 - decay)
