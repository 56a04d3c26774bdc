"""The peer selector: altruistic exploitation and the depleting exploration pool (Goldfish §IV).

Altruistic exploitation (§IV: "We first identify a set of contributing peers
who always deliver blocks fast to us, and we credit them scores by counting
the number of benefiting peers who receives block fast from us"):

1. rows of the completed matrix without any value cell are dropped;
2. each remaining row's *contributor* is its fastest column (the first on
   ties; columns are sorted by id) and its *benefiting peers* are its †
   columns (peers that got the block from this node);
3. every ``n_exploit``-subset ``S`` of the contributors (lexicographic order)
   is scored by the number of distinct benefiting peers its rows cover, then
   by the total count of benefiting peers, then by how many rows its members
   won; the best subset whose new members accept a connection is kept.

With fewer contributors than exploit slots, all acceptable contributors are
kept; the free exploit slots go to random peers not seen in the window.

The depleting pool (§IV, §V-B): exploration peers are drawn without
replacement from every node; a peer seen in the window or kept for
exploitation leaves the pool; once the pool is empty it refills.  With 100
nodes and 3 exploit peers a node explores every other peer within 96 epochs.

Examples
--------
>>> import numpy as np
>>> t_hat = np.array([[0.0, 5.0, np.inf], [3.0, 0.0, np.inf], [0.0, 2.0, np.inf]])
>>> dag = np.array([[False, False, True], [False, False, True], [False, False, False]])
>>> rank_subsets(t_hat, dag, np.array([10, 20, 30]), 1)
[(10,), (20,)]
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import numba
import numpy as np

__all__ = ["DepletingPool", "rank_subsets"]


def rank_subsets(
    t_hat: np.ndarray, dag: np.ndarray, peers: np.ndarray, n_select: int
) -> list[tuple[int, ...]]:
    """Subsets of contributors, best first (steps 1-3 of the module docstring).

    ``t_hat`` is the completed matrix (``inf`` for cells without a value),
    ``dag`` its † mask, ``peers`` the column ids.  With fewer contributors
    than ``n_select``, a single tuple of all of them (ranked by rows won).
    """
    t_hat = np.asarray(t_hat, dtype=np.float64)
    rows_won, dag_won = _wins(t_hat, np.asarray(dag, dtype=np.bool_))
    cols = np.flatnonzero(rows_won)
    if len(cols) == 0:
        return []
    # columns of one peer id counted together (the window's columns are distinct ids)
    ids, who = np.unique(np.asarray(peers)[cols], return_inverse=True)
    who = who.ravel()
    rank = np.zeros(len(ids), dtype=np.int64)
    np.add.at(rank, who, rows_won[cols])
    per_col = np.zeros((len(ids), dag_won.shape[1]), dtype=np.int64)  # rows of u, † at j
    np.add.at(per_col, who, dag_won[cols])
    weight = per_col.sum(axis=1)
    # benefiting peers as a (contributor, distinct peer id) mask
    if np.all(peers[1:] > peers[:-1]):
        cover = per_col > 0
    else:
        uid, col = np.unique(peers, return_inverse=True)
        cover = np.zeros((len(ids), len(uid)), dtype=bool)
        for j in range(len(uid)):
            cover[:, j] = per_col[:, col.ravel() == j].any(axis=1)
    if len(ids) < n_select:
        return [tuple(ids[np.argsort(-rank, kind="stable")].tolist())]
    combs = np.array(list(combinations(range(len(ids)), n_select)), dtype=np.int64)
    size = cover[combs].any(axis=1).sum(axis=1)
    # np.lexsort is stable: lexicographic order among equals, primary key last
    order = np.lexsort((-rank[combs].sum(axis=1), -weight[combs].sum(axis=1), -size))
    return list(map(tuple, ids[combs[order]].tolist()))


@numba.njit(cache=True, nogil=True)
def _wins(t_hat, dag):
    """Each column's rows won (the row's fastest value: the first least one, or its first
    ``nan``, as ``numpy.argmin`` picks) among the rows with a value, and per won column the
    count of those rows with a † at each column."""
    p, q = t_hat.shape
    won = np.zeros(q, dtype=np.int64)
    per = np.zeros((q, q), dtype=np.int64)
    for r in range(p):
        best = -1
        for j in range(q):
            v = t_hat[r, j]
            if v != v:  # nan: numpy's argmin takes the first one
                best = j
                break
            if best < 0 or v < t_hat[r, best]:
                best = j
        has = False
        for j in range(q):
            if np.isfinite(t_hat[r, j]):
                has = True
                break
        if not has:
            continue
        won[best] += 1
        for j in range(q):
            if dag[r, j]:
                per[best, j] += 1
    return won, per


def choose_exploits(
    ranked: list[tuple[int, ...]],
    n_select: int,
    current: set[int],
    accepts: Callable[[int], bool],
) -> list[int]:
    """The first ranked subset whose members not already out-peers accept; else none.

    With fewer contributors than ``n_select`` (a single shorter tuple), every
    member that is an out-peer or accepts is kept.
    """
    if not ranked:
        return []
    if len(ranked[0]) < n_select:
        return [u for u in ranked[0] if u in current or accepts(u)]
    for comb in ranked:
        if all(u in current or accepts(u) for u in comb):
            return list(comb)
    return []


class DepletingPool:
    """Exploration without replacement until every node was seen, then a refill (§IV).

    Examples
    --------
    >>> import numpy as np
    >>> pool = DepletingPool(5, me=0)
    >>> rng = np.random.default_rng(1)
    >>> sorted(pool.draw(rng, 1, exclude=[], accepts=lambda u: True)[0]
    ...        for _ in range(4))
    [1, 2, 3, 4]
    """

    def __init__(self, n_nodes: int, me: int) -> None:
        self.me = int(me)
        self.seen = np.zeros(n_nodes, dtype=bool)
        self.seen[self.me] = True
        #: how many times the pool was emptied and refilled
        self.refills = 0

    def mark(self, nodes: np.ndarray | list[int]) -> None:
        """Take ``nodes`` out of the pool (seen in the window, or exploited)."""
        arr = np.asarray(nodes, dtype=np.int64)
        self.seen[arr[arr >= 0]] = True

    def draw(
        self,
        rng: np.random.Generator,
        k: int,
        *,
        exclude: list[int] | np.ndarray,
        accepts: Callable[[int], bool],
    ) -> list[int]:
        """``k`` peers from the pool (uniform, accepting a connection, not in ``exclude``)."""
        got: list[int] = []
        excl = np.zeros(len(self.seen), dtype=bool)
        excl[np.asarray(exclude, dtype=np.int64)] = True
        excl[self.me] = True
        refilled = False
        while len(got) < k:
            cand = np.flatnonzero(~self.seen & ~excl)
            rng.shuffle(cand)
            for u in cand.tolist():
                if accepts(u):
                    got.append(u)
                    self.seen[u] = True
                    excl[u] = True
                    if len(got) == k:
                        break
                else:
                    excl[u] = True  # refused now: not again in this draw
            if len(got) == k:
                break
            if refilled:
                break  # nobody left who accepts
            self.seen[:] = False
            self.seen[self.me] = True
            self.seen[np.asarray(got, dtype=np.int64)] = True
            self.refills += 1
            refilled = True
        return got
