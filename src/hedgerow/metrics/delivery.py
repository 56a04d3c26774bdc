"""Delivery measures of a disseminated batch of messages (Topiary section V-A).

The one definition of the delivery measures every protocol comparison uses.
They are plain functions of the arrays the dissemination engine returns
(:class:`hedgerow.dissemination.Delivery`, or an epoch's
:class:`hedgerow.scenarios.observers.EpochDelivery`):

``arrival``
    ``(m, n)`` ms at which message ``i`` first reached node ``v``; ``0`` at
    the publisher, ``inf`` when never.
``publisher``, ``topic``
    ``(m,)`` who published each message, on which topic.
``interest``
    ``(n, n_topics)`` bool subscriptions (:func:`hedgerow.model.interest_matrix`).
``copies``, ``relay_copies``
    ``(m,)`` copies received in total / by nodes not subscribed to the topic.
    There is no loss, so every transmitted copy is a received copy.

A message's *wanted receivers* are the subscribers of its topic other than its
publisher, restricted to ``receivers`` (e.g. the honest nodes of an attack
scenario) when given.

* :func:`delivery_stats` -- measures 1 and 2 of section V-A: the interested
  message receive rate (per message, the fraction of wanted receivers reached,
  averaged over messages) and the average propagation delay (over every
  (message, wanted receiver) pair that was reached; receivers never reached
  are ignored, as in the paper).
* :func:`delay_percentiles` -- percentiles of the same (message, wanted
  receiver) delays.
* :func:`relay_share` -- the share of all received copies that went to nodes
  not subscribed to the topic (the bandwidth spent relaying).
* :func:`duplicates_per_message` -- copies received beyond the first one per
  node, per message.

Hop counts (``Delivery.hops``, ``-1`` when never) go through
:func:`delay_percentiles` as ``np.where(hops >= 0, hops, np.inf)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np


def _wanted(
    publisher: np.ndarray,
    topic: np.ndarray,
    interest: np.ndarray,
    receivers: np.ndarray | None,
) -> np.ndarray:
    """``(m, n)`` bool: node subscribes to the message's topic, is not its publisher,
    and is among ``receivers`` (when given)."""
    want = interest[:, topic].T.copy()
    want[np.arange(len(publisher)), publisher] = False
    if receivers is not None:
        want &= np.asarray(receivers, dtype=bool)[None, :]
    return want


def delivery_stats(
    arrival: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    interest: np.ndarray,
    *,
    receivers: np.ndarray | None = None,
) -> tuple[float, float]:
    """Interested-message receive rate and average delay (section V-A measures 1-2).

    For each message: the fraction of the topic's subscribers (other than the
    publisher, and only among ``receivers`` when given) that received it,
    averaged over messages with at least one such subscriber; the delay is
    averaged over every (message, subscriber) pair that received the message.

    Parameters
    ----------
    arrival : numpy.ndarray
        ``(m, n)`` first-copy arrival times (ms; ``inf`` = never).
    publisher, topic : numpy.ndarray
        ``(m,)`` int publisher and topic of each message.
    interest : numpy.ndarray
        ``(n, n_topics)`` bool subscriptions.
    receivers : numpy.ndarray, optional
        ``(n,)`` bool: only these nodes count as receivers (default all).

    Returns
    -------
    rate, delay : float
        Mean per-message receive rate and mean delay (ms); ``nan`` when no
        message has a wanted receiver / no wanted receiver was reached.

    Examples
    --------
    >>> import numpy as np
    >>> arr = np.array([[0.0, 10.0, np.inf, 30.0]])
    >>> interest = np.array([[True], [True], [True], [False]])
    >>> delivery_stats(arr, np.array([0]), np.array([0]), interest)
    (0.5, 10.0)
    """
    want = _wanted(publisher, topic, interest, receivers)
    got = want & np.isfinite(arrival)
    n_want = want.sum(axis=1)
    has = n_want > 0
    rate = float((got.sum(axis=1)[has] / n_want[has]).mean()) if has.any() else float("nan")
    delay = float(arrival[got].mean()) if got.any() else float("nan")
    return rate, delay


def delay_percentiles(
    arrival: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    interest: np.ndarray,
    q: Sequence[float] = (50, 90, 99),
    receivers: np.ndarray | None = None,
) -> np.ndarray:
    """Percentiles of the delay over (message, wanted receiver) pairs that were reached.

    The pairs are those :func:`delivery_stats` averages its delay over: the
    topic's subscribers other than the publisher (among ``receivers`` when
    given) that received the message.

    Parameters
    ----------
    arrival : numpy.ndarray
        ``(m, n)`` first-copy arrival times (ms; ``inf`` = never).
    publisher, topic : numpy.ndarray
        ``(m,)`` int publisher and topic of each message.
    interest : numpy.ndarray
        ``(n, n_topics)`` bool subscriptions.
    q : sequence of float, default (50, 90, 99)
        Percentiles in ``[0, 100]`` (linear interpolation, ``numpy.percentile``).
    receivers : numpy.ndarray, optional
        ``(n,)`` bool: only these nodes count as receivers (default all).

    Returns
    -------
    numpy.ndarray
        ``(len(q),)`` float64 delays (ms); all ``nan`` when no pair was reached.

    Examples
    --------
    Node 0 publishes; subscribers 1, 2, 4 get the message at 10, 20 and 40 ms,
    subscriber 3 never, node 5 is not subscribed.

    >>> import numpy as np
    >>> arr = np.array([[0.0, 10.0, 20.0, np.inf, 40.0, 5.0]])
    >>> interest = np.array([[True]] * 5 + [[False]])
    >>> delay_percentiles(arr, np.array([0]), np.array([0]), interest, q=(0, 50, 100)).tolist()
    [10.0, 20.0, 40.0]
    >>> honest = np.array([True, True, False, True, True, True])
    >>> delay_percentiles(arr, np.array([0]), np.array([0]), interest, q=(50,),
    ...                   receivers=honest).tolist()
    [25.0]
    """
    got = _wanted(publisher, topic, interest, receivers) & np.isfinite(arrival)
    qs = np.asarray(q, dtype=np.float64)
    if not got.any():
        return np.full(qs.shape, np.nan)
    return np.percentile(arrival[got], qs)


def relay_share(copies: np.ndarray, relay_copies: np.ndarray) -> float:
    """Share of all received copies that went to nodes not subscribed to the topic.

    Pooled over the messages: ``sum(relay_copies) / sum(copies)``.

    Parameters
    ----------
    copies : numpy.ndarray
        ``(m,)`` copies received per message (every transmitted copy is received).
    relay_copies : numpy.ndarray
        ``(m,)`` of those, copies received by nodes not subscribed to the topic.

    Returns
    -------
    float
        In ``[0, 1]``; ``nan`` when no copy was sent.

    Examples
    --------
    >>> import numpy as np
    >>> relay_share(np.array([4, 6]), np.array([1, 4]))
    0.5
    """
    total = int(np.sum(copies))
    return float(np.sum(relay_copies)) / total if total else float("nan")


def duplicates_per_message(copies: np.ndarray, arrival: np.ndarray, publisher: np.ndarray) -> float:
    """Copies received beyond the first one per node, per message.

    ``(sum(copies) - first receptions) / m``, where the first receptions are
    the (message, node) pairs other than the publisher with a finite arrival.
    A copy sent back to the publisher is a duplicate.  Equals the mean of the
    engine's ``Delivery.duplicates``.

    Parameters
    ----------
    copies : numpy.ndarray
        ``(m,)`` copies received per message.
    arrival : numpy.ndarray
        ``(m, n)`` first-copy arrival times (ms; ``inf`` = never).
    publisher : numpy.ndarray
        ``(m,)`` int publisher of each message.

    Returns
    -------
    float
        ``nan`` for an empty batch.

    Examples
    --------
    Two messages on four nodes: the first reached 2 nodes with 3 copies, the
    second reached all 3 others with 5 copies.

    >>> import numpy as np
    >>> arr = np.array([[0.0, 3.0, 4.0, np.inf], [7.0, 0.0, 2.0, 9.0]])
    >>> duplicates_per_message(np.array([3, 5]), arr, np.array([0, 1]))
    1.5
    """
    m = len(publisher)
    if m == 0:
        return float("nan")
    got = np.isfinite(arrival)
    got[np.arange(m), publisher] = False
    return (float(np.sum(copies)) - float(got.sum())) / m


@numba.njit(cache=True)
def _pair_pass(arrival, hops, publisher, topic, interest, receivers):  # pragma: no cover
    """One pass over the (message, node) pairs: per message the wanted and reached receivers,
    the sums of delay and hops over reached pairs, and the reached delays (for percentiles)."""
    m, n = arrival.shape
    n_want = np.zeros(m, dtype=np.int64)
    n_got = np.zeros(m, dtype=np.int64)
    values = np.empty(m * n)
    k = 0
    hop_sum = 0.0
    for i in range(m):
        t = topic[i]
        p = publisher[i]
        for v in range(n):
            if v == p or not interest[v, t] or not receivers[v]:
                continue
            n_want[i] += 1
            a = arrival[i, v]
            if a < np.inf:
                n_got[i] += 1
                values[k] = a
                k += 1
                hop_sum += hops[i, v]
    return n_want, n_got, values[:k], hop_sum


def delivery_measures(
    arrival: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    interest: np.ndarray,
    *,
    receivers: np.ndarray | None = None,
    hops: np.ndarray | None = None,
    q: Sequence[float] = (50, 90, 99),
) -> dict[str, float]:
    """Every per-pair measure of one batch at once, in one compiled pass.

    The same definitions as :func:`delivery_stats` (``receive_rate``,
    ``delay_mean_ms``) and :func:`delay_percentiles` (``delay_pXX_ms`` for each
    ``XX`` in ``q``), plus ``hops_mean`` (the first copy's hops over the same
    reached pairs) when ``hops`` is given; the epoch loop calls this every
    epoch, so it walks the pairs once instead of once per measure.

    Examples
    --------
    >>> import numpy as np
    >>> arr = np.array([[0.0, 10.0, 20.0, np.inf, 40.0, 5.0]])
    >>> interest = np.array([[True]] * 5 + [[False]])
    >>> hops = np.array([[0, 1, 2, -1, 3, 1]])
    >>> m = delivery_measures(arr, np.array([0]), np.array([0]), interest, hops=hops, q=(50,))
    >>> m["receive_rate"], m["delay_mean_ms"], m["delay_p50_ms"], m["hops_mean"]
    (0.75, 23.333333333333332, 20.0, 2.0)
    """
    n = arrival.shape[1]
    rec = np.ones(n, dtype=np.bool_) if receivers is None else np.asarray(receivers, dtype=bool)
    h = np.zeros((1, 1), dtype=np.int32) if hops is None else np.asarray(hops)
    n_want, n_got, reached, hop_sum = _pair_pass(
        np.ascontiguousarray(arrival, dtype=np.float64),
        h if hops is not None else np.zeros(arrival.shape, dtype=np.int32),
        np.asarray(publisher, dtype=np.int64),
        np.asarray(topic, dtype=np.int64),
        np.ascontiguousarray(interest, dtype=np.bool_),
        rec,
    )
    has = n_want > 0
    out: dict[str, float] = {
        "receive_rate": float((n_got[has] / n_want[has]).mean()) if has.any() else float("nan")
    }
    out["delay_mean_ms"] = float(reached.mean()) if len(reached) else float("nan")
    pct = np.percentile(reached, q) if len(reached) else np.full(len(q), np.nan)
    for x, v in zip(q, pct, strict=True):
        out[f"delay_p{x:g}_ms"] = float(v)
    if hops is not None:
        out["hops_mean"] = hop_sum / len(reached) if len(reached) else float("nan")
    return out
