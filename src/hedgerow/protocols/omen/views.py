"""OMen's local views, maintained by T-Man-style gossip (section 4.3, Alg. 2-4).

Each node ``v`` keeps, for every predecessor ``v'`` in its range, an entry
``(B(v'), N(v'), R(v'))``: a backup set, the overlay neighbours of ``v'``
and a ready flag (Alg. 2).  ``getView()`` is the union of all ``B`` and ``N``
(Alg. 4).  In a gossip exchange (Alg. 3) ``v`` picks a peer ``p`` from its
view, both send ``{self} ∪ getView() ∪ rnd.view`` (``rnd.view``: ``rnd_view``
nodes from the peer-sampling service, :class:`hedgerow.gossip.PeerSampling`,
the ideal uniform sampler by default) and both
run ``selectView(getView() ∪ buffer)``, which rebuilds every entry with the
backup builder (:mod:`hedgerow.protocols.omen.backups`).  Unlike a T-Man
ranking function, the selection of one node's view depends on the others'
(the backup sets' multi-cover), and view lengths are not uniform (section 7.3).

Readings (``docs/omen.md``)
---------------------------
* **Cycles** (R-9).  Gossip is cycle-driven (PeerSim style): one cycle is
  ``T_wait`` = one time unit; in a cycle every *active* node runs one
  exchange, in a seeded random order.  After the warm-up cycles (every node
  active), a node is active while it holds an entry that is not ready or
  whose inputs changed (a new predecessor, a member that left, new links of
  the predecessor); an exchange that would change nothing is skipped, as
  the maintenance engine skips iterations that do nothing.
* **Ready flag** (R-6).  ``R(v')`` is true when ``B(v')`` covers every topic
  of ``v'`` that some other live node holds (eq. 1 where it can hold; the
  simulator's count of live subscribers is the oracle).  With ``lambda = 0``
  the backup set is empty and the flag is true for a leave; a joining node's
  backups use ``max(lambda, 1)`` (R-3), since a join needs the cover.
* **Peer** (R-11): uniform from the view; a uniform live node when the view
  is empty.

Examples
--------
>>> import numpy as np
>>> e = Entry(np.array([3, 4]), np.array([1]))
>>> e.members().tolist(), e.ready, e.dirty
([1, 3, 4], False, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Entry", "view_of"]

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class Entry:
    """One predecessor's entry in a node's local view (Alg. 2)."""

    backups: np.ndarray = field(default_factory=lambda: _EMPTY)
    neighbours: np.ndarray = field(default_factory=lambda: _EMPTY)
    ready: bool = False
    dirty: bool = True

    def members(self) -> np.ndarray:
        """``B(v') ∪ N(v')``, sorted."""
        return np.union1d(self.backups, self.neighbours)


def view_of(entries: dict[int, Entry]) -> np.ndarray:
    """``getView()`` (Alg. 4): every node named in the entries' ``B`` and ``N``."""
    if not entries:
        return _EMPTY
    parts = [e.backups for e in entries.values()] + [e.neighbours for e in entries.values()]
    return np.unique(np.concatenate(parts))
