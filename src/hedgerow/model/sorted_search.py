"""Binary search on a sorted slice, for numba kernels.

CSR rows keep their column ids sorted (:mod:`hedgerow.model.overlay`, the TCO
engine's overflow table, GossipSub's connection rows, the routed
dissemination's edges grouped by topic), so "where is ``v`` in row ``u``" is a
lower bound on ``indices[indptr[u]:indptr[u + 1]]``. Every kernel that asks it
calls :func:`lower_bound`, inlined into the caller.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, inline="always")
def lower_bound(a, lo, hi, v):  # pragma: no cover - jitted
    """The first position ``i`` in ``[lo, hi)`` with ``a[i] >= v`` (``hi`` if none).

    ``a[lo:hi]`` must be ascending. ``v`` is in the slice iff the result ``i``
    is below ``hi`` and ``a[i] == v``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([9, 2, 4, 4, 7, 0])
    >>> lower_bound(a, 1, 5, 4), lower_bound(a, 1, 5, 5), lower_bound(a, 1, 5, 8)
    (2, 4, 5)
    >>> lower_bound(a, 3, 3, 1)
    3
    """
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo
