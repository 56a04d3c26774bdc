"""Churn samples on the contended network: bytes on the wire for maintained and cycle protocols.

A churn run given any network setting (:data:`CHURN_WIRE_SETTINGS`: ``bandwidth``,
``size``, ``publication``, ...; ``docs/network.md``) is
*contended*: at every snapshot, event or sample its driver publishes one
message per topic that has an online subscriber (from a uniform online
subscriber, stream ``"messages"``) and sends them together through
:func:`~hedgerow.dissemination.disseminate_contended` over the overlay of the
online nodes, by the protocol's forwarding rule (``topic`` for the maintained
overlays; ``mesh`` along ``link_topics()`` for the cycle-driven ones).  The row
gains the delivery columns under load and the byte columns
(:data:`~hedgerow.scenarios.observers.BYTES_KEYS`).  Without network settings
nothing here runs and the rows are those of before, byte for byte.

The world of the samples is the one :func:`~hedgerow.scenarios.world.world_for_instance`
makes around the churn run's workload: the nodes placed on the unit square
(latencies), processing delays drawn as a run's, the network of the settings
(streams ``"bandwidth"`` and ``"sizes"``); sample ``k`` takes its sizes,
publication instants and loss and jitter keys from stream ``"wire:k"``.  The
simulation runs on the online nodes alone (offline nodes hold no link and
send nothing), so bytes per node are per online node, and the delivery
columns are over the driver's measured receivers (online, joined long enough
ago), the publisher excluded.

Columns (:data:`CHURN_WIRE_KEYS`): ``wire_messages`` (messages of the sample),
``receive_rate``, ``delay_mean_ms``, ``delay_p50_ms``, ``delay_p90_ms``,
``delay_p99_ms``, ``hops_mean``, ``duplicates_per_message``, then
:data:`~hedgerow.scenarios.observers.BYTES_KEYS`.

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0], [0], [0], [0]], n_topics=1)
>>> cw = ChurnWire.create(inst, seed=1, wire={"bandwidth": "8", "size": "1000"},
...                       policy="topic")
>>> online = np.array([True, True, True, False])
>>> edges = np.array([[0, 1], [1, 2], [2, 3]])
>>> row = cw.measure(online, edges, inst.masks, np.array([0]), np.array([0]), online)
>>> row["wire_messages"], row["receive_rate"], row["sent_payload_max"]
(1, 1.0, 1000.0)
>>> ChurnWire.create(inst, seed=1, wire={}, policy="topic") is None
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hedgerow.dissemination import MessageBatch, disseminate_contended
from hedgerow.dissemination.mesh import entry_topics
from hedgerow.errors import ParameterError
from hedgerow.metrics.delivery import delivery_measures
from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.params import check_memory
from hedgerow.scenarios.observers import BYTES_KEYS, num, wire_measures
from hedgerow.scenarios.world import World, world_for_instance
from hedgerow.scenarios.world.wire import (
    WIRE_SETTINGS,
    parse_bandwidth,
    parse_publication,
    parse_size,
)
from hedgerow.world_settings import WORLD_SETTINGS, check_setting

__all__ = ["CHURN_WIRE_KEYS", "CHURN_WIRE_SETTINGS", "ChurnWire", "wire_settings"]

#: the columns a contended churn row gains, in order
CHURN_WIRE_KEYS = (
    "wire_messages",
    "receive_rate",
    "delay_mean_ms",
    "delay_p50_ms",
    "delay_p90_ms",
    "delay_p99_ms",
    "hops_mean",
    "duplicates_per_message",
    *BYTES_KEYS,
)


#: the network settings a churn run takes (declared with ``also=("churn",)``)
CHURN_WIRE_SETTINGS = tuple(k for k in WIRE_SETTINGS if "churn" in WORLD_SETTINGS[k].also)

#: bytes a sample holds per (message, online node): the kernel's 28 (``docs/network.md``,
#: "Memory and time") and the delivery measures' copies
_PAIR_BYTES = 48.0

#: the written forms among the network settings, read (and refused) by their parsers
_FORMS = {"bandwidth": parse_bandwidth, "size": parse_size, "publication": parse_publication}


def wire_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The network settings among ``settings`` that were given (``None``: not given), each
    checked by its declaration and its written form (a one-line error naming it).

    Examples
    --------
    >>> wire_settings({"bandwidth": "25:50", "size": None, "lifetime": 100.0})
    {'bandwidth': '25:50'}
    >>> wire_settings({"size": "huge"})
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: size: 'huge' is not a number of bytes (k, m suffixes)
    """
    out = {}
    for k in WIRE_SETTINGS:
        if settings.get(k) is None:
            continue
        if k not in CHURN_WIRE_SETTINGS:
            raise ParameterError(
                f"{k} is not a setting of churn runs (their samples send no control traffic);"
                f" churn network settings: {', '.join(CHURN_WIRE_SETTINGS)}", key=k)
        out[k] = check_setting(k, settings[k], owner="churn")
        if k in _FORMS:
            _FORMS[k](out[k])
    return out


