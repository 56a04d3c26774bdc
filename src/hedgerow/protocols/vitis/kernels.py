"""Vitis's numba kernels: eq. (1), Algorithm 4's selection, Algorithm 5's round, relay paths.

Rahimian et al., "Vitis" (IPDPS 2011).  Everything works on the instance's
subscription CSR (``sub_indptr``, ``sub_topics``, topics sorted per node) and
on per-subscription-entry arrays aligned with it (one gateway proposal per
``(node, topic)`` entry).  See :mod:`hedgerow.protocols.vitis.protocol` for the
readings chosen.
"""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.protocols.vitis.ring import (
    KIND_EMPTY,
    KIND_FRIEND,
    greedy_next,
    ring_distance,
    ring_sw_slots,
)

__all__ = [
    "gateway_round",
    "relay_paths",
    "utility",
    "vitis_select",
]


@numba.njit(cache=True, inline="always")
def _mix(x):  # pragma: no cover - compiled
    """splitmix64 finaliser: a seeded, per-candidate tie-break key."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def _utility_pair(i, j, sub_indptr, sub_topics, rates, wsum):  # pragma: no cover
    a, b = sub_indptr[i], sub_indptr[i + 1]
    c, e = sub_indptr[j], sub_indptr[j + 1]
    inter = 0.0
    while a < b and c < e:
        ta = sub_topics[a]
        tc = sub_topics[c]
        if ta == tc:
            inter += rates[ta]
            a += 1
            c += 1
        elif ta < tc:
            a += 1
        else:
            c += 1
    union = wsum[i] + wsum[j] - inter
    return inter / union if union > 0 else 0.0


def utility(sub_indptr: np.ndarray, sub_topics: np.ndarray, rates: np.ndarray,
            i: int, j: int) -> float:
    """Eq. (1): ``Σ_{t ∈ subs(i) ∩ subs(j)} rate(t) / Σ_{t ∈ subs(i) ∪ subs(j)} rate(t)``.

    Examples
    --------
    §III-A2's worked example: p = {A, B, C}, q = {C, D}, r = {C, D, E, F, G, H}.

    >>> import numpy as np
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0, 1, 2], [2, 3], [2, 3, 4, 5, 6, 7]], n_topics=8)
    >>> u = lambda i, j: utility(inst.sub_indptr, inst.sub_topics, np.ones(8), i, j)
    >>> u(0, 1), u(0, 2), round(u(1, 2), 3)
    (0.25, 0.125, 0.333)
    """
    rates = np.asarray(rates, np.float64)
    wsum = np.add.reduceat(np.append(rates[sub_topics], 0.0), sub_indptr[:-1]) * (
        np.diff(sub_indptr) > 0)
    return float(_utility_pair(int(i), int(j), sub_indptr, np.asarray(sub_topics, np.int32),
                               rates, wsum))


@numba.njit(cache=True)
def _vitis_select(rows, indptr, cand, view, kind, ids, targets, sub_indptr, sub_topics,
                  rates, wsum, salt, dense, dense_u8, uniform):  # pragma: no cover
    R = view.shape[1]
    n_ring_sw = 2 + targets.shape[1]
    max_m = 0
    for i in range(rows.shape[0]):
        max_m = max(max_m, indptr[i + 1] - indptr[i])
    used_buf = np.zeros(max_m, np.bool_)  # per-row scratch, allocated once per call
    util = np.empty(max_m)
    key = np.empty(max_m, np.uint64)
    top = np.empty(max(R - n_ring_sw, 1), np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        a = indptr[i]
        b = indptr[i + 1]
        m = b - a
        used = used_buf[:m]
        used[:] = False
        for j in range(R):
            view[r, j] = -1
            kind[r, j] = KIND_EMPTY
        # Algorithm 4 lines 2-10: successor, predecessor, small-world slot(s)
        ring_sw_slots(r, cand, a, b, ids, targets[r], used, view[r, :n_ring_sw],
                      kind[r, :n_ring_sw])
        n_friends = R - n_ring_sw
        if n_friends <= 0:
            continue
        # lines 11-15: eq. (1) for every remaining candidate (p's rates scattered once)
        for t in range(sub_indptr[r], sub_indptr[r + 1]):
            dense[sub_topics[t]] = rates[sub_topics[t]]
            dense_u8[sub_topics[t]] = 1
        for t in range(m):
            util[t] = -1.0
            if used[t]:
                continue
            x = cand[a + t]
            if uniform:  # eq. (1) with equal rates: |∩| / |∪|, integer counts
                cnt = 0
                for s in range(sub_indptr[x], sub_indptr[x + 1]):
                    cnt += dense_u8[sub_topics[s]]
                inter = float(cnt)
            else:
                inter = 0.0
                for s in range(sub_indptr[x], sub_indptr[x + 1]):
                    inter += dense[sub_topics[s]]
            union = wsum[r] + wsum[x] - inter
            util[t] = inter / union if union > 0 else 0.0
            key[t] = _mix(salt ^ _mix(np.uint64(r) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(x)))
        for t in range(sub_indptr[r], sub_indptr[r + 1]):
            dense[sub_topics[t]] = 0.0
            dense_u8[sub_topics[t]] = 0
        # the top R - k by utility, ties by the seeded key (then the candidate order):
        # one pass, kept by insertion into a short list sorted best first
        n_top = 0
        for t in range(m):
            if used[t] or util[t] < 0:
                continue
            ut = util[t]
            kt = key[t]
            if n_top == n_friends:
                e = top[n_top - 1]
                if not (util[e] < ut or (util[e] == ut and key[e] > kt)):
                    continue
            else:
                n_top += 1
            h = n_top - 1
            while h > 0:
                e = top[h - 1]
                if util[e] < ut or (util[e] == ut and key[e] > kt):
                    top[h] = e
                    h -= 1
                else:
                    break
            top[h] = t
        for h in range(n_top):
            view[r, n_ring_sw + h] = cand[a + top[h]]
            kind[r, n_ring_sw + h] = KIND_FRIEND


def vitis_select(ids: np.ndarray, targets: np.ndarray, kind: np.ndarray, sub_indptr: np.ndarray,
                 sub_topics: np.ndarray, rates: np.ndarray, rng: np.random.Generator):
    """Algorithm 4 as a :class:`hedgerow.gossip.TMan` selection hook.

    Slots ``0, 1``: successor, predecessor; ``2 .. k-1``: one small-world
    neighbour per row of ``targets`` (``(n, k - 2)``); the rest: friends, the
    candidates of highest utility (eq. 1), ties broken by a random key per
    pair of nodes drawn from ``rng`` once: a node ranks equal candidates the same
    way in every cycle, so ties do not make its table flap.  ``kind``
    (``(n, RT)`` int8) receives the slot kinds.
    """
    ids = np.asarray(ids, np.uint64)
    targets = np.ascontiguousarray(targets, np.uint64)
    sub_indptr = np.asarray(sub_indptr, np.int64)
    sub_topics = np.asarray(sub_topics, np.int32)
    rates = np.ascontiguousarray(rates, np.float64)
    wsum = np.add.reduceat(np.append(rates[sub_topics], 0.0), sub_indptr[:-1]) * (
        np.diff(sub_indptr) > 0)
    dense = np.zeros(rates.size, np.float64)
    dense_u8 = np.zeros(rates.size, np.uint8)
    uniform = bool(rates.size == 0 or (rates == rates[0]).all())
    if uniform:
        wsum = np.diff(sub_indptr).astype(np.float64)  # |subs|: the rate cancels out

    salt = np.uint64(rng.integers(0, 2**63))

    def select(rows, indptr, cand, view):
        _vitis_select(rows, indptr, cand, view, kind, ids, targets, sub_indptr, sub_topics,
                      rates, wsum, salt, dense, dense_u8, uniform)

    return select


@numba.njit(cache=True, inline="always")
def _closer(g1, g2, key, ids):  # pragma: no cover - compiled
    """Whether gateway ``g1`` is closer to ``key`` than ``g2`` (ties to the lower id)."""
    d1 = ring_distance(ids[g1], key)
    d2 = ring_distance(ids[g2], key)
    return d1 < d2 or (d1 == d2 and ids[g1] < ids[g2])


@numba.njit(cache=True)
def _gateway_round(indptr, nbrs, alive, sub_indptr, sub_topics, tids, ids, gw, par, hop,
                   max_hops, split_horizon, out_gw, out_par, out_hop, nmark,
                   tpos):  # pragma: no cover - compiled
    n = alive.shape[0]
    for p in range(n):
        a, b = sub_indptr[p], sub_indptr[p + 1]
        for i in range(a, b):  # line 3: start from scratch every round
            out_gw[i] = p
            out_par[i] = p
            out_hop[i] = 0
        if not alive[p]:
            continue
        for e in range(indptr[p], indptr[p + 1]):
            nmark[nbrs[e]] = p + 1
        for i in range(a, b):
            tpos[sub_topics[i]] = i
        for e in range(indptr[p], indptr[p + 1]):  # line 4: every neighbour
            q = nbrs[e]
            # line 5: the topics q is interested in too (p's topics scattered in tpos)
            for j in range(sub_indptr[q], sub_indptr[q + 1]):
                ti = sub_topics[j]
                i = tpos[ti]
                if i < 0:
                    continue
                ngw = gw[j]  # line 6: q's last proposal for the topic
                npar = par[j]
                nh = hop[j] + 1
                # line 7: loop avoidance (and, reading A5a, never one's own echo)
                ok = npar == q or nmark[npar] != p + 1
                if split_horizon and npar == p and npar != q:
                    ok = False
                if ok:
                    key = tids[ti]
                    # lines 8-11: a closer gateway within the hop limit
                    if nh <= max_hops and _closer(ngw, out_gw[i], key, ids):
                        out_gw[i] = ngw
                        out_par[i] = q
                        out_hop[i] = nh
                    # lines 13-14: the same gateway on a shorter path
                    if ngw == out_gw[i] and nh < out_hop[i]:
                        out_par[i] = q
                        out_hop[i] = nh
        for i in range(a, b):
            tpos[sub_topics[i]] = -1


def gateway_round(indptr: np.ndarray, nbrs: np.ndarray, alive: np.ndarray,
                  sub_indptr: np.ndarray, sub_topics: np.ndarray, tids: np.ndarray,
                  ids: np.ndarray, state: tuple[np.ndarray, np.ndarray, np.ndarray],
                  max_hops: int, split_horizon: bool = True
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round of Algorithm 5 at every node, from the proposals of the last round.

    ``state`` is ``(gw, parent, hops)``, one entry per subscription (aligned
    with ``sub_topics``); returns the new proposals.  A proposal is adopted
    within ``max_hops`` hops of its gateway (``d - 1`` as printed, line 10,
    or ``d`` as the text says: reading A5b).  Neighbours are the rows of the
    CSR ``(indptr, nbrs)``.

    Examples
    --------
    A path ``0 - 1 - 2 - 3`` all subscribed to topic 0 whose id is node 3's:
    after three rounds everyone proposes node 3 at its hop distance.

    >>> import numpy as np
    >>> ids = np.array([40, 30, 20, 10], np.uint64)
    >>> ip, nb = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2], np.int32)
    >>> sip, st = np.arange(5), np.zeros(4, np.int32)
    >>> s = (np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32), np.zeros(4, np.int16))
    >>> for _ in range(3):
    ...     s = gateway_round(ip, nb, np.ones(4, bool), sip, st, np.array([10], np.uint64),
    ...                       ids, s, max_hops=4)
    >>> s[0].tolist(), s[2].tolist()
    ([3, 3, 3, 3], [3, 2, 1, 0])
    """
    gw, par, hop = state
    out = (np.empty_like(gw), np.empty_like(par), np.empty_like(hop))
    nmark = np.zeros(len(alive), np.int64)
    tpos = np.full(len(tids), -1, np.int64)
    _gateway_round(indptr, nbrs, np.asarray(alive, np.bool_), sub_indptr, sub_topics, tids, ids,
                   gw, par, hop, int(max_hops), bool(split_horizon), out[0], out[1], out[2],
                   nmark, tpos)
    return out


