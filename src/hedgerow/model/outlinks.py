"""Out-link tables of the adaptive protocols: every node's outgoing neighbours as one array.

Topiary (and the adaptive protocols after it: Goldfish, Perigee) keep, for
every node ``v``, at most ``d`` outgoing neighbours and accept any number of
incoming ones; links carry traffic both ways.  The state is an ``(n, d)``
int64 table ``out``, row ``v`` listing ``v``'s outgoing neighbours, ``-1``
padded.  This module holds what every such protocol does with the table:

* :func:`random_out_neighbours` -- the random start (``d`` distinct uniform
  other nodes per node);
* :func:`closure_csr` -- the undirected closure (plus fixed links) as sorted
  CSR arrays, the graph messages travel on;
* :func:`entry_index` -- the CSR entry of given links ``u -> v``, to find the
  copies each outgoing neighbour delivered;
* :func:`out_overlay` -- the directed :class:`~hedgerow.model.Overlay` of the
  table.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hedgerow.model.overlay import Overlay

#: the most memory the keys of :func:`random_out_neighbours` take at once (they were an
#: ``(n, n)`` matrix: 8 n² bytes, 75 GiB at 100,000 nodes)
_KEY_BLOCK_BYTES = 64 * 2**20


def random_out_neighbours(
    n_nodes: int, d: int, rng: np.random.Generator, *, active: np.ndarray | None = None
) -> np.ndarray:
    """Each active node picks ``d`` distinct random other nodes: an ``(n, d)`` array, ``-1`` padded.

    Examples
    --------
    >>> import numpy as np
    >>> out = random_out_neighbours(5, 2, np.random.default_rng(1))
    >>> out.shape, bool((out != np.arange(5)[:, None]).all())
    ((5, 2), True)
    """
    take = min(d, max(n_nodes - 1, 0))
    out = np.full((n_nodes, d), -1, dtype=np.int64)
    # every node's row of n uniform keys, the d largest win; drawn a block of rows at a time
    # (the same variates in the same order as one (n, n) draw, in at most _KEY_BLOCK_BYTES)
    block = max(1, _KEY_BLOCK_BYTES // (8 * max(n_nodes, 1)))
    for lo in range(0, n_nodes, block):
        hi = min(n_nodes, lo + block)
        keys = rng.random((hi - lo, n_nodes))
        keys[np.arange(hi - lo), np.arange(lo, hi)] = -1.0
        if take > 0:
            top = np.argpartition(-keys, take - 1, axis=1)[:, :take]
            out[lo:hi, :take] = np.sort(top, axis=1)
    if active is not None:
        out[~np.asarray(active, dtype=bool)] = -1
    return out


def closure_csr(
    out: np.ndarray, n_nodes: int, fixed_edges: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Undirected closure of out-neighbour lists (plus fixed links) as sorted CSR arrays.

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = closure_csr(np.array([[1], [-1], [1]]), 3)
    >>> indptr.tolist(), indices.tolist()
    ([0, 1, 3, 4], [1, 0, 2, 1])
    """
    src = np.repeat(np.arange(n_nodes), out.shape[1])
    dst = out.reshape(-1)
    ok = dst >= 0
    u, v = src[ok], dst[ok]
    if fixed_edges is not None and len(fixed_edges):
        fe = np.asarray(fixed_edges, dtype=np.int64).reshape(-1, 2)
        u = np.concatenate([u, fe[:, 0]])
        v = np.concatenate([v, fe[:, 1]])
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    a = sp.csr_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n_nodes, n_nodes))
    a.sum_duplicates()
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int64)


def entry_index(
    indptr: np.ndarray, indices: np.ndarray, u: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """CSR entry of each link ``u -> v`` (``-1`` where ``u < 0`` or the link is absent).

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1])
    >>> entry_index(indptr, indices, np.array([1, 2, -1]), np.array([2, 1, 0])).tolist()
    [2, 3, -1]
    """
    n = len(indptr) - 1
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    keys = rows * n + indices
    want = np.where(u >= 0, u, 0) * n + v
    pos = np.searchsorted(keys, want)
    pos_c = np.minimum(pos, max(len(keys) - 1, 0))
    found = (u >= 0) & (pos < len(keys)) & (keys[pos_c] == want) if len(keys) else u < -1
    return np.where(found, pos_c, -1)


def out_overlay(out: np.ndarray, fixed_edges: np.ndarray | None = None) -> Overlay:
    """The directed :class:`Overlay` of out-neighbour lists (plus fixed links).

    Examples
    --------
    >>> import numpy as np
    >>> out_overlay(np.array([[1, -1], [2, 0], [-1, -1]])).csr().toarray().tolist()
    [[0, 1, 0], [1, 0, 1], [0, 0, 0]]
    """
    n = out.shape[0]
    src = np.repeat(np.arange(n), out.shape[1])
    dst = out.reshape(-1)
    ok = dst >= 0
    edges = np.column_stack([src[ok], dst[ok]])
    if fixed_edges is not None and len(fixed_edges):
        edges = np.concatenate([edges, np.asarray(fixed_edges, dtype=np.int64).reshape(-1, 2)])
    return Overlay.from_edges(n, edges, directed=True)
