"""Peer sampling: Newscast, Cyclon and an ideal uniform sampler, one cycle per call.

Every node keeps a cache of ``c`` node ids (``cache``, ``(n, c)`` int32, ``-1`` =
empty slot) with one integer per entry (``stamp``: the cycle a Newscast
descriptor was created, or a Cyclon entry's age).  A cycle is one numba call
over all nodes; the cycle's randomness (the order of the active nodes, one
uniform per choice) is drawn beforehand from the generator handed in, so the
same seed gives the same run everywhere.

``"newscast"``
    Jelasity et al., "The peer sampling service: experimental evaluation of
    unstructured gossip-based implementations" (Middleware 2004), as PeerSim's
    ``SimpleNewscast``: each live node, in a random order, picks a random live
    entry of its cache; both caches are merged with a fresh descriptor of each
    side and each keeps the ``c`` freshest entries (other than itself).
    Exchanges run one after the other, so each sees the previous ones (PeerSim's
    cycle semantics).  Dead entries are skipped as partners and age out: they
    are never refreshed.
``"cyclon"``
    Voulgaris, Gavidia and van Steen, "CYCLON: inexpensive membership
    management for unstructured P2P overlays" (J. Netw. Syst. Manage. 2005):
    each live node ages its entries, picks the oldest one ``q`` (removing it),
    sends ``l - 1`` other random entries plus a fresh descriptor of itself; ``q``
    answers with ``l`` random entries of its own; each side fills empty slots
    first and then the slots of the entries it sent.  A dead oldest entry is
    dropped (the exchange times out).
``"uniform"``
    the "ideal" sampler of experiments: every cycle, each live node's cache is
    redrawn as ``c`` distinct live nodes other than itself, uniformly.

Examples
--------
>>> import numpy as np
>>> from hedgerow.gossip import PeerSampling
>>> ps = PeerSampling(200, 10, kind="newscast")
>>> rng = np.random.default_rng(1)
>>> ps.bootstrap(np.ones(200, bool), rng)
>>> for _ in range(5):
...     ps.cycle(rng)
>>> bool((ps.cache >= 0).all()) and bool((ps.cache != np.arange(200)[:, None]).all())
True
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.gossip._prefetch import prefetch_row

__all__ = ["SAMPLERS", "PeerSampling"]

#: the peer-sampling services of this module
SAMPLERS = ("newscast", "cyclon", "uniform")


@numba.njit(cache=True)
def _newscast_cycle(cache, stamp, alive, order, u, now):  # pragma: no cover - compiled
    """One Newscast cycle.

    Each exchange keeps "the ``c`` freshest of the union, ties to the first
    seen": the union (both fresh descriptors, ``p``'s cache, then ``q``'s new
    entries; an id seen twice keeps its freshest stamp) stably ordered by
    freshness.  The union is deduplicated through per-node marks.  Caches come
    out newest first, so the union is normally two runs that are already in
    order (``p``'s side, then ``q``'s new entries) and the order is a merge of
    the two, cut once both caches are full; when a duplicate's fresher stamp
    (or a cache written out of order by a caller) breaks a run, the union is
    stably sorted by insertion instead.  Both give the same order.  When every
    node is online, a partner's draw counts the filled slots without reading
    ``alive`` for each entry.
    """
    c = cache.shape[1]
    m = 2 * c + 2
    ids = np.empty(m + 1, np.int32)
    ts = np.empty(m + 1, np.int64)  # one spare slot: the merge reads one past a run
    low = np.int64(-9223372036854775807 - 1)
    m_ids = np.empty(c + 1, np.int32)  # the merge's first c + 1
    m_ts = np.empty(c + 1, np.int64)
    seen = np.full(cache.shape[0], -1, np.int32)  # the exchange that last saw a node
    pos = np.zeros(cache.shape[0], np.int32)  # its place in that exchange's union
    n_order = order.shape[0]
    every = np.all(alive)
    for i in range(n_order):
        # ask early for the rows of later exchanges: p's a few ahead, and the partner that
        # p's row (asked for earlier) names if all its slots are live (a guess; a hint only)
        f = i + 8
        if f < n_order:
            prefetch_row(cache, order[f])
            prefetch_row(stamp, order[f])
        f = i + 4
        if f < n_order:
            g = cache[order[f], min(int(u[f] * c), c - 1)]
            if g >= 0:
                prefetch_row(cache, g)
                prefetch_row(stamp, g)
        p = order[i]
        if not alive[p]:
            continue
        # a random live entry of p's cache
        n_live = 0
        if every:  # every node online: count the filled slots, no reads of alive
            for j in range(c):
                n_live += cache[p, j] >= 0
        else:
            for j in range(c):
                x = cache[p, j]
                if x >= 0 and alive[x]:
                    n_live += 1
        if n_live == 0:
            continue
        pick = int(u[i] * n_live)
        if pick >= n_live:
            pick = n_live - 1
        q = -1
        if n_live == c:  # every slot live (the usual case): the pick-th slot itself
            q = cache[p, pick]
        else:
            for j in range(c):
                x = cache[p, j]
                if x >= 0 and alive[x]:
                    if pick == 0:
                        q = x
                        break
                    pick -= 1
        # union of both caches and both fresh descriptors, freshest stamp per id
        ids[0] = p
        ts[0] = now
        seen[p] = i
        pos[p] = 0
        ids[1] = q
        ts[1] = now
        seen[q] = i
        pos[q] = 1
        k = 2
        runs = True  # both runs newest first, no stamp raised
        k_p = 2
        for side in range(2):
            r = p if side == 0 else q
            last = now
            for j in range(c):
                x = cache[r, j]
                if x < 0:
                    continue
                sj = stamp[r, j]
                if seen[x] == i:
                    t = pos[x]
                    if sj > ts[t]:
                        ts[t] = sj
                        runs = False
                else:
                    seen[x] = i
                    pos[x] = k
                    ids[k] = x
                    ts[k] = sj
                    k += 1
                    if sj > last:
                        runs = False
                    last = sj
            if side == 0:
                k_p = k
        if runs and q != p:
            # merge the two runs (ties to p's side, the first seen); p and q, both stamped
            # now and first in p's run, come out first, so p keeps merged[1:c+1] and q
            # keeps merged[0] and merged[2:c+1]
            top = min(k, c + 1)
            a = 0
            b = k_p
            for h in range(top):
                ta = ts[a] if a < k_p else low  # an exhausted run reads as older than any
                tb = ts[b] if b < k else low
                take_a = ta >= tb  # a select, not a branch: the runs interleave at random
                t = a if take_a else b
                a += take_a
                b += not take_a
                m_ids[h] = ids[t]
                m_ts[h] = ts[t]
            for j in range(c):
                h = j + 1
                if h < top:
                    cache[p, j] = m_ids[h]
                    stamp[p, j] = m_ts[h]
                else:
                    cache[p, j] = -1
                    stamp[p, j] = 0
                h = j + 1 if j > 0 else 0
                if h < top:
                    cache[q, j] = m_ids[h]
                    stamp[q, j] = m_ts[h]
                else:
                    cache[q, j] = -1
                    stamp[q, j] = 0
            continue
        # stable sort by freshness (newest first; ties keep the union's order)
        for h in range(1, k):
            xi = ids[h]
            xt = ts[h]
            g = h - 1
            while g >= 0 and ts[g] < xt:
                ids[g + 1] = ids[g]
                ts[g + 1] = ts[g]
                g -= 1
            ids[g + 1] = xi
            ts[g + 1] = xt
        # each side keeps the c freshest entries other than itself
        for side in range(2):
            r = p if side == 0 else q
            j = 0
            for t in range(k):
                if j == c:
                    break
                if ids[t] == r:
                    continue
                cache[r, j] = ids[t]
                stamp[r, j] = ts[t]
                j += 1
            while j < c:
                cache[r, j] = -1
                stamp[r, j] = 0
                j += 1


@numba.njit(cache=True)
def _cyclon_cycle(cache, stamp, alive, order, u, shuffle):  # pragma: no cover - compiled
    c = cache.shape[1]
    sent = np.empty(shuffle, np.int32)
    got = np.empty(shuffle, np.int32)
    got_age = np.empty(shuffle, np.int64)
    back = np.empty(shuffle, np.int32)
    back_age = np.empty(shuffle, np.int64)
    slots = np.empty(c, np.int64)
    for i in range(order.shape[0]):
        p = order[i]
        if not alive[p]:
            continue
        for j in range(c):
            if cache[p, j] >= 0:
                stamp[p, j] += 1
        # the oldest entry
        oldest = -1
        for j in range(c):
            if cache[p, j] >= 0 and (oldest < 0 or stamp[p, j] > stamp[p, oldest]):
                oldest = j
        if oldest < 0:
            continue
        q = cache[p, oldest]
        cache[p, oldest] = -1
        stamp[p, oldest] = 0
        if not alive[q]:
            continue  # the exchange times out; the dead entry is gone
        # p sends l - 1 random other entries and itself (age 0)
        ns = 0
        for j in range(c):
            if cache[p, j] >= 0:
                slots[ns] = j
                ns += 1
        n_send = min(shuffle - 1, ns)
        for t in range(n_send):  # partial Fisher-Yates with the pre-drawn uniforms
            r = t + int(u[i, t] * (ns - t))
            if r >= ns:
                r = ns - 1
            tmp = slots[t]
            slots[t] = slots[r]
            slots[r] = tmp
        n_got = 0
        got[n_got] = p
        got_age[n_got] = 0
        n_got += 1
        for t in range(n_send):
            got[n_got] = cache[p, slots[t]]
            got_age[n_got] = stamp[p, slots[t]]
            sent[t] = slots[t]
            n_got += 1
        # q answers with l random entries of its own
        nq = 0
        for j in range(c):
            if cache[q, j] >= 0:
                slots[nq] = j
                nq += 1
        n_back = min(shuffle, nq)
        for t in range(n_back):
            r = t + int(u[i, shuffle + t] * (nq - t))
            if r >= nq:
                r = nq - 1
            tmp = slots[t]
            slots[t] = slots[r]
            slots[r] = tmp
        q_sent = np.empty(n_back, np.int64)
        for t in range(n_back):
            back[t] = cache[q, slots[t]]
            back_age[t] = stamp[q, slots[t]]
            q_sent[t] = slots[t]
        # q merges what p sent: empty slots first, then the slots it sent
        _cyclon_merge(cache, stamp, q, got, got_age, n_got, q_sent, n_back)
        # p merges the answer
        p_sent = np.empty(n_send + 1, np.int64)
        p_sent[0] = oldest  # the freed slot of q
        for t in range(n_send):
            p_sent[t + 1] = sent[t]
        _cyclon_merge(cache, stamp, p, back, back_age, n_back, p_sent, n_send + 1)


@numba.njit(cache=True)
def _cyclon_merge(cache, stamp, r, ids, ages, k, sent_slots, n_sent):  # pragma: no cover
    c = cache.shape[1]
    used = 0
    for t in range(k):
        x = ids[t]
        if x == r or x < 0:
            continue
        dup = False
        for j in range(c):
            if cache[r, j] == x:
                dup = True
                break
        if dup:
            continue
        slot = -1
        for j in range(c):
            if cache[r, j] < 0:
                slot = j
                break
        if slot < 0:
            while used < n_sent:
                s = sent_slots[used]
                used += 1
                slot = s
                break
        if slot < 0:
            break
        cache[r, slot] = x
        stamp[r, slot] = ages[t]


@numba.njit(cache=True)
def _uniform_fill(cache, live, alive, u):  # pragma: no cover - compiled
    n, c = cache.shape
    m = live.shape[0]
    for p in range(n):
        for j in range(c):
            cache[p, j] = -1
        if not alive[p]:
            continue
        want = min(c, m - 1)
        k = 0
        t = 0
        while k < want:
            x = live[int(u[p, t % u.shape[1]] * m) % m]
            t += 1
            if t > u.shape[1]:  # uniforms exhausted: walk on deterministically
                x = live[(t * 7919 + p) % m]
            if x == p:
                continue
            dup = False
            for j in range(k):
                if cache[p, j] == x:
                    dup = True
                    break
            if dup:
                continue
            cache[p, k] = x
            k += 1


class PeerSampling:
    """The peer-sampling state of ``n`` nodes and its cycle (see the module docstring).

    Parameters
    ----------
    n : int
        Number of node slots (online or not).
    c : int
        Cache size (PeerSim's ``newscastcache``; 20 in the usual settings).
    kind : str
        ``"newscast"``, ``"cyclon"`` or ``"uniform"``.
    shuffle : int
        Cyclon's shuffle length ``l`` (``1 ≤ l ≤ c``).

    Attributes
    ----------
    cache : numpy.ndarray
        ``(n, c)`` int32 node ids, ``-1`` = empty; what ``getSampleNodes()`` returns.
    stamp : numpy.ndarray
        ``(n, c)`` int64: creation cycle (Newscast) or age (Cyclon).
    alive : numpy.ndarray
        ``(n,)`` bool, which nodes are online (the caller's; set by :meth:`bootstrap`).
    now : int
        Cycles run so far.
    """

    def __init__(self, n: int, c: int, kind: str = "newscast", shuffle: int = 5) -> None:
        if kind not in SAMPLERS:
            raise ParameterError(f"sampler: {kind!r} is not one of {', '.join(SAMPLERS)}",
                                 key="sampler")
        if c < 1:
            raise ParameterError(f"cache: must be >= 1, got {c}", key="cache")
        if kind == "cyclon" and not 1 <= shuffle <= c:
            raise ParameterError(f"shuffle: must be in [1, cache={c}], got {shuffle}",
                                 key="shuffle")
        self.n, self.c, self.kind, self.shuffle = int(n), int(c), kind, int(shuffle)
        self.cache = np.full((n, c), -1, np.int32)
        self.stamp = np.zeros((n, c), np.int64)
        self.alive = np.zeros(n, bool)
        self.now = 0

    def bootstrap(self, alive: np.ndarray, rng: np.random.Generator) -> None:
        """Fill every online node's cache with ``c`` random online nodes (a bootstrap)."""
        self.alive = np.asarray(alive, bool)
        self.fill(np.flatnonzero(self.alive), rng, self.c)

    def fill(self, nodes: np.ndarray, rng: np.random.Generator, k: int) -> None:
        """Reset the caches of ``nodes`` to ``k`` online nodes (a join's bootstrap)."""
        nodes = np.asarray(nodes, np.int64)
        live = np.flatnonzero(self.alive).astype(np.int64)
        tmp = np.full((self.n, self.c), -1, np.int32)
        sub_alive = np.zeros(self.n, bool)
        sub_alive[nodes] = True
        _uniform_fill(tmp, live, sub_alive, rng.random((self.n, 4 * self.c)))
        tmp[:, min(k, self.c):] = -1
        self.cache[nodes] = tmp[nodes]
        self.stamp[nodes] = self.now if self.kind == "newscast" else 0

    def cycle(self, rng: np.random.Generator) -> None:
        """Run one cycle of the service for every online node."""
        self.now += 1
        if self.kind == "uniform":
            live = np.flatnonzero(self.alive).astype(np.int64)
            _uniform_fill(self.cache, live, self.alive, rng.random((self.n, 4 * self.c)))
            return
        order = rng.permutation(np.flatnonzero(self.alive)).astype(np.int64)
        if self.kind == "newscast":
            _newscast_cycle(self.cache, self.stamp, self.alive, order, rng.random(order.size),
                            self.now)
        else:
            _cyclon_cycle(self.cache, self.stamp, self.alive, order,
                          rng.random((order.size, 2 * self.shuffle)), self.shuffle)
