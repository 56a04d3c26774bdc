"""Gossip-built overlays under churn, cycle by cycle (Vitis, IPDPS 2011, section IV-F, Fig. 12).

Vitis section IV-F replays a Skype superpeer trace (4,000 nodes, one month)
with RT 15 and uniform rates, measuring "the hit ratio for a node ... 10
seconds after the node joins the system"; Fig. 12 shows hit ratio, overhead
and delay over time, with RVR dropping to 87% under a flash crowd and Vitis
staying near 99%.  We have no Skype trace: the controls are the flash crowd of
:func:`hedgerow.scenarios.churn.flash_crowd` and a replayed trace
(:func:`hedgerow.scenarios.traces.trace_churn`, e.g. the Google 2011 machine
events of ``hedgerow ingest churn``).

The driver is cycle-driven, as the gossip layer: one cycle is one second
(``delta t`` of Algorithm 1).  It runs any protocol of capability ``cycle``
(:class:`~hedgerow.protocols.base.CycleProtocol`: Vitis, RVR) through the
engine its ``cycle_engine(instance, streams)`` returns, a
:class:`~hedgerow.protocols.engine_api.CycleEngine`, and through nothing
else: ``link_topics()`` gives the per-topic forwarding links now (the
``"mesh"`` rule; for Vitis the relay paths of the current gateways, rebuilt at
every sample as the gateways' periodic RequestRelay).
Every ``sample_every`` cycles the observer publishes one event per topic
that has an online subscriber (from a uniform online subscriber) and
measures, with :mod:`hedgerow.metrics.routing`, the hit ratio and delay
over the online subscribers that joined at least ``grace`` cycles ago (10,
the paper's 10 s) and the overhead over every reception.

Examples
--------
>>> import numpy as np
>>> from hedgerow.scenarios.churn import flash_crowd
>>> from hedgerow.workloads.correlated import correlated_instance
>>> inst = correlated_instance(200, topics=100, buckets=10, subs=10, correlation="high")
>>> on, ev = flash_crowd(200, 200.0, 60.0, np.random.default_rng(0), at=30.0)
>>> rows = run_gossip_churn("rvr", inst, on, ev, duration=60, sample_every=20, seed=1,
...                         params={"rt": 6})
>>> [r["cycle"] for r in rows], all(0.0 <= r["hit_ratio"] <= 1.0 for r in rows)
([20, 40, 60], True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from hedgerow.dissemination.routed import TopicLinks
from hedgerow.errors import ParameterError
from hedgerow.metrics.routing import RoutingTally
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.base import CycleProtocol
from hedgerow.protocols.engine_api import CycleEngine
from hedgerow.scenarios.churn_setup import churn_control, churn_protocol
from hedgerow.scenarios.churn_wire import ChurnWire
from hedgerow.scenarios.traces import JOIN, LEAVE

__all__ = ["run_gossip_churn", "sample_events"]


def sample_events(
    instance: Instance, online: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One event per topic with an online subscriber, from a uniform online subscriber.

    Returns ``(publisher, topic, weight)``; the weight is the topic's rate (1 without rates).

    Examples
    --------
    >>> inst = Instance.from_lists([[0], [0, 1], [1]], n_topics=3)
    >>> pub, top, w = sample_events(inst, np.array([False, True, True]),
    ...                             np.random.default_rng(0))
    >>> top.tolist(), pub.tolist()
    ([0, 1], [1, 1])
    """
    on = np.asarray(online, bool)
    nodes = instance.topic_nodes
    live = on[nodes]
    cs = np.concatenate([[0], np.cumsum(live.astype(np.int64))])
    ip = instance.topic_indptr
    counts = cs[ip[1:]] - cs[ip[:-1]]
    topic = np.flatnonzero(counts > 0).astype(np.int64)
    live_nodes = nodes[live]
    pick = cs[ip[topic]] + np.minimum((rng.random(len(topic)) * counts[topic]).astype(np.int64),
                                      counts[topic] - 1)
    publisher = live_nodes[pick].astype(np.int64)
    rates = instance.topic_rates
    weight = np.ones(len(topic)) if rates is None else np.asarray(rates)[topic]
    return publisher, topic, weight


