"""Contended dissemination: bytes on the wire, uplink and downlink queues.

:func:`hedgerow.dissemination.disseminate` models latency and a processing
delay only: a copy costs nothing to send and messages never slow each other
down.  :func:`disseminate_contended` adds a network (:class:`Network`):
per-node upload and download bandwidth, message sizes, a validation delay,
loss and jitter, and publication instants, and simulates every message of a
batch together, as one discrete-event simulation, because they share the
uplinks.  The full model, every reading and its sources are in
``docs/network.md``; in short:

* A node ``v`` *ready* to forward message ``m`` at time ``r`` (the publisher
  at the publication instant ``published[m]``; any other node at
  ``a_v + proc_delay[v] + validation_ms + validation_ms_per_byte * size[m]``,
  ``a_v`` its first copy's receive time) queues one copy per target on its
  uplink, in the order of its CSR entries.  Targets are chosen by the same
  policies as today (``"ttl"``, ``"flood"``, ``"topic"``, ``"mesh"``): first
  copy only, never back to the sender.
* **The uplink is FIFO store-and-forward**: a copy starts when every copy
  queued before it has left, occupies the uplink for ``size / upload``, and
  then travels the link's one-way delay (``+ jitter``).
* **Download queues** are a setting (off by default): when on, an arriving copy
  queues on the target's downlink (FIFO, in arrival order) for
  ``size / download`` before it is received.
* **A lost copy** (independent, probability ``loss``) occupies the sender's
  uplink and is counted as sent, and never arrives.
* **Control messages** (:class:`ControlBatch`, ``control=``): sent at their
  own instant or in answer to another one once it is received, they queue on
  the sender's uplink (and, with download queues, the receiver's downlink) in
  the same FIFO as the data copies, delay the copies queued behind them, are
  never forwarded or lost, and count as control bytes.
* **Ties**: at one instant, control messages join their uplinks first (in
  batch order), then nodes become ready (by node, then message), then copies
  are received (by CSR entry, then message), then copies reach a downlink
  (data copies by CSR entry, then control messages).  With unlimited bandwidth, size 0, no loss,
  jitter or validation and every message published at 0, this is exactly the
  ``(arrival time, CSR entry)`` rule of today's kernel, and the results are
  equal bit for bit; :func:`disseminate_contended` then runs today's kernel
  (same speed) unless ``force_contended=True``.

Times in the returned :class:`ContendedDelivery` (``arrival``, ``edge_recv``)
are relative to each message's publication, as in :class:`Delivery`, so the
measures of :mod:`hedgerow.metrics.delivery` apply unchanged; byte counters and
the queueing measures are in :mod:`hedgerow.metrics.bytes`.

Units: time in ms, sizes in bytes, bandwidth in Mbit/s (``1 Mbit/s = 125
bytes/ms``; ``inf`` = unlimited).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from hedgerow.dissemination import _contended as C
from hedgerow.dissemination.engine import (
    KERNEL_POLICIES,
    POLICIES,
    Delivery,
    MessageBatch,
    _csr,
    _per_entry,
    check_batch,
    disseminate,
)
from hedgerow.dissemination.mesh import EntryTopics, as_entry_topics, disseminate_mesh
from hedgerow.errors import ParameterError

__all__ = [
    "BYTES_PER_MS_PER_MBPS",
    "ContendedDelivery",
    "ControlBatch",
    "Network",
    "disseminate_contended",
    "message_sizes",
    "poisson_publication",
]

#: 1 Mbit/s in bytes per ms
BYTES_PER_MS_PER_MBPS = 125.0


def _per_node_rate(name: str, value: ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ParameterError(f"{name}: one value per node ({n}) or one value, got {arr.shape}")
    if np.isnan(arr).any() or (arr <= 0).any():
        raise ParameterError(f"{name}: bandwidth must be positive (Mbit/s; inf = unlimited)")
    arr = np.ascontiguousarray(arr)
    arr.setflags(write=False)
    return arr


def _non_negative(name: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v >= 0):
        raise ParameterError(f"{name}: must be finite and non-negative, got {value!r}")
    return v


@dataclass(frozen=True, eq=False)
class Network:
    """The network messages contend for: bandwidth per node and per-copy effects.

    Parameters
    ----------
    upload, download : numpy.ndarray
        ``(N,)`` Mbit/s per node (``inf`` = unlimited).  One of them may be a
        scalar, applied to every node; for one value everywhere use :meth:`uniform`.
    download_queues : bool, default False
        Copies queue on the receiver's downlink (FIFO in arrival order).
    validation_ms : float, default 0
        Constant delay before a node forwards a message it received.
    validation_ms_per_byte : float, default 0
        Per-byte part of that delay (``validation_ms + this * size``).
    loss : float, default 0
        Independent probability that a copy is lost (it still occupies the uplink).
    jitter_ms : float, default 0
        Each copy's link delay gets ``+ jitter_ms * U`` with ``U`` uniform in ``[0, 1)``.

    Examples
    --------
    >>> net = Network.uniform(3, upload=8.0, download=float("inf"))
    >>> net.n_nodes, net.upload.tolist(), net.unlimited
    (3, [8.0, 8.0, 8.0], False)
    >>> Network.uniform(2).unlimited
    True
    """

    upload: np.ndarray
    download: np.ndarray
    download_queues: bool = False
    validation_ms: float = 0.0
    validation_ms_per_byte: float = 0.0
    loss: float = 0.0
    jitter_ms: float = 0.0
    n_nodes: int = field(init=False)

    def __post_init__(self) -> None:
        up = np.asarray(self.upload, dtype=np.float64)
        down = np.asarray(self.download, dtype=np.float64)
        if up.ndim == 0 and down.ndim == 0:
            raise ParameterError(
                "upload: one value per node (or Network.uniform(n, upload, download))"
            )
        n = len(up) if up.ndim == 1 else len(down)
        object.__setattr__(self, "upload", _per_node_rate("upload", self.upload, n))
        object.__setattr__(self, "download", _per_node_rate("download", self.download, n))
        object.__setattr__(self, "n_nodes", n)
        object.__setattr__(self, "download_queues", bool(self.download_queues))
        for name in ("validation_ms", "validation_ms_per_byte", "jitter_ms"):
            object.__setattr__(self, name, _non_negative(name, getattr(self, name)))
        loss = _non_negative("loss", self.loss)
        if loss >= 1:
            raise ParameterError(f"loss: a probability below 1, got {self.loss!r}")
        object.__setattr__(self, "loss", loss)

    @classmethod
    def uniform(
        cls, n: int, upload: float = np.inf, download: float = np.inf, **kw: Any
    ) -> Network:
        """Every node with the same upload and download bandwidth (Mbit/s)."""
        return cls(np.full(int(n), float(upload)), np.full(int(n), float(download)), **kw)

    @classmethod
    def from_classes(
        cls,
        n: int,
        classes: Mapping[str, tuple[float, float, float]],
        rng: np.random.Generator,
        **kw: Any,
    ) -> Network:
        """Nodes drawn into bandwidth classes ``{name: (share, upload, download)}``.

        Class ``c`` gets ``round(share_c * n)`` nodes by largest remainder
        (shares are normalised), in the order given; which nodes is a
        permutation drawn from ``rng``.

        Examples
        --------
        >>> import numpy as np
        >>> net = Network.from_classes(
        ...     10, {"home": (0.8, 25.0, 100.0), "dc": (0.2, 1000.0, 1000.0)},
        ...     np.random.default_rng(1))
        >>> int((net.upload == 25.0).sum()), int((net.upload == 1000.0).sum())
        (8, 2)
        """
        if not classes:
            raise ParameterError("bandwidth classes: at least one class")
        if not isinstance(rng, np.random.Generator):
            raise ParameterError("rng: a numpy.random.Generator draws which nodes get each class")
        names = list(classes)
        rows = np.array([classes[c] for c in names], dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != 3:
            raise ParameterError("bandwidth classes: each is (share, upload, download)")
        share = rows[:, 0]
        if (share < 0).any() or share.sum() <= 0:
            bad = names[int(np.argmin(share))]
            raise ParameterError(f"bandwidth classes.{bad}: shares must be non-negative, sum > 0")
        exact = share / share.sum() * n
        count = np.floor(exact).astype(np.int64)
        rest = int(n - count.sum())
        count[np.argsort(-(exact - count), kind="stable")[:rest]] += 1
        cls_of = np.repeat(np.arange(len(names)), count)[rng.permutation(int(n))]
        return cls(rows[cls_of, 1], rows[cls_of, 2], **kw)

    @property
    def unlimited(self) -> bool:
        """No bandwidth limit anywhere, and no validation, loss or jitter."""
        return bool(
            np.isinf(self.upload).all()
            and np.isinf(self.download).all()
            and self.validation_ms == 0
            and self.validation_ms_per_byte == 0
            and self.loss == 0
            and self.jitter_ms == 0
        )


def _column(name: str, value: ArrayLike, m: int, dtype: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = np.full(m, arr)
    if arr.shape != (m,):
        raise ParameterError(f"control {name}: one value or one per control message ({m}), "
                             f"got {arr.shape}")
    out = np.ascontiguousarray(arr, dtype=dtype)
    if dtype is np.float64 and not (np.isfinite(out).all() and (out >= 0).all()):
        raise ParameterError(f"control {name}: must be finite and non-negative")
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class ControlBatch:
    """Control messages sent alongside a batch of data (``docs/network.md``).

    A control message occupies its sender's uplink (and, with download queues,
    its receiver's downlink) in the same FIFO queues as the data copies, and
    is never forwarded; its bytes are counted as control bytes.  A message is
    sent at its own instant ``at``, or, when it ``answers`` another one,
    ``at`` ms after that one has been received (a request and its reply).
    Build one with :meth:`create`; :meth:`sized` gives it bytes and
    :meth:`with_delay` the one-way latency of each message.

    Attributes
    ----------
    sender, receiver : numpy.ndarray
        ``(C,)`` int64 node of each control message.
    at : numpy.ndarray
        ``(C,)`` ms: the send instant, or for an answer the delay after the
        message it answers is received.
    answers : numpy.ndarray
        ``(C,)`` int64 index of the message this one answers (``-1``: none);
        it comes earlier in the batch, and a message has at most one answer.
    entries : numpy.ndarray
        ``(C,)`` int64 entries carried (view entries, node descriptors, ids).
    nbytes : numpy.ndarray
        ``(C,)`` bytes of each message (0 until :meth:`sized`).
    delay : numpy.ndarray
        ``(C,)`` ms one-way latency from sender to receiver.

    Examples
    --------
    Node 0 asks node 1 at 5 ms with a view of 4 entries; node 1 answers with 3.

    >>> cb = ControlBatch.create([0, 1], [1, 0], [5.0, 0.0], answers=[-1, 0], entries=[4, 3])
    >>> cb.sized(20, 8).nbytes.tolist(), len(cb)
    ([52.0, 44.0], 2)
    """

    sender: np.ndarray
    receiver: np.ndarray
    at: np.ndarray
    answers: np.ndarray
    entries: np.ndarray
    nbytes: np.ndarray
    delay: np.ndarray

    @classmethod
    def create(
        cls,
        sender: ArrayLike,
        receiver: ArrayLike,
        at: float | ArrayLike = 0.0,
        *,
        answers: ArrayLike | None = None,
        entries: int | ArrayLike = 0,
        nbytes: float | ArrayLike = 0.0,
        delay: float | ArrayLike = 0.0,
    ) -> ControlBatch:
        """A checked batch; scalars apply to every message."""
        s = np.asarray(sender)
        if s.ndim != 1:
            raise ParameterError(f"control sender: one node per message, got shape {s.shape}")
        m = len(s)
        snd = _column("sender", s, m, np.int64)
        rcv = _column("receiver", receiver, m, np.int64)
        ans = _column("answers", -1 if answers is None else answers, m, np.int64)
        ent = _column("entries", entries, m, np.int64)
        if (ent < 0).any():
            raise ParameterError("control entries: must be non-negative")
        idx = np.arange(m)
        if ((ans < -1) | (ans >= idx) & (ans != -1)).any():
            raise ParameterError("control answers: -1 or an earlier message of the batch")
        replied = ans[ans >= 0]
        if len(replied) and np.bincount(replied, minlength=m).max() > 1:
            raise ParameterError("control answers: a message has at most one answer")
        return cls(snd, rcv, _column("at", at, m, np.float64), ans, ent,
                   _column("nbytes", nbytes, m, np.float64),
                   _column("delay", delay, m, np.float64))

    def __len__(self) -> int:
        return len(self.sender)

    def sized(self, header: float, per_entry: float = 0.0) -> ControlBatch:
        """The same messages of ``header + per_entry * entries`` bytes each."""
        h = _non_negative("control_size", header)
        e = _non_negative("control_entry_size", per_entry)
        nbytes = _column("nbytes", h + e * self.entries.astype(np.float64), len(self), np.float64)
        return replace(self, nbytes=nbytes)

    def with_delay(self, delay: float | ArrayLike) -> ControlBatch:
        """The same messages with one-way latency ``delay`` (ms; one value or one each)."""
        return replace(self, delay=_column("delay", delay, len(self), np.float64))

    @staticmethod
    def concat(batches: list[ControlBatch]) -> ControlBatch:
        """One batch of several, in order (answer indices shifted).

        Examples
        --------
        >>> a = ControlBatch.create([0, 1], [1, 0], answers=[-1, 0])
        >>> ControlBatch.concat([a, a]).answers.tolist()
        [-1, 0, -1, 2]
        """
        if not batches:
            return ControlBatch.create(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        offsets = np.cumsum([0] + [len(b) for b in batches[:-1]])
        answers = np.concatenate(
            [np.where(b.answers >= 0, b.answers + o, -1) for b, o in zip(batches, offsets,
                                                                          strict=True)])
        cat = {f: np.concatenate([getattr(b, f) for b in batches])
               for f in ("at", "entries", "nbytes", "delay")}
        return ControlBatch.create(
            np.concatenate([b.sender for b in batches]),
            np.concatenate([b.receiver for b in batches]), answers=answers, **cat)


def message_sizes(batch: MessageBatch, size: float | ArrayLike | Mapping[int, float]) -> np.ndarray:
    """``(M,)`` bytes per message: one value, a value per topic, or a value per message.

    A mapping ``{topic: bytes}`` or a sequence indexed by topic gives sizes
    per topic (every topic of the batch must have one); an ``(M,)`` array is
    taken as is (e.g. draws from a distribution).  To tell a per-topic array
    from a per-message one of the same length, pass per-topic sizes as a mapping.

    Examples
    --------
    >>> b = MessageBatch.create([0, 1, 2], [0, 1, 0])
    >>> message_sizes(b, 1024).tolist(), message_sizes(b, {0: 10, 1: 20}).tolist()
    ([1024.0, 1024.0, 1024.0], [10.0, 20.0, 10.0])
    """
    m = len(batch)
    if isinstance(size, Mapping):
        missing = sorted(set(batch.topic.tolist()) - set(size))
        if missing:
            raise ParameterError(f"size: no size for topic {missing[0]}")
        out = np.array([float(size[t]) for t in batch.topic.tolist()], dtype=np.float64)
    else:
        arr = np.asarray(size, dtype=np.float64)
        if arr.ndim == 0:
            out = np.full(m, float(arr))
        elif arr.shape == (m,):
            out = arr.copy()
        elif arr.ndim == 1 and (m == 0 or batch.topic.max() < len(arr)):
            out = arr[batch.topic]
        else:
            raise ParameterError(
                f"size: one value, one per message ({m}) or one per topic, got {arr.shape}"
            )
    if not (np.isfinite(out).all() and (out >= 0).all()):
        raise ParameterError("size: bytes must be finite and non-negative")
    return np.ascontiguousarray(out)


def poisson_publication(
    n_messages: int, rate_per_s: float, rng: np.random.Generator, start_ms: float = 0.0
) -> np.ndarray:
    """``(n,)`` publication instants (ms) of a Poisson process of ``rate_per_s`` messages/s.

    Examples
    --------
    >>> import numpy as np
    >>> t = poisson_publication(4, 10.0, np.random.default_rng(0))
    >>> bool((np.diff(t) >= 0).all()), t.shape
    (True, (4,))
    """
    rate = float(rate_per_s)
    if not (np.isfinite(rate) and rate > 0):
        raise ParameterError(f"rate_per_s: must be positive, got {rate_per_s!r}")
    gaps = rng.exponential(1000.0 / rate, size=int(n_messages))
    return start_ms + np.cumsum(gaps)


@dataclass
class ContendedDelivery(Delivery):
    """:class:`Delivery` plus what bytes and queues did (see :func:`disseminate_contended`).

    ``arrival`` and ``edge_recv`` are relative to each message's publication.

    Attributes
    ----------
    published : numpy.ndarray
        ``(M,)`` publication instant (ms) of each message.
    size : numpy.ndarray
        ``(M,)`` payload bytes of each message.
    lost : numpy.ndarray
        ``(M,)`` copies lost (counted in ``copies``, never received).
    queue_wait : numpy.ndarray
        ``(M,)`` ms all copies of the message spent waiting in queues (uplink
        and, when on, downlink), summed over copies.
    queue_delay : numpy.ndarray
        ``(M, N)`` ms of the first copy's delay spent waiting in queues, summed
        along its path (0 at the publisher and unreached nodes).
    sent_bytes, received_bytes : numpy.ndarray
        ``(N,)`` payload bytes each node sent (lost copies included) and received.
    duplicate_bytes : numpy.ndarray
        ``(N,)`` payload bytes of the copies a node received when it already had the message.
    control_sent_bytes, control_received_bytes : numpy.ndarray
        ``(N,)`` bytes of control messages (:class:`ControlBatch`) each node
        sent and received (zeros when none was sent).
    uplink_busy : numpy.ndarray
        ``(N,)`` ms each node's uplink spent transmitting.
    span : tuple of float
        ``(first publication, last event)`` absolute ms: the window the
        utilisation measures divide by (a property; on the uncontended path
        it is the last first arrival, computed from ``arrival`` when first
        asked for: no uplink was busy there, so the utilisation is 0 anyway).
    """

    published: np.ndarray
    size: np.ndarray
    lost: np.ndarray
    queue_wait: np.ndarray
    queue_delay: np.ndarray
    sent_bytes: np.ndarray
    received_bytes: np.ndarray
    duplicate_bytes: np.ndarray
    control_sent_bytes: np.ndarray
    control_received_bytes: np.ndarray
    uplink_busy: np.ndarray
    span_ms: tuple[float, float] | None = None

    @property
    def span(self) -> tuple[float, float]:
        """``(first publication, last event)`` in absolute ms."""
        if self.span_ms is None:
            if self.n_messages == 0:
                self.span_ms = (0.0, 0.0)
            else:
                last = self.arrival + self.published[:, None]
                self.span_ms = (
                    float(self.published.min()),
                    float(np.max(last, where=np.isfinite(last), initial=0.0)),
                )
        return self.span_ms


def _published(batch: MessageBatch, publish_at: float | ArrayLike) -> np.ndarray:
    arr = np.asarray(publish_at, dtype=np.float64)
    out = np.full(len(batch), float(arr)) if arr.ndim == 0 else arr.copy()
    if out.shape != (len(batch),):
        raise ParameterError(
            f"publish_at: one instant or one per message ({len(batch)}), got {arr.shape}"
        )
    if not (np.isfinite(out).all() and (out >= 0).all()):
        raise ParameterError("publish_at: instants must be finite and non-negative (ms)")
    return np.ascontiguousarray(out)


def _wrap(
    d: Delivery, published: np.ndarray, size: np.ndarray, n: int, control: ControlBatch | None
) -> ContendedDelivery:
    """Today's result with the contended fields of an uncontended, size-0 run (control
    messages cost no time there: only their bytes are counted)."""
    m = d.n_messages
    zn = np.zeros(n)
    c_sent: np.ndarray = zn.copy()
    c_recv: np.ndarray = zn.copy()
    if control is not None and len(control):
        c_sent = np.bincount(control.sender, weights=control.nbytes, minlength=n)
        c_recv = np.bincount(control.receiver, weights=control.nbytes, minlength=n)
    return ContendedDelivery(
        **{f: getattr(d, f) for f in Delivery.__dataclass_fields__},
        published=published,
        size=size,
        lost=np.zeros(m, dtype=np.int64),
        queue_wait=np.zeros(m),
        queue_delay=np.zeros((m, n)),
        sent_bytes=zn,
        received_bytes=zn.copy(),
        duplicate_bytes=zn.copy(),
        control_sent_bytes=c_sent,
        control_received_bytes=c_recv,
        uplink_busy=zn.copy(),
    )


def disseminate_contended(
    indptr: ArrayLike,
    indices: ArrayLike,
    edge_delay: ArrayLike,
    proc_delay: ArrayLike,
    masks: np.ndarray,
    batch: MessageBatch,
    network: Network,
    *,
    size: float | ArrayLike | Mapping[int, float] = 0.0,
    publish_at: float | ArrayLike = 0.0,
    policy: str = "ttl",
    labels: object = None,
    rng: np.random.Generator | None = None,
    record_edges: bool = False,
    force_contended: bool = False,
    control: ControlBatch | None = None,
) -> ContendedDelivery:
    """Propagate a batch of messages that contend for bandwidth (see the module docstring).

    Parameters
    ----------
    indptr, indices, edge_delay, proc_delay, masks, batch
        As :func:`hedgerow.dissemination.disseminate`.
    network : Network
        Bandwidth per node, download queues, validation, loss, jitter.
    size : float, mapping or array, default 0
        Payload bytes (:func:`message_sizes`: one value, per topic, per message).
    publish_at : float or array, default 0
        Publication instant (ms) of every message, or one per message
        (e.g. :func:`poisson_publication`).
    policy : {"ttl", "flood", "topic", "mesh"}, default "ttl"
        Forwarding rule; ``"mesh"`` needs ``labels`` (as
        :func:`hedgerow.dissemination.mesh.disseminate_mesh`).
    labels : EntryTopics or array, optional
        Topics of every CSR entry, for ``"mesh"``.
    rng : numpy.random.Generator, optional
        Required when ``network.loss`` or ``network.jitter_ms`` is positive:
        one 64-bit key is drawn for each of them (loss first), nothing otherwise.
    record_edges : bool, default False
        Also return ``edge_recv`` (``M x nnz``).
    force_contended : bool, default False
        Run the contended kernel even when the run is uncontended (unlimited
        bandwidth, size 0, no validation, loss or jitter), where today's
        kernel gives the same result and is used by default.
    control : ControlBatch, optional
        Control messages sent alongside the data (sized, with their
        latencies): they take their turn in the uplink (and downlink) queues,
        delay the data copies queued behind them and are counted in
        ``control_sent_bytes`` / ``control_received_bytes``.  None (or an
        empty batch) leaves every result as without it.

    Returns
    -------
    ContendedDelivery

    Examples
    --------
    A path ``0 - 1 - 2`` of 10 ms links, everyone subscribed, 8 Mbit/s uplinks
    (1,000 bytes/ms) and 1,000-byte messages: store and forward costs
    ``2 * (1 + 10)`` ms to the end of the path.  Two messages published at
    once by node 0: the second waits 1 ms for the uplink at each hop.

    >>> import numpy as np
    >>> from hedgerow.model import Instance, Overlay
    >>> inst = Instance.from_lists([[0]] * 3, n_topics=1)
    >>> a = Overlay.from_edges(3, [(0, 1), (1, 2)]).undirected_csr()
    >>> net = Network.uniform(3, upload=8.0)
    >>> d = disseminate_contended(a.indptr, a.indices, np.full(a.nnz, 10.0), np.zeros(3),
    ...                           inst.masks, MessageBatch.create([0, 0], [0, 0]), net,
    ...                           size=1000, policy="flood")
    >>> d.arrival.tolist()
    [[0.0, 11.0, 22.0], [0.0, 12.0, 23.0]]
    >>> d.sent_bytes.tolist(), d.queue_delay[1].tolist()
    ([2000.0, 2000.0, 0.0], [0.0, 1.0, 1.0])

    A 500-byte control message from node 0 at instant 0 queues ahead of the
    first message: every data copy out of node 0 now leaves 0.5 ms later.

    >>> ctl = ControlBatch.create([0], [1], [0.0], nbytes=500, delay=10.0)
    >>> d = disseminate_contended(a.indptr, a.indices, np.full(a.nnz, 10.0), np.zeros(3),
    ...                           inst.masks, MessageBatch.create([0, 0], [0, 0]), net,
    ...                           size=1000, policy="flood", control=ctl)
    >>> d.arrival.tolist(), d.control_sent_bytes.tolist(), d.control_received_bytes.tolist()
    ([[0.0, 11.5, 22.5], [0.0, 12.5, 23.5]], [500.0, 0.0, 0.0], [0.0, 500.0, 0.0])
    """
    ip, ix, n = _csr(indptr, indices)
    nnz = len(ix)
    if not isinstance(network, Network):
        raise ParameterError("network must be a Network")
    if network.n_nodes != n:
        raise ParameterError(f"network has {network.n_nodes} nodes, the overlay {n}")
    if not isinstance(batch, MessageBatch):
        raise ParameterError("batch must be a MessageBatch")
    if policy not in POLICIES:
        raise ParameterError(f"unknown policy {policy!r}; allowed: {', '.join(POLICIES)}")
    if policy == "mesh" and labels is None:
        raise ParameterError("policy 'mesh' needs labels (the topics of every CSR entry)")
    sizes = message_sizes(batch, size)
    published = _published(batch, publish_at)
    if control is not None:
        if not isinstance(control, ControlBatch):
            raise ParameterError("control must be a ControlBatch")
        if len(control) and (min(control.sender.min(), control.receiver.min()) < 0
                             or max(control.sender.max(), control.receiver.max()) >= n):
            raise ParameterError(f"control: sender and receiver must be nodes 0..{n - 1}")
    uncontended = network.unlimited and not sizes.any()
    if uncontended and not force_contended and not published.any():
        if policy == "mesh":
            d = disseminate_mesh(
                ip, ix, edge_delay, proc_delay, masks, batch,
                cast("EntryTopics | ArrayLike", labels), record_edges=record_edges,
            )
        else:
            d = disseminate(
                ip, ix, edge_delay, proc_delay, masks, batch, policy=policy,
                record_edges=record_edges,
            )
        return _wrap(d, published, sizes, n, control)
    # validation of the shared arguments: today's entry point checks them on an empty batch
    disseminate(
        ip, ix, edge_delay, proc_delay, masks, MessageBatch.create([], []),
        policy="flood" if policy == "mesh" else policy,
    )
    ed = _per_entry(edge_delay, nnz)
    pd = np.ascontiguousarray(proc_delay, dtype=np.float64)
    mk = np.ascontiguousarray(masks)
    m = len(batch)
    check_batch(batch, n, mk.shape[1], policy)
    ctl = control if control is not None else ControlBatch.create(
        np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    if m > C.MAX_MESSAGES or max(n, nnz + len(ctl)) > C.MAX_IDS:
        raise ParameterError(
            f"the contended kernel takes at most {C.MAX_MESSAGES} messages and "
            f"{C.MAX_IDS} nodes or CSR entries per batch"
        )
    if policy == "mesh":
        lab = as_entry_topics(cast("EntryTopics | ArrayLike", labels), nnz)
        lab_ptr, lab_topics = lab.indptr, lab.topics
        code = C.POLICY_MESH
    else:
        lab_ptr, lab_topics = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        code = KERNEL_POLICIES[policy]
    keys = [np.uint64(0), np.uint64(0)]
    if network.loss > 0 or network.jitter_ms > 0:
        if not isinstance(rng, np.random.Generator):
            raise ParameterError("rng: a numpy.random.Generator is needed for loss or jitter")
        if network.loss > 0:
            keys[0] = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
        if network.jitter_ms > 0:
            keys[1] = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
    row_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
    ttl = np.ascontiguousarray(batch.ttl, dtype=np.int64)
    arrival = np.empty((m, n))
    hops = np.empty((m, n), dtype=np.int32)
    parent = np.empty((m, n), dtype=np.int32)
    node_ttl = np.empty((m, n), dtype=np.int32)
    qdelay = np.empty((m, n))
    edge_recv = np.empty((m, nnz) if record_edges else (1, 0))
    copies, relay, dups, lost = (np.zeros(m, dtype=np.int64) for _ in range(4))
    qwait = np.zeros(m)
    sent_b, recv_b, dup_b, busy, c_sent, c_recv = (np.zeros(n) for _ in range(6))
    answer = np.full(len(ctl), -1, dtype=np.int64)
    answered = ctl.answers >= 0
    answer[ctl.answers[answered]] = np.flatnonzero(answered)
    t0, t1 = C.simulate(
        (ip, ix, row_of, ed, pd, mk, lab_ptr, lab_topics),
        (batch.publisher, batch.topic, ttl, published, sizes),
        (
            network.upload * BYTES_PER_MS_PER_MBPS,
            network.download * BYTES_PER_MS_PER_MBPS,
            network.download_queues,
            network.validation_ms,
            network.validation_ms_per_byte,
            network.loss,
            keys[0],
            network.jitter_ms,
            keys[1],
        ),
        code,
        bool(record_edges),
        (arrival, hops, parent, node_ttl, qdelay, edge_recv, copies, relay, dups, lost, qwait,
         sent_b, recv_b, dup_b, busy),
        (ctl.sender, ctl.receiver, ctl.at, ctl.nbytes, ctl.delay, answer, ~answered,
         c_sent, c_recv),
    )
    arrival -= published[:, None]
    if record_edges:
        edge_recv -= published[:, None]
    return ContendedDelivery(
        arrival=arrival,
        hops=hops,
        parent=parent,
        edge_recv=edge_recv if record_edges else None,
        copies=copies,
        relay_copies=relay,
        duplicates=dups,
        publisher=batch.publisher.copy(),
        topic=batch.topic.copy(),
        published=published,
        size=sizes,
        lost=lost,
        queue_wait=qwait,
        queue_delay=qdelay,
        sent_bytes=sent_b,
        received_bytes=recv_b,
        duplicate_bytes=dup_b,
        control_sent_bytes=c_sent,
        control_received_bytes=c_recv,
        uplink_busy=busy,
        span_ms=(float(t0) if m or len(ctl) else 0.0, float(t1) if m or len(ctl) else 0.0),
    )