@numba.njit(cache=True)
def _relay_walks(indptr, nbrs, ids, starts, topics, tids, masks, max_steps, record_links):
    # pragma: no cover - compiled
    """Greedy lookups of hash(t) from each gateway; relay (node, topic) pairs, path links."""
    m = starts.shape[0]
    n = indptr.shape[0] - 1
    stamp = np.zeros(n, np.int64)  # stamp[x] = topic + 1 when x is already a relay/path node
    cap = 1024
    rel_node = np.empty(cap, np.int64)
    rel_topic = np.empty(cap, np.int64)
    nrel = 0
    lcap = 1024 if record_links else 1
    lk = np.empty((lcap, 3), np.int64)
    nl = 0
    hops = np.zeros(m, np.int64)
    ends = np.empty(m, np.int64)
    failed = np.zeros(m, np.bool_)
    last_topic = -1
    for g in range(m):
        t = topics[g]
        if t != last_topic:  # gateways come sorted by topic: a new stamp per topic
            last_topic = t
        key = tids[t]
        x = starts[g]
        d = ring_distance(ids[x], key)
        h = 0
        word = t >> 6
        bit = np.uint64(t & 63)
        while True:
            if stamp[x] != t + 1:
                stamp[x] = t + 1
                if (masks[x, word] >> bit) & np.uint64(1) == 0:
                    if nrel == rel_node.shape[0]:
                        rel_node = np.concatenate((rel_node, np.empty(nrel, np.int64)))
                        rel_topic = np.concatenate((rel_topic, np.empty(nrel, np.int64)))
                    rel_node[nrel] = x
                    rel_topic[nrel] = t
                    nrel += 1
            best, best_d = greedy_next(indptr, nbrs, ids, x, d, key)
            if best < 0:
                break
            if h >= max_steps:
                failed[g] = True
                break
            if record_links:
                if nl == lk.shape[0]:
                    lk = np.concatenate((lk, np.empty((nl, 3), np.int64)))
                lk[nl, 0] = x
                lk[nl, 1] = best
                lk[nl, 2] = t
                nl += 1
            x = best
            d = best_d
            h += 1
        hops[g] = h
        ends[g] = x
    return rel_node[:nrel], rel_topic[:nrel], lk[:nl], hops, ends, failed


