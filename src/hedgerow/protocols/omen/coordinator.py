"""OMen's identifier circle: who coordinates a churn event (section 3.3, Alg. 6).

Nodes sit on a ring in the order of seeded random identifiers (reading R-12:
one uniform draw per node, stream ``"ring"``).  The coordinator of an event
at ``v'`` is the first live node clockwise after ``v'`` (``isCoordinator``);
a node keeps knowledge for its ``L`` live predecessors (``getPreds``) and an
event is announced to the ``L`` live successors of ``v'``
(``notifySuccRange``), so when the coordinator fails the next one takes over.
The ring layer itself (successor lists among live nodes) is taken as exact;
OMen's own messages run on the event core.

Examples
--------
>>> import numpy as np
>>> ring = Ring(np.array([0.5, 0.1, 0.9, 0.3]))
>>> for v in range(4):
...     ring.add(v)
>>> ring.order()
[1, 3, 0, 2]
>>> ring.successors(3, 2), ring.predecessors(1, 2)
([0, 2], [2, 0])
>>> ring.remove(0); ring.coordinator(0), ring.in_pred_range(0, 2, 1), ring.in_pred_range(0, 2, 2)
(2, True, True)
"""

from __future__ import annotations

import bisect

import numpy as np

__all__ = ["Ring"]


class Ring:
    """The live nodes in ring order.

    Parameters
    ----------
    ids : numpy.ndarray
        Ring identifier of every node (distinct floats).
    """

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = np.asarray(ids, dtype=np.float64)
        rank = np.empty(len(self.ids), dtype=np.int64)
        rank[np.argsort(self.ids, kind="stable")] = np.arange(len(self.ids))
        self.rank = rank
        self.by_rank = np.argsort(self.ids, kind="stable")
        self._live: list[int] = []  # sorted ranks of the live nodes

    def __len__(self) -> int:
        return len(self._live)

    def add(self, v: int) -> None:
        """``v`` joins the ring."""
        r = int(self.rank[v])
        i = bisect.bisect_left(self._live, r)
        if i == len(self._live) or self._live[i] != r:
            self._live.insert(i, r)

    def remove(self, v: int) -> None:
        """``v`` leaves the ring."""
        r = int(self.rank[v])
        i = bisect.bisect_left(self._live, r)
        if i < len(self._live) and self._live[i] == r:
            del self._live[i]

    def order(self) -> list[int]:
        """Live nodes clockwise from the smallest identifier."""
        return [int(self.by_rank[r]) for r in self._live]

    def successors(self, v: int, count: int) -> list[int]:
        """The first ``count`` live nodes clockwise after position of ``v`` (``v`` live or not)."""
        live = self._live
        if not live:
            return []
        i = bisect.bisect_right(live, int(self.rank[v]))
        out = []
        for j in range(min(count, len(live))):
            w = int(self.by_rank[live[(i + j) % len(live)]])
            if w == v:
                break
            out.append(w)
        return out

    def predecessors(self, v: int, count: int) -> list[int]:
        """The first ``count`` live nodes anticlockwise before the position of ``v``."""
        live = self._live
        if not live:
            return []
        i = bisect.bisect_left(live, int(self.rank[v]))
        out = []
        for j in range(1, min(count, len(live)) + 1):
            w = int(self.by_rank[live[(i - j) % len(live)]])
            if w == v:
                break
            out.append(w)
        return out

    def coordinator(self, v: int) -> int:
        """The churn coordinator of an event at ``v``: its first live successor (-1 if none)."""
        s = self.successors(v, 1)
        return s[0] if s else -1

    def in_pred_range(self, v: int, c: int, L: int) -> bool:
        """``isInPredRange``: fewer than ``L`` live nodes lie strictly between ``v`` and ``c``."""
        if v == c:
            return False
        return c in self.successors(v, L)
