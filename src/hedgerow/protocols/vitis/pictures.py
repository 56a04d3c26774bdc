"""Pictures of a built Vitis overlay, and its GraphML export with link kinds.

* :func:`draw_overlay`: nodes on a circle at the angle of their id, ring links
  (successor/predecessor), small-world links and friend links styled apart
  (Figure 2's picture);
* :func:`draw_topic`: one topic's subscribers coloured by cluster, gateways
  marked, relay paths to the rendezvous node highlighted (Figure 3's picture);
* :func:`draw_convergence`: ring correctness and gateway count per cycle;
* :func:`write_graphml`: the routing tables as a directed GraphML graph, each
  edge with its ``kind`` (``succ``, ``pred``, ``sw``, ``friend``) and each node
  with its ring position and subscriptions.

matplotlib is imported only when a picture is drawn (Agg backend).

Examples
--------
>>> import io
>>> from hedgerow.workloads import make_instance
>>> from hedgerow.protocols.vitis import Vitis
>>> v = Vitis(rt=6, cycles=15)
>>> _ = v.build(make_instance(nodes=60, topics=8, subs="2:3", seed=1), seed=1)
>>> buf = io.StringIO()
>>> write_graphml(v, buf)
>>> text = buf.getvalue()
>>> text.count("<node "), 'key="kind">succ<' in text, 'key="kind">friend<' in text
(60, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any, cast
from xml.sax.saxutils import escape

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.protocols.vitis.ring import KIND_FRIEND, KIND_PRED, KIND_SUCC, KIND_SW

__all__ = ["KIND_NAMES", "draw_convergence", "draw_overlay", "draw_topic", "write_graphml"]

#: slot kind -> name in pictures and GraphML
KIND_NAMES = {KIND_SUCC: "succ", KIND_PRED: "pred", KIND_SW: "sw", KIND_FRIEND: "friend"}

_STYLE = {
    "ring": {"color": "black", "lw": 1.2, "ls": "-", "alpha": 0.9},
    "sw": {"color": "tab:blue", "lw": 0.8, "ls": "--", "alpha": 0.7},
    "friend": {"color": "tab:green", "lw": 0.5, "ls": "-", "alpha": 0.35},
}


def _built(proto: Any):
    run = getattr(proto, "run_", None)
    if run is None:
        raise ParameterError("the protocol has not been built (call build() first)")
    return run


def _positions(ids: np.ndarray) -> np.ndarray:
    angle = ids.astype(np.float64) / 2.0**64 * 2 * np.pi
    return np.column_stack([np.sin(angle), np.cos(angle)])


def _axes(ax):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 8))
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def draw_overlay(proto: Any, ax: Any = None, *, kinds: tuple[str, ...] = ("ring", "sw", "friend"),
                 max_nodes: int = 2000) -> Any:
    """Nodes on a circle by id; ring, small-world and friend links styled apart.

    ``max_nodes``: above it only the first ``max_nodes`` nodes (by index) and
    their links are drawn.
    """
    from matplotlib.collections import LineCollection

    run = _built(proto)
    ax = _axes(ax)
    pos = _positions(run.ids)
    keep = np.zeros(run.n, bool)
    keep[: min(run.n, max_nodes)] = True
    keep &= run.alive
    p, j = np.nonzero(run.view >= 0)
    q = run.view[p, j]
    kd = run.kind[p, j]
    ok = keep[p] & keep[q]
    group = np.where((kd == KIND_SUCC) | (kd == KIND_PRED), 0, np.where(kd == KIND_SW, 1, 2))
    for g, name in enumerate(("ring", "sw", "friend")):
        if name not in kinds:
            continue
        sel = ok & (group == g)
        # an (k, 2, 2) array is a sequence of segments (matplotlib's stubs want a Sequence)
        segs = cast(Sequence[np.ndarray], np.stack([pos[p[sel]], pos[q[sel]]], axis=1))
        st = _STYLE[name]
        ax.add_collection(LineCollection(segs, colors=st["color"], linewidths=st["lw"],
                                         linestyles=st["ls"], alpha=st["alpha"],
                                         label=f"{name} ({int(sel.sum())})"))
    ax.scatter(pos[keep, 0], pos[keep, 1], s=6, c="0.3", zorder=3)
    ax.set_xlim(-1.1, 1.1)
    ax.set_ylim(-1.1, 1.1)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Vitis overlay: {int(keep.sum())} nodes on the id ring")
    return ax


def draw_topic(proto: Any, topic: int, ax: Any = None) -> Any:
    """One topic: clusters coloured, gateways marked, relay paths to the rendezvous highlighted."""
    from matplotlib.collections import LineCollection
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    run = _built(proto)
    inst = run.instance
    if not 0 <= topic < inst.n_topics:
        raise ParameterError(f"topic: must be in 0..{inst.n_topics - 1}, got {topic}",
                             key="topic")
    ax = _axes(ax)
    pos = _positions(run.ids)
    subs = inst.subscribers(topic)
    subs = subs[run.alive[subs]]
    lt = proto.link_topics_
    mine = lt[lt[:, 2] == topic]
    is_sub = np.zeros(run.n, bool)
    is_sub[subs] = True
    cl = mine[is_sub[mine[:, 0]] & is_sub[mine[:, 1]]]
    g = csr_array((np.ones(len(cl)), (cl[:, 0], cl[:, 1])), shape=(run.n, run.n))
    _, comp = connected_components(g, directed=False)
    # relay links: the lookup paths of this topic's gateways
    rel = proto.relays_
    relays = rel["relay_nodes"][rel["relay_topics"] == topic]
    pl = rel["path_links"]
    path_links = pl[pl[:, 2] == topic]
    ax.scatter(pos[:, 0], pos[:, 1], s=2, c="0.85", zorder=1)
    ax.add_collection(LineCollection(cast(Sequence[np.ndarray],
                                          np.stack([pos[cl[:, 0]], pos[cl[:, 1]]], axis=1)),
                                     colors="0.4", linewidths=0.8, label="cluster links"))
    ax.add_collection(LineCollection(
        cast(Sequence[np.ndarray],
             np.stack([pos[path_links[:, 0]], pos[path_links[:, 1]]], axis=1)), colors="tab:red",
        linewidths=1.6, label="relay paths"))
    ax.scatter(pos[subs, 0], pos[subs, 1], s=30, c=comp[subs], cmap="tab20", zorder=3,
               label=f"subscribers ({subs.size}) by cluster ({np.unique(comp[subs]).size})")
    ax.scatter(pos[relays, 0], pos[relays, 1], s=25, c="tab:red", marker="s", zorder=3,
               label=f"relays ({relays.size})")
    ent = np.flatnonzero(inst.sub_topics == topic)
    owner = np.repeat(np.arange(run.n), inst.n_subs)[ent]
    gws = owner[(run.gw[ent] == owner) & run.alive[owner]]
    ax.scatter(pos[gws, 0], pos[gws, 1], s=160, facecolors="none", edgecolors="black",
               marker="*", linewidths=1.2, zorder=4, label=f"gateways ({gws.size})")
    from hedgerow.protocols.vitis.ring import rendezvous

    rv = rendezvous(run.ids, run.tids[[topic]], run.alive)[0]
    ax.scatter([pos[rv, 0]], [pos[rv, 1]], s=220, c="gold", edgecolors="black", marker="D",
               zorder=5, label="rendezvous")
    key = _positions(run.tids[[topic]])[0]
    ax.plot([0, key[0] * 1.08], [0, key[1] * 1.08], color="gold", lw=1, zorder=0)
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-1.15, 1.15)
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(f"topic {topic}: clusters, gateways and relay paths")
    return ax


def draw_convergence(proto: Any, ax: Any = None) -> Any:
    """Ring correctness (left axis) and gateways (right axis) per cycle."""
    stats = getattr(proto, "stats_", None)
    if stats is None:
        raise ParameterError("the protocol has not been built (call build() first)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ring = np.asarray(stats["ring_curve"])
    cyc = np.arange(1, ring.size + 1)
    ax.plot(cyc, ring, color="black", label="ring correct")
    ax.axhline(0.99, color="0.6", ls=":", lw=1)
    ax.set_xlabel("cycle")
    ax.set_ylabel("share of nodes with true successor and predecessor")
    ax.set_ylim(0, 1.02)
    ax2 = ax.twinx()
    ax2.plot(cyc, stats["gateway_curve"], color="tab:red", label="gateways")
    ax2.set_ylabel("gateways (subscription entries)")
    ax.legend(loc="lower right", fontsize=8)
    ax2.legend(loc="center right", fontsize=8)
    ax.set_title("Vitis convergence")
    return ax


def write_graphml(proto: Any, out: str | IO[str]) -> None:
    """The routing tables as directed GraphML: edge ``kind``, node ``ring`` position and topics."""
    run = _built(proto)
    inst = run.instance
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '<key id="ring" for="node" attr.name="ring" attr.type="double"/>',
        '<key id="topics" for="node" attr.name="topics" attr.type="string"/>',
        '<key id="online" for="node" attr.name="online" attr.type="boolean"/>',
        '<key id="kind" for="edge" attr.name="kind" attr.type="string"/>',
        '<graph id="vitis" edgedefault="directed">',
    ]
    ring = run.ids.astype(np.float64) / 2.0**64
    for v in range(run.n):
        topics = " ".join(map(str, inst.topics_of(v).tolist()))
        lines.append(f'<node id="n{v}"><data key="ring">{ring[v]:.12f}</data>'
                     f'<data key="topics">{escape(topics)}</data>'
                     f'<data key="online">{str(bool(run.alive[v])).lower()}</data></node>')
    p, j = np.nonzero(run.view >= 0)
    for a, b, k in zip(p.tolist(), run.view[p, j].tolist(), run.kind[p, j].tolist(),
                       strict=True):
        lines.append(f'<edge source="n{a}" target="n{b}"><data key="kind">'
                     f'{KIND_NAMES.get(k, "other")}</data></edge>')
    lines += ["</graph>", "</graphml>"]
    text = "\n".join(lines) + "\n"
    if isinstance(out, str):
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        out.write(text)
