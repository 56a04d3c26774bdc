"""Nodes in geographic regions, one normal delay law per pair of regions: :func:`regions`.

The default table is Lean Gossip's (``ankitku/lean-gossip``, ``meshsub.py``,
``MeshSubComplete.__init__`` and ``_rand_delay_ticks``; ``docs/gossipsub.md``,
"Lean Gossip's world"): three regions holding 30 % / 40 % / 30 % of the nodes,
one-way means of 30 ms inside Europe and inside the US, 40 ms inside Asia,
120 ms Europe-US, 220 ms Europe-Asia, 200 ms US-Asia, a standard deviation of
30 % of the mean, every delay clipped below at 10 ms.  Lean Gossip draws a
delay per message and rounds it up to its 100 ms tick; here a link's delay is
drawn once (a latency model is a matrix), and ``tick_ms`` rounds it up to a
whole number of ticks when the tick model is wanted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.latency.model import LatencyModel

__all__ = ["REGION_MEANS_MS", "REGION_NAMES", "REGION_SHARES", "regions"]

#: the regions, in the order of :data:`REGION_SHARES` and :data:`REGION_MEANS_MS`
REGION_NAMES: tuple[str, ...] = ("EU", "US", "Asia")
#: the share of the nodes in each region (each node draws its region independently)
REGION_SHARES: tuple[float, ...] = (0.3, 0.4, 0.3)
#: mean one-way delay (ms) between two regions (symmetric)
REGION_MEANS_MS: tuple[tuple[float, ...], ...] = (
    (30.0, 120.0, 220.0),
    (120.0, 30.0, 200.0),
    (220.0, 200.0, 40.0),
)


def regions(
    n_nodes: int,
    rng: np.random.Generator | None,
    *,
    shares: Sequence[float] = REGION_SHARES,
    means_ms: Sequence[Sequence[float]] = REGION_MEANS_MS,
    spread: float = 0.3,
    floor_ms: float = 10.0,
    tick_ms: float = 0.0,
    names: Sequence[str] = REGION_NAMES,
) -> LatencyModel:
    """``n_nodes`` nodes in regions; every pair's delay one normal draw for its regions.

    Each node draws its region with probabilities ``shares``; each unordered
    pair draws its delay from ``Normal(mean, spread * mean)`` of its two
    regions (``means_ms``), clipped below at ``floor_ms``, and, with
    ``tick_ms`` above 0, rounded up to a whole number of ticks.  The model's
    ``labels`` are the regions' names.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    rng : numpy.random.Generator
        The regions and the delays are drawn from it (required).
    shares : sequence of float
        Share of the nodes per region (sums to 1).
    means_ms : sequence of sequence of float
        Symmetric table of mean one-way delays (ms) between regions.
    spread : float, default 0.3
        Standard deviation as a share of the mean.
    floor_ms : float, default 10
        Smallest delay (ms).
    tick_ms : float, default 0
        Round every delay up to a multiple of this (0: no rounding).
    names : sequence of str
        The regions' names (the model's ``labels``).

    Examples
    --------
    >>> m = regions(400, np.random.default_rng(0), tick_ms=100.0)
    >>> sorted(set(m.labels))
    ['Asia', 'EU', 'US']
    >>> d = m.matrix()
    >>> bool((d[~np.eye(400, dtype=bool)] % 100 == 0).all()), float(d[d > 0].min())
    (True, 100.0)
    >>> regions(4, np.random.default_rng(0), shares=(0.5, 0.6, 0.0))
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: latency model 'regions': shares must be >= 0 and sum to 1
    """
    n = int(n_nodes)
    if rng is None:
        raise ParameterError("latency model 'regions' needs a random stream")
    p = np.asarray(shares, dtype=np.float64)
    mu = np.asarray(means_ms, dtype=np.float64)
    k = len(names)
    if p.shape != (k,) or (p < 0).any() or abs(p.sum() - 1.0) > 1e-9:
        raise ParameterError("latency model 'regions': shares must be >= 0 and sum to 1",
                             key="shares")
    if mu.shape != (k, k) or not np.allclose(mu, mu.T) or (mu < 0).any():
        raise ParameterError(f"latency model 'regions': means_ms must be a symmetric {k} x {k} "
                             "table of delays >= 0", key="means_ms")
    for name, value in (("spread", spread), ("floor_ms", floor_ms), ("tick_ms", tick_ms)):
        if not (np.isfinite(value) and value >= 0):
            raise ParameterError(f"latency model 'regions': {name} must be >= 0, got {value}",
                                 key=name)
    region = rng.choice(k, size=n, p=p)
    iu, ju = np.triu_indices(n, 1)
    mean = mu[region[iu], region[ju]]
    d = np.maximum(rng.normal(mean, spread * mean), float(floor_ms))
    if tick_ms > 0:
        d = np.ceil(d / tick_ms) * tick_ms
    mat = np.zeros((n, n))
    mat[iu, ju] = d
    mat[ju, iu] = d
    return LatencyModel(n, name="regions", matrix=mat, labels=[names[r] for r in region],
                        info={"regions": dict(zip(names, np.bincount(region, minlength=k)
                                                  .tolist(), strict=True)),
                              "tick_ms": float(tick_ms)})
