"""T-Man: gossip-based topology construction with a pluggable neighbour selection.

Jelasity and Babaoglu, "T-Man: gossip-based overlay topology management"
(ESOA 2005).  Every node keeps a view of at most ``R`` node ids (``view``,
``(n, R)`` int32, ``-1`` = empty slot).  Each cycle every live node ``p``, in a
random order, picks a partner ``q`` (by default uniformly among its view
entries, or from its peer sample while the view is empty); both build the same
buffer, the union of both views, both peer samples (``getSampleNodes()``) and
both descriptors, and each replaces its view by ``select`` over that buffer
(minus itself).  This is the exchange of Vitis's Algorithms 2-3 and of OMen's
view maintenance.

Batches instead of one call per exchange
    Exchanges run in *batches of disjoint pairs*: a pass over the nodes still
    to act (in the cycle's random order) takes every ``(p, q)`` whose two ends
    are not yet busy in the batch; the others wait for the next batch and pick
    their partner again from their (then current) view.  Exchanges of one batch
    touch disjoint views, so the batch equals running them one after the other,
    and each batch sees every earlier one: the cycle is a serial schedule, as
    in PeerSim's cycle-driven engine.  A cycle takes about 10 batches at 10,000
    nodes, each one numba call to gather the buffers and one call of the
    selection over all of the batch's rows.

The fused ring cycle
    :func:`ring_select` returns a :class:`RingSelect` and :func:`ring_partner` a
    :class:`RingPartner`.  With a ``RingSelect`` of distinct ids and
    ``uniform_partner`` or a ``RingPartner``, :meth:`TMan.cycle` runs the whole
    cycle in one numba call (:mod:`hedgerow.gossip._ring_fused`): the same
    batches, draws and pairs, each exchange's union built once and ranked for
    both ends straight away.  Views, counters and the generator state come out
    bit for bit as through the hooks (pinned by a test).  :meth:`TMan.fused_ring`
    says whether a T-Man takes that path; any other hook (a plain function
    wrapping one of these included) takes the generic one.

The selection hook
    ``select(rows, indptr, cand, view)`` is any Python callable (normally a thin
    wrapper around the caller's own ``numba.njit(cache=True)`` kernel, which
    closes over the caller's context: ids, masks, rates, per-node state):

    - ``rows``: int64 node ids whose view is to be replaced;
    - ``cand[indptr[i]:indptr[i+1]]``: int32 candidates of ``rows[i]``
      (duplicates removed, ``rows[i]`` itself excluded, ``-1`` never present);
    - ``view``: the ``(n, R)`` view array, to be written in place for every
      row (fill unused slots with ``-1``).

    Nothing requires a ranking: a selection may keep per-node state of its own
    (e.g. slot kinds, ages) and choose by any rule.  A *ranking* selection only
    scores candidates: :func:`rank_select` turns a score callable
    ``score(rows, indptr, cand) -> float64[len(cand)]`` into a selection that
    keeps the ``R`` best (ties to the lower id).  :func:`ring_select` (T-Man's
    ring on circular 64-bit ids) and :func:`jaccard_select` (similarity of
    subscription bit masks) are given.

The partner hook
    ``partner(nodes, view, sample, alive, u) -> int64 partners`` (``-1``: no
    exchange this cycle).  :func:`uniform_partner` is the default: uniform
    among view entries (dead ones included: the exchange then fails, as a
    timeout would), or among the live sample entries when the view is empty.

Examples
--------
>>> import numpy as np
>>> from hedgerow.gossip import PeerSampling, TMan, ring_select
>>> n = 300
>>> rng = np.random.default_rng(0)
>>> ids = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
>>> ps = PeerSampling(n, 10, kind="uniform")
>>> ps.bootstrap(np.ones(n, bool), rng)
>>> tm = TMan(4, ring_select(ids))
>>> view = tm.empty_view(n)
>>> for _ in range(25):
...     ps.cycle(rng)
...     tm.cycle(view, ps, rng)
>>> order = np.argsort(ids)
>>> succ = np.empty(n, np.int64); succ[order] = np.roll(order, -1)
>>> float(np.mean((view == succ[:, None]).any(axis=1)))
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.gossip._ring_fused import _ring_cycle, _ring_cycle_par, _ring_keep
from hedgerow.gossip._tman_kernels import (
    _gather,
    _jaccard_scores,
    _keep_best,
    _pick_batch,
    _ring_partner,
    _uniform_partner,
)

__all__ = [
    "RingPartner",
    "RingSelect",
    "TMan",
    "jaccard_select",
    "rank_select",
    "ring_partner",
    "ring_select",
    "uniform_partner",
]

Select = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
Partner = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def uniform_partner(nodes: np.ndarray, view: np.ndarray, sample: np.ndarray,
                    alive: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Partner uniform among the view's entries, else among the live peer sample.

    Examples
    --------
    >>> import numpy as np
    >>> view = np.array([[1, -1], [-1, -1], [0, 1]], np.int32)
    >>> sample = np.array([[2], [2], [0]], np.int32)
    >>> uniform_partner(np.arange(3), view, sample, np.ones(3, bool), np.full(3, .9)).tolist()
    [1, 2, 1]
    """
    return _uniform_partner(np.asarray(nodes, np.int64), view, sample, alive, u)


