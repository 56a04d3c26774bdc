"""The one memory estimate of every command that allocates by size.

Every size a user gives (nodes, topics, subscriptions, messages, users) goes
through :func:`memory_estimate` before anything is allocated or Spark is
started; :func:`check_sizes` refuses, as :func:`hedgerow.params.check_memory`
does, with one line stating the estimate.  The per-unit costs are the arrays
the runs keep; ``tests/workloads/test_memory.py`` checks them against
allocations measured with :mod:`tracemalloc`.

Examples
--------
>>> memory_estimate(nodes=1000, topics=100, subs=10) < 16 * 2**20
True
>>> check_sizes("1e9 messages", nodes=100, messages=10**9)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.ParameterError: 1e9 messages needs about 1,490.1 GiB of memory; this machine ...
"""

from __future__ import annotations

from typing import Any

from hedgerow.params import check_memory
from hedgerow.workloads.subscriptions import instance_bytes

__all__ = [
    "CHURN_NODE_BYTES",
    "DELIVERY_CELL_BYTES",
    "EDGE_BYTES",
    "TCO_OVERFLOW_ENTRY_BYTES",
    "TCO_OVERFLOW_SHARE",
    "adaptive_bytes",
    "check_sizes",
    "interest_view_bytes",
    "memory_estimate",
    "tco_four_bits",
    "tco_matrix_bytes",
    "tco_overflow_cap",
]

#: bytes of one (message, node) cell of a delivery: arrival time (float64), hops and parent
#: (int32 each), kept for every message of an epoch (:mod:`hedgerow.dissemination.engine`)
DELIVERY_CELL_BYTES = 8 + 4 + 4

#: bytes per node of a maintained overlay under churn (links, views, timers and the event
#: queue of SpiderCast's engine; measured: about 4.5 KiB per node at 8,000 and 32,000 nodes)
CHURN_NODE_BYTES = 4 * 2**10

#: bytes of one follower edge of a generated graph (two int64 ids), before Spark writes it
EDGE_BYTES = 16


#: bytes of one entry of the four-bit contribution matrix's table (column and count, int64
#: each); a pair sharing 15 or more topics has an entry in each of its two rows
TCO_OVERFLOW_ENTRY_BYTES = 16

#: the four-bit layout is kept while its table holds at most ``nodes² / TCO_OVERFLOW_SHARE``
#: entries (the table then weighs at most 1/8 of the packed cells), or 65,536 (1 MiB)
TCO_OVERFLOW_SHARE = 256


