"""Entries bucketed by an integer key (a counting sort), the one kernel behind Goldfish's CSRs.

The completion and the classification group entries by a key in several places: the terms by
their variable, the system's entries by row and by column, the window's copies of a row by
their distinct row.  :func:`bucket` does it once for all of them: a stable counting sort, so
within a bucket the entries keep their order.

Examples
--------
>>> import numpy as np
>>> ptr, order = bucket(np.array([2, 0, 2, 1, 0]), 4)
>>> ptr.tolist(), order.tolist()
([0, 2, 3, 5, 5], [1, 4, 3, 0, 2])
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bucket"]


@numba.njit(cache=True, nogil=True)
def bucket(keys, n):
    """Entries grouped by key: ``(pointer, order)``, the entries of key ``k`` being
    ``order[pointer[k]:pointer[k + 1]]`` in increasing order (a stable counting sort).

    ``keys`` are integers in ``0 .. n - 1``; ``pointer`` has ``n + 1`` entries.
    """
    ptr = np.zeros(n + 1, dtype=np.int64)
    for j in range(len(keys)):
        ptr[keys[j] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    order = np.empty(len(keys), dtype=np.int64)
    fill = ptr[:-1].copy()
    for j in range(len(keys)):
        order[fill[keys[j]]] = j
        fill[keys[j]] += 1
    return ptr, order
