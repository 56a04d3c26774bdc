"""RVR, the rendezvous-routing baseline of Vitis (IPDPS 2011, section IV).

Paper: F. Rahimian, S. Girdzijauskas, A. H. Payberah, S. Haridi, "Vitis: A
Gossip-based Hybrid Overlay for Internet-scale Publish/Subscribe Enabling
Rendezvous Routing in Unstructured Overlay Networks", IPDPS 2011.

What the paper says RVR is:

* section IV: "a structured RendezVous Routing solution that builds a
  multicast tree per topic, equivalent to that of Scribe [4] or Bayeux [5],
  with fixed node degree"; it uses "the same peer sampling service (Newscast)
  and overlay construction protocol (T-Man)" as Vitis;
* section I: "based on a structured overlay, with a bounded node degree, and
  oblivious to node subscriptions";
* section III-B: in Scribe "each subscriber node route[s] to the rendezvous
  node"; "all the nodes on the lookup path become relay nodes";
* section IV-C: "In RVR, this improvement [with a larger RT] is because the
  rendezvous routing performs better ... with more small-world links".

Readings chosen (``docs/vitis-baselines.md``):

* **Overlay** = Vitis's ring and small-world structure with no friends: the
  routing table of size ``rt`` holds the successor, the predecessor and
  ``rt - 2`` small-world links (Algorithm 4 lines 2-10, the sw step
  repeated), built by T-Man over a peer-sampling service
  (:mod:`hedgerow.gossip`).  Node and topic ids, the harmonic (Symphony)
  targets of the small-world links and the greedy lookup are those of
  :mod:`hedgerow.protocols.vitis.ring`, so RVR and Vitis route on the same
  kind of structure.  Each small-world slot keeps the candidate closest to its
  target, drawn once per node.
* **Links carry traffic both ways** (a link exists when either end holds the
  other), as for Vitis (reading A6); lookups are greedy over both directions.
* **Trees**: every subscriber of ``t`` looks up ``hash(t)``; the union of
  the lookup paths is ``t``'s tree, rooted at the rendezvous node (the node
  with the id closest to ``hash(t)``).  Greedy next hops are deterministic, so
  the paths merge.  Nodes on a path that do not subscribe to ``t`` are its
  relays.
* **Forwarding** along the tree only (``"mesh"``: ``link_topics_`` lists
  every tree link with its topic), as Scribe multicasts down the tree; a
  publisher in the tree floods it in both directions.

After :meth:`RVR.build`, ``stats_`` holds ``ring_correct`` (share of nodes
whose routing table holds their true successor and predecessor),
``lookup_hops_mean``, ``lookup_failures`` (lookups that stopped away from the
rendezvous node), ``relays`` ((node, topic) relay pairs) and ``tree_links``.

Examples
--------
>>> from hedgerow.workloads.correlated import correlated_instance
>>> inst = correlated_instance(300, topics=100, buckets=10, subs=10, correlation="high")
>>> p = RVR(rt=8, cycles=30)
>>> ov = p.build(inst, seed=1)
>>> bool((ov.degree() <= 8).all()), p.stats_["lookup_failures"]
(True, 0)
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from hedgerow.gossip import PeerSampling, TMan
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Int
from hedgerow.protocols.base import StaticProtocol
from hedgerow.protocols.vitis import ring

__all__ = ["RVR", "rendezvous_trees"]


@numba.njit(cache=True)
def _cw(a, b):  # pragma: no cover
    """Clockwise distance from ``a`` to ``b`` on the 64-bit ring."""
    return b - a


@numba.njit(cache=True)
def _dist(a, b):  # pragma: no cover
    d1 = a - b
    d2 = b - a
    return d1 if d1 < d2 else d2


@numba.njit(cache=True)
def _rvr_rows(rows, indptr, cand, view, ids, targets):  # pragma: no cover
    """Successor, predecessor, then per target the closest remaining candidate."""
    width = view.shape[1]
    n_sw = targets.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        me = ids[r]
        a = indptr[i]
        m = indptr[i + 1] - a
        used = np.zeros(m, np.bool_)
        k = 0
        best = -1
        for t in range(m):  # successor: smallest clockwise distance
            if best < 0 or _cw(me, ids[cand[a + t]]) < _cw(me, ids[cand[a + best]]):
                best = t
        if best >= 0:
            used[best] = True
            view[r, k] = cand[a + best]
            k += 1
        best = -1
        for t in range(m):  # predecessor: smallest counter-clockwise distance
            if used[t]:
                continue
            if best < 0 or _cw(ids[cand[a + t]], me) < _cw(ids[cand[a + best]], me):
                best = t
        if best >= 0:
            used[best] = True
            view[r, k] = cand[a + best]
            k += 1
        for s in range(n_sw):
            best = -1
            tg = targets[r, s]
            for t in range(m):
                if used[t]:
                    continue
                if best < 0 or _dist(ids[cand[a + t]], tg) < _dist(ids[cand[a + best]], tg):
                    best = t
            if best >= 0 and k < width:
                used[best] = True
                view[r, k] = cand[a + best]
                k += 1
        for j in range(k, width):
            view[r, j] = -1


@numba.njit(cache=True)
def _paths(indptr, indices, ids, sub_indptr, sub_topics, keys, max_hops):  # pragma: no cover
    """Greedy lookup of ``keys[t]`` from every subscriber; the path edges ``(u, v, t)``.

    Returns ``(edges (k, 3), hops per lookup, end node per lookup)``.
    """
    n = indptr.shape[0] - 1
    total = sub_topics.shape[0]
    cap = total * 8 + 16
    edges = np.empty((cap, 3), np.int64)
    hops = np.empty(total, np.int64)
    ends = np.empty(total, np.int64)
    k = 0
    j = 0
    for s in range(n):
        for e in range(sub_indptr[s], sub_indptr[s + 1]):
            t = sub_topics[e]
            key = keys[t]
            cur = s
            h = 0
            while h < max_hops:
                best = cur
                bd = _dist(ids[cur], key)
                for x in range(indptr[cur], indptr[cur + 1]):
                    v = indices[x]
                    d = _dist(ids[v], key)
                    if d < bd or (d == bd and ids[v] < ids[best]):
                        best = v
                        bd = d
                if best == cur:
                    break
                if k == edges.shape[0]:
                    grown = np.empty((2 * edges.shape[0], 3), np.int64)
                    grown[:k] = edges[:k]
                    edges = grown
                edges[k, 0] = cur
                edges[k, 1] = best
                edges[k, 2] = t
                k += 1
                cur = best
                h += 1
            hops[j] = h
            ends[j] = cur
            j += 1
    return edges[:k], hops, ends


def rendezvous_trees(
    indptr: np.ndarray,
    indices: np.ndarray,
    ids: np.ndarray,
    instance: Instance,
    keys: np.ndarray,
    *,
    max_hops: int = 10_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every subscriber's greedy lookup of its topic's key over the undirected links.

    Returns ``(edges, hops, ends)``: the distinct tree links ``(u, v, topic)``
    (``u -> v`` the lookup's direction), the hops of each lookup and the node
    each stopped at, in subscription order (``instance.sub_topics``).

    Examples
    --------
    A ring of 6 nodes with ids 0, 10, ..., 50; topic 0's key is 31, so the
    rendezvous node is node 3; subscribers 0 and 5 route 0-1-2-3 and 5-4-3.

    >>> import numpy as np
    >>> from hedgerow.model import Instance, Overlay
    >>> a = Overlay.from_edges(6, [(i, (i + 1) % 6) for i in range(6)]).undirected_csr()
    >>> ids = np.arange(6, dtype=np.uint64) * np.uint64(10)
    >>> inst = Instance.from_lists([[0], [], [], [], [], [0]], n_topics=1)
    >>> edges, hops, ends = rendezvous_trees(a.indptr, a.indices, ids, inst,
    ...                                      np.array([31], dtype=np.uint64))
    >>> edges.tolist(), hops.tolist(), ends.tolist()
    ([[0, 1, 0], [1, 2, 0], [2, 3, 0], [4, 3, 0], [5, 4, 0]], [3, 2], [3, 3])
    """
    edges, hops, ends = _paths(
        np.asarray(indptr, np.int64), np.asarray(indices, np.int64),
        np.asarray(ids, np.uint64), instance.sub_indptr, instance.sub_topics.astype(np.int64),
        np.asarray(keys, np.uint64), int(max_hops),
    )
    if len(edges):
        edges = np.unique(edges, axis=0)
    return edges, hops, ends


