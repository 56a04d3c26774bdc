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


@numba.njit(cache=True)
def topic_bitsets(n_nodes, n_topics, sub_indptr, sub_topics):
    """Per topic, the bit set of its subscribers: ``bits[t, c >> 6]`` has bit ``c & 63``.

    The index :func:`pick_candidate_bits` scores a whole interest view with:
    ``n_topics x ceil(n_nodes / 64)`` words (12.5 MB for 100 topics and a
    million nodes).
    """
    nw = (n_nodes + 63) >> 6
    bits = np.zeros((n_topics, nw), dtype=np.uint64)
    for c in range(n_nodes):
        bit = np.uint64(1) << np.uint64(c & 63)
        for j in range(sub_indptr[c], sub_indptr[c + 1]):
            bits[sub_topics[j], c >> 6] |= bit
    return bits


@numba.njit(cache=True)
def bit_scratch_rows(max_subs):
    """Scratch rows :func:`pick_candidate_bits` needs for targets of ``max_subs`` topics."""
    n_slices = 1
    while (1 << n_slices) <= max_subs:
        n_slices += 1
    return n_slices + 3


@numba.njit(cache=True)
def pick_candidate_bits(
    mode, bits, target, n_nodes, marked, u, ties_rule, scratch, owner=-1, key=0, threshold=0
):
    """:func:`pick_candidate` over the full view, 64 candidates per machine word.

    The same choice as ``pick_candidate(mode, masks, target, view, True, ...)``
    for every mode and tie rule (the same candidates in the same node order,
    the same use of ``u``), without reading a mask per candidate: the topics
    of ``target`` index their subscriber bit sets (``bits``, from
    :func:`topic_bitsets`), a bit-sliced counter adds them (each of a word's
    64 lanes is one candidate's score ``|c ∩ target|``), and a descent over
    the counter's bits, most significant first, narrows the live candidates
    to those of the highest score.  ``marked`` lists the excluded nodes
    (self, neighbours, pending, quarantined; any order, repeats allowed);
    ``scratch`` is a ``uint64`` buffer of ``bit_scratch_rows(|target|)`` rows
    (or more) by ``bits.shape[1]`` words.  A pick costs about
    ``|target| log2(|target|) N / 64`` word operations, in loops the compiler
    vectorises, instead of ``N`` mask reads.

    With ``owner >= 0`` the candidates are ``owner``'s *implicit* interest
    view instead of every node: the nodes ``c`` with
    ``in_implicit_view(key, owner, c, threshold)``, never stored.  The descent
    keeps a score level only if a node of the view reaches it (the nodes of the
    level are tested one by one until one is in the view), and the tied nodes
    are filtered by the view before the choice, so the pick is exactly
    :func:`pick_candidate`'s over the sorted view that
    :func:`implicit_view` would list (same candidates, same order, same use
    of ``u``), at the cost of testing the tied nodes instead of scanning a
    stored view.

    Examples
    --------
    >>> import numpy as np
    >>> masks = np.array([[0b11], [0b01], [0b11], [0b10]], dtype=np.uint64)
    >>> indptr, topics = np.array([0, 2, 3, 5, 6]), np.array([0, 1, 0, 0, 1, 1])
    >>> bits = topic_bitsets(4, 2, indptr, topics)
    >>> scratch = np.zeros((bit_scratch_rows(2), bits.shape[1]), dtype=np.uint64)
    >>> int(pick_candidate_bits(GREEDY, bits, masks[0], 4, np.array([0]), 0.3, 0, scratch))
    2

    Node 0's implicit view of half the nodes under key 0 holds nodes 1 and 3
    but not node 2, so the pick is one of the two tied at one topic, as
    :func:`pick_candidate` over that view would have it:

    >>> half = view_threshold(0.5)
    >>> implicit_view(0, 0, 4, half).tolist()
    [1, 3]
    >>> int(pick_candidate_bits(GREEDY, bits, masks[0], 4, np.array([0]), 0.3, 0, scratch,
    ...                         0, 0, half))
    1
    """
    nw = bits.shape[1]
    nt = 0
    for k in range(target.shape[0]):
        nt += popcount64(target[k])
    topics = np.empty(nt, dtype=np.int64)
    i = 0
    for k in range(target.shape[0]):
        x = target[k]
        while x != np.uint64(0):
            low = x & (~x + np.uint64(1))
            topics[i] = k * 64 + _bit_index(low)
            i += 1
            x ^= low
    n_slices = 0
    if mode == GREEDY or mode == SIMILARITY:
        n_slices = 1
        while (1 << n_slices) <= nt:
            n_slices += 1
    if scratch.shape[0] < n_slices + 3 or scratch.shape[1] < nw:
        scratch = np.zeros((n_slices + 3, nw), dtype=np.uint64)
    live = scratch[0]
    hit = scratch[1]
    carry = scratch[2]
    # the live candidates: every node but the marked ones
    for w in range(nw):
        live[w] = ~np.uint64(0)
    if n_nodes & 63:
        live[nw - 1] = (np.uint64(1) << np.uint64(n_nodes & 63)) - np.uint64(1)
    for j in range(len(marked)):
        c = marked[j]
        live[c >> 6] &= ~(np.uint64(1) << np.uint64(c & 63))
    best = 0
    if mode == RANDOM_COVER:
        found = np.uint64(0)
        for w in range(nw):
            carry[w] = np.uint64(0)
        for j in range(nt):
            row = bits[topics[j]]
            for w in range(nw):
                carry[w] |= row[w]
        for w in range(nw):
            h = live[w] & carry[w]
            hit[w] = h
            found |= h
        if found != np.uint64(0) and owner >= 0 and not _any_in_view(hit, owner, key, threshold):
            found = np.uint64(0)
        if found != np.uint64(0):
            best = 1
            live, hit = hit, live
    elif n_slices > 0:
        for s in range(n_slices):
            srow = scratch[3 + s]
            for w in range(nw):
                srow[w] = np.uint64(0)
        for j in range(nt):
            row = bits[topics[j]]
            for w in range(nw):
                carry[w] = row[w]
            # after j + 1 topics a count has at most bit_length(j + 1) bits: no carry above
            reach = 1
            while (1 << reach) <= j + 1:
                reach += 1
            for s in range(min(reach, n_slices)):
                srow = scratch[3 + s]
                for w in range(nw):
                    old = srow[w]
                    c = carry[w]
                    srow[w] = old ^ c
                    carry[w] = old & c
        for s in range(n_slices - 1, -1, -1):
            srow = scratch[3 + s]
            found = np.uint64(0)
            for w in range(nw):
                h = live[w] & srow[w]
                hit[w] = h
                found |= h
            if found != np.uint64(0) and owner >= 0 and not _any_in_view(hit, owner, key,
                                                                         threshold):
                # no node of the view reaches this level: drop the level's other nodes
                found = np.uint64(0)
                for w in range(nw):
                    live[w] &= ~srow[w]
            if found != np.uint64(0):
                best += 1 << s
                live, hit = hit, live
    if (mode == GREEDY or mode == RANDOM_COVER) and best <= 0:
        return -1
    if owner >= 0:  # the tied nodes of the view only
        for w in range(nw):
            x = live[w]
            while x != np.uint64(0):
                low = x & (~x + np.uint64(1))
                x ^= low
                if not in_implicit_view(key, owner, w * 64 + _bit_index(low), threshold):
                    live[w] ^= low
    ties = 0
    for w in range(nw):
        ties += popcount64(live[w])
    if ties == 0:
        return -1
    if ties_rule == TIES_SEQUENTIAL and (mode == GREEDY or mode == SIMILARITY):
        state = np.uint64(int(u * 9007199254740992.0) | 1)
        pick = -1
        for w in range(nw):
            x = live[w]
            while x != np.uint64(0):
                low = x & (~x + np.uint64(1))
                x ^= low
                if pick < 0:
                    pick = w * 64 + _bit_index(low)
                    continue
                state ^= state << np.uint64(13)
                state ^= state >> np.uint64(7)
                state ^= state << np.uint64(17)
                if (state >> np.uint64(11)) & np.uint64(1):
                    pick = w * 64 + _bit_index(low)
        return pick
    chosen = int(u * ties)
    if chosen >= ties:
        chosen = ties - 1
    for w in range(nw):
        c = popcount64(live[w])
        if chosen >= c:
            chosen -= c
            continue
        x = live[w]
        while True:
            low = x & (~x + np.uint64(1))
            if chosen == 0:
                return w * 64 + _bit_index(low)
            x ^= low
            chosen -= 1
    return -1


