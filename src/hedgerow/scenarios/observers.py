"""Observers: turn what a run did into rows, from the definitions in :mod:`hedgerow.metrics`.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hedgerow.metrics.attack import slot_stats
from hedgerow.metrics.delivery import (
    delay_percentiles,
    delivery_stats,
    duplicates_per_message,
    relay_share,
)
from hedgerow.scenarios.world import World

__all__ = ["EpochDelivery", "epoch_row", "num"]


def num(x: Any) -> float | None:
    """A finite float, or ``None`` (JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass
class EpochDelivery:
    """The per-message arrays of one epoch's dissemination, gathered over chunks."""

    publisher: np.ndarray
    topic: np.ndarray
    arrival: np.ndarray
    hops: np.ndarray
    copies: np.ndarray
    relay_copies: np.ndarray
    duplicates: np.ndarray

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
) -> dict[str, Any]:
    """One epoch's row (keys in the module docstring)."""
    attack = world.attack
    honest = None if attack is None else attack.honest
    rate, delay = delivery_stats(rec.arrival, rec.publisher, rec.topic, interest, receivers=honest)
    p50, p90, p99 = delay_percentiles(
        rec.arrival, rec.publisher, rec.topic, interest, (50, 90, 99), receivers=honest
    )
    hops = np.where(rec.hops >= 0, rec.hops, np.inf).astype(np.float64)
    _, hops_mean = delivery_stats(hops, rec.publisher, rec.topic, interest, receivers=honest)
    row: dict[str, Any] = {
        "epoch": int(epoch),
        "receive_rate": num(rate),
        "delay_mean_ms": num(delay),
        "delay_p50_ms": num(p50),
        "delay_p90_ms": num(p90),
        "delay_p99_ms": num(p99),
        "hops_mean": num(hops_mean),
        "relay_copies": float(np.mean(rec.relay_copies)) if len(rec.relay_copies) else 0.0,
        "relay_share": num(relay_share(rec.copies, rec.relay_copies)),
        "duplicates_per_message": num(
            duplicates_per_message(rec.copies, rec.arrival, rec.publisher)
        ),
        "avg_score": None
        if scores is None or not np.isfinite(scores).any()
        else float(np.nanmean(scores)),
    }
    if attack is not None:
        if attack.victim_topic is not None:
            vic = rec.topic == attack.victim_topic
            if vic.any():
                vr, vd = delivery_stats(
                    rec.arrival[vic], rec.publisher[vic], rec.topic[vic], interest, receivers=honest
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
