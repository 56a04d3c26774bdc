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

This package holds the protocol (:class:`Topiary`: validation, the adaptive
interface :meth:`Topiary.start` / :meth:`Topiary.observe` /
:meth:`Topiary.select`, and Algorithm 1 in :meth:`Topiary.select_neighbours`);
the epoch loop that drives it is the scenario's
(:func:`hedgerow.scenarios.epochs.run_protocol`); the observation kernel and
the scores of eqs. (2)-(9) are in :mod:`hedgerow.protocols.topiary.scoring`.
What it shares with the other adaptive protocols lives below it: the
out-link table (:mod:`hedgerow.model.outlinks`), message traffic
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
   default ``eta=2`` was chosen from a sweep (``docs/topiary.md``).  Two
   samplers draw this law (parameter ``exploration``): ``table`` computes ``ω``
   for a chunk of rows at a time (``n^2 T`` an epoch, and the epoch loop's
   ``n x n`` link table), ``topics`` draws a topic of ``σ_v^+`` by its
   subscriber count, then a subscriber, redrawn when not allowed
   (:mod:`hedgerow.protocols.topiary.explore`, ``O(n · d · |σ^+|)``, no
   table).  Their draws differ; ``table`` is the default, so the runs pinned at
   the papers' sizes are unchanged.

