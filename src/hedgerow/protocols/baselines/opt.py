"""OPT, the Overlay-Per-Topic baseline of Vitis (IPDPS 2011, section IV).

Paper: F. Rahimian, S. Girdzijauskas, A. H. Payberah, S. Haridi, "Vitis: A
Gossip-based Hybrid Overlay for Internet-scale Publish/Subscribe Enabling
Rendezvous Routing in Unstructured Overlay Networks", IPDPS 2011.

What the paper says OPT is:

* section IV: "an unstructured subscription aware solution that constructs an
  Overlay Per Topic, while minimizing node degrees by exploiting the
  subscription correlations, similar to SpiderCast [16]"; "To make the three
  systems comparable they use the same peer sampling service (Newscast) and
  overlay construction protocol (T-Man)";
* section I: it "exploits the subscription correlation between nodes, without
  any bound on node degree";
* section IV-E: "OPT with a bounded node degree can not achieve a full hit
  ratio ... OPT needs to be free of any bound on the node degree" (Fig. 10a
  bounded at the RT size 15-35, Fig. 11 unbounded); "the events are only
  disseminated among the subscribers and there is no traffic overhead at all".

Readings chosen (``docs/vitis.md``):

* **Gossip.** The shared gossip layer (:mod:`hedgerow.gossip`): T-Man
  exchanges over a peer-sampling service (Newscast by default, as the paper;
  ``sampler="uniform"`` is ideal sampling).  Node ``p`` picks a partner ``q``
  uniformly among its current neighbours; both re-select from the union of
  both views, both samples and both descriptors.
* **Greedy coverage** (``overlay="coverage"``, the earlier default, kept
  because "similar to SpiderCast" supports it too).  Repeatedly take the candidate
  that covers the most of the node's topics still covered fewer than
  ``coverage`` times by the links already chosen (ties go to the candidate met
  first in the buffer), until no candidate adds coverage or, when bounded,
  ``rt`` links are chosen.  ``coverage`` defaults to 3, SpiderCast's own
  greedy coverage K_g = 3 (DEBS 2007, section 3): OPT is "similar to
  SpiderCast".  With 1-coverage a node stops after about 7 links on the
  Twitter-like graph, the bound of 15-35 never binds and topics stay split
  (hit ratio 0.95 at RT 15, 0.99 at RT 35, 11% of nodes above degree 15).
* **Per-topic rings** (``overlay="ring"``, the default):
  "an Overlay Per Topic" built with "the same ... overlay construction
  protocol (T-Man)" read literally: for every topic of ``p``, the subscriber
  nearest in id clockwise and counter-clockwise among the candidates (T-Man's
  ring ranking, one ring per topic); a link that serves several topics' rings
  is one link ("exploiting the subscription correlations"), and a bounded
  table keeps the links filling the most ring slots.  Converged and unbounded,
  every topic's subscribers form a ring, so the hit ratio is 1.  On the
  Twitter-like graph this reading gives Fig. 11's shape (92% of nodes above
  degree 15, maximum 697 after 30 cycles, 619 when converged; coverage: 47%,
  3,262), though more nodes above 200 (6% against the paper's 0.3%); so it is
  the default.  ``docs/vitis-baselines.md`` has both readings side by side.
* **Bounded** (``unbounded=False``): at most ``rt`` out-links per node;
  **unbounded**: as many as coverage needs (Fig. 11).  Links carry traffic
  both ways (a link exists when either end chose it), as for Vitis and RVR,
  so the out-degree is what the bound limits and the total degree is
  reported (Fig. 11 plots it).
* **Forwarding** (``forward``), two readings of "an Overlay Per Topic":

  - ``forward="topic"`` (the default, policy ``"topic"``): an event of topic
    ``t`` floods every overlay link whose two ends subscribe to ``t``
    (SpiderCast's topic-induced subgraph), so a link built for another topic
    carries it too;
  - ``forward="own"`` (``overlay="ring"`` only; policy ``"mesh"``): an event
    of topic ``t`` travels only on ``t``'s own ring: node ``p`` forwards it to
    the neighbour (links used both ways) subscribing to ``t`` nearest in id
    clockwise and the one nearest counter-clockwise, with the ids and ring
    distance the ring selection uses (:func:`own_ring_links`, which the build
    stores as ``link_topics_``).  The overlay is the same; only the links an
    event may take differ.  This is the paper's "a topic overlay in OPT might
    be any arbitrary graph and therefore there is no upper bound on the
    propagation delay" taken literally.

  Either way an event travels only among its topic's subscribers, so the
  overhead is 0 by construction and the hit ratio measures whether each
  topic's overlay (induced subgraph, or own ring) is connected.  On the
  Twitter-like graph the first makes OPT faster than Vitis, the second far
  slower (``docs/vitis-baselines.md``, "Vitis faster than OPT").

Examples
--------
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1]] * 5, n_topics=2)
>>> ov = OPT(rt=2, cycles=10).build(inst, seed=1)
>>> bool((ov.degree() <= 2).all()), ov.directed
(True, True)

The own-ring reading, on the same overlay: its links, labelled with their topic.

>>> own = OPT(rt=2, cycles=10, forward="own")
>>> bool((own.build(inst, seed=1).edges() == ov.edges()).all()), own.forwarding
(True, 'mesh')
>>> own.link_topics_.shape[1], OPT.forwarding
(3, 'topic')
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.gossip import PeerSampling, TMan
from hedgerow.model.bitset import popcount64
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Bool, Choice, Int
from hedgerow.protocols.base import StaticProtocol
from hedgerow.protocols.vitis import ring

__all__ = ["OPT", "coverage_select", "own_ring_links", "topic_ring_select"]


@numba.njit(cache=True)
def _has(masks, c, t):  # pragma: no cover
    return (masks[c, t >> 6] >> np.uint64(t & 63)) & np.uint64(1)


@numba.njit(cache=True)
def _gain(p, c, indptr, topics, need, masks):  # pragma: no cover
    """Topics of ``p`` still needed that ``c`` covers, walking the shorter of the two lists."""
    g = 0
    if indptr[c + 1] - indptr[c] <= indptr[p + 1] - indptr[p]:
        for j in range(indptr[c], indptr[c + 1]):
            if need[topics[j]] > 0:
                g += 1
    else:
        for j in range(indptr[p], indptr[p + 1]):
            t = topics[j]
            if need[t] > 0 and _has(masks, c, t):
                g += 1
    return g


@numba.njit(cache=True, inline="always")
def _argmax_positive(vals, m):  # pragma: no cover - compiled
    """Index of the first largest positive value of ``vals[:m]``, or -1 when none is positive."""
    best = -1
    bv = 0
    for i in range(m):
        if vals[i] > bv:
            bv = vals[i]
            best = i
    return best


@numba.njit(cache=True)
def _select(
    p, cand, n_cand, indptr, topics, masks, need, coverage, cap, out_row, gains
):  # pragma: no cover
    """Greedy coverage of ``p``'s topics from ``cand[:n_cand]`` into ``out_row``; the count."""
    for j in range(indptr[p], indptr[p + 1]):
        need[topics[j]] = coverage
    for i in range(n_cand):
        gains[i] = _gain(p, cand[i], indptr, topics, need, masks)
    k = 0
    while k < cap:
        best = _argmax_positive(gains, n_cand)
        if best < 0:
            break
        c = cand[best]
        out_row[k] = c
        k += 1
        gains[best] = 0
        # exact incremental gains: a topic that stops being needed leaves every candidate's gain
        for j in range(indptr[p], indptr[p + 1]):
            t = topics[j]
            if need[t] > 0 and _has(masks, c, t):
                need[t] -= 1
                if need[t] == 0:
                    for i in range(n_cand):
                        if gains[i] > 0 and _has(masks, cand[i], t):
                            gains[i] -= 1
    for j in range(indptr[p], indptr[p + 1]):
        need[topics[j]] = 0
    for i in range(k, out_row.shape[0]):
        out_row[i] = -1
    return k