@numba.njit(cache=True)
def _bit_index(low):
    """The position of the single set bit of ``low``."""
    b = 0
    while low > np.uint64(1):
        low >>= np.uint64(1)
        b += 1
    return b


@numba.njit(cache=True)
def _mix64(x):
    """splitmix64's finaliser: a bijection of ``uint64`` whose outputs pass as uniform."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def in_implicit_view(key, owner, c, threshold):
    """Whether node ``c`` is in node ``owner``'s implicit interest view.

    Each ordered pair ``(owner, c)``, ``c != owner``, is in the view with
    probability ``threshold / 2**64``, independently of every other pair: a
    counter-based draw, ``_mix64`` of the run's ``key``, ``owner`` and ``c``
    (splitmix64 twice), so the view is the same at every call and is never
    stored.  The view is a uniform random subset of the other nodes whose
    size is binomial (mean ``fraction * (n - 1)``), where a stored view has
    exactly ``round(fraction * (n - 1))`` nodes.

    Examples
    --------
    >>> half = view_threshold(0.5)
    >>> [c for c in range(8) if in_implicit_view(7, 0, c, half)]
    [2, 5, 6, 7]
    """
    if c == owner:
        return False
    h = _mix64(np.uint64(key) + np.uint64(owner) * np.uint64(0x9E3779B97F4A7C15))
    h = _mix64(h ^ (np.uint64(c) + np.uint64(0x632BE59BD9B4E019)))
    return h < np.uint64(threshold)


@numba.njit(cache=True)
def _any_in_view(row, owner, key, threshold):
    """Whether a node of bit set ``row`` is in ``owner``'s implicit view (stops at the first)."""
    for w in range(row.shape[0]):
        x = row[w]
        while x != np.uint64(0):
            low = x & (~x + np.uint64(1))
            x ^= low
            if in_implicit_view(key, owner, w * 64 + _bit_index(low), threshold):
                return True
    return False


@numba.njit(cache=True)
def implicit_view(key, owner, n_nodes, threshold):
    """``owner``'s implicit interest view listed, sorted (:func:`in_implicit_view`).

    What :func:`pick_candidate_bits` with ``owner >= 0`` chooses from; the
    engine never lists it (the tests and a stored copy of the view do).

    Examples
    --------
    >>> len(implicit_view(1, 0, 10_000, view_threshold(0.05)))  # about 5% of 9,999 nodes
    482
    """
    out = np.empty(n_nodes, dtype=np.int64)
    k = 0
    for c in range(n_nodes):
        if in_implicit_view(key, owner, c, threshold):
            out[k] = c
            k += 1
    return out[:k]


def view_threshold(fraction: float) -> np.uint64:
    """The ``threshold`` of :func:`in_implicit_view` for a view of ``fraction`` of the nodes.

    Examples
    --------
    >>> int(view_threshold(0.5)) == 2**63, int(view_threshold(1.0)) == 2**64 - 1
    (True, True)
    """
    return np.uint64(min(int(fraction * 2.0**64), 2**64 - 1))
