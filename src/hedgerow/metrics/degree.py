"""Node degree statistics."""

from __future__ import annotations

import numpy as np

from hedgerow.metrics._args import checked
from hedgerow.model.overlay import Overlay


def degree_ci95(degrees: np.ndarray) -> tuple[float, float]:
    """95% confidence interval of the mean degree (normal approximation).

    Examples
    --------
    >>> lo, hi = degree_ci95(np.array([2, 4, 4, 6]))
    >>> round(lo, 3), round(hi, 3)
    (2.4, 5.6)
    """
    d = np.asarray(degrees, dtype=np.float64)
    if len(d) < 2:
        m = float(d.mean()) if len(d) else 0.0
        return m, m
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean() - half), float(d.mean() + half)


def degree_stats(overlay: Overlay) -> dict[str, float | list[float]]:
    """Average, maximum, minimum, 95% CI of the mean and 2.5/97.5 percentiles.

    Examples
    --------
    >>> from hedgerow.model import Overlay
    >>> s = degree_stats(Overlay.from_edges(3, [(0, 1), (1, 2)]))
    >>> s["avg_degree"], s["max_degree"]
    (1.3333333333333333, 2)
    """
    checked("degree_stats", overlay=overlay)
    d = overlay.degree()
    lo, hi = degree_ci95(d)
    return {
        "avg_degree": float(d.mean()) if len(d) else 0.0,
        "max_degree": int(d.max()) if len(d) else 0,
        "min_degree": int(d.min()) if len(d) else 0,
        "degree_ci95": [lo, hi],
        "degree_p2_5": float(np.percentile(d, 2.5)) if len(d) else 0.0,
        "degree_p97_5": float(np.percentile(d, 97.5)) if len(d) else 0.0,
    }


def degree_histogram(overlay: Overlay) -> np.ndarray:
    """``h[k]`` = number of nodes of degree ``k``.

    Examples
    --------
    >>> from hedgerow.model import Overlay
    >>> degree_histogram(Overlay.from_edges(3, [(0, 1), (1, 2)])).tolist()
    [0, 2, 1]
    """
    checked("degree_histogram", overlay=overlay)
    return np.bincount(overlay.degree())
