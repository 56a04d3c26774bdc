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
    m = arrival.shape[0]
    nodes = np.asarray(nodes, dtype=np.int64)
    slot = rev >= 0
    col = np.where(slot, entry_map[np.maximum(rev, 0)], -1)
    if edge_recv.shape[1]:
        recv = edge_recv[:, np.maximum(col, 0)]  # (m, a, width)
    else:
        recv = np.full((m, *col.shape), np.inf)
    recv = np.where((col >= 0)[None, :, :], recv, np.inf)
    first = recv.min(axis=2, initial=np.inf)  # (m, a)
    with np.errstate(invalid="ignore"):
        rel = recv - first[:, :, None]
    got = np.isfinite(arrival[:, nodes])  # (m, a)
    own = publisher[:, None] == nodes[None, :]
    rel = np.where(np.isfinite(recv), rel, DAGGER)
    rel[~got | ~np.isfinite(first)] = np.nan
    rel[own] = DAGGER
    rel[:, ~slot] = np.nan
    return rel
