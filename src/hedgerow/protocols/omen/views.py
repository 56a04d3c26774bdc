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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from hedgerow.protocols.omen.backups import _refresh

__all__ = ["Entry", "ViewTable", "view_of"]

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


# ---------------------------------------------------------------------------
# The batched gossip cycle: every exchange of a cycle in one compiled pass.
#
# The per-node loop (``OmenEngine._cycle`` with ``batched_gossip=False``) draws,
# per exchange, one ``rng_gossip.integers(len(view))`` (the peer) and, per
# refreshed entry, one ``rng_backups.random(k_u)`` (``k_u`` depends only on the
# predecessor ``u``).  The compiled pass consumes the same numbers in the same
# order: the peer draws from a block of raw 32-bit words through numpy's own
# bounded-integer rule (Lemire's multiply-shift with rejection), the builders'
# uniforms from a block of doubles; afterwards each generator is put back and
# advanced by exactly what was used.  The result is bit for bit the per-node
# loop's (``tests/protocols/omen/test_views.py``).


@njit(cache=True)
def _bounded(u32, ptr, n):  # pragma: no cover - compiled
    """numpy ``Generator.integers(n)`` (``1 <= n < 2**32``) from raw 32-bit words.

    Returns ``(value, next pointer)``, or ``(-1, ptr)`` when the words run out.
    """
    if n == 1:
        return 0, ptr  # numpy draws nothing for a one-value range
    excl = np.uint64(n)
    low = np.uint64(0xFFFFFFFF)
    if ptr >= u32.shape[0]:
        return -1, ptr
    m = np.uint64(u32[ptr]) * excl
    ptr += 1
    left = m & low
    if left < excl:
        threshold = (low - np.uint64(n - 1)) % excl
        while left < threshold:
            if ptr >= u32.shape[0]:
                return -1, ptr
            m = np.uint64(u32[ptr]) * excl
            ptr += 1
            left = m & low
    return np.int64(m >> np.uint64(32)), ptr


@njit(cache=True)
def _gather_view(v, slot_node, b_off, b_len, b_flat, n_off, n_len, n_flat, out):
    """``getView()`` of ``v`` (sorted, distinct) into ``out``; returns its length."""
    k = 0
    for j in range(slot_node.shape[1]):
        if slot_node[v, j] < 0:
            break
        for x in range(b_off[v, j], b_off[v, j] + b_len[v, j]):
            out[k] = b_flat[x]
            k += 1
    for j in range(slot_node.shape[1]):
        if slot_node[v, j] < 0:
            break
        for x in range(n_off[v, j], n_off[v, j] + n_len[v, j]):
            out[k] = n_flat[x]
            k += 1
    if k == 0:
        return 0
    part = out[:k]
    part.sort()
    w = 1
    for i in range(1, k):
        if out[i] != out[w - 1]:
            out[w] = out[i]
            w += 1
    return w


@njit(cache=True)
def _select(
    v, head, n_head, cache, rnd_view, other, slot_node, b_off, b_len, b_cap, b_flat,
    n_off, n_len, n_flat, ready, dirty, touched, online, adj, deg, lam_of, rlam_of, kdraw,
    indptr, topics, masks, live_subs, load, use_load, builder, pick, dbl, dptr, pos, stamp, pool,
):  # pragma: no cover - compiled
    """selectView (Alg. 4) of ``v`` on ``head ∪ rnd.view(other) ∪ {other}``; returns the
    doubles pointer, or -1 if a set outgrew its slot (cannot happen: see ``pack_views``)."""
    base = 0
    for i in range(n_head):
        pool[base] = head[i]
        base += 1
    for j in range(rnd_view):
        x = cache[other, j]
        if x >= 0:
            pool[base] = x
            base += 1
    pool[base] = other
    base += 1
    empty = np.empty(0, np.int64)
    for j in range(slot_node.shape[1]):
        u = slot_node[v, j]
        if u < 0:
            break
        if not online[u]:
            continue  # a departed predecessor's entry is frozen until its event is done
        # N(u) = the current links of u
        for x in range(deg[u]):
            n_flat[n_off[v, j] + x] = adj[u, x]
        n_len[v, j] = deg[u]
        # the pool: the candidates, then the entry's own backups; the set is priced
        # without its own membership
        k = base
        for x in range(b_off[v, j], b_off[v, j] + b_len[v, j]):
            pool[k] = b_flat[x]
            load[b_flat[x]] -= 1
            k += 1
        kd = kdraw[u]
        draws = dbl[dptr : dptr + kd]
        dptr += kd
        B, r = _refresh(
            u, pool[:k], online, indptr, topics, masks, lam_of[u], builder, pick, draws, pos,
            stamp,
            live_subs, load if use_load else empty, False, rlam_of[u],
        )
        if B.shape[0] > b_cap[v, j]:
            return -1
        for i in range(B.shape[0]):
            b_flat[b_off[v, j] + i] = B[i]
            load[B[i]] += 1
        b_len[v, j] = B.shape[0]
        ready[v, j] = r
        dirty[v, j] = False
        touched[v, j] = True
    return dptr


