"""Byte and queue measures of a contended dissemination (``docs/network.md``).

The one definition of each measure of bytes on the wire.  They are functions
of the arrays :func:`hedgerow.dissemination.disseminate_contended` returns
(a :class:`~hedgerow.dissemination.ContendedDelivery`, read by attribute):

``sent_bytes``, ``received_bytes``, ``duplicate_bytes``
    ``(n,)`` payload bytes per node; ``control_sent_bytes`` and
    ``control_received_bytes`` the same for control traffic.
``uplink_busy``
    ``(n,)`` ms each uplink spent transmitting; ``span`` the ``(first
    publication, last event)`` window in ms.
``queue_delay``
    ``(m, n)`` ms of each first copy's delay spent waiting in queues.
``copies``, ``lost``
    ``(m,)`` copies sent and copies lost.

Delivery under load (receive rate, delay and its percentiles) is what
:mod:`hedgerow.metrics.delivery` measures on ``arrival``: those functions
apply unchanged, and :func:`bytes_measures` calls them.

* :func:`node_spread` -- mean, p50, p99 and max of a per-node quantity.
* :func:`bytes_per_node` -- bytes sent and received per node, payload and
  control apart.
* :func:`control_byte_share` -- the share of the bytes sent that are control.
* :func:`duplicate_bytes` -- payload bytes received as duplicates, and their
  share of all payload bytes received.
* :func:`uplink_utilisation` -- each uplink's busy time over the run's span.
* :func:`queueing_share` -- the share of delivery delay spent queueing.
* :func:`copies_lost` -- copies lost, and their share of copies sent.
* :func:`bytes_measures` -- all of them as one flat dict (a row's columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hedgerow.metrics.delivery import _wanted, delay_percentiles, delivery_stats

__all__ = [
    "bytes_measures",
    "bytes_per_node",
    "control_byte_share",
    "copies_lost",
    "duplicate_bytes",
    "node_spread",
    "queueing_share",
    "uplink_utilisation",
]


def node_spread(values: np.ndarray) -> dict[str, float]:
    """Mean, median, 99th percentile and maximum of a per-node quantity.

    Examples
    --------
    >>> import numpy as np
    >>> {k: round(v, 6) for k, v in node_spread(np.array([0.0, 10.0, 20.0, 30.0])).items()}
    {'mean': 15.0, 'p50': 15.0, 'p99': 29.7, 'max': 30.0}
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return dict.fromkeys(("mean", "p50", "p99", "max"), float("nan"))
    p50, p99 = np.percentile(v, [50, 99])
    return {"mean": float(v.mean()), "p50": float(p50), "p99": float(p99), "max": float(v.max())}


def bytes_per_node(d: Any) -> dict[str, float]:
    """Bytes sent and received per node: ``{sent,received}_{payload,control}_{mean,p50,p99,max}``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> z = np.zeros(2)
    >>> d = SimpleNamespace(sent_bytes=np.array([100.0, 300.0]),
    ...                     received_bytes=np.array([0.0, 400.0]),
    ...                     control_sent_bytes=z, control_received_bytes=z)
    >>> m = bytes_per_node(d)
    >>> m["sent_payload_mean"], m["received_payload_max"], m["sent_control_max"]
    (200.0, 400.0, 0.0)
    """
    out: dict[str, float] = {}
    for way, payload, control in (
        ("sent", d.sent_bytes, d.control_sent_bytes),
        ("received", d.received_bytes, d.control_received_bytes),
    ):
        for part, values in (("payload", payload), ("control", control)):
            for stat, x in node_spread(values).items():
                out[f"{way}_{part}_{stat}"] = x
    return out


def control_byte_share(d: Any) -> dict[str, float]:
    """The share of all bytes sent that are control bytes (``nan`` when nothing was sent).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> d = SimpleNamespace(sent_bytes=np.array([300.0, 0.0]),
    ...                     control_sent_bytes=np.array([50.0, 50.0]))
    >>> control_byte_share(d)
    {'control_byte_share': 0.25}
    """
    control = float(np.sum(d.control_sent_bytes))
    total = control + float(np.sum(d.sent_bytes))
    return {"control_byte_share": control / total if total else float("nan")}


def duplicate_bytes(d: Any) -> dict[str, float]:
    """Payload bytes received as duplicates (total, and share of payload bytes received).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> d = SimpleNamespace(duplicate_bytes=np.array([0.0, 100.0]),
    ...                     received_bytes=np.array([200.0, 200.0]))
    >>> duplicate_bytes(d)
    {'duplicate_bytes': 100.0, 'duplicate_byte_share': 0.25}
    """
    dup = float(np.sum(d.duplicate_bytes))
    got = float(np.sum(d.received_bytes))
    return {"duplicate_bytes": dup, "duplicate_byte_share": dup / got if got else float("nan")}