@numba.njit(cache=True)
def _coverage_rows(
    rows, indptr, cand, view, sub_indptr, topics, masks, coverage
):  # pragma: no cover
    """Greedy coverage for every ``rows[i]`` from ``cand[indptr[i]:indptr[i+1]]`` into ``view``."""
    width = view.shape[1]
    need = np.zeros(np.int64(topics.max()) + 1 if topics.shape[0] else 1, dtype=np.int32)
    longest = 0
    for i in range(rows.shape[0]):
        longest = max(longest, indptr[i + 1] - indptr[i])
    buf = np.empty(longest, dtype=np.int64)
    gains = np.empty(longest, dtype=np.int64)
    row = np.empty(width, dtype=np.int64)
    for i in range(rows.shape[0]):
        m = indptr[i + 1] - indptr[i]
        for t in range(m):
            buf[t] = cand[indptr[i] + t]
        _select(rows[i], buf, m, sub_indptr, topics, masks, need, coverage, width, row, gains)
        for j in range(width):
            view[rows[i], j] = row[j]


def coverage_select(
    node: int, candidates: np.ndarray, instance: Instance, *, coverage: int = 1, cap: int = 10**9
) -> np.ndarray:
    """The links greedy coverage keeps for ``node`` from ``candidates`` (in buffer order).

    Examples
    --------
    Node 0 wants topics 0-3; node 1 covers {0, 1}, node 2 {2}, node 3 {0, 1, 2, 3}:

    >>> inst = Instance.from_lists([[0, 1, 2, 3], [0, 1], [2], [0, 1, 2, 3]])
    >>> coverage_select(0, np.array([1, 2, 3]), inst).tolist()
    [3]
    >>> coverage_select(0, np.array([1, 2, 3]), inst, coverage=2).tolist()
    [3, 1, 2]
    >>> coverage_select(0, np.array([1, 2, 3]), inst, coverage=2, cap=2).tolist()
    [3, 1]
    """
    cand = np.asarray(candidates, dtype=np.int64)
    width = max(1, min(cap, len(cand)))
    row = np.empty(width, dtype=np.int64)
    need = np.zeros(instance.n_topics, dtype=np.int32)
    k = _select(int(node), cand, len(cand), instance.sub_indptr,
                instance.sub_topics.astype(np.int64), instance.masks, need, int(coverage),
                width, row, np.empty(len(cand), dtype=np.int64))
    return row[:k]


