"""Vitis: a gossip-built hybrid overlay with rendezvous routing between interest clusters.

Paper: F. Rahimian, S. Girdzijauskas, A. H. Payberah, S. Haridi, "Vitis: A
Gossip-based Hybrid Overlay for Internet-scale Publish/Subscribe Enabling
Rendezvous Routing in Unstructured Overlay Networks", IPDPS 2011.

What runs, cycle by cycle (Algorithm 1), all on arrays:

1. the peer-sampling service (Newscast, §IV; :mod:`hedgerow.gossip.sampling`);
2. T-Man (Algorithms 2-3, :class:`hedgerow.gossip.TMan`) with Algorithm 4 as
   the selection: successor, predecessor, ``k - 2`` small-world neighbours
   (Symphony's harmonic draw, :mod:`hedgerow.protocols.vitis.ring`), and
   ``RT - k`` friends of highest utility, eq. (1) (rate-weighted Jaccard);
3. the profile exchange (Algorithms 6-7): entries of offline nodes age and
   leave the table after ``stale`` cycles; every node recomputes its gateway
   proposal for each of its topics from its neighbours' last proposals
   (Algorithm 5);
4. after the last cycle, every gateway looks up its topic's id (RequestRelay,
   Algorithm 5 line 21): the nodes on the path that do not subscribe become
   relays for the topic (§III-B).

Publishing (§III-C): a node sends an event to its neighbours interested in
the topic or relaying it, and each receiver does the same (first copy only).
That is flooding the subgraph induced by subscribers ∪ relays of the topic;
the build writes it two ways: ``forward_masks_`` (subscriptions OR relay bits,
for the ``"topic"`` dissemination policy) and ``link_topics_`` (``(u, v, t)``
for every link whose two ends subscribe to or relay ``t``, for the ``"mesh"``
policy, this protocol's ``forwarding``).  Both deliver the same receptions.

Readings where the paper is ambiguous (``docs/vitis.md`` has the measured
effect of each switch):

A1 (``include_self``, default on)
    each side of a T-Man exchange puts its own descriptor in the buffer, as
    T-Man and the authors' own PeerSim T-Man do; Algorithms 2-3 are silent.
A2 (``partner``, default ``"ranked"``; ``psi``, default 4)
    §III-A says the partner is "chosen uniformly at random among the existing
    neighbors in the routing table" and credits the ring's rapid convergence to
    T-Man [26], whose ``selectPeer`` picks uniformly among the ``psi`` view
    entries ranked best, here nearest in id.  Only 2 of RT = 15 entries are
    ring links, so the uniform choice (``"uniform"``) leaves the 10,000-node
    ring 97.7% right after 100 cycles (99% at cycle 113); T-Man's choice with
    ``psi = 4`` reaches 99% at cycle 55 and 100% by cycle 80, and lowers
    overhead and delay.  ``psi = 2`` (always succ or pred) stalls at 99.5%: a
    node whose two nearest known ids lie on one side never gossips with the
    other (our explanation, not traced node by node).  The ring curve is ``stats_["ring_curve"]``.
A3 (``k``)
    k counts the two ring links (§IV-B: "two links are dedicated for the
    predecessor and the successor ... nodes have at least two sw-neighbors"),
    so k = 3 is succ + pred + one Symphony link and ``RT - k`` friends, as
    Algorithm 4's ``RT-SIZE - 3``.  ``2 <= k <= RT``.
A4 (``sw_direction``, default ``"both"``)
    sw targets drawn once per (re)join with a random sign; each selection keeps
    the buffer node closest to the target.
A5a (``loop_rule``, default ``"split-horizon"``)
    line 7 as printed accepts a proposal whose parent is the node itself (it is
    not in its own RT): an echo.  Split horizon also refuses those.
A5b (``hop_limit``, default ``"pseudocode"``)
    line 10 keeps proposals with ``hops + 1 < d`` (a gateway serves nodes up to
    ``d - 1`` hops away); ``"text"`` uses ``<= d`` as §III-B's prose.
A6 (``lookup_links``, default ``"both"``)
    a link exists when either end holds the other in its table and works both
    ways: clusters, proposals and relay paths use it.  ``"rt"`` routes lookups
    over the node's own table only.
A10 relay paths
    the gateways of the last cycle look up their topic once the overlay is
    built; lookups are greedy and deterministic per (node, key), so the union
    of the paths equals a Scribe join that stops at the first node already on
    the tree.
Relay forwarding (``relay_links``, default ``"induced"``)
    §III-C's rule (forward to every neighbour that subscribes to or relays the
    topic); ``"paths"`` keeps only cluster links and the links of the lookup
    paths (Figure 3's picture).  Both reach the same nodes on a connected tree.

Ties among friends of equal utility are broken by a seeded random key.

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=300, topics=40, subs="3:6", seed=1)
>>> v = Vitis(rt=8, cycles=30)
>>> ov = v.build(inst, seed=1)
>>> v.stats_["ring_correct"], bool((ov.degree() <= 8).all())
(1.0, True)
"""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np