def relay_paths(indptr: np.ndarray, nbrs: np.ndarray, ids: np.ndarray, gateways: np.ndarray,
                topics: np.ndarray, tids: np.ndarray, masks: np.ndarray, max_hops: int,
                record_links: bool = False):
    """RequestRelay (Algorithm 5, line 21) for every ``(gateway, topic)``: lookups of hash(t).

    Every node on a lookup path not subscribed to ``t`` becomes a relay for
    ``t`` (§III-B).  Returns ``(relay_nodes, relay_topics, path_links, hops,
    ends, failed)``: the distinct relay pairs, the ``(u, v, topic)`` hops of
    the paths (when ``record_links``), and per lookup its length, end node and
    whether ``max_hops`` stopped it.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([0, 100, 200, 300], np.uint64)
    >>> ip, nb = np.array([0, 2, 4, 6, 8]), np.array([1, 3, 0, 2, 1, 3, 2, 0], np.int32)
    >>> masks = np.array([[1], [0], [1], [0]], np.uint64)   # nodes 0 and 2 subscribe to topic 0
    >>> r = relay_paths(ip, nb, ids, np.array([0, 2]), np.array([0, 0]),
    ...                 np.array([110], np.uint64), masks, 10, record_links=True)
    >>> r[0].tolist(), r[2].tolist(), r[3].tolist()
    ([1], [[0, 1, 0], [2, 1, 0]], [1, 1])
    """
    gateways = np.asarray(gateways, np.int64)
    topics = np.asarray(topics, np.int64)
    order = np.argsort(topics, kind="stable")
    rn, rt, lk, hops, ends, failed = _relay_walks(
        indptr, nbrs, np.asarray(ids, np.uint64), gateways[order], topics[order],
        np.asarray(tids, np.uint64), masks, int(max_hops), bool(record_links))
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return rn, rt, lk, hops[back], ends[back], failed[back]
