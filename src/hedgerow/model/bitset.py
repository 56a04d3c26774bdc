"""Bit-packed topic sets: each set is a row of ``uint64`` words.

Set intersection sizes over thousands of candidates then become a vectorised
``and`` plus popcount.  :func:`interest_matrix` unpacks the words into a dense
``(rows, n_topics)`` bool matrix and :func:`pack_bool` packs one back.
"""

from __future__ import annotations

import numba
import numpy as np


def n_words(n_topics: int) -> int:
    """Number of ``uint64`` words that hold ``n_topics`` bits."""
    return max(1, (int(n_topics) + 63) // 64)


def pack_sets(indptr: np.ndarray, indices: np.ndarray, n_topics: int) -> np.ndarray:
    """Pack a CSR list of topic sets into a ``(rows, words)`` ``uint64`` array.

    Examples
    --------
    >>> import numpy as np
    >>> m = pack_sets(np.array([0, 2, 3]), np.array([0, 65, 3]), 70)
    >>> m.shape, int(m[0, 0]), int(m[0, 1]), int(m[1, 0])
    ((2, 2), 1, 2, 8)
    """
    rows = len(indptr) - 1
    out = np.zeros((rows, n_words(n_topics)), dtype=np.uint64)
    row_of = np.repeat(np.arange(rows), np.diff(indptr))
    idx = np.asarray(indices, dtype=np.int64)
    np.bitwise_or.at(
        out, (row_of, idx >> 6), np.left_shift(np.uint64(1), (idx & 63).astype(np.uint64))
    )
    return out


def interest_matrix(masks: np.ndarray, n_topics: int) -> np.ndarray:
    """Unpack bit masks into a dense ``(n_nodes, n_topics)`` bool matrix.

    Examples
    --------
    >>> import numpy as np
    >>> interest_matrix(np.array([[0b101]], dtype=np.uint64), 3).tolist()
    [[True, False, True]]
    """
    t = np.arange(n_topics)
    words = masks[:, t >> 6]
    return ((words >> (t & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)


def pack_bool(matrix: np.ndarray) -> np.ndarray:
    """Pack a ``(rows, n_topics)`` bool matrix into ``uint64`` words (inverse of
    :func:`interest_matrix`).

    Examples
    --------
    >>> import numpy as np
    >>> pack_bool(np.array([[True, False, True]])).tolist()
    [[5]]
    """
    rows, n_topics = matrix.shape
    out = np.zeros((rows, n_words(n_topics)), dtype=np.uint64)
    r, t = np.nonzero(matrix)
    np.bitwise_or.at(out, (r, t >> 6), np.left_shift(np.uint64(1), (t & 63).astype(np.uint64)))
    return out


def popcount_and(masks: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``|row ∩ mask|`` for every row of ``masks``.

    Examples
    --------
    >>> import numpy as np
    >>> masks = np.array([[0b1011], [0b0100]], dtype=np.uint64)
    >>> popcount_and(masks, np.array([0b0011], dtype=np.uint64)).tolist()
    [2, 0]
    """
    return np.bitwise_count(masks & mask).sum(axis=-1, dtype=np.int64)


@numba.njit(cache=True, inline="always")
def popcount64(x: np.uint64) -> int:
    """Population count of one ``uint64`` word (SWAR, no lookup table)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
