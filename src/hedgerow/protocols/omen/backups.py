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

__all__ = [
    "BUILDERS",
    "COVERS",
    "PD_PICKS",
    "backup_set",
    "coverage_factor",
    "refresh_entry",
    "uncovered_topics",
]

#: builder name -> kernel code
BUILDERS = {"greedy": 0, "pd": 1}
#: primal-dual subscriber choice -> kernel code
PD_PICKS = {"random": 0, "max-gain": 1, "dual": 2}
#: how lambda-coverage is reached (reading R-4) -> kernel flag
COVERS = {"multi": False, "repeat": True}


@njit(cache=True)
def _rotated_best(
    lo, hi, tsub, taken, slack, tol, tight_only, off, cptr, cloc, count, target,
    best_gain,
):
    """The subscriber of a topic with the most uncovered topics, in rotated order.

    Scans the topic's subscribers ``tsub[lo:hi]`` that are not taken (and, when
    ``tight_only``, whose slack is within ``tol``), starting after the ``off``-th
    of them and wrapping round; the first strict improvement on ``best_gain``
    wins. Returns the candidate index, or -1 if none improves on ``best_gain``.
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
            g = 0
            for q in range(cptr[c], cptr[c + 1]):
                if count[cloc[q]] < target[cloc[q]]:
                    g += 1
            if g > best_gain:
                best_gain = g
                best = c
    return best


@njit(cache=True)
def _build(vtopics, cands, indptr, topics, lam, builder, pick, draws, pos, load, repeat):
    """Kernel: the backup set of a node with sorted topics ``vtopics`` over ``cands``.

    ``pos`` is a scratch array (one entry per topic, all -1 on entry and on exit).
    ``load`` (per global node; empty = no load) prices each candidate at
    ``1 + load`` for the dual-raising primal-dual step (``pick == 2``).
    ``repeat``: run whole single covers (fresh duals each) until every topic
    is held ``min(lam, available)`` times (``cover="repeat"``), instead of one
    multi-cover run.
    """
    m = len(vtopics)
    for i in range(m):
        pos[vtopics[i]] = i
    k = len(cands)
    # local incidence: candidate -> local topic indices, in one pass over each candidate's
    # topics (a candidate shares at most m of them, which bounds the buffer)
    cptr = np.zeros(k + 1, np.int64)
    bound = 0
    for c in range(k):
        bound += min(m, indptr[cands[c] + 1] - indptr[cands[c]])
    cloc = np.empty(bound, np.int64)
    j = 0
    for c in range(k):
        v = cands[c]
        for x in range(indptr[v], indptr[v + 1]):
            p = pos[topics[x]]
            if p >= 0:
                cloc[j] = p
                j += 1
        cptr[c + 1] = j
    cloc = cloc[:j]
    for i in range(m):
        pos[vtopics[i]] = -1
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
    # subscribers of each local topic among the candidates (for primal-dual)
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
    while True:
        n_unc = 0
        for i in range(m):
            if count[i] < target[i]:
                n_unc += 1
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
            continue
        best = -1
        if builder == 0:
            off = int(draws[d % n_draws] * k)
            d += 1
            best_gain = 0
            for r in range(k):
                c = (off + r) % k
                if taken[c]:
                    continue
                g = 0
                for j in range(cptr[c], cptr[c + 1]):
                    if count[cloc[j]] < target[cloc[j]]:
                        g += 1
                if g > best_gain:
                    best_gain = g
                    best = c
        else:
            # a random uncovered topic
            r = int(draws[d % n_draws] * n_unc)
            d += 1
            t = -1
            for i in range(m):
                if count[i] < target[i]:
                    if r == 0:
                        t = i
                        break
                    r -= 1
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
                best = _rotated_best(
                    tptr[t], tptr[t + 1], tsub, taken, slack, tol, True, off,
                    cptr, cloc, count, target, -1,
                )
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
                best = _rotated_best(
                    tptr[t], tptr[t + 1], tsub, taken, slack, 0.0, False, off,
                    cptr, cloc, count, target, 0,
                )
        if best < 0:
            break
        taken[best] = True
        out[n_out] = cands[best]
        n_out += 1
        for j in range(cptr[best], cptr[best + 1]):
            count[cloc[j]] += 1
            total[cloc[j]] += 1
            remaining[cloc[j]] -= 1
    return out[:n_out]


@njit(cache=True)
def _refresh(
    node, pool, online, indptr, topics, lam, builder, pick, draws, pos, stamp, live_subs, load,
    repeat, ready_lam,
):
    """Kernel of ``selectView`` for one entry: dedupe the live pool, build, test readiness."""
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
    if lam <= 0 or n == 0 or len(vt) == 0:
        B = np.empty(0, np.int64)
    else:
        B = _build(vt, keep[:n], indptr, topics, lam, builder, pick, draws, pos, load, repeat)
    if lam <= 0:
        return B, True
    # ready: every topic some other live node holds is held by a member
    for i in range(len(vt)):
        pos[vt[i]] = i
    held = np.zeros(len(vt), np.int64)
    for b in B:
        for x in range(indptr[b], indptr[b + 1]):
            p = pos[topics[x]]
            if p >= 0:
                held[p] += 1
    for i in range(len(vt)):
        pos[vt[i]] = -1
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
) -> tuple[np.ndarray, bool]:
    """``buildBackups(v', candidates)`` of Alg. 4: the backup set and the ready flag (R-6).

    ``ready="cover"``: ready once every topic is held once (eq. 1);
    ``ready="lambda"``: once held ``min(lam, live others)`` times (a λ-backup-set).

    ``pool`` may hold duplicates, offline nodes and ``node`` itself; they are
    dropped.  Ready: every topic of ``node`` that another live node holds
    (``live_subs``, the live subscribers per topic) has a member holding it.
    """
    n_topics = len(live_subs)
    draws = rng.random(2 * max(lam, 1) * int(sub_indptr[node + 1] - sub_indptr[node]) + 4)
    st = _STAMP.get(len(online))
    if st is None:
        st = _STAMP[len(online)] = np.zeros(len(online) + 1, dtype=np.int64)
    return _refresh(
        int(node), np.ascontiguousarray(pool, dtype=np.int64), online, sub_indptr, sub_topics,
        int(lam), BUILDERS[builder], PD_PICKS[pick], draws, _pos(n_topics), st, live_subs,
        _loads(load), COVERS[cover], int(lam) if ready == "lambda" else 1,
    )


_STAMP: dict[int, np.ndarray] = {}
_SCRATCH: dict[int, np.ndarray] = {}


_NO_LOAD = np.zeros(0, dtype=np.int64)


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
    return _build(
        vt, cands, sub_indptr, sub_topics, int(lam), BUILDERS[builder], PD_PICKS[pick],
        draws, _pos(nt), _loads(load), COVERS[cover],
    )


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