@numba.njit(cache=True)
def _ring_scratch(topics, most, longest):  # pragma: no cover
    """The work arrays of :func:`_ring_slots`: ``(pos, s_d, s_i, p_d, p_i, slots)`` for nodes of
    at most ``most`` topics and ``longest`` candidates."""
    n_topics = np.int64(topics.max()) + 1 if topics.shape[0] else 1
    return (np.full(n_topics, -1, dtype=np.int64), np.empty(most, np.uint64),
            np.empty(most, np.int64), np.empty(most, np.uint64), np.empty(most, np.int64),
            np.empty(longest, np.int64))


@numba.njit(cache=True)
def _ring_slots(
    p, cand, n_cand, indptr, topics, masks, ids, pos, s_d, s_i, p_d, p_i, slots
):  # pragma: no cover
    """Per topic of ``p``: the candidate nearest clockwise and counter-clockwise among its
    subscribers (by index into ``cand``); ``slots[i]`` = ring slots candidate ``i`` fills."""
    a = indptr[p]
    m = indptr[p + 1] - a
    for j in range(m):
        pos[topics[a + j]] = j
        s_i[j] = -1
        p_i[j] = -1
    me = ids[p]
    for i in range(n_cand):
        slots[i] = 0
        c = cand[i]
        if c == p:
            continue
        cw = ids[c] - me
        cc = me - ids[c]
        if indptr[c + 1] - indptr[c] <= m:
            for e in range(indptr[c], indptr[c + 1]):
                j = pos[topics[e]]
                if j >= 0:
                    if s_i[j] < 0 or cw < s_d[j]:
                        s_d[j] = cw
                        s_i[j] = i
                    if p_i[j] < 0 or cc < p_d[j]:
                        p_d[j] = cc
                        p_i[j] = i
        else:
            for j in range(m):
                if _has(masks, c, topics[a + j]):
                    if s_i[j] < 0 or cw < s_d[j]:
                        s_d[j] = cw
                        s_i[j] = i
                    if p_i[j] < 0 or cc < p_d[j]:
                        p_d[j] = cc
                        p_i[j] = i
    for j in range(m):
        pos[topics[a + j]] = -1
        if s_i[j] >= 0:
            slots[s_i[j]] += 1
        if p_i[j] >= 0 and p_i[j] != s_i[j]:
            slots[p_i[j]] += 1


