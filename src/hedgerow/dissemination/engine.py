"""The dissemination engine: who receives which message, when, and via whom.

Model (Topiary, Mao & Bojja Venkatakrishnan, arXiv 2312.06800, section II-A)
----------------------------------------------------------------------------
A message is published by one node at time 0 and travels over the links of a
CSR adjacency (callers pass the undirected closure for bidirectional links).

* The copy sent by ``v`` along CSR entry ``e = (v -> w)`` arrives at
  ``s_v + edge_delay[e]``, where ``s_v`` is ``v``'s send time.
* The publisher sends at ``s_p = 0``: it pays no processing delay (``delta_v``
  is "the time it takes for node v to process the message header" of a
  message it *receives*; the publisher generates the message).
* Any other node ``v`` whose first copy arrives at ``a_v`` sends at
  ``s_v = a_v + proc_delay[v]``.
* A node forwards only its FIRST copy ("If a node receives a message that it
  has previously seen, it does not forward the message"), and never back to
  the neighbour that copy came from.  Later copies are duplicates.
* Ties: copies are ordered by ``(arrival time, CSR entry index)``, so of two
  copies arriving at the same time the one from the lower-numbered sender
  (lower CSR entry) is first.  This equals an event loop that processes copy
  arrivals in ``(time, entry)`` order, also when zero delays make a forward
  arrive at the same instant.

Policies
--------
``"ttl"`` (Topiary section II-A)
    Each message carries a TTL, initially ``batch.ttl``.  A node *not
    interested* in the topic decrements the TTL of the copy it receives;
    an interested node leaves it unchanged.  A node relays a copy with a
    positive TTL to all its neighbours except the one it came from; with TTL 0
    only to its neighbours interested in the topic (again not back).
    Readings chosen (see ``docs/dissemination.md``):

    1. The publisher applies the same relay rule to the initial TTL (it does
       not decrement: it does not *receive* the message).  With TTL >= 1 this
       is the paper's "gossips the message to all its neighbors"; with an
       initial TTL of 0 the publisher sends to interested neighbours only,
       which is what section III needs ("even with an initial TTL of zero, we
       can ensure messages of a topic reach all subscribers").  It also makes
       the TTL-0 case unambiguous: an uninterested node never receives a
       TTL-0 copy, so the TTL can never go negative.
    2. The TTL that decides a node's forwarding is the TTL of its FIRST copy
       (a later copy with a higher TTL is a duplicate and is not forwarded),
       exactly as the paper's first-copy rule says.
    3. "Except the one from which it received the message" is applied at
       TTL 0 too.
``"flood"``
    Every node forwards its first copy to all neighbours but the sender.
``"topic"``
    Topic-only flooding: forward only to neighbours interested in the topic
    (the publisher too), never back to the sender.
``"mesh"`` (:mod:`hedgerow.dissemination.mesh`)
    Per-topic meshes: every link carries the topics it serves (``-1`` = every
    topic); a message of topic ``t`` is flooded (first copy only, never back
    to the sender) over the links that serve ``t``, in both directions, and
    over no other.  It needs those labels, so it runs through
    :func:`hedgerow.dissemination.mesh.disseminate_mesh` or
    :func:`hedgerow.dissemination.chunks.disseminate_chunks` (``labels=``):
    each topic's messages go through the ``"flood"`` kernel on the sub-graph
    of its links; :func:`disseminate` itself refuses it.

Counters: ``copies`` counts transmissions, ``relay_copies`` the copies
received by nodes not interested in the topic (the bandwidth Topiary's
objective 3 wants minimised), ``duplicates`` the copies received by a node
that already had the message.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from hedgerow.dissemination import _kernels as K
from hedgerow.errors import ParameterError
from hedgerow.latency.model import LatencyModel

_INT32_MAX = 2**31 - 1

#: Batches smaller than this many ``messages x (nodes + CSR entries)`` run on one thread.
PARALLEL_MIN_WORK = 200_000

#: the policies the numba kernels implement
KERNEL_POLICIES = {"ttl": K.POLICY_TTL, "flood": K.POLICY_FLOOD, "topic": K.POLICY_TOPIC}
#: every dissemination policy; ``"mesh"`` runs the ``"flood"`` kernel per topic (``mesh.py``)
POLICIES = (*KERNEL_POLICIES, "mesh")


@dataclass(frozen=True)
class MessageBatch:
    """``M`` messages: who publishes, on which topic, with which initial TTL.

    Parameters
    ----------
    publisher : numpy.ndarray
        ``(M,)`` publishing node of each message.
    topic : numpy.ndarray
        ``(M,)`` topic of each message.
    ttl : numpy.ndarray
        ``(M,)`` initial TTL (ignored by policies that do not use it).

    Examples
    --------
    >>> b = MessageBatch.create([0, 3], [1, 1], ttl=1)
    >>> len(b), b.ttl.tolist()
    (2, [1, 1])
    """

    publisher: np.ndarray
    topic: np.ndarray
    ttl: np.ndarray

    def __post_init__(self) -> None:
        pub = np.ascontiguousarray(self.publisher, dtype=np.int64).ravel()
        top = np.ascontiguousarray(self.topic, dtype=np.int64).ravel()
        ttl = np.ascontiguousarray(self.ttl, dtype=np.int64).ravel()
        if not (len(pub) == len(top) == len(ttl)):
            raise ParameterError(
                f"MessageBatch arrays differ in length: publisher {len(pub)}, topic {len(top)}, "
                f"ttl {len(ttl)}"
            )
        for name, arr in (("publisher", pub), ("topic", top), ("ttl", ttl)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def create(cls, publisher: ArrayLike, topic: ArrayLike, ttl: ArrayLike = 0) -> MessageBatch:
        """Build a batch; a scalar ``ttl`` applies to every message."""
        pub = np.asarray(publisher, dtype=np.int64).ravel()
        return cls(pub, np.asarray(topic).ravel(), np.broadcast_to(np.asarray(ttl), pub.shape))

    def __len__(self) -> int:
        return len(self.publisher)


@dataclass
class Delivery:
    """Outcome of :func:`disseminate` for ``M`` messages over ``N`` nodes.

    Attributes
    ----------
    arrival : numpy.ndarray
        ``(M, N)`` float64 ms at which the first copy reached each node; 0.0
        at the publisher; ``inf`` when never.
    hops : numpy.ndarray
        ``(M, N)`` int32 hop count of the first copy; -1 when never.
    parent : numpy.ndarray
        ``(M, N)`` int32 neighbour the first copy came from; -1 for the
        publisher and unreached nodes.
    edge_recv : numpy.ndarray or None
        ``(M, nnz)`` float64 time at which the copy sent along CSR entry
        ``e = (u -> v)`` arrives at ``v`` (``inf`` if no copy was sent);
        only with ``record_edges=True``.
    copies : numpy.ndarray
        ``(M,)`` copies transmitted.
    relay_copies : numpy.ndarray
        ``(M,)`` copies received by nodes not interested in the topic.
    duplicates : numpy.ndarray
        ``(M,)`` copies received by a node that already had the message.
    publisher, topic : numpy.ndarray
        ``(M,)`` the batch's publishers and topics.

    The delivery measures (receive rate, delay, percentiles, relay share,
    duplicates) are functions of these arrays in :mod:`hedgerow.metrics.delivery`.
    """

    arrival: np.ndarray
    hops: np.ndarray
    parent: np.ndarray
    edge_recv: np.ndarray | None
    copies: np.ndarray
    relay_copies: np.ndarray
    duplicates: np.ndarray
    publisher: np.ndarray
    topic: np.ndarray

    @property
    def n_messages(self) -> int:
        return self.arrival.shape[0]

    @property
    def n_nodes(self) -> int:
        return self.arrival.shape[1]

    @property
    def reached(self) -> np.ndarray:
        """``(M, N)`` bool: the node got the message (publisher included)."""
        return np.isfinite(self.arrival)

    def interested(self, masks: np.ndarray) -> np.ndarray:
        """``(M, N)`` bool: the node subscribes to the message's topic and is not its publisher."""
        masks = np.asarray(masks, dtype=np.uint64)
        t = self.topic
        words = masks[:, t >> 6].T  # (M, N)
        bits = (words >> (t & 63).astype(np.uint64)[:, None]) & np.uint64(1)
        out = bits.astype(bool)
        out[np.arange(self.n_messages), self.publisher] = False
        return out


