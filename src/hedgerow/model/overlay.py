"""Overlays: mutable adjacency while a protocol builds, a frozen CSR for metrics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from hedgerow.errors import ParameterError

#: rows of links turned into Python integers at a time (:meth:`Overlay.from_edges`)
_BLOCK = 1 << 16


class Overlay:
    """A graph on nodes ``0..n_nodes-1``.

    Undirected overlays (the default) keep every link in both endpoints'
    neighbour sets.  Directed overlays keep out-links (a node's chosen
    neighbours); :meth:`csr` then gives the directed adjacency and
    :meth:`undirected_csr` its symmetric closure (links carry traffic both ways).

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    directed : bool, default False
        Whether links are directed (outgoing choices) or undirected.

    Examples
    --------
    >>> ov = Overlay(4)
    >>> ov.add_edges([(0, 1), (1, 2), (2, 0)])
    >>> ov.degree().tolist(), ov.n_edges
    ([2, 2, 2, 0], 3)
    >>> ov.csr().toarray()[0].tolist()
    [0, 1, 1, 0]
    """

    def __init__(self, n_nodes: int, *, directed: bool = False) -> None:
        if n_nodes < 0:
            raise ParameterError(f"n_nodes must be non-negative, got {n_nodes}")
        self.n_nodes = int(n_nodes)
        self.directed = bool(directed)
        self._adj: list[set[int]] = [set() for _ in range(self.n_nodes)]
        self._csr: sp.csr_array | None = None

    # ------------------------------------------------------------- mutation
    def _check(self, u: int, v: int) -> None:
        if u == v:
            raise ParameterError(f"self-loop on node {u}")
        if not (0 <= u < self.n_nodes and 0 <= v < self.n_nodes):
            raise ParameterError(f"link ({u}, {v}) names an unknown node")

    def add_edge(self, u: int, v: int) -> None:
        """Add link ``u -> v`` (and ``v -> u`` when undirected); duplicates merge."""
        self._check(u, v)
        self._adj[u].add(v)
        if not self.directed:
            self._adj[v].add(u)
        self._csr = None

    def add_edges(self, edges: Iterable[Sequence[int]]) -> None:
        """Add many links."""
        for u, v in edges:
            self.add_edge(int(u), int(v))

    def remove_edge(self, u: int, v: int) -> None:
        """Remove link ``u -> v`` (both directions when undirected), if present."""
        self._adj[u].discard(v)
        if not self.directed:
            self._adj[v].discard(u)
        self._csr = None

    def remove_node_links(self, u: int) -> None:
        """Drop every link of ``u`` (a node that left)."""
        if self.directed:
            self._adj[u].clear()
            for s in self._adj:
                s.discard(u)
        else:
            for v in self._adj[u]:
                self._adj[v].discard(u)
            self._adj[u].clear()
        self._csr = None

    # ------------------------------------------------------------- queries
    def neighbors(self, u: int) -> set[int]:
        """The (out-)neighbours of ``u`` (a live view: do not mutate)."""
        return self._adj[u]

    def has_edge(self, u: int, v: int) -> bool:
        return v in self._adj[u]

    @property
    def n_edges(self) -> int:
        """Number of links (undirected links counted once)."""
        total = sum(len(s) for s in self._adj)
        return total if self.directed else total // 2

    def degree(self) -> np.ndarray:
        """Degree of every node (out-degree when directed)."""
        return np.fromiter((len(s) for s in self._adj), dtype=np.int64, count=self.n_nodes)

    def edges(self) -> np.ndarray:
        """``(m, 2)`` array of links, ``u < v`` for undirected overlays, sorted."""
        a = self.csr() if self.directed else sp.triu(self.csr(), k=1, format="coo")
        a = a.tocoo()
        e = np.column_stack([a.row, a.col]).astype(np.int64)
        return e[np.lexsort((e[:, 1], e[:, 0]))]

    def csr(self) -> sp.csr_array:
        """Frozen adjacency as a ``scipy.sparse.csr_array`` of ``int8`` ones (cached)."""
        if self._csr is None:
            counts = np.fromiter((len(s) for s in self._adj), dtype=np.int64, count=self.n_nodes)
            indptr = np.zeros(self.n_nodes + 1, dtype=np.int64)
            np.cumsum(counts, out=indptr[1:])
            indices = np.empty(indptr[-1], dtype=np.int32)
            for u, s in enumerate(self._adj):
                if s:
                    indices[indptr[u] : indptr[u + 1]] = sorted(s)
            data = np.ones(len(indices), dtype=np.int8)
            self._csr = sp.csr_array((data, indices, indptr), shape=(self.n_nodes, self.n_nodes))
        return self._csr

    def undirected_csr(self) -> sp.csr_array:
        """Symmetric adjacency (the closure of a directed overlay)."""
        a = self.csr()
        if not self.directed:
            return a
        s = ((a + a.T) > 0).astype(np.int8)
        s = sp.csr_array(s)
        s.sort_indices()
        return s

    def is_symmetric(self) -> bool:
        """Whether every link ``u -> v`` has its reverse ``v -> u``."""
        a = self.csr()
        return (a != a.T).nnz == 0

    @classmethod
    def from_edges(cls, n_nodes: int, edges, *, directed: bool = False) -> Overlay:
        """Build from an iterable or ``(m, 2)`` array of links.

        Repeated links (and, undirected, a link and its reverse) are dropped before the
        neighbour sets are filled, keeping each link's first place, and the rest is handed over
        a block at a time: the sets get the same members in the same order as from every row,
        without a Python list of every row (a mesh's rows at 100,000 nodes are 16 million).

        Examples
        --------
        >>> ov = Overlay.from_edges(4, [(0, 1), (1, 0), (2, 3), (0, 1)])
        >>> ov.n_edges, sorted(ov.neighbors(0))
        (2, [1])
        """
        ov = cls(n_nodes, directed=directed)
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if len(e) > 1 and e.min() >= 0 and e.max() < n_nodes:  # else add_edge names the bad one
            a, b = (e[:, 0], e[:, 1]) if directed else (e.min(axis=1), e.max(axis=1))
            _, first = np.unique(a * np.int64(n_nodes) + b, return_index=True)
            if len(first) < len(e):
                e = e[np.sort(first)]
        for lo in range(0, len(e), _BLOCK):
            ov.add_edges(e[lo:lo + _BLOCK].tolist())
        return ov

    def copy(self) -> Overlay:
        ov = Overlay(self.n_nodes, directed=self.directed)
        ov._adj = [set(s) for s in self._adj]
        return ov

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Overlay):
            return NotImplemented
        return (
            self.n_nodes == other.n_nodes
            and self.directed == other.directed
            and self._adj == other._adj
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Overlay(n_nodes={self.n_nodes}, n_edges={self.n_edges}, {kind})"
