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
* **T-Man partner** (``partner``, default ``"ranked"``; ``psi``, default 4):
  the same rule as Vitis (its reading A2), because section IV builds the
  three systems with "the same ... overlay construction protocol (T-Man)":
  T-Man's ``selectPeer`` among the ``psi`` table entries nearest in id;
  ``partner="uniform"`` is section III-A's uniform draw over the table.
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

import numpy as np

from hedgerow.dissemination.contended import ControlBatch
from hedgerow.errors import ParameterError
from hedgerow.gossip import PeerSampling, TMan, ring_partner, uniform_partner
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Int
from hedgerow.protocols.base import CycleProtocol, StaticProtocol
from hedgerow.protocols.control import ControlRounds, gossip_rounds
from hedgerow.protocols.vitis import ring

__all__ = ["RVR", "RVREngine", "rendezvous_trees"]


def rendezvous_trees(
    indptr: np.ndarray,
    nbrs: np.ndarray,
    ids: np.ndarray,
    instance: Instance,
    keys: np.ndarray,
    *,
    max_hops: int = 10_000,
    online: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every subscriber's greedy lookup of its topic's key (:func:`ring.lookup_paths`).

    Returns ``(edges, end, hops, failed)``: the distinct tree links ``(u, v,
    topic)`` (``u -> v`` the lookup's direction) and, per subscription (in
    ``instance.sub_topics`` order; only those of ``online`` nodes when given),
    the node its lookup stopped at, its hops and whether it hit ``max_hops``.

    Examples
    --------
    A ring of 6 nodes with ids 0, 10, ..., 50; topic 0's key is 31, so the
    rendezvous node is node 3 (id 30); subscriber 0 routes 0-5-4-3 (node 5,
    id 50, is closer to 31 than node 1, id 10) and subscriber 5 routes 5-4-3:
    the paths merge at node 5.

    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> view = np.array([[1], [2], [3], [4], [5], [0]], np.int32)
    >>> indptr, nbrs = ring.link_csr(view)
    >>> ids = np.arange(6, dtype=np.uint64) * np.uint64(10)
    >>> inst = Instance.from_lists([[0], [], [], [], [], [0]], n_topics=1)
    >>> edges, end, hops, failed = rendezvous_trees(indptr, nbrs, ids, inst,
    ...                                             np.array([31], dtype=np.uint64))
    >>> edges.tolist(), end.tolist(), hops.tolist()
    ([[0, 5, 0], [4, 3, 0], [5, 4, 0]], [3, 3], [3, 2])
    """
    starts = np.repeat(np.arange(instance.n_nodes, dtype=np.int64), instance.n_subs)
    topic = instance.sub_topics.astype(np.int64)
    if online is not None:
        keep = np.asarray(online, bool)[starts]
        starts, topic = starts[keep], topic[keep]
    (ptr, nodes), (end, hops, failed) = ring.lookup_paths(
        indptr, nbrs, ids, starts, np.asarray(keys, np.uint64)[topic], int(max_hops)
    )
    path_of = np.repeat(np.arange(len(starts)), np.diff(ptr))
    step = np.flatnonzero(path_of[:-1] == path_of[1:]) if len(nodes) > 1 else np.zeros(0, int)
    edges = np.column_stack([nodes[step], nodes[step + 1], topic[path_of[step]]])
    if len(edges):
        n = instance.n_nodes
        key = (edges[:, 2] * n + edges[:, 0]) * n + edges[:, 1]
        order = np.argsort(key, kind="stable")
        key = key[order]
        edges = edges[order][np.r_[True, key[1:] != key[:-1]]]
    return edges.astype(np.int64).reshape(-1, 3), end, hops, failed


def _partner(values: dict[str, Any], ids: np.ndarray):
    """T-Man's partner rule of ``values`` (Vitis's reading A2, shared by the three systems)."""
    return ring_partner(ids, values["psi"]) if values["partner"] == "ranked" else uniform_partner


def _oriented(edges: np.ndarray, view: np.ndarray) -> np.ndarray:
    """Tree links ``(u, v, t)`` turned so that ``v`` is in ``u``'s routing table."""
    lt = edges.copy()
    if len(edges):
        own = (view[edges[:, 0]] == edges[:, 1:2]).any(axis=1)
        lt[~own, 0] = edges[~own, 1]
        lt[~own, 1] = edges[~own, 0]
    return lt.astype(np.int64).reshape(-1, 3)


