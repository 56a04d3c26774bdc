"""Per-node processing delays ``delta_v`` (ms).

Topiary (section II-A) only requires ``delta_v > 0`` ("the time it takes for
node ``v`` to process the message header") and gives no distribution or
value.  Its sibling paper Goldfish (same group, section V-A) uses "fixed 20ms
node (including processing and transmission) delay", and the Goldfish code
(``bx3/goldfish``, ``gen-rand-topo.py``) draws ``normal(proc_mean, proc_std)``
with ``proc_mean=20, proc_std=0``.  We follow it: the default is a constant
20 ms; a normal or uniform spread around the mean can be asked for, and every
draw is floored at ``floor_ms`` so that ``delta_v > 0`` holds as the paper
requires.
"""

from __future__ import annotations

import numpy as np

from hedgerow.errors import ParameterError

#: Default mean processing delay in ms (Goldfish section V-A).
DEFAULT_PROC_MS = 20.0

DISTRIBUTIONS = ("normal", "uniform")


def processing_delays(
    n_nodes: int,
    rng: np.random.Generator | None = None,
    *,
    mean_ms: float = DEFAULT_PROC_MS,
    std_ms: float = 0.0,
    distribution: str = "normal",
    floor_ms: float = 0.01,
) -> np.ndarray:
    """Processing delay ``delta_v`` of every node, in ms (float64, all ``>= floor_ms``).

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    rng : numpy.random.Generator, optional
        Needed when ``std_ms > 0``.
    mean_ms : float, default 20.0
        Mean delay (Goldfish's fixed 20 ms).
    std_ms : float, default 0.0
        Standard deviation; 0 gives the constant ``mean_ms`` for every node.
    distribution : {"normal", "uniform"}, default "normal"
        ``normal``: ``N(mean, std^2)``; ``uniform``: uniform on
        ``mean -/+ std*sqrt(3)`` (same mean and standard deviation).
    floor_ms : float, default 0.01
        Draws below this are raised to it (the paper needs ``delta_v > 0``).

    Examples
    --------
    >>> processing_delays(3).tolist()
    [20.0, 20.0, 20.0]
    >>> from hedgerow.model import RngStreams
    >>> d = processing_delays(1000, RngStreams(3).stream("proc"), std_ms=5.0)
    >>> bool(15 < d.mean() < 25 and d.min() >= 0.01)
    True
    """
    n = int(n_nodes)
    if n < 0:
        raise ParameterError(f"n_nodes must be non-negative, got {n_nodes}")
    for pname, val in (("mean_ms", mean_ms), ("std_ms", std_ms), ("floor_ms", floor_ms)):
        if not np.isfinite(val) or val < 0:
            raise ParameterError(f"processing delay {pname} must be finite and >= 0, got {val}")
    if floor_ms <= 0:
        raise ParameterError(
            f"floor_ms must be positive (the paper needs delta_v > 0), got {floor_ms}"
        )
    if distribution not in DISTRIBUTIONS:
        allowed = ", ".join(DISTRIBUTIONS)
        raise ParameterError(
            f"unknown processing delay distribution {distribution!r}; allowed: {allowed}"
        )
    if std_ms == 0:
        out = np.full(n, float(mean_ms))
    else:
        if rng is None:
            raise ParameterError("random processing delays (std_ms > 0) need an rng")
        if distribution == "normal":
            out = rng.normal(mean_ms, std_ms, size=n)
        else:
            half = std_ms * np.sqrt(3.0)
            out = rng.uniform(mean_ms - half, mean_ms + half, size=n)
    return np.maximum(out, float(floor_ms))