# ---------------------------------------------------------------------------- API
def _csr(indptr: ArrayLike, indices: ArrayLike) -> tuple[np.ndarray, np.ndarray, int]:
    ip = np.ascontiguousarray(indptr, dtype=np.int64)
    ix = np.ascontiguousarray(indices, dtype=np.int64)
    if ip.ndim != 1 or len(ip) < 2 or ip[0] != 0 or ip[-1] != len(ix) or (np.diff(ip) < 0).any():
        raise ParameterError("indptr/indices do not describe a CSR adjacency")
    n = len(ip) - 1
    if len(ix) and (ix.min() < 0 or ix.max() >= n):
        raise ParameterError(f"indices name a node outside 0..{n - 1}")
    return ip, ix, n


def _per_entry(edge_delay: ArrayLike, nnz: int) -> np.ndarray:
    """``edge_delay`` as contiguous float64, refused unless it has one value per CSR entry."""
    ed = np.ascontiguousarray(edge_delay, dtype=np.float64)
    if ed.shape != (nnz,):
        raise ParameterError(
            f"edge_delay must have one value per CSR entry ({nnz}), got {ed.shape}"
        )
    return ed


def restrict_csr(
    indptr: np.ndarray, indices: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR graph of the entries where ``keep`` is true, and where each entry went.

    Returns ``(indptr, indices, entry_map)``: the sub-graph over the same
    nodes (entries keep their order) and, per entry of the full graph, its
    entry in the sub-graph (``-1`` when dropped).  Edge values of the
    sub-graph are ``values[keep]``.

    Examples
    --------
    >>> import numpy as np
    >>> ip, ix, emap = restrict_csr(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]),
    ...                             np.array([True, False, True, True]))
    >>> ip.tolist(), ix.tolist(), emap.tolist()
    ([0, 1, 2, 3], [1, 2, 1], [0, -1, 1, 2])
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    keep = np.asarray(keep, dtype=bool)
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    sub_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=sub_indptr[1:])
    emap = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
    return sub_indptr, np.asarray(indices, dtype=np.int64)[keep], emap


