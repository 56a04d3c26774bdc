"""Topiary: learned pub/sub topologies by subset scoring and topic-aware exploration.

Paper: Y. Mao and S. Bojja Venkatakrishnan, "Topiary: Fast, Scalable
Publish/Subscribe for Peer-to-Peer (D)Apps", arXiv:2312.06800, 2023
(Algorithm 1, sections IV-A to IV-E, evaluation in section V).

Every node ``v`` keeps at most ``d`` *outgoing* neighbours and accepts any
number of incoming ones; links carry traffic both ways.  Time runs in epochs of
``messages`` messages (topic uniform, publisher uniform among the topic's
subscribers, TTL ``ttl``).  At the end of an epoch each node scores every
subset of ``round(0.6 d)`` of its outgoing neighbours from what it observed,
keeps the best subset and fills the free slots by weighted sampling.

This package holds the protocol (:class:`Topiary`: validation, the epoch loop
:meth:`Topiary.iterate`, the end-of-epoch selection :meth:`Topiary.select`);
the observation kernel and the scores of eqs. (2)-(9) are in
:mod:`hedgerow.protocols.topiary.scoring`.  What it shares with the other
adaptive protocols lives below it: the out-link table
(:mod:`hedgerow.model.outlinks`), message traffic
(:mod:`hedgerow.workloads.traffic`), chunked dissemination
(:mod:`hedgerow.dissemination.chunks`), the delivery measures
(:mod:`hedgerow.metrics.delivery`) and weighted sampling
(:mod:`hedgerow.protocols._sampling`).

Readings chosen where the paper is ambiguous or self-contradictory
------------------------------------------------------------------
1. **Lower score is better.**  Algorithm 1 (line 19) and the end of IV-D say
   "argmax / highest score", but IV-D also says "a higher score indicates
   poorer performance", ``F_d`` (a delay) and ``F_w`` (a count of unwanted
   messages) are costs, and IV-E calls ``min_θ S^θ`` the *best* topic score.
   Only the minimising reading makes all three terms and IV-E agree, so the
   kept subset is ``argmin S(Γ)``.
2. **``F_c`` counts what Γ fails to relay.**  Eq. (3) as printed is the
   fraction of the expected messages that Γ *does* relay, while the text
   around it ("quantifies the fraction of messages that Γ fails to relay",
   "the complementary aspect ... messages that were not delivered by Γ") says
   the opposite.  With a minimised score only the "fails" reading rewards
   coverage, so ``F_c(Γ) = 1 - (eq. 3)`` and ``F_c^θ = 1 - (eq. 8)``.  The
   estimate ``E_θ`` is the exact number of messages published on ``θ`` in the
   epoch by nodes other than ``v`` (the paper leaves the estimator to the
   application and suggests sequence numbers, which give exactly this count).
3. **Units and weights.**  ``F_c`` is a fraction, ``F_w`` a count and
   ``F_d`` a delay in **seconds** (the latency models are in ms; the scores
   divide by 1000).  Section V-B4 sets ``w_w = 0`` and sweeps ``w_d`` over
   ``1000 .. 10000``, i.e. 1 to 10 score units per millisecond, which is the
   scale of the paper's delays; we take ``wd = 1000`` and ``ww = 0``.  The
   same section normalises ``w_c = 1`` for its sensitivity study only; with
   it a subset that loses *every* message scores as badly as 1 ms of extra
   delay, so a node keeps a fast neighbour that silently drops a topic (the
   test ``test_reading_lower_score_is_better_and_coverage_counts_failures``
   shows the difference) and a topic that is never delivered looks like the
   node's *best* topic in eq. (9).  Following IV-D ("where data loss is
   intolerable ... ``w_c > w_d > w_w``") the default is ``wc = 1000``:
   missing 1 % of the expected messages costs as much as 10 ms of extra
   relative delay.
4. **Observations.**  ``T_u^m`` is the arrival at ``v`` of the copy sent by
   ``u`` on link ``u -> v`` and ``T_min^m`` is ``v``'s first arrival of
   ``m`` over *all* its links, so relative delays are ``>= 0``.  A node does
   not observe messages it published, nor messages it never received.
5. **Subsets.**  Only outgoing neighbours are scored (incoming links are not
   the node's to drop); a node with ``<= round(0.6 d)`` outgoing neighbours
   keeps them all.  Ties go to the first subset in lexicographic order.
6. **Exploration.**  ``σ_v^+ = {θ ∈ σ_v : S^θ(Γ*) > η · min S^θ(Γ*)}`` over
   topics that had messages this epoch; weights ``ω_u = |σ_u ∩ σ_v^+|``;
   ``d - |Γ*|`` new neighbours are drawn without replacement with probability
   proportional to ``ω_u`` (Efraimidis-Spirakis keys).  Candidates exclude
   ``v``, *all* current neighbours (outgoing, including the ones just
   dropped, and incoming: a second link to a current neighbour adds nothing),
   so every explored peer is new.  When fewer candidates than free slots have
   ``ω_u > 0`` (for instance ``σ_v^+`` empty), the rest are drawn uniformly
   from the remaining candidates.  The paper gives no value for ``η``; the
   default ``eta=2`` was chosen from a sweep (``docs/topiary.md``).

Examples
--------
>>> import numpy as np
>>> subset_table(4, 2).tolist()
[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
>>> keep_size(6), keep_size(5)
(4, 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from hedgerow.dissemination import disseminate_chunks, edge_delays
from hedgerow.errors import ParameterError
from hedgerow.latency import latency_model, processing_delays
from hedgerow.metrics.delivery import delivery_stats
from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import closure_csr, entry_index, out_overlay, random_out_neighbours
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols._sampling import weighted_sample
from hedgerow.protocols.base import OverlayProtocol, as_float, as_int
from hedgerow.protocols.topiary.scoring import (
    Observations,
    subset_scores,
    topic_scores,
    underperforming,
)
from hedgerow.workloads.traffic import draw_messages

__all__ = ["KEEP_FRACTION", "EpochReport", "Topiary", "keep_size", "subset_table"]

#: fraction of the degree bound kept each epoch (section IV, "approximately 60%")
KEEP_FRACTION = 0.6


# --------------------------------------------------------------------------- helpers
def keep_size(d: int, keep: float = KEEP_FRACTION) -> int:
    """Size of the kept subset, ``round(keep * d)`` with halves rounded up.

    Examples
    --------
    >>> keep_size(6), keep_size(5), keep_size(10)
    (4, 3, 6)
    """
    return int(np.floor(keep * d + 0.5))


def subset_table(n_slots: int, k: int) -> np.ndarray:
    """All ``k``-subsets of ``0..n_slots-1`` in lexicographic order, ``(S, k)`` int64.

    Examples
    --------
    >>> subset_table(3, 2).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    k = max(0, min(k, n_slots))
    rows = list(combinations(range(n_slots), k))
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), k)


