"""Disseminating an epoch's messages in memory-bounded chunks, with silent (topic-attack) nodes.

The adaptive protocols record, per message, the arrival time of the copy on
every CSR entry (``edge_recv``, ``messages x entries`` float64): for 1000
messages over a 1000-node overlay of degree 12 that is about 100 MB, so the
messages are disseminated in chunks of at most :data:`EDGE_BUDGET_BYTES`.
Nodes that never forward one topic (Topiary's topic attack, section V-D1) are
modelled by sending that topic's messages on the graph without their outgoing
links.  Under the ``"mesh"`` policy (:mod:`hedgerow.dissemination.mesh`) each
topic's messages travel on the sub-graph of that topic's links (minus the
silent nodes' outgoing links for the silent topic).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hedgerow.dissemination.engine import (
    Delivery,
    MessageBatch,
    disseminate,
    restrict_csr,
)
from hedgerow.dissemination.mesh import EntryTopics, as_entry_topics, mesh_groups
from hedgerow.errors import ParameterError

#: bytes of ``edge_recv`` one dissemination call may allocate (messages are chunked)
EDGE_BUDGET_BYTES = 64 * 2**20
#: ``silent_topic`` for nodes silent on every topic (the GossipSub evaluation's sybils)
ALL_TOPICS = -1

_Group = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _groups(
    indptr: np.ndarray,
    indices: np.ndarray,
    edge_delay: np.ndarray,
    topic: np.ndarray,
    silent: np.ndarray | None,
    silent_topic: int | None,
    labels: EntryTopics | None,
) -> Iterator[_Group]:
    """``(message ids, indptr, indices, edge_delay, entry map)`` of every graph messages use."""
    n = len(indptr) - 1
    nnz = len(indices)
    silent_out = None
    if silent is not None and silent_topic is not None and np.any(silent):
        rows = np.repeat(np.arange(n), np.diff(indptr))
        silent_out = np.asarray(silent, dtype=bool)[rows]
    if labels is not None:
        for t, ids, keep in mesh_groups(labels, topic):
            if silent_out is not None and (t == silent_topic or silent_topic == ALL_TOPICS):
                keep &= ~silent_out
            ip, ix, emap = restrict_csr(indptr, indices, keep)
            yield ids, ip, ix, edge_delay[keep], emap
        return
    ident = np.arange(nnz, dtype=np.int64)
    if silent_out is None:
        yield np.arange(len(topic)), indptr, indices, edge_delay, ident
        return
    is_silent = (np.ones(len(topic), dtype=bool) if silent_topic == ALL_TOPICS
                 else topic == silent_topic)
    yield np.flatnonzero(~is_silent), indptr, indices, edge_delay, ident
    ip, ix, emap = restrict_csr(indptr, indices, ~silent_out)
    yield np.flatnonzero(is_silent), ip, ix, edge_delay[~silent_out], emap


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
    labels: EntryTopics | np.ndarray | None = None,
) -> Iterator[tuple[np.ndarray, Delivery, np.ndarray]]:
    """Disseminate messages in memory-bounded chunks; yields ``(message ids, delivery, entry map)``.

    Messages of ``silent_topic`` (every message when it is :data:`ALL_TOPICS`)
    travel on the graph without the outgoing links of ``silent`` nodes (they
    receive but never forward that topic); the
    ``entry map`` sends each full-graph CSR entry to its entry in the graph the
    chunk used (``-1`` for removed links).

    Policy ``"mesh"`` needs ``labels``, the topics of every CSR entry
    (:class:`~hedgerow.dissemination.mesh.EntryTopics`, e.g. from
    :func:`~hedgerow.dissemination.mesh.entry_topics`, or an ``(nnz,)`` int64
    array, one topic per entry; ``-1`` = every topic); the other policies
    refuse them.  Under ``"mesh"`` each topic's messages form their own group
    (its links' sub-graph, flooded), so a chunk never mixes topics.

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

    Silent on every topic (``ALL_TOPICS``), the same:

    >>> chunks = disseminate_chunks(indptr, indices, np.ones(4), np.zeros(3), masks,
    ...                             np.array([0]), np.array([0]), 1, record_edges=False,
    ...                             silent=np.array([False, True, False]),
    ...                             silent_topic=ALL_TOPICS)
    >>> [dl.arrival.tolist() for _, dl, _ in chunks]
    [[[0.0, 1.0, inf]]]

    The same path under ``"mesh"`` with link ``0 - 1`` serving topic 0 and
    ``1 - 2`` topic 1 (nobody silent): topic 0 stops at node 1.

    >>> chunks = disseminate_chunks(indptr, indices, np.ones(4), np.zeros(3), masks,
    ...                             np.array([0]), np.array([0]), 1, record_edges=False,
    ...                             policy="mesh", labels=np.array([0, 0, 1, 1]))
    >>> [(sel.tolist(), dl.arrival.tolist(), emap.tolist()) for sel, dl, emap in chunks]
    [([0], [[0.0, 1.0, inf]], [0, 1, -1, -1])]
    """
    n_msg = len(publisher)
    nnz = len(indices)
    if policy == "mesh":
        if labels is None:
            raise ParameterError("policy 'mesh' needs labels: the topics of every CSR entry")
        lab: EntryTopics | None = as_entry_topics(labels, nnz)
        kernel_policy = "flood"
    else:
        if labels is not None:
            raise ParameterError(f"labels are for policy 'mesh' only, not {policy!r}")
        lab, kernel_policy = None, policy
    edge_delay = np.asarray(edge_delay)
    for ids, ip, ix, ed, emap in _groups(
        indptr, indices, edge_delay, np.asarray(topic), silent, silent_topic, lab
    ):
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
                ip, ix, ed, proc_delay, masks, batch, policy=kernel_policy,
                record_edges=record_edges,
            )
            yield sel, dl, emap