@njit(cache=True)
def _exchanges(
    order, start, on, online, adj, deg, slot_node, b_off, b_len, b_cap, b_flat, n_off, n_len,
    n_flat, ready, dirty, touched, lam_of, rlam_of, kdraw, need, max_need, indptr, topics, masks,
    live_subs, load, use_load, builder, pick, cache, rnd_view, u32, uptr, dbl, dptr, pos,
    stamp, view_v, view_p, head, pool,
):  # pragma: no cover - compiled
    """Exchanges ``order[start:]`` of one cycle (Alg. 3), in order, until the drawn numbers
    may not suffice for the next one.

    Returns ``(next exchange, words used, doubles used, exchanges run, status)``;
    ``status`` is 0, or -1 if a backup set outgrew its slot.
    """
    ex = 0
    i = start
    while i < order.shape[0]:
        v = order[i]
        if dbl.shape[0] - dptr < need[v] + max_need:
            break
        nv = _gather_view(v, slot_node, b_off, b_len, b_flat, n_off, n_len, n_flat, view_v)
        w = 0
        for t in range(nv):
            x = view_v[t]
            if online[x] and x != v:
                view_v[w] = x
                w += 1
        nv = w
        if nv:
            r, uptr2 = _bounded(u32, uptr, nv)
            p = view_v[r] if r >= 0 else -1
        else:
            r, uptr2 = _bounded(u32, uptr, on.shape[0])
            p = on[r] if r >= 0 else -1
        if r < 0:
            break  # out of words: resume this exchange with a fresh block
        uptr = uptr2
        i += 1
        if p == v:
            continue
        ex += 1
        np_ = _gather_view(p, slot_node, b_off, b_len, b_flat, n_off, n_len, n_flat, view_p)
        # v: getView() ∪ buffer(p), buffer(p) = getView(p) ∪ rnd.view(p) ∪ {p}
        for t in range(nv):
            head[t] = view_v[t]
        for t in range(np_):
            head[nv + t] = view_p[t]
        dptr = _select(
            v, head, nv + np_, cache, rnd_view, p, slot_node, b_off, b_len, b_cap, b_flat,
            n_off, n_len, n_flat, ready, dirty, touched, online, adj, deg, lam_of, rlam_of,
            kdraw, indptr, topics, masks, live_subs, load, use_load, builder, pick, dbl, dptr, pos,
            stamp, pool,
        )
        if dptr < 0:
            return i, uptr, 0, ex, -1
        # p: getView(p) ∪ buffer(v), with v's view as it was before v's selection
        for t in range(np_):
            head[t] = view_p[t]
        for t in range(nv):
            head[np_ + t] = view_v[t]
        dptr = _select(
            p, head, np_ + nv, cache, rnd_view, v, slot_node, b_off, b_len, b_cap, b_flat,
            n_off, n_len, n_flat, ready, dirty, touched, online, adj, deg, lam_of, rlam_of,
            kdraw, indptr, topics, masks, live_subs, load, use_load, builder, pick, dbl, dptr, pos,
            stamp, pool,
        )
        if dptr < 0:
            return i, uptr, 0, ex, -1
    return i, uptr, dptr, ex, 0


#: doubles drawn per block for the builders (32 MiB); a block always holds one exchange
_DBL_BLOCK = 1 << 22


