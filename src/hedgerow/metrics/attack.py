"""Attack measures on an overlay's out-links (Topiary section V-D).

Functions of the directed out-links ``out_src[i] -> out_dst[i]`` (for an
undirected overlay, both directions of each link) and the ``honest`` node mask.
"""

from __future__ import annotations

import numpy as np


def slot_stats(
    out_src: np.ndarray, out_dst: np.ndarray, honest: np.ndarray
) -> tuple[float, float, float]:
    """How far attackers hold the honest nodes' links (eclipse attack, section V-D2).

    Parameters
    ----------
    out_src, out_dst : numpy.ndarray
        ``(k,)`` int: the out-links ``out_src[i] -> out_dst[i]``.
    honest : numpy.ndarray
        ``(n,)`` bool: honest nodes (the others are attackers).

    Returns
    -------
    attacker_share : float
        Share of the honest nodes' out-links that point to attackers (``0`` when
        honest nodes have no out-link).
    honest_out : float
        Share of honest nodes with at least one honest out-neighbour.
    honest_link : float
        Share of honest nodes linked to at least one honest node in either
        direction (out or in): the ones not eclipsed.

    Examples
    --------
    Nodes 0-2 are honest, 3 is an attacker: 0 -> 3, 1 -> 3, 1 -> 2, 3 -> 0.

    >>> import numpy as np
    >>> honest = np.array([True, True, True, False])
    >>> slot_stats(np.array([0, 1, 1, 3]), np.array([3, 3, 2, 0]), honest)
    (0.6666666666666666, 0.3333333333333333, 0.6666666666666666)
    """
    h = honest[out_src]
    src, dst = out_src[h], out_dst[h]
    share = float((~honest[dst]).mean()) if len(dst) else 0.0
    hh = honest[dst]
    has_out = np.zeros(len(honest), dtype=bool)
    has_out[src[hh]] = True
    has_any = has_out.copy()
    has_any[dst[hh]] = True
    return share, float(has_out[honest].mean()), float(has_any[honest].mean())


def honest_out_mask(out_src: np.ndarray, out_dst: np.ndarray, honest: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: the node has at least one honest out-neighbour.

    Examples
    --------
    >>> import numpy as np
    >>> honest_out_mask(np.array([0, 1]), np.array([2, 2]), np.array([True, False, True])).tolist()
    [True, True, False]
    """
    has = np.zeros(len(honest), dtype=bool)
    ok = np.asarray(honest, dtype=bool)[out_dst]
    has[np.asarray(out_src)[ok]] = True
    return has


def eclipse_streaks(has_honest_out: np.ndarray) -> np.ndarray:
    """Per node, the longest run of consecutive epochs with no honest out-neighbour.

    Parameters
    ----------
    has_honest_out : numpy.ndarray
        ``(epochs, n)`` bool, one row per epoch (:func:`honest_out_mask`).

    Returns
    -------
    numpy.ndarray
        ``(n,)`` int64 streak lengths (0 for a node never eclipsed).

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[1, 0], [0, 0], [0, 1], [1, 0]], dtype=bool)
    >>> eclipse_streaks(h).tolist()
    [2, 2]
    """
    eclipsed = ~np.asarray(has_honest_out, dtype=bool)
    run = np.zeros(eclipsed.shape[1], dtype=np.int64)
    best = np.zeros_like(run)
    for row in eclipsed:
        run = np.where(row, run + 1, 0)
        np.maximum(best, run, out=best)
    return best


def exploit_hold(
    exploit: np.ndarray, nodes: np.ndarray, honest: np.ndarray
) -> tuple[float, float]:
    """How far attackers hold the exploitation slots of ``nodes`` (withholding relays).

    Parameters
    ----------
    exploit : numpy.ndarray
        ``(n, d)`` exploitation out-links (``-1`` padded).
    nodes : numpy.ndarray
        Ids of the measured (honest adaptive) nodes.
    honest : numpy.ndarray
        ``(n,)`` bool honest mask.

    Returns
    -------
    honest_peer_share : float
        Share of ``nodes`` with at least one honest exploitation peer.
    attacker_share : float
        Share of their filled exploitation slots held by attackers.

    Examples
    --------
    >>> import numpy as np
    >>> ex = np.array([[2, 1], [2, 3], [0, -1], [1, -1]])
    >>> exploit_hold(ex, np.array([0, 1]), np.array([True, True, False, False]))
    (0.5, 0.75)
    """
    t = np.asarray(exploit, dtype=np.int64)[np.asarray(nodes, dtype=np.int64)]
    h = np.asarray(honest, dtype=bool)
    ok = t >= 0
    good = ok & h[np.maximum(t, 0)]
    if not len(t):
        return float("nan"), float("nan")
    share = float((ok & ~good).sum() / ok.sum()) if ok.any() else 0.0
    return float(good.any(axis=1).mean()), share


def hold_tenures(held: np.ndarray) -> np.ndarray:
    """Lengths (epochs) of every maximal run of ``True`` down each column of ``held``.

    ``held[e, p]``: pair ``p`` (an honest node and an attacker) is an
    exploitation link in epoch ``e``.  A run still open at the last epoch is
    counted with its length so far.

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[1, 0], [1, 1], [0, 1], [1, 1]], dtype=bool)
    >>> hold_tenures(h).tolist()
    [2, 1, 3]
    """
    h = np.asarray(held, dtype=bool)
    if h.size == 0:
        return np.zeros(0, dtype=np.int64)
    pad = np.zeros((1, h.shape[1]), dtype=bool)
    x = np.vstack([pad, h, pad]).astype(np.int8)
    dx = np.diff(x, axis=0)
    starts = np.argwhere(dx.T == 1)
    ends = np.argwhere(dx.T == -1)
    return (ends[:, 1] - starts[:, 1]).astype(np.int64)