@numba.njit(cache=True)
def _topic_ring_rows(rows, indptr, cand, view, sub_indptr, topics, masks, ids):  # pragma: no cover
    """Per-topic rings for every ``rows[i]`` from ``cand[indptr[i]:indptr[i+1]]`` into ``view``:
    the links filling the most ring slots first (ties to the candidate met first)."""
    width = view.shape[1]
    longest = 0
    most = 0
    for i in range(rows.shape[0]):
        longest = max(longest, indptr[i + 1] - indptr[i])
        r = rows[i]
        most = max(most, sub_indptr[r + 1] - sub_indptr[r])
    pos, s_d, s_i, p_d, p_i, slots = _ring_scratch(topics, most, longest)
    for i in range(rows.shape[0]):
        r = rows[i]
        a = indptr[i]
        m = indptr[i + 1] - a
        _ring_slots(r, cand[a:a + m], m, sub_indptr, topics, masks, ids, pos, s_d, s_i, p_d,
                    p_i, slots)
        k = 0
        while k < width:
            best = _argmax_positive(slots, m)
            if best < 0:
                break
            view[r, k] = cand[a + best]
            slots[best] = 0
            k += 1
        for j in range(k, width):
            view[r, j] = -1


def topic_ring_select(
    node: int, candidates: np.ndarray, instance: Instance, ids: np.ndarray, *, cap: int = 10**9
) -> np.ndarray:
    """The links a per-topic ring keeps for ``node`` from ``candidates`` (most ring slots first).

    For each topic of ``node``: the subscriber among ``candidates`` nearest in id clockwise
    (successor) and counter-clockwise (predecessor); a link serving several slots is one link.

    Examples
    --------
    Ids 0..4 on the ring; node 0 wants topics 0 and 1; node 1 has {0, 1}, 2 {0}, 4 {1}:

    >>> inst = Instance.from_lists([[0, 1], [0, 1], [0], [], [1]])
    >>> ids = np.arange(5, dtype=np.uint64)
    >>> topic_ring_select(0, np.array([1, 2, 3, 4]), inst, ids).tolist()
    [1, 2, 4]
    >>> topic_ring_select(0, np.array([1, 2, 3, 4]), inst, ids, cap=1).tolist()
    [1]
    """
    cand = np.asarray(candidates, dtype=np.int64)
    width = max(1, min(cap, len(cand)))
    view = np.full((instance.n_nodes, width), -1, dtype=np.int64)
    _topic_ring_rows(np.array([node], np.int64), np.array([0, len(cand)], np.int64), cand, view,
                     instance.sub_indptr.astype(np.int64), instance.sub_topics.astype(np.int64),
                     instance.masks, np.asarray(ids, np.uint64))
    row = view[node]
    return row[row >= 0]


@numba.njit(cache=True)
def _is_out(out_indptr, out_indices, u, v):  # pragma: no cover
    """Whether ``u -> v`` is an out-link (``out_indices`` sorted within each row)."""
    row = out_indices[out_indptr[u]:out_indptr[u + 1]]
    i = np.searchsorted(row, v)
    return i < row.shape[0] and row[i] == v


@numba.njit(cache=True, inline="always")
def _put(rows, k, p, q, t, out_indptr, out_indices):  # pragma: no cover
    """Row ``k``: link ``{p, q}`` as an out-link (the lower end's when both are), topic ``t``."""
    u = min(p, q)
    v = max(p, q)
    if not _is_out(out_indptr, out_indices, u, v):
        u, v = v, u
    rows[k, 0] = u
    rows[k, 1] = v
    rows[k, 2] = t


@numba.njit(cache=True)
def _own_ring_rows(indptr, indices, sub_indptr, topics, masks, ids, out_indptr,
                   out_indices):  # pragma: no cover
    """``(u, v, t)`` for every node ``p``, topic ``t`` of ``p`` and the neighbour of ``p`` (in the
    undirected CSR ``indptr, indices``) nearest clockwise and counter-clockwise among ``t``'s
    subscribers; ``u -> v`` an out-link.  Unsorted, with repeats (both ends may choose a link)."""
    n = indptr.shape[0] - 1
    most = 1
    longest = 1
    for p in range(n):
        most = max(most, sub_indptr[p + 1] - sub_indptr[p])
        longest = max(longest, indptr[p + 1] - indptr[p])
    pos, s_d, s_i, p_d, p_i, slots = _ring_scratch(topics, most, longest)
    rows = np.empty((2 * topics.shape[0], 3), np.int64)
    k = 0
    for p in range(n):
        a = indptr[p]
        m = indptr[p + 1] - a
        cand = indices[a:a + m]
        _ring_slots(p, cand, m, sub_indptr, topics, masks, ids, pos, s_d, s_i, p_d, p_i, slots)
        for j in range(sub_indptr[p + 1] - sub_indptr[p]):
            t = topics[sub_indptr[p] + j]
            if s_i[j] >= 0:
                _put(rows, k, p, cand[s_i[j]], t, out_indptr, out_indices)
                k += 1
            if p_i[j] >= 0 and p_i[j] != s_i[j]:
                _put(rows, k, p, cand[p_i[j]], t, out_indptr, out_indices)
                k += 1
    return rows[:k]


