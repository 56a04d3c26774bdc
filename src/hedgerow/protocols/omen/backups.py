"""Backup sets of OMen (Chen, Vitenberg, Jacobsen, DEBS 2016, section 4.2).

A backup set ``B(v')`` for node ``v'`` is *acceptable* when it covers every
topic of ``v'`` (eq. 1) and each member shares a topic with ``v'`` (eq. 2);
its coverage factor ``lambda(B)`` (eq. 3) is the smallest number of members
subscribed to any topic of ``v'``.  Building one is a (multi-)set cover over
the topics of ``v'``; the paper gives two builders, each "executed
iteratively until obtaining a lambda-backup-set":

``greedy`` (Chvatal)
    repeatedly add the candidate covering most still-uncovered topics.
``pd`` (primal-dual, Hochbaum)
    repeatedly pick a *random* uncovered topic ``t`` and add a subscriber of
    ``t`` among the candidates.

Readings (see ``docs/omen.md``)
-------------------------------
* **Multi-cover target** (R-4).  A topic is *uncovered* while fewer than
  ``min(lambda, available)`` members hold it, ``available`` being the
  candidates subscribed to it: a topic no candidate holds cannot be covered
  and does not block the build.
* **Primal-dual subscriber** (R-5, ``pick``).  The paper's sentence reads
  "choosing a subscriber w for t with the maximum uncovered topics", and
  cites Hochbaum's primal-dual method for (weighted) set cover.  ``"dual"``
  (the protocol default) is that method: each candidate ``w`` is a set priced
  ``1 + load(w)``, ``load`` being how many current backup sets already name
  ``w`` (the fairness of section 4.2: "nodes evenly contribute to the backup
  sets"; section 7.3: one node's selection considers the others'); the dual
  ``y_t`` of the random uncovered topic is raised until a subscriber of ``t``
  is tight (its price minus the duals of its topics reaches 0), and among the
  tight subscribers the one with the most uncovered topics joins - the
  paper's sentence, now the tie-break among tight sets.  A topic needing
  ``lambda`` members raises its dual again after a member joins.  Popular
  bulk nodes become expensive, so the sets balance (in-degrees 16-35 against
  greedy's 0-295 on the paper's Unif 2K workload) and grow (2.9 times
  greedy's size).  With unit prices (``load`` omitted) the step is greedy's
  (the first raise makes every subscriber of the first topic tight, and the
  max-gain one among them is the greedy choice).  ``"random"`` draws the
  subscriber of the random topic uniformly (the earlier reading: balanced
  against greedy, less than ``"dual"``); ``"max-gain"`` is the sentence with
  unit prices and no dual (as skewed as greedy).
  ``tests/protocols/omen/test_backups.py`` pins all three.
* **Ties** of the greedy argmax are broken by a seeded random rotation of
  the candidates (the first maximum after a random offset).

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import Instance
>>> inst = Instance.from_lists([[0, 1, 2], [0, 1], [2], [1, 2], [3]], n_topics=4)
>>> b = backup_set(inst.sub_indptr, inst.sub_topics, 0, np.arange(5), 1, "greedy",
...                np.random.default_rng(0))
>>> sorted(b.tolist()) in ([1, 2], [1, 3], [3, 1], [2, 1])
True
>>> coverage_factor(inst.sub_indptr, inst.sub_topics, 0, b)
1
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hedgerow.gossip._prefetch import _prefetch
from hedgerow.model.bitset import popcount64

__all__ = [
    "BUILDERS",
    "COVERS",
    "PD_PICKS",
    "backup_set",
    "coverage_factor",
    "refresh_entry",
    "uncovered_topics",
]

#: how many candidates ahead the bit-mask gather asks for rows
_AHEAD = 4
#: builder name -> kernel code
BUILDERS = {"greedy": 0, "pd": 1}
#: primal-dual subscriber choice -> kernel code
PD_PICKS = {"random": 0, "max-gain": 1, "dual": 2}
#: how lambda-coverage is reached (reading R-4) -> kernel flag
COVERS = {"multi": False, "repeat": True}


@njit(cache=True)
def _rotated_best(lo, hi, tsub, taken, slack, tol, tight_only, off, gain, best_gain):
    """The subscriber of a topic with the most uncovered topics, in rotated order.

    Scans the topic's subscribers ``tsub[lo:hi]`` that are not taken (and, when
    ``tight_only``, whose slack is within ``tol``), starting after the ``off``-th
    of them and wrapping round; the first strict improvement on ``best_gain``
    wins (``gain[c]``: the uncovered topics of candidate ``c``). Returns the
    candidate index, or -1 if none improves on ``best_gain``.
    """
    best = -1
    for rr in range(2):
        seen = 0
        for j in range(lo, hi):
            c = tsub[j]
            if taken[c] or (tight_only and slack[c] > tol):
                continue
            seen += 1
            if (rr == 0 and seen <= off) or (rr == 1 and seen > off):
                continue
            if gain[c] > best_gain:
                best_gain = gain[c]
                best = c
    return best


@njit(cache=True)
def _incidence(vtopics, cands, indptr, topics, masks, pos):
    """Each candidate's topics among ``vtopics``, as local indices (CSR ``cptr``, ``cloc``).

    A candidate's row lists the positions in ``vtopics`` of the topics it
    holds, in increasing order.  With bit masks (``masks``: one row of
    ``uint64`` words per node) the row is the ``and`` of the candidate's words
    with the words of ``vtopics``, one test per word ``vtopics`` touches;
    without (``masks`` with no rows) it is one pass over the candidate's topic
    list through ``pos`` (all -1 on entry and on exit).  Both give the same
    rows (topic lists are sorted within a node).
    """
    m = len(vtopics)
    k = len(cands)
    cptr = np.zeros(k + 1, np.int64)
    bound = 0
    for c in range(k):
        bound += min(m, indptr[cands[c] + 1] - indptr[cands[c]])
    cloc = np.empty(bound, np.int64)
    j = 0
    if masks.shape[0]:
        # the words of vtopics: index, bits, and the local index of the word's first topic
        words = np.empty(m, np.int64)
        bits = np.empty(m, np.uint64)
        base = np.empty(m, np.int64)
        nw = 0
        for i in range(m):
            w = vtopics[i] >> 6
            if nw == 0 or words[nw - 1] != w:
                words[nw] = w
                bits[nw] = 0
                base[nw] = i
                nw += 1
            bits[nw - 1] |= np.uint64(1) << np.uint64(vtopics[i] & 63)
        one = np.uint64(1)
        for c in range(k):
            v = cands[c]
            for q in range(nw):
                x = masks[v, words[q]] & bits[q]
                while x:
                    low = x & (~x + one)
                    cloc[j] = base[q] + popcount64(bits[q] & (low - one))
                    j += 1
                    x ^= low
            cptr[c + 1] = j
        return cptr, cloc[:j]
    for i in range(m):
        pos[vtopics[i]] = i
    for c in range(k):
        v = cands[c]
        for x in range(indptr[v], indptr[v + 1]):
            p = pos[topics[x]]
            if p >= 0:
                cloc[j] = p
                j += 1
        cptr[c + 1] = j
    for i in range(m):
        pos[vtopics[i]] = -1
    return cptr, cloc[:j]


@njit(cache=True)
def _fenwick_add(tree, i, delta):
    """Add ``delta`` at position ``i`` (0-based) of a Fenwick tree of ``len(tree) - 1`` slots."""
    i += 1
    while i < tree.shape[0]:
        tree[i] += delta
        i += i & -i


@njit(cache=True)
def _fenwick_select(tree, r):
    """The position of the ``r``-th (0-based) set slot of a Fenwick tree of 0/1 slots."""
    n = tree.shape[0] - 1
    pos = 0
    step = 1
    while step * 2 <= n:
        step *= 2
    while step:
        nxt = pos + step
        if nxt <= n and tree[nxt] <= r:
            pos = nxt
            r -= tree[nxt]
        step //= 2
    return pos


@njit(cache=True)
def _open_cover(m, k, cptr, cloc, tptr, tsub, count, target, gain, tree):
    """Start a cover: ``gain`` and the Fenwick tree of the uncovered topics
    (``count < target``); returns how many are uncovered."""
    tree[:] = 0
    n_unc = 0
    for i in range(m):
        if count[i] < target[i]:
            n_unc += 1
            tree[i + 1] += 1
    for i in range(1, m + 1):
        up = i + (i & -i)
        if up <= m:
            tree[up] += tree[i]
    for c in range(k):
        g = 0
        for j in range(cptr[c], cptr[c + 1]):
            if count[cloc[j]] < target[cloc[j]]:
                g += 1
        gain[c] = g
    return n_unc


@njit(cache=True)
def _unc_gain(nzq, nzx, nnz, c, unc):
    """Uncovered topics of candidate ``c``: its non-zero words ``nzx[c, :nnz]`` (words
    ``nzq[c, :nnz]``) against ``unc``."""
    g = 0
    for z in range(nnz):
        g += popcount64(nzx[c, z] & unc[nzq[c, z]])
    return g


@njit(cache=True)
def _build_pd_bits(vtopics, cands, masks, lam, pick, draws, load):
    """The primal-dual multi-cover of :func:`_build_core` on bit masks, with its choices.

    The candidates' words that ``vtopics`` touches are gathered once: word-major
    into ``gt`` (so one topic's holders, a bit set over the candidates, come
    from one vectorised pass over a row) and, per candidate, only its non-zero
    words (``nzq`` the word, ``nzx`` its bits; written without branches).  A
    step's free subscribers of the random topic are the set bits of
    ``holders[t] & ~taken``, in candidate order.  The members' counts are
    bit-sliced counters, one slice per bit of ``lam`` and one bit per topic, so
    adding a member is a few word operations on each of its non-zero words
    (only its still uncovered topics are counted), and the topics it covers
    are those whose counter now equals their target; each is taken out of the
    Fenwick tree of uncovered topics (the r-th in topic order).  A candidate's
    gain (its uncovered topics) is counted only when a tie among tight
    subscribers needs it.  The members, their order and the draws used are
    those of :func:`_build_core` (``tests/protocols/omen/test_backups.py``).

    Returns the members and, for each topic of ``vtopics``, how many of them
    hold it, counted up to the topic's target ``min(available, lam)``: a
    topic's count stops once it is covered, which the ready test cannot tell
    apart, since it compares the count with at most ``lam`` and a topic whose
    target is below ``lam`` has all its holders counted.
    """
    m = len(vtopics)
    k = len(cands)
    words = np.empty(m, np.int64)
    bits = np.empty(m, np.uint64)
    base = np.empty(m, np.int64)
    word_of = np.empty(m, np.int64)
    nw = 0
    one = np.uint64(1)
    for i in range(m):
        w = vtopics[i] >> 6
        if nw == 0 or words[nw - 1] != w:
            words[nw] = w
            bits[nw] = 0
            base[nw] = i
            nw += 1
        bits[nw - 1] |= one << np.uint64(vtopics[i] & 63)
        word_of[i] = nw - 1
    gt = np.empty((nw, k), np.uint64)
    nzq = np.empty((k, nw), np.int64)  # candidate c's non-zero words: nzq[c, :nnz[c]]
    nzx = np.empty((k, nw), np.uint64)  # and their bits
    nnz = np.empty(k, np.int64)
    # the first word of each 8-word block the words fall in: the gather asks for these
    # blocks of the candidate _AHEAD places on, so that the rows of several candidates
    # are on their way at once (a hint: no result depends on it)
    ahead = np.empty(nw, np.int64)
    n_ahead = 0
    for q in range(nw):
        if n_ahead == 0 or (words[q] >> 3) != (ahead[n_ahead - 1] >> 3):
            ahead[n_ahead] = words[q]
            n_ahead += 1
    n_col = masks.shape[1]
    for c in range(k):
        if c + _AHEAD < k:
            row = cands[c + _AHEAD] * n_col
            for y in range(n_ahead):
                _prefetch(masks, row + ahead[y])
        v = cands[c]
        z = 0
        for q in range(nw):
            x = masks[v, words[q]] & bits[q]
            gt[q, c] = x
            nzq[c, z] = q
            nzx[c, z] = x
            z += x != 0
        nnz[c] = z
    # holders[i]: the candidates holding topic i, as a bit set over candidate indices;
    # only min(avail, lam) of its size is used
    kw = (k + 63) >> 6
    holders = np.zeros((m, kw), np.uint64)
    target = np.zeros(m, np.int64)
    for i in range(m):
        row = gt[word_of[i]]
        sh = np.uint64(vtopics[i] & 63)
        a = 0
        for w in range(kw):
            acc = np.uint64(0)
            for b in range(min(64, k - 64 * w)):
                acc |= ((row[64 * w + b] >> sh) & one) << np.uint64(b)
            holders[i, w] = acc
            a += popcount64(acc)
        target[i] = min(a, lam)
    # bit-sliced counts and targets: bit s of topic i's value is bit (vtopics[i] & 63) of
    # slice s of its word; the counts stay below 2**n_sl as they stop at the targets
    n_sl = 1
    while (1 << n_sl) <= lam:
        n_sl += 1
    cnt = np.zeros((nw, n_sl), np.uint64)
    tgt = np.zeros((nw, n_sl), np.uint64)
    unc = np.zeros(nw, np.uint64)
    tree = np.zeros(m + 1, np.int64)
    n_unc = 0
    for i in range(m):
        q = word_of[i]
        b = one << np.uint64(vtopics[i] & 63)
        for s in range(n_sl):
            if (target[i] >> s) & 1:
                tgt[q, s] |= b
        if target[i] > 0:
            n_unc += 1
            tree[i + 1] += 1
            unc[q] |= b
    for i in range(1, m + 1):
        up = i + (i & -i)
        if up <= m:
            tree[up] += tree[i]
    slack = np.ones(k, np.float64)
    if len(load):
        for c in range(k):
            slack[c] = 1.0 + load[cands[c]]
    taken = np.zeros(kw, np.uint64)
    out = np.empty(k, np.int64)
    free = np.empty(k, np.int64)
    tight = np.empty(k, np.int64)
    n_out = 0
    d = 0  # the next draw, d % len(draws) kept without a division
    n_draws = len(draws)
    while n_unc > 0:
        t = _fenwick_select(tree, int(draws[d] * n_unc))
        d = d + 1 if d + 1 < n_draws else 0
        # the free subscribers of t, in candidate order, and their least slack
        n_free = 0
        delta = np.inf
        for w in range(kw):
            x = holders[t, w] & ~taken[w]
            while x:
                low = x & (~x + one)
                x ^= low
                c = 64 * w + popcount64(low - one)
                free[n_free] = c
                n_free += 1
                if slack[c] < delta:
                    delta = slack[c]
        best = -1
        if pick == 2:
            n_tight = 0
            tol = 1e-9 * (1.0 + delta)
            for y in range(n_free):
                c = free[y]
                if delta > 0.0:
                    slack[c] -= delta
                if slack[c] <= tol:
                    tight[n_tight] = c
                    n_tight += 1
            off = int(draws[d] * n_tight)
            d = d + 1 if d + 1 < n_draws else 0
            if n_tight == 1:
                best = tight[0]  # any gain beats the initial -1
            else:
                best_gain = -1
                for y in range(n_tight):
                    c = tight[(off + y) % n_tight]
                    g = _unc_gain(nzq, nzx, nnz[c], c, unc)
                    if g > best_gain:
                        best_gain = g
                        best = c
        elif pick == 0:
            r = int(draws[d] * n_free)
            d = d + 1 if d + 1 < n_draws else 0
            if n_free:
                best = free[r]
        else:
            off = int(draws[d] * n_free)
            d = d + 1 if d + 1 < n_draws else 0
            best_gain = 0
            for y in range(n_free):
                c = free[(off + y) % n_free]
                g = _unc_gain(nzq, nzx, nnz[c], c, unc)
                if g > best_gain:
                    best_gain = g
                    best = c
        if best < 0:
            break
        taken[best >> 6] |= one << np.uint64(best & 63)
        out[n_out] = cands[best]
        n_out += 1
        # count the member on its still uncovered topics, word by word (a ripple-carry add
        # of one bit per topic); the topics whose count reaches the target are covered
        for z in range(nnz[best]):
            q = nzq[best, z]
            x = nzx[best, z] & unc[q]
            carry = x
            eq = ~np.uint64(0)
            for s in range(n_sl):
                old = cnt[q, s]
                now = old ^ carry
                carry = old & carry
                cnt[q, s] = now
                eq &= ~(now ^ tgt[q, s])
            done = eq & x
            if done:
                unc[q] &= ~done
                while done:
                    low = done & (~done + one)
                    done ^= low
                    n_unc -= 1
                    _fenwick_add(tree, base[q] + popcount64(bits[q] & (low - one)), -1)
    count = np.zeros(m, np.int64)
    for i in range(m):
        sh = np.uint64(vtopics[i] & 63)
        val = 0
        for s in range(n_sl):
            val |= int((cnt[word_of[i], s] >> sh) & one) << s
        count[i] = val
    return out[:n_out], count


@njit(cache=True)
def _build_core(
    vtopics, cands, indptr, topics, masks, lam, builder, pick, draws, pos, load, repeat,
):
    """Kernel: the backup set of a node with sorted topics ``vtopics`` over ``cands``,
    and how many members hold each of those topics.

    ``pos`` is a scratch array (one entry per topic, all -1 on entry and on exit).
    ``load`` (per global node; empty = no load) prices each candidate at
    ``1 + load`` for the dual-raising primal-dual step (``pick == 2``).
    ``repeat``: run whole single covers (fresh duals each) until every topic
    is held ``min(lam, available)`` times (``cover="repeat"``), instead of one
    multi-cover run.  ``masks``: the nodes' topic bit masks, or no rows (the
    incidence then comes from the topic lists; the same rows either way).

    Each candidate's gain (its uncovered topics), the number of uncovered
    topics and their order (a Fenwick tree, for the random uncovered topic)
    are kept up to date as members join, instead of being counted afresh at
    every step: the same quantities, so the same choices and draws.
    """
    if masks.shape[0] and builder == 1 and not repeat:
        return _build_pd_bits(vtopics, cands, masks, lam, pick, draws, load)
    m = len(vtopics)
    k = len(cands)
    cptr, cloc = _incidence(vtopics, cands, indptr, topics, masks, pos)
    avail = np.zeros(m, np.int64)
    for j in range(cptr[k]):
        avail[cloc[j]] += 1
    final = np.minimum(avail, lam)
    target = final.copy()
    if repeat:
        for i in range(m):
            target[i] = 1 if avail[i] > 0 else 0
    total = np.zeros(m, np.int64)
    remaining = avail.copy()
    count = np.zeros(m, np.int64)
    taken = np.zeros(k, np.bool_)
    out = np.empty(k, np.int64)
    n_out = 0
    d = 0
    n_draws = len(draws)
    # subscribers of each local topic among the candidates
    tptr = np.zeros(m + 1, np.int64)
    for j in range(cptr[k]):
        tptr[cloc[j] + 1] += 1
    for i in range(m):
        tptr[i + 1] += tptr[i]
    tsub = np.empty(cptr[k], np.int64)
    fill = tptr[:-1].copy()
    for c in range(k):
        for j in range(cptr[c], cptr[c + 1]):
            t = cloc[j]
            tsub[fill[t]] = c
            fill[t] += 1
    # primal-dual slack of each candidate: its price minus the duals of its topics
    slack = np.ones(k, np.float64)
    if len(load):
        for c in range(k):
            slack[c] = 1.0 + load[cands[c]]
    gain = np.empty(k, np.int64)
    tree = np.zeros(m + 1, np.int64)
    n_unc = _open_cover(m, k, cptr, cloc, tptr, tsub, count, target, gain, tree)
    while True:
        if n_unc == 0:
            if not repeat:
                break
            done = True
            for i in range(m):
                if total[i] < final[i]:
                    done = False
            if done:
                break
            # the next whole cover, from the candidates not yet taken, fresh duals
            n_next = 0
            for i in range(m):
                count[i] = 0
                target[i] = 1 if remaining[i] > 0 else 0
                n_next += target[i]
            if n_next == 0:
                break
            for c in range(k):
                slack[c] = 1.0 + load[cands[c]] if len(load) else 1.0
            n_unc = _open_cover(m, k, cptr, cloc, tptr, tsub, count, target, gain, tree)
            continue
        best = -1
        if builder == 0:
            off = int(draws[d % n_draws] * k)
            d += 1
            best_gain = 0
            for r in range(k):
                c = (off + r) % k
                if not taken[c] and gain[c] > best_gain:
                    best_gain = gain[c]
                    best = c
        else:
            # a random uncovered topic: the r-th in topic order
            t = _fenwick_select(tree, int(draws[d % n_draws] * n_unc))
            d += 1
            n_free = 0
            for j in range(tptr[t], tptr[t + 1]):
                if not taken[tsub[j]]:
                    n_free += 1
            if pick == 2:
                # raise y_t until a subscriber of t is tight, then take the tight
                # subscriber with the most uncovered topics (ties: random rotation)
                delta = np.inf
                for j in range(tptr[t], tptr[t + 1]):
                    c = tsub[j]
                    if not taken[c] and slack[c] < delta:
                        delta = slack[c]
                if delta > 0.0:
                    for j in range(tptr[t], tptr[t + 1]):
                        c = tsub[j]
                        if not taken[c]:
                            slack[c] -= delta
                tol = 1e-9 * (1.0 + delta)
                n_tight = 0
                for j in range(tptr[t], tptr[t + 1]):
                    c = tsub[j]
                    if not taken[c] and slack[c] <= tol:
                        n_tight += 1
                off = int(draws[d % n_draws] * n_tight)
                d += 1
                best = _rotated_best(tptr[t], tptr[t + 1], tsub, taken, slack, tol, True, off,
                                     gain, -1)
            elif pick == 0:
                r = int(draws[d % n_draws] * n_free)
                d += 1
                for j in range(tptr[t], tptr[t + 1]):
                    c = tsub[j]
                    if not taken[c]:
                        if r == 0:
                            best = c
                            break
                        r -= 1
            else:
                off = int(draws[d % n_draws] * n_free)
                d += 1
                best = _rotated_best(tptr[t], tptr[t + 1], tsub, taken, slack, 0.0, False, off,
                                     gain, 0)
        if best < 0:
            break
        taken[best] = True
        out[n_out] = cands[best]
        n_out += 1
        for j in range(cptr[best], cptr[best + 1]):
            i = cloc[j]
            count[i] += 1
            total[i] += 1
            remaining[i] -= 1
            if count[i] == target[i]:
                # topic i is covered now: one uncovered topic less for each subscriber
                n_unc -= 1
                _fenwick_add(tree, i, -1)
                for q in range(tptr[i], tptr[i + 1]):
                    gain[tsub[q]] -= 1
    return out[:n_out], total


@njit(cache=True)
def _build(vtopics, cands, indptr, topics, lam, builder, pick, draws, pos, load, repeat):
    """Kernel: the backup set of a node with sorted topics ``vtopics`` over ``cands``
    (:func:`_build_core` on the topic lists)."""
    return _build_core(vtopics, cands, indptr, topics, np.zeros((0, 1), np.uint64), lam,
                       builder, pick, draws, pos, load, repeat)[0]


@njit(cache=True)
def _refresh(
    node, pool, online, indptr, topics, masks, lam, builder, pick, draws, pos, stamp,
    live_subs, load, repeat, ready_lam,
):
    """Kernel of ``selectView`` for one entry: dedupe the live pool, build, test readiness.

    ``masks``: the nodes' topic bit masks (or no rows), see :func:`_build_core`.
    """
    mark = stamp[0] + 1
    stamp[0] = mark
    keep = np.empty(len(pool), np.int64)
    n = 0
    for x in pool:
        if x != node and online[x] and stamp[x + 1] != mark:
            stamp[x + 1] = mark
            keep[n] = x
            n += 1
    vt = topics[indptr[node] : indptr[node + 1]].astype(np.int64)
    if lam <= 0:
        return np.empty(0, np.int64), True
    if n == 0 or len(vt) == 0:
        B = np.empty(0, np.int64)
        held = np.zeros(len(vt), np.int64)
    else:
        # held[i]: the members holding topic vt[i] (the build counts them as they join)
        B, held = _build_core(vt, keep[:n], indptr, topics, masks, lam, builder, pick, draws,
                              pos, load, repeat)
    # ready: every topic some other live node holds is held by a member
    own = 1 if online[node] else 0
    for i in range(len(vt)):
        if held[i] < min(ready_lam, live_subs[vt[i]] - own):
            return B, False
    return B, True


def refresh_entry(
    node: int,
    pool: np.ndarray,
    online: np.ndarray,
    sub_indptr: np.ndarray,
    sub_topics: np.ndarray,
    lam: int,
    builder: str,
    rng: np.random.Generator,
    live_subs: np.ndarray,
    *,
    pick: str = "random",
    load: np.ndarray | None = None,
    cover: str = "multi",
    ready: str = "cover",
    masks: np.ndarray | None = None,
) -> tuple[np.ndarray, bool]:
    """``buildBackups(v', candidates)`` of Alg. 4: the backup set and the ready flag (R-6).

    ``ready="cover"``: ready once every topic is held once (eq. 1);
    ``ready="lambda"``: once held ``min(lam, live others)`` times (a λ-backup-set).

    ``pool`` may hold duplicates, offline nodes and ``node`` itself; they are
    dropped.  Ready: every topic of ``node`` that another live node holds
    (``live_subs``, the live subscribers per topic) has a member holding it.
    ``masks`` (the nodes' topic bit masks, :func:`hedgerow.model.pack_sets` of
    the same lists) makes the candidates' incidence a few word tests each; the
    set is the same with or without them.
    """
    n_topics = len(live_subs)
    draws = rng.random(2 * max(lam, 1) * int(sub_indptr[node + 1] - sub_indptr[node]) + 4)
    st = _STAMP.get(len(online))
    if st is None:
        st = _STAMP[len(online)] = np.zeros(len(online) + 1, dtype=np.int64)
    return _refresh(
        int(node), np.ascontiguousarray(pool, dtype=np.int64), online, sub_indptr, sub_topics,
        _masks(masks), int(lam), BUILDERS[builder], PD_PICKS[pick], draws, _pos(n_topics), st,
        live_subs, _loads(load), COVERS[cover], int(lam) if ready == "lambda" else 1,
    )


_STAMP: dict[int, np.ndarray] = {}
_SCRATCH: dict[int, np.ndarray] = {}


_NO_LOAD = np.zeros(0, dtype=np.int64)


_NO_MASKS = np.zeros((0, 1), dtype=np.uint64)


def _masks(masks: np.ndarray | None) -> np.ndarray:
    return _NO_MASKS if masks is None else np.ascontiguousarray(masks, dtype=np.uint64)


def _loads(load: np.ndarray | None) -> np.ndarray:
    return _NO_LOAD if load is None else np.ascontiguousarray(load, dtype=np.int64)


def _pos(n_topics: int) -> np.ndarray:
    s = _SCRATCH.get(n_topics)
    if s is None:
        s = _SCRATCH[n_topics] = np.full(n_topics, -1, dtype=np.int64)
    return s


def backup_set(
    sub_indptr: np.ndarray,
    sub_topics: np.ndarray,
    node: int,
    candidates: np.ndarray,
    lam: int,
    builder: str,
    rng: np.random.Generator,
    *,
    pick: str = "random",
    n_topics: int | None = None,
    load: np.ndarray | None = None,
    cover: str = "multi",
    masks: np.ndarray | None = None,
) -> np.ndarray:
    """A ``lam``-backup-set of ``node`` drawn from ``candidates`` (section 4.2).

    Parameters
    ----------
    sub_indptr, sub_topics : numpy.ndarray
        Node -> topics CSR (topics sorted within a node).
    node : int
        ``v'``, the node the backups stand in for (never a member).
    candidates : numpy.ndarray
        Nodes to choose from (duplicates and ``node`` itself are dropped);
        those sharing no topic with ``node`` are never chosen (eq. 2).
    lam : int
        Coverage factor: each topic held ``min(lam, available)`` times.
    builder : {"greedy", "pd"}
        Chvatal's greedy cover or the primal-dual one.
    rng : numpy.random.Generator
        Ties (greedy) and the random topic / subscriber (primal-dual).
    pick : {"random", "max-gain", "dual"}
        Primal-dual subscriber choice (module docstring).
    n_topics : int, optional
        Number of topics (default: largest topic + 1).
    load : numpy.ndarray, optional
        Backup load per node: ``pick="dual"`` prices node ``w`` at
        ``1 + load[w]`` (default: unit prices).
    cover : {"multi", "repeat"}
        One multi-cover run (default), or whole single covers repeated over
        the candidates not yet taken until each topic is held
        ``min(lam, available)`` times (reading R-4).
    masks : numpy.ndarray, optional
        The nodes' topic bit masks (:func:`hedgerow.model.pack_sets` of the same
        lists): the candidates' incidence from word tests instead of their topic
        lists (the same set either way).

    Returns
    -------
    numpy.ndarray
        int64 members in the order chosen.
    """
    cands = np.unique(np.asarray(candidates, dtype=np.int64))
    cands = cands[cands != node]
    vt = np.asarray(sub_topics[sub_indptr[node] : sub_indptr[node + 1]], dtype=np.int64)
    if not len(cands) or not len(vt) or lam <= 0:
        return np.zeros(0, dtype=np.int64)
    nt = int(n_topics if n_topics is not None else int(sub_topics.max()) + 1)
    draws = rng.random(2 * lam * len(vt) + 4)
    return _build_core(
        vt, cands, sub_indptr, sub_topics, _masks(masks), int(lam), BUILDERS[builder],
        PD_PICKS[pick], draws, _pos(nt), _loads(load), COVERS[cover],
    )[0]


def coverage_factor(
    sub_indptr: np.ndarray, sub_topics: np.ndarray, node: int, members: np.ndarray
) -> int:
    """Eq. (3): the smallest number of ``members`` holding any topic of ``node``.

    Examples
    --------
    >>> import numpy as np
    >>> coverage_factor(np.array([0, 2, 3, 5]), np.array([0, 1, 0, 0, 1]), 0, np.array([1, 2]))
    1
    """
    vt = sub_topics[sub_indptr[node] : sub_indptr[node + 1]]
    if not len(vt):
        return 0
    held = np.zeros(len(vt), dtype=np.int64)
    for u in np.asarray(members, dtype=np.int64).tolist():
        held += np.isin(vt, sub_topics[sub_indptr[u] : sub_indptr[u + 1]])
    return int(held.min())


def uncovered_topics(
    sub_indptr: np.ndarray,
    sub_topics: np.ndarray,
    node: int,
    members: np.ndarray,
    others: np.ndarray,
) -> np.ndarray:
    """Topics of ``node`` that some live node holds (``others[t] > 0``) but no member does.

    Empty exactly when ``members`` satisfies eq. (1) for every topic that can
    be covered at all (the ready flag's test, reading R-6).
    """
    vt = np.asarray(sub_topics[sub_indptr[node] : sub_indptr[node + 1]], dtype=np.int64)
    vt = vt[others[vt] > 0]
    if not len(vt):
        return vt
    ms = np.asarray(members, dtype=np.int64)
    if len(ms):
        held = np.concatenate([sub_topics[sub_indptr[u] : sub_indptr[u + 1]] for u in ms])
        vt = vt[~np.isin(vt, held)]
    return vt