class ViewTable:
    """Every node's local view as arrays, for the batched gossip cycle.

    ``pack`` reads the entries (:class:`Entry` dicts, slot order = insertion
    order), :meth:`run` runs exchanges in compiled code, :meth:`unpack` writes
    the refreshed entries back.  A slot's backup capacity is
    ``lam(u) * |T_u|``: each member a builder adds raises the count of a topic
    still below its target ``min(lam, available) <= lam``.

    Parameters
    ----------
    entries : list of dict
        ``entries[v][u]``: node ``v``'s entry for predecessor ``u``.
    online, adj, deg : numpy.ndarray
        Online mask and adjacency rows (links of ``u`` = ``adj[u, :deg[u]]``).
    sub_indptr : numpy.ndarray
        Node -> topics CSR offsets.
    lam_of, rlam_of : numpy.ndarray
        Per predecessor: the builder's λ and the ready flag's λ (reading R-6).

    Examples
    --------
    >>> import numpy as np
    >>> ent = [{1: Entry(np.array([2]), np.array([0]))}, {}, {}]
    >>> t = ViewTable(ent, np.ones(3, bool), np.full((3, 2), -1), np.zeros(3, np.int64),
    ...               np.array([0, 1, 2, 3]), np.ones(3, np.int64), np.ones(3, np.int64))
    >>> t.slot_node.tolist(), t.b_cap.tolist()
    ([[1], [-1], [-1]], [[1], [0], [0]])
    """

    def __init__(
        self,
        entries: list[dict[int, Entry]],
        online: np.ndarray,
        adj: np.ndarray,
        deg: np.ndarray,
        sub_indptr: np.ndarray,
        lam_of: np.ndarray,
        rlam_of: np.ndarray,
    ) -> None:
        n = len(entries)
        width = max(1, max((len(e) for e in entries), default=1))
        self.slot_node = np.full((n, width), -1, dtype=np.int64)
        rows: list[tuple[int, int, int, Entry]] = []
        for v in range(n):
            ent = entries[v]
            if ent:
                for j, (u, e) in enumerate(ent.items()):
                    rows.append((v, j, u, e))
        m = len(rows)
        vs = np.fromiter((r[0] for r in rows), np.int64, m)
        js = np.fromiter((r[1] for r in rows), np.int64, m)
        us = np.fromiter((r[2] for r in rows), np.int64, m)
        blen = np.fromiter((len(r[3].backups) for r in rows), np.int64, m)
        nlen = np.fromiter((len(r[3].neighbours) for r in rows), np.int64, m)
        ntop = np.diff(sub_indptr)
        live = online[us]
        bcap = np.maximum(blen, np.where(live, np.maximum(lam_of[us], 0) * ntop[us], 0))
        ncap = np.maximum(nlen, np.where(live, deg[us], 0))
        self.slot_node[vs, js] = us
        shape = self.slot_node.shape
        self.b_len = np.zeros(shape, np.int64)
        self.b_cap = np.zeros(shape, np.int64)
        self.b_off = np.zeros(shape, np.int64)
        self.n_len = np.zeros(shape, np.int64)
        self.n_off = np.zeros(shape, np.int64)
        self.ready = np.zeros(shape, np.bool_)
        self.dirty = np.zeros(shape, np.bool_)
        self.touched = np.zeros(shape, np.bool_)
        boff = np.concatenate(([0], np.cumsum(bcap)))
        noff = np.concatenate(([0], np.cumsum(ncap)))
        self.b_flat = np.zeros(int(boff[-1]), np.int64)
        self.n_flat = np.zeros(int(noff[-1]), np.int64)
        self.b_len[vs, js], self.b_cap[vs, js], self.b_off[vs, js] = blen, bcap, boff[:-1]
        self.n_len[vs, js], self.n_off[vs, js] = nlen, noff[:-1]
        for i, (_, _, _, e) in enumerate(rows):
            if blen[i]:
                self.b_flat[boff[i] : boff[i] + blen[i]] = e.backups
            if nlen[i]:
                self.n_flat[noff[i] : noff[i] + nlen[i]] = e.neighbours
        self.ready[vs, js] = [r[3].ready for r in rows]
        self.dirty[vs, js] = [r[3].dirty for r in rows]
        self._rows = rows
        self._vs, self._js = vs, js
        self.lam_of = np.ascontiguousarray(lam_of, dtype=np.int64)
        self.rlam_of = np.ascontiguousarray(rlam_of, dtype=np.int64)
        self.kdraw = 2 * np.maximum(self.lam_of, 1) * ntop + 4
        # per node: the builders' doubles one selectView of its entries uses at most
        self.need = np.zeros(n, np.int64)
        np.add.at(self.need, vs[live], self.kdraw[us[live]])
        self.max_need = int(self.need.max()) if n else 0
        per_node = np.zeros(n, np.int64)
        np.add.at(per_node, vs, bcap + ncap)
        self._view_cap = int(per_node.max()) if n else 0
        self._b_max = int(bcap.max()) if m else 0

    def run(
        self,
        order: np.ndarray,
        on: np.ndarray,
        engine_arrays: tuple,
        rng_gossip: np.random.Generator,
        rng_backups: np.random.Generator,
    ) -> int:
        """Exchanges of ``order`` (one cycle), drawing from the two generators exactly
        as the per-node loop does; returns how many exchanges ran (``p != v``).

        ``engine_arrays`` = ``(online, adj, deg, indptr, topics, masks, live_subs, load,
        use_load, builder, pick, cache, rnd_view)``; ``load`` is updated in place;
        ``masks`` are the topic bit masks of the same lists (or no rows).
        """
        (online, adj, deg, indptr, topics, masks, live_subs, load, use_load, builder, pick, cache,
         rnd_view) = engine_arrays
        order = np.ascontiguousarray(order, dtype=np.int64)
        on = np.ascontiguousarray(on, dtype=np.int64)
        vcap = self._view_cap
        view_v = np.empty(vcap, np.int64)
        view_p = np.empty(vcap, np.int64)
        head = np.empty(2 * vcap, np.int64)
        pool = np.empty(2 * vcap + rnd_view + 1 + self._b_max, np.int64)
        pos = np.full(len(live_subs), -1, np.int64)
        stamp = np.zeros(len(online) + 1, np.int64)
        total = 0
        i = 0
        while i < len(order):
            st_g = rng_gossip.bit_generator.state
            st_b = rng_backups.bit_generator.state
            rest = len(order) - i
            u32 = rng_gossip.integers(0, 1 << 32, size=rest + 16, dtype=np.uint32)
            # about two selections' worth per exchange (v's and its peer's); a block that
            # runs short ends the pass early and the next block continues
            want = 2 * int(self.need[order[i:]].sum()) + self.max_need
            dbl = rng_backups.random(max(min(want, _DBL_BLOCK),
                                         int(self.need[order[i]]) + self.max_need))
            i, used_u, used_d, ex, status = _exchanges(
                order, i, on, online, adj, deg, self.slot_node, self.b_off, self.b_len,
                self.b_cap, self.b_flat, self.n_off, self.n_len, self.n_flat, self.ready,
                self.dirty, self.touched, self.lam_of, self.rlam_of, self.kdraw, self.need,
                self.max_need, indptr, topics, masks, live_subs, load, use_load, builder, pick,
                cache, rnd_view, u32, 0, dbl, 0, pos, stamp, view_v, view_p, head, pool,
            )
            if status:
                raise RuntimeError("a backup set outgrew its lam * |T| bound")
            total += ex
            rng_gossip.bit_generator.state = st_g
            if used_u:
                rng_gossip.integers(0, 1 << 32, size=used_u, dtype=np.uint32)
            _skip_doubles(rng_backups, st_b, used_d)
        return total

    def unpack(self) -> None:
        """Write every slot a selection refreshed back into its :class:`Entry`."""
        for i in np.flatnonzero(self.touched[self._vs, self._js]).tolist():
            v, j, _, e = self._rows[i]
            bo, bl = self.b_off[v, j], self.b_len[v, j]
            no, nl = self.n_off[v, j], self.n_len[v, j]
            e.backups = self.b_flat[bo : bo + bl].copy()
            e.neighbours = self.n_flat[no : no + nl].copy()
            e.ready = bool(self.ready[v, j])
            e.dirty = bool(self.dirty[v, j])
        self.touched[:] = False


def _skip_doubles(rng: np.random.Generator, state: Mapping[str, Any], k: int) -> None:
    """Put ``rng`` back to ``state`` and on by ``k`` doubles, as ``rng.random(k)`` would.

    A double takes one 64-bit output; with no half-used 32-bit output buffered
    (``has_uint32 == 0``, always so for a stream that draws only doubles),
    ``advance(k)`` is exact and free; otherwise the doubles are drawn again.
    """
    rng.bit_generator.state = state
    if not k:
        return
    if state.get("has_uint32", 1) == 0 and hasattr(rng.bit_generator, "advance"):
        rng.bit_generator.advance(k)
    else:
        rng.random(k)