def own_ring_links(overlay: Overlay, instance: Instance, ids: np.ndarray) -> np.ndarray:
    """The links of every topic's own ring on ``overlay``: ``(k, 3)`` int64 rows ``(u, v, t)``.

    Node ``p`` forwards an event of topic ``t`` to the neighbour (either direction: links carry
    traffic both ways) subscribing to ``t`` nearest in id clockwise and the one nearest
    counter-clockwise (the ids and ring distance of :func:`topic_ring_select`); ``t``'s own ring
    is every such link.  ``u -> v`` is a link of ``overlay`` (the lower end's when both ends
    chose it); rows sorted by ``(u, v, t)``, no repeats.

    Examples
    --------
    Ids 0..4 on the ring, every node on topic 0 and linked to all others: the ring 0-1-2-3-4-0.

    >>> inst = Instance.from_lists([[0]] * 5)
    >>> ov = Overlay.from_edges(5, [(u, v) for u in range(5) for v in range(u + 1, 5)],
    ...                         directed=True)
    >>> own_ring_links(ov, inst, np.arange(5, dtype=np.uint64)).tolist()
    [[0, 1, 0], [0, 4, 0], [1, 2, 0], [2, 3, 0], [3, 4, 0]]
    """
    und = overlay.undirected_csr()
    out = overlay.csr()
    rows = _own_ring_rows(
        und.indptr.astype(np.int64), und.indices.astype(np.int64),
        instance.sub_indptr.astype(np.int64), instance.sub_topics.astype(np.int64),
        instance.masks, np.asarray(ids, np.uint64),
        out.indptr.astype(np.int64), out.indices.astype(np.int64),
    )
    return np.unique(rows, axis=0) if len(rows) else rows.reshape(0, 3)


class _ByForward:
    """A tag whose value follows the ``forward`` parameter on an instance (the class: ``topic``)."""

    def __init__(self, topic: Any, own: Any) -> None:
        self.topic, self.own = topic, own

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is not None and getattr(obj, "forward", "topic") == "own":
            return self.own
        return self.topic


