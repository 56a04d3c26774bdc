"""Churn between the epochs of an adaptive protocol: who is online, dead links, refills.

The maintained protocols' churn (:mod:`hedgerow.scenarios.churn`) is event by
event on the event core; adaptive protocols (Goldfish, Perigee) re-select
their peers once per epoch, so their churn is a per-epoch *online schedule*:
``online[e, v]`` says whether node ``v`` takes part in epoch ``e``.

Synthetic on/off control (``churn="onoff:F:ON:OFF"``): a fraction ``F`` of the
nodes (uniform, stream ``"churn"``) alternate online and offline sessions whose
lengths in epochs are geometric with means ``ON`` and ``OFF``; every node is
online in epoch 0 and churning nodes start at a uniform point of an online
session (the memoryless draw).  The other nodes never leave.

Replayed trace (``churn="trace:NAME:HOURS"``): the named churn input ``NAME``
(an output of ``hedgerow ingest churn``, e.g. ``google1k``: the Google 2011
machine events) gives node ``v`` of the world the life of trace node ``v``;
one epoch stands for ``HOURS`` hours of the trace and a node takes part in an
epoch when it is online at the epoch's start (:func:`trace_schedule`).  A
trace node that joins only later starts offline.

What the epoch loop does with the schedule (readings, ``docs/goldfish.md``):

1. **Dead links break at once.**  At the start of epoch ``e`` every out-link
   touching a node offline in ``e`` is dropped (the transport closes it), and
   an offline node holds no link.  :func:`drop_dead` counts the drops.
2. **Empty slots are dialled at once.**  Every online node dials a uniform
   online peer for each empty slot (not itself, not already its out-peer,
   below the protocol's incoming limit; stream ``"churn:links"``): the
   immediate reconnect every client performs, adaptive or not.  A node that
   comes back therefore starts from random peers.  :func:`refill` counts the
   dials.  The protocol's next selection judges these peers like any other.
3. **Selections never pick a node that is offline.**  The protocol is told the
   epoch's online mask before it selects (``AdaptiveProtocol.set_online``);
   offline nodes do not select.
4. Publishers are drawn among the online nodes (publishing probabilities
   renormalised over them) and the measures are over the online nodes.

Examples
--------
>>> s = onoff_schedule(50, 30, 0.4, 5.0, 3.0, np.random.default_rng(0))
>>> s.shape, bool(s[0].all()), int((~s).any(axis=0).sum()) <= 20
((30, 50), True, True)
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError

__all__ = ["drop_dead", "onoff_schedule", "parse_churn", "parse_trace", "refill",
           "trace_schedule"]


def parse_trace(spec: str) -> tuple[str, float] | None:
    """``"trace:NAME:HOURS"`` -> ``(NAME, HOURS)``; ``None`` for any other kind.

    Examples
    --------
    >>> parse_trace("trace:google1k:6"), parse_trace("onoff:0.3:10:5")
    (('google1k', 6.0), None)
    """
    parts = str(spec).split(":")
    if parts[0] != "trace":
        return None
    try:
        if len(parts) != 3 or not parts[1]:
            raise ValueError
        hours = float(parts[2])
    except ValueError:
        raise ParameterError(
            f"scenario: churn trace must be trace:NAME:HOURS (a churn input and the trace "
            f"hours per epoch), got {spec!r}",
            key="churn",
        ) from None
    if not hours > 0:
        raise ParameterError(f"scenario: churn {spec!r}: HOURS must be positive", key="churn")
    return parts[1], hours


def trace_schedule(
    time_s: np.ndarray, node: np.ndarray, event: np.ndarray, n: int, epochs: int, epoch_s: float
) -> np.ndarray:
    """``(epochs, n)`` bool: trace node ``v`` online at the start of epoch ``e`` (time ``e *
    epoch_s``); events in trace order, ``event`` +1 join / -1 leave; nodes ``>= n`` ignored.

    Examples
    --------
    >>> t = np.array([0.0, 0.0, 5.0, 12.0]); v = np.array([0, 1, 1, 1])
    >>> trace_schedule(t, v, np.array([1, 1, -1, 1]), 3, 3, 5.0).astype(int).tolist()
    [[1, 1, 0], [1, 0, 0], [1, 0, 0]]
    """
    online = np.zeros((epochs, n), dtype=bool)
    state = np.zeros(n, dtype=bool)
    keep = np.asarray(node) < n
    t, v, ev = np.asarray(time_s)[keep], np.asarray(node)[keep], np.asarray(event)[keep]
    i = 0
    for e in range(epochs):
        start = e * epoch_s
        while i < len(t) and t[i] <= start:
            state[v[i]] = ev[i] > 0
            i += 1
        online[e] = state
    return online


def parse_churn(spec: str) -> tuple[float, float, float]:
    """``"onoff:F:ON:OFF"`` -> ``(F, ON, OFF)`` (see :func:`parse_trace` for traces).

    Examples
    --------
    >>> parse_churn("onoff:0.3:10:5")
    (0.3, 10.0, 5.0)
    >>> parse_churn("onoff:2:1:1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: scenario: churn ...
    """
    parts = str(spec).split(":")
    try:
        if len(parts) != 4 or parts[0] != "onoff":
            raise ValueError
        frac, on, off = (float(x) for x in parts[1:])
    except ValueError:
        raise ParameterError(
            f"scenario: churn must be onoff:F:ON:OFF (fraction, mean online and offline "
            f"epochs) or trace:NAME:HOURS, got {spec!r}",
            key="churn",
        ) from None
    if not (0.0 < frac <= 1.0) or on < 1.0 or off < 1.0:
        raise ParameterError(
            f"scenario: churn {spec!r}: F must be in (0, 1] and ON, OFF at least 1 epoch",
            key="churn",
        )
    return frac, on, off


def onoff_schedule(
    n: int,
    epochs: int,
    frac: float,
    mean_on: float,
    mean_off: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(epochs, n)`` bool online schedule of the on/off control (module docstring)."""
    online = np.ones((epochs, n), dtype=bool)
    k = round(frac * n)
    churners = np.sort(rng.choice(n, size=k, replace=False))
    for v in churners.tolist():
        e = int(rng.geometric(1.0 / mean_on))  # epochs left in the first online session
        while e < epochs:
            off = int(rng.geometric(1.0 / mean_off))
            online[e : e + off, v] = False
            e += off + int(rng.geometric(1.0 / mean_on))
    return online


def drop_dead(out: np.ndarray, online: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Out-links touching an offline node removed; ``(new table, drops per node)``.

    Examples
    --------
    >>> t, d = drop_dead(np.array([[1, 2], [2, 0], [0, 1]]), np.array([True, True, False]))
    >>> t.tolist(), d.tolist()
    ([[1, -1], [-1, 0], [-1, -1]], [1, 1, 2])
    """
    t = np.array(out, dtype=np.int64, copy=True)
    on = np.asarray(online, dtype=bool)
    dead = (t >= 0) & (~on[np.maximum(t, 0)] | ~on[:, None])
    t[dead] = -1
    return t, dead.sum(axis=1)


def refill(
    out: np.ndarray,
    online: np.ndarray,
    in_limit: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Every empty slot of an online node dialled to a uniform accepting online peer.

    Nodes are served in a random order; a peer accepts while its incoming
    links are below ``in_limit`` (0 = no limit).  Returns ``(new table, dials
    per node)``; slots stay empty when nobody accepts.

    Examples
    --------
    >>> t, d = refill(np.array([[1, -1], [-1, -1], [0, 1]]), np.ones(3, bool), 0,
    ...               np.random.default_rng(0))
    >>> bool((t >= 0).all()), d.tolist(), bool((t != np.arange(3)[:, None]).all())
    (True, [1, 2, 0], True)
    """
    t = np.array(out, dtype=np.int64, copy=True)
    n = t.shape[0]
    on = np.asarray(online, dtype=bool)
    indeg = np.bincount(t[t >= 0], minlength=n)
    dials = np.zeros(n, dtype=np.int64)
    holes = np.flatnonzero(on & (t < 0).any(axis=1))
    for v in rng.permutation(holes).tolist():
        ok = on.copy()
        ok[v] = False
        ok[t[v][t[v] >= 0]] = False
        if in_limit > 0:
            ok &= indeg < in_limit
        cand = np.flatnonzero(ok)
        for j in np.flatnonzero(t[v] < 0).tolist():
            if not len(cand):
                break
            i = int(rng.integers(len(cand)))
            u = int(cand[i])
            cand = np.delete(cand, i)
            t[v, j] = u
            indeg[u] += 1
            dials[v] += 1
            if in_limit > 0 and indeg[u] >= in_limit:
                cand = cand[cand != u]
    return t, dials
