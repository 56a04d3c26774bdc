"""Topiary's scoring: what each node observed in an epoch, and the scores of eqs. (2)-(9).

For node ``v``, slot ``j`` (its ``j``-th outgoing neighbour ``u``) and message
``m``, the relative delay is the arrival of ``u``'s copy at ``v`` minus ``v``'s
first arrival of ``m``.  :func:`accumulate_observations` (numba) reduces a
chunk of messages to per-node, per-subset accumulators (:class:`Observations`);
:func:`subset_scores` gives the overall score of every candidate subset of slots
(eqs. 2-5), :func:`topic_scores` the per-topic scores of the kept subset
(eqs. 6-8) and :func:`underperforming` the topics ``σ_v^+`` that drive
exploration (eq. 9).  The readings (lower is better, ``F_c`` counts what a
subset fails to relay, units and weights) are in :mod:`hedgerow.protocols.topiary`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

#: the latency models are in ms; ``F_d`` is in seconds (:mod:`hedgerow.protocols.topiary`,
#: reading 3)
MS_PER_SECOND = 1000.0


# --------------------------------------------------------------------------- kernel
@numba.njit(cache=True, parallel=True)
def accumulate_observations(
    arrival,
    edge_recv,
    slot_entry,
    topic,
    publisher,
    masks,
    subsets,
    dsum,
    dcnt,
    waste,
    count_waste,
    n_blocks,
):  # pragma: no cover - compiled
    """Add one chunk of messages to the per-node subset accumulators.

    For node ``v``, slot ``j`` (its ``j``-th outgoing neighbour ``u``) and
    message ``m``, the relative delay is ``edge_recv[m, slot_entry[v, j]] -
    arrival[m, v]`` (``inf`` when ``u`` did not relay ``m`` to ``v``).  For
    every subset ``s`` the minimum over its slots is added to
    ``dsum[v, θ(m), s]`` / ``dcnt[v, θ(m), s]`` when ``v`` subscribes to
    ``θ(m)``, and counted in ``waste[v, s]`` otherwise (only when
    ``count_waste``: with ``ww = 0`` unsubscribed messages are skipped, which
    saves most of the work).  Messages ``v`` published or never received are
    not observed.  Threads own disjoint
    blocks of nodes and walk the messages in order (row ``m`` of
    ``edge_recv`` stays in cache while a block reads it).
    """
    n_msg, n_nodes = arrival.shape
    n_slots = slot_entry.shape[1]
    n_sub, k = subsets.shape
    n_blocks = max(1, min(n_nodes, n_blocks))
    size = (n_nodes + n_blocks - 1) // n_blocks
    for b in numba.prange(n_blocks):
        lo = b * size
        hi = min(n_nodes, lo + size)
        rel = np.empty(n_slots)
        for m in range(n_msg):
            t = topic[m]
            word = t >> 6
            bit = np.uint64(t & 63)
            for v in range(lo, hi):
                if publisher[m] == v:
                    continue
                a = arrival[m, v]
                if not np.isfinite(a):
                    continue
                interested = (masks[v, word] >> bit) & np.uint64(1)
                if not interested and not count_waste:
                    continue
                any_obs = False
                for j in range(n_slots):
                    e = slot_entry[v, j]
                    if e < 0:
                        rel[j] = np.inf
                    else:
                        r = edge_recv[m, e] - a
                        if r < 0.0:
                            r = 0.0
                        rel[j] = r
                        if r < np.inf:
                            any_obs = True
                if not any_obs:
                    continue
                for s in range(n_sub):
                    mn = np.inf
                    for i in range(k):
                        x = rel[subsets[s, i]]
                        if x < mn:
                            mn = x
                    if mn < np.inf:
                        if interested:
                            dsum[v, t, s] += mn
                            dcnt[v, t, s] += 1
                        else:
                            waste[v, s] += 1


# --------------------------------------------------------------------------- observations
@dataclass
class Observations:
    """What every node saw during one epoch, reduced to subset accumulators.

    ``dsum[v, θ, s]`` / ``dcnt[v, θ, s]``: summed relative delay / number of
    messages on subscribed topic ``θ`` that subset ``s`` of ``v``'s outgoing
    slots relayed; ``waste[v, s]``: unsubscribed messages subset ``s``
    relayed (counted only when the waste weight ``ww`` is positive);
    ``expected[v, θ]``: messages published on ``θ`` by nodes other than ``v``
    (the estimate ``E_θ``).
    """

    dsum: np.ndarray
    dcnt: np.ndarray
    waste: np.ndarray
    expected: np.ndarray

    @classmethod
    def empty(cls, n_nodes: int, n_subsets: int, n_topics: int) -> Observations:
        """Zeroed accumulators."""
        return cls(
            dsum=np.zeros((n_nodes, n_topics, n_subsets)),
            dcnt=np.zeros((n_nodes, n_topics, n_subsets), dtype=np.int64),
            waste=np.zeros((n_nodes, n_subsets), dtype=np.int64),
            expected=np.zeros((n_nodes, n_topics), dtype=np.int64),
        )

    def add_published(self, publisher: np.ndarray, topic: np.ndarray) -> None:
        """Count published messages into ``expected`` (excluding each node's own)."""
        n_topics = self.expected.shape[1]
        per_topic = np.bincount(topic, minlength=n_topics)
        self.expected += per_topic[None, :]
        np.subtract.at(self.expected, (publisher, topic), 1)

    def add_chunk(
        self,
        arrival: np.ndarray,
        edge_recv: np.ndarray,
        slot_entry: np.ndarray,
        topic: np.ndarray,
        publisher: np.ndarray,
        masks: np.ndarray,
        subsets: np.ndarray,
        *,
        count_waste: bool = True,
    ) -> None:
        """Accumulate one disseminated chunk (see :func:`accumulate_observations`)."""
        accumulate_observations(
            np.ascontiguousarray(arrival, dtype=np.float64),
            np.ascontiguousarray(edge_recv, dtype=np.float64),
            np.ascontiguousarray(slot_entry, dtype=np.int64),
            np.ascontiguousarray(topic, dtype=np.int64),
            np.ascontiguousarray(publisher, dtype=np.int64),
            np.ascontiguousarray(masks, dtype=np.uint64),
            np.ascontiguousarray(subsets, dtype=np.int64),
            self.dsum,
            self.dcnt,
            self.waste,
            bool(count_waste),
            4 * numba.get_num_threads(),
        )


def _coverage_and_delay(
    count: np.ndarray, delay_sum: np.ndarray, expected: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(Fc, Fd)`` of eqs. 7-8 from first-copy counts, their summed relative delays (ms)
    and the expected counts: the missed share, and the mean relative delay in seconds
    (both 0 where there is nothing to measure)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        fd = np.where(count > 0, delay_sum / np.maximum(count, 1), 0.0) / MS_PER_SECOND
        fc = np.where(expected > 0, 1.0 - count / np.maximum(expected, 1), 0.0)
    return fc, fd


def subset_scores(
    obs: Observations, interest: np.ndarray, *, wc: float, wd: float, ww: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Overall score ``S = wc·Fc + wd·Fd + ww·Fw`` of every subset (eqs. 2-5).

    Parameters
    ----------
    obs : Observations
        The epoch's accumulators.
    interest : numpy.ndarray
        ``(n_nodes, n_topics)`` bool subscriptions.
    wc, wd, ww : float
        Weights of coverage, delay and bandwidth waste.

    Returns
    -------
    S, Fc, Fd, Fw : numpy.ndarray
        ``(n_nodes, n_subsets)`` each.  ``Fc`` is the fraction of the expected
        subscribed messages the subset failed to relay, ``Fd`` the mean relative
        delay in seconds over subscribed messages it relayed (0 if none), ``Fw``
        the number of unsubscribed messages it relayed.

    Examples
    --------
    One node, one topic, two subsets: subset 0 relayed 3 of 4 expected messages
    with total relative delay 6 ms, subset 1 relayed all 4 with 20 ms.

    >>> import numpy as np
    >>> obs = Observations.empty(1, 2, 1)
    >>> obs.dsum[0, 0] = [6.0, 20.0]; obs.dcnt[0, 0] = [3, 4]; obs.expected[0, 0] = 4
    >>> S, Fc, Fd, Fw = subset_scores(obs, np.array([[True]]), wc=1000, wd=1000, ww=0)
    >>> Fc.tolist(), Fd.tolist(), S.tolist()
    ([[0.25, 0.0]], [[0.002, 0.005]], [[252.0, 5.0]])
    """
    w = interest.astype(np.float64)
    covered = np.einsum("nt,nts->ns", w, obs.dcnt.astype(np.float64))
    delay = np.einsum("nt,nts->ns", w, obs.dsum)
    expected = (obs.expected * interest).sum(axis=1)[:, None]
    fc, fd = _coverage_and_delay(covered, delay, expected)
    fw = obs.waste.astype(np.float64)
    return wc * fc + wd * fd + ww * fw, fc, fd, fw


def topic_scores(
    obs: Observations, best: np.ndarray, interest: np.ndarray, *, wc: float, wd: float
) -> np.ndarray:
    """Per-topic score ``S^θ(Γ*) = wc·Fc^θ + wd·Fd^θ`` of each node's kept subset (eqs. 6-8).

    Entries are ``nan`` for topics the node does not subscribe to or on which
    no message was published this epoch (no information).

    Examples
    --------
    >>> import numpy as np
    >>> obs = Observations.empty(1, 1, 2)
    >>> obs.dsum[0, :, 0] = [10.0, 0.0]; obs.dcnt[0, :, 0] = [2, 0]; obs.expected[0] = [2, 3]
    >>> topic_scores(obs, np.array([0]), np.array([[True, True]]), wc=1000, wd=1000).tolist()
    [[5.0, 1000.0]]
    """
    n = len(best)
    dsum = obs.dsum[np.arange(n), :, best]
    dcnt = obs.dcnt[np.arange(n), :, best]
    exp = obs.expected
    fc, fd = _coverage_and_delay(dcnt, dsum, exp)
    s = wc * fc + wd * fd
    return np.where(interest & (exp > 0), s, np.nan)


def underperforming(topic_score: np.ndarray, eta: float) -> np.ndarray:
    """``σ_v^+``: topics whose score exceeds ``eta`` times the node's best topic score (eq. 9).

    Examples
    --------
    >>> import numpy as np
    >>> underperforming(np.array([[5.0, 12.0, np.nan, 9.0]]), 2.0).tolist()
    [[False, True, False, False]]
    """
    with np.errstate(invalid="ignore"):
        best = np.nanmin(np.where(np.isnan(topic_score), np.inf, topic_score), axis=1)
        return np.nan_to_num(topic_score, nan=-np.inf) > eta * best[:, None]