from hedgerow.dissemination.contended import ControlBatch
from hedgerow.errors import ParameterError
from hedgerow.gossip import SAMPLERS, PeerSampling, TMan, ring_partner, uniform_partner
from hedgerow.metrics.connectivity import topic_components
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Bool, Choice, Int
from hedgerow.protocols.base import CycleProtocol, StaticProtocol
from hedgerow.protocols.control import ControlRounds, gossip_rounds
from hedgerow.protocols.vitis.kernels import gateway_round, relay_paths, vitis_select
from hedgerow.protocols.vitis.ring import (
    KIND_EMPTY,
    SW_DIRECTIONS,
    harmonic_targets,
    link_csr,
    node_ids,
    ring_correct,
    topic_ids,
)

__all__ = ["Vitis", "VitisRun"]


@numba.njit(cache=True)
def _label_links(view, alive, fmasks, a_masks, b_masks):  # pragma: no cover - compiled
    """``(u, v, t)`` for every table link ``u -> v`` (mutual links once) and every topic
    bit of ``a_masks[u] & a_masks[v]`` (or of ``b_masks`` pairs when ``fmasks`` is off)."""
    n, R = view.shape
    words = a_masks.shape[1]
    cap = 1024
    out = np.empty((cap, 3), np.int64)
    k = 0
    for p in range(n):
        if not alive[p]:
            continue
        for j in range(R):
            q = view[p, j]
            if q < 0 or q == p or not alive[q]:
                continue
            dup = False
            for jj in range(j):
                if view[p, jj] == q:
                    dup = True
            if dup:
                continue
            if q < p:  # a mutual link is emitted once, by its lower end
                mutual = False
                for jj in range(R):
                    if view[q, jj] == p:
                        mutual = True
                        break
                if mutual:
                    continue
            for w in range(words):
                x = a_masks[p, w] & a_masks[q, w] if fmasks else b_masks[p, w] & b_masks[q, w]
                while x != np.uint64(0):
                    low = x & (~x + np.uint64(1))
                    bit = 0
                    y = low
                    while y > np.uint64(1):
                        y >>= np.uint64(1)
                        bit += 1
                    if k == out.shape[0]:
                        out = np.concatenate((out, np.empty((k, 3), np.int64)))
                    out[k, 0] = p
                    out[k, 1] = q
                    out[k, 2] = w * 64 + bit
                    k += 1
                    x ^= low
    return out[:k]


@numba.njit(cache=True)
def _orient(view, links):  # pragma: no cover - compiled
    """Turn ``(x, y, t)`` rows so that ``u -> v`` is a table link (``y`` holds ``x`` if not)."""
    R = view.shape[1]
    for i in range(links.shape[0]):
        x = links[i, 0]
        y = links[i, 1]
        fwd = False
        for j in range(R):
            if view[x, j] == y:
                fwd = True
                break
        if not fwd:
            links[i, 0] = y
            links[i, 1] = x