def run_gossip_churn(
    protocol: str,
    instance: Instance,
    online0: np.ndarray,
    events: np.ndarray,
    *,
    duration: int,
    sample_every: int = 5,
    grace: int = 10,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    wire: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run a gossip protocol for ``duration`` cycles under a join/leave control; rows per sample.

    Parameters
    ----------
    protocol : str
        A protocol of capability ``cycle`` (``rvr``, ``vitis``); its parameters in ``params``.
    instance : Instance
        Subscriptions (kept by rejoining nodes, section IV-F changes none).
    online0, events : numpy.ndarray
        The control: nodes online at cycle 0 and :data:`~hedgerow.scenarios.traces.EVENT_DTYPE`
        events in seconds (= cycles), e.g. from :func:`~hedgerow.scenarios.churn.flash_crowd`.
    duration, sample_every, grace : int
        Cycles to run, cycles between samples, cycles after a join before a node counts as a
        receiver.
    seed : int
        The run's seed (the protocol's streams and the events' ``"messages"`` stream).
    wire : mapping, optional
        Network settings (``bandwidth``, ``size``, ``publication``, ...): each sample's
        events are also sent through the contended network along the forwarding links
        (``"mesh"``), and the row gains
        :data:`~hedgerow.scenarios.churn_wire.CHURN_WIRE_KEYS`.

    Returns
    -------
    list of dict
        Per sample: ``cycle``, ``online``, ``measured`` (receivers), ``ring_correct``,
        ``hit_ratio``, ``overhead``, ``overhead_copies``, ``delay_hops``, ``delay_hops_max``,
        ``events``; with ``wire``, the delivery and byte columns under load.
    """
    if duration < 1 or sample_every < 1 or grace < 0:
        raise ParameterError("duration and sample_every must be >= 1 cycle, grace >= 0",
                             key="duration")
    setup = churn_protocol(protocol, instance, capability="cycle", seed=seed, params=params)
    online0, ev = churn_control(instance, online0, events)
    eng: CycleEngine = cast(CycleProtocol, setup.proto).cycle_engine(instance, setup.streams)
    eng.start(online0)
    joined = np.where(np.asarray(online0, bool), 0, np.iinfo(np.int64).max).astype(np.int64)
    rng = RngStreams(seed).stream("messages")
    masks = instance.masks
    on_wire = ChurnWire.create(instance, seed=seed, wire=wire or {}, policy="mesh")
    rows: list[dict[str, Any]] = []
    pos = 0
    for c in range(1, duration + 1):
        upto = int(np.searchsorted(ev["time_s"], float(c), side="right"))
        batch = ev[pos:upto]
        pos = upto
        if len(batch):
            # in order: a node may leave and rejoin within one cycle
            for kind_, node in zip(batch["event"].tolist(), batch["node"].tolist(),
                                   strict=True):
                if kind_ == JOIN and not eng.online[node]:
                    eng.join(np.array([node]))
                    joined[node] = c
                elif kind_ == LEAVE and eng.online[node]:
                    eng.leave(np.array([node]))
        eng.cycle()
        if c % sample_every:
            continue
        receivers = eng.online & (joined <= c - grace)
        pub, top, w = sample_events(instance, eng.online, rng)
        link_topics = eng.link_topics()
        net = TopicLinks.from_rows(instance.n_nodes, instance.n_topics, link_topics)
        tally = RoutingTally(instance.n_nodes)
        for lo in range(0, len(top), 512):
            part = slice(lo, lo + 512)
            hops, copies, relay = net.flood(pub[part], top[part], masks)
            tally.add(hops, pub[part], top[part], masks, weights=w[part], copies=copies,
                      relay_copies=relay, receivers=receivers)
        m = tally.measures()
        row = {
            "cycle": c,
            "online": int(eng.online.sum()),
            "measured": int(receivers.sum()),
            "ring_correct": float(eng.ring_correct()),
            **{k: (None if isinstance(v, float) and not np.isfinite(v) else v)
               for k, v in m.items() if k != "overhead_node_mean"},
        }
        if on_wire is not None:
            row.update(on_wire.measure(eng.online, None, masks, pub, top, receivers,
                                       link_topics=link_topics))
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows
