"""The matrix constructor and the cell classes (Goldfish §IV-A, §IV-B1, §IV-B5, Table I).

Rows are blocks (messages) of the window's epochs in publication order,
columns the union of the node's peers over those epochs (incoming and
outgoing alike), sorted by id (§IV-A: "its peer axis is union of connections
across epochs").  A cell is

``OBSERVED``
    the peer delivered the block; the value is its relative time (§III);
``DAGGER`` (†)
    the peer was connected but sent nothing: it got the block from this node;
``INFEASIBLE`` (×)
    missing, and cannot be estimated: the row has at most one observed value,
    or no *peering row* exists, i.e. no other row ``k`` with the peer observed
    or † at ``k`` and at least 2 observed peers in common with the row
    (§IV-B5);
``ESTIMABLE``
    missing, feasible, and none of the ``K`` nearest peering rows (rows tied
    with the ``K``-th included) has a † in the column: an optimisation variable
    ``a_v`` (§IV-B1);
``AMBIGUOUS`` (‡)
    missing, feasible, but a † appears among those nearest rows, or there are
    fewer than ``K`` peering rows and the column has a † in any row.

Readings (``docs/goldfish.md``): rows = blocks and columns = peers (the paper
indexes cells both ways, §IV-A1 vs §IV-B); a missing cell is *estimable*
already with fewer than ``K`` peering rows if its column has no †, and
*ambiguous* when the nearest rows say the peer got the block from us (the
authors' code, cell for cell: with fewer than ``K`` peering rows it pads the
nearest rows with rows at infinite distance and so looks at every row of the
column; the paper's "not enough K blocks" would leave Table I(b)'s cells
``a_1..a_5`` unestimated whenever fewer than ``K`` rows exist).

Examples
--------
Table I(a): two epochs of four blocks; peers ``n1 n2 n4`` then ``n1 n2 n3``.

>>> import numpy as np
>>> e1 = np.array([[0, 5, 9], [np.inf, 0, np.inf], [0, 6, 8], [3, 7, 0]])
>>> e2 = np.array([[np.inf, 0, np.inf], [0, 4, 2], [0, 4, 5], [np.inf, 0, 1]])
>>> wm = window_matrix([np.array([1, 2, 4]), np.array([1, 2, 3])], [e1, e2])
>>> wm.peers.tolist()
[1, 2, 3, 4]
>>> cls = classify(wm, k=2).classes
>>> "".join(SYMBOLS[c] for c in cls[:, 2]), "".join(SYMBOLS[c] for c in cls[:, 3])
('a×aa†ooo', 'o†oo×aa×')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numba
import numpy as np

from hedgerow.protocols.goldfish.knn import classify_cells, row_distances

__all__ = [
    "AMBIGUOUS",
    "DAGGER",
    "ESTIMABLE",
    "INFEASIBLE",
    "OBSERVED",
    "SYMBOLS",
    "Classified",
    "WindowMatrix",
    "classify",
    "window_matrix",
]

OBSERVED, DAGGER, INFEASIBLE, ESTIMABLE, AMBIGUOUS = 0, 1, 2, 3, 4
#: one character per class (``o`` observed, ``†``, ``×`` infeasible, ``a`` estimable, ``‡``)
SYMBOLS = {OBSERVED: "o", DAGGER: "†", INFEASIBLE: "×", ESTIMABLE: "a", AMBIGUOUS: "‡"}


@dataclass
class WindowMatrix:
    """A node's synthesized matrix over a window of epochs (Table I(a)).

    Attributes
    ----------
    values : numpy.ndarray
        ``(p, q)`` relative times (ms) of observed cells, 0 elsewhere.
    observed, dagger : numpy.ndarray
        ``(p, q)`` bool masks of observed and † cells (the rest is missing).
    peers : numpy.ndarray
        ``(q,)`` peer ids of the columns, sorted.
    """

    values: np.ndarray
    observed: np.ndarray
    dagger: np.ndarray
    peers: np.ndarray


def window_matrix(peers: list[np.ndarray], rel: list[np.ndarray]) -> WindowMatrix:
    """Concatenate epochs along the block axis over the union of their peers (§IV-A).

    ``peers[e]`` are epoch ``e``'s peer ids (``-1`` = empty slot) and
    ``rel[e]`` its ``(m_e, width)`` observations (codes of
    :mod:`hedgerow.protocols.goldfish.observe`).
    """
    ids = [np.asarray(p, dtype=np.int64) for p in peers]
    cols = np.unique(np.concatenate([p[p >= 0] for p in ids])) if ids else np.zeros(0, np.int64)
    p_rows = sum(len(r) for r in rel)
    values = np.zeros((p_rows, len(cols)))
    observed = np.zeros((p_rows, len(cols)), dtype=bool)
    dagger = np.zeros((p_rows, len(cols)), dtype=bool)
    r0 = 0
    for pe, re in zip(ids, rel, strict=True):
        re = np.asarray(re, dtype=np.float64)
        cidx = np.where(pe >= 0, np.searchsorted(cols, pe), -1)
        _fill_epoch(re, cidx, r0, values, observed, dagger)
        r0 += len(re)
    return WindowMatrix(values, observed, dagger, cols)


@numba.njit(cache=True, nogil=True)
def _fill_epoch(re, cidx, r0, values, observed, dagger):
    """One epoch's observations ``re`` (``(m, width)``, any strides) into the window's rows
    ``r0 ..``: slot ``j`` goes to column ``cidx[j]`` (``-1``: an empty slot); a finite value is
    observed, ``+inf`` a †."""
    m, w = re.shape
    for i in range(m):
        for j in range(w):
            c = cidx[j]
            if c < 0:
                continue
            v = re[i, j]
            fin = np.isfinite(v)
            values[r0 + i, c] = v if fin else 0.0
            observed[r0 + i, c] = fin
            dagger[r0 + i, c] = v == np.inf


@dataclass
class Classified:
    """The cell classes of a window matrix and the KNN data of its estimable cells.

    Attributes
    ----------
    classes : numpy.ndarray
        ``(p, q)`` int8 class codes (``OBSERVED`` ... ``AMBIGUOUS``).
    scale : float
        ``max_time``: the values are divided by it before distances and completion.
    cells : numpy.ndarray
        ``(s, 2)`` (row, column) of each estimable cell, row-major order.
    neighbours : numpy.ndarray
        ``(s, K)`` its nearest peering rows (``-1`` padded).
    weights : numpy.ndarray
        ``(s, K)`` softmax weights of those rows over ``-g`` (0 where padded).
    distance : numpy.ndarray
        ``(p, p)`` row distances ``g`` (``nan`` where fewer than 2 common peers), computed
        when first read (the classes need only the distances of the peering rows).
    x, observed : numpy.ndarray
        The max-normalised values and the observed mask the distances are computed from.
    """

    classes: np.ndarray
    scale: float
    cells: np.ndarray
    neighbours: np.ndarray
    weights: np.ndarray
    x: np.ndarray = field(repr=False)
    observed: np.ndarray = field(repr=False)

    @cached_property
    def distance(self) -> np.ndarray:
        """``(p, p)`` row distances ``g``
        (:func:`~hedgerow.protocols.goldfish.knn.row_distances`)."""
        return row_distances(self.x, self.observed)


def classify(wm: WindowMatrix, k: int = 2) -> Classified:
    """Cell classes, distances and K nearest rows of a window matrix (§IV-B1, §IV-B2, §IV-B5)."""
    obs = np.ascontiguousarray(wm.observed)
    vals = wm.values[obs]
    scale = float(vals.max()) if len(vals) and vals.max() > 0 else 1.0
    x = np.ascontiguousarray(wm.values / scale)
    classes, cells, nbrs, w = classify_cells(x, obs, np.ascontiguousarray(wm.dagger), int(k))
    return Classified(classes, scale, cells, nbrs, w, x, obs)