# --------------------------------------------------------------------------- epochs
@dataclass
class EpochReport:
    """One epoch of a Topiary run, before the nodes re-select neighbours.

    Attributes
    ----------
    epoch : int
        Epoch number (0 is the random initial topology).
    out : numpy.ndarray
        ``(n_nodes, d)`` outgoing neighbours used during the epoch (``-1`` padded).
    publisher, topic : numpy.ndarray
        The epoch's messages.
    arrival : numpy.ndarray
        ``(M, n_nodes)`` first-copy arrival times (ms; ``inf`` never).
    copies, relay_copies : numpy.ndarray
        ``(M,)`` copies received in total / by unsubscribed nodes.
    scores : numpy.ndarray
        ``(n_nodes,)`` score ``S(Γ*)`` of each updating node's kept subset
        (``nan`` for nodes that do not select).
    """

    epoch: int
    out: np.ndarray
    publisher: np.ndarray
    topic: np.ndarray
    arrival: np.ndarray
    copies: np.ndarray
    relay_copies: np.ndarray
    scores: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


class Topiary(OverlayProtocol):
    """Topiary (Mao & Bojja Venkatakrishnan 2023): learned neighbour subsets per epoch.

    Parameters
    ----------
    d : int, default 6
        Out-degree bound (section V-A: 6 on the unit square, 5 on the cities).
    epochs : int, default 150
        Epochs run by :meth:`build` (section V-A).
    messages : int, default 1000
        Messages per epoch (section V-A).
    ttl : int, default 1
        Initial TTL of every message (section V-A).
    wc, wd, ww : float, default 1000, 1000, 0
        Weights of coverage (fraction missed), delay (seconds) and waste (count);
        see the module docstring, reading 3.
    eta : float, default 2.0
        Threshold ``η > 1`` of eq. (9).
    keep : float, default 0.6
        Fraction of ``d`` kept each epoch (section IV).
    latency : str, default "unit-square"
        Latency model used by :meth:`build` (a name known to
        :func:`hedgerow.latency.latency_model`).

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1], [1], [0]] * 5, n_topics=2)
    >>> proto = Topiary(d=3, epochs=2, messages=50)
    >>> ov = proto.build(inst, seed=1)
    >>> bool((ov.degree() <= 3).all()), len(proto.stats_["receive_rate"])
    (True, 2)
    """

    name = "topiary"
    paper = "Mao & Bojja Venkatakrishnan, Topiary, arXiv:2312.06800 (2023)"
    directed = True

    def __init__(
        self,
        *,
        d: int = 6,
        epochs: int = 150,
        messages: int = 1000,
        ttl: int = 1,
        wc: float = 1000.0,
        wd: float = 1000.0,
        ww: float = 0.0,
        eta: float = 2.0,
        keep: float = KEEP_FRACTION,
        latency: str = "unit-square",
    ) -> None:
        self.d = d
        self.epochs = epochs
        self.messages = messages
        self.ttl = ttl
        self.wc = wc
        self.wd = wd
        self.ww = ww
        self.eta = eta
        self.keep = keep
        self.latency = latency

    # ------------------------------------------------------------- validation
    def _check(self, n_nodes: int) -> dict[str, Any]:
        p = self.name
        d = as_int(p, "d", self.d, minimum=1)
        if d >= n_nodes:
            raise ParameterError(
                f"{p}: parameter d must be below the number of nodes ({n_nodes}), got {d}"
            )
        eta = as_float(p, "eta", self.eta, low=1.0, high=1e12)
        if eta <= 1.0:
            raise ParameterError(f"{p}: parameter eta must be > 1 (eq. 9), got {eta}")
        keep = as_float(p, "keep", self.keep, low=0.0, high=1.0)
        return {
            "d": d,
            "epochs": as_int(p, "epochs", self.epochs, minimum=1),
            "messages": as_int(p, "messages", self.messages, minimum=1),
            "ttl": as_int(p, "ttl", self.ttl, minimum=0),
            "wc": as_float(p, "wc", self.wc, low=0.0, high=1e12),
            "wd": as_float(p, "wd", self.wd, low=0.0, high=1e12),
            "ww": as_float(p, "ww", self.ww, low=0.0, high=1e12),
            "eta": eta,
            "keep": keep,
            "k": keep_size(d, keep),
        }

    def _validate(self, instance: Instance) -> None:
        self._check(instance.n_nodes)
        if not isinstance(self.latency, str):
            raise ParameterError(
                f"{self.name}: parameter latency must be a model name, got {self.latency!r}"
            )

    def degree_bound(self, instance: Instance) -> int | None:
        """Out-degree bound ``d`` (incoming links are unbounded, section II-A)."""
        return int(self.d)

    # ------------------------------------------------------------- selection
    def select(
        self,
        out: np.ndarray,
        obs: Observations,
        instance: Instance,
        linked: np.ndarray,
        rng: np.random.Generator,
        *,
        update: np.ndarray | None = None,
        interest: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """End of epoch: keep the best subset, explore the free slots (Algorithm 1).

        Parameters
        ----------
        out : numpy.ndarray
            ``(n, d)`` current outgoing neighbours, left-packed, ``-1`` padded.
        obs : Observations
            The epoch's accumulators, subsets indexed as :func:`subset_table` ``(d, k)``.
        instance : Instance
            Subscriptions.
        linked : numpy.ndarray
            ``(n, n)`` bool, ``linked[v, u]`` when ``u`` is currently a neighbour of ``v``
            in either direction (excluded from exploration).
        rng : numpy.random.Generator
            Exploration stream.
        update : numpy.ndarray, optional
            Bool mask of nodes that re-select (default all).
        interest : numpy.ndarray, optional
            Dense subscriptions (computed from ``instance`` when omitted).

        Returns
        -------
        new_out, best_score, kept : numpy.ndarray
            Next epoch's out-neighbours, each node's ``S(Γ*)`` (``nan`` when not
            updating) and the ``(n, k)`` kept slots' nodes (``-1`` padded).
        """
        cfg = self._check(instance.n_nodes)
        d, k = cfg["d"], cfg["k"]
        n = instance.n_nodes
        if interest is None:
            interest = interest_matrix(instance.masks, instance.n_topics)
        if update is None:
            update = np.ones(n, dtype=bool)
        subsets = subset_table(d, k)
        score, _, _, _ = subset_scores(obs, interest, wc=cfg["wc"], wd=cfg["wd"], ww=cfg["ww"])
        n_out = (out >= 0).sum(axis=1)
        # a subset is valid only if all its slots are filled, unless the node has <= k neighbours
        valid = (subsets[None, :, :] < n_out[:, None, None]).all(axis=2)
        few = n_out <= k
        valid[few, :] = False
        valid[few, 0] = True  # subset 0 = slots 0..k-1 = all filled slots
        score = np.where(valid, score, np.inf)
        best = np.argmin(score, axis=1)
        best_score = score[np.arange(n), best]
        kept_slots = subsets[best]
        kept = np.where(kept_slots < n_out[:, None], np.take_along_axis(out, kept_slots, 1), -1)
        ts = topic_scores(obs, best, interest, wc=cfg["wc"], wd=cfg["wd"])
        plus = underperforming(ts, cfg["eta"])
        # nodes with an empty σ+ explore by their whole interest
        empty = ~plus.any(axis=1)
        plus[empty] = interest[empty]
        # ω[v, u] = |σ_u ∩ σ_v^+| for every pair at once
        omega = plus.astype(np.float32) @ interest.T.astype(np.float32)
        allowed = ~linked.copy()
        np.fill_diagonal(allowed, False)
        rows_k = np.repeat(np.arange(n), out.shape[1])
        cur = out.reshape(-1)
        allowed[rows_k[cur >= 0], cur[cur >= 0]] = False
        n_kept = (kept >= 0).sum(axis=1)
        n_take = np.where(update, d - n_kept, 0)
        fresh = weighted_sample(omega.astype(np.float64), allowed, n_take, rng)
        new_out = np.full_like(out, -1)
        for_update = np.concatenate([kept, fresh], axis=1)
        # left-pack: valid entries first, keep order
        order = np.argsort(for_update < 0, axis=1, kind="stable")
        packed = np.take_along_axis(for_update, order, axis=1)[:, :d]
        new_out[update] = packed[update]
        new_out[~update] = out[~update]
        best_score = np.where(update, best_score, np.nan)
        return new_out, best_score, kept

    # ------------------------------------------------------------- epochs
    def iterate(
        self,
        instance: Instance,
        latency: Any,
        proc_delay: np.ndarray,
        streams: RngStreams,
        *,
        publishers: Instance | None = None,
        update: np.ndarray | None = None,
        fixed_edges: np.ndarray | None = None,
        silent: np.ndarray | None = None,
        silent_topic: int | None = None,
        epochs: int | None = None,
    ) -> Iterator[EpochReport]:
        """Run epochs and yield an :class:`EpochReport` for each.

        Parameters
        ----------
        instance : Instance
            Subscriptions (what nodes are interested in and relay by).
        latency : LatencyModel
            Link latencies (``edge_delays`` reads it).
        proc_delay : numpy.ndarray
            ``(n,)`` processing delay of each node (ms).
        streams : RngStreams
            Named streams: ``topiary:init``, ``topiary:messages``, ``topiary:explore``.
        publishers : Instance, optional
            Who may publish on each topic (default ``instance``).
        update : numpy.ndarray, optional
            Bool mask of nodes running Topiary (others keep no outgoing slots and
            never re-select; default all).
        fixed_edges : numpy.ndarray, optional
            ``(k, 2)`` extra links that always exist (e.g. an attackers' clique).
        silent, silent_topic : optional
            Nodes that never forward messages of ``silent_topic``.
        epochs : int, optional
            Number of epochs (default the ``epochs`` parameter).
        """
        cfg = self._check(instance.n_nodes)
        n, d, k = instance.n_nodes, cfg["d"], cfg["k"]
        n_epochs = cfg["epochs"] if epochs is None else int(epochs)
        publishers = instance if publishers is None else publishers
        update = np.ones(n, dtype=bool) if update is None else np.asarray(update, dtype=bool)
        masks = np.ascontiguousarray(instance.masks)
        interest = interest_matrix(masks, instance.n_topics)
        subsets = subset_table(d, k)
        proc = np.asarray(proc_delay, dtype=np.float64)
        out = random_out_neighbours(n, d, streams.stream("topiary:init"), active=update)
        msg_rng = streams.stream("topiary:messages")
        explore_rng = streams.stream("topiary:explore")
        for epoch in range(n_epochs):
            indptr, indices = closure_csr(out, n, fixed_edges)
            ed = np.asarray(edge_delays(indptr, indices, latency), dtype=np.float64)
            publisher, topic = draw_messages(publishers, cfg["messages"], msg_rng)
            obs = Observations.empty(n, len(subsets), instance.n_topics)
            obs.add_published(publisher, topic)
            arrival = np.empty((len(publisher), n))
            copies = np.zeros(len(publisher), dtype=np.int64)
            relay = np.zeros(len(publisher), dtype=np.int64)
            slot_full = entry_index(
                indptr, indices, out.reshape(-1), np.repeat(np.arange(n), d)
            ).reshape(n, d)
            for sel, dl, emap in disseminate_chunks(
                indptr,
                indices,
                ed,
                proc,
                masks,
                publisher,
                topic,
                cfg["ttl"],
                record_edges=True,
                silent=silent,
                silent_topic=silent_topic,
            ):
                arr = np.asarray(dl.arrival, dtype=np.float64)
                arrival[sel] = arr
                copies[sel] = np.asarray(dl.copies)
                relay[sel] = np.asarray(dl.relay_copies)
                slot = np.where(slot_full >= 0, emap[np.maximum(slot_full, 0)], -1)
                obs.add_chunk(
                    arr,
                    dl.edge_recv,
                    slot,
                    topic[sel],
                    publisher[sel],
                    masks,
                    subsets,
                    count_waste=cfg["ww"] > 0,
                )
            rows = np.repeat(np.arange(n), np.diff(indptr))
            linked = np.zeros((n, n), dtype=bool)
            linked[rows, indices] = True
            new_out, scores, _ = self.select(
                out, obs, instance, linked, explore_rng, update=update, interest=interest
            )
            yield EpochReport(
                epoch=epoch,
                out=out,
                publisher=publisher,
                topic=topic,
                arrival=arrival,
                copies=copies,
                relay_copies=relay,
                scores=scores,
            )
            out = new_out
        self.out_ = out

    # ------------------------------------------------------------- build
    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: bool
    ) -> tuple[Overlay, dict[str, Any]]:
        n = instance.n_nodes
        lat = latency_model(self.latency, n, streams.stream("latency"))
        proc = processing_delays(n, streams.stream("processing"))
        masks = instance.masks
        interest = interest_matrix(masks, instance.n_topics)
        rates, delays, scores = [], [], []
        for rep in self.iterate(instance, lat, proc, streams):
            rr, dd = delivery_stats(rep.arrival, rep.publisher, rep.topic, interest)
            rates.append(rr)
            delays.append(dd)
            scores.append(float(np.nanmean(rep.scores)))
        overlay = out_overlay(self.out_)
        stats = {"receive_rate": rates, "avg_delay_ms": delays, "avg_score": scores}
        return overlay, stats
