"""Routing measures of a built overlay: one event per topic, the Vitis section IV metrics.

Per-topic scenarios (``Scenario.events`` ``"per-topic"`` / ``"per-topic-owner"``:
``vitis-random``, ``vitis-low``, ``vitis-high``, ``vitis-twitter``) measure a
static build by publishing one event on every topic that has a subscriber
(:meth:`~hedgerow.scenarios.world.World.routing_events`), each weighted by its
topic's publication rate, disseminating them with the protocol's forwarding
rule in chunks (so ``events x nodes`` arrays stay small) and adding them up
with :class:`hedgerow.metrics.routing.RoutingTally`.  The row carries the
measures of :data:`hedgerow.metrics.routing.ROUTING_KEYS` and the degree
figures of :data:`ROUTING_EXTRA`, plus the protocol's scalar build statistics
(e.g. ring correctness, gateways, relays).

Hops are counted by the kernels whatever the latency model; the per-topic
scenarios use constant link delays so the first copy is also the fewest-hop
copy.

Examples
--------
>>> from hedgerow.scenarios.world import make_world
>>> from hedgerow.scenarios.epochs import run_protocol
>>> from hedgerow.protocols import get_protocol
>>> w = make_world("vitis-high", seed=1, nodes=300)
>>> row = run_protocol(get_protocol("complete"), w, forwarding="topic").rows[0]
>>> row["hit_ratio"], row["overhead"], row["delay_hops"], row["events"]
(1.0, 0.0, 1.0, 4788)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.dissemination import disseminate_chunks, edge_delays, entry_topics
from hedgerow.dissemination.routed import TopicLinks
from hedgerow.metrics.routing import RoutingTally
from hedgerow.model.overlay import Overlay
from hedgerow.scenarios.world import World

__all__ = ["ROUTING_EXTRA", "degree_figures", "measure_routing", "routing_row"]

#: degree and setting keys of a routing row, beside the measures
ROUTING_EXTRA = (
    "nodes",
    "share_overhead_above_20",
    "overhead_node_p50",
    "overhead_node_p90",
    "degree_mean",
    "degree_max",
    "out_degree_max",
    "share_degree_above_15",
    "share_degree_above_200",
    "note",
)

#: events disseminated per call (bounds the ``(events, nodes)`` arrays)
EVENT_CHUNK = 512


def measure_routing(
    world: World,
    indptr: np.ndarray,
    indices: np.ndarray,
    policy: str,
    *,
    link_topics: np.ndarray | None = None,
) -> RoutingTally:
    """Disseminate the world's per-topic events over the CSR graph and tally the measures.

    Under ``"mesh"`` (``link_topics``: the ``(u, v, topic)`` rows of the build)
    the events flood their topic's links by the breadth-first pass of
    :class:`hedgerow.dissemination.routed.TopicLinks` (hop counts, as the
    per-topic scenarios' constant delays make them); other policies go
    through the dissemination kernels.
    """
    publisher, topic, weight = world.routing_events()
    masks = world.instance.masks
    tally = RoutingTally(world.n_nodes)
    lt = None if link_topics is None else np.asarray(link_topics, dtype=np.int64).reshape(-1, 3)
    if policy == "mesh" and lt is not None and not (lt[:, 2] < 0).any():
        net = TopicLinks.from_rows(world.n_nodes, world.instance.n_topics, lt)
        for lo in range(0, len(topic), EVENT_CHUNK):
            part = slice(lo, lo + EVENT_CHUNK)
            hops, copies, relay = net.flood(publisher[part], topic[part], masks)
            tally.add(hops, publisher[part], topic[part], masks, weights=weight[part],
                      copies=copies, relay_copies=relay)
        return tally
    labels = None if lt is None else entry_topics(indptr, indices, lt)
    ed = np.asarray(edge_delays(indptr, indices, world.latency), dtype=np.float64)
    for lo in range(0, len(topic), EVENT_CHUNK):
        part = slice(lo, lo + EVENT_CHUNK)
        pub, top, w = publisher[part], topic[part], weight[part]
        for sel, dl, _ in disseminate_chunks(
            indptr, indices, ed, world.proc, masks, pub, top, world.scenario.ttl,
            record_edges=False, policy=policy, labels=labels,
        ):
            tally.add(dl.hops, pub[sel], top[sel], masks, weights=w[sel], copies=dl.copies,
                      relay_copies=dl.relay_copies)
    return tally


def degree_figures(overlay: Overlay) -> dict[str, Any]:
    """Total degree (links both ways) mean / max, out-degree max, shares above 15 and 200.

    The shares are Vitis Fig. 11's figures for OPT ("more than two third of the
    nodes have a degree higher than 15", "0.3% ... higher than 200").

    Examples
    --------
    >>> ov = Overlay.from_edges(3, [(0, 1), (0, 2)], directed=True)
    >>> f = degree_figures(ov)
    >>> f["degree_max"], f["out_degree_max"], f["share_degree_above_15"]
    (2, 2, 0.0)
    """
    closure = overlay
    if overlay.directed:
        closure = Overlay.from_edges(overlay.n_nodes, overlay.edges(), directed=False)
    deg = np.asarray(closure.degree())
    out = np.bincount(overlay.edges()[:, 0], minlength=overlay.n_nodes) if overlay.directed \
        else deg
    return {
        "degree_mean": float(deg.mean()),
        "degree_max": int(deg.max()) if len(deg) else 0,
        "out_degree_max": int(out.max()) if len(out) else 0,
        "share_degree_above_15": float((deg > 15).mean()),
        "share_degree_above_200": float((deg > 200).mean()),
    }


def routing_row(
    epoch: int,
    tally: RoutingTally,
    overlay: Overlay,
    world: World,
    stats: dict[str, Any],
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One row: the routing measures, the degree figures, the protocol's scalar statistics.

    ``rt`` and ``cycles`` are the protocol's own (``params``) when it declares them, else the
    scenario's.
    """
    params = params or {}
    row: dict[str, Any] = {"epoch": epoch}
    for k, v in tally.measures().items():
        row[k] = None if isinstance(v, float) and not np.isfinite(v) else v
    per = tally.node_overhead()
    per = per[np.isfinite(per)]
    row["share_overhead_above_20"] = float((per > 0.2).mean()) if len(per) else None
    row["overhead_node_p50"] = float(np.percentile(per, 50)) if len(per) else None
    row["overhead_node_p90"] = float(np.percentile(per, 90)) if len(per) else None
    row.update(degree_figures(overlay))
    for k, v in stats.items():
        if k in row:
            continue
        if isinstance(v, (bool, int, float, str, np.integer, np.floating, np.bool_)):
            row[k] = v.item() if isinstance(v, np.generic) else v
    row["nodes"] = world.n_nodes
    row["rt"] = int(params.get("rt", world.scenario.rt))
    row["cycles"] = int(params.get("cycles", world.scenario.cycles))
    if world.scenario.note:
        row["note"] = world.scenario.note
    return row
