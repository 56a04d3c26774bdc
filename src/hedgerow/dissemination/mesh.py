"""The ``"mesh"`` policy: a message travels only on the links of its topic.

GossipSub (Vyzovitis et al., arXiv:2007.02754, 2020) keeps one mesh per topic
and sends a message of topic ``t`` only over ``t``'s mesh links; Scribe
(Castro et al., IEEE JSAC 2002) sends it only along ``t``'s tree.  Both are
this rule:

* every link of the overlay carries a set of **labels**, the topics it serves
  (``-1`` = every topic, e.g. a relay that forwards everything);
* a message of topic ``t`` is forwarded only over links labelled ``t`` or
  ``-1``, in both directions (links carry traffic both ways), by every node
  that has it: its first copy only, never back to the sender, as the other
  policies (:mod:`hedgerow.dissemination.engine`).

Implementation: per topic present in the batch, the entries of the CSR graph
whose labels match form a sub-graph (:func:`~hedgerow.dissemination.engine.restrict_csr`,
which also gives the entry map back to the full graph); the topic's messages
run through the ``"flood"`` kernel on it.  No kernel knows about labels.
Timing, ties (by CSR entry, whose order the sub-graph keeps) and the counters
(``copies``, ``relay_copies``, ``duplicates``) are the kernel's.

Labels are per CSR entry, as an :class:`EntryTopics` (entry -> topics, a CSR
of its own: an entry can be in several topics' sub-graphs) or, when every
entry serves one topic, an ``(nnz,)`` int64 array.  A protocol gives them per
link, as ``(u, v, topic)`` rows (``link_topics_`` of GossipSub and
scribe-topic); :func:`entry_topics` turns those into per-entry labels of the
undirected CSR the messages travel on.  An entry without a label carries no
message under this policy.

Used by :func:`disseminate_mesh` (one call, the whole :class:`Delivery`) and
:func:`hedgerow.dissemination.chunks.disseminate_chunks` (``labels=``; memory
bounded, silent nodes of the topic attack).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from hedgerow.dissemination.engine import (
    Delivery,
    MessageBatch,
    _csr,
    _per_entry,
    disseminate,
    restrict_csr,
)
from hedgerow.errors import ParameterError

__all__ = ["EntryTopics", "as_entry_topics", "disseminate_mesh", "entry_topics", "mesh_groups"]


@dataclass(frozen=True)
class EntryTopics:
    """The topics each CSR entry serves: entry ``e`` serves ``topics[indptr[e]:indptr[e + 1]]``.

    ``-1`` means every topic; an entry with no topic serves none.

    Examples
    --------
    >>> import numpy as np
    >>> lab = EntryTopics(np.array([0, 1, 3, 3]), np.array([-1, 0, 2]))
    >>> lab.n_entries, lab.serves(2).tolist(), lab.serves(1).tolist()
    (3, [True, True, False], [True, False, False])
    """

    indptr: np.ndarray
    topics: np.ndarray
    _wild: np.ndarray = field(init=False, repr=False, compare=False)
    _entry_by_topic: np.ndarray = field(init=False, repr=False, compare=False)
    _topic_sorted: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ip = np.ascontiguousarray(self.indptr, dtype=np.int64).ravel()
        tp = np.ascontiguousarray(self.topics, dtype=np.int64).ravel()
        if len(ip) < 1 or ip[0] != 0 or ip[-1] != len(tp) or (np.diff(ip) < 0).any():
            raise ParameterError("entry topics: indptr/topics do not describe entry -> topics")
        if len(tp) and tp.min() < -1:
            raise ParameterError("entry topics: a topic is below -1 (-1 = every topic)")
        entry = np.repeat(np.arange(len(ip) - 1, dtype=np.int64), np.diff(ip))
        wild = np.zeros(len(ip) - 1, dtype=bool)
        wild[entry[tp < 0]] = True
        named = tp >= 0
        order = np.argsort(tp[named], kind="stable")
        for name, arr in (
            ("indptr", ip),
            ("topics", tp),
            ("_wild", wild),
            ("_entry_by_topic", entry[named][order]),
            ("_topic_sorted", tp[named][order]),
        ):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def from_labels(cls, labels: ArrayLike) -> EntryTopics:
        """One topic per entry (``-1`` = every topic)."""
        lab = np.asarray(labels, dtype=np.int64).ravel()
        return cls(np.arange(len(lab) + 1, dtype=np.int64), lab)

    @property
    def n_entries(self) -> int:
        return len(self.indptr) - 1

    def serves(self, topic: int) -> np.ndarray:
        """``(nnz,)`` bool: the entries a message of ``topic`` may travel on."""
        keep = self._wild.copy()
        lo, hi = np.searchsorted(self._topic_sorted, [topic, topic + 1])
        keep[self._entry_by_topic[lo:hi]] = True
        return keep


def as_entry_topics(labels: EntryTopics | ArrayLike, nnz: int) -> EntryTopics:
    """``labels`` as :class:`EntryTopics` for a graph of ``nnz`` CSR entries (checked)."""
    lab = labels if isinstance(labels, EntryTopics) else None
    if lab is None:
        arr = np.asarray(labels)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ParameterError(
                f"labels must be EntryTopics or an ({nnz},) integer array, got {arr.dtype} "
                f"{arr.shape}"
            )
        lab = EntryTopics.from_labels(arr)
    if lab.n_entries != nnz:
        raise ParameterError(f"labels cover {lab.n_entries} CSR entries, the graph has {nnz}")
    return lab


def entry_topics(indptr: ArrayLike, indices: ArrayLike, link_topics: ArrayLike) -> EntryTopics:
    """Per-entry labels of a CSR graph from ``(u, v, topic)`` rows, one per (link, topic).

    A row labels both entries of the link, ``u -> v`` and ``v -> u`` (the ones
    the graph has; repeated entries all get it): links carry traffic both ways.
    Rows may repeat; a link may serve several topics.  A row naming a link
    the graph does not have is refused.

    Examples
    --------
    Path ``0 - 1 - 2``; link ``0 - 1`` serves topic 3 (twice: ``0 -> 1`` and
    ``1 -> 0`` both made it), link ``1 - 2`` topics 3 and 5.

    >>> import numpy as np
    >>> lab = entry_topics(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]),
    ...                    [(0, 1, 3), (1, 0, 3), (2, 1, 5), (1, 2, 3)])
    >>> lab.indptr.tolist(), lab.topics.tolist()
    ([0, 1, 2, 4, 6], [3, 3, 3, 5, 3, 5])
    """
    ip, ix, n = _csr(indptr, indices)
    lt = np.asarray(link_topics, dtype=np.int64)
    if lt.size == 0:
        lt = lt.reshape(0, 3)
    if lt.ndim != 2 or lt.shape[1] != 3:
        raise ParameterError(f"link topics must be (k, 3) rows (u, v, topic), got {lt.shape}")
    u, v, t = lt[:, 0], lt[:, 1], lt[:, 2]
    if len(lt) and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
        raise ParameterError(f"link topics name a node outside 0..{n - 1}")
    if len(lt) and t.min() < -1:
        raise ParameterError("link topics: a topic is below -1 (-1 = every topic)")
    nnz = len(ix)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
    keys = rows * n + ix
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    want = np.concatenate([u * n + v, v * n + u])
    topic = np.concatenate([t, t])
    lo = np.searchsorted(skeys, want, side="left")
    hi = np.searchsorted(skeys, want, side="right")
    found = hi > lo
    missing = ~(found[: len(lt)] | found[len(lt) :])
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ParameterError(
            f"link topics name link ({u[i]}, {v[i]}), which the graph does not have"
        )
    count = hi - lo
    # every matching entry of every wanted key: offsets lo .. hi - 1
    start = np.repeat(lo - np.cumsum(count) + count, count)
    pos = np.arange(int(count.sum()), dtype=np.int64) + start
    entry = order[pos]
    tp = np.repeat(topic, count)
    pairs = np.unique(np.column_stack([entry, tp]), axis=0) if len(entry) else np.zeros((0, 2))
    pairs = pairs.astype(np.int64)
    out_ptr = np.zeros(nnz + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=nnz), out=out_ptr[1:])
    return EntryTopics(out_ptr, pairs[:, 1])


def mesh_groups(
    labels: EntryTopics, topic: np.ndarray
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per topic of ``topic`` (ascending): ``(topic, its message ids, entries it may use)``.

    Examples
    --------
    >>> import numpy as np
    >>> lab = EntryTopics.from_labels([0, -1, 1])
    >>> [(t, ids.tolist(), keep.tolist()) for t, ids, keep in mesh_groups(lab, np.array([1, 0, 1]))]
    [(0, [1], [True, True, False]), (1, [0, 2], [False, True, True])]
    """
    topic = np.asarray(topic, dtype=np.int64)
    order = np.argsort(topic, kind="stable")
    ts = topic[order]
    starts = np.flatnonzero(np.r_[True, ts[1:] != ts[:-1]]) if len(ts) else np.zeros(0, int)
    ends = np.r_[starts[1:], len(ts)]
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        t = int(ts[s])
        yield t, order[s:e], labels.serves(t)


