"""The :class:`World` type: everything a protocol runs in, built once per (scenario, seed).

Random streams of the world (from ``RngStreams(seed)``): ``"workload"`` (the
subscriptions), ``"latency"`` (positions or a subset of a real data set),
``"processing"`` (processing delays), ``"attackers"`` and ``"messages"`` (the
traffic: epoch ``e`` takes the ``e``-th draw of that stream); broadcast worlds
add ``"publishers"`` (who publishes, with which probability) and
``"adaptive"`` (which nodes re-select their peers); churn ``"churn"``;
contended worlds ``"bandwidth"``, ``"sizes"`` and ``"wire:E"``
(:mod:`~hedgerow.scenarios.world.wire`).

Broadcast worlds (``workload="broadcast"``; Goldfish section V, Perigee): one
topic every node subscribes to; each message's publisher is drawn i.i.d. from
the world's publishing probabilities (:mod:`hedgerow.workloads.publishers`),
from the ``"messages"`` stream, so every protocol sees the same message
sequence under one seed.  Only ``adaptive`` nodes (``--adaptive N``, drawn
uniformly) re-select their out-links; the others keep their starting ones.

Examples
--------
>>> from hedgerow.scenarios.world import make_world
>>> w = make_world("cities", seed=1, topics=10)
>>> w.n_nodes, w.instance.n_topics, w.latency.name
(246, 10, 'cities')
>>> w.fingerprint() == make_world("cities", seed=1, topics=10).fingerprint()
True
>>> w.fingerprint() == make_world("cities", seed=2, topics=10).fingerprint()
False
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hedgerow.dissemination.contended import ControlBatch, Network
from hedgerow.errors import DataError
from hedgerow.latency import LatencyModel
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.control import ControlRounds
from hedgerow.scenarios.attackers import AttackSetup
from hedgerow.scenarios.epoch_churn import (
    onoff_schedule,
    parse_churn,
    parse_trace,
    trace_schedule,
)
from hedgerow.scenarios.world.catalogue import Scenario
from hedgerow.scenarios.world.wire import epoch_control, epoch_wire
from hedgerow.workloads.publishers import draw_publishers
from hedgerow.workloads.traffic import draw_messages

__all__ = ["World"]


@dataclass(frozen=True)
class World:
    """Everything a protocol runs in, built once per (scenario, seed).

    Attributes
    ----------
    scenario : Scenario
        The resolved setting.
    seed : int
        The run's seed.
    instance : Instance
        Subscriptions (attackers' professed interest included).
    publishers : Instance
        Who may publish on each topic.
    latency : LatencyModel
        One-way link delays (ms).
    proc : numpy.ndarray
        ``(n,)`` processing delay of each node (ms).
    attack : AttackSetup or None
        The attackers, when the scenario has any.
    publisher_probs : numpy.ndarray or None
        Broadcast worlds: ``(n,)`` publishing probability of each node.
    adaptive_mask : numpy.ndarray or None
        Broadcast worlds: bool ``(n,)``, the nodes that re-select their peers
        (``None``: every node).
    network : Network or None
        The bandwidth and per-copy effects messages contend for
        (:func:`~hedgerow.scenarios.world.wire.world_network`); ``None``: the
        uncontended model (no setting of
        :data:`~hedgerow.scenarios.world.wire.WIRE_SETTINGS` given).
    """

    scenario: Scenario
    seed: int
    instance: Instance
    publishers: Instance
    latency: LatencyModel
    proc: np.ndarray
    attack: AttackSetup | None = None
    publisher_probs: np.ndarray | None = None
    adaptive_mask: np.ndarray | None = None
    network: Network | None = None
    _fingerprint: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return self.instance.n_nodes

    @property
    def honest(self) -> np.ndarray:
        """Bool mask of honest nodes (all when there are no attackers)."""
        if self.attack is None:
            return np.ones(self.n_nodes, dtype=bool)
        return self.attack.honest

    @property
    def active(self) -> np.ndarray:
        """Nodes that run the protocol's own neighbour selection."""
        if self.attack is None:
            return np.ones(self.n_nodes, dtype=bool)
        return np.asarray(self.attack.update, dtype=bool)

    @property
    def adaptive(self) -> np.ndarray:
        """Bool mask of the nodes that re-select their peers (all unless the world says)."""
        if self.adaptive_mask is None:
            return np.ones(self.n_nodes, dtype=bool)
        return np.asarray(self.adaptive_mask, dtype=bool)

    @property
    def contended(self) -> bool:
        """Whether the world's messages contend for bandwidth (it has a :attr:`network`)."""
        return self.network is not None

    def wire(
        self, epoch: int, topic: np.ndarray, publisher: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
        """Epoch ``epoch``'s message sizes, publication instants and loss/jitter generator.

        Streams ``"wire:E"`` and ``"sizes"``
        (:func:`~hedgerow.scenarios.world.wire.epoch_wire`); ``publisher`` is
        needed by a per-publisher publication process.
        """
        return epoch_wire(self.scenario, self.seed, epoch, topic, self.instance.n_topics,
                          publisher)

    def control(
        self,
        epoch: int,
        published: np.ndarray,
        traffic: Callable[[ControlRounds], ControlBatch | None],
    ) -> ControlBatch | None:
        """Epoch ``epoch``'s control messages of a protocol (``traffic``, its
        ``control_traffic``), sized, with latencies; ``None`` when ``control_size`` is 0.

        Stream ``"control:E"`` (:func:`~hedgerow.scenarios.world.wire.epoch_control`).
        """
        return epoch_control(self.scenario, self.seed, epoch, published, self.latency, traffic)

    def online_schedule(self, epochs: int) -> np.ndarray | None:
        """``(epochs, n)`` bool: who takes part in each epoch (``None`` without churn).

        Stream ``"churn"``; see :mod:`hedgerow.scenarios.epoch_churn`.
        """
        if self.scenario.churn is None:
            return None
        trace = parse_trace(self.scenario.churn)
        if trace is not None:
            # lazy: the trace readers pull in pandas and the churn-scenario registry
            from hedgerow.scenarios.inputs import input_folder
            from hedgerow.scenarios.traces import load_events

            name, hours = trace
            folder = input_folder(name)
            if not folder.exists():
                raise DataError(f"churn trace {name!r} missing: run hedgerow ingest churn "
                                f"(expected {folder})")
            ev = load_events(folder)
            return trace_schedule(ev["time_s"], ev["node"], ev["event"], self.n_nodes,
                                  int(epochs), hours * 3600.0)
        frac, on, off = parse_churn(self.scenario.churn)
        rng = RngStreams(self.seed).stream("churn")
        return onoff_schedule(self.n_nodes, int(epochs), frac, on, off, rng)

    def traffic(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The epochs' messages ``(publisher, topic)``, epoch after epoch (the same for all).

        Topic uniform among topics with a possible publisher, publisher
        uniform among the topic's publishers (:func:`hedgerow.workloads.traffic.draw_messages`).
        """
        rng = RngStreams(self.seed).stream("messages")
        m = self.scenario.messages
        if self.publisher_probs is not None:
            topic = np.zeros(m, dtype=np.int64)
            while True:
                yield draw_publishers(self.publisher_probs, m, rng), topic
        while True:
            if self.scenario.events == "traffic":
                yield draw_messages(self.publishers, m, rng)
            else:
                publisher, topic, _ = self.routing_events(rng)
                yield publisher, topic

    def routing_events(
        self, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One event per topic with a subscriber: ``(publisher, topic, weight)``.

        The publisher is a uniform subscriber of the topic (``per-topic``) or
        the user who is the topic (``per-topic-owner``); the weight is the
        topic's publication rate (1 when the instance has none), so weighted
        aggregates are the exact expectation over the publication law (Vitis
        reading A10).
        """
        inst = self.publishers
        rng = RngStreams(self.seed).stream("messages") if rng is None else rng
        sizes = inst.topic_sizes
        topic = np.flatnonzero(sizes > 0).astype(np.int64)
        if self.scenario.events == "per-topic-owner":
            publisher = topic.copy()
        else:
            offset = np.minimum((rng.random(len(topic)) * sizes[topic]).astype(np.int64),
                                sizes[topic] - 1)
            publisher = inst.topic_nodes[inst.topic_indptr[topic] + offset].astype(np.int64)
        rates = inst.topic_rates
        weight = np.ones(len(topic)) if rates is None else np.asarray(rates)[topic]
        return publisher, topic, weight

    def fingerprint(self) -> str:
        """The ``world`` of every row made in this world: a 16-hex hash of what a protocol meets.

        That is the subscriptions and who may publish, the network (latencies
        and processing delays), the attackers, the publishing law and adaptive
        nodes, the churn and the traffic (messages per epoch, TTL, the
        routing events and the first epoch's messages).  It leaves out what
        is not the world but the run's length or a protocol's budget
        (``epochs``, ``d``, ``rt``, ``cycles``), so a build, a run and a churn
        run in the same world carry the same value (build and churn rows use
        :func:`~hedgerow.scenarios.world.instance_fingerprint`, the world made
        around their instance).
        """
        if self._fingerprint:
            return self._fingerprint[0]
        h = hashlib.sha256()

        def add(*arrays: Any) -> None:
            for a in arrays:
                arr = np.ascontiguousarray(a)
                h.update(str(arr.dtype).encode() + str(arr.shape).encode())
                h.update(arr.tobytes())

        inst, pubs, lat = self.instance, self.publishers, self.latency
        add(np.int64(inst.n_topics), inst.sub_indptr, inst.sub_topics)
        add(pubs.sub_indptr, pubs.sub_topics)
        h.update(lat.name.encode())
        for attr in ("_matrix", "positions", "constant_ms", "scale_ms", "group", "group_matrix"):
            value = getattr(lat, attr, None)
            if value is not None:
                add(np.asarray(value))
        add(self.proc)
        for extra in (self.publisher_probs, self.adaptive_mask):
            if extra is not None:
                add(extra)
        sc = self.scenario
        add(np.array([sc.messages, sc.ttl], dtype=np.int64))
        if sc.churn is not None:
            h.update(f"churn={sc.churn}".encode())
        if sc.events != "traffic":
            h.update(sc.events.encode())
            if inst.topic_rates is not None:
                add(inst.topic_rates)
        if self.attack is not None:
            a = self.attack
            h.update(a.kind.encode())
            add(a.attackers, a.update)
            if a.fixed_edges is not None:
                add(a.fixed_edges)
            if a.silent is not None:
                add(a.silent, np.int64(-1 if a.victim_topic is None else a.victim_topic))
        publisher, topic = next(self.traffic())
        add(publisher, topic)
        net = self.network
        if net is not None:  # a contended world: its network and the first epoch's bytes
            add(net.upload, net.download)
            h.update(repr((net.download_queues, net.validation_ms, net.validation_ms_per_byte,
                           net.loss, net.jitter_ms)).encode())
            size, published, _ = self.wire(0, topic, publisher)
            add(size, published)
            if self.scenario.control_size > 0:  # control messages on the wire
                h.update(repr(("control", self.scenario.control_size,
                               self.scenario.control_entry_size,
                               self.scenario.control_period_ms)).encode())
        self._fingerprint.append(h.hexdigest()[:16])
        return self._fingerprint[0]