@dataclass
class ChurnWire:
    """The contended network of a churn run and the counter of its samples.

    Attributes
    ----------
    world : World
        The world made around the run's workload with the network settings.
    policy : str
        The forwarding rule (``"topic"``, or ``"mesh"`` with ``link_topics``).
    samples : int
        Samples measured so far (sample ``k`` draws from stream ``"wire:k"``).
    """

    world: World
    policy: str
    samples: int = 0

    @classmethod
    def create(cls, instance: Instance, *, seed: int, wire: Mapping[str, Any],
               policy: str) -> ChurnWire | None:
        """The contended network of a run on ``instance``, or ``None`` when ``wire`` sets no
        network (every setting absent or at its default): the run is then today's."""
        given = wire_settings(wire)
        if not given:
            return None
        world = world_for_instance(instance, seed=seed, **given)
        if not world.contended:
            return None
        none = np.zeros(0, dtype=np.int64)
        world.wire(0, none, none)  # sizes per topic: one per topic, refused now rather than late
        return cls(world, policy)

    def measure(
        self,
        online: np.ndarray,
        edges: np.ndarray | None,
        masks: np.ndarray,
        publisher: np.ndarray,
        topic: np.ndarray,
        receivers: np.ndarray,
        *,
        link_topics: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """One sample's columns (:data:`CHURN_WIRE_KEYS`).

        Parameters
        ----------
        online : numpy.ndarray
            Bool ``(n,)``: the nodes that take part (the others are left out).
        edges : numpy.ndarray or None
            ``(k, 2)`` undirected links (node ids of the run); links with an offline
            end are dropped.  ``None`` with ``link_topics``: the links they name.
        masks : numpy.ndarray
            The current subscriptions (``Instance.masks`` of every node).
        publisher, topic : numpy.ndarray
            The sample's messages; publishers are online.
        receivers : numpy.ndarray
            Bool ``(n,)``: the nodes the delivery columns are over.
        link_topics : numpy.ndarray, optional
            ``(k, 3)`` rows ``(u, v, topic)``, for the ``"mesh"`` rule.
        """
        world = self.world
        number = self.samples
        self.samples += 1
        if len(topic) == 0:
            return {"wire_messages": 0, **dict.fromkeys(CHURN_WIRE_KEYS[1:])}
        on = np.asarray(online, dtype=bool)
        ids = np.flatnonzero(on)
        # one simulation, every message of the sample: refused before allocating when its
        # (message, node) tables (the kernel's 28 bytes a pair, and the measures') do not fit
        check_memory(f"a contended churn sample of {len(topic):,} messages on {len(ids):,} "
                     "online nodes", _PAIR_BYTES * len(topic) * len(ids))
        local = np.full(len(on), -1, dtype=np.int64)
        local[ids] = np.arange(len(ids))
        rows = None
        if link_topics is not None:
            lt = np.asarray(link_topics, dtype=np.int64).reshape(-1, 3)
            lt = lt[(local[lt[:, 0]] >= 0) & (local[lt[:, 1]] >= 0)]
            rows = np.column_stack([local[lt[:, 0]], local[lt[:, 1]], lt[:, 2]])
            pairs = rows[:, :2]
        else:
            assert edges is not None, "edges, or link_topics for the mesh rule"
            e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
            e = e[(local[e[:, 0]] >= 0) & (local[e[:, 1]] >= 0)]
            pairs = local[e]
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        csr = Overlay.from_edges(len(ids), pairs).undirected_csr()
        indptr, indices = csr.indptr, csr.indices
        src = np.repeat(np.arange(len(ids), dtype=np.int64), np.diff(indptr))
        delay = np.ascontiguousarray(world.latency.delay(ids[src], ids[indices]),
                                     dtype=np.float64)
        net = world.network
        assert net is not None
        net = dataclasses.replace(net, upload=net.upload[ids], download=net.download[ids])
        sub_masks = np.ascontiguousarray(np.asarray(masks)[ids])
        pub = local[np.asarray(publisher, dtype=np.int64)]
        size, published, rng = world.wire(number, topic, publisher)
        labels = None if rows is None else entry_topics(indptr, indices, rows)
        d = disseminate_contended(
            indptr, indices, delay, world.proc[ids], sub_masks,
            MessageBatch.create(pub, topic, world.scenario.ttl), net, size=size,
            publish_at=published, policy=self.policy, labels=labels, rng=rng,
        )
        interest = interest_matrix(sub_masks, world.instance.n_topics)
        rec = np.asarray(receivers, dtype=bool)[ids]
        m = delivery_measures(d.arrival, pub, np.asarray(topic), interest, receivers=rec,
                              hops=d.hops)
        row: dict[str, Any] = {"wire_messages": len(topic)}
        for k in CHURN_WIRE_KEYS[1:6]:
            row[k] = num(m[k])
        row["hops_mean"] = num(m["hops_mean"])
        row["duplicates_per_message"] = float(np.mean(d.duplicates))
        row.update(wire_measures(d, interest, rec))
        return row