def disseminate_mesh(
    indptr: ArrayLike,
    indices: ArrayLike,
    edge_delay: ArrayLike,
    proc_delay: ArrayLike,
    masks: np.ndarray,
    batch: MessageBatch,
    labels: EntryTopics | ArrayLike,
    *,
    record_edges: bool = False,
) -> Delivery:
    """Propagate a batch under the ``"mesh"`` policy (one call; see the module docstring).

    Parameters are those of :func:`hedgerow.dissemination.disseminate`, plus
    ``labels``: the topics of every CSR entry (:class:`EntryTopics`, or an
    ``(nnz,)`` int64 array with one topic per entry; ``-1`` = every topic).
    ``batch.ttl`` is ignored.  ``edge_recv`` columns are the full graph's
    entries.

    Examples
    --------
    Triangle ``0 - 1 - 2 - 0``, everyone subscribes to topics 0 and 1, 10 ms
    links, 1 ms processing.  Link ``0 - 1`` serves topic 0, ``1 - 2`` topic 1,
    ``0 - 2`` every topic.  From node 0, topic 0 reaches 1 directly and 2
    directly; topic 1 reaches 2 directly and 1 only through 2 (``0 - 1`` is
    not its link).

    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> masks = Instance.from_lists([[0, 1]] * 3, n_topics=2).masks
    >>> indptr, indices = np.array([0, 2, 4, 6]), np.array([1, 2, 0, 2, 0, 1])
    >>> labels = entry_topics(indptr, indices, [(0, 1, 0), (1, 2, 1), (0, 2, -1)])
    >>> d = disseminate_mesh(indptr, indices, np.full(6, 10.0), np.ones(3), masks,
    ...                      MessageBatch.create([0, 0], [0, 1]), labels)
    >>> d.arrival.tolist(), d.parent[1].tolist(), d.copies.tolist()
    ([[0.0, 10.0, 10.0], [0.0, 21.0, 10.0]], [-1, 2, 0], [2, 2])
    """
    ip, ix, n = _csr(indptr, indices)
    nnz = len(ix)
    ed = _per_entry(edge_delay, nnz)
    if not isinstance(batch, MessageBatch):
        raise ParameterError("batch must be a MessageBatch")
    lab = as_entry_topics(labels, nnz)
    m = len(batch)
    arrival = np.full((m, n), np.inf)
    hops = np.full((m, n), -1, dtype=np.int32)
    parent = np.full((m, n), -1, dtype=np.int32)
    edge_recv = np.full((m, nnz), np.inf) if record_edges else None
    copies = np.zeros(m, dtype=np.int64)
    relay = np.zeros(m, dtype=np.int64)
    dups = np.zeros(m, dtype=np.int64)
    for _, ids, keep in mesh_groups(lab, batch.topic):
        sub_ip, sub_ix, _ = restrict_csr(ip, ix, keep)
        sub = MessageBatch(batch.publisher[ids], batch.topic[ids], batch.ttl[ids])
        dl = disseminate(
            sub_ip, sub_ix, ed[keep], proc_delay, masks, sub, policy="flood",
            record_edges=record_edges,
        )
        arrival[ids], hops[ids], parent[ids] = dl.arrival, dl.hops, dl.parent
        copies[ids], relay[ids], dups[ids] = dl.copies, dl.relay_copies, dl.duplicates
        if edge_recv is not None:
            edge_recv[np.ix_(ids, np.flatnonzero(keep))] = dl.edge_recv
    return Delivery(
        arrival=arrival,
        hops=hops,
        parent=parent,
        edge_recv=edge_recv,
        copies=copies,
        relay_copies=relay,
        duplicates=dups,
        publisher=batch.publisher.copy(),
        topic=batch.topic.copy(),
    )
