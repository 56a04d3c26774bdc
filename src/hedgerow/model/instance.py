"""The immutable subscription instance: nodes, topics and who subscribes to what."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from hedgerow.errors import ParameterError
from hedgerow.model.bitset import pack_sets


@dataclass(frozen=True, eq=False)
class Instance:
    """Nodes ``0..n_nodes-1`` subscribed to topics ``0..n_topics-1``.

    Subscriptions are stored twice: node -> topics as CSR (``sub_indptr``,
    ``sub_topics``, topics sorted within a node) and topic -> nodes as CSC
    (``topic_indptr``, ``topic_nodes``, nodes sorted within a topic).  The
    bit-packed ``masks`` (``n_nodes x words`` of ``uint64``) make set
    intersections a vectorised ``and`` + popcount.

    Build one with :meth:`from_lists`, :meth:`from_csr`, or a workload
    generator such as :func:`hedgerow.workloads.make_instance`.

    Examples
    --------
    >>> inst = Instance.from_lists([[0, 1], [1, 2], [2]], n_topics=3)
    >>> inst.n_nodes, inst.n_topics, inst.topics_of(1).tolist(), inst.subscribers(2).tolist()
    (3, 3, [1, 2], [1, 2])
    >>> int(inst.intersection_size(0, 1))
    1
    """

    n_nodes: int
    n_topics: int
    sub_indptr: np.ndarray
    sub_topics: np.ndarray
    topic_rates: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n_nodes < 1:
            raise ParameterError(f"an instance needs at least one node, got {self.n_nodes}")
        if self.n_topics < 1:
            raise ParameterError(f"an instance needs at least one topic, got {self.n_topics}")
        indptr = np.ascontiguousarray(self.sub_indptr, dtype=np.int64)
        topics = np.ascontiguousarray(self.sub_topics, dtype=np.int32)
        if indptr.shape != (self.n_nodes + 1,) or indptr[0] != 0 or indptr[-1] != len(topics):
            raise ParameterError("sub_indptr does not describe n_nodes rows of sub_topics")
        if len(topics) and (topics.min() < 0 or topics.max() >= self.n_topics):
            raise ParameterError("a subscription names a topic outside 0..n_topics-1")
        # sort topics inside each node and reject duplicates
        rows = np.repeat(np.arange(self.n_nodes), np.diff(indptr))
        order = np.lexsort((topics, rows))
        topics = topics[order]
        if len(topics) > 1:
            dup = (np.diff(topics) == 0) & (np.diff(rows) == 0)
            if dup.any():
                raise ParameterError("a node lists the same topic twice")
        for name, arr in (("sub_indptr", indptr), ("sub_topics", topics)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if self.topic_rates is not None:
            rates = np.asarray(self.topic_rates, dtype=np.float64)
            if rates.shape != (self.n_topics,):
                raise ParameterError("topic_rates must have one rate per topic")
            rates.setflags(write=False)
            object.__setattr__(self, "topic_rates", rates)

    # ---------------------------------------------------------------- builders
    @classmethod
    def from_lists(cls, subscriptions, n_topics: int | None = None, **kw) -> Instance:
        """Build from one iterable of topic ids per node."""
        subs = [np.asarray(sorted(set(int(t) for t in s)), dtype=np.int32) for s in subscriptions]
        indptr = np.zeros(len(subs) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(s) for s in subs])
        flat = np.concatenate(subs) if subs else np.zeros(0, dtype=np.int32)
        if n_topics is None:
            n_topics = int(flat.max()) + 1 if len(flat) else 1
        return cls(len(subs), int(n_topics), indptr, flat, **kw)

    @classmethod
    def from_matrix(cls, matrix, **kw) -> Instance:
        """Build from a ``nodes x topics`` 0/1 (dense or sparse) matrix."""
        m = sp.csr_array(matrix)
        m.sum_duplicates()
        m.sort_indices()
        return cls(m.shape[0], m.shape[1], m.indptr, m.indices, **kw)

    # ---------------------------------------------------------------- views
    def topics_of(self, node: int) -> np.ndarray:
        """Sorted topic ids of ``node``."""
        return self.sub_topics[self.sub_indptr[node] : self.sub_indptr[node + 1]]

    def subscribers(self, topic: int) -> np.ndarray:
        """Sorted node ids subscribed to ``topic``."""
        return self.topic_nodes[self.topic_indptr[topic] : self.topic_indptr[topic + 1]]

    @cached_property
    def n_subs(self) -> np.ndarray:
        """Number of topics of each node."""
        return np.diff(self.sub_indptr)

    @cached_property
    def matrix(self) -> sp.csr_array:
        """The ``nodes x topics`` 0/1 subscription matrix (CSR, ``int8``)."""
        data = np.ones(len(self.sub_topics), dtype=np.int8)
        return sp.csr_array(
            (data, self.sub_topics, self.sub_indptr), shape=(self.n_nodes, self.n_topics)
        )

    @cached_property
    def _csc(self) -> tuple[np.ndarray, np.ndarray]:
        csc = self.matrix.tocsc()
        csc.sort_indices()
        indptr = np.ascontiguousarray(csc.indptr, dtype=np.int64)
        nodes = np.ascontiguousarray(csc.indices, dtype=np.int32)
        indptr.setflags(write=False)
        nodes.setflags(write=False)
        return indptr, nodes

    @property
    def topic_indptr(self) -> np.ndarray:
        """CSC pointer: topic ``t``'s subscribers are ``topic_nodes[a:b]``.

        Here ``a, b = topic_indptr[t], topic_indptr[t + 1]``.
        """
        return self._csc[0]

    @property
    def topic_nodes(self) -> np.ndarray:
        """Node ids grouped by topic (see :attr:`topic_indptr`)."""
        return self._csc[1]

    @cached_property
    def topic_sizes(self) -> np.ndarray:
        """Number of subscribers of each topic."""
        return np.diff(self.topic_indptr)

    @cached_property
    def masks(self) -> np.ndarray:
        """Bit-packed subscriptions, ``(n_nodes, words)`` of ``uint64``."""
        m = pack_sets(self.sub_indptr, self.sub_topics, self.n_topics)
        m.setflags(write=False)
        return m

    def intersection_size(self, a: int, b: int) -> int:
        """``|topics(a) ∩ topics(b)|``."""
        return int(np.bitwise_count(self.masks[a] & self.masks[b]).sum())

    def __repr__(self) -> str:
        return (
            f"Instance(n_nodes={self.n_nodes}, n_topics={self.n_topics}, "
            f"subscriptions={len(self.sub_topics)})"
        )