def uplink_utilisation(d: Any) -> dict[str, float]:
    """Each uplink's busy time over the run's span: ``uplink_utilisation_{mean,p50,p99,max}``.

    The span runs from the first publication to the last event (the last
    copy received or the last uplink freed); a node whose uplink never
    stopped in that window has utilisation 1.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> d = SimpleNamespace(uplink_busy=np.array([0.0, 50.0, 100.0]), span=(0.0, 100.0))
    >>> uplink_utilisation(d)["uplink_utilisation_mean"]
    0.5
    """
    t0, t1 = d.span
    width = float(t1) - float(t0)
    busy = np.asarray(d.uplink_busy, dtype=np.float64)
    share = busy / width if width > 0 else np.zeros_like(busy)
    return {f"uplink_utilisation_{k}": v for k, v in node_spread(share).items()}


def queueing_share(
    queue_delay: np.ndarray,
    arrival: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    interest: np.ndarray,
    receivers: np.ndarray | None = None,
) -> float:
    """The share of delivery delay spent waiting in queues.

    Over the (message, wanted receiver) pairs that were reached (those of
    :func:`hedgerow.metrics.delivery.delivery_stats`): the sum of the queueing
    along each first copy's path over the sum of the delays.  ``nan`` when no
    pair was reached or every delay is 0.

    Examples
    --------
    Two subscribers reached at 10 and 30 ms, of which 0 and 10 ms queueing.

    >>> import numpy as np
    >>> arr = np.array([[0.0, 10.0, 30.0]])
    >>> q = np.array([[0.0, 0.0, 10.0]])
    >>> queueing_share(q, arr, np.array([0]), np.array([0]), np.ones((3, 1), bool))
    0.25
    """
    got = _wanted(publisher, topic, interest, receivers) & np.isfinite(arrival)
    total = float(arrival[got].sum())
    return float(queue_delay[got].sum()) / total if total > 0 else float("nan")


def copies_lost(d: Any) -> dict[str, float]:
    """Copies lost (total, and share of copies sent).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> copies_lost(SimpleNamespace(lost=np.array([1, 0]), copies=np.array([3, 1])))
    {'copies_lost': 1, 'lost_share': 0.25}
    """
    lost = int(np.sum(d.lost))
    sent = int(np.sum(d.copies))
    return {"copies_lost": lost, "lost_share": lost / sent if sent else float("nan")}


def bytes_measures(
    d: Any,
    interest: np.ndarray,
    receivers: np.ndarray | None = None,
    q: Sequence[float] = (50, 90, 99),
) -> dict[str, float]:
    """Every measure of this module, plus delivery under load, as one flat dict.

    ``receive_rate`` and ``delay_ms`` are :func:`~hedgerow.metrics.delivery.delivery_stats`,
    ``delay_p<q>_ms`` :func:`~hedgerow.metrics.delivery.delay_percentiles`.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.dissemination import MessageBatch, Network, disseminate_contended
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0]] * 3, n_topics=1)
    >>> a = Overlay.from_edges(3, [(0, 1), (1, 2)]).undirected_csr()
    >>> d = disseminate_contended(a.indptr, a.indices, np.full(a.nnz, 10.0), np.zeros(3),
    ...                           inst.masks, MessageBatch.create([0, 0], [0, 0]),
    ...                           Network.uniform(3, upload=8.0), size=1000, policy="flood")
    >>> m = bytes_measures(d, np.ones((3, 1), bool))
    >>> m["delay_p50_ms"], m["queueing_share"], m["sent_payload_max"], m["copies_lost"]
    (17.0, 0.029411764705882353, 2000.0, 0)
    """
    rate, delay = delivery_stats(d.arrival, d.publisher, d.topic, interest, receivers=receivers)
    out: dict[str, float] = {"receive_rate": rate, "delay_ms": delay}
    for qq, v in zip(
        q,
        delay_percentiles(d.arrival, d.publisher, d.topic, interest, q, receivers=receivers),
        strict=True,
    ):
        out[f"delay_p{qq:g}_ms"] = float(v)
    out.update(bytes_per_node(d))
    out.update(control_byte_share(d))
    out.update(duplicate_bytes(d))
    out.update(uplink_utilisation(d))
    out["queueing_share"] = queueing_share(
        d.queue_delay, d.arrival, d.publisher, d.topic, interest, receivers
    )
    out.update(copies_lost(d))
    return out