@dataclass(frozen=True, eq=False)
class RingPartner:
    """T-Man's own peer choice for a ring: uniform among the ``psi`` view entries nearest in id.

    Jelasity and Babaoglu's ``selectPeer`` ranks the view by the node's own
    ranking function and picks at random among the ``psi`` best; for a ring the
    rank is the circular distance between 64-bit ids.  Falls back to the live
    peer sample while the view is empty, as :func:`uniform_partner`.  Made by
    :func:`ring_partner`; :class:`TMan` recognises it for the fused ring cycle.
    """

    ids: np.ndarray
    psi: int

    def __call__(self, nodes: np.ndarray, view: np.ndarray, sample: np.ndarray,
                 alive: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _ring_partner(np.asarray(nodes, np.int64), view, sample, alive,
                             np.asarray(u, np.float64), self.ids, self.psi)


def ring_partner(ids: np.ndarray, psi: int) -> RingPartner:
    """The partner hook choosing uniformly among the ``psi`` view entries nearest in id.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([0, 10, 20, 1000], np.uint64)
    >>> view = np.array([[3, 2, 1], [0, 2, 3], [3, 0, 1], [0, 1, 2]], np.int32)
    >>> part = ring_partner(ids, 1)
    >>> part(np.arange(4), view, np.zeros((4, 1), np.int32), np.ones(4, bool),
    ...      np.full(4, .5)).tolist()
    [1, 0, 1, 2]
    """
    if psi < 1:
        raise ParameterError(f"psi: must be >= 1, got {psi}", key="psi")
    return RingPartner(np.asarray(ids, np.uint64), int(psi))


def rank_select(score: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> Select:
    """A selection keeping the ``R`` best-scored candidates (ties to the lower id).

    ``score(rows, indptr, cand)`` returns one float per candidate (higher is better).

    Examples
    --------
    >>> import numpy as np
    >>> sel = rank_select(lambda rows, indptr, cand: -cand.astype(float))
    >>> view = np.full((3, 2), -1, np.int32)
    >>> sel(np.array([0]), np.array([0, 3]), np.array([2, 1, 2], np.int32), view)
    >>> view[0].tolist()
    [1, 2]
    """

    def select(rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray, view: np.ndarray) -> None:
        _keep_best(rows, indptr, cand, np.asarray(score(rows, indptr, cand), np.float64), view)

    return select


@dataclass(frozen=True, eq=False)
class RingSelect:
    """T-Man's ring as a selection hook: ``ids`` and, when they are distinct, their ``rank``.

    Made by :func:`ring_select`.  Called, it ranks CSR candidate lists (the
    generic path); :class:`TMan` recognises it (with a ``rank``) and runs the
    fused ring cycle instead, whose ring coordinates are the ranks (``uint32``:
    the same order as distinct ids, half the bytes).
    """

    ids: np.ndarray
    rank: np.ndarray | None = None

    def __call__(self, rows: np.ndarray, indptr: np.ndarray, cand: np.ndarray,
                 view: np.ndarray) -> None:
        half = (view.shape[1] + 1) // 2
        _ring_keep(np.asarray(rows, np.int64), indptr, cand, self.ids, half, view)


def ring_select(ids: np.ndarray) -> RingSelect:
    """T-Man's ring on circular ``uint64`` ids: half the view clockwise, half counter-clockwise.

    The ``ceil(R/2)`` nearest successors and predecessors rank first (alternating by
    rank), the remaining slots go to the nearest others.

    Examples
    --------
    >>> import numpy as np
    >>> sel = ring_select(np.array([40, 10, 30, 20], np.uint64))
    >>> sel.rank.tolist(), ring_select(np.zeros(2, np.uint64)).rank is None
    ([3, 0, 2, 1], True)
    """
    ids = np.asarray(ids, np.uint64)
    rank = np.empty(ids.size, np.uint32)
    rank[np.argsort(ids, kind="stable")] = np.arange(ids.size, dtype=np.uint32)
    return RingSelect(ids, rank if np.unique(ids).size == ids.size else None)


def jaccard_select(masks: np.ndarray) -> Select:
    """Rank candidates by the Jaccard index of their bit masks (``uint64`` rows) with the node's."""
    masks = np.ascontiguousarray(masks, np.uint64)
    return rank_select(lambda rows, indptr, cand: _jaccard_scores(rows, indptr, cand, masks))


class TMan:
    """One T-Man overlay: view size, selection, partner rule (see the module docstring).

    Parameters
    ----------
    view_size : int
        ``R``, the view (routing-table) size.
    select : callable
        The neighbour selection hook, ``select(rows, indptr, cand, view)``.
    partner : callable, optional
        The partner hook; default :func:`uniform_partner`.
    include_self : bool
        Whether each side puts its own descriptor in the buffer (T-Man does;
        Vitis's Algorithms 2-3 are silent).
    live_only : bool
        Drop dead nodes from the buffers (a perfect failure detector); by
        default dead entries travel until the caller's ageing removes them.
    parallel : bool
        With the fused ring cycle, run each batch's exchanges on numba's threads
        (``numba.get_num_threads()``; their exchanges touch disjoint views, so the
        views, counters and generator state are the serial ones bit for bit).
        Off by default: it buys wall time only when a core is idle.  With numba's
        OpenMP layer, ``OMP_WAIT_POLICY=PASSIVE`` (set before numba first starts its
        threads) keeps the idle threads from spinning through the serial parts
        (Newscast, the pairing), which would otherwise double their CPU time.
        Other hooks ignore it.

    Attributes
    ----------
    batches_ : int
        Batches of the last cycle.
    exchanges_ : int
        Exchanges of the last cycle.
    """

    def __init__(self, view_size: int, select: Select, *, partner: Partner | None = None,
                 include_self: bool = True, live_only: bool = False,
                 parallel: bool = False) -> None:
        if view_size < 1:
            raise ParameterError(f"view_size: must be >= 1, got {view_size}", key="view_size")
        self.view_size = int(view_size)
        self.select = select
        self.partner = partner if partner is not None else uniform_partner
        self.include_self = bool(include_self)
        self.live_only = bool(live_only)
        self.parallel = bool(parallel)
        self.batches_ = 0
        self.exchanges_ = 0

    def fused_ring(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        """``(ids, ranks, partner ids, psi)`` when :meth:`cycle` runs the fused ring cycle.

        That is a :class:`RingSelect` of distinct ids with ``uniform_partner``
        (``psi`` 0) or a :class:`RingPartner`; ``None`` for any other hook.

        Examples
        --------
        >>> import numpy as np
        >>> ids = np.arange(5, dtype=np.uint64)
        >>> TMan(2, ring_select(ids)).fused_ring()[3]
        0
        >>> TMan(2, ring_select(ids), partner=lambda *a: uniform_partner(*a)).fused_ring()
        """
        sel, part = self.select, self.partner
        if not isinstance(sel, RingSelect) or sel.rank is None:
            return None
        if part is uniform_partner:
            return sel.ids, sel.rank, sel.ids, 0
        if isinstance(part, RingPartner):
            return sel.ids, sel.rank, part.ids, part.psi
        return None

    def empty_view(self, n: int) -> np.ndarray:
        """An ``(n, R)`` int32 view array with every slot empty (``-1``)."""
        return np.full((n, self.view_size), -1, np.int32)

    def cycle(self, view: np.ndarray, sampling, rng: np.random.Generator,
              alive: np.ndarray | None = None, candidates: np.ndarray | None = None) -> None:
        """One T-Man cycle over every live node, updating ``view`` in place.

        ``sampling`` is a :class:`~hedgerow.gossip.PeerSampling` (its ``cache`` is
        the sample, its ``alive`` the online nodes unless ``alive`` is given).
        ``candidates`` (bool mask) limits which nodes may enter a buffer, e.g.
        leaving out nodes whose descriptors are known to be stale; default:
        every node (the online ones with ``live_only``).
        """
        if view.shape[1] != self.view_size or view.dtype != np.int32:
            raise ParameterError(f"view: expected (n, {self.view_size}) int32, got "
                                 f"{view.shape} {view.dtype}", key="view")
        alive = sampling.alive if alive is None else np.asarray(alive, bool)
        if candidates is None:
            allowed = alive if self.live_only else np.ones(len(alive), bool)
        else:
            allowed = np.asarray(candidates, bool)
        sample = sampling.cache
        n = view.shape[0]
        remaining = rng.permutation(np.flatnonzero(alive)).astype(np.int64)
        fused = self.fused_ring()
        if fused is not None:  # the same cycle in one compiled call (gossip._ring_fused)
            ids, rank, pids, psi = fused
            args = (remaining, view, sample, alive, allowed, self.include_self, ids, rank,
                    (self.view_size + 1) // 2, pids, psi, rng)
            if self.parallel:  # (one thread: the same kernel, one share)
                self.batches_, self.exchanges_ = _ring_cycle_par(*args, numba.get_num_threads())
            else:
                self.batches_, self.exchanges_ = _ring_cycle(*args)
            return
        busy = np.zeros(n, np.int64)
        mark = np.zeros(n, np.int64)
        stamp = np.zeros(1, np.int64)
        batch = 0
        exchanges = 0
        while remaining.size:
            batch += 1
            partners = np.asarray(
                self.partner(remaining, view, sample, alive, rng.random(remaining.size)),
                np.int64)
            take, defer = _pick_batch(remaining, partners, alive, busy, batch)
            ps = remaining[take]
            if ps.size:
                rows, indptr, cand = _gather(ps, partners[take], view, sample, allowed,
                                             self.include_self, mark, stamp)
                self.select(rows, indptr, cand, view)
                exchanges += ps.size
            remaining = remaining[defer]
        self.batches_ = batch
        self.exchanges_ = exchanges
