"""Weighted sampling without replacement, many rows at once.

Each row draws ``n_take[row]`` distinct columns, every draw picking an allowed,
not yet drawn column with probability proportional to its weight (successive
sampling).  This is the law of Efraimidis and Spirakis' weighted random sampling
without replacement ("Weighted random sampling with a reservoir", Inf. Process.
Lett. 97(5), 2006: keep the ``k`` largest keys ``u ** (1 / w)``), drawn here
one column at a time from one uniform per draw.  Topiary's exploration
(eq. 10) uses it; so will the other adaptive protocols.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _successive_sample(weights, allowed, n_take, u, out):  # pragma: no cover - compiled
    """Successive weighted draws without replacement, row by row (see :func:`weighted_sample`)."""
    rows, cols = weights.shape
    w = np.empty(cols)
    for r in range(rows):
        total = 0.0
        n_zero = 0
        for c in range(cols):
            if allowed[r, c]:
                w[c] = weights[r, c]
                total += w[c]
                if w[c] <= 0.0:
                    n_zero += 1
            else:
                w[c] = -1.0
        for k in range(n_take[r]):
            chosen = -1
            if total > 0.0:
                x = u[r, k] * total
                acc = 0.0
                last = -1
                for c in range(cols):
                    if w[c] > 0.0:
                        last = c
                        acc += w[c]
                        if acc > x:
                            chosen = c
                            break
                if chosen < 0:
                    chosen = last  # rounding at the very end of the row
                total -= w[chosen]
                if total < 1e-12:
                    total = 0.0
            elif n_zero > 0:
                target = int(u[r, k] * n_zero)
                if target >= n_zero:
                    target = n_zero - 1
                seen = 0
                for c in range(cols):
                    if w[c] == 0.0:
                        if seen == target:
                            chosen = c
                            break
                        seen += 1
                n_zero -= 1
            else:
                break
            w[chosen] = -1.0
            out[r, k] = chosen


def weighted_sample(
    weights: np.ndarray,
    allowed: np.ndarray,
    n_take: np.ndarray,
    rng: np.random.Generator,
    u: np.ndarray | None = None,
) -> np.ndarray:
    """Per row, draw ``n_take[row]`` columns without replacement, ``P ∝ weights``.

    Successive sampling: each draw picks an allowed, not yet drawn column with
    probability proportional to its weight.  Columns with zero weight but
    ``allowed`` are drawn uniformly only once no positive-weight column is
    left; columns not ``allowed`` are never drawn.  Returns an
    ``(rows, max(n_take))`` array padded with ``-1``.  ``u``: the uniforms of
    the draws, ``(rows, w)`` with ``w >= max(n_take)`` (row ``r``'s ``k``-th
    draw reads ``u[r, k]``); by default ``rng.random((rows, max(n_take)))``,
    so a caller that draws them once can sample the rows in chunks with the
    same result.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0.0, 5.0, 0.0, 1.0]])
    >>> ok = np.array([[True, True, True, False]])
    >>> weighted_sample(w, ok, np.array([2]), np.random.default_rng(0)).tolist()[0][0]
    1
    """
    rows, cols = weights.shape
    n_take = np.asarray(n_take, dtype=np.int64)
    width = int(n_take.max()) if len(n_take) else 0
    out = np.full((rows, max(width, 0)), -1, dtype=np.int64)
    if width == 0 or cols == 0:
        return out
    if u is None:
        u = rng.random((rows, width))
    _successive_sample(
        np.ascontiguousarray(weights, dtype=np.float64),
        np.ascontiguousarray(allowed, dtype=np.bool_),
        np.minimum(n_take, cols),
        u,
        out,
    )
    return out
