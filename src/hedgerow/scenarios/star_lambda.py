"""λ(e) of Goldfish section V-B Fig. 2: the adaptive node's detour to the publishers.

Kept apart from :mod:`hedgerow.scenarios.optimum` so that the per-epoch observers can measure
it without importing the epoch loop.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

__all__ = ["star_lambda"]


def star_lambda(out: np.ndarray, star: int, n_exploit: int, lat: np.ndarray,
                proc: np.ndarray, pubs: np.ndarray, *, into_star: bool = False) -> float:
    """λ(e) of one ``(n, d)`` out-link table, ``-1`` = empty slot (see ``optimum``).

    ``into_star=True`` keeps the other nodes' links into the star (the ``_in`` reading).

    Examples
    --------
    >>> lat = np.array([[0, 10, 25], [10, 0, 10], [25, 10, 0]], float)
    >>> out = np.array([[1], [-1], [1]])  # 0 -> 1 <- star 2: 20 ms against 25 direct
    >>> star_lambda(out, 2, 1, lat, np.zeros(3), np.array([0]))
    -5.0
    >>> out = np.array([[1], [2], [-1]])  # 1 -> 2 is a link into the star: not counted
    >>> star_lambda(out, 2, 1, lat, np.zeros(3), np.array([0]))
    inf
    >>> star_lambda(out, 2, 1, lat, np.zeros(3), np.array([0]), into_star=True)
    -5.0
    """
    n = out.shape[0]
    src = np.repeat(np.arange(n), out.shape[1])
    dst = out.reshape(-1)
    keep = (dst >= 0) & (src != star) & ((dst != star) | into_star)
    s_ex = out[star, :n_exploit]
    s_ex = s_ex[s_ex >= 0]
    u = np.concatenate([src[keep], np.full(len(s_ex), star)])
    v = np.concatenate([dst[keep], s_ex])
    w = lat[u, v] + (proc[u] + proc[v]) / 2
    a = sp.csr_array((w, (u, v)), shape=(n, n))
    a = a.maximum(a.T)  # undirected; a duplicate link keeps one weight
    dist = dijkstra(a, directed=False, indices=pubs)[:, star]
    direct = lat[pubs, star] + (proc[pubs] + proc[star]) / 2
    return float(np.sum(dist - direct))