class RVREngine:
    """RVR kept cycle by cycle under churn: its :class:`~hedgerow.protocols.engine_api.CycleEngine`.

    Each cycle runs the peer sampling and one T-Man cycle over the online
    nodes; a node that leaves forgets its state, its entries drop out of the
    others' buffers (a perfect failure detector: T-Man's ``live_only``); a node
    that (re)joins gets a fresh bootstrap sample of 5 online nodes and new
    small-world targets.  Trees are soft state, as Scribe's periodic joins:
    :meth:`link_topics` routes every online subscriber's join on the current
    links.
    """

    def __init__(self, values: dict[str, Any], instance: Instance, streams: RngStreams) -> None:
        self.instance = instance
        self.n = n = instance.n_nodes
        self.values = values
        salt = int(streams.stream("rvr:ids").integers(0, 2**31))
        self.ids = ring.node_ids(n, salt)
        self.keys = ring.topic_ids(instance.n_topics, salt)
        self._sw_rng = streams.stream("rvr:sw")
        self.targets = ring.harmonic_targets(self.ids, values["rt"] - 2, self._sw_rng,
                                             direction=values["sw_direction"])
        self.rng = streams.stream("rvr:gossip")
        self.ps = PeerSampling(n, min(values["cache"], n - 1), kind=values["sampler"])
        self.kind = np.full((n, values["rt"]), ring.KIND_EMPTY, np.int8)
        self.tm = TMan(values["rt"], ring.ring_sw_select(self.ids, self.targets, self.kind),
                       partner=_partner(values, self.ids), live_only=True)
        self.view = self.tm.empty_view(n)
        self.online = np.zeros(n, bool)
        self.max_hops = 4 * int(np.ceil(np.log2(max(n, 2)))) ** 2

    def start(self, online0: np.ndarray) -> None:
        """The nodes of ``online0`` come online with bootstrap samples and empty tables."""
        self.online[:] = np.asarray(online0, bool)
        self.ps.alive[:] = self.online
        self.ps.bootstrap(self.online, self.rng)

    def join(self, nodes: np.ndarray) -> None:
        """``nodes`` (re)join: empty table, 5 online nodes from the bootstrap, new sw targets."""
        nodes = np.asarray(nodes, np.int64)
        if not len(nodes):
            return
        self.online[nodes] = True
        self.ps.alive[nodes] = True
        self.view[nodes] = -1
        self.kind[nodes] = ring.KIND_EMPTY
        fresh = ring.harmonic_targets(self.ids[nodes], self.values["rt"] - 2, self._sw_rng,
                                      n_estimate=int(self.online.sum()),
                                      direction=self.values["sw_direction"])
        self.targets[nodes] = fresh
        self.ps.fill(nodes, self.rng, 5)

    def leave(self, nodes: np.ndarray) -> None:
        """``nodes`` crash: offline, state forgotten."""
        nodes = np.asarray(nodes, np.int64)
        self.online[nodes] = False
        self.ps.alive[nodes] = False
        self.view[nodes] = -1

    def cycle(self) -> None:
        """One peer-sampling and one T-Man cycle over the online nodes."""
        self.ps.cycle(self.rng)
        self.tm.cycle(self.view, self.ps, self.rng, alive=self.online)

    def ring_correct(self) -> float:
        """Share of online nodes holding their true live successor and predecessor."""
        return ring.ring_correct(self.view, self.ids, self.online)

    def overlay(self) -> Overlay:
        """The routing tables as a directed overlay (links between online nodes)."""
        p, j = np.nonzero(self.view >= 0)
        q = self.view[p, j].astype(np.int64)
        ok = self.online[p] & self.online[q] & (p != q)
        edges = np.unique(np.column_stack([p[ok], q[ok]]), axis=0)
        return Overlay.from_edges(self.n, edges, directed=True)

    def link_topics(self) -> np.ndarray:
        """Every online subscriber's join routed now: the trees' ``(u, v, topic)`` links."""
        indptr, nbrs = ring.link_csr(self.view, self.online)
        edges, _, _, _ = rendezvous_trees(indptr, nbrs, self.ids, self.instance, self.keys,
                                          max_hops=self.max_hops, online=self.online)
        return _oriented(edges, self.view)