def tco_overflow_cap(nodes: int) -> int:
    """The most table entries the four-bit layout takes over ``nodes`` nodes.

    ``nodes² / 256`` entries of 16 bytes (1/8 of the four-bit cells), and at least
    65,536 (1 MiB), so small instances whose nodes share many topics keep four bits.

    Examples
    --------
    >>> tco_overflow_cap(100_000), tco_overflow_cap(1_000)
    (39062500, 65536)
    """
    return max(int(nodes) * int(nodes) // TCO_OVERFLOW_SHARE, 1 << 16)


def tco_four_bits(nodes: int, topics: int, overflow: int = 0) -> bool:
    """Whether the TCO engine keeps its contributions in four bits a cell.

    A contribution counts topics, so below 127 topics it fits one byte; four bits
    hold 0-14, and 15 marks a pair whose count (15 or more) is in a table, with
    ``overflow`` entries (``-1``: more than :func:`tco_overflow_cap`).  Four bits
    are used below 127 topics while the table stays within the cap; otherwise
    one byte (or two or four from 127 and 32,767 topics).

    Examples
    --------
    >>> tco_four_bits(100_000, 100, 100_000), tco_four_bits(100_000, 100, -1)
    (True, False)
    >>> tco_four_bits(1_000, 200)
    False
    """
    return topics < 127 and 0 <= overflow <= tco_overflow_cap(nodes)


def tco_matrix_bytes(nodes: int, topics: int, overflow: int = 0) -> float:
    """Bytes of the TCO engine's contribution matrix over ``nodes`` nodes.

    The centralized TCO builds (GM, MinMaxODA, LowODA, and the repairs of LowODA-Re,
    LowODA-Inc and OMen) keep, for every pair of the nodes that subscribe a topic to
    connect, the number of topic components their link would merge, allocated at once
    (:func:`hedgerow.protocols.tco.engine.tco_augment`): below 127 topics four bits a
    cell, ``nodes x ceil(nodes / 2)`` bytes, plus a table of the ``overflow`` entries
    of pairs sharing 15 or more topics (:func:`tco_four_bits`; 16 bytes each) and 17
    bytes per node (the table's row index, live counts and the scratch row a scan
    unpacks into); one byte a cell when the table passes its cap (``overflow=-1``);
    ``int16`` cells below 32,767 topics, ``int32`` from there on.  It is the
    allocation that grows worst of every protocol's build (measured:
    ``docs/performance.md``, "Scaling"); beside it, each node's row cache holds 32
    entries of 24 bytes.  100,000 nodes among 100 topics need 4.73 GiB (9.38 GiB one
    byte a cell, 18.7 GiB among 1,000 topics).

    Examples
    --------
    >>> round(tco_matrix_bytes(10_000, 100) / 2**20, 1)
    55.2
    >>> round(tco_matrix_bytes(100_000, 100) / 2**30, 2)
    4.73
    >>> round(tco_matrix_bytes(100_000, 100, overflow=-1) / 2**30, 2)
    9.38
    >>> round(tco_matrix_bytes(100_000, 1000) / 2**30, 2)
    18.7
    """
    n = float(nodes)
    cache = n * 24 * 32
    if tco_four_bits(nodes, topics, overflow):
        return n * float((int(nodes) + 1) // 2) + TCO_OVERFLOW_ENTRY_BYTES * overflow \
            + 17 * n + cache
    return n * n * (1 if topics < 127 else 2 if topics < 32767 else 4) + cache


def adaptive_bytes(nodes: int, messages: int, pair_bytes: int = 0, linked: bool = True) -> float:
    """Bytes an adaptive run holds at once in its epochs: link tables and deliveries.

    Each epoch the loop marks who is linked to whom in an ``nodes x nodes``
    boolean table handed to the selection (:mod:`hedgerow.scenarios.epochs`;
    not for a protocol that does not read it, ``linked=False``: Perigee,
    Goldfish), a protocol may hold ``pair_bytes`` more per pair of nodes
    (Topiary 4), and the epoch's deliveries hold :data:`DELIVERY_CELL_BYTES`
    per (message, node).  100,000 nodes with 1,000 messages per epoch need
    10.8 GiB, 1.5 GiB without the table, 48.1 GiB with four bytes more per pair.

    Examples
    --------
    >>> round(adaptive_bytes(100_000, 1000) / 2**30, 2)
    10.8
    >>> round(adaptive_bytes(100_000, 1000, linked=False) / 2**30, 2)
    1.49
    >>> round(adaptive_bytes(100_000, 1000, pair_bytes=4) / 2**30, 1)
    48.1
    """
    n = float(nodes)
    return (int(linked) + int(pair_bytes)) * n * n + float(messages) * n * DELIVERY_CELL_BYTES


def interest_view_bytes(nodes: int, membership: float) -> float:
    """Bytes of the partial interest views of SpiderCast's engine (and its baselines).

    With ``membership < 1`` every node keeps a sorted ``int64`` array of
    ``round(membership * (nodes - 1))`` other nodes (section 3.7 of the paper),
    drawn before the build starts; a full view (``membership = 1``) keeps none.
    A million nodes with 5% views need 372.5 GiB.

    Examples
    --------
    >>> interest_view_bytes(100_000, 0.05) / 2**30
    3.725290298461914
    >>> interest_view_bytes(100_000, 1.0)
    0.0
    """
    if membership >= 1.0:
        return 0.0
    size = max(1, round(membership * (nodes - 1)))
    return float(nodes) * float(size) * 8


def memory_estimate(
    *,
    nodes: int = 0,
    topics: int = 0,
    subs: int = 0,
    messages: int = 0,
    churn: bool = False,
    users: int = 0,
    mean_degree: float = 0.0,
) -> float:
    """Estimated bytes a run of these sizes holds at once.

    Parameters
    ----------
    nodes, topics, subs : int
        The workload (``subs``: the most subscriptions of one node); its CSR,
        CSC and bit masks (:func:`~hedgerow.workloads.subscriptions.instance_bytes`).
    messages : int
        Messages of one epoch: one delivery cell per (message, node).
    churn : bool
        A maintained overlay under churn: :data:`CHURN_NODE_BYTES` per node.
    users, mean_degree : int, float
        A generated follower graph: ``users * mean_degree`` edges.

    Examples
    --------
    >>> memory_estimate(nodes=100, messages=1000)
    1600000.0
    >>> memory_estimate(users=10_000, mean_degree=88.0) / 2**20
    13.427734375
    """
    total = 0.0
    if nodes and topics:
        total += instance_bytes(int(nodes), int(topics), max(int(subs), 1))
    total += float(messages) * float(nodes) * DELIVERY_CELL_BYTES
    if churn:
        total += float(nodes) * CHURN_NODE_BYTES
    total += float(users) * float(mean_degree) * EDGE_BYTES
    return total


def check_sizes(what: str, **sizes: Any) -> None:
    """Refuse, before allocating, sizes whose :func:`memory_estimate` does not fit in memory.

    ``what`` names the sizes in the one-line :class:`~hedgerow.errors.ParameterError`.
    """
    check_memory(what, memory_estimate(**sizes))