def edge_delays(indptr: ArrayLike, indices: ArrayLike, latency: LatencyModel) -> np.ndarray:
    """One-way delay (ms) of every CSR entry ``u -> v``, from a latency model.

    Examples
    --------
    >>> import numpy as np
    >>> from hedgerow.latency import from_matrix
    >>> lat = from_matrix([[0, 3, 9], [3, 0, 4], [9, 4, 0]])
    >>> edge_delays(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]), lat).tolist()
    [3.0, 3.0, 4.0, 4.0]
    """
    ip, ix, n = _csr(indptr, indices)
    if latency.n_nodes != n:
        raise ParameterError(
            f"latency model {latency.name!r} has {latency.n_nodes} nodes, the overlay {n}"
        )
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
    return np.ascontiguousarray(latency.delay(rows, ix), dtype=np.float64)


def check_batch(batch: MessageBatch, n: int, words: int, policy: str) -> None:
    """A batch's publishers, topics and TTLs against ``n`` nodes and ``words`` mask words.

    Raises a one-line :class:`ParameterError` naming what is out of range (shared by every
    dissemination entry point).
    """
    m = len(batch)
    if m and (batch.publisher.min() < 0 or batch.publisher.max() >= n):
        raise ParameterError(f"a publisher is outside 0..{n - 1}")
    if m and (batch.topic.min() < 0 or batch.topic.max() >= 64 * words):
        raise ParameterError(f"a topic is outside 0..{64 * words - 1} (the masks' width)")
    if policy == "ttl" and m and batch.ttl.min() < 0:
        raise ParameterError("TTL values must be non-negative")
    if m and batch.ttl.max() > _INT32_MAX:
        raise ParameterError(f"TTL values must be at most {_INT32_MAX}")