Examples
--------
>>> import numpy as np
>>> subset_table(4, 2).tolist()
[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
>>> keep_size(6), keep_size(5)
(4, 3)
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, ClassVar

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model.bitset import interest_matrix
from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import closure_csr, random_out_neighbours
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Float, Int, check_memory
from hedgerow.protocols._sampling import weighted_sample
from hedgerow.protocols.base import AdaptiveProtocol, EpochView
from hedgerow.protocols.topiary.explore import explore_topics
from hedgerow.protocols.topiary.scoring import (
    Observations,
    subset_scores,
    topic_scores,
    underperforming,
)

__all__ = ["EXPLORATIONS", "KEEP_FRACTION", "Topiary", "keep_size", "subset_table"]

#: fraction of the degree bound kept each epoch (section IV, "approximately 60%")
KEEP_FRACTION = 0.6

#: the samplers of eq. (10): ``table`` (:func:`_explore`, ω for every pair, the default: the
#: results pinned at the papers' sizes) and ``topics``
#: (:func:`~hedgerow.protocols.topiary.explore.explore_topics`, the same law in
#: ``O(n · d · |σ^+|)`` without the loop's ``n x n`` link table; other draws, so other runs)
EXPLORATIONS = ("table", "topics")


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


#: bytes of one chunk of rows of Topiary's exploration (ω, the allowed mask and ω as float64:
#: 13 bytes per pair of nodes), so 100,000 nodes take about 200 rows at a time
_CHUNK_BYTES = 256 * 2**20


def _explore(plus: np.ndarray, interest: np.ndarray, linked: np.ndarray, out: np.ndarray,
             n_take: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw each node's ``n_take`` exploration peers ``∝ ω`` (eq. 10), a chunk of rows at a time.

    ``ω[v, u] = |σ_u ∩ σ_v^+|`` is computed for one chunk of rows ``v`` at once (``float32``
    counts of topics, exact), never for all ``n x n`` pairs; a node is not drawn by itself, by
    a node it is linked to (``linked``) or by a node it already links to (``out``).  The
    uniforms are drawn once for every row, as one :func:`weighted_sample` call over the whole
    ``n x n`` table draws them, so the peers are the same whatever the chunk size.

    Examples
    --------
    >>> plus = np.array([[True, False], [False, True], [True, True]])
    >>> linked = np.zeros((3, 3), dtype=bool)
    >>> out = np.full((3, 1), -1)
    >>> _explore(plus, plus, linked, out, np.array([1, 1, 0]), np.random.default_rng(0)).tolist()
    [[2], [2], [-1]]
    """
    n = plus.shape[0]
    width = int(n_take.max()) if n else 0
    fresh = np.full((n, max(width, 0)), -1, dtype=np.int64)
    if width <= 0:
        return fresh
    u = rng.random((n, width))
    relays = np.ascontiguousarray(interest.T.astype(np.float32))
    step = max(1, _CHUNK_BYTES // (13 * n))
    for a in range(0, n, step):
        b = min(n, a + step)
        rows = np.arange(b - a)
        omega = plus[a:b].astype(np.float32) @ relays
        allowed = ~linked[a:b]
        allowed[rows, np.arange(a, b)] = False
        cur = out[a:b]
        r, c = np.nonzero(cur >= 0)
        allowed[r, cur[r, c]] = False
        got = weighted_sample(omega.astype(np.float64), allowed, n_take[a:b], rng, u=u[a:b])
        fresh[a:b, :got.shape[1]] = got
    return fresh


def _link_rows(linked: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The links of ``linked`` (an ``(n, n)`` table) as a CSR, else the closure of ``out``.

    Examples
    --------
    >>> out = np.array([[1], [-1], [1]])
    >>> [a.tolist() for a in _link_rows(np.zeros((0, 0), dtype=bool), out)]
    [[0, 1, 3, 4], [1, 0, 2, 1]]
    """
    n = out.shape[0]
    if linked.shape == (n, n):
        rows, cols = np.nonzero(linked)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return indptr, cols.astype(np.int64)
    indptr, indices = closure_csr(out, n, None)
    return np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64)


class Topiary(AdaptiveProtocol):
    """Topiary (Mao & Bojja Venkatakrishnan 2023): learned neighbour subsets per epoch.

    An adaptive protocol: the scenario's epoch loop
    (:func:`hedgerow.scenarios.epochs.run_protocol`) owns the network, the
    traffic (``messages`` per epoch, TTL ``ttl``) and the number of epochs;
    Topiary observes every chunk of messages (:meth:`observe`) and re-selects
    its out-links at the end of each epoch (:meth:`select`, Algorithm 1).
    ``wc``, ``wd``, ``ww``: see the module docstring, reading 3.

    Examples
    --------
    >>> from hedgerow.scenarios.epochs import run_protocol
    >>> from hedgerow.scenarios.world import make_world
    >>> world = make_world("cities", seed=1, topics=10, messages=50, epochs=2)
    >>> res = run_protocol(Topiary(d=3), world)
    >>> bool((res.overlay.degree() <= 3).all()), len(res.rows)
    (True, 2)
    """

    name = "topiary"
    paper = "Mao & Bojja Venkatakrishnan, Topiary, arXiv:2312.06800 (2023)"
    #: none beside the loop's ``linked`` table (``exploration="table"`` only): its selection
    #: scores and samples the nodes in chunks of rows (:data:`_CHUNK_BYTES`), not as ``n x n``
    #: arrays
    pair_bytes: ClassVar[int] = 0
    params = {
        "d": Int(6, "out-degree bound (V-A: 6 on the unit square, 5 on the cities)", low=1,
                 unit="links"),
        "wc": Float(1000.0, "weight of coverage (fraction of expected messages missed)",
                    low=0.0, high=1e12),
        "wd": Float(1000.0, "weight of relative delay", low=0.0, high=1e12, unit="per second"),
        "ww": Float(0.0, "weight of wasted (unsubscribed) messages", low=0.0, high=1e12),
        "eta": Float(2.0, "threshold of eq. (9), > 1", low=1.0, high=1e12, low_open=True),
        "keep": Float(KEEP_FRACTION, "fraction of d kept each epoch (section IV)", low=0.0,
                      high=1.0),
        "exploration": Choice(
            "table", EXPLORATIONS,
            "eq. (10)'s draws: ω for every pair (table, n^2 T an epoch and an n x n link table) "
            "or a topic then a subscriber (topics, O(n d |σ+|), same law, other draws)"),
    }
    quick_params = {"d": 3}

    # ------------------------------------------------------------- validation
    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        if values["d"] >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: parameter d must be below the number of nodes "
                f"({instance.n_nodes}), got {values['d']}"
            )

    def _config(self, instance: Instance) -> dict[str, Any]:
        cfg = self._validate(instance)
        cfg["k"] = keep_size(cfg["d"], cfg["keep"])
        return cfg

    def out_degree(self) -> int:
        """``d``, the outgoing slots of every node."""
        return self.checked()["d"]

    def uses_linked_table(self) -> bool:
        """Only the ``table`` exploration reads the loop's ``n x n`` link table; ``topics``
        reads the epoch's links from the CSR its observations carry.

        Examples
        --------
        >>> Topiary().uses_linked_table(), Topiary(exploration="topics").uses_linked_table()
        (True, False)
        """
        return self.checked()["exploration"] == "table"

    # ------------------------------------------------------------- the adaptive interface
    def start(self, instance: Instance, streams: RngStreams, active: np.ndarray) -> np.ndarray:
        """Random start ("Topiary starts with random state"): ``d`` random out-links per active
        node, from the ``topiary:init`` stream; exploration later draws from ``topiary:explore``."""
        cfg = self._config(instance)
        self.config_ = cfg
        self.subsets_ = subset_table(cfg["d"], cfg["k"])
        self.interest_ = interest_matrix(instance.masks, instance.n_topics)
        self.masks_ = np.ascontiguousarray(instance.masks)
        self.explore_rng_ = streams.stream("topiary:explore")
        self.links_: tuple[np.ndarray, np.ndarray] | None = None
        n, n_sub = instance.n_nodes, len(self.subsets_)
        # an epoch's accumulators (float64 delays, int64 counts) and the float64 copy of the
        # counts the subset scores take: 3.4 GiB at 100,000 nodes, 100 topics and d = 6
        check_memory(f"topiary's observations ({n:,} nodes x {instance.n_topics:,} topics x "
                     f"{n_sub} subsets)", 24.0 * n * instance.n_topics * n_sub)
        return random_out_neighbours(
            instance.n_nodes, cfg["d"], streams.stream("topiary:init"), active=active
        )

    def begin_epoch(
        self, instance: Instance, out: np.ndarray, publisher: np.ndarray, topic: np.ndarray
    ) -> Observations:
        """Zeroed subset accumulators, with ``E_θ`` counted from the epoch's publishers."""
        obs = Observations.empty(instance.n_nodes, len(self.subsets_), instance.n_topics)
        obs.add_published(publisher, topic)
        self.links_ = None
        return obs

    def observe(self, state: Observations, view: EpochView) -> None:
        """Add a chunk: per node and subset, the minimum relative delay of its slots.

        The chunk's links (the epoch's undirected CSR, attackers' fixed links included) are
        kept for the ``topics`` exploration, which excludes linked nodes without a table."""
        self.links_ = (view.indptr, view.indices)
        state.add_chunk(
            view.arrival,
            view.edge_recv,
            view.slot_entry,
            view.topic,
            view.publisher,
            self.masks_,
            self.subsets_,
            count_waste=self.config_["ww"] > 0,
        )

    def select(
        self,
        state: Observations,
        instance: Instance,
        out: np.ndarray,
        linked: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 1 at the end of an epoch (:meth:`select_neighbours`)."""
        new_out, best_score, _ = self.select_neighbours(
            out, state, instance, linked, self.explore_rng_, update=active,
            interest=self.interest_, links=self.links_,
        )
        return new_out, best_score

    def select_neighbours(
        self,
        out: np.ndarray,
        obs: Observations,
        instance: Instance,
        linked: np.ndarray,
        rng: np.random.Generator,
        *,
        update: np.ndarray | None = None,
        interest: np.ndarray | None = None,
        links: tuple[np.ndarray, np.ndarray] | None = None,
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
            in either direction (excluded from exploration); read by the ``table``
            exploration only (the ``topics`` one may be handed an empty ``(0, 0)`` table).
        rng : numpy.random.Generator
            Exploration stream.
        update : numpy.ndarray, optional
            Bool mask of nodes that re-select (default all).
        interest : numpy.ndarray, optional
            Dense subscriptions (computed from ``instance`` when omitted).
        links : tuple of numpy.ndarray, optional
            ``(indptr, indices)``, the current links in either direction as a CSR, for the
            ``topics`` exploration (by default read from ``linked`` when it is ``(n, n)``, else
            the undirected closure of ``out``).

        Returns
        -------
        new_out, best_score, kept : numpy.ndarray
            Next epoch's out-neighbours, each node's ``S(Γ*)`` (``nan`` when not
            updating) and the ``(n, k)`` kept slots' nodes (``-1`` padded).
        """
        cfg = self._config(instance)
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
        n_kept = (kept >= 0).sum(axis=1)
        n_take = np.where(update, d - n_kept, 0)
        if cfg["exploration"] == "topics":
            if links is None:
                links = _link_rows(linked, out)
            fresh = explore_topics(plus, instance, links, out, n_take, rng)
        else:
            fresh = _explore(plus, interest, linked, out, n_take, rng)
        new_out = np.full_like(out, -1)
        for_update = np.concatenate([kept, fresh], axis=1)
        # left-pack: valid entries first, keep order
        order = np.argsort(for_update < 0, axis=1, kind="stable")
        packed = np.take_along_axis(for_update, order, axis=1)[:, :d]
        new_out[update] = packed[update]
        new_out[~update] = out[~update]
        best_score = np.where(update, best_score, np.nan)
        return new_out, best_score, kept