class RVR(StaticProtocol, CycleProtocol):
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
        "sw_direction": Choice("both", ring.SW_DIRECTIONS,
                               "small-world targets: either side (reading A4) or clockwise "
                               "only (Symphony)"),
        "partner": Choice("ranked", ("ranked", "uniform"),
                          "T-Man partner: among the psi nearest ids (T-Man's selectPeer, as "
                          "Vitis) or uniform in RT (§III-A)"),
        "psi": Int(4, "partner=ranked: table entries nearest in id to pick among", low=1,
                   unit="entries"),
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

    def cycle_engine(self, instance: Instance, streams: RngStreams) -> RVREngine:
        """The engine that keeps RVR under churn, cycle by cycle (not started)."""
        return RVREngine(self._validate(instance), instance, streams)

    def control_traffic(self, rounds: ControlRounds) -> ControlBatch:
        """The gossip of the built network, one round per cycle (``docs/network.md``).

        Each node, each round: a peer-sampling exchange and a T-Man exchange
        (:func:`hedgerow.protocols.control.gossip_rounds`, no profiles: RVR's
        trees are routed once, on the built tables).

        Examples
        --------
        >>> from hedgerow.protocols.control import ControlRounds
        >>> from hedgerow.workloads import make_instance
        >>> p = RVR(rt=4, cycles=5, cache=4)
        >>> _ = p.build(make_instance(nodes=30, topics=5, subs=2, seed=1), seed=1)
        >>> len(p.control_traffic(ControlRounds(1000.0, 0.0, np.random.default_rng(0))))
        120
        """
        state = self.__dict__.get("gossip_")
        if state is None:
            raise ParameterError(f"{self.name}: control_traffic needs a built network; build "
                                 "first", key="control_size")
        ps, tm, view = state
        return gossip_rounds(rounds, ps.alive, ps, tm, view)

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        n = instance.n_nodes
        salt = int(streams.stream("rvr:ids").integers(0, 2**31))
        ids = ring.node_ids(n, salt)
        keys = ring.topic_ids(instance.n_topics, salt)
        targets = ring.harmonic_targets(ids, v["rt"] - 2, streams.stream("rvr:sw"),
                                        direction=v["sw_direction"])
        rng = streams.stream("rvr:gossip")
        ps = PeerSampling(n, min(v["cache"], n - 1), kind=v["sampler"])
        ps.bootstrap(np.ones(n, bool), rng)
        kind = np.full((n, v["rt"]), ring.KIND_EMPTY, np.int8)
        tm = TMan(v["rt"], ring.ring_sw_select(ids, targets, kind), partner=_partner(v, ids))
        view = tm.empty_view(n)
        for cycle in range(v["cycles"]):
            ps.cycle(rng)
            tm.cycle(view, ps, rng)
            if progress is not None:
                progress(cycle + 1, v["cycles"])
        #: the gossip state the build ended with (what control_traffic sends from)
        self.gossip_ = (ps, tm, view)
        overlay = out_overlay(view.astype(np.int64))
        indptr, nbrs = ring.link_csr(view)
        max_hops = 4 * int(np.ceil(np.log2(max(n, 2)))) ** 2
        edges, end, hops, failed = rendezvous_trees(indptr, nbrs, ids, instance, keys,
                                                    max_hops=max_hops)
        owner = ring.rendezvous(ids, keys)
        missed = end != owner[instance.sub_topics]
        # orient each tree link as the routing-table entry that makes it
        self.link_topics_ = _oriented(edges, view)
        members = np.concatenate([edges[:, [0, 2]], edges[:, [1, 2]]]) if len(edges) \
            else np.zeros((0, 2), np.int64)
        # distinct (topic, node) keys, sorted: a sort and a neighbour test (numpy.unique's
        # hashing path is far slower on these millions of int64 keys)
        mk = np.sort(members[:, 1] * n + members[:, 0])
        mk = mk[np.r_[True, mk[1:] != mk[:-1]]] if len(mk) else mk
        mt, mn = mk // n, mk % n
        masks = instance.masks
        sub = (masks[mn, mt >> 6] >> (mt & 63).astype(np.uint64)) & np.uint64(1)
        stats = {
            "ring_correct": ring.ring_correct(view, ids),
            "lookup_hops_mean": float(hops.mean()) if len(hops) else 0.0,
            "lookup_failures": int((missed | failed).sum()),
            "relays": int((sub == 0).sum()),
            "tree_links": len(edges),
            "cycles": v["cycles"],
        }
        return overlay, stats
