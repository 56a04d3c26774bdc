"""Pictures of one overlay, and its export as GraphML.

:func:`make_overlay` runs a registered protocol on a named scenario
(:func:`hedgerow.scenarios.simulate`: static protocols build once, adaptive
ones run the scenario's epochs) and returns its final overlay and world.
:func:`node_layout` places the nodes:

* **ring** — ring-based protocols (RingPT, Scribe, and any protocol class
  that sets ``layout = "ring"``) on a circle by node id, whatever the world;
* **geo** — worlds with geographic coordinates (``cities``): longitude and
  latitude in degrees, drawn on a plain graticule (no map tiles, no network);
* **plane** — worlds with planar positions (``unit-square``,
  ``rss-unit-square``): the positions themselves;
* **circle** — anything else: a circle by id.

:func:`draw_overlay` draws links in grey and, with ``topic``, the topic's
subscribers and the links between them highlighted, each connected
component of the topic subgraph in its own colour when it is partitioned.
:func:`write_graphml` exports the overlay (node attributes: position,
number of topics, degree, whether it subscribes to ``topic`` and its
component; link attributes: one-way latency in ms and whether the link is
inside the topic) through networkx, which is used for interop only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from hedgerow.errors import ParameterError
from hedgerow.protocols import protocol_class

__all__ = [
    "RING_PROTOCOLS",
    "draw_overlay",
    "make_overlay",
    "node_layout",
    "topic_components",
    "write_graphml",
]

#: protocols whose structure is a ring (or rings) of node ids
RING_PROTOCOLS = frozenset({"ringpt", "scribe-random", "scribe-topic"})


def make_overlay(
    protocol: str,
    scenario: str,
    *,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    **settings: Any,
):
    """``(overlay, world)`` of ``protocol`` run on ``scenario`` (final epoch).

    A protocol that is only maintained (OMen) has no one-shot build: its engine starts with
    every node of the world online and the overlay is drawn once its start has settled. A
    protocol on the clock (GossipSub) is drawn as its connection graph after the run.
    """
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.base import MaintainedProtocol, capabilities

    caps = capabilities(protocol_class(protocol))
    if {"static", "adaptive", "clock"} & set(caps):
        from hedgerow.scenarios import simulate

        res = simulate(protocol, scenario, seed=seed, params=params, **settings)
        return res.overlay, res.world
    from hedgerow.engine import Simulator
    from hedgerow.scenarios import make_world

    world = make_world(scenario, seed=seed, **{k: v for k, v in settings.items()
                                               if k == "nodes"})
    proto = cast(MaintainedProtocol, get_protocol(protocol, **dict(params or {})))
    proto.check_params()
    engine = proto.maintenance_engine(
        world.instance, proto.streams(seed), sim=Simulator()
    )
    engine.start(np.ones(world.n_nodes, dtype=bool))
    engine.run_until(engine.sim.now + 500.0)
    return engine.overlay(), world


def _is_ring(protocol: str) -> bool:
    return protocol in RING_PROTOCOLS or protocol_class(protocol).layout == "ring"


def node_layout(world: Any, protocol: str) -> tuple[np.ndarray, str]:
    """``(n, 2)`` coordinates of the nodes and the layout's name (``ring|geo|plane|circle``).

    Examples
    --------
    >>> from hedgerow.scenarios import make_world
    >>> xy, kind = node_layout(make_world("unit-square", seed=1, nodes=30), "topiary")
    >>> xy.shape, kind
    ((30, 2), 'plane')
    """
    n = world.n_nodes
    lat = world.latency
    if _is_ring(protocol):
        kind = "ring"
    elif getattr(lat, "coords", None) is not None:
        c = np.asarray(lat.coords, dtype=float)
        return np.column_stack([c[:, 1], c[:, 0]]), "geo"
    elif getattr(lat, "positions", None) is not None and lat.positions.shape[1] >= 2:
        return np.asarray(lat.positions[:, :2], dtype=float), "plane"
    else:
        kind = "circle"
    angle = 2 * np.pi * np.arange(n) / max(1, n)
    return np.column_stack([np.cos(angle), np.sin(angle)]), kind


def _undirected_edges(overlay: Any) -> np.ndarray:
    e = np.asarray(overlay.edges(), dtype=np.int64).reshape(-1, 2)
    if overlay.directed and len(e):
        e = np.unique(np.sort(e, axis=1), axis=0)
    return e


def topic_components(overlay: Any, world: Any, topic: int) -> np.ndarray:
    """Component label of every node in ``topic``'s subgraph (``-1`` for non-subscribers).

    Components are numbered from 0 by size, largest first.
    """
    inst = world.instance
    if not 0 <= topic < inst.n_topics:
        raise ParameterError(f"--topic must be in 0..{inst.n_topics - 1}, got {topic}",
                             key="topic")
    subs = np.asarray(inst.subscribers(topic), dtype=np.int64)
    out = np.full(world.n_nodes, -1, dtype=np.int64)
    if subs.size == 0:
        return out
    idx = np.full(world.n_nodes, -1, dtype=np.int64)
    idx[subs] = np.arange(subs.size)
    e = _undirected_edges(overlay)
    keep = (idx[e[:, 0]] >= 0) & (idx[e[:, 1]] >= 0) if len(e) else np.zeros(0, bool)
    e = e[keep]
    a = sp.coo_array((np.ones(len(e)), (idx[e[:, 0]], idx[e[:, 1]])), shape=(subs.size,) * 2)
    _, lab = connected_components(a, directed=False)
    sizes = np.bincount(lab)
    rank = np.empty_like(sizes)
    rank[np.argsort(-sizes, kind="stable")] = np.arange(sizes.size)
    out[subs] = rank[lab]
    return out


def check_image_path(path: str | Path) -> Path:
    """Refuse, before any build, an image path whose suffix matplotlib cannot write.

    Examples
    --------
    >>> check_image_path("overlay.svg").suffix
    '.svg'
    >>> check_image_path("overlay.jpeg2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: --out overlay.jpeg2: unknown image format 'jpeg2' (use ...)
    """
    from matplotlib.figure import Figure

    p = Path(path)
    kinds = sorted(Figure().canvas.get_supported_filetypes())
    fmt = p.suffix[1:].lower()
    if fmt not in kinds:
        raise ParameterError(f"--out {p}: unknown image format {fmt!r} (use one of: "
                             f"{', '.join(kinds)})", key="out")
    return p


def draw_overlay(
    overlay: Any,
    world: Any,
    *,
    protocol: str,
    topic: int | None = None,
    title: str = "",
):
    """A matplotlib figure of the overlay (see the module docstring for the layouts)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    xy, kind = node_layout(world, protocol)
    e = _undirected_edges(overlay)
    fig, ax = plt.subplots(figsize=(9, 5.2) if kind == "geo" else (7, 7))
    alpha = float(np.clip(40.0 / max(1.0, np.sqrt(len(e) + 1)), 0.03, 0.5))
    if len(e):
        ax.add_collection(LineCollection(xy[e], colors="0.55", linewidths=0.4, alpha=alpha,
                                         zorder=1))
    ax.scatter(xy[:, 0], xy[:, 1], s=6 if world.n_nodes > 300 else 14, c="0.35", zorder=2,
               lw=0)
    note = f"{world.n_nodes} nodes, {len(e)} links"
    if topic is not None:
        comp = topic_components(overlay, world, topic)
        members = comp >= 0
        n_comp = int(comp.max()) + 1 if members.any() else 0
        cmap = plt.get_cmap("tab10")
        inside = e[members[e[:, 0]] & members[e[:, 1]]] if len(e) else e
        colours = [cmap(int(comp[u]) % 10) for u, _ in inside] if n_comp > 1 else "tab:red"
        if len(inside):
            ax.add_collection(LineCollection(xy[inside], colors=colours, linewidths=1.1,
                                             alpha=0.9, zorder=3))
        nc = [cmap(int(c) % 10) for c in comp[members]] if n_comp > 1 else "tab:red"
        ax.scatter(xy[members, 0], xy[members, 1], s=28, c=nc, zorder=4, edgecolors="k",
                   linewidths=0.4)
        note += (f"; topic {topic}: {int(members.sum())} subscribers, {len(inside)} links, "
                 f"{n_comp} component{'s' if n_comp != 1 else ''}"
                 + (" (partitioned: one colour per component)" if n_comp > 1 else ""))
    if kind == "geo":
        ax.set_xlim(-180, 180)
        ax.set_ylim(-90, 90)
        ax.set_xticks(range(-180, 181, 30))
        ax.set_yticks(range(-90, 91, 30))
        ax.grid(alpha=0.35, lw=0.5)  # graticule, no coastlines
        ax.set_xlabel("longitude (°)")
        ax.set_ylabel("latitude (°)")
        ax.set_aspect("equal")
    elif kind == "plane":
        ax.set_aspect("equal")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    else:
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title("nodes on a circle by id", fontsize=8, loc="left")
    ax.autoscale_view()
    fig.suptitle(title or f"{protocol} — {note}", fontsize=9)
    if title:
        ax.set_title(note, fontsize=8)
    fig.tight_layout()
    return fig


def write_graphml(
    overlay: Any,
    world: Any,
    path: str | Path,
    *,
    protocol: str,
    topic: int | None = None,
) -> Path:
    """Write the overlay as GraphML (undirected) with node and link attributes."""
    import networkx as nx

    xy, kind = node_layout(world, protocol)
    inst = world.instance
    deg = np.zeros(world.n_nodes, dtype=np.int64)
    e = _undirected_edges(overlay)
    np.add.at(deg, e.ravel(), 1)
    comp = topic_components(overlay, world, topic) if topic is not None else None
    g = nx.Graph(protocol=protocol, layout=kind, scenario=world.scenario.name,
                 seed=int(world.seed))
    n_topics = np.diff(np.asarray(inst.sub_indptr))
    for u in range(world.n_nodes):
        attrs: dict[str, Any] = {"x": float(xy[u, 0]), "y": float(xy[u, 1]),
                                 "topics": int(n_topics[u]), "degree": int(deg[u])}
        if kind == "geo":
            attrs.update(longitude=float(xy[u, 0]), latitude=float(xy[u, 1]))
        if comp is not None:
            attrs.update(subscribes=bool(comp[u] >= 0), component=int(comp[u]))
        g.add_node(int(u), **attrs)
    delays = (np.asarray(world.latency.delay(e[:, 0], e[:, 1]), dtype=float) if len(e)
              else np.zeros(0))
    for (u, v), d in zip(e, delays, strict=True):
        attrs = {"latency_ms": float(d)}
        if comp is not None:
            attrs["in_topic"] = bool(comp[u] >= 0 and comp[v] >= 0)
        g.add_edge(int(u), int(v), **attrs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nx.write_graphml(g, path)
    return path