class OPT(StaticProtocol):
    """OPT: one overlay per topic over T-Man gossip, a ring per topic or greedy coverage.

    ``rt`` bounds the out-links (``unbounded=False``, Vitis Fig. 10a); with
    ``unbounded=True`` a node keeps as many as covering its topics needs
    (Fig. 11).  After :meth:`build`, ``stats_`` holds ``links_mean``,
    ``links_max`` (out-links) and ``uncovered_share`` (subscriptions with no
    neighbour sharing the topic).

    ``forward="topic"`` (the default) floods an event of topic ``t`` over every
    link between two subscribers of ``t``; ``forward="own"`` (``overlay="ring"``
    only) keeps it on ``t``'s own ring: the build also sets ``link_topics_``
    (:func:`own_ring_links`), and the instance forwards by ``"mesh"``.
    """

    name = "opt"
    paper = ("Rahimian et al., Vitis, IPDPS 2011, section IV (OPT baseline, after SpiderCast "
             "DEBS 2007)")
    directed = True
    #: ``"topic"``; ``"mesh"`` on an instance with ``forward="own"`` (its own-ring labels)
    forwarding = _ByForward("topic", "mesh")
    labels_links = _ByForward(False, True)
    params = {
        "rt": Int(15, "out-link bound (routing-table size) when bounded", low=1, unit="links"),
        "unbounded": Bool(False, "no bound: keep every link coverage needs (Vitis Fig. 11)"),
        "cycles": Int(100, "T-Man gossip cycles", low=1, unit="cycles"),
        "cache": Int(20, "peer-sampling cache size (not in the paper; PeerSim's 20)", low=1),
        "sampler": Choice("newscast", ("newscast", "cyclon", "uniform"),
                          "peer-sampling service (the paper: Newscast)"),
        "overlay": Choice("ring", ("ring", "coverage"),
                          "per-topic overlay: a T-Man ring per topic (successor and predecessor "
                          "among its subscribers), or SpiderCast's greedy coverage"),
        "coverage": Int(3, "overlay=coverage: times each subscribed topic is covered by the "
                        "links (SpiderCast's K_g, default 3)", low=1),
        "forward": Choice("topic", ("topic", "own"),
                          "an event of topic t floods every link between subscribers of t "
                          "(topic), or only t's own ring: each node's nearest neighbour "
                          "subscribing to t clockwise and counter-clockwise (own; "
                          "overlay=ring)"),
    }
    quick_params = {"rt": 4, "cycles": 5, "cache": 5}

    def _check(self, values: dict[str, Any]) -> None:
        if values["forward"] == "own" and values["overlay"] != "ring":
            raise ParameterError(
                f"{self.name}: parameter forward='own' needs overlay='ring' (per-topic rings), "
                f"got overlay={values['overlay']!r}",
                key="forward",
            )

    def degree_bound(self, instance: Instance) -> int | None:
        """Out-degree bound ``rt`` (none when unbounded)."""
        v = self.checked()
        return None if v["unbounded"] else v["rt"]

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        v = self.checked()
        n = instance.n_nodes
        sub_indptr = instance.sub_indptr
        topics = instance.sub_topics.astype(np.int64)
        masks = instance.masks
        coverage = v["coverage"]
        per_node = coverage if v["overlay"] == "coverage" else 2
        need_max = int(instance.n_subs.max()) * per_node if n else 1
        cap = need_max if v["unbounded"] else v["rt"]
        width = max(1, min(cap, n - 1))
        if v["overlay"] == "ring":
            ids = ring.node_ids(n, int(streams.stream("opt:ids").integers(0, 2**31)))

            def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray,
                       view: np.ndarray) -> None:
                _topic_ring_rows(rows, indptr, cand, view, sub_indptr, topics, masks, ids)
        else:
            def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray,
                       view: np.ndarray) -> None:
                _coverage_rows(rows, indptr, cand, view, sub_indptr, topics, masks, coverage)

        rng = streams.stream("opt:gossip")
        ps = PeerSampling(n, max(1, min(v["cache"], n - 1)), kind=v["sampler"])
        ps.bootstrap(np.ones(n, bool), rng)
        tm = TMan(width, select)
        view = tm.empty_view(n)
        for cycle in range(v["cycles"]):
            ps.cycle(rng)
            tm.cycle(view, ps, rng)
            if progress is not None:
                progress(cycle + 1, v["cycles"])
        overlay = out_overlay(view.astype(np.int64))
        und = overlay.undirected_csr()
        links = (view >= 0).sum(axis=1)
        stats = {
            "links_mean": float(links.mean()),
            "links_max": int(links.max()) if n else 0,
            "uncovered_share": _uncovered_share(und.indptr, und.indices, instance),
            "cycles": v["cycles"],
        }
        if v["forward"] == "own":
            self.link_topics_ = own_ring_links(overlay, instance, ids)
            stats["link_topic_rows"] = len(self.link_topics_)
        return overlay, stats


@numba.njit(cache=True)
def _lacking(indptr, indices, masks):  # pragma: no cover
    """Subscriptions with no neighbour on the topic, and all subscriptions."""
    n, words = masks.shape
    acc = np.zeros(words, dtype=np.uint64)
    lacking = 0
    total = 0
    for v in range(n):
        acc[:] = 0
        for e in range(indptr[v], indptr[v + 1]):
            acc |= masks[indices[e]]
        for w in range(words):
            mine = masks[v, w]
            total += popcount64(mine)
            lacking += popcount64(mine & ~acc[w])
    return lacking, total


def _uncovered_share(indptr: np.ndarray, indices: np.ndarray, instance: Instance) -> float:
    """Share of (node, topic) subscriptions with no neighbour (either direction) on the topic."""
    lacking, total = _lacking(indptr.astype(np.int64), indices.astype(np.int64), instance.masks)
    return float(lacking / total) if total else 0.0
