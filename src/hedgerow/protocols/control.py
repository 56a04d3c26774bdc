"""Control traffic on the wire: what a protocol's maintenance sends during an epoch.

On a contended world whose ``control_size`` is above 0 (``docs/network.md``,
"Control messages"), the epoch loop asks the protocol for the control messages
its maintenance sends while the epoch's data is published
(:meth:`~hedgerow.protocols.base.OverlayProtocol.control_traffic`) and sends
them through the contended kernel with the data: they share the uplinks.  A
protocol answers with a :class:`~hedgerow.dissemination.ControlBatch` of
messages that carry a number of *entries* (view entries, node descriptors,
values); the world turns entries into bytes and adds latencies
(:func:`hedgerow.scenarios.world.wire.epoch_control`).  A protocol that sends
nothing beyond its data (the default) returns ``None``.

This module holds what the protocols share:

* :class:`ControlRounds` -- when an epoch's maintenance rounds happen: node
  ``v``'s rounds at ``phase_v + k * period`` for ``k = 0, 1, ...`` while the
  instant is below the epoch's last publication (at least one round), the
  phase uniform in ``[0, period)``, drawn once per epoch;
* :func:`exchange` -- requests and their answers (an answer is sent when its
  request has been received);
* :func:`one_way` -- messages without an answer (heartbeats);
* :func:`gossip_rounds` -- the rounds of the cycle-driven gossip stack of
  Vitis and RVR (peer sampling and T-Man exchanges, optionally Vitis's
  profile exchange), one round per cycle.

Examples
--------
>>> import numpy as np
>>> rounds = ControlRounds(1000.0, 2500.0, np.random.default_rng(0))
>>> node, at = rounds.starts(np.ones(3, bool))
>>> np.bincount(node).tolist(), bool((at < 2500.0).all()), float(at[1] - at[0])
([2, 3, 3], True, 1000.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hedgerow.dissemination.contended import ControlBatch
from hedgerow.errors import ParameterError
from hedgerow.gossip import uniform_partner

if TYPE_CHECKING:
    from hedgerow.gossip import PeerSampling, TMan

__all__ = ["ControlRounds", "exchange", "gossip_rounds", "one_way"]


@dataclass(frozen=True)
class ControlRounds:
    """When the maintenance rounds of one epoch happen.

    Attributes
    ----------
    period_ms : float
        Time between two rounds of a node (the world's ``control_period_ms``).
    until_ms : float
        Rounds start before this instant: the epoch's last publication.
        Every node has at least one round (at its phase).
    rng : numpy.random.Generator
        The epoch's control stream (``"control:E"``): phases, then whatever the
        protocol draws (partners).
    """

    period_ms: float
    until_ms: float
    rng: np.random.Generator

    def __post_init__(self) -> None:
        if not (np.isfinite(self.period_ms) and self.period_ms > 0):
            raise ParameterError(
                f"control_period_ms: must be positive, got {self.period_ms!r}",
                key="control_period_ms")

    def starts(self, online: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(node, instant)`` of every round of the ``online`` nodes (bool mask).

        A phase is drawn for every node (online or not, so a node's phase does
        not depend on who else is online); rounds come node by node, in time
        order within a node.
        """
        alive = np.asarray(online, dtype=bool)
        phase = self.rng.random(len(alive)) * self.period_ms
        count = np.maximum(np.ceil((self.until_ms - phase) / self.period_ms), 1).astype(np.int64)
        count[~alive] = 0
        node = np.repeat(np.arange(len(alive), dtype=np.int64), count)
        first = np.concatenate([[0], np.cumsum(count)[:-1]])
        k = np.arange(len(node), dtype=np.int64) - np.repeat(first, count)
        return node, phase[node] + k * self.period_ms


def exchange(
    src: np.ndarray,
    dst: np.ndarray,
    at: np.ndarray,
    request_entries: int | np.ndarray,
    answer_entries: int | np.ndarray,
) -> ControlBatch:
    """Requests ``src -> dst`` sent at ``at``, each answered ``dst -> src`` on receipt.

    Examples
    --------
    >>> cb = exchange(np.array([0, 2]), np.array([1, 0]), np.array([1.0, 2.0]), 4, 5)
    >>> cb.sender.tolist(), cb.answers.tolist(), cb.entries.tolist()
    ([0, 2, 1, 0], [-1, -1, 0, 1], [4, 4, 5, 5])
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    m = len(src)
    req = np.broadcast_to(np.asarray(request_entries, dtype=np.int64), (m,))
    ans = np.broadcast_to(np.asarray(answer_entries, dtype=np.int64), (m,))
    return ControlBatch.create(
        np.concatenate([src, dst]),
        np.concatenate([dst, src]),
        np.concatenate([np.asarray(at, dtype=np.float64), np.zeros(m)]),
        answers=np.concatenate([np.full(m, -1, dtype=np.int64), np.arange(m, dtype=np.int64)]),
        entries=np.concatenate([req, ans]),
    )


def one_way(
    src: np.ndarray, dst: np.ndarray, at: np.ndarray, entries: int | np.ndarray
) -> ControlBatch:
    """Messages ``src -> dst`` sent at ``at``, not answered.

    Examples
    --------
    >>> one_way(np.array([0]), np.array([1]), np.array([3.0]), 2).entries.tolist()
    [2]
    """
    return ControlBatch.create(src, dst, at, entries=entries)


def _filled(rows: np.ndarray) -> np.ndarray:
    return np.asarray((rows >= 0).sum(axis=1), dtype=np.int64)


def _exchanges(
    node: np.ndarray, q: np.ndarray, at: np.ndarray, entries: np.ndarray, alive: np.ndarray
) -> list[ControlBatch]:
    """Requests to partners ``q`` (``-1``: none this round); an offline partner never
    answers (the request still leaves: the exchange times out)."""
    q = np.asarray(q, dtype=np.int64)
    ok = q >= 0
    up = ok & alive[np.maximum(q, 0)]
    down = ok & ~up
    return [exchange(node[up], q[up], at[up], entries[node[up]], entries[q[up]]),
            one_way(node[down], q[down], at[down], entries[node[down]])]


def gossip_rounds(
    rounds: ControlRounds,
    online: np.ndarray,
    sampling: PeerSampling,
    tman: TMan,
    view: np.ndarray,
    profile_entries: np.ndarray | None = None,
) -> ControlBatch:
    """The control messages of a cycle-driven gossip stack, one round per cycle.

    In each of its rounds an online node ``p`` (PeerSim's ``CDProtocol``, as
    the engines' ``cycle()`` runs it):

    1. exchanges caches with one peer-sampling partner ``q`` (uniform among its
       cache's entries): with Newscast, request and answer each carry the
       sender's cache plus its own fresh descriptor; with Cyclon, ``shuffle``
       entries each way (its own descriptor among them); the ideal ``uniform``
       sampler is an oracle and sends nothing;
    2. runs one T-Man exchange with the partner the engine's own hook picks
       (``tman.partner``: Vitis's and RVR's ranked or uniform rule): request
       and answer each carry the sender's view, its peer sample and, with
       ``include_self``, its descriptor (the buffer of T-Man's Algorithms 2-3);
    3. with ``profile_entries`` (Vitis's Algorithms 6-7), sends its profile
       to every entry of its routing table, each of which answers with its own:
       ``profile_entries[v]`` entries (one gateway proposal per topic of ``v``).

    Every message of a round leaves at the round's instant, in that order;
    answers leave when their request has been received (an offline partner
    sends none: the request times out).  Partners are drawn
    from ``rounds.rng`` on the current state; the state is not changed.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.gossip import PeerSampling, TMan, ring_select
    >>> ps = PeerSampling(4, 2, kind="newscast")
    >>> ps.bootstrap(np.ones(4, bool), np.random.default_rng(0))
    >>> tm = TMan(2, ring_select(np.arange(4, dtype=np.uint64)))
    >>> view = np.array([[1, 3], [0, 2], [1, 3], [2, 0]], np.int32)
    >>> cb = gossip_rounds(ControlRounds(1000.0, 0.0, np.random.default_rng(1)),
    ...                    np.ones(4, bool), ps, tm, view, profile_entries=np.ones(4, np.int64))
    >>> len(cb), sorted(set(cb.entries.tolist()))  # 4 x (2 + 2 + 2 x 2) messages
    (32, [1, 3, 5])
    """
    alive = np.asarray(online, dtype=bool)
    node, at = rounds.starts(alive)
    parts: list[ControlBatch] = []
    cache = sampling.cache
    if len(node):
        u = rounds.rng.random(len(node))
        if sampling.kind == "newscast":
            parts += _exchanges(node, uniform_partner(node, cache, cache, alive, u), at,
                                _filled(cache) + 1, alive)
        elif sampling.kind == "cyclon":
            parts += _exchanges(node, uniform_partner(node, cache, cache, alive, u), at,
                                np.minimum(_filled(cache) + 1, sampling.shuffle), alive)
        q = np.asarray(tman.partner(node, view, cache, alive, rounds.rng.random(len(node))),
                       dtype=np.int64)
        parts += _exchanges(node, q, at, _filled(view) + _filled(cache) + int(tman.include_self),
                            alive)
        if profile_entries is not None:
            prof = np.asarray(profile_entries, dtype=np.int64)
            rows = view[node]
            use = (rows >= 0) & alive[np.maximum(rows, 0)] & (rows != node[:, None])
            src = np.repeat(node, use.sum(axis=1))
            dst = rows[use].astype(np.int64)
            when = np.repeat(at, use.sum(axis=1))
            parts.append(exchange(src, dst, when, prof[src], prof[dst]))
    return ControlBatch.concat(parts)
