"""numba kernels of the neighbour-maintenance engine (coverage counts, candidate choice)."""

from __future__ import annotations

import numba
import numpy as np

from hedgerow.model.bitset import popcount64

#: candidate-selection modes of :func:`pick_candidate`
GREEDY, RANDOM_COVER, SIMILARITY, RANDOM_NODE = 0, 1, 2, 3
#: tie rules of the argmax selections (GREEDY, SIMILARITY)
TIES_UNIFORM, TIES_SEQUENTIAL = 0, 1


@numba.njit(cache=True)
def pick_candidate(
    mode, masks, target, view, full_view, n_nodes, mark, stamp, u, keys, ties_rule=0
):
    """Choose the next node to connect to; ``-1`` when there is none.

    ``target`` is the bit mask scored against: the node's *uncovered* topics
    for ``GREEDY`` / ``RANDOM_COVER``, its whole interest for ``SIMILARITY``.
    Candidates are the interest view (``view``, or all nodes when
    ``full_view``) minus nodes with ``mark[c] == stamp`` (self, neighbours,
    pending and quarantined nodes).  Ties are broken uniformly with the
    uniform variate ``u``; ``keys`` is a scratch buffer of at least the view's
    length (scores are computed once):

    - GREEDY: argmax ``|c ∩ target|``, only if the maximum is > 0 (Fig. 5 l. 8);
    - RANDOM_COVER: uniform among candidates with ``|c ∩ target| > 0`` (Fig. 5 l. 17-18);
    - SIMILARITY: argmax ``|c ∩ target|`` (NEXTSIMILARITYNODE, section 3.9.1);
    - RANDOM_NODE: uniform among all candidates (NEXTRANDOMNODE).

    ``ties_rule`` applies to the argmax modes only (the random modes always draw
    uniformly): ``TIES_UNIFORM`` picks uniformly among the tied candidates;
    ``TIES_SEQUENTIAL`` scans the view in order and lets each later tied
    candidate replace the current choice with probability 1/2 (the one-pass
    "keep the best, on a tie flip a coin" argmax), so late candidates in view
    order are favoured.  The coin flips come from an xorshift generator seeded
    by ``u``.
    """
    w = masks.shape[1]
    count = n_nodes if full_view else len(view)
    best = -1
    ties = 0
    for i in range(count):
        c = i if full_view else view[i]
        if mark[c] == stamp:
            keys[i] = -1
            continue
        key = 0
        if mode != RANDOM_NODE:
            for k in range(w):
                key += popcount64(masks[c, k] & target[k])
            if mode == RANDOM_COVER and key > 0:
                key = 1
        keys[i] = key
        if key > best:
            best = key
            ties = 1
        elif key == best:
            ties += 1
    if ties == 0 or best < 0:
        return -1
    if (mode == GREEDY or mode == RANDOM_COVER) and best <= 0:
        return -1
    if ties_rule == TIES_SEQUENTIAL and (mode == GREEDY or mode == SIMILARITY):
        state = np.uint64(int(u * 9007199254740992.0) | 1)
        pick = -1
        for i in range(count):
            if keys[i] != best:
                continue
            if pick < 0:
                pick = i
                continue
            state ^= state << np.uint64(13)
            state ^= state >> np.uint64(7)
            state ^= state << np.uint64(17)
            if (state >> np.uint64(11)) & np.uint64(1):
                pick = i
        return pick if full_view else view[pick]
    chosen = int(u * ties)
    if chosen >= ties:
        chosen = ties - 1
    seen = 0
    for i in range(count):
        if keys[i] == best:
            if seen == chosen:
                return i if full_view else view[i]
            seen += 1
    return -1


@numba.njit(cache=True)
def update_coverage(p, q, sign, k_p, sub_indptr, sub_topics, masks, cov, unc, atk, uc):
    """Add (``sign=+1``) or remove (``-1``) neighbour ``q``'s topics to ``p``'s coverage counts.

    Keeps, for node ``p``: ``cov[p, t]`` (neighbours covering topic ``t``),
    the bit masks of topics covered fewer than ``k_p`` times (``unc``) and
    exactly ``k_p`` times (``atk``), and the under-covered count ``uc[p]``.
    """
    for j in range(sub_indptr[p], sub_indptr[p + 1]):
        t = sub_topics[j]
        word = t >> 6
        bit = np.uint64(1) << np.uint64(t & 63)
        if masks[q, word] & bit == np.uint64(0):
            continue
        before = cov[p, t]
        after = before + sign
        cov[p, t] = after
        if before < k_p and after >= k_p:
            uc[p] -= 1
            unc[p, word] &= ~bit
        elif before >= k_p and after < k_p:
            uc[p] += 1
            unc[p, word] |= bit
        if after == k_p:
            atk[p, word] |= bit
        else:
            atk[p, word] &= ~bit


@numba.njit(cache=True)
def reset_row(p, k_p, sub_indptr, sub_topics, cov, unc, atk, uc):
    """Recompute ``p``'s masks and under-covered count after its ``K`` changed."""
    for k in range(unc.shape[1]):
        unc[p, k] = np.uint64(0)
        atk[p, k] = np.uint64(0)
    n = 0
    for j in range(sub_indptr[p], sub_indptr[p + 1]):
        t = sub_topics[j]
        word = t >> 6
        bit = np.uint64(1) << np.uint64(t & 63)
        if cov[p, t] < k_p:
            n += 1
            unc[p, word] |= bit
        if cov[p, t] == k_p:
            atk[p, word] |= bit
    uc[p] = n


@numba.njit(cache=True)
def loss_if_removed(atk_row, mask_q):
    """Topics that fall below ``K`` if the neighbour with mask ``mask_q`` leaves."""
    s = 0
    for k in range(atk_row.shape[0]):
        s += popcount64(atk_row[k] & mask_q[k])
    return s