class RVR(StaticProtocol):
    """RVR: Scribe-like trees by rendezvous routing on a gossip-built ring + small world.

    Forwards along each topic's tree (``"mesh"``); ``link_topics_`` holds
    every tree link with its topic, oriented as the routing-table entry that
    makes it.
    """

    name = "rvr"
    paper = "Rahimian et al., Vitis, IPDPS 2011, section IV (RVR baseline, after Scribe/Bayeux)"
    directed = True
    forwarding = "mesh"
    labels_links = True
    params = {
        "rt": Int(15, "routing-table size: successor, predecessor and rt - 2 small-world links",
                  low=3, unit="links"),
        "cycles": Int(100, "T-Man gossip cycles", low=1, unit="cycles"),
        "cache": Int(20, "peer-sampling cache size (not in the paper; PeerSim's 20)", low=1),
        "sampler": Choice("newscast", ("newscast", "cyclon", "uniform"),
                          "peer-sampling service (the paper: Newscast)"),
        "sw_direction": Choice("symmetric", ("symmetric", "clockwise"),
                               "small-world targets: either side (reading A4) or clockwise "
                               "only (Symphony)"),
    }
    quick_params = {"rt": 5, "cycles": 10, "cache": 5}

    def degree_bound(self, instance: Instance) -> int:
        """Out-degree bound ``rt`` (the routing table; links are used both ways)."""
        return self.checked()["rt"]

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        from hedgerow.errors import ParameterError

        if values["rt"] >= instance.n_nodes:
            raise ParameterError(
                f"rvr: parameter rt must be below the number of nodes ({instance.n_nodes}), "
                f"got {values['rt']}", key="rt",
            )

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        n = instance.n_nodes
        ids = ring.node_ids(n, streams.stream("rvr:ids"))
        keys = ring.topic_ids(instance.n_topics, streams.stream("rvr:ids"))
        targets = ring.sw_targets(ids, v["rt"] - 2, streams.stream("rvr:sw"),
                                  symmetric=v["sw_direction"] == "symmetric")
        rng = streams.stream("rvr:gossip")
        ps = PeerSampling(n, min(v["cache"], n - 1), kind=v["sampler"])
        ps.bootstrap(np.ones(n, bool), rng)

        def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray,
                   view: np.ndarray) -> None:
            _rvr_rows(rows, indptr, cand, view, ids, targets)

        tm = TMan(v["rt"], select)
        view = tm.empty_view(n)
        for cycle in range(v["cycles"]):
            ps.cycle(rng)
            tm.cycle(view, ps, rng)
            if progress is not None:
                progress(cycle + 1, v["cycles"])
        overlay = out_overlay(view.astype(np.int64))
        und = overlay.undirected_csr()
        edges, hops, ends = rendezvous_trees(und.indptr, und.indices, ids, instance, keys)
        owner = ring.closest_nodes(ids, keys)
        t_of = instance.sub_topics
        ok = ends == owner[t_of]
        # orient each tree link as the routing-table entry that makes it
        a = overlay.csr()
        fwd = np.asarray(a[edges[:, 0], edges[:, 1]]).ravel() != 0 if len(edges) else np.zeros(0)
        lt = edges.copy()
        lt[~fwd, 0], lt[~fwd, 1] = edges[~fwd, 1], edges[~fwd, 0]
        self.link_topics_ = np.unique(lt, axis=0).astype(np.int64) if len(lt) else \
            np.zeros((0, 3), np.int64)
        members = np.unique(np.concatenate([edges[:, [0, 2]], edges[:, [1, 2]]]), axis=0) \
            if len(edges) else np.zeros((0, 2), np.int64)
        masks = instance.masks
        sub = (masks[members[:, 0], members[:, 1] >> 6] >> (members[:, 1] & 63).astype(np.uint64)
               ) & np.uint64(1) if len(members) else np.zeros(0, np.uint64)
        stats = {
            "ring_correct": ring.ring_correct(view, ids),
            "lookup_hops_mean": float(hops.mean()) if len(hops) else 0.0,
            "lookup_failures": int((~ok).sum()),
            "relays": int((sub == 0).sum()),
            "tree_links": int(len(self.link_topics_)),
            "cycles": v["cycles"],
        }
        return overlay, stats
