"""Disseminating an epoch's messages in memory-bounded chunks, with silent (topic-attack) nodes.

The adaptive protocols record, per message, the arrival time of the copy on
every CSR entry (``edge_recv``, ``messages x entries`` float64): for 1000
messages over a 1000-node overlay of degree 12 that is about 100 MB, so the
messages are disseminated in chunks of at most :data:`EDGE_BUDGET_BYTES`.
Nodes that never forward one topic (Topiary's topic attack, section V-D1) are
modelled by sending that topic's messages on the graph without their outgoing
links.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hedgerow.dissemination.engine import Delivery, MessageBatch, disseminate

#: bytes of ``edge_recv`` one dissemination call may allocate (messages are chunked)
EDGE_BUDGET_BYTES = 64 * 2**20


def disseminate_chunks(
    indptr: np.ndarray,
    indices: np.ndarray,
    edge_delay: np.ndarray,
    proc_delay: np.ndarray,
    masks: np.ndarray,
    publisher: np.ndarray,
    topic: np.ndarray,
    ttl: int,
    *,
    record_edges: bool,
    silent: np.ndarray | None = None,
    silent_topic: int | None = None,
    policy: str = "ttl",
) -> Iterator[tuple[np.ndarray, Delivery, np.ndarray]]:
    """Disseminate messages in memory-bounded chunks; yields ``(message ids, delivery, entry map)``.

    Messages of ``silent_topic`` travel on the graph without the outgoing
    links of ``silent`` nodes (they receive but never forward that topic); the
    ``entry map`` sends each full-graph CSR entry to its entry in the graph the
    chunk used (``-1`` for removed links).

    With ``record_edges=True`` each chunk holds at most
    :data:`EDGE_BUDGET_BYTES` of ``edge_recv`` (``messages x CSR entries``
    float64); without it all messages of a group go in one call.

    Examples
    --------
    A path ``0 - 1 - 2`` where every node subscribes to topic 0; node 1 is
    silent on topic 0, so its copies never leave it.

    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> masks = Instance.from_lists([[0], [0], [0]], n_topics=1).masks
    >>> indptr, indices = np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1])
    >>> chunks = disseminate_chunks(indptr, indices, np.ones(4), np.zeros(3), masks,
    ...                             np.array([0]), np.array([0]), 1, record_edges=True,
    ...                             silent=np.array([False, True, False]), silent_topic=0)
    >>> [(sel.tolist(), dl.arrival.tolist(), emap.tolist()) for sel, dl, emap in chunks]
    [([0], [[0.0, 1.0, inf]], [0, -1, -1, 1])]
    """
    n_msg = len(publisher)
    nnz = len(indices)
    ident = np.arange(nnz, dtype=np.int64)
    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    if silent is not None and silent_topic is not None and np.any(silent):
        n = len(indptr) - 1
        rows = np.repeat(np.arange(n), np.diff(indptr))
        keep = ~np.asarray(silent, dtype=bool)[rows]
        m_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows[keep], minlength=n), out=m_indptr[1:])
        emap = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
        is_silent = topic == silent_topic
        groups.append((np.flatnonzero(~is_silent), indptr, indices, edge_delay, ident))
        groups.append((np.flatnonzero(is_silent), m_indptr, indices[keep], edge_delay[keep], emap))
    else:
        groups.append((np.arange(n_msg), indptr, indices, edge_delay, ident))
    for ids, ip, ix, ed, emap in groups:
        if len(ids) == 0:
            continue
        width = max(len(ix), 1)
        step = max(1, EDGE_BUDGET_BYTES // (8 * width)) if record_edges else n_msg
        for lo in range(0, len(ids), step):
            sel = ids[lo : lo + step]
            batch = MessageBatch(
                publisher=publisher[sel],
                topic=topic[sel],
                ttl=np.full(len(sel), ttl, dtype=np.int64),
            )
            dl = disseminate(
                ip, ix, ed, proc_delay, masks, batch, policy=policy, record_edges=record_edges
            )
            yield sel, dl, emap
