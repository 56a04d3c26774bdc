"""Observers: turn what a run did into rows, from the definitions in :mod:`hedgerow.metrics`.

Observers never change what they read.  In the epoch loop
(:mod:`hedgerow.scenarios.epochs`) each :class:`EpochObserver` reads one
finished epoch and returns its columns of the epoch's row; the world's
settings select them (:func:`observers_for`): :class:`EpochRow`
(:func:`epoch_row`, every run), :class:`ChurnMeasures`,
:class:`BroadcastMeasures` (:func:`broadcast_measures`),
:class:`RelayMeasures` and :class:`RelayTenure` (withholding relays),
:class:`EclipseStreaks` (:func:`streak_stats`) and :class:`RoutingMeasures`
(routing worlds).  :func:`snapshot` reads a running churn engine only through
:class:`~hedgerow.protocols.engine_api.ChurnEngine` (who is online, the links,
the current interests, who is under-covered; SpiderCast DEBS'07, section 3.8).

Per-epoch row keys (:func:`epoch_row`)
--------------------------------------
``epoch``
    Epoch number (0 = an adaptive protocol's starting topology).
``receive_rate``
    Mean over the epoch's messages of the fraction of the topic's honest
    subscribers (publisher excluded) that received the message (Topiary V-A
    measure 1).
``delay_mean_ms``, ``delay_p50_ms``, ``delay_p90_ms``, ``delay_p99_ms``
    Publish-to-receive time over every (message, honest subscriber) pair that
    received the message: mean (V-A measure 2) and percentiles.
``hops_mean``
    Overlay hops of the first copy, over the same pairs.
``relay_copies``
    Mean number of copies per message received by unsubscribed nodes.
``relay_share``
    Copies received by uninterested nodes / all copies received.
``duplicates_per_message``
    Copies received by a node that already had the message, per message.
``avg_score``
    Mean over the selecting nodes of their kept neighbours' score (V-A
    measure 3; ``None`` for static protocols).
``victim_receive_rate``, ``victim_delay_mean_ms`` (topic attack)
    The same two measures restricted to the victim topic's messages.
``attacker_slot_share``, ``honest_with_honest_neighbour``, ``honest_with_honest_link``
    (attack scenarios) :func:`hedgerow.metrics.attack.slot_stats`.
``wasted_latency_mean_ms``, ``wasted_latency_p25_ms``, ``_p50_ms``, ``_p75_ms``
    (broadcast worlds with ``wasted``) Goldfish section V-C: per node, the wasted latency at
    90% of the publishing probability over the exploitation graph the epoch
    ran on (:func:`hedgerow.metrics.propagation.wasted_latency`); mean and
    percentiles over the adaptive nodes.
``star_optimal``, ``star_lambda_ms``
    (broadcast worlds with one adaptive node and no more publishers than its out-slots,
    e.g. ``goldfish-fig2``) Goldfish section V-B Fig. 2: 1 when its exploitation peers
    include every publisher, and λ(e) (:func:`hedgerow.scenarios.star_lambda.star_lambda`).
``wasted_latency_sorted_ms``
    (broadcast worlds with ``wasted``) the same per-node values, sorted ascending, as one
    space-separated string (0.1 ms): the sorted curve Goldfish Fig. 3 draws.
``t50_ms``, ``t90_ms``, ``t99_ms``, ``t50_weight_ms``, ``t90_weight_ms``
    (broadcast worlds) the epoch's (message, node) arrivals pooled, publisher
    included at 0: the time by which ``q`` of the nodes hold a message, by node
    count and by publishing weight (:func:`~hedgerow.metrics.propagation.pooled_percentiles`).
``duplicates_per_node``
    (broadcast worlds) copies a node receives beyond its first, per node per message.
``dials_per_node``, ``drops_per_node``
    (broadcast worlds, adaptive protocols) out-links the epoch's selection
    dialled and dropped, per node.
``online_nodes``, ``churn_drops_per_node``, ``churn_dials_per_node``, ``dead_peers_selected``
    (broadcast worlds with churn, :mod:`hedgerow.scenarios.epoch_churn`) nodes
    online in the epoch; out-links dropped because an end left and dialled to
    refill the empty slots before the epoch, per online node; out-links of the
    epoch's selection that point to a node offline in the epoch (must be 0).
    Under churn every other measure is over the online nodes.
``honest_exploit_peer_share``, ``attacker_exploit_share``, ``withholding_attackers``
    (``withhold`` / ``relay`` worlds) share of the honest adaptive nodes with
    at least one honest exploitation peer, share of their exploitation slots
    held by attackers (:func:`hedgerow.metrics.attack.exploit_hold`), and
    attackers withholding in the epoch.
``attacker_tenure_{mean,p90,max}_epochs``, ``attacker_tenures``
    (``withhold`` / ``relay`` worlds, last epoch only) Over the whole run, every
    maximal run of consecutive epochs in which an attacker held an exploitation
    slot of one honest adaptive node
    (:func:`hedgerow.metrics.attack.hold_tenures`): how long a withholder
    survives before the node evicts it.
``sent_payload_mean`` ... ``received_control_max``, ``duplicate_bytes``, ``queueing_share`` ...
    (contended worlds, :data:`BYTES_KEYS`: also ``duplicate_byte_share``,
    ``uplink_utilisation_{mean,p50,p99,max}``, ``copies_lost``, ``lost_share``,
    ``message_bytes_mean``) bytes sent and received per node
    (mean, p50, p99, max over every node; payload and control apart),
    duplicate bytes, uplink utilisation, the share of delivery delay spent
    queueing and copies lost (:mod:`hedgerow.metrics.bytes`), and the mean
    message size.  The delay and receive-rate columns above are then under
    load.
``eclipse_streak_max``, ``eclipse_streak_p99`` (attack scenarios, last epoch only)
    Over the honest nodes, the longest run of consecutive epochs without an
    honest out-neighbour within the last :data:`STREAK_WINDOW` epochs
    (:func:`streak_stats`): maximum and 99th percentile.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics import degree_ci95, topic_components, topic_diameters
from hedgerow.metrics.attack import (
    eclipse_streaks,
    exploit_hold,
    hold_tenures,
    honest_out_mask,
    slot_stats,
)
from hedgerow.metrics.bytes import bytes_measures
from hedgerow.metrics.delivery import delivery_measures, delivery_stats, relay_share
from hedgerow.metrics.propagation import (
    connection_churn,
    pooled_percentiles,
    wasted_latency,
    wasted_summary,
)
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.protocols.base import StaticProtocol
from hedgerow.protocols.engine_api import ChurnEngine
from hedgerow.scenarios.attackers import RELAY_ATTACKS, AttackSetup
from hedgerow.scenarios.controls import Epoch, EpochRun, run_shape
from hedgerow.scenarios.routing import measure_routing, routing_row
from hedgerow.scenarios.world import World

__all__ = [
    "BYTES_KEYS",
    "CLOCK_KEYS",
    "STREAK_WINDOW",
    "BroadcastMeasures",
    "BytesMeasures",
    "ChurnMeasures",
    "ClockMeasures",
    "EclipseStreaks",
    "EpochDelivery",
    "EpochObserver",
    "EpochRow",
    "RelayMeasures",
    "RelayTenure",
    "RoutingMeasures",
    "broadcast_measures",
    "clock_measures",
    "epoch_row",
    "num",
    "observers_for",
    "online_view",
    "relay_attack_measures",
    "relay_tenure_stats",
    "snapshot",
    "streak_stats",
    "wire_measures",
]


#: epochs at the end of a run over which eclipse streaks are measured
STREAK_WINDOW = 50


def streak_stats(has_honest_out: np.ndarray, honest: np.ndarray) -> dict[str, float]:
    """Eclipse streaks of the honest nodes over the last :data:`STREAK_WINDOW` epochs.

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[1, 0, 1], [1, 0, 1], [1, 1, 0]], dtype=bool)
    >>> streak_stats(h, np.array([True, True, False]))
    {'eclipse_streak_max': 2, 'eclipse_streak_p99': 1.98}
    """
    tail = np.asarray(has_honest_out, dtype=bool)[-STREAK_WINDOW:]
    s = eclipse_streaks(tail)[np.asarray(honest, dtype=bool)]
    if not len(s):
        return {"eclipse_streak_max": 0, "eclipse_streak_p99": 0.0}
    return {
        "eclipse_streak_max": int(s.max()),
        "eclipse_streak_p99": float(np.percentile(s, 99)),
    }


def num(x: Any) -> float | None:
    """A finite float, or ``None`` (JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass
class EpochDelivery:
    """The per-message arrays of one epoch's dissemination, gathered over chunks.

    ``wire`` is the epoch's :class:`~hedgerow.dissemination.ContendedDelivery`
    on a contended world (bytes, queues, loss; ``None`` otherwise).
    """

    publisher: np.ndarray
    topic: np.ndarray
    arrival: np.ndarray
    hops: np.ndarray
    copies: np.ndarray
    relay_copies: np.ndarray
    duplicates: np.ndarray
    wire: Any = None

    @classmethod
    def empty(cls, publisher: np.ndarray, topic: np.ndarray, n_nodes: int) -> EpochDelivery:
        m = len(publisher)
        return cls(
            publisher=publisher,
            topic=topic,
            arrival=np.empty((m, n_nodes)),
            hops=np.empty((m, n_nodes), dtype=np.int32),
            copies=np.zeros(m, dtype=np.int64),
            relay_copies=np.zeros(m, dtype=np.int64),
            duplicates=np.zeros(m, dtype=np.int64),
        )

    @classmethod
    def whole(cls, publisher: np.ndarray, topic: np.ndarray, dl: Any) -> EpochDelivery:
        """Every message of the epoch from one :class:`~hedgerow.dissemination.Delivery`: its
        arrays held as they are (cast only where their type differs), not copied into
        :meth:`empty` ones as :meth:`add` does chunk by chunk.

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> dl = SimpleNamespace(arrival=np.zeros((2, 3)), hops=np.zeros((2, 3), np.int32),
        ...                      copies=np.ones(2, np.int64), relay_copies=np.zeros(2, np.int64),
        ...                      duplicates=np.zeros(2, np.int64))
        >>> rec = EpochDelivery.whole(np.array([0, 1]), np.array([0, 0]), dl)
        >>> rec.arrival is dl.arrival, rec.copies.tolist()
        (True, [1, 1])
        """
        return cls(
            publisher=publisher,
            topic=topic,
            arrival=np.asarray(dl.arrival, dtype=np.float64),
            hops=np.asarray(dl.hops, dtype=np.int32),
            copies=np.asarray(dl.copies, dtype=np.int64),
            relay_copies=np.asarray(dl.relay_copies, dtype=np.int64),
            duplicates=np.asarray(dl.duplicates, dtype=np.int64),
        )

    def add(self, sel: np.ndarray, dl: Any) -> None:
        """Store one chunk's :class:`~hedgerow.dissemination.Delivery` at messages ``sel``."""
        self.arrival[sel] = np.asarray(dl.arrival, dtype=np.float64)
        self.hops[sel] = np.asarray(dl.hops)
        self.copies[sel] = np.asarray(dl.copies)
        self.relay_copies[sel] = np.asarray(dl.relay_copies)
        self.duplicates[sel] = np.asarray(dl.duplicates)


def epoch_row(
    epoch: int,
    rec: EpochDelivery,
    interest: np.ndarray,
    scores: np.ndarray | None,
    world: World,
    links: tuple[np.ndarray, np.ndarray],
    online: np.ndarray | None = None,
) -> dict[str, Any]:
    """One epoch's row (keys in the module docstring); ``online``: only those receive."""
    attack = world.attack
    honest = None if attack is None else attack.honest
    if online is not None:
        honest = np.asarray(online, dtype=bool) if honest is None else honest & online
    m = delivery_measures(
        rec.arrival, rec.publisher, rec.topic, interest, receivers=honest, hops=rec.hops
    )
    row: dict[str, Any] = {
        "epoch": int(epoch),
        "receive_rate": num(m["receive_rate"]),
        "delay_mean_ms": num(m["delay_mean_ms"]),
        "delay_p50_ms": num(m["delay_p50_ms"]),
        "delay_p90_ms": num(m["delay_p90_ms"]),
        "delay_p99_ms": num(m["delay_p99_ms"]),
        "hops_mean": num(m["hops_mean"]),
        "relay_copies": float(np.mean(rec.relay_copies)) if len(rec.relay_copies) else 0.0,
        "relay_share": num(relay_share(rec.copies, rec.relay_copies)),
        "duplicates_per_message": float(np.mean(rec.duplicates)) if len(rec.duplicates) else None,
        "avg_score": None
        if scores is None or not np.isfinite(scores).any()
        else float(np.nanmean(scores)),
    }
    if attack is not None:
        victim = _victim(attack, rec, honest)
        if victim is not None:
            vic, receivers = victim
            if vic.any():
                vr, vd = delivery_stats(
                    rec.arrival[vic], rec.publisher[vic], rec.topic[vic], interest,
                    receivers=receivers
                )
            else:
                vr, vd = float("nan"), float("nan")
            row["victim_receive_rate"] = num(vr)
            row["victim_delay_mean_ms"] = num(vd)
        share, keep, linked = slot_stats(links[0], links[1], attack.honest)
        row["attacker_slot_share"] = share
        row["honest_with_honest_neighbour"] = keep
        row["honest_with_honest_link"] = linked
    return row


def _victim(
    attack: AttackSetup, rec: EpochDelivery, honest: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The messages and receivers the victim columns read: the victim topic's messages (topic
    attack), the censored publisher's (``sybil-censor``), every message at the eclipsed target
    only (``sybil-eclipse``); ``None``: no victim."""
    plan = attack.sybil
    if plan is None:
        if attack.victim_topic is None:
            return None
        return rec.topic == attack.victim_topic, honest
    if plan.target < 0 or attack.kind not in ("sybil-censor", "sybil-eclipse"):
        return None
    if attack.kind == "sybil-censor":
        return rec.publisher == plan.target, honest
    only = np.zeros(len(attack.honest), dtype=bool)
    only[plan.target] = True
    if honest is not None:
        only &= honest
    return np.ones(len(rec.topic), dtype=bool), only


def broadcast_measures(
    world: World,
    rec: EpochDelivery,
    exploit: np.ndarray,
    before: np.ndarray | None = None,
    after: np.ndarray | None = None,
    *,
    online: np.ndarray | None = None,
    silent: np.ndarray | None = None,
) -> dict[str, Any]:
    """The broadcast-world keys of an epoch's row (module docstring).

    Parameters
    ----------
    world : World
        A broadcast world (``publisher_probs`` set).
    rec : EpochDelivery
        The epoch's arrivals.
    exploit : numpy.ndarray
        ``(n, d)`` exploitation out-links the epoch ran on (``-1`` padded).
    before, after : numpy.ndarray, optional
        The out-link tables before and after the epoch's selection (churn keys).
    online : numpy.ndarray, optional
        Bool ``(n,)``: the nodes taking part in the epoch (churn); the others
        are not measured and publish nothing.
    silent : numpy.ndarray, optional
        Bool ``(n,)``: nodes that relayed nothing this epoch (withholders); the
        wasted latency routes around them.
    """
    if world.publisher_probs is None:
        raise ParameterError("broadcast measures need a broadcast world (publisher_probs set)")
    probs = world.publisher_probs
    n = world.n_nodes
    measured = world.adaptive & world.honest
    arrival = rec.arrival
    if online is not None:
        on = np.asarray(online, dtype=bool)
        probs = np.where(on, probs, 0.0)
        probs = probs / probs.sum()
        measured = measured & on
        arrival = arrival[:, on]
        n = int(on.sum())
    if world.scenario.wasted:
        ex = np.array(exploit, dtype=np.int64, copy=True)
        if silent is not None and np.any(silent):
            gone = np.asarray(silent, dtype=bool)
            ex[gone] = -1
            ex[gone[np.maximum(ex, 0)] & (ex >= 0)] = -1
        wl = wasted_latency(ex, world.latency.matrix(), world.proc, probs, 0.9)
        summ: Mapping[str, float | None] = wasted_summary(wl, np.flatnonzero(measured))
        per_node = " ".join(f"{x:.1f}" for x in np.sort(wl[np.flatnonzero(measured)]))
    else:
        summ = dict.fromkeys(("mean", "p25", "p50", "p75"), None)
        per_node = None
    t = pooled_percentiles(arrival, (0.5, 0.9, 0.99))
    tw = pooled_percentiles(
        arrival, (0.5, 0.9), weights=probs if online is None else probs[online]
    )
    m = len(rec.duplicates)
    row: dict[str, Any] = {
        "wasted_latency_mean_ms": num(summ["mean"]),
        "wasted_latency_p25_ms": num(summ["p25"]),
        "wasted_latency_p50_ms": num(summ["p50"]),
        "wasted_latency_p75_ms": num(summ["p75"]),
        "wasted_latency_sorted_ms": per_node,
        "t50_ms": num(t[0]),
        "t90_ms": num(t[1]),
        "t99_ms": num(t[2]),
        "t50_weight_ms": num(tw[0]),
        "t90_weight_ms": num(tw[1]),
        "duplicates_per_node": float(rec.duplicates.sum()) / (n * m) if m else None,
    }
    star = np.flatnonzero(world.adaptive)
    pubs = np.flatnonzero(world.publisher_probs > 0)
    if online is None and len(star) == 1 and len(pubs) <= exploit.shape[1]:
        # Goldfish V-B Fig. 2: one adaptive node, no more publishers than its slots
        from hedgerow.scenarios.star_lambda import star_lambda

        sv = int(star[0])
        row["star_optimal"] = int(set(pubs.tolist()) <= set(exploit[sv].tolist()))
        row["star_lambda_ms"] = star_lambda(exploit, sv, exploit.shape[1],
                                            world.latency.matrix(), world.proc, pubs)
    if before is not None and after is not None:
        dials, drops = connection_churn(before, after)
        row["dials_per_node"] = float(dials.mean())
        row["drops_per_node"] = float(drops.mean())
    return row


def relay_attack_measures(
    exploit: np.ndarray, watched: np.ndarray, honest: np.ndarray, silent: np.ndarray | None
) -> dict[str, Any]:
    """The ``withhold`` / ``relay`` keys of an epoch's row (module docstring).

    ``exploit`` is the exploitation table the epoch ran on, ``watched`` the
    honest adaptive nodes, ``silent`` the epoch's withholders.

    Examples
    --------
    >>> import numpy as np
    >>> ex = np.array([[2, 1], [2, 3], [0, -1], [1, -1]])
    >>> relay_attack_measures(ex, np.array([True, True, False, False]),
    ...                       np.array([True, True, False, False]), None)
    {'honest_exploit_peer_share': 0.5, 'attacker_exploit_share': 0.75, 'withholding_attackers': 0}
    """
    keep, share = exploit_hold(exploit, np.flatnonzero(watched), honest)
    return {
        "honest_exploit_peer_share": num(keep),
        "attacker_exploit_share": num(share),
        "withholding_attackers": 0 if silent is None else int(np.sum(silent)),
    }


def relay_tenure_stats(
    history: list[np.ndarray], watched: np.ndarray, honest: np.ndarray
) -> dict[str, Any]:
    """Attacker tenures in honest adaptive nodes' exploitation slots over a run.

    ``history`` holds every epoch's exploitation table.

    Examples
    --------
    >>> import numpy as np
    >>> h = [np.array([[1], [0]]), np.array([[1], [0]]), np.array([[-1], [0]])]
    >>> s = relay_tenure_stats(h, np.array([True, False]), np.array([True, False]))
    >>> s["attacker_tenures"], s["attacker_tenure_mean_epochs"], s["attacker_tenure_max_epochs"]
    (1, 2.0, 2)
    """
    nodes = np.flatnonzero(watched)
    bad = np.flatnonzero(~np.asarray(honest, dtype=bool))
    held = np.zeros((len(history), len(nodes) * len(bad)), dtype=bool)
    pos = np.full(len(honest), -1, dtype=np.int64)
    pos[bad] = np.arange(len(bad))
    for e, ex in enumerate(history):
        t = np.asarray(ex, dtype=np.int64)[nodes]
        r, c = np.nonzero((t >= 0) & (pos[np.maximum(t, 0)] >= 0))
        held[e, r * len(bad) + pos[t[r, c]]] = True
    ten = hold_tenures(held)
    if not len(ten):
        return {"attacker_tenures": 0, "attacker_tenure_mean_epochs": None,
                "attacker_tenure_p90_epochs": None, "attacker_tenure_max_epochs": 0}
    return {
        "attacker_tenures": len(ten),
        "attacker_tenure_mean_epochs": float(ten.mean()),
        "attacker_tenure_p90_epochs": float(np.percentile(ten, 90)),
        "attacker_tenure_max_epochs": int(ten.max()),
    }


class EpochObserver:
    """An observer: reads a finished epoch and returns the columns it adds to the epoch's row.

    Observers never change the :class:`~hedgerow.scenarios.controls.Epoch` or
    the run they read; one that measures over the whole run keeps its own
    history.  :meth:`start` is called once before the first epoch.
    """

    def start(self, run: EpochRun) -> None:
        """Prepare for ``run``."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        """The columns ``ep`` adds to its row."""
        raise NotImplementedError


class EpochRow(EpochObserver):
    """The epoch's row itself: :func:`epoch_row` (delivery, delay, relaying, attack slots)."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        assert ep.rec is not None and ep.links is not None, "the epoch ran"
        return epoch_row(ep.number, ep.rec, run.interest, ep.score, run.world, ep.links,
                         ep.online)


class ChurnMeasures(EpochObserver):
    """Churn keys: online nodes, the churn control's drops and dials, dead peers selected.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.scenarios.controls import Epoch
    >>> ep = Epoch(0, np.array([[1], [0], [-1]]), np.array([True, True, False]), False,
    ...            online=np.array([True, True, False]),
    ...            notes={"drops": np.array([0, 0, 1]), "dials": np.array([1, 0, 0])})
    >>> ep.new_out = np.array([[2], [0], [-1]])
    >>> ChurnMeasures().observe(None, ep)
    {'online_nodes': 2, 'churn_drops_per_node': 0.0, 'churn_dials_per_node': 0.5, \
'dead_peers_selected': 1}
    """

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        online, picked = ep.online, ep.new_out
        assert online is not None and picked is not None, "the churn control and adapt ran"
        drops, dials = ep.notes["drops"], ep.notes["dials"]
        n_on = max(int(online.sum()), 1)
        picked = picked[ep.selecting]
        return {
            "online_nodes": int(online.sum()),
            "churn_drops_per_node": float(drops[online].sum()) / n_on,
            "churn_dials_per_node": float(dials[online].sum()) / n_on,
            # a selection must never pick a node that was offline in the epoch
            "dead_peers_selected": int((~online[picked[picked >= 0]]).sum()),
        }


class BroadcastMeasures(EpochObserver):
    """Broadcast-world keys (:func:`broadcast_measures`) over the epoch's exploitation links."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        assert ep.rec is not None, "the epoch ran"
        return broadcast_measures(run.world, ep.rec, run.exploit(ep.out), ep.out, ep.new_out,
                                  online=ep.online, silent=ep.silent)


class RelayMeasures(EpochObserver):
    """Withholding keys (:func:`relay_attack_measures`) of the table the relay control read."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        assert ep.exploit is not None, "the relay control ran"
        return relay_attack_measures(ep.exploit, run.watched, run.world.honest, ep.silent)


class RelayTenure(EpochObserver):
    """Attacker tenures in exploitation slots over the run, on the last epoch's row.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from hedgerow.scenarios.controls import Epoch
    >>> run = SimpleNamespace(watched=np.array([True, False]),
    ...                       world=SimpleNamespace(honest=np.array([True, False])))
    >>> obs = RelayTenure(); obs.start(run)
    >>> rows = [obs.observe(run, Epoch(e, None, None, e == 2, exploit=np.array([[x], [0]])))
    ...         for e, x in enumerate([1, 1, -1])]
    >>> rows[0], rows[2]["attacker_tenure_max_epochs"]
    ({}, 2)
    """

    def start(self, run: EpochRun) -> None:
        self.history: list[np.ndarray] = []

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        assert ep.exploit is not None, "the relay control ran"
        self.history.append(ep.exploit)
        if not ep.last:
            return {}
        return relay_tenure_stats(self.history, run.watched, run.world.honest)


class EclipseStreaks(EpochObserver):
    """Eclipse streaks (:func:`streak_stats`) over the run, on the last epoch's row.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from hedgerow.scenarios.controls import Epoch
    >>> run = SimpleNamespace(world=SimpleNamespace(honest=np.array([True, True, False])))
    >>> obs = EclipseStreaks(); obs.start(run)
    >>> links = (np.array([0, 1]), np.array([2, 0]))
    >>> [obs.observe(run, Epoch(e, None, None, e == 1, links=links)) for e in range(2)]
    [{}, {'eclipse_streak_max': 2, 'eclipse_streak_p99': 1.98}]
    """

    def start(self, run: EpochRun) -> None:
        self.history: list[np.ndarray] = []

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        honest = run.world.honest
        assert ep.links is not None, "the epoch ran"
        self.history.append(honest_out_mask(ep.links[0], ep.links[1], honest))
        if not ep.last:
            return {}
        return streak_stats(np.array(self.history), honest)


#: the byte and queue columns of an epoch's row on a contended world
#: (:func:`hedgerow.metrics.bytes.bytes_measures`, delivery columns left to :class:`EpochRow`)
BYTES_KEYS = (
    *(f"{d}_{k}_{s}" for d in ("sent", "received") for k in ("payload", "control")
      for s in ("mean", "p50", "p99", "max")),
    "control_byte_share",
    "duplicate_bytes",
    "duplicate_byte_share",
    *(f"uplink_utilisation_{s}" for s in ("mean", "p50", "p99", "max")),
    "queueing_share",
    "copies_lost",
    "lost_share",
    "message_bytes_mean",
)


def wire_measures(
    d: Any, interest: np.ndarray, receivers: np.ndarray | None = None
) -> dict[str, Any]:
    """The :data:`BYTES_KEYS` columns of a contended epoch (``None`` for NaN, as JSON has none).

    Bytes per node are over every node of the world; the queueing share over the
    ``receivers`` (honest and online) subscribers, as the delay columns.

    Examples
    --------
    >>> from hedgerow.scenarios.world import make_world
    >>> from hedgerow.scenarios.epochs import run_protocol
    >>> from hedgerow.protocols import get_protocol
    >>> w = make_world("unit-square-bw", seed=1, nodes=60, messages=20)
    >>> row = run_protocol(get_protocol("ringpt"), w).rows[0]
    >>> row["sent_payload_mean"] > 0, 0 <= row["uplink_utilisation_max"] <= 1
    (True, True)
    """
    m = bytes_measures(d, interest, receivers=receivers)
    row: dict[str, Any] = {k: m[k] for k in BYTES_KEYS if k in m}
    row["message_bytes_mean"] = float(np.mean(d.size)) if len(d.size) else None
    return {k: v if isinstance(v, int) else num(v) for k, v in row.items()}


class BytesMeasures(EpochObserver):
    """The byte and queue columns of a contended world's epochs (:func:`wire_measures`)."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        assert ep.rec is not None
        honest = run.world.honest
        receivers = honest if ep.online is None else honest & np.asarray(ep.online, dtype=bool)
        return wire_measures(ep.rec.wire, run.interest, receivers)


#: the columns of a clock-driven protocol's row: heartbeats after warm-up, the mean mesh size,
#: control messages per node per heartbeat by kind
CLOCK_KEYS = (
    "heartbeats_after_warmup",
    "mesh_degree_mean",
    *(f"{k}_per_node_heartbeat" for k in ("ihave", "iwant", "graft", "prune", "idontwant")),
)


def clock_measures(engine: Any) -> dict[str, Any]:
    """The :data:`CLOCK_KEYS` columns of a clock engine after its run (``None`` for NaN).

    Control messages count those sent after the warm-up, divided by the
    nodes and the heartbeats after the warm-up; the mesh size is the mean
    over subscribed (node, topic) pairs of each pair's mean over those heartbeats.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> eng = SimpleNamespace(n=2, heartbeats_after_warmup=4,
    ...     mean_mesh_degree=lambda: np.array([[6.0, np.nan], [4.0, np.nan]]),
    ...     control_sent=lambda: {"ihave": np.array([8, 8]), "graft": np.array([0, 2])})
    >>> m = clock_measures(eng)
    >>> m["mesh_degree_mean"], m["ihave_per_node_heartbeat"], m["graft_per_node_heartbeat"]
    (5.0, 2.0, 0.25)
    """
    hb = int(engine.heartbeats_after_warmup)
    mesh = np.asarray(engine.mean_mesh_degree(), dtype=np.float64)
    row: dict[str, Any] = {
        "heartbeats_after_warmup": hb,
        "mesh_degree_mean": num(float(np.nanmean(mesh))) if np.isfinite(mesh).any() else None,
    }
    sent = engine.control_sent()
    for k in ("ihave", "iwant", "graft", "prune", "idontwant"):
        total = float(np.sum(sent[k])) if k in sent else 0.0
        row[f"{k}_per_node_heartbeat"] = num(total / (engine.n * hb)) if hb else None
    return row


class ClockMeasures(EpochObserver):
    """The control traffic and mesh sizes of a clock-driven protocol's run
    (:func:`clock_measures`; the engine is in the epoch's ``notes["clock"]``)."""

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        return clock_measures(ep.notes["clock"])


class RoutingMeasures(EpochObserver):
    """Routing worlds (``events`` per topic): every event routed on the built overlay.

    The row of :func:`~hedgerow.scenarios.routing.routing_row`, with the
    protocol's build statistics and parameters.
    """

    def __init__(self, link_topics: np.ndarray | None = None) -> None:
        self.link_topics = link_topics

    def observe(self, run: EpochRun, ep: Epoch) -> dict[str, Any]:
        proto = run.proto
        assert ep.indptr is not None and ep.indices is not None and ep.overlay is not None
        tally = measure_routing(run.world, ep.indptr, ep.indices, run.policy,
                                link_topics=self.link_topics)
        stats = cast(StaticProtocol, proto).stats_  # routing worlds run static builds
        return routing_row(ep.number, tally, ep.overlay, run.world, dict(stats),
                           proto.get_params())


def observers_for(
    world: World, proto: Any, *, link_topics: np.ndarray | None = None
) -> list[EpochObserver]:
    """The observers of a run of ``proto`` (or a shape name) on ``world``, in row-column order.

    ============================  ======================================================
    observer                      selected by
    ============================  ======================================================
    :class:`RoutingMeasures`      a static run on a routing world (``events`` not
                                  ``traffic``), alone
    :class:`EpochRow`             every other run
    :class:`BytesMeasures`        a contended world (:attr:`World.contended`)
    :class:`ChurnMeasures`        ``churn`` (adaptive runs)
    :class:`BroadcastMeasures`    ``workload="broadcast"`` (``publisher_probs``)
    :class:`RelayMeasures`        ``attack`` ``withhold`` or ``relay``
    :class:`RelayTenure`          ``attack`` ``withhold`` or ``relay`` (adaptive runs)
    :class:`EclipseStreaks`       any other ``attack`` (adaptive runs)
    ============================  ======================================================

    ``link_topics`` are the ``(u, v, topic)`` rows of a mesh-forwarding static
    overlay (the routing observer routes along them).

    Examples
    --------
    >>> from hedgerow.scenarios.world import make_world
    >>> w = make_world("eclipse", seed=1, nodes=100, attackers=20, epochs=2)
    >>> [type(o).__name__ for o in observers_for(w, "adaptive")]
    ['EpochRow', 'EclipseStreaks']
    >>> [type(o).__name__ for o in observers_for(w, "static")]
    ['EpochRow']
    """
    shape = run_shape(proto)
    sc = world.scenario
    if shape == "static" and sc.events != "traffic":
        return [RoutingMeasures(link_topics)]
    over_epochs = shape == "adaptive"
    churn = over_epochs and sc.churn is not None
    attack = world.attack
    relay = attack is not None and attack.kind in RELAY_ATTACKS
    observers: list[EpochObserver] = [EpochRow()]
    if world.contended:
        observers.append(BytesMeasures())
    if churn:
        observers.append(ChurnMeasures())
    if world.publisher_probs is not None:
        observers.append(BroadcastMeasures())
    if relay:
        observers.append(RelayMeasures())
        if over_epochs:
            observers.append(RelayTenure())
    elif attack is not None and over_epochs:
        observers.append(EclipseStreaks())
    return observers


def online_view(engine: ChurnEngine, n_topics: int) -> tuple[np.ndarray, Overlay, Instance]:
    """The online part of a running engine, renumbered ``0..m-1``.

    Parameters
    ----------
    engine : ChurnEngine
        A running engine.
    n_topics : int
        Number of topics.

    Returns
    -------
    ids : numpy.ndarray
        The online nodes, in id order (local node ``i`` is ``ids[i]``).
    overlay : Overlay
        The links between online nodes (a link to a node that has just left,
        whose LEAVE is still in flight, is dropped).
    instance : Instance
        The current interests of the online nodes.
    """
    ids = np.flatnonzero(engine.online)
    local = np.full(engine.n, -1, dtype=np.int64)
    local[ids] = np.arange(len(ids))
    edges = engine.overlay().edges()
    a, b = local[edges[:, 0]], local[edges[:, 1]]
    keep = (a >= 0) & (b >= 0)
    m = len(ids)
    overlay = Overlay.from_edges(m, np.column_stack([a[keep], b[keep]]))
    subs = engine.subscriptions()
    lo, hi = subs.sub_indptr[ids], subs.sub_indptr[ids + 1]
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(hi - lo, out=indptr[1:])
    rows = np.repeat(np.arange(m), hi - lo)
    topics = subs.sub_topics[lo[rows] + np.arange(indptr[-1]) - indptr[rows]]
    return ids, overlay, Instance(m, n_topics, indptr, topics)


def snapshot(
    engine: ChurnEngine, included: np.ndarray, n_topics: int, *, diameter: bool = False
) -> dict[str, Any]:
    """Metrics of the online overlay, measured on the ``included`` nodes.

    Links count between online nodes only.  Degrees are those of the included
    nodes; a topic is partitioned when its included subscribers lie in more
    than one component of the topic subgraph of *all* online subscribers (an
    event may travel through a node that has just joined, but a node still
    building its links is not required to be reached).  See reading 5 of
    :mod:`hedgerow.scenarios.churn`.

    Parameters
    ----------
    engine : ChurnEngine
        A running engine.
    included : numpy.ndarray
        Bool mask of the nodes to measure (a subset of the online ones).
    n_topics : int
        Number of topics.
    diameter : bool, default False
        Also give ``max_topic_diameter``, over the topic subgraphs of all online nodes.

    Returns
    -------
    dict
        ``avg_degree``, ``max_degree``, ``degree_ci95``, ``partitioned_topics``,
        ``topic_components`` (summed over topics, each counting only components
        that hold an included subscriber), ``max_topic_diameter`` (with
        ``diameter``) and ``undercovered_nodes`` (included ones).
    """
    ids, overlay, inst = online_view(engine, n_topics)
    inc = np.asarray(included, dtype=bool)[ids]
    deg = overlay.degree()[inc].astype(np.float64)
    comps = topic_components(overlay, inst, measured=inc)
    row: dict[str, Any] = {
        "avg_degree": float(deg.mean()) if len(deg) else 0.0,
        "max_degree": int(deg.max()) if len(deg) else 0,
        "degree_ci95": list(degree_ci95(deg)),
        "partitioned_topics": int((comps > 1).sum()),
        "topic_components": int(comps.sum()),
    }
    if diameter:
        d = topic_diameters(overlay, inst)
        row["max_topic_diameter"] = int(d.max()) if len(d) else 0
    row["undercovered_nodes"] = int((engine.undercovered()[ids] & inc).sum())
    return row