def disseminate(
    indptr: ArrayLike,
    indices: ArrayLike,
    edge_delay: ArrayLike,
    proc_delay: ArrayLike,
    masks: np.ndarray,
    batch: MessageBatch,
    *,
    policy: str = "ttl",
    record_edges: bool = False,
) -> Delivery:
    """Propagate a batch of messages over a CSR overlay (see the module docstring for the model).

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency over ``N`` nodes (``nnz`` entries).  Pass the
        undirected closure (``Overlay.undirected_csr()``) for links that carry
        traffic both ways.
    edge_delay : numpy.ndarray
        ``(nnz,)`` one-way delay (ms) per CSR entry, e.g. :func:`edge_delays`.
    proc_delay : numpy.ndarray
        ``(N,)`` processing delay (ms) per node
        (:func:`hedgerow.latency.processing_delays`).
    masks : numpy.ndarray
        ``(N, words)`` uint64 bit-packed subscriptions (``Instance.masks``).
    batch : MessageBatch
        The messages.
    policy : {"ttl", "flood", "topic"}, default "ttl"
        Forwarding rule (``"mesh"`` needs link labels: use
        :func:`hedgerow.dissemination.mesh.disseminate_mesh`).
    record_edges : bool, default False
        Also return ``edge_recv`` (``M x nnz`` floats).

    Returns
    -------
    Delivery

    Examples
    --------
    A path ``0 - 1 - 2 - 3`` where only nodes 0 and 3 subscribe to topic 0;
    links take 10 ms, processing 1 ms.  With TTL 1 the first uninterested
    node (1) takes the TTL to 0 and forwards only to interested neighbours, so
    node 2 never gets the message; TTL 2 reaches node 3 at 10+1+10+1+10 ms.

    >>> import numpy as np
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0], [], [], [0]], n_topics=1)
    >>> a = Overlay.from_edges(4, [(0, 1), (1, 2), (2, 3)]).undirected_csr()
    >>> ed, pd = np.full(a.nnz, 10.0), np.ones(4)
    >>> batch = MessageBatch.create([0, 0], [0, 0], ttl=[1, 2])
    >>> d = disseminate(a.indptr, a.indices, ed, pd, inst.masks, batch)
    >>> d.arrival.tolist()
    [[0.0, 10.0, inf, inf], [0.0, 10.0, 21.0, 32.0]]
    >>> d.hops[1].tolist(), d.parent[1].tolist(), d.copies.tolist(), d.relay_copies.tolist()
    ([0, 1, 2, 3], [-1, 0, 1, 2], [1, 3], [1, 2])
    """
    ip, ix, n = _csr(indptr, indices)
    nnz = len(ix)
    ed = _per_entry(edge_delay, nnz)
    if nnz and not (np.isfinite(ed).all() and ed.min() >= 0):
        raise ParameterError("edge_delay values must be finite and non-negative")
    pd = np.ascontiguousarray(proc_delay, dtype=np.float64)
    if pd.shape != (n,):
        raise ParameterError(f"proc_delay must have one value per node ({n}), got {pd.shape}")
    if not (np.isfinite(pd).all() and pd.min() >= 0):
        raise ParameterError("proc_delay values must be finite and non-negative")
    mk = np.ascontiguousarray(masks)
    if mk.dtype != np.uint64 or mk.ndim != 2 or mk.shape[0] != n:
        raise ParameterError(
            f"masks must be a ({n}, words) uint64 array, got {mk.dtype} {mk.shape}"
        )
    if not isinstance(batch, MessageBatch):
        raise ParameterError("batch must be a MessageBatch")
    if policy == "mesh":
        raise ParameterError(
            "policy 'mesh' needs the topics of every link: use disseminate_mesh or "
            "disseminate_chunks(..., labels=)"
        )
    if policy not in KERNEL_POLICIES:
        raise ParameterError(f"unknown policy {policy!r}; allowed: {', '.join(POLICIES)}")
    m = len(batch)
    check_batch(batch, n, mk.shape[1], policy)
    if nnz > _INT32_MAX:
        raise ParameterError(
            f"the kernels index CSR entries with int32: nnz must be <= {_INT32_MAX}"
        )
    arrival = np.empty((m, n), dtype=np.float64)
    hops = np.empty((m, n), dtype=np.int32)
    parent = np.empty((m, n), dtype=np.int32)
    edge_recv = np.empty((m, nnz) if record_edges else (1, 0), dtype=np.float64)
    copies = np.zeros(m, dtype=np.int64)
    relay = np.zeros(m, dtype=np.int64)
    dups = np.zeros(m, dtype=np.int64)
    if m:
        # threads pay off only when there is enough work to split
        work = m * (n + nnz)
        kernel = (
            K.propagate_batch if m > 1 and work >= PARALLEL_MIN_WORK else K.propagate_batch_serial
        )
        kernel(
            (ip, ix, ed, pd, mk),
            (batch.publisher, batch.topic, batch.ttl),
            KERNEL_POLICIES[policy],
            bool(record_edges),
            (arrival, hops, parent, edge_recv, copies, relay, dups),
        )
    return Delivery(
        arrival=arrival,
        hops=hops,
        parent=parent,
        edge_recv=edge_recv if record_edges else None,
        copies=copies,
        relay_copies=relay,
        duplicates=dups,
        publisher=batch.publisher.copy(),
        topic=batch.topic.copy(),
    )
