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
    q = np.asarray(q, dtype=np.float64)
    if not got.any():
        return np.full(q.shape, np.nan)
    return np.percentile(arrival[got], q)


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
