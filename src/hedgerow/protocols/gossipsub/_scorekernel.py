"""Peer scoring inside the GossipSub kernel: the v1.1 score of every connection, per heartbeat.

The same arithmetic as the reference path (:class:`~hedgerow.protocols.gossipsub.protocol.
EngineScore` calling :mod:`~hedgerow.protocols.gossipsub.scoring` on the engine's counters
between two calls of the kernel), done by :func:`heartbeat_scores` at the kernel's
``HEARTBEAT`` event, so the kernel no longer stops before every heartbeat and no array over
every (connection, topic) slot is built in Python.  Each step is the reference's, slot by slot
and in the reference's order, so the scores are equal bit for bit:

1. slots that left the kernel's mesh since the last heartbeat are pruned (the P3b penalty of an
   active deficit), slots that joined are grafted at the kernel's graft instant;
2. first and near-first deliveries counted since then (the kernel marks the slots it counted
   on, ``X[17]``) are added at once, capped, first deliveries before near-first ones;
3. behaviour penalties counted since then are added one by one;
4. every ``decay_interval_ms`` passed: a decay tick, then the P3 activation of mesh slots;
5. the score at the heartbeat's instant: the topic sum over the slots in topic order, capped,
   then P6 and P7.

Work is done only where it can change something: the mesh changes and the marked deliveries are
found by comparing eight slots at a time, and a connection's slots are visited only while one
of them is *live* (in the mesh, P3-active, or with a counter not 0); every other slot adds
exactly 0 to the topic sum.  The invalid-message counter (P4) and the application score (P5)
stay 0 on this path, as on the reference one (the engine has no invalid messages and no
application score).

Work is done only where something can change.  Mesh changes and marked slots are found by
comparing eight slots at a time; penalties by the kernel's per-connection marks (``X[18]``); and
only *active* connections are visited: those with a live slot (in the mesh, P3-active, or with a
counter not 0), a behaviour penalty not 0, or a P6 term.  Every other connection's score is
exactly 0, as the reference computes it (each dead slot adds exactly 0 to the topic sum).

The state is one tuple ``Z`` (see :func:`build_state`):

==  =======================  ==========================================================
i   shape, type              what
==  =======================  ==========================================================
0   ``(slots,)`` uint8       the score's mesh flag (the kernel's, as of the last heartbeat)
1   ``(slots,)`` uint8       P3 active (set at a decay tick, cleared by a prune or graft)
2   ``(slots,)`` uint8       live (any of the above, or a counter not 0)
3   ``(slots, 4)`` float     first deliveries, mesh deliveries, mesh failure penalty, graft
4   ``(slots, 2)`` float     the kernel's running first and near-first counts last read
5   ``(nnz,)`` int32         live slots of the connection
6   ``(nnz, 2)`` float       behaviour penalty, the kernel's running count last read
7   ``(nnz,)`` float         ``w6 x P6`` (fixed: the connections do not change)
8   ``(rows, N_COLS)``       the topic table (:data:`TOPIC_COLUMNS`), row = topic (capped)
9   ``(N_SCALARS,)`` float   the scalars (``Z_*``)
10  ``(nnz,)`` uint8         active (visited in connection order, eight flags at once)
==  =======================  ==========================================================
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from hedgerow.protocols.gossipsub.scoring import PeerScoreParams, ScoreCounters, ip_colocation

#: the topic table's columns (``Z[8][row, c]``): what :meth:`PeerScoreParams.topic_table` holds
TOPIC_COLUMNS = ("scored", "w1", "w2", "w3", "w3b", "time_in_mesh_quantum_ms", "time_in_mesh_cap",
                 "first_deliveries_cap", "mesh_deliveries_cap", "mesh_deliveries_threshold",
                 "mesh_deliveries_activation_ms", "first_deliveries_decay",
                 "mesh_deliveries_decay", "mesh_failure_penalty_decay")
(C_SCORED, C_W1, C_W2, C_W3, C_W3B, C_QUANTUM, C_TIM_CAP, C_FD_CAP, C_MD_CAP, C_MD_THR, C_ACT,
 C_FD_DECAY, C_MD_DECAY, C_MFP_DECAY) = range(len(TOPIC_COLUMNS))

#: the scalars (``Z[9][i]``): started (0/1), the next decay instant, the topic score cap, some
#: P6 term not 0 (0/1), w7, P7's threshold, P7's decay, decay to zero, the decay interval
(Z_STARTED, Z_NEXT_DECAY, Z_CAP, Z_P6_ON, Z_W7, Z_P7_THR, Z_P7_DECAY, Z_DECAY_TO_ZERO,
 Z_INTERVAL) = range(9)
N_SCALARS = 9

#: the per-slot float columns (``Z[3][s, c]``)
F_FD, F_MD, F_MFP, F_GRAFT = 0, 1, 2, 3


def build_state(params: PeerScoreParams, conn_node: np.ndarray, n_topics: int,
                ip_group: np.ndarray | None = None,
                n_slots: int | None = None) -> tuple[np.ndarray, ...]:
    """The state ``Z`` of :func:`heartbeat_scores` for ``len(conn_node)`` connections, at zero.

    ``conn_node`` is the scoring node of every connection (CSR entry), ``ip_group`` the IP
    group of its remote peer (P6; ``None``: none shared), as
    :class:`~hedgerow.protocols.gossipsub.protocol.EngineScore` takes them; ``n_slots`` the
    (connection, topic) slots (:func:`~hedgerow.protocols.gossipsub._kernel.slot_map`;
    ``None``: every connection x every topic).

    Examples
    --------
    >>> from hedgerow.protocols.gossipsub.scoring import TopicScoreParams
    >>> Z = build_state(PeerScoreParams(topics=(TopicScoreParams(),)), np.array([0, 1]), 2)
    >>> Z[0].shape, Z[3].shape, Z[8].shape      # 2 connections x 2 topics; 1 topic + the rest
    ((4,), (4, 4), (2, 14))
    """
    nnz = len(conn_node)
    if n_slots is None:
        n_slots = nnz * n_topics
    tab = params.topic_table()
    table = np.column_stack([np.asarray(tab[c], dtype=np.float64) for c in TOPIC_COLUMNS])
    p6 = np.zeros(nnz)
    if params.ip_colocation_factor_weight != 0:
        c = ScoreCounters.empty(slot_conn=[], slot_topic=[], conn_node=conn_node,
                                ip_group=ip_group)
        p6 = params.ip_colocation_factor_weight * ip_colocation(
            c, params.ip_colocation_factor_threshold)
    scal = np.zeros(N_SCALARS)
    scal[Z_CAP] = params.topic_score_cap
    # P6 is added only where some connection has a term (``w6 x 0`` adds exactly nothing)
    scal[Z_P6_ON] = float(bool((p6 != 0.0).any()))
    scal[Z_W7] = params.behaviour_penalty_weight
    scal[Z_P7_THR] = params.behaviour_penalty_threshold
    scal[Z_P7_DECAY] = params.behaviour_penalty_decay
    scal[Z_DECAY_TO_ZERO] = params.decay_to_zero
    scal[Z_INTERVAL] = params.decay_interval_ms
    zf = np.zeros((n_slots, 4))
    # a connection with a P6 term is active for the whole run
    active = (p6 != 0.0).astype(np.uint8)
    return (np.zeros(n_slots, np.uint8), np.zeros(n_slots, np.uint8),
            np.zeros(n_slots, np.uint8), zf, np.zeros((n_slots, 2)),
            np.zeros(nnz, np.int32), np.zeros((nnz, 2)), np.ascontiguousarray(p6),
            np.ascontiguousarray(table), scal, active)


def empty_state() -> tuple[np.ndarray, ...]:
    """A state of no connection (the kernel's argument when it does not score in place)."""
    return build_state(PeerScoreParams(), np.zeros(0, np.int64), 0)


def counters_of(Z: tuple[np.ndarray, ...], conn_node: np.ndarray, n_topics: int,
                ip_group: np.ndarray | None = None,
                dense: np.ndarray | None = None) -> ScoreCounters:
    """The state as :class:`~hedgerow.protocols.gossipsub.scoring.ScoreCounters` (copies), as
    the reference path would hold them after the same heartbeats (``mesh_time_ms`` apart, which
    the score at an instant does not read: 0 here), over every connection x every topic.

    ``dense`` is each of the state's slots' place ``e * T + tp`` in that table (``None``: the
    state has every slot); the slots the state lacks hold the reference's initial values.
    """
    nnz = len(conn_node)
    c = ScoreCounters.empty(slot_conn=np.repeat(np.arange(nnz), n_topics),
                            slot_topic=np.tile(np.arange(n_topics), nnz), conn_node=conn_node,
                            ip_group=ip_group)
    at = slice(None) if dense is None else dense
    c.in_mesh[at] = Z[0].astype(bool)
    c.mesh_deliveries_active[at] = Z[1].astype(bool)
    c.first_deliveries[at] = Z[3][:, F_FD]
    c.mesh_deliveries[at] = Z[3][:, F_MD]
    c.mesh_failure_penalty[at] = Z[3][:, F_MFP]
    c.graft_ms[at] = Z[3][:, F_GRAFT]
    c.behaviour_penalty[:] = Z[6][:, 0]
    return c


# --------------------------------------------------------------------------- numpy's min/max
@numba.njit(cache=True, inline="always")
def _np_min(a, b):
    """``np.minimum(a, b)`` for two floats (NaN propagates, ``a`` on ties)."""
    return a if (a <= b or a != a) else b


@numba.njit(cache=True, inline="always")
def _np_max(a, b):
    """``np.maximum(a, b)`` for two floats (NaN propagates, ``a`` on ties)."""
    return a if (a >= b or a != a) else b


@numba.njit(cache=True, inline="always")
def _activate(Z, e):
    """Mark connection ``e`` active: its score is computed at every heartbeat."""
    Z[10][e] = 1


@numba.njit(cache=True, inline="always")
def _relive(Z, s, e):
    """Recompute slot ``s``'s live flag (its connection ``e``'s count follows; a connection
    with a live slot is active)."""
    zf = Z[3]
    live = np.uint8(1 if (Z[0][s] or Z[1][s] or zf[s, F_FD] != 0.0 or zf[s, F_MD] != 0.0
                          or zf[s, F_MFP] != 0.0) else 0)
    if live != Z[2][s]:
        Z[2][s] = live
        if live:
            Z[5][e] += 1
            _activate(Z, e)
        else:
            Z[5][e] -= 1


@numba.njit(cache=True)
def heartbeat_scores(indices_row, sub, X, Z, now, T, slot_ptr, slot_topic, slot_conn,
                     parallel=False):
    """Bring the score's counters up to the kernel's at ``now`` and write every connection's
    score into ``X[8]`` (steps 1-5 of the module's description).

    ``indices_row`` is the scoring node of every CSR entry, ``sub`` the ``(n, T)``
    subscriptions; ``X`` the kernel's per-connection tables (mesh flags ``X[0]``, graft
    instants ``X[5]``, running first and near-first counts ``X[6]``, ``X[7]``, behaviour
    penalties ``X[11]``, the marks of the slots and connections counted on ``X[17]``,
    ``X[18]``); ``slot_ptr``, ``slot_topic``, ``slot_conn`` the slots' map
    (:func:`~hedgerow.protocols.gossipsub._kernel.slot_map`); ``parallel``: the score pass
    (steps 4-5) over numba's threads (:func:`_score_parallel`, the same scores bit for bit).
    """
    flag, graft_t, first_k, near_k, pen_k, score = X[0], X[5], X[6], X[7], X[11], X[8]
    touched, penalised = X[17], X[18]
    z_in, z_act, zf, zlast, zc, tab, zs = Z[0], Z[1], Z[3], Z[4], Z[6], Z[8], Z[9]
    nnz = len(score)
    n_slots = len(slot_topic)
    if zs[Z_STARTED] == 0.0:
        zs[Z_STARTED] = 1.0
        zs[Z_NEXT_DECAY] = now + zs[Z_INTERVAL]
    n_rows = tab.shape[0]
    # 1-2. mesh changes (prune what left, graft what joined), then the deliveries counted since
    # the last heartbeat on the slots the kernel marked; eight slots compared at once
    words = n_slots // 8
    fw = flag[:words * 8].view(np.uint64)
    zw = z_in[:words * 8].view(np.uint64)
    tw = touched[:words * 8].view(np.uint64)
    for i in range(words + 1):
        if i < words and fw[i] == zw[i] and tw[i] == 0:
            continue
        for s in range(i * 8, min(i * 8 + 8, n_slots)):
            e = slot_conn[s]
            tp = slot_topic[s]
            r = min(tp, n_rows - 1)
            now_in = np.uint8(1 if (flag[s] and sub[indices_row[e], tp]) else 0)
            if now_in != z_in[s]:
                if z_in[s]:  # pruned: a deficit of an active P3 becomes sticky (P3b)
                    thr = tab[r, C_MD_THR]
                    md = zf[s, F_MD]
                    deficit = thr - md if (z_act[s] and md < thr) else 0.0
                    zf[s, F_MFP] += deficit * deficit
                    z_act[s] = 0
                    z_in[s] = 0
                else:  # grafted at the kernel's instant
                    z_in[s] = 1
                    zf[s, F_GRAFT] = graft_t[s]
                    z_act[s] = 0
                _relive(Z, s, e)
    for i in range(words + 1):
        if i < words and tw[i] == 0:
            continue
        for s in range(i * 8, min(i * 8 + 8, n_slots)):
            if not touched[s]:
                continue
            touched[s] = 0
            e = slot_conn[s]
            tp = slot_topic[s]
            r = min(tp, n_rows - 1)
            kf = np.rint(first_k[s] - zlast[s, 0])
            kn = np.rint(near_k[s] - zlast[s, 1])
            zlast[s, 0] = first_k[s]
            zlast[s, 1] = near_k[s]
            if tab[r, C_SCORED] == 0.0:
                continue
            if kf > 0:
                zf[s, F_FD] = _np_min(zf[s, F_FD] + kf, tab[r, C_FD_CAP])
                if z_in[s]:
                    zf[s, F_MD] = _np_min(zf[s, F_MD] + kf, tab[r, C_MD_CAP])
            if kn > 0 and z_in[s]:
                zf[s, F_MD] = _np_min(zf[s, F_MD] + kn, tab[r, C_MD_CAP])
            _relive(Z, s, e)
    # 3. behaviour penalties counted since (the connections the kernel marked), one by one
    cw = penalised[:(nnz // 8) * 8].view(np.uint64)
    for i in range(nnz // 8 + 1):
        if i < nnz // 8 and cw[i] == 0:
            continue
        for e in range(i * 8, min(i * 8 + 8, nnz)):
            if not penalised[e]:
                continue
            penalised[e] = 0
            d = pen_k[e] - zc[e, 1]
            if d > 0:
                for _ in range(np.int64(np.rint(d))):
                    zc[e, 0] += 1.0
            zc[e, 1] = pen_k[e]
            if zc[e, 0] != 0.0:
                _activate(Z, e)
    # 4-5. the decay ticks due, then the score, over the active connections
    ticks = 0
    while now >= zs[Z_NEXT_DECAY]:
        ticks += 1
        zs[Z_NEXT_DECAY] += zs[Z_INTERVAL]
    if parallel:
        _score_parallel(Z, score, slot_ptr, slot_topic, ticks, now)
    else:
        _score_serial(Z, score, slot_ptr, slot_topic, ticks, now)


@numba.njit(cache=True, inline="always")
def _score_block(Z, score, slot_ptr, slot_topic, aw, b, ticks, now):
    """Steps 4-5 for the connections ``8 b .. 8 b + 7``: each active one's decay ticks, then its
    score.  A connection's work reads and writes only its own slots and counters, so blocks
    can run in any order, or at once, with the same result bit for bit."""
    z_in, z_act, z_live, zf = Z[0], Z[1], Z[2], Z[3]
    nlive, zc, p6, tab, zs, active = Z[5], Z[6], Z[7], Z[8], Z[9], Z[10]
    nnz = len(score)
    if 8 * b + 8 <= nnz and aw[b] == 0:
        return  # none of the eight active
    n_rows = tab.shape[0]
    dz = zs[Z_DECAY_TO_ZERO]
    cap = zs[Z_CAP]
    p6_on = zs[Z_P6_ON] != 0.0
    w7, thr7, decay7 = zs[Z_W7], zs[Z_P7_THR], zs[Z_P7_DECAY]
    for e in range(8 * b, min(8 * b + 8, nnz)):
        if not active[e]:
            continue
        for _ in range(ticks):
            bp = zc[e, 0] * decay7
            zc[e, 0] = 0.0 if bp < dz else bp
        total = 0.0
        if nlive[e]:
            for s in range(slot_ptr[e], slot_ptr[e + 1]):  # its slots, in topic order
                tp = slot_topic[s]
                if not z_live[s]:
                    continue
                r = min(tp, n_rows - 1)
                if ticks:
                    scored = tab[r, C_SCORED] != 0.0
                    for _ in range(ticks):
                        for c, dc in ((F_FD, C_FD_DECAY), (F_MD, C_MD_DECAY),
                                      (F_MFP, C_MFP_DECAY)):
                            x = zf[s, c]
                            if x != 0.0:
                                x = x * tab[r, dc]
                                zf[s, c] = 0.0 if (x < dz and scored) else x
                        if z_in[s] and scored and now - zf[s, F_GRAFT] > tab[r, C_ACT]:
                            z_act[s] = 1
                    _relive(Z, s, e)
                    if not z_live[s]:
                        continue
                out = tab[r, C_W2] * _np_min(zf[s, F_FD], tab[r, C_FD_CAP])
                since = now - zf[s, F_GRAFT]
                if z_in[s]:
                    out += tab[r, C_W1] * _np_min(since / tab[r, C_QUANTUM], tab[r, C_TIM_CAP])
                if z_act[s] or (z_in[s] and since > tab[r, C_ACT]):
                    deficit = _np_max(tab[r, C_MD_THR] - zf[s, F_MD], 0.0)
                    out += tab[r, C_W3] * deficit * deficit
                if zf[s, F_MFP] != 0.0:
                    out += tab[r, C_W3B] * zf[s, F_MFP]
                total += out
        if cap > 0:
            total = _np_min(total, cap)
        if p6_on:
            total += p6[e]
        excess = _np_max(zc[e, 0] - thr7, 0.0)
        total += w7 * excess * excess
        score[e] = total
        if not (nlive[e] or zc[e, 0] != 0.0 or p6[e] != 0.0):
            active[e] = 0  # nothing left to change its score: exactly 0 until it is active


@numba.njit(cache=True)
def _score_serial(Z, score, slot_ptr, slot_topic, ticks, now):
    """Steps 4-5 over every block of eight connections, in order, on this thread."""
    nnz = len(score)
    aw = Z[10][:(nnz // 8) * 8].view(np.uint64)
    for b in range((nnz + 7) // 8):
        _score_block(Z, score, slot_ptr, slot_topic, aw, b, ticks, now)


@numba.njit(cache=True, parallel=True)
def _score_parallel(Z, score, slot_ptr, slot_topic, ticks, now):
    """:func:`_score_serial` with the blocks shared among numba's threads: each connection's
    arithmetic is the same, on its own state, so the scores are the same bit for bit."""
    nnz = len(score)
    aw = Z[10][:(nnz // 8) * 8].view(np.uint64)
    for b in numba.prange((nnz + 7) // 8):
        _score_block(Z, score, slot_ptr, slot_topic, aw, b, ticks, now)


def check_native(score_fn: Any) -> bool:
    """Whether a score function asks to be evaluated in the kernel (``score_fn.native``)."""
    return bool(getattr(score_fn, "native", False)) and isinstance(
        getattr(score_fn, "params", None), PeerScoreParams)


__all__ = ["TOPIC_COLUMNS", "build_state", "check_native", "counters_of", "empty_state",
           "heartbeat_scores"]

