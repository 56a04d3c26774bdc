"""What a Goldfish node observes: relative arrival times from every peer (Goldfish §III).

Every link carries traffic both ways and a node relays its first copy to all
its peers except the one it came from (§III).  So node ``v`` receives a copy
of message ``m`` from every peer ``u``, incoming or outgoing, except from the
peers that got ``m`` first from ``v`` (those never send it back).  ``v``
records, per message and peer, the *relative* time ``t_u - t_first`` where
``t_first`` is ``v``'s earliest copy over all peers (§III: "peer A has a
measurement of t - t = 0").  Codes of one observation:

* a finite value ``>= 0``: the peer delivered the message (an *observed* cell);
* ``+inf``: the peer sent no copy because it got the message from ``v``
  (the *symbolically known* cell ``†`` of Table I);
* ``nan``: no information (the slot is not a peer, or ``v`` never got ``m``).

A node's own messages are all ``†``: every peer got them from ``v`` in the
sense that ``v`` is their origin and it has no first arrival to measure
against (such rows carry no value and never enter completion or selection).

Under the engine's model (:mod:`hedgerow.dissemination.engine`) the copy
``u -> v`` is ``edge_recv`` at the CSR entry ``(u -> v)``; it is ``inf``
exactly when ``u`` did not send it, i.e. when ``u``'s first copy came from
``v`` (or ``u`` never got the message).

Examples
--------
>>> import numpy as np
>>> from hedgerow.model.outlinks import closure_csr
>>> indptr, indices = closure_csr(np.array([[1, 2], [2, -1], [-1, -1]]), 3)
>>> peers, rev = peer_entries(indptr, indices, np.array([0]), 4)
>>> peers.tolist(), rev.tolist()
([[1, 2, -1, -1]], [[2, 4, -1, -1]])
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["DAGGER", "observe_chunk", "peer_entries"]

#: the code of a symbolically known cell (the peer got the message from this node)
DAGGER = np.inf


def peer_entries(
    indptr: np.ndarray, indices: np.ndarray, nodes: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Peers of ``nodes`` (sorted ids) and the CSR entry ``peer -> node`` of each.

    Returns two ``(len(nodes), width)`` int64 arrays, ``-1`` padded; a node
    with more than ``width`` peers keeps the first ``width`` (by id).
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    peers = np.full((len(nodes), width), -1, dtype=np.int64)
    rev = np.full((len(nodes), width), -1, dtype=np.int64)
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    keys = rows * n + indices
    for i, v in enumerate(nodes):
        nb = indices[indptr[v] : indptr[v + 1]][:width]
        peers[i, : len(nb)] = nb
        rev[i, : len(nb)] = np.searchsorted(keys, nb * n + v)
    return peers, rev


def observe_chunk(
    arrival: np.ndarray,
    edge_recv: np.ndarray,
    entry_map: np.ndarray,
    rev: np.ndarray,
    nodes: np.ndarray,
    publisher: np.ndarray,
) -> np.ndarray:
    """Relative arrival times ``(m, len(nodes), width)`` of one chunk of messages.

    Parameters
    ----------
    arrival : numpy.ndarray
        ``(m, n)`` first arrivals of the chunk (``inf`` = never).
    edge_recv : numpy.ndarray
        ``(m, nnz')`` arrival of the copy on each entry of the chunk's graph.
    entry_map : numpy.ndarray
        Full-graph CSR entry -> column of ``edge_recv`` (``-1`` = unused).
    rev : numpy.ndarray
        ``(a, width)`` full-graph entry ``peer -> node`` (:func:`peer_entries`).
    nodes : numpy.ndarray
        ``(a,)`` the observing nodes.
    publisher : numpy.ndarray
        ``(m,)`` publisher of each message.

    Returns
    -------
    numpy.ndarray
        float64, codes as in the module docstring.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    slot = rev >= 0
    col = np.where(slot, entry_map[np.maximum(rev, 0)], -1)
    if not edge_recv.shape[1]:
        col = np.full(col.shape, -1, dtype=np.int64)
    out = np.empty((arrival.shape[0], *col.shape))
    _observe(np.asarray(arrival, dtype=np.float64), np.asarray(edge_recv, dtype=np.float64),
             np.asarray(col, dtype=np.int64), slot, nodes, np.asarray(publisher), out)
    return out


@numba.njit(cache=True, nogil=True)
def _observe(arrival, edge_recv, col, slot, nodes, publisher, out):
    """:func:`observe_chunk`'s codes, message by message: a slot's copy ``edge_recv[:, col]``
    (``inf`` without a column), less the node's first copy over its slots; ``+inf`` where the
    peer sent none; ``nan`` where the node never got the message or has no finite first copy;
    ``+inf`` for the node's own messages; ``nan`` at an empty slot (in that order of
    precedence, the last one winning)."""
    m = arrival.shape[0]
    a, width = col.shape
    recv = np.empty(width)
    for i in range(m):
        for k in range(a):
            v = nodes[k]
            first = np.inf
            for j in range(width):
                c = col[k, j]
                x = edge_recv[i, c] if c >= 0 else np.inf
                recv[j] = x
                if x != x or first != first:  # numpy's min propagates nan
                    first = np.nan
                elif x < first:
                    first = x
            got = np.isfinite(arrival[i, v])
            own = publisher[i] == v
            bad = not got or not np.isfinite(first)
            for j in range(width):
                x = recv[j]
                if not slot[k, j]:
                    y = np.nan
                elif own:
                    y = np.inf
                elif bad:
                    y = np.nan
                elif np.isfinite(x):
                    y = x - first
                else:
                    y = DAGGER
                out[i, k, j] = y