class VitisRun:
    """The state of one Vitis network and its cycle (Algorithms 1-7), arrays only.

    Vitis's :class:`~hedgerow.protocols.engine_api.CycleEngine`, built by
    :meth:`Vitis.cycle_engine` (not started: :meth:`start` sets who is online)
    or started at once with ``alive`` (every node by default; ``start=False``
    leaves it unstarted); :meth:`cycle` runs one gossip period for every online
    node, :meth:`join` / :meth:`leave` change who is online, :meth:`relays`
    builds the relay paths of the current gateways.

    Attributes
    ----------
    ids, tids : numpy.ndarray
        Node ids and topic ids (``uint64``).
    view, kind : numpy.ndarray
        ``(n, RT)`` routing tables and slot kinds.
    left_at : numpy.ndarray
        Cycle at which each offline node went silent (the age of its descriptors).
    gw, parent, hops : numpy.ndarray
        Per subscription entry (aligned with ``instance.sub_topics``): the
        current gateway proposal (Algorithm 5).
    alive : numpy.ndarray
        Online nodes.
    """

    def __init__(self, proto_values: dict[str, Any], instance: Instance,
                 streams: RngStreams, alive: np.ndarray | None = None, *,
                 start: bool = True) -> None:
        v = proto_values
        self.v = v
        self.instance = instance
        n = instance.n_nodes
        self.n = n
        salt = int(streams.stream("vitis:ids").integers(0, 2**62))
        self.ids = node_ids(n, salt)
        self.tids = topic_ids(instance.n_topics, salt)
        self._rng_sw = streams.stream("vitis:sw-targets")
        self._rng_sample = streams.stream("gossip:sample")
        self._rng_tman = streams.stream("gossip:exchange")
        self._rng_join = streams.stream("vitis:join")
        self.alive = np.zeros(n, bool)
        self.targets = harmonic_targets(self.ids, v["k"] - 2, self._rng_sw, n_estimate=n,
                                        direction=v["sw_direction"])
        self.rates = (np.ones(instance.n_topics) if instance.topic_rates is None
                      else np.asarray(instance.topic_rates, np.float64))
        self.kind = np.full((n, v["rt"]), KIND_EMPTY, np.int8)
        self.sampling = PeerSampling(n, v["cache"], kind=v["sampler"])
        select = vitis_select(self.ids, self.targets, self.kind, instance.sub_indptr,
                              instance.sub_topics, self.rates, streams.stream("vitis:ties"))
        partner = (ring_partner(self.ids, v["psi"]) if v["partner"] == "ranked"
                   else uniform_partner)
        self.tman = TMan(v["rt"], select, partner=partner, include_self=v["include_self"])
        self.view = self.tman.empty_view(n)
        #: cycle at which each offline node went silent (ageing of its descriptors)
        self.left_at = np.zeros(n, np.int64)
        nnz = len(instance.sub_topics)
        owner = np.repeat(np.arange(n, dtype=np.int32), instance.n_subs)
        self._owner = owner
        self.gw = owner.copy()
        self.parent = owner.copy()
        self.hops = np.zeros(nnz, np.int16)
        self.max_hops = v["d"] - 1 if v["hop_limit"] == "pseudocode" else v["d"]
        self.cycles = 0
        #: wall seconds per phase, summed over cycles
        self.seconds = {"sampling": 0.0, "tman": 0.0, "profile": 0.0}
        self.ring_curve: list[float] = []
        self.gateway_curve: list[int] = []
        if start:
            self.start(np.ones(n, bool) if alive is None else alive)

    def start(self, online0: np.ndarray) -> None:
        """The nodes of ``online0`` come online with bootstrap samples (no cycle run yet)."""
        self.alive[:] = np.asarray(online0, bool)
        self.sampling.bootstrap(self.alive, self._rng_sample)
        self.left_at[:] = np.where(self.alive, np.iinfo(np.int64).max // 2, 0)

    @property
    def online(self) -> np.ndarray:
        """The online nodes (:attr:`alive`; the :class:`~hedgerow.protocols.engine_api.CycleEngine`
        name)."""
        return self.alive

    # ------------------------------------------------------------- the cycle
    def links(self) -> tuple[np.ndarray, np.ndarray]:
        """Undirected CSR of the current links between online nodes (reading A6)."""
        return link_csr(self.view, self.alive, both=True)

    def cycle(self) -> None:
        """One period δt (Algorithm 1): sampling, T-Man exchange, profile exchange."""
        t0 = time.perf_counter()
        self.sampling.alive = self.alive
        self.sampling.cycle(self._rng_sample)
        t1 = time.perf_counter()
        # Algorithms 6-7: an online neighbour answers every profile (age 0); a silent one
        # ages by one per cycle, and a descriptor carries its age wherever it travels (the
        # freshest copy wins), so a node that left is everywhere as old as its silence:
        # it leaves every table, and every buffer, after `stale` unanswered cycles.
        gone = ~self.alive & (self.cycles - self.left_at > self.v["stale"])
        self.tman.cycle(self.view, self.sampling, self._rng_tman, alive=self.alive,
                        candidates=~gone)
        t2 = time.perf_counter()
        filled = self.view >= 0
        drop = filled & gone[np.where(filled, self.view, 0)]
        self.view[drop] = -1
        self.kind[drop] = KIND_EMPTY
        # Algorithm 5, piggybacked on the profile
        indptr, nbrs = self.links()
        self.gw, self.parent, self.hops = gateway_round(
            indptr, nbrs, self.alive, self.instance.sub_indptr, self.instance.sub_topics,
            self.tids, self.ids, (self.gw, self.parent, self.hops), self.max_hops,
            self.v["loop_rule"] == "split-horizon")
        t3 = time.perf_counter()
        self.seconds["sampling"] += t1 - t0
        self.seconds["tman"] += t2 - t1
        self.seconds["profile"] += t3 - t2
        self.cycles += 1
        self.ring_curve.append(ring_correct(self.view, self.ids, self.alive))
        self.gateway_curve.append(int(self.gateway_mask().sum()))

    def gateway_mask(self) -> np.ndarray:
        """Subscription entries whose node is its own gateway (and online)."""
        return (self.gw == self._owner) & self.alive[self._owner]

    # ------------------------------------------------------------- churn
    def join(self, nodes: np.ndarray, bootstrap: int = 5) -> None:
        """Nodes come online: empty table, a bootstrap answer of ``bootstrap`` nodes,
        fresh sw targets, own proposals (Algorithm 1)."""
        nodes = np.asarray(nodes, np.int64)
        self.alive[nodes] = True
        self.sampling.alive = self.alive
        self.sampling.fill(nodes, self._rng_join, bootstrap)
        self.view[nodes] = -1
        self.kind[nodes] = KIND_EMPTY
        self.left_at[nodes] = np.iinfo(np.int64).max // 2
        self.targets[nodes] = harmonic_targets(
            self.ids[nodes], self.targets.shape[1], self._rng_sw,
            n_estimate=int(self.alive.sum()), direction=self.v["sw_direction"])
        ent = np.isin(self._owner, nodes)
        self.gw[ent] = self._owner[ent]
        self.parent[ent] = self._owner[ent]
        self.hops[ent] = 0

    def leave(self, nodes: np.ndarray) -> None:
        """Nodes crash or leave silently; neighbours notice through ageing (§III-D)."""
        nodes = np.asarray(nodes, np.int64)
        self.alive[nodes] = False
        self.left_at[nodes] = self.cycles
        self.sampling.alive = self.alive

    def ring_correct(self) -> float:
        """Share of online nodes holding their true live successor and predecessor."""
        return ring_correct(self.view, self.ids, self.alive)

    # ------------------------------------------------------------- relays
    def link_topics(self) -> np.ndarray:
        """The forwarding links of the current gateways' relay paths (:meth:`relays`), rebuilt
        now as the gateways' periodic RequestRelay."""
        return self.relays()["link_topics"]

    def relays(self) -> dict[str, Any]:
        """Relay paths of the current gateways (RequestRelay), and the forwarding labels."""
        inst = self.instance
        both = self.v["lookup_links"] == "both"
        indptr, nbrs = link_csr(self.view, self.alive, both=both)
        gws = np.flatnonzero(self.gateway_mask())
        max_steps = 4 * int(np.ceil(np.log2(max(self.alive.sum(), 2)))) ** 2
        paths = self.v["relay_links"] == "paths"
        rn, rt, lk, hops, ends, failed = relay_paths(
            indptr, nbrs, self.ids, self._owner[gws], inst.sub_topics[gws], self.tids,
            inst.masks, max_steps, record_links=True)
        lk = lk.copy()
        _orient(self.view, lk)
        fmasks = np.array(inst.masks, copy=True)
        np.bitwise_or.at(fmasks, (rn, rt >> 6),
                         np.left_shift(np.uint64(1), (rt & 63).astype(np.uint64)))
        if paths:
            cluster = _label_links(self.view, self.alive, False, fmasks, inst.masks)
            labels = np.unique(np.concatenate([cluster, lk]), axis=0)
        else:
            labels = _label_links(self.view, self.alive, True, fmasks, inst.masks)
        return {
            "relay_nodes": rn, "relay_topics": rt, "forward_masks": fmasks,
            "link_topics": np.ascontiguousarray(labels, np.int64), "gateways": gws,
            "path_links": lk,
            "lookup_hops": hops, "lookup_ends": ends, "lookup_failed": failed,
        }

    def overlay(self) -> Overlay:
        """The routing tables as a directed overlay (online nodes, out-links = RT)."""
        p, j = np.nonzero(self.view >= 0)
        q = self.view[p, j]
        ok = self.alive[p] & self.alive[q] & (p != q)
        edges = np.unique(np.column_stack([p[ok], q[ok]]), axis=0)
        return Overlay.from_edges(self.n, edges, directed=True)


class Vitis(StaticProtocol, CycleProtocol):
    """Vitis (IPDPS 2011): ring + small-world + friends by eq. (1), gateways, relay paths.

    After :meth:`build`: ``run_`` (the :class:`VitisRun`), ``link_topics_``,
    ``forward_masks_``, ``relays_`` (relay pairs, gateways, lookups) and
    ``stats_`` (curves per cycle and counts).
    """

    name = "vitis"
    paper = ("Rahimian, Girdzijauskas, Payberah, Haridi, Vitis: a gossip-based hybrid overlay "
             "for Internet-scale publish/subscribe, IPDPS 2011")
    directed = True
    forwarding = "mesh"
    labels_links = True
    params = {
        "rt": Int(15, "routing-table size RT (§IV-A: 15; 15-35 in §IV-C)", low=3,
                  unit="links"),
        "k": Int(3, "sw-neighbours including the two ring links (reading A3; §IV-A: 3)",
                 low=2, unit="links"),
        "d": Int(5, "gateway hop threshold d of Algorithm 5 (§IV-A: 5)", low=1, unit="hops"),
        "cycles": Int(100, "gossip cycles before the relay paths are built", low=1),
        "cache": Int(20, "peer-sampling cache size (not in the paper; PeerSim's 20)", low=1),
        "sampler": Choice("newscast", SAMPLERS, "peer-sampling service (§IV: Newscast)"),
        "sw_direction": Choice("both", SW_DIRECTIONS,
                               "sign of the harmonic sw draw (reading A4)"),
        "lookup_links": Choice("both", ("both", "rt"),
                               "links a lookup may use: both directions or own RT (A6)"),
        "hop_limit": Choice("pseudocode", ("pseudocode", "text"),
                            "gateway reach: d-1 hops (Alg. 5 line 10) or d (text) (A5b)"),
        "loop_rule": Choice("split-horizon", ("split-horizon", "printed"),
                            "Alg. 5 line 7: refuse own echoes, or as printed (A5a)"),
        "include_self": Bool(True, "each side sends its own descriptor in T-Man (A1)"),
        "partner": Choice("ranked", ("ranked", "uniform"),
                          "T-Man partner: uniform in RT (§III-A) or among the psi nearest "
                          "ids (T-Man's selectPeer) (A2)"),
        "psi": Int(4, "partner=ranked: table entries nearest in id to pick among (A2)", low=1,
                   unit="entries"),
        "relay_links": Choice("induced", ("induced", "paths"),
                              "relay forwarding: §III-C rule, or cluster + path links"),
        "stale": Int(3, "cycles without an answer before an entry is dropped (Alg. 6)",
                     low=1, unit="cycles"),
    }
    quick_params = {"rt": 6, "cycles": 12, "cache": 8}

    def _check(self, values: dict[str, Any]) -> None:
        if values["k"] > values["rt"]:
            raise ParameterError(
                f"{self.name}: parameter k must be <= rt ({values['rt']}), got {values['k']}",
                key="k")

    def degree_bound(self, instance: Instance) -> int:
        """Out-degree bound: the routing-table size (in-degree is not bounded)."""
        return self.checked()["rt"]

    def cycle_engine(self, instance: Instance, streams: RngStreams) -> VitisRun:
        """A fresh network state, not started (:meth:`VitisRun.start`), no cycle run yet."""
        return VitisRun(self._validate(instance), instance, streams, start=False)

    def control_traffic(self, rounds: ControlRounds) -> ControlBatch:
        """The gossip of the built network, one round per cycle (``docs/network.md``).

        Each online node, each round: a Newscast exchange (its cache and its
        descriptor, both ways), a T-Man exchange with the partner of reading
        A2 (view, sample and descriptor, both ways), and its profile to every
        routing-table entry, answered (Algorithms 6-7: one gateway proposal
        per subscribed topic; the relay requests of Algorithm 5 are left out).
        See :func:`hedgerow.protocols.control.gossip_rounds`.

        Examples
        --------
        >>> from hedgerow.protocols.control import ControlRounds
        >>> from hedgerow.workloads import make_instance
        >>> v = Vitis(rt=4, cycles=5, cache=4)
        >>> _ = v.build(make_instance(nodes=30, topics=5, subs=2, seed=1), seed=1)
        >>> cb = v.control_traffic(ControlRounds(1000.0, 0.0, np.random.default_rng(0)))
        >>> len(cb) >= 30 * (2 + 2), int(cb.answers.max()) < len(cb)
        (True, True)
        """
        run = self._built_run()
        return gossip_rounds(rounds, run.alive, run.sampling, run.tman, run.view,
                             profile_entries=run.instance.n_subs)

    def _built_run(self) -> VitisRun:
        run = self.__dict__.get("run_")
        if run is None:
            raise ParameterError(f"{self.name}: control_traffic needs a built network; build "
                                 "first", key="control_size")
        return run

    def _build(self, instance: Instance, streams: RngStreams, *, progress: Any
               ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        t0 = time.perf_counter()
        run = VitisRun(v, instance, streams)
        for c in range(v["cycles"]):
            run.cycle()
            if progress is not None:
                progress(c + 1, v["cycles"])
        t1 = time.perf_counter()
        rel = run.relays()
        overlay = run.overlay()
        t2 = time.perf_counter()
        self.run_ = run
        self.relays_ = rel
        self.link_topics_ = rel["link_topics"]
        self.forward_masks_ = rel["forward_masks"]
        und = overlay.undirected_csr()
        total_deg = np.diff(und.indptr)
        in_deg = np.bincount(overlay.edges()[:, 1], minlength=instance.n_nodes)
        comps = topic_components(overlay, instance)
        relay_nodes = np.unique(rel["relay_nodes"]).size
        curve = run.ring_curve
        reach99 = next((i + 1 for i, x in enumerate(curve) if x >= 0.99), None)
        stats = {
            "cycles": v["cycles"],
            "ring_correct": curve[-1] if curve else 0.0,
            "ring_99_cycle": reach99,
            "ring_curve": [float(x) for x in curve],
            "gateway_curve": run.gateway_curve,
            "gateways": int(rel["gateways"].size),
            "clusters": int(comps.sum()),
            "relay_pairs": int(rel["relay_nodes"].size),
            "relay_nodes": int(relay_nodes),
            "lookup_hops_mean": float(rel["lookup_hops"].mean()) if rel["gateways"].size else 0.0,
            "lookup_hops_max": int(rel["lookup_hops"].max()) if rel["gateways"].size else 0,
            "lookup_failures": int(rel["lookup_failed"].sum()),
            "degree_mean": float(total_deg.mean()),
            "degree_max": int(total_deg.max()),
            "in_degree_max": int(in_deg.max()),
            "link_topic_rows": len(self.link_topics_),
            "seconds_cycles": t1 - t0,
            "seconds_tman_per_cycle": run.seconds["tman"] / max(run.cycles, 1),
            "seconds_sampling_per_cycle": run.seconds["sampling"] / max(run.cycles, 1),
            "seconds_profile_per_cycle": run.seconds["profile"] / max(run.cycles, 1),
            "seconds_relays": t2 - t1,
        }
        return overlay, stats
