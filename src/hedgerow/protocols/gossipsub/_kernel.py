"""numba kernel of GossipSub on the contended network (see :mod:`hedgerow.protocols.gossipsub`).

One discrete-event simulation holds data copies, control messages and the
heartbeats of every node.  Events live in a 4-ary heap on arrays (as the
contended dissemination kernel's), keyed by ``(time, key)``; ``key`` packs the
event's kind in its top bits and a running sequence number below, so events
at one instant are handled by kind (publications, data copies, validated
messages, control messages, heartbeats last), then in the order they were
scheduled.  Each event carries three integers ``a, b, c``:

==========  =====================================================================
kind        ``a, b, c``
==========  =====================================================================
PUBLISH     ``a`` = message; its publisher publishes it
DATA        ``a`` = CSR entry ``v -> w`` it travels on, ``b`` = message, ``c`` =
            ``via | wait_ns << 1`` (``via`` 1 = an answer to an IWANT; ``wait_ns``
            the ns the copy queued on ``v``'s uplink)
READY       ``a`` = node, ``b`` = message, ``c`` = the node's entry toward the
            peer it got the message from (``-1`` at the publisher): validated,
            it forwards
CONTROL     ``a`` = CSR entry, ``b`` = ``kind | topic << 3``, ``c`` = ``offset << 16 |
            count`` of its message ids in the id buffer (a PRUNE's: the nodes of its
            peer-exchange records)
HEARTBEAT   ``a`` = heartbeat number; with synchronised phases every node runs its
            heartbeat, in an order drawn for that heartbeat; with random phases
            only the run's own bookkeeping (scores, mesh-size samples)
NODE_HB     ``a`` = node (random phases only): that node's heartbeat
==========  =====================================================================

With peer scoring the kernel marks the slots it counted a first or near-first delivery on
(``X[17]``) and the connections it penalised (``X[18]``), and with
``P[P_SCORE_IN_KERNEL]`` computes every connection's score (``X[8]``) at each ``HEARTBEAT``
itself (:mod:`hedgerow.protocols.gossipsub._scorekernel`, state ``Z``).

A node's message-cache windows are counted by its own heartbeats (``X[16]``),
so with random phases each node shifts its cache at its own instants.

Per (connection, topic) *slots* (``e`` the CSR entry ``v -> w``, read as "``v``'s view
of ``w`` on topic ``t``") hold the mesh flag, the prune backoff and the counters peer
scoring reads; they exist only for the topics both ends may use (:func:`slot_map`,
``G[16:19]``: ``slot_ptr``, ``slot_topic``, ``slot_conn``), looked up by :func:`_slot`;
per (node, topic) rows hold the mesh (or fanout) peer list, its size and the last
publication instant.
An uplink is FIFO: a message's schedule is fixed when it is queued (start
when every earlier one has left, ``bytes / rate`` on the wire, then the
link's delay).  A data copy sent to a node that already has the message (and
will not have forgotten it by the copy's arrival) can only be a duplicate: it
is counted when sent and never enters the heap, the mesh flag its scoring
counter reads taken at that instant.  An IDONTWANT's only effect is that its
receiver remembers the id from the arrival on: it is written into the
receiver's ring of the connection (the last ``idontwant_memory`` ids sent on
it, each with its arrival instant) when sent, with no event.

The helpers called per event allocate nothing and are compiled without
numba's reference counting (``_nrt=False``): they only borrow the arrays the
driver :func:`advance` holds, and the atomic increments and decrements of
passing tuples of arrays to them took half the run time.

The per-connection tables are far larger than the caches, so the kernel asks for lines ahead
of their use (:func:`hedgerow.gossip._prefetch._prefetch`, a hint that changes no value): the next
node's rows during a synchronised heartbeat (:func:`_prefetch_node`), the peers' ends of a
heartbeat's RPCs, and the IDONTWANT rings a node writes or scans.  A ring is scanned only where
the peer has the message at all (:func:`_unwanted`).

Churn is one flag per node (``G[11]``, set by the engine's ``set_online``
between two calls of :func:`advance`): a message arriving at an offline node
is dropped (``S[S_OFFLINE]`` counts them), an offline node runs no heartbeat,
and no heartbeat grafts or gossips to one.

Each (node, topic) row ``r`` keeps the entries whose peer subscribes to the topic
(``G[14]``, ``G[15]``: ``cidx[cptr[r]:cptr[r + 1]]``, :func:`candidate_lists`), in entry
order: heartbeats, publications and peer exchange read them instead of testing every
connection, with the same draws.  An IHAVE that can change nothing at its receiver but its
count against ``max_ihave_messages`` (:func:`_ihave_moot`) is handled when sent, its arrival
kept in ``W[17]`` for that count (:func:`_skip_ihaves`); ``F[4]`` is the next synchronised
heartbeat and ``F[5]`` the instant the current call runs to.

Opportunistic grafting (``P_OG_*``, v1.1 with scoring) runs in a node's heartbeat after the
outbound quota, every ``P_OG_TICKS``-th of its own heartbeats; peer exchange (``P_PX``) fills
a PRUNE sent above ``D_hi`` or in answer to a GRAFT into a full mesh with peer records, which
the receiver counts (``S_PX_*``): the connection graph is fixed, so no connection is opened.

Control RPCs (``P_CONTROL_RPC``, the parameter ``control_rpc``): go-libp2p-pubsub's
heartbeat gathers its GRAFTs and PRUNEs per peer (``sendGraftPrune``) and its IHAVEs per peer
(``emitGossip`` -> ``enqueueGossip``), and sends each peer one RPC that piggybacks its gossip
(``sendRPC``, ``flush``); ``HandleRPC`` answers an RPC's IHAVEs, IWANTs and GRAFTs with one RPC
of the IWANT ids of all its IHAVEs, the answered messages and the PRUNEs.  The JS
implementation (``@libp2p/gossipsub``: ``sendGraftPrune``, ``flush``, ``sendRpc``,
``handleControlMessage``) does the same.  So the default, ``per-peer``, stages the control
messages of a heartbeat (and of the answer to an RPC) in ``W[13:17]`` and sends one ``RPC``
event per peer: its size is the sum of its parts as single messages less the RPC framing they
share, its ids carry the parts (``kind | topic << 3``, count, ids) in go's order of handling,
and it is counted as the control messages it carries (as the JS trace counts them).  A peer
with one part gets it alone, which is the same RPC.  ``per-message`` (every control message its
own RPC, what Lean Gossip's ``meshsub.py`` does) keeps the runs from before bit for bit.  The
answered messages are data copies of their own in both modes.

Random choices come from a splitmix64 sequence whose state is seeded from the
caller's :class:`numpy.random.Generator` (one 64-bit draw), so a run is a
function of the seed.  No Python runs per message.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from hedgerow.gossip._prefetch import _prefetch
from hedgerow.model.parallel import launch_threads
from hedgerow.model.sorted_search import lower_bound
from hedgerow.protocols.gossipsub._scorekernel import heartbeat_scores

#: how the per-event helpers are compiled: cached, and without reference counting (numba's
#: ``_nrt`` option, see the module docstring); a mapping so the type checker reads it as keywords
_HELPER_JIT: dict[str, Any] = {"cache": True, "_nrt": False}

PUBLISH = 0
DATA = 1
READY = 2
CONTROL = 3
HEARTBEAT = 4
NODE_HEARTBEAT = 5

KIND_SHIFT = 58

IHAVE = 0
IWANT = 1
GRAFT = 2
PRUNE = 3
IDONTWANT = 4
CONTROL_KINDS = ("ihave", "iwant", "graft", "prune", "idontwant")
#: a peer's SUBSCRIBE, sent on every connection at t = 0 when ``graft_on_subscribe`` is set
#: (not counted among the control kinds, never logged)
SUBSCRIBE = 5
#: one RPC carrying several control messages to one peer (``control_rpc`` per-peer): its ids
#: in the id buffer are its parts, each ``kind | topic << 3``, its id count, then its ids, in
#: go-libp2p-pubsub's order of handling (IHAVE, IWANT, GRAFT, PRUNE)
RPC = 6
#: the log's kinds beyond the control kinds: a data copy forwarded or published, an IWANT answer
LOG_DATA = 5
LOG_IWANT_ANSWER = 6

#: the parameter vector's layout (``P[i]``)
P_D, P_DLO, P_DHI, P_DLAZY, P_DSCORE, P_DOUT = 0, 1, 2, 3, 4, 5
P_HB, P_MCLEN, P_MCGOSSIP, P_GFACTOR, P_FANOUT_TTL, P_SEEN_TTL = 6, 7, 8, 9, 10, 11
P_BACKOFF, P_RETRANS, P_FLOOD, P_IDW, P_VARIANT = 12, 13, 14, 15, 16
P_MAX_IHAVE_LEN, P_MAX_IHAVE_MSGS, P_HEADER, P_ID_BYTES, P_TOPIC_BYTES = 17, 18, 19, 20, 21
P_VAL_MS, P_VAL_PER_BYTE, P_GOSSIP_THR, P_PUBLISH_THR, P_MESH_WINDOW, P_WARMUP = (
    22, 23, 24, 25, 26, 27)
P_SCORING, P_LOSS, P_JITTER, P_GRAFT_ON_SUB, P_MAX_PRUNE = 28, 29, 30, 31, 32
#: attackers (``G[12]`` their flags): the topic they drop (-1: every topic), the publisher
#: whose messages they drop (-1: every publisher's), when they start dropping, the most a
#: sybil waits beyond a PRUNE's backoff before grafting again
P_ATK_TOPIC, P_ATK_TARGET, P_ATK_START, P_ATK_REGRAFT = 33, 34, 35, 36
#: how long a node waits for a message it asked for with IWANT before the promise is broken
P_FOLLOWUP = 37
#: message slots' delay-histogram bin (ms); heartbeat phases (0 sync, 1 random)
P_HIST_BIN, P_HB_PHASE = 38, 39
#: opportunistic grafting (v1.1, with scoring): every ``P_OG_TICKS``-th heartbeat of a node, a
#: mesh whose median peer score is below ``P_OG_THR`` grafts up to ``P_OG_PEERS`` peers scored
#: above that median
P_OG_TICKS, P_OG_PEERS, P_OG_THR = 40, 41, 42
#: peer exchange (v1.1): PRUNEs carry up to ``P_PRUNE_PEERS`` peer records of
#: ``P_PX_RECORD_BYTES`` each when ``P_PX`` is set; a receiver takes them from a pruner scored
#: at least ``P_ACCEPT_PX_THR``
P_PX, P_PRUNE_PEERS, P_PX_RECORD_BYTES, P_ACCEPT_PX_THR = 43, 44, 45, 46
#: peer scores computed in the kernel at each heartbeat (:mod:`._scorekernel`, state ``Z``)
#: instead of by the caller between two calls of :func:`advance`
P_SCORE_IN_KERNEL = 47
#: a heartbeat's control messages to one peer leave as one RPC (1, ``control_rpc`` per-peer, as
#: go-libp2p-pubsub and the JS implementation send them), and so do the IWANT and PRUNEs
#: answering one RPC; 0: each control message is an RPC of its own
P_CONTROL_RPC = 48
#: the in-kernel scores' pass over the connections runs on numba's threads (1; the same scores
#: bit for bit, :func:`~hedgerow.protocols.gossipsub._scorekernel.heartbeat_scores`)
P_SCORE_PARALLEL = 49
N_PARAMS = 50

#: an attacker's flags (``G[12]``, per node): ``ATK_SYBIL`` runs the hardening evaluation's
#: sybil (it grafts every peer it can, accepts every GRAFT, sends no IHAVE, ignores IHAVE and
#: IWANT, keeps no mesh bounds); ``ATK_DROP`` forwards nothing of the messages the attack
#: names (``P_ATK_TOPIC``, ``P_ATK_TARGET``) from ``P_ATK_START`` on
ATK_SYBIL = 1
ATK_DROP = 2
#: a sybil that announces what it receives (an IHAVE to every peer at once, and at every
#: heartbeat as an honest node gossips) and serves no IWANT: it caches the messages it drops
#: and grafts nobody (broken promises, P7)
ATK_LIAR = 4

#: the integer scalars' layout (``S[i]``)
S_HEAP, S_SEQ, S_IDS, S_HBC, S_SAMPLES, S_VIOL, S_IWANT_SERVED, S_OFFLINE = 0, 1, 2, 3, 4, 5, 6, 7
S_FREE, S_PEND, S_LIVE, S_LIVE_PEAK = 8, 9, 10, 11
#: opportunistic grafts sent; peer exchange: records received, records taken (the pruner
#: scored at least the accept-PX threshold), and of those the peers the receiver is not
#: connected to (the dials go-libp2p-pubsub's ``pxConnect`` would start)
S_OG_GRAFTS, S_PX_OFFERED, S_PX_ACCEPTED, S_PX_NEW = 12, 13, 14, 15
#: per-peer RPCs: 1 while control messages are staged (a heartbeat, or the answer to an RPC),
#: and the parts staged (``W[13]``)
S_STAGE, S_PARTS = 16, 17
N_SCALARS = 18

#: the per-message tuple's layout (``M[i]``): the publications, the per-message counters, the
#: rows of the messages' slots (first arrival, hops, parent, queueing delay per node), the slot
#: bookkeeping and the folded measures of released slots
M_ARRIVAL, M_HOPS, M_QDELAY, M_PARENT = 5, 6, 8, 10
M_SLOT_OF, M_REFS, M_FREE, M_FOLD, M_HIST, M_SLOT_MSG, M_PEND, M_PENDING = (
    12, 13, 14, 15, 16, 17, 18, 19)
#: the columns of ``M[M_FOLD]``, per message, over the subscribers other than the publisher
#: that it reached: how many, and the sums of their delay (ms), hops and queueing delay (ms);
#: column ``FOLD_REACHED`` counts every node that has it (the publisher included)
FOLD_GOT, FOLD_REACHED, FOLD_DELAY, FOLD_HOPS, FOLD_QDELAY = 0, 1, 2, 3, 4

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_SEQ_MASK = (1 << KIND_SHIFT) - 1
#: the count's bits of a per-heartbeat counter (:func:`_count`)
_COUNT_MASK = np.int64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def _uniform(rs):
    """The next uniform in ``[0, 1)`` of the splitmix64 sequence held in ``rs[0]``."""
    rs[0] += _GAMMA
    x = rs[0]
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    x = x ^ (x >> _S31)
    return np.float64(x >> _S11) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, inline="always")
def _below(ta, ka, tb, kb):
    return ta < tb or (ta == tb and ka < kb)


@numba.njit(**_HELPER_JIT)
def _push(H, S, t, kind, a, b, c):
    """Insert an event (capacity checked by the caller)."""
    h_t, h_k, h_a, h_b, h_c = H
    k = (np.int64(kind) << KIND_SHIFT) | S[S_SEQ]
    S[S_SEQ] += 1
    i = S[S_HEAP]
    S[S_HEAP] = i + 1
    while i > 0:
        par = (i - 1) >> 2
        if _below(t, k, h_t[par], h_k[par]):
            h_t[i] = h_t[par]
            h_k[i] = h_k[par]
            h_a[i] = h_a[par]
            h_b[i] = h_b[par]
            h_c[i] = h_c[par]
            i = par
        else:
            break
    h_t[i] = t
    h_k[i] = k
    h_a[i] = a
    h_b[i] = b
    h_c[i] = c


@numba.njit(**_HELPER_JIT)
def _pop(H, S):
    """Remove the root (read it first)."""
    h_t, h_k, h_a, h_b, h_c = H
    size = S[S_HEAP] - 1
    S[S_HEAP] = size
    if size == 0:
        return
    t = h_t[size]
    k = h_k[size]
    a = h_a[size]
    b = h_b[size]
    c = h_c[size]
    i = 0
    while True:
        ch = 4 * i + 1
        if ch >= size:
            break
        best = ch
        bt = h_t[ch]
        bk = h_k[ch]
        last = min(ch + 4, size)
        for j in range(ch + 1, last):
            if _below(h_t[j], h_k[j], bt, bk):
                best = j
                bt = h_t[j]
                bk = h_k[j]
        if _below(bt, bk, t, k):
            h_t[i] = bt
            h_k[i] = bk
            h_a[i] = h_a[best]
            h_b[i] = h_b[best]
            h_c[i] = h_c[best]
            i = best
        else:
            break
    h_t[i] = t
    h_k[i] = k
    h_a[i] = a
    h_b[i] = b
    h_c[i] = c


@numba.njit(cache=True)
def _grow_heap(H, S, need):
    """The heap with room for ``need`` more events (the same arrays when they have it)."""
    h_t, h_k, h_a, h_b, h_c = H
    size = S[S_HEAP]
    cap = len(h_t)
    if size + need <= cap:
        return H
    while cap < size + need:
        cap *= 2
    nt = np.empty(cap, dtype=np.float64)
    nk = np.empty(cap, dtype=np.int64)
    na = np.empty(cap, dtype=h_a.dtype)
    nb = np.empty(cap, dtype=h_b.dtype)
    nc = np.empty(cap, dtype=np.int64)
    nt[:size] = h_t[:size]
    nk[:size] = h_k[:size]
    na[:size] = h_a[:size]
    nb[:size] = h_b[:size]
    nc[:size] = h_c[:size]
    return (nt, nk, na, nb, nc)


@numba.njit(cache=True)
def _grow_ids(idb, H, S, need, pin_off, pin_cnt):
    """The id buffer with room for ``need`` more ids; returns ``(buffer, pinned offset)``.

    When full, the lists of the pending CONTROL events (and the pinned list
    ``pin_off, pin_cnt`` of the event being handled) are copied to the front
    of a buffer at least twice as large as what they use and at least as
    large as the heap.
    """
    top = S[S_IDS]
    if top + need <= len(idb):
        return idb, pin_off
    h_k, h_c = H[1], H[4]
    live = pin_cnt
    for i in range(S[S_HEAP]):
        if (h_k[i] >> KIND_SHIFT) == CONTROL:
            live += h_c[i] & 0xFFFF
    cap = len(idb)
    # at least twice what stays, and at least the pending events, so that the pass over the
    # heap a compaction costs is paid for by as many ids written before the next one
    while cap < 2 * (live + need) or cap < S[S_HEAP]:
        cap *= 2
    nb = np.empty(cap, dtype=np.int32)
    top = 0
    for j in range(pin_cnt):
        nb[top + j] = idb[pin_off + j]
    new_pin = 0
    top += pin_cnt
    for i in range(S[S_HEAP]):
        if (h_k[i] >> KIND_SHIFT) == CONTROL:
            off = h_c[i] >> 16
            cnt = h_c[i] & 0xFFFF
            for j in range(cnt):
                nb[top + j] = idb[off + j]
            h_c[i] = (np.int64(top) << 16) | cnt
            top += cnt
    S[S_IDS] = top
    return nb, new_pin


@numba.njit(cache=True)
def _grow_mcache(mc_msg, mc_win, mc_cnt, v):
    """The message caches with room for one more entry at node ``v``."""
    if mc_cnt[v] < mc_msg.shape[1]:
        return mc_msg, mc_win
    n, c = mc_msg.shape
    nm = np.empty((n, 2 * c), dtype=np.int32)
    nw = np.empty((n, 2 * c), dtype=np.int32)
    nm[:, :c] = mc_msg
    nw[:, :c] = mc_win
    return nm, nw


@numba.njit(cache=True, inline="always")
def _ref(M, m):
    """One more pending event, cache entry or listed id refers to message ``m`` (slots only)."""
    if len(M[M_REFS]):
        M[M_REFS][M[M_SLOT_OF][m]] += 1


@numba.njit(**_HELPER_JIT)
def _unref(M, S, m):
    """One reference to ``m`` gone; at none, its slot waits for :func:`_flush` (slots only)."""
    refs = M[M_REFS]
    if not len(refs):
        return
    r = M[M_SLOT_OF][m]
    refs[r] -= 1
    if refs[r] == 0 and not M[M_PENDING][r]:
        M[M_PENDING][r] = 1
        M[M_PEND][S[S_PEND]] = r
        S[S_PEND] += 1


@numba.njit(**_HELPER_JIT)
def _fold(G, P, M, r, m, fold, hist, reset):
    """Add slot ``r`` (message ``m``) to the folded measures ``fold``, ``hist``; with ``reset``
    the slot's rows are cleared for the next message."""
    arrival, hops, qdelay, parent = M[M_ARRIVAL], M[M_HOPS], M[M_QDELAY], M[M_PARENT]
    sub = G[6]
    tp = M[1][m]
    pub = M[0][m]
    t0 = M[2][m]
    width = P[P_HIST_BIN]
    nb = len(hist)
    for v in range(arrival.shape[1]):
        a = arrival[r, v]
        if a != np.inf:
            fold[m, FOLD_REACHED] += 1.0
            if v != pub and sub[v, tp]:
                d = a - t0
                fold[m, FOLD_GOT] += 1.0
                fold[m, FOLD_DELAY] += d
                fold[m, FOLD_HOPS] += hops[r, v]
                fold[m, FOLD_QDELAY] += qdelay[r, v]
                b = np.int64(d / width)
                hist[min(max(b, 0), nb - 1)] += 1
            if reset:
                arrival[r, v] = np.inf
                hops[r, v] = -1
                parent[r, v] = -1
                qdelay[r, v] = 0.0


@numba.njit(**_HELPER_JIT)
def _flush(G, P, M, S):
    """Release the slots no pending event, cache entry or listed id refers to any more: their
    rows are folded into the measures and cleared, and the slots go back to the free list."""
    pend, pending, refs = M[M_PEND], M[M_PENDING], M[M_REFS]
    for i in range(S[S_PEND]):
        r = pend[i]
        pending[r] = 0
        if refs[r] == 0:
            m = M[M_SLOT_MSG][r]
            _fold(G, P, M, r, m, M[M_FOLD], M[M_HIST], True)
            M[M_SLOT_MSG][r] = -1
            M[M_FREE][S[S_FREE]] = r
            S[S_FREE] += 1
            S[S_LIVE] -= 1
    S[S_PEND] = 0


@numba.njit(cache=True)
def drop_cache_refs(M, S, mc_msg, mc_cnt, nodes, online):
    """The message-cache entries of the ``nodes`` still online let go of their messages' slots
    (before the engine empties those caches: the nodes leave)."""
    for v in nodes:
        if online[v]:
            for j in range(mc_cnt[v]):
                _unref(M, S, mc_msg[v, j])


@numba.njit(cache=True)
def fold_live(G, P, M, fold, hist):
    """Add every slot still held (messages that can still matter) to ``fold`` and ``hist``
    without releasing them."""
    sm = M[M_SLOT_MSG]
    for r in range(len(sm)):
        if sm[r] >= 0:
            _fold(G, P, M, r, sm[r], fold, hist, False)


@numba.njit(**_HELPER_JIT)
def _take_slot(M, S, m):
    """A free slot for message ``m`` (published now), with one reference (the caller has
    checked that one is free: :func:`advance` returns 2 for the engine to add rows when none
    is)."""
    S[S_FREE] -= 1
    r = M[M_FREE][S[S_FREE]]
    M[M_SLOT_OF][m] = r
    M[M_SLOT_MSG][r] = m
    M[M_REFS][r] = 1
    S[S_LIVE] += 1
    if S[S_LIVE] > S[S_LIVE_PEAK]:
        S[S_LIVE_PEAK] = S[S_LIVE]


@numba.njit(cache=True, inline="always")
def _ctl_size(P, kind, n_ids):
    """Bytes of one control message (one RPC; ``docs/gossipsub.md`` states the fields)."""
    frame = 6.0  # RPC length prefix, control field, the list's field: tag and length each
    ids = n_ids * (2.0 + P[P_ID_BYTES])
    topic = 2.0 + P[P_TOPIC_BYTES]
    if kind == IHAVE:
        return frame + topic + ids
    if kind == PRUNE:  # n_ids: its peer-exchange records (v1.1)
        return frame + topic + (2.0 if P[P_VARIANT] >= 1 else 0.0) + n_ids * P[P_PX_RECORD_BYTES]
    if kind == GRAFT or kind == SUBSCRIBE:
        return frame + topic
    return frame + ids  # IWANT, IDONTWANT


@numba.njit(cache=True, inline="always")
def _occupy(W, up_rate, sent, v, now, s):
    """``s`` bytes queued on ``v``'s FIFO uplink at ``now``: they start when every earlier
    message has left and hold it ``s / rate``; the uplink's busy time and ``sent[v]`` (data or
    control bytes) grow.  Returns ``(start, finish)``."""
    up_free = W[0]
    tx = s / up_rate[v]
    start = now if now > up_free[v] else up_free[v]
    fin = start + tx
    up_free[v] = fin
    W[1][v] += tx
    sent[v] += s
    return start, fin


@numba.njit(**_HELPER_JIT)
def _ihave_moot(G, P, F, W, M, idb, e, arrive, tp, off, cnt):
    """Whether an IHAVE (of topic ``tp``, ids ``idb[off:off+cnt]``) sent now on entry ``e`` can
    change nothing at its receiver but the count of IHAVEs it got this heartbeat, so that the
    sender handles its arrival at once instead of queueing an event (:func:`_skip_ihaves`).

    So it is when, before ``arrive``: the receiver stays online (the kernel's call runs to
    ``F[5]``, and only the engine changes online flags, between calls), no heartbeat runs (the
    receiver's score of the sender and its count stay as they are; synchronised heartbeats,
    the next at ``F[4]``), no earlier IHAVE on the connection is still on its way (without
    jitter an uplink's messages arrive in the order sent), and the receiver has, and will not
    have forgotten by then, every id it would read (those of a topic it subscribes to).
    """
    if arrive > F[5] or not arrive < F[4] or not G[11][G[1][e]]:
        return False
    if W[17][G[3][e]] > F[0]:
        return False
    w = G[1][e]
    if not G[6][w, tp]:
        return True
    slot_of = M[M_SLOT_OF]
    for j in range(cnt):
        m = idb[off + j]
        if not _seen(M[M_ARRIVAL], slot_of[m], w, arrive, P[P_SEEN_TTL]):
            return False
    return True


@numba.njit(**_HELPER_JIT)
def _skip_ihaves(G, P, S, F, W, X, e, arrive, size):
    """The arrival of an IHAVE message (or RPC) that :func:`_ihave_moot` found moot, handled
    when sent: its bytes counted at the receiver, its sequence number taken as its event's
    would be, and, where the receiver would count it against ``max_ihave_messages``, its
    arrival instant kept (``W[17]``) for the receiver to count when it next reads that count
    (:func:`_ihave_gate`) or to forget at its heartbeat."""
    w = G[1][e]
    ew = G[3][e]
    W[4][w] += size
    S[S_SEQ] += 1
    if arrive > F[2]:
        F[2] = arrive
    el = W[17]
    if el[ew] != -np.inf:  # the one before arrived already (checked): counted now
        hb = X[16][w]
        _set_count(X[9], ew, hb, _count(X[9], ew, hb) + 1)
        el[ew] = -np.inf
    if G[12][w] & ATK_SYBIL:
        return
    if P[P_SCORING] > 0 and X[8][ew] < P[P_GOSSIP_THR]:
        return
    el[ew] = arrive


@numba.njit(**_HELPER_JIT)
def _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, kind, tp, off, cnt):
    """Queue one control message ``v -> indices[e]`` (its ids at ``idb[off:off+cnt]``); while
    a heartbeat or an answer stages (``S[S_STAGE]``), it waits in ``W[13]`` for its RPC."""
    if S[S_STAGE] and kind != SUBSCRIBE:
        parts = W[13]
        p = S[S_PARTS]
        parts[p, 0] = e
        parts[p, 1] = kind
        parts[p, 2] = tp
        parts[p, 3] = off
        parts[p, 4] = cnt
        S[S_PARTS] = p + 1
        return
    delay, ctl_cnt = G[4], W[5]
    now = F[0]
    s = _ctl_size(P, kind, cnt)
    fin = _occupy(W, G[8], W[3], v, now, s)[1]
    if now >= P[P_WARMUP] and kind != SUBSCRIBE:
        ctl_cnt[kind, v] += 1
    # control messages are never lost (docs/network.md); jitter applies
    arrive = fin + delay[e]
    if P[P_JITTER] > 0.0:
        arrive += P[P_JITTER] * _uniform(rs)
    if kind == IHAVE and len(W[17]) and _ihave_moot(G, P, F, W, M, idb, e, arrive, tp, off, cnt):
        _skip_ihaves(G, P, S, F, W, X, e, arrive, s)
    else:
        _push(H, S, arrive, CONTROL, e, kind | (tp << 3), (np.int64(off) << 16) | cnt)
        if len(M[M_REFS]) and kind != PRUNE:  # a PRUNE's ids are nodes (peer exchange)
            for j in range(cnt):
                _ref(M, idb[off + j])
    if len(W[9]) and kind != SUBSCRIBE:
        _log(W, idb, now, arrive, kind, e, tp, off, cnt)


@numba.njit(**_HELPER_JIT)
def _rpc_size(P, idb, off, total):
    """Bytes of the RPC at ``idb[off:off+total]``: its parts' sizes as single messages, less
    the RPC's length prefix and control field (4 bytes) that all but one of them counted."""
    s = 0.0
    j = off
    parts = 0
    while j < off + total:
        cnt = idb[j + 1]
        s += _ctl_size(P, idb[j] & 7, cnt)
        parts += 1
        j += 2 + cnt
    return s - 4.0 * (parts - 1)


@numba.njit(**_HELPER_JIT)
def _send_rpc(G, P, H, S, F, W, M, X, rs, idb, v, e, off, total):
    """Queue the RPC ``v -> indices[e]`` whose parts are at ``idb[off:off+total]``: one
    message on the uplink, one event at the receiver; each part is counted (and logged) as the
    control message it carries."""
    delay, ctl_cnt = G[4], W[5]
    now = F[0]
    s = _rpc_size(P, idb, off, total)
    fin = _occupy(W, G[8], W[3], v, now, s)[1]
    arrive = fin + delay[e]
    if P[P_JITTER] > 0.0:
        arrive += P[P_JITTER] * _uniform(rs)
    moot = len(W[17]) > 0
    j = off
    while moot and j < off + total:
        moot = (idb[j] & 7) == IHAVE and _ihave_moot(G, P, F, W, M, idb, e, arrive, idb[j] >> 3,
                                                     j + 2, idb[j + 1])
        j += 2 + idb[j + 1]
    if moot:
        _skip_ihaves(G, P, S, F, W, X, e, arrive, s)
    else:
        _push(H, S, arrive, CONTROL, e, RPC, (np.int64(off) << 16) | total)
    j = off
    while j < off + total:
        kind = idb[j] & 7
        cnt = idb[j + 1]
        if now >= P[P_WARMUP]:
            ctl_cnt[kind, v] += 1
        if len(M[M_REFS]) and kind != PRUNE and not moot:
            for i in range(cnt):
                _ref(M, idb[j + 2 + i])
        if len(W[9]):
            _log(W, idb, now, arrive, kind, e, idb[j] >> 3, j + 2, cnt)
        j += 2 + cnt


@numba.njit(**_HELPER_JIT)
def _flush_rpcs(G, P, H, S, F, W, M, X, rs, idb, v):
    """Send the control messages ``v`` staged as one RPC per peer (go-libp2p-pubsub's
    ``sendGraftPrune`` and ``flush``): peers in the order they were first staged for, each
    RPC's parts in the order go handles them (IHAVE, IWANT, GRAFT, PRUNE), each kind in the
    order staged.  An RPC whose ids would pass ``0xFFFF`` entries goes out in several.  A peer
    with one part gets it as a lone control message: the same bytes, the same handling (the
    receiver answers it alone too), without the parts' framing in the id buffer.  The caller
    has made room for the RPCs' ids (:func:`_hb_room`)."""
    n_parts = S[S_PARTS]
    S[S_PARTS] = 0
    if n_parts == 0:
        return
    parts, nxt, mark, grp = W[13], W[14], W[15], W[16]
    rev = G[3]
    for p in range(n_parts):  # the receivers' entries the sends read: asked for at once
        ew = rev[parts[p, 0]]
        _prefetch(W[17], ew)
        _prefetch(X[8], ew)
    ng = 0
    for p in range(n_parts):
        e = parts[p, 0]
        nxt[p] = -1
        g = mark[e]
        if g < 0:
            g = ng
            ng += 1
            mark[e] = g
            grp[g, 0] = e
            grp[g, 1] = p
        else:
            nxt[grp[g, 2]] = p
        grp[g, 2] = p
    for g in range(ng):
        e = grp[g, 0]
        mark[e] = -1
        p = grp[g, 1]
        if nxt[p] < 0:  # one part: an RPC of one control message is that message alone
            _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, parts[p, 1], parts[p, 2],
                          parts[p, 3], parts[p, 4])
            continue
        off = S[S_IDS]
        total = 0
        for kind in (IHAVE, IWANT, GRAFT, PRUNE):
            p = grp[g, 1]
            while p >= 0:
                if parts[p, 1] == kind:
                    cnt = parts[p, 4]
                    if total > 0 and total + 2 + cnt > 0xFFFF:
                        S[S_IDS] = off + total
                        _send_rpc(G, P, H, S, F, W, M, X, rs, idb, v, e, off, total)
                        off = S[S_IDS]
                        total = 0
                    idb[off + total] = kind | (parts[p, 2] << 3)
                    idb[off + total + 1] = cnt
                    src = parts[p, 3]
                    for i in range(cnt):
                        idb[off + total + 2 + i] = idb[src + i]
                    total += 2 + cnt
                p = nxt[p]
        S[S_IDS] = off + total
        _send_rpc(G, P, H, S, F, W, M, X, rs, idb, v, e, off, total)


@numba.njit(**_HELPER_JIT)
def _send_data(G, P, H, S, F, W, X, rs, M, v, e, m, via):
    """Queue a copy of message ``m`` on ``v -> indices[e]``."""
    delay = G[4]
    copies, qwait = M[4], M[9]
    r = M[M_SLOT_OF][m]
    size = M[3]
    now = F[0]
    s = size[m] + P[P_HEADER]  # a copy's bytes: payload and header
    start, fin = _occupy(W, G[8], W[2], v, now, s)
    copies[m] += 1
    qwait[m] += start - now
    arrive = -1.0
    if P[P_LOSS] > 0.0 and _uniform(rs) < P[P_LOSS]:
        M[11][m] += 1  # lost: it occupied the uplink and never arrives
    else:
        arrive = fin + delay[e]
        if P[P_JITTER] > 0.0:
            arrive += P[P_JITTER] * _uniform(rs)
        w = G[1][e]
        first = M[M_ARRIVAL][r, w]
        if first != np.inf and arrive - first < P[P_SEEN_TTL]:
            # w has m already and will not have forgotten it: the copy can only be a
            # duplicate, so it is counted now instead of queueing an event
            slot = _slot(G, G[3][e], G[10][m])
            W[6][w] += s
            W[7][w] += s
            M[7][m] += 1
            if X[0][slot] and arrive - first <= P[P_MESH_WINDOW]:
                X[7][slot] += 1
                if P[P_SCORING] > 0:
                    X[17][slot] = 1  # a count for the score to read
            if arrive > F[2]:
                F[2] = arrive
        else:
            wait_ns = np.int64((start - now) * 1e6 + 0.5)
            _push(H, S, arrive, DATA, e, m, via | (wait_ns << 1))
            _ref(M, m)
    if len(W[9]):
        _log(W, W[11], now, arrive, LOG_DATA + via, e, m, 0, 0)


@numba.njit(**_HELPER_JIT)
def _log(W, idb, t_send, t_arr, kind, e, what, off, cnt):
    """Append one sent message to the log (``W[9:13]``) while it has room."""
    lf, li, lids, lc = W[9], W[10], W[11], W[12]
    r = lc[0]
    if r >= len(lf) or lc[1] + cnt > len(lids):
        lc[2] = 1  # full: the rest is not logged
        return
    lf[r, 0] = t_send
    lf[r, 1] = t_arr
    li[r, 0] = kind
    li[r, 1] = e
    li[r, 2] = what
    li[r, 3] = lc[1]
    li[r, 4] = cnt
    for j in range(cnt):
        lids[lc[1] + j] = idb[off + j]
    lc[1] += cnt
    lc[0] = r + 1


@numba.njit(cache=True, inline="always")
def _unwanted(U, e, m, now):
    """Whether the peer at the end of entry ``e`` announced ``m`` and the IDONTWANT has arrived.

    The callers first test that the peer has ``m`` at all (its arrival row is finite): it sends
    an IDONTWANT of ``m`` only when it receives ``m``, and the row of a message that can still
    be forwarded or answered is not cleared, so a peer without it announced nothing and the
    scan of the connection's ring (two cache lines of a large table) is skipped."""
    unw, when = U[0], U[2]
    for j in range(unw.shape[1]):
        if unw[e, j] == m and when[e, j] <= now:
            return True
    return False


@numba.njit(**_HELPER_JIT)
def _send_idontwant(G, P, S, F, W, U, rs, idb, v, e, m, off):
    """One IDONTWANT of ``m`` on ``v -> indices[e]`` (its id at ``idb[off]``).

    Its only effect at the receiver is to remember the id from its arrival on,
    so the arrival is written into the receiver's ring for the connection at
    once (with that instant) instead of queueing an event.
    """
    delay, rev = G[4], G[3]
    crecv, ctl_cnt = W[4], W[5]
    unw, unw_pos, when = U[0], U[1], U[2]
    now = F[0]
    s = _ctl_size(P, IDONTWANT, 1)
    fin = _occupy(W, G[8], W[3], v, now, s)[1]
    if now >= P[P_WARMUP]:
        ctl_cnt[IDONTWANT, v] += 1
    arrive = fin + delay[e]  # never lost, as every control message
    if P[P_JITTER] > 0.0:
        arrive += P[P_JITTER] * _uniform(rs)
    w = G[1][e]
    crecv[w] += s
    ew = rev[e]
    p = unw_pos[ew]
    unw[ew, p] = m
    when[ew, p] = arrive
    unw_pos[ew] = (p + 1) % unw.shape[1]
    if arrive > F[2]:
        F[2] = arrive
    if len(W[9]):
        _log(W, idb, now, arrive, IDONTWANT, e, G[10][m], off, 1)


@numba.njit(cache=True)
def candidate_lists(indptr, indices, sub):
    """Per (node, topic) row ``v * T + tp``: the CSR entries of ``v`` whose peer subscribes to
    ``tp``, in entry order; returns ``(cptr, cidx)`` (row ``r`` at ``cidx[cptr[r]:cptr[r + 1]]``).

    The subscriptions do not change during a run, so a heartbeat, a publication or a peer
    exchange reads the peers of a topic here instead of testing every connection: the same
    entries in the same order, so the same draws.
    """
    n, T = sub.shape
    cptr = np.zeros(n * T + 1, dtype=np.int64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            for tp in range(T):
                if sub[w, tp]:
                    cptr[v * T + tp + 1] += 1
    for r in range(n * T):
        cptr[r + 1] += cptr[r]
    cidx = np.empty(cptr[n * T], dtype=np.int32)
    fill = cptr[:n * T].copy()
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            for tp in range(T):
                if sub[w, tp]:
                    cidx[fill[v * T + tp]] = e
                    fill[v * T + tp] += 1
    return cptr, cidx


@numba.njit(cache=True)
def slot_map(indptr, indices, uses):
    """The (connection, topic) slots: for each CSR entry ``e = v -> w`` the topics both ends
    may use (``uses[v, tp] and uses[w, tp]``), sorted; returns ``(slot_ptr, slot_topic,
    slot_conn)`` (entry ``e``'s slots are ``slot_ptr[e]:slot_ptr[e + 1]``, slot ``s`` is on
    topic ``slot_topic[s]`` of entry ``slot_conn[s]``).

    Only these are ever read or written (``docs/gossipsub.md``): a node uses a topic it
    subscribes to or publishes on (fanout), and an attacker every topic.  Slots run in entry
    order, then topic order: the order of the dense ``e * T + tp`` table without the slots
    nothing touches.

    Examples
    --------
    >>> uses = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 0]], dtype=np.uint8)
    >>> indptr, indices = np.array([0, 2, 3, 4]), np.array([1, 2, 0, 0], dtype=np.int32)
    >>> sp, st, sc = slot_map(indptr, indices, uses)
    >>> sp.tolist(), st.tolist(), sc.tolist()
    ([0, 2, 2, 4, 4], [0, 2, 0, 2], [0, 0, 2, 2])
    """
    n, T = uses.shape
    nnz = indptr[n]
    slot_ptr = np.zeros(nnz + 1, dtype=np.int64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            k = 0
            for tp in range(T):
                if uses[v, tp] and uses[w, tp]:
                    k += 1
            slot_ptr[e + 1] = slot_ptr[e] + k
    slot_topic = np.empty(slot_ptr[nnz], dtype=np.int32)
    slot_conn = np.empty(slot_ptr[nnz], dtype=np.int32)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            s = slot_ptr[e]
            for tp in range(T):
                if uses[v, tp] and uses[w, tp]:
                    slot_topic[s] = tp
                    slot_conn[s] = e
                    s += 1
    return slot_ptr, slot_topic, slot_conn


@numba.njit(cache=True, inline="always")
def _slot(G, e, tp):
    """Entry ``e``'s slot on topic ``tp`` (``G[16]``, ``G[17]``: :func:`slot_map`), by a scan
    of its few sorted topics; a topic it has no slot for gives the spare slot past the last
    (``len(slot_topic)``), which stays at its initial values while the map is right (the
    engine checks, ``GossipSubEngine``)."""
    slot_ptr, slot_topic = G[16], G[17]
    for s in range(slot_ptr[e], slot_ptr[e + 1]):
        t = slot_topic[s]
        if t >= tp:
            if t == tp:
                return s
            break
    return len(slot_topic)


@numba.njit(**_HELPER_JIT)
def _mesh_add(X, slot, row, e, now):
    mesh_flag, mlist, mdeg, graft_time = X[0], X[1], X[2], X[5]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    mesh_flag[slot] = 1
    mlist[mp[row] + mdeg[row]] = e
    mdeg[row] += 1
    graft_time[slot] = now


@numba.njit(**_HELPER_JIT)
def _mesh_remove(X, slot, row, e):
    mesh_flag, mlist, mdeg = X[0], X[1], X[2]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    mesh_flag[slot] = 0
    k = mdeg[row]
    for j in range(k):
        if mlist[mp[row] + j] == e:
            mlist[mp[row] + j] = mlist[mp[row] + k - 1]
            mdeg[row] = k - 1
            return


@numba.njit(**_HELPER_JIT)
def _sample(buf, k, want, rs):
    """Move ``min(want, k)`` uniform picks of ``buf[:k]`` to its front (partial Fisher-Yates)."""
    take = want if want < k else k
    for i in range(take):
        j = i + int(_uniform(rs) * (k - i))
        tmp = buf[i]
        buf[i] = buf[j]
        buf[j] = tmp
    return take


@numba.njit(**_HELPER_JIT)
def _in_mcache(mc_msg, mc_win, mc_cnt, v, m, oldest):
    for j in range(mc_cnt[v]):
        if mc_msg[v, j] == m and mc_win[v, j] >= oldest:
            return True
    return False


@numba.njit(**_HELPER_JIT)
def _seen(arrival, m, w, now, ttl):
    a = arrival[m, w]
    return a != np.inf and now - a < ttl


@numba.njit(**_HELPER_JIT)
def _emit_gossip(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, tp, T):
    """IHAVE of topic ``tp``'s recent ids to ``max(D_lazy, gossip_factor x eligible)`` peers
    of ``v`` that are not in its mesh (or fanout); returns the ids written."""
    indices, score = G[1], X[8]
    mesh_flag = X[0]
    mc_msg, mc_win, mc_cnt = mcs
    topic = G[10]
    top = S[S_IDS]
    oldest = X[16][v] - np.int64(P[P_MCGOSSIP]) + 1
    cnt = 0
    lim = np.int64(P[P_MAX_IHAVE_LEN])
    for j in range(mc_cnt[v]):
        m = mc_msg[v, j]
        if mc_win[v, j] >= oldest and topic[m] == tp:
            idb[top + cnt] = m
            cnt += 1
    if cnt == 0:
        return 0
    if cnt > lim:  # go shuffles, then keeps the first MaxIHaveLength
        _sample(idb[top:top + cnt], cnt, lim, rs)
        cnt = lim
    online, cptr, cidx = G[11], G[14], G[15]
    k = 0
    for i in range(cptr[v * T + tp], cptr[v * T + tp + 1]):
        e = cidx[i]
        w = indices[e]
        if online[w] and not mesh_flag[_slot(G, e, tp)]:
            if P[P_SCORING] > 0 and score[e] < P[P_GOSSIP_THR]:
                continue
            if G[13][e] > F[0]:  # the connection is not open yet
                continue
            buf[k] = e
            k += 1
    target = np.int64(P[P_DLAZY])
    if P[P_VARIANT] >= 1:
        factor = np.int64(P[P_GFACTOR] * k)
        if factor > target:
            target = factor
    took = _sample(buf, k, target, rs)
    if took == 0:
        return 0
    S[S_IDS] = top + cnt
    for i in range(took):
        _send_control(G, P, H, S, F, W, M, X, rs, idb, v, buf[i], IHAVE, tp, top, cnt)
    return cnt


@numba.njit(**_HELPER_JIT)
def _sybil_heartbeat(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, T):
    """A sybil's heartbeat (the hardening evaluation's attacker): it grafts, on every open
    connection, each topic its peer subscribes to, unless it is in that mesh already or waits
    out a PRUNE's backoff; no mesh bounds, no gossip.  A liar (``ATK_LIAR``) grafts nobody and
    sends its IHAVEs as an honest node does."""
    cptr, cidx, conn_up = G[14], G[15], G[13]
    mesh_flag, backoff = X[0], X[3]
    now = F[0]
    if G[12][v] & ATK_LIAR:
        for tp in range(T):
            _emit_gossip(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, tp, T)
        return
    for tp in range(T):
        row = v * T + tp
        for i in range(cptr[row], cptr[row + 1]):
            e = cidx[i]
            s = _slot(G, e, tp)
            if mesh_flag[s] or conn_up[e] > now or backoff[s] > now:
                continue
            _mesh_add(X, s, row, e, now)
            _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, GRAFT, tp, 0, 0)


@numba.njit(cache=True, inline="always")
def _drops(G, P, w, m, now):
    """Whether attacker ``w`` drops message ``m`` (forwards it to nobody, caches it not)."""
    if not (G[12][w] & ATK_DROP) or now < P[P_ATK_START]:
        return False
    if P[P_ATK_TOPIC] >= 0 and G[10][m] != np.int64(P[P_ATK_TOPIC]):
        return False
    return not (P[P_ATK_TARGET] >= 0 and G[9][m] != np.int64(P[P_ATK_TARGET]))


@numba.njit(**_HELPER_JIT)
def _px_records(G, P, S, X, idb, rs, v, e_out, tp, now):
    """Peer exchange (v1.1; go-libp2p-pubsub ``makePrune``): up to ``prune_peers`` uniform
    peers of topic ``tp`` connected to ``v``, but the pruned one (``indices[e_out]``), with a
    score >= 0, written at the id buffer's top; returns ``(offset, count)``.  The caller has
    made room for ``deg(v)`` ids."""
    indices, online, conn_up, cptr, cidx = G[1], G[11], G[13], G[14], G[15]
    score = X[8]
    T = G[6].shape[1]
    top = S[S_IDS]
    k = 0
    for i in range(cptr[v * T + tp], cptr[v * T + tp + 1]):
        e = cidx[i]
        w = indices[e]
        if e == e_out or not online[w] or conn_up[e] > now:
            continue
        if P[P_SCORING] > 0 and score[e] < 0:
            continue
        idb[top + k] = w
        k += 1
    took = _sample(idb[top:top + k], k, np.int64(P[P_PRUNE_PEERS]), rs)
    S[S_IDS] = top + took
    return top, took


@numba.njit(**_HELPER_JIT)
def _send_prune(G, P, H, S, F, W, M, X, rs, idb, v, e, tp, px):
    """A PRUNE ``v -> indices[e]`` on topic ``tp``, with peer-exchange records when ``px`` and
    the engine does peer exchange (v1.1); room as :func:`_px_records` needs."""
    off = 0
    cnt = 0
    if px and P[P_PX] > 0 and P[P_VARIANT] >= 1:
        off, cnt = _px_records(G, P, S, X, idb, rs, v, e, tp, F[0])
    _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, PRUNE, tp, off, cnt)


@numba.njit(**_HELPER_JIT)
def _take_px(G, P, S, X, idb, w, ew, off, cnt, now):
    """Node ``w`` receives ``cnt`` peer records in a PRUNE from ``indices[ew]``: taken if the
    pruner's score is at least the accept-PX threshold (go-libp2p-pubsub ``handlePrune``);
    the records naming a peer ``w`` has no open connection to are the dials ``pxConnect``
    would start (counted; the connection graph is fixed, ``docs/gossipsub.md``)."""
    indptr, indices, conn_up = G[0], G[1], G[13]
    S[S_PX_OFFERED] += cnt
    if X[8][ew] < P[P_ACCEPT_PX_THR]:
        return
    S[S_PX_ACCEPTED] += cnt
    lo, hi = indptr[w], indptr[w + 1]
    for j in range(cnt):
        x = idb[off + j]
        a = lower_bound(indices, lo, hi, x)  # the row is sorted
        if not (a < hi and indices[a] == x and conn_up[a] <= now):
            S[S_PX_NEW] += 1


@numba.njit(**_HELPER_JIT)
def _opportunistic_graft(G, P, H, S, F, W, M, X, idb, rs, buf, buf2, v, tp, T):
    """Opportunistic grafting (v1.1; go-libp2p-pubsub ``heartbeat``): if the median score of
    ``v``'s mesh peers on ``tp`` (the score of the peer at index ``len // 2`` sorted up, with
    more than one peer) is below the threshold, graft up to ``opportunistic_graft_peers``
    uniform peers of the topic not in the mesh, not backed off and scored above that median."""
    indices, online, conn_up, cptr, cidx = G[1], G[11], G[13], G[14], G[15]
    mesh_flag, mlist, mdeg, backoff, score = X[0], X[1], X[2], X[3], X[8]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    now = F[0]
    row = v * T + tp
    cnt = mdeg[row]
    if cnt <= 1:
        return
    for j in range(cnt):
        buf2[j] = mlist[mp[row] + j]
    for i in range(1, cnt):  # by score, lowest first
        x = buf2[i]
        j = i - 1
        while j >= 0 and score[buf2[j]] > score[x]:
            buf2[j + 1] = buf2[j]
            j -= 1
        buf2[j + 1] = x
    median = score[buf2[cnt // 2]]
    if not median < P[P_OG_THR]:
        return
    k = 0
    for i in range(cptr[row], cptr[row + 1]):
        e = cidx[i]
        s = _slot(G, e, tp)
        w = indices[e]
        if not online[w] or mesh_flag[s] or conn_up[e] > now:
            continue
        if backoff[s] > now or not score[e] > median:
            continue
        buf[k] = e
        k += 1
    took = _sample(buf, k, np.int64(P[P_OG_PEERS]), rs)
    for i in range(took):
        e = buf[i]
        _mesh_add(X, _slot(G, e, tp), row, e, now)
        _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, GRAFT, tp, 0, 0)
    S[S_OG_GRAFTS] += took


@numba.njit(**_HELPER_JIT)
def _on_graft(G, P, H, S, F, W, M, X, rs, idb, w, ew, tp, t):
    """Node ``w`` handles a GRAFT on topic ``tp`` from the peer at the end of its entry ``ew``:
    taken into the mesh, or refused with a PRUNE (backoff, score, a full mesh)."""
    sub, atk = G[6], G[12]
    mesh_flag, mdeg, backoff, behaviour, score = X[0], X[2], X[3], X[11], X[8]
    T = sub.shape[1]
    v11 = P[P_VARIANT] >= 1
    scoring = P[P_SCORING] > 0
    slot = _slot(G, ew, tp)
    row = w * T + tp
    if not sub[w, tp] or mesh_flag[slot]:
        return
    if atk[w] & ATK_SYBIL:  # a sybil takes every peer that grafts it
        _mesh_add(X, slot, row, ew, t)
        return
    refuse = False
    full = False  # refused for a full mesh: the PRUNE may carry PX (go)
    if v11 and backoff[slot] > t:
        behaviour[ew] += 1.0
        if scoring:
            X[18][ew] = 1  # a penalty for the score to read
        refuse = True
    elif scoring and score[ew] < 0:
        refuse = True
    elif v11 and mdeg[row] >= np.int64(P[P_DHI]) and not G[5][ew]:
        refuse = True
        full = True
    if refuse:
        if v11:
            backoff[slot] = max(backoff[slot], t + P[P_BACKOFF])
        _send_prune(G, P, H, S, F, W, M, X, rs, idb, w, ew, tp, full)
    else:
        _mesh_add(X, slot, row, ew, t)


@numba.njit(**_HELPER_JIT)
def _on_prune(G, P, S, X, rs, idb, w, ew, tp, off, cnt, t):
    """Node ``w`` handles a PRUNE on topic ``tp`` (with ``cnt`` peer records at ``idb[off:]``)
    from the peer at the end of its entry ``ew``."""
    sub, atk = G[6], G[12]
    mesh_flag, backoff = X[0], X[3]
    T = sub.shape[1]
    slot = _slot(G, ew, tp)
    if cnt > 0:  # peer exchange records
        _take_px(G, P, S, X, idb, w, ew, off, cnt, t)
    if sub[w, tp] and mesh_flag[slot]:
        _mesh_remove(X, slot, w * T + tp, ew)
    if P[P_VARIANT] >= 1:
        backoff[slot] = max(backoff[slot], t + P[P_BACKOFF])
    if atk[w] & ATK_SYBIL:  # it grafts again after the backoff and a random delay
        backoff[slot] = max(backoff[slot], t + P[P_BACKOFF]) + (
            P[P_ATK_REGRAFT] * _uniform(rs))


@numba.njit(cache=True, inline="always")
def _count(a, e, hb):
    """The per-heartbeat count at ``a[e]`` (``X[9]``, ``X[10]``) in the owner's heartbeat
    period ``hb`` (its ``X[16]``): each entry holds the period it was written in above its
    low 32 bits, so a count of an earlier period reads 0 and no heartbeat resets them."""
    c = a[e]
    return c & _COUNT_MASK if (c >> 32) == hb else 0


@numba.njit(cache=True, inline="always")
def _set_count(a, e, hb, c):
    a[e] = (hb << 32) | c


@numba.njit(**_HELPER_JIT)
def _ihave_gate(G, P, W, X, w, ew, t):
    """Whether node ``w`` reads the ids of an RPC of IHAVEs from the peer at the end of its
    entry ``ew`` at ``t`` (it counts the RPC first: at most ``max_ihave_messages`` per
    heartbeat; a moot IHAVE that arrived before it on the connection, :func:`_skip_ihaves`,
    is counted first)."""
    peerhave, iasked = X[9], X[10]
    hb = X[16][w]
    if len(W[17]) and W[17][ew] <= t:  # -inf: none
        if W[17][ew] != -np.inf:
            _set_count(peerhave, ew, hb, _count(peerhave, ew, hb) + 1)
            W[17][ew] = -np.inf
    if G[12][w] & ATK_SYBIL:
        return False  # a sybil asks for nothing
    if P[P_SCORING] > 0 and X[8][ew] < P[P_GOSSIP_THR]:
        return False
    got = _count(peerhave, ew, hb) + 1
    _set_count(peerhave, ew, hb, got)
    return not (got > P[P_MAX_IHAVE_MSGS] or _count(iasked, ew, hb) >= P[P_MAX_IHAVE_LEN])


@numba.njit(**_HELPER_JIT)
def _ihave_unseen(G, P, M, idb, w, off, cnt, top, want, t):
    """The ids of ``idb[off:off+cnt]`` that ``w`` has not seen, written at ``idb[top+want:]``;
    returns ``want`` plus their number."""
    slot_of = M[M_SLOT_OF]
    for j in range(cnt):
        m = idb[off + j]
        if not _seen(M[M_ARRIVAL], slot_of[m], w, t, P[P_SEEN_TTL]):
            idb[top + want] = m
            want += 1
    return want


@numba.njit(**_HELPER_JIT)
def _ihave_ask(G, P, H, S, F, W, M, X, rs, idb, w, ew, top, want, t):
    """Node ``w`` asks the peer at the end of its entry ``ew`` for up to what it may still ask
    of the ``want`` ids at ``idb[top:]``, uniformly drawn, in one IWANT (and records the
    promise of the first when scoring)."""
    iasked, prom_m, prom_t = X[10], X[14], X[15]
    if want == 0:
        return
    hb = X[16][w]
    asked = _count(iasked, ew, hb)
    room = np.int64(P[P_MAX_IHAVE_LEN]) - asked
    want = _sample(idb[top:top + want], want, room, rs)
    _set_count(iasked, ew, hb, asked + want)
    S[S_IDS] = top + want
    if P[P_SCORING] > 0 and want > 0 and prom_m[ew] < 0:
        # a promise (go's gossipTracer): the peer owes the first id asked
        prom_m[ew] = idb[top]
        _ref(M, idb[top])  # its slot is read when the promise is checked
        prom_t[ew] = t + P[P_FOLLOWUP]
    _send_control(G, P, H, S, F, W, M, X, rs, idb, w, ew, IWANT, 0, top, want)


@numba.njit(**_HELPER_JIT)
def _on_iwant(G, P, H, S, F, W, M, X, U, RT, rs, idb, mcs, w, ew, off, cnt, t):
    """Node ``w`` answers an IWANT of the ids ``idb[off:off+cnt]`` from the peer at the end of
    its entry ``ew`` from its message cache (up to the retransmission limit)."""
    mc_msg, mc_win, mc_cnt = mcs
    if G[12][w] & ATK_SYBIL:
        return  # a sybil answers no IWANT
    if P[P_SCORING] > 0 and X[8][ew] < P[P_GOSSIP_THR]:
        return
    limited = P[P_RETRANS] < NO_RETRANS_LIMIT
    idw_on = P[P_VARIANT] >= 2
    oldest = X[16][w] - np.int64(P[P_MCLEN]) + 1
    asker = G[1][ew]
    for j in range(cnt):
        m = idb[off + j]
        if not _in_mcache(mc_msg, mc_win, mc_cnt, w, m, oldest):
            continue
        if limited and _rt_bump(RT, np.int64(m) * len(G[1]) + ew) > P[P_RETRANS]:
            continue
        if idw_on and M[M_ARRIVAL][M[M_SLOT_OF][m], asker] != np.inf and \
                _unwanted(U, ew, m, t):
            continue
        S[S_IWANT_SERVED] += 1
        _send_data(G, P, H, S, F, W, X, rs, M, w, ew, m, 1)


@numba.njit(**_HELPER_JIT)
def _on_rpc(G, P, H, S, F, W, M, X, U, RT, rs, idb, mcs, w, ew, off, total, t):
    """Node ``w`` handles an RPC of control messages (``idb[off:off+total]``) from the peer at
    the end of its entry ``ew``, as go-libp2p-pubsub's ``HandleRPC``: its IHAVEs together (one
    count against ``max_ihave_messages``, the unseen ids of every topic ``w`` subscribes to in
    one IWANT), then its IWANTs, GRAFTs and PRUNEs; the IWANT and the PRUNEs that answer it
    leave in one RPC."""
    sub = G[6]
    S[S_STAGE] = 1
    j = off
    if (idb[j] & 7) == IHAVE and _ihave_gate(G, P, W, X, w, ew, t):
        top = S[S_IDS]
        want = 0
        while j < off + total and (idb[j] & 7) == IHAVE:
            cnt = idb[j + 1]
            if sub[w, idb[j] >> 3]:
                want = _ihave_unseen(G, P, M, idb, w, j + 2, cnt, top, want, t)
            j += 2 + cnt
        _ihave_ask(G, P, H, S, F, W, M, X, rs, idb, w, ew, top, want, t)
    while j < off + total:
        ck = idb[j] & 7
        tp = idb[j] >> 3
        cnt = idb[j + 1]
        if ck == IWANT:
            _on_iwant(G, P, H, S, F, W, M, X, U, RT, rs, idb, mcs, w, ew, j + 2, cnt, t)
        elif ck == GRAFT:
            _on_graft(G, P, H, S, F, W, M, X, rs, idb, w, ew, tp, t)
        elif ck == PRUNE:
            _on_prune(G, P, S, X, rs, idb, w, ew, tp, j + 2, cnt, t)
        j += 2 + cnt
    S[S_STAGE] = 0
    _flush_rpcs(G, P, H, S, F, W, M, X, rs, idb, w)


@numba.njit(cache=True, inline="always")
def _hb_room(P, deg, T, cached):
    """Heap events and ids one node's heartbeat may add (the callers grow both first)."""
    events = 2 * deg * T + 1
    ids = deg * (cached + 1)
    if P[P_OG_PEERS] > 0 and P[P_SCORING] > 0:
        events += T * np.int64(P[P_OG_PEERS])
    if P[P_PX] > 0:
        take = np.int64(P[P_PRUNE_PEERS])
        ids += deg * T * (take if take < deg else deg) + deg
    if P[P_CONTROL_RPC] > 0:  # the RPCs copy every staged id, with two words per part
        ids += ids + 2 * events
    return events, ids


@numba.njit(**_HELPER_JIT)
def _candidates(G, X, buf, row, tp, now, v11, scoring):
    """The graft candidates of (node, topic) row ``row`` into ``buf``, in entry order: online
    peers of the topic not in the mesh, not backed off (v1.1), with a score >= 0 (scoring), on
    an open connection; returns their number."""
    indices, online, conn_up = G[1], G[11], G[13]
    cptr, cidx = G[14], G[15]
    mesh_flag, backoff, score = X[0], X[3], X[8]
    k = 0
    for i in range(cptr[row], cptr[row + 1]):
        e = cidx[i]
        s = _slot(G, e, tp)
        if online[indices[e]] and not mesh_flag[s]:
            if v11 and backoff[s] > now:
                continue
            if scoring and score[e] < 0:
                continue
            if conn_up[e] > now:
                continue
            buf[k] = e
            k += 1
    return k


@numba.njit(**_HELPER_JIT)
def _heartbeat_node(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, v, T):
    """One node's heartbeat: every topic's mesh (or fanout) maintained, gossip emitted."""
    indices, outbound, sub, online = G[1], G[5], G[6], G[11]
    mesh_flag, mlist, mdeg, backoff, lastpub = X[0], X[1], X[2], X[3], X[4]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    score = X[8]
    now = F[0]
    D = np.int64(P[P_D])
    d_lo = np.int64(P[P_DLO])
    d_hi = np.int64(P[P_DHI])
    d_out = np.int64(P[P_DOUT])
    d_score = np.int64(P[P_DSCORE])
    v11 = P[P_VARIANT] >= 1
    scoring = P[P_SCORING] > 0
    conn_up, cptr, cidx = G[13], G[14], G[15]
    if G[12][v] & ATK_SYBIL:
        _sybil_heartbeat(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, T)
        return
    for tp in range(T):
        row = v * T + tp
        if sub[v, tp]:
            if scoring:  # drop mesh peers with a negative score (v1.1)
                j = 0
                while j < mdeg[row]:
                    e = mlist[mp[row] + j]
                    if score[e] < 0:
                        s = _slot(G, e, tp)
                        _mesh_remove(X, s, row, e)
                        backoff[s] = max(backoff[s], now + P[P_BACKOFF])
                        _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, PRUNE, tp, 0, 0)
                    else:
                        j += 1
            # candidates: subscribed peers not in the mesh, not backed off, score >= 0; only
            # read below D_lo and for D_out (v1.1), so not gathered otherwise (no draw here).
            # For D_out alone they are gathered where the quota reads them, and only if it
            # does: the same list (a peer pruned in between is backed off, so out of it either
            # way, when the backoff is positive; else they are gathered here, as before)
            k = -1
            if mdeg[row] < d_lo or (v11 and d_out > 0 and not P[P_BACKOFF] > 0):
                k = _candidates(G, X, buf, row, tp, now, v11, scoring)
            if mdeg[row] < d_lo:
                took = _sample(buf, k, D - mdeg[row], rs)
                for i in range(took):
                    e = buf[i]
                    _mesh_add(X, _slot(G, e, tp), row, e, now)
                    _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, GRAFT, tp, 0, 0)
                if mdeg[row] < d_lo and took < k:
                    S[S_VIOL] += 1
            elif mdeg[row] > d_hi:
                cnt = mdeg[row]
                for j in range(cnt):
                    buf2[j] = mlist[mp[row] + j]
                _sample(buf2, cnt, cnt, rs)  # shuffle
                if scoring:  # by score, best first (stable over the shuffle)
                    for i in range(1, cnt):
                        x = buf2[i]
                        j = i - 1
                        while j >= 0 and score[buf2[j]] < score[x]:
                            buf2[j + 1] = buf2[j]
                            j -= 1
                        buf2[j + 1] = x
                    if d_score < cnt:
                        _sample(buf2[d_score:cnt], cnt - d_score, cnt - d_score, rs)
                if v11:
                    n_out = 0
                    for i in range(D):
                        if outbound[buf2[i]]:
                            n_out += 1
                    if n_out < d_out:
                        # go: bubble the kept outbound peers up front, then outbound peers
                        # from beyond D, until D_out are kept
                        have = n_out
                        i = 1
                        while i < D and have > 0:
                            if outbound[buf2[i]]:
                                x = buf2[i]
                                for j in range(i, 0, -1):
                                    buf2[j] = buf2[j - 1]
                                buf2[0] = x
                                have -= 1
                            i += 1
                        need = d_out - n_out
                        i = D
                        while i < cnt and need > 0:
                            if outbound[buf2[i]]:
                                x = buf2[i]
                                for j in range(i, 0, -1):
                                    buf2[j] = buf2[j - 1]
                                buf2[0] = x
                                need -= 1
                            i += 1
                keep = D
                if P[P_MAX_PRUNE] > 0 and cnt - np.int64(P[P_MAX_PRUNE]) > D:
                    keep = cnt - np.int64(P[P_MAX_PRUNE])  # at most max_prune per heartbeat
                for i in range(keep, cnt):
                    e = buf2[i]
                    s = _slot(G, e, tp)
                    _mesh_remove(X, s, row, e)
                    if v11:
                        backoff[s] = max(backoff[s], now + P[P_BACKOFF])
                    _send_prune(G, P, H, S, F, W, M, X, rs, idb, v, e, tp, True)
            if v11 and mdeg[row] >= d_lo:
                n_out = 0
                for j in range(mdeg[row]):
                    if outbound[mlist[mp[row] + j]]:
                        n_out += 1
                if n_out < d_out:
                    if k < 0:
                        k = _candidates(G, X, buf, row, tp, now, v11, scoring)
                    k2 = 0
                    for i in range(k):
                        e = buf[i]
                        if outbound[e] and not mesh_flag[_slot(G, e, tp)]:
                            buf2[k2] = e
                            k2 += 1
                    took = _sample(buf2, k2, d_out - n_out, rs)
                    for i in range(took):
                        e = buf2[i]
                        _mesh_add(X, _slot(G, e, tp), row, e, now)
                        _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, GRAFT, tp, 0, 0)
            if mdeg[row] > d_hi:  # opportunistic grafts may go beyond D_hi, as go's do
                S[S_VIOL] += 1
            if v11 and scoring and P[P_OG_PEERS] > 0 and \
                    (X[16][v] + 1) % np.int64(P[P_OG_TICKS]) == 0:
                _opportunistic_graft(G, P, H, S, F, W, M, X, idb, rs, buf, buf2, v, tp, T)
            _emit_gossip(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, tp, T)
        elif lastpub[row] != -np.inf:
            if lastpub[row] + P[P_FANOUT_TTL] < now:  # fanout expired
                for j in range(mdeg[row]):
                    mesh_flag[_slot(G, mlist[mp[row] + j], tp)] = 0
                mdeg[row] = 0
                lastpub[row] = -np.inf
                continue
            if mdeg[row] < D:
                k = 0
                for i in range(cptr[row], cptr[row + 1]):
                    e = cidx[i]
                    if online[indices[e]] and not mesh_flag[_slot(G, e, tp)]:
                        if scoring and score[e] < P[P_PUBLISH_THR]:
                            continue
                        if conn_up[e] > now:
                            continue
                        buf[k] = e
                        k += 1
                took = _sample(buf, k, D - mdeg[row], rs)
                for i in range(took):
                    e = buf[i]
                    mesh_flag[_slot(G, e, tp)] = 1
                    mlist[mp[row] + mdeg[row]] = e
                    mdeg[row] += 1
            _emit_gossip(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, v, tp, T)


@numba.njit(cache=True, inline="always")
def _prefetch_range(a, lo, hi):
    """Ask for every cache line of ``a[lo:hi]`` (1-d; :func:`hedgerow.gossip._prefetch`)."""
    step = max(1, 64 // a.itemsize)
    for j in range(lo, hi, step):
        _prefetch(a, j)
    if hi > lo:
        _prefetch(a, hi - 1)


@numba.njit(**_HELPER_JIT)
def _prefetch_node(G, W, X, v, T):
    """Ask for the lines node ``v``'s heartbeat reads first: its connection entries' columns
    (peers, reverse entries, delays, slot ranges, scores, opening instants, moot IHAVEs) and
    its (node, topic) rows.  A synchronised heartbeat runs the nodes in a drawn order, so each
    node's rows are cold; asked for one node ahead, they arrive while the node before beats.
    A hint only: no value changes."""
    lo, hi = G[0][v], G[0][v + 1]
    _prefetch_range(G[1], lo, hi)
    _prefetch_range(G[3], lo, hi)
    _prefetch_range(G[4], lo, hi)
    _prefetch_range(G[13], lo, hi)
    _prefetch_range(G[16], lo, hi + 1)
    _prefetch_range(X[8], lo, hi)
    if len(W[17]):
        _prefetch_range(W[17], lo, hi)
    _prefetch_range(G[14], v * T, v * T + T + 1)
    _prefetch_range(X[2], v * T, v * T + T)
    _prefetch_range(X[4], v * T, v * T + T)


@numba.njit(**_HELPER_JIT)
def _beat(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, v, T):
    """Node ``v``'s heartbeat: its gossip counters start afresh (a new period, :func:`_count`),
    its meshes kept, its gossip emitted, then its message cache shifted (the oldest window
    goes).  The caller has made room in the
    heap and the id buffer (``deg * T + 1`` events, ``deg * (cache entries + 1)`` ids)."""
    indptr, hbc = G[0], X[16]
    mc_msg, mc_win, mc_cnt = mcs
    # the gossip counters (X[9], X[10]) start afresh by the period number (hbc[v] + 1 below)
    if len(W[17]):  # moot IHAVEs that arrived in the heartbeat now over: forgotten with it
        for e in range(indptr[v], indptr[v + 1]):
            W[17][e] = -np.inf
    if G[11][v]:  # an offline node runs no heartbeat (its cache still shifts)
        if P[P_CONTROL_RPC] > 0:  # its control messages leave as one RPC per peer
            S[S_STAGE] = 1
            _heartbeat_node(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, v, T)
            S[S_STAGE] = 0
            _flush_rpcs(G, P, H, S, F, W, M, X, rs, idb, v)
        else:
            _heartbeat_node(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, v, T)
    keep_from = hbc[v] - np.int64(P[P_MCLEN]) + 2
    q = 0
    for j in range(mc_cnt[v]):
        if mc_win[v, j] >= keep_from:
            mc_msg[v, q] = mc_msg[v, j]
            mc_win[v, q] = mc_win[v, j]
            q += 1
        else:
            _unref(M, S, mc_msg[v, j])
    mc_cnt[v] = q
    hbc[v] += 1


@numba.njit(cache=True)
def subscribe_all(G, P, H, S, F, W, M, X, rs, idb):
    """Every node announces its topics on every connection at ``F[0]`` (one SUBSCRIBE each).

    The nodes announce in an order drawn from ``rs``, so that announcements
    arriving at one instant are handled in a random order, not by node number.
    Returns the heap, grown to hold them.
    """
    indptr, sub = G[0], G[6]
    n, T = sub.shape
    perm = np.arange(n)
    for i in range(n):
        j = i + int(_uniform(rs) * (n - i))
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp
    for i in range(n):
        v = perm[i]
        for e in range(indptr[v], indptr[v + 1]):
            if G[13][e] > F[0]:  # opens later: no announcement at the start
                continue
            for tp in range(T):
                if sub[v, tp]:
                    H = _grow_heap(H, S, 1)
                    _send_control(G, P, H, S, F, W, M, X, rs, idb, v, e, SUBSCRIBE, tp, 0, 0)
    return H


#: the event loop's own state (``Q[i]``), kept by :func:`advance` across its calls of
#: :func:`_events`: the synchronised heartbeat under way (the next index into ``perm``; -1:
#: none) and its number, and the room the next step needs (heap events, ids, a message-cache
#: entry for node ``Q[Q_NEED_MC] - 1``, retransmission counters)
Q_HB, Q_HB_NUM, Q_NEED_HEAP, Q_NEED_IDS, Q_NEED_MC, Q_NEED_RT, Q_NEED_RQ = 0, 1, 2, 3, 4, 5, 6
N_Q = 7
#: a retransmission limit at or above this is no limit: no run asks one peer for one message
#: this often, so the answers are not counted
NO_RETRANS_LIMIT = 2**31 - 1


def ready_queue(capacity: int = 1024) -> tuple[np.ndarray, ...]:
    """An empty queue of READY events (:func:`_events`): a ring of ``capacity`` (a power of
    two) instants, keys and ``a, b, c``, and its head and tail counts."""
    z = np.zeros
    return (z(capacity), z(capacity, dtype=np.int64), z(capacity, dtype=np.int64),
            z(capacity, dtype=np.int64), z(capacity, dtype=np.int64), z(2, dtype=np.int64))


@numba.njit(cache=True)
def _grow_rq(RQ, need):
    """The READY queue with room for ``need`` more (the ring unrolled into one twice as long)."""
    q_t, q_k, q_a, q_b, q_c, ht = RQ
    size = ht[1] - ht[0]
    cap = len(q_t)
    if size + need <= cap:
        return RQ
    while cap < size + need:
        cap *= 2
    mask = len(q_t) - 1
    nt = np.zeros(cap)
    nk = np.zeros(cap, dtype=np.int64)
    na = np.zeros(cap, dtype=np.int64)
    nb = np.zeros(cap, dtype=np.int64)
    nc = np.zeros(cap, dtype=np.int64)
    for i in range(size):
        j = (ht[0] + i) & mask
        nt[i] = q_t[j]
        nk[i] = q_k[j]
        na[i] = q_a[j]
        nb[i] = q_b[j]
        nc[i] = q_c[j]
    ht[0] = 0
    ht[1] = size
    return (nt, nk, na, nb, nc, ht)


@numba.njit(**_HELPER_JIT)
def _push_ready(H, S, RQ, t, a, b, c):
    """Schedule a READY event: at the queue's tail when no earlier than its last one (the queue
    stays sorted by instant and key), in the heap otherwise (room checked by the caller)."""
    q_t, q_k, q_a, q_b, q_c, ht = RQ
    mask = len(q_t) - 1
    if ht[1] > ht[0] and t < q_t[(ht[1] - 1) & mask]:
        _push(H, S, t, READY, a, b, c)
        return
    j = ht[1] & mask
    q_t[j] = t
    q_k[j] = (np.int64(READY) << KIND_SHIFT) | S[S_SEQ]
    S[S_SEQ] += 1
    q_a[j] = a
    q_b[j] = b
    q_c[j] = c
    ht[1] += 1


def retrans_table(capacity: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An empty table of IWANT answers per (message, connection): keys (``-1`` free), counts,
    and the number of keys held (open addressing; ``capacity`` a power of two)."""
    return (np.full(capacity, -1, dtype=np.int64), np.zeros(capacity, dtype=np.int64),
            np.zeros(1, dtype=np.int64))


@numba.njit(cache=True, inline="always")
def _rt_home(key, mask):
    x = np.uint64(key) * _GAMMA
    return np.int64((x ^ (x >> np.uint64(29))) & np.uint64(mask))


@numba.njit(**_HELPER_JIT)
def _rt_bump(RT, key):
    """One more answer for ``key`` (``message * nnz + entry``); returns the count now."""
    keys, vals, fill = RT
    mask = len(keys) - 1
    i = _rt_home(key, mask)
    while True:
        k = keys[i]
        if k == key:
            vals[i] += 1
            return vals[i]
        if k == -1:
            keys[i] = key
            vals[i] = 1
            fill[0] += 1
            return 1
        i = (i + 1) & mask


@numba.njit(cache=True)
def _grow_rt(RT, need):
    """The retransmission table with room for ``need`` more keys at most half full."""
    keys, vals, fill = RT
    cap = len(keys)
    if 2 * (fill[0] + need) <= cap:
        return RT
    while 2 * (fill[0] + need) > cap:
        cap *= 2
    nk = np.full(cap, -1, dtype=np.int64)
    nv = np.zeros(cap, dtype=np.int64)
    mask = cap - 1
    for j in range(len(keys)):
        if keys[j] != -1:
            i = _rt_home(keys[j], mask)
            while nk[i] != -1:
                i = (i + 1) & mask
            nk[i] = keys[j]
            nv[i] = vals[j]
    return (nk, nv, fill)


@numba.njit(**_HELPER_JIT)
def _short(H, idb, S, Q, n_events, n_ids):
    """Whether the heap lacks room for ``n_events`` more or the id buffer for ``n_ids`` more
    (then both needs are left in ``Q`` for :func:`advance`)."""
    if S[S_HEAP] + n_events > len(H[0]) or S[S_IDS] + n_ids > len(idb):
        Q[Q_NEED_HEAP] = n_events
        Q[Q_NEED_IDS] = n_ids
        return True
    return False


def advance(G, P, M, W, X, U, GR, S, F, rs, t_end, stop_at_heartbeat, perm, Z):
    """Handle every event up to ``t_end``; returns ``(status, grown arrays)``.

    ``status`` 0: the heap holds no event at or before ``t_end``; 1: the next
    event is a heartbeat and ``stop_at_heartbeat`` is set (the caller computes
    the scores and calls again with it unset); 2: the next event is a
    publication and every message slot is taken (the caller adds rows and
    calls again).  ``perm`` is the nodes' order that each synchronised
    heartbeat reshuffles in place (the caller starts it at ``0..n-1``).  ``G``, ``P``, ``M``, ``W``,
    ``X``, ``U``, ``S``, ``F``, ``rs`` as built by
    :class:`hedgerow.protocols.gossipsub.engine.GossipSubEngine`; ``GR`` =
    ``(heap, ids, mc_msg, mc_win, retransmissions)``, returned with whatever
    grew.  With recycled message slots (``M[M_REFS]`` not empty) a message
    takes a slot at publication and releases it, its row folded into the
    measures, when no pending event, message-cache entry or listed id refers
    to it.

    The events themselves are handled by :func:`_events`, compiled without
    reference counting: it never grows an array, but checks before each
    event (and each node's part of a heartbeat) that the heap, the id buffer,
    the message cache and the retransmission table have room for the most
    that step can add, and returns here to grow them when they do not.  When
    an array grows changes no event, so the run is the same as growing them
    where they fill.  With
    ``P[P_SCORE_IN_KERNEL]`` the scores are brought up to date at every heartbeat
    (:func:`~hedgerow.protocols.gossipsub._scorekernel.heartbeat_scores` on the state ``Z``),
    each heartbeat's order drawn from ``0..n-1`` as when the caller scores.

    Starts numba's threading layer first: the compiled loop links the parallel score
    pass (:mod:`hedgerow.model.parallel`).
    """
    launch_threads()
    return _advance(G, P, M, W, X, U, GR, S, F, rs, t_end, stop_at_heartbeat, perm, Z)


@numba.njit(cache=True)
def _advance(G, P, M, W, X, U, GR, S, F, rs, t_end, stop_at_heartbeat, perm, Z):
    """:func:`advance`, compiled (called from Python through :func:`advance` only)."""
    indptr = G[0]
    n = len(indptr) - 1
    max_deg = 0
    for v in range(n):
        if indptr[v + 1] - indptr[v] > max_deg:
            max_deg = indptr[v + 1] - indptr[v]
    buf = np.empty(max(max_deg, 1), dtype=np.int64)
    buf2 = np.empty(max(max_deg, 1), dtype=np.int64)
    Q = np.zeros(N_Q, dtype=np.int64)
    Q[Q_HB] = -1
    H, idb, mc_msg, mc_win, RT, RQ = GR
    while True:
        status = _events(G, P, M, W, X, U, (H, idb, mc_msg, mc_win), S, F, rs, RT, RQ, t_end,
                         stop_at_heartbeat, perm, buf, buf2, Q, Z)
        if status != 3:
            return status, (H, idb, mc_msg, mc_win, RT, RQ)
        if Q[Q_NEED_HEAP] or Q[Q_NEED_IDS]:
            H = _grow_heap(H, S, Q[Q_NEED_HEAP])
            idb, _ = _grow_ids(idb, H, S, Q[Q_NEED_IDS], 0, 0)
        if Q[Q_NEED_MC]:
            mc_msg, mc_win = _grow_mcache(mc_msg, mc_win, X[12], Q[Q_NEED_MC] - 1)
        if Q[Q_NEED_RT]:
            RT = _grow_rt(RT, Q[Q_NEED_RT])
        if Q[Q_NEED_RQ]:
            RQ = _grow_rq(RQ, Q[Q_NEED_RQ])
        Q[Q_NEED_HEAP] = Q[Q_NEED_IDS] = Q[Q_NEED_MC] = Q[Q_NEED_RT] = Q[Q_NEED_RQ] = 0


@numba.njit(**_HELPER_JIT)
def _events(G, P, M, W, X, U, GR, S, F, rs, RT, RQ, t_end, stop_at_heartbeat, perm, buf, buf2,
            Q, Z):
    """:func:`advance`'s event loop; returns its status, or 3 when an array must grow first
    (what is needed left in ``Q``; nothing of the step that needs it has been done)."""
    indptr, indices, rev, proc, sub, topic_of = G[0], G[1], G[3], G[7], G[6], G[10]
    online = G[11]
    publisher, size = M[0], M[3]
    arrival, hops, dups, qdelay, parent = M[5], M[6], M[7], M[8], M[10]
    slot_of = M[M_SLOT_OF]
    compact = len(M[M_REFS]) > 0
    recv, dupb, crecv = W[6], W[7], W[4]
    mesh_flag, mlist, mdeg, backoff, lastpub = X[0], X[1], X[2], X[3], X[4]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    first_del, mesh_del, behaviour, score = X[6], X[7], X[11], X[8]
    mc_cnt, hbc = X[12], X[16]
    prom_m, prom_t = X[14], X[15]
    H, idb, mc_msg, mc_win = GR
    h_t, h_k, h_a, h_b, h_c = H
    q_t, q_k, q_a, q_b, q_c, q_ht = RQ
    q_mask = len(q_t) - 1
    n = len(indptr) - 1
    T = sub.shape[1]
    mcs = (mc_msg, mc_win, mc_cnt)
    v11 = P[P_VARIANT] >= 1
    idw_on = P[P_VARIANT] >= 2
    scoring = P[P_SCORING] > 0
    in_kernel = scoring and P[P_SCORE_IN_KERNEL] > 0
    phased = P[P_HB_PHASE] > 0
    atk, conn_up, cptr, cidx = G[12], G[13], G[14], G[15]
    limited = P[P_RETRANS] < NO_RETRANS_LIMIT
    F[5] = t_end  # events run to here in this call (moot IHAVEs, _ihave_moot)
    while True:
        if Q[Q_HB] >= 0:  # a synchronised heartbeat under way: the next nodes beat
            t = F[0]
            while Q[Q_HB] < n:
                v = perm[Q[Q_HB]]
                ev, nid = _hb_room(P, indptr[v + 1] - indptr[v], T, mc_cnt[v])
                if _short(H, idb, S, Q, ev, nid):
                    return 3
                if Q[Q_HB] + 1 < n:  # the next node's rows, while this one beats
                    _prefetch_node(G, W, X, perm[Q[Q_HB] + 1], T)
                _beat(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, v, T)
                Q[Q_HB] += 1
            if _short(H, idb, S, Q, 1, 0):
                return 3
            Q[Q_HB] = -1
            S[S_HBC] += 1
            if t >= P[P_WARMUP]:
                mdeg_sum = X[13]
                for v in range(n):
                    for tp in range(T):
                        if sub[v, tp]:
                            mdeg_sum[v * T + tp] += mdeg[v * T + tp]
                S[S_SAMPLES] += 1
            _push(H, S, t + P[P_HB], HEARTBEAT, Q[Q_HB_NUM] + 1, 0, 0)
        queued = q_ht[1] - q_ht[0]
        if S[S_HEAP] == 0 and queued == 0:
            break
        if S[S_PEND]:
            _flush(G, P, M, S)
        # the next event: the heap's root or the READY queue's head, whichever comes first
        qj = q_ht[0] & q_mask
        from_q = queued > 0 and (S[S_HEAP] == 0 or _below(q_t[qj], q_k[qj], h_t[0], h_k[0]))
        if from_q:
            t = q_t[qj]
            k = q_k[qj]
        else:
            t = h_t[0]
            k = h_k[0]
        if t > t_end:
            return 0
        kind = k >> KIND_SHIFT
        if kind == HEARTBEAT and stop_at_heartbeat and t > F[3]:
            return 1
        if kind == PUBLISH and compact and S[S_FREE] == 0:
            return 2
        if from_q:
            a = q_a[qj]
            b = q_b[qj]
            c = q_c[qj]
        else:
            a = h_a[0]
            b = h_b[0]
            c = h_c[0]
        # room for what handling this event may add (the caller grows it and calls again)
        if kind == DATA:
            if _short(H, idb, S, Q, 1, 1):
                return 3
            if queued >= len(q_t):
                Q[Q_NEED_RQ] = 1
                return 3
        elif kind == READY or kind == PUBLISH:
            w = a if kind == READY else publisher[a]
            if _short(H, idb, S, Q, indptr[w + 1] - indptr[w], 1):
                return 3
            if mc_cnt[w] >= mc_msg.shape[1]:
                Q[Q_NEED_MC] = w + 1
                return 3
        elif kind == CONTROL:
            ck = b & 7
            cnt = c & 0xFFFF
            if ck == RPC:  # its IWANTs' answers, and one RPC of IWANT and PRUNEs in answer
                nid = 2 * cnt + 8
                if P[P_PX] > 0:  # PRUNEs refusing its GRAFTs may carry peer records
                    w = indices[a]
                    nid += 2 * cnt * (indptr[w + 1] - indptr[w] + 2)
                if _short(H, idb, S, Q, cnt + 2, nid):
                    return 3
                if limited and 2 * (RT[2][0] + cnt) > len(RT[0]):
                    Q[Q_NEED_RT] = cnt
                    return 3
            elif ck == IWANT:
                if _short(H, idb, S, Q, cnt, 0):
                    return 3
                if limited and 2 * (RT[2][0] + cnt) > len(RT[0]):
                    Q[Q_NEED_RT] = cnt
                    return 3
            else:
                nid = cnt if ck == IHAVE else 0
                if ck == GRAFT and P[P_PX] > 0:  # a refusal's PRUNE may carry peer records
                    w = indices[a]
                    nid = indptr[w + 1] - indptr[w]
                if _short(H, idb, S, Q, 1, nid):
                    return 3
        elif kind == NODE_HEARTBEAT:
            ev, nid = _hb_room(P, indptr[a + 1] - indptr[a], T, mc_cnt[a])
            if _short(H, idb, S, Q, ev + 1, nid):
                return 3
        if from_q:
            q_ht[0] += 1
        else:
            _pop(H, S)
        F[0] = t
        if t > F[2]:
            F[2] = t
        if compact:
            if kind == DATA or kind == READY:
                _unref(M, S, b)
            elif kind == CONTROL and (b & 7) == RPC:  # the ids of its parts but PRUNEs
                j = c >> 16
                while j < (c >> 16) + (c & 0xFFFF):
                    if (idb[j] & 7) != PRUNE:
                        for i in range(j + 2, j + 2 + idb[j + 1]):
                            _unref(M, S, idb[i])
                    j += 2 + idb[j + 1]
            elif kind == CONTROL and (b & 7) != PRUNE:
                for j in range(c >> 16, (c >> 16) + (c & 0xFFFF)):
                    _unref(M, S, idb[j])
        if kind == DATA:
            e = a
            m = b
            r = slot_of[m]
            w = indices[e]
            v = rev[e]  # w's entry toward the sender
            sender = indices[v]
            tp = topic_of[m]
            if not online[w]:  # the receiver left (churn): the copy is dropped
                S[S_OFFLINE] += 1
                continue
            recv[w] += size[m] + P[P_HEADER]
            slot = _slot(G, v, tp)
            if _seen(arrival, r, w, t, P[P_SEEN_TTL]):
                dups[m] += 1
                dupb[w] += size[m] + P[P_HEADER]
                if mesh_flag[slot] and t - arrival[r, w] <= P[P_MESH_WINDOW]:
                    mesh_del[slot] += 1
                    if scoring:
                        X[17][slot] = 1
                continue
            if arrival[r, w] != np.inf:  # seen, but forgotten (seen_ttl): taken as new again
                dups[m] += 1
                dupb[w] += size[m] + P[P_HEADER]
            else:
                arrival[r, w] = t
                hops[r, w] = hops[r, sender] + 1
                parent[r, w] = sender
                qdelay[r, w] = qdelay[r, sender] + (c >> 1) * 1e-6
                first_del[slot] += 1
                if scoring:
                    X[17][slot] = 1
            if idw_on and size[m] >= P[P_IDW] and sub[w, tp]:
                row = w * T + tp
                if mdeg[row] > 0:  # one id, shared by the copies to every mesh peer
                    off = S[S_IDS]
                    idb[off] = m
                    S[S_IDS] = off + 1
                    ring = U[0].shape[1]
                    for j in range(mdeg[row]):  # the ring places each one writes: their
                        _prefetch(U[1], rev[mlist[mp[row] + j]])  # lines asked for at once
                    for j in range(mdeg[row]):
                        at = rev[mlist[mp[row] + j]] * ring + U[1][rev[mlist[mp[row] + j]]]
                        _prefetch(U[0], at)
                        _prefetch(U[2], at)
                    for j in range(mdeg[row]):
                        _send_idontwant(G, P, S, F, W, U, rs, idb, w, mlist[mp[row] + j], m, off)
            ready = t + proc[w] + P[P_VAL_MS] + P[P_VAL_PER_BYTE] * size[m]
            _push_ready(H, S, RQ, ready, w, m, v)
            _ref(M, m)
        elif kind == READY or kind == PUBLISH:
            drop = False
            if kind == PUBLISH:
                m = a
                w = publisher[m]
                ein = -1
                if compact:  # a slot for the message, released once nothing refers to it
                    _take_slot(M, S, m)
                    _unref(M, S, m)
                r = slot_of[m]
                arrival[r, w] = t
                hops[r, w] = 0
                qdelay[r, w] = 0.0
            else:
                w = a
                m = b
                ein = c
                if not online[w]:  # left before it validated: no relay
                    continue
                drop = atk[w] != 0 and _drops(G, P, w, m, t)
                if drop and not (atk[w] & ATK_LIAR):
                    continue  # an attacker: no forward, nothing cached to gossip or answer
            tp = topic_of[m]
            mc_msg[w, mc_cnt[w]] = m
            mc_win[w, mc_cnt[w]] = hbc[w]
            mc_cnt[w] += 1
            _ref(M, m)
            if kind == READY and drop:  # a liar: announced at once to its peers, never sent
                off = S[S_IDS]
                idb[off] = m
                S[S_IDS] = off + 1
                for i in range(cptr[w * T + tp], cptr[w * T + tp + 1]):
                    e = cidx[i]
                    if e != ein and conn_up[e] <= t:
                        _send_control(G, P, H, S, F, W, M, X, rs, idb, w, e, IHAVE, tp, off, 1)
                continue
            row = w * T + tp
            origin = publisher[m]
            r_m = slot_of[m]
            if kind == PUBLISH and v11 and P[P_FLOOD] > 0:
                for i in range(cptr[row], cptr[row + 1]):
                    e = cidx[i]
                    if scoring and score[e] < P[P_PUBLISH_THR]:
                        continue
                    if conn_up[e] > t:
                        continue
                    _send_data(G, P, H, S, F, W, X, rs, M, w, e, m, 0)
                continue
            if not sub[w, tp]:
                if kind == READY:
                    continue  # only subscribers relay
                if mdeg[row] == 0:  # fanout: D peers of the topic
                    kf = 0
                    for i in range(cptr[row], cptr[row + 1]):
                        e = cidx[i]
                        if scoring and score[e] < P[P_PUBLISH_THR]:
                            continue
                        if conn_up[e] > t:
                            continue
                        buf[kf] = e
                        kf += 1
                    took = _sample(buf, kf, np.int64(P[P_D]), rs)
                    for i in range(took):
                        mesh_flag[_slot(G, buf[i], tp)] = 1
                        mlist[mp[row] + mdeg[row]] = buf[i]
                        mdeg[row] += 1
                lastpub[row] = t
            if idw_on:  # the rings _unwanted will scan: their lines asked for at once
                ring = U[0].shape[1]
                for j in range(mdeg[row]):
                    e = mlist[mp[row] + j]
                    if arrival[r_m, indices[e]] != np.inf:
                        _prefetch(U[0], e * ring)
                        _prefetch(U[0], e * ring + ring - 1)
            for j in range(mdeg[row]):
                e = mlist[mp[row] + j]
                x = indices[e]
                if e == ein or x == origin:
                    continue
                if idw_on and arrival[r_m, x] != np.inf and _unwanted(U, e, m, t):
                    continue
                _send_data(G, P, H, S, F, W, X, rs, M, w, e, m, 0)
        elif kind == CONTROL:
            e = a
            ck = b & 7
            tp = b >> 3
            off = c >> 16
            cnt = c & 0xFFFF
            w = indices[e]
            ew = rev[e]  # the receiver's entry toward the sender
            if not online[w]:  # the receiver left (churn): dropped
                S[S_OFFLINE] += 1
                continue
            if ck == RPC:  # several control messages in one RPC, answered in one RPC
                crecv[w] += _rpc_size(P, idb, off, cnt)
                _on_rpc(G, P, H, S, F, W, M, X, U, RT, rs, idb, mcs, w, ew, off, cnt, t)
                continue
            crecv[w] += _ctl_size(P, ck, cnt)
            slot = _slot(G, ew, tp)
            if ck == GRAFT:
                _on_graft(G, P, H, S, F, W, M, X, rs, idb, w, ew, tp, t)
            elif ck == SUBSCRIBE:
                # graft on subscribe (the JS implementation): a subscribed receiver whose
                # mesh holds fewer than D_lo peers grafts the new subscriber at once
                row = w * T + tp
                if not sub[w, tp] or mesh_flag[slot] or mdeg[row] >= np.int64(P[P_DLO]):
                    continue
                if v11 and backoff[slot] > t:
                    continue
                if scoring and score[ew] < 0:
                    continue
                _mesh_add(X, slot, row, ew, t)
                _send_control(G, P, H, S, F, W, M, X, rs, idb, w, ew, GRAFT, tp, 0, 0)
            elif ck == PRUNE:
                _on_prune(G, P, S, X, rs, idb, w, ew, tp, off, cnt, t)
            elif ck == IHAVE:
                if not _ihave_gate(G, P, W, X, w, ew, t) or not sub[w, tp]:
                    continue
                top = S[S_IDS]
                want = _ihave_unseen(G, P, M, idb, w, off, cnt, top, 0, t)
                _ihave_ask(G, P, H, S, F, W, M, X, rs, idb, w, ew, top, want, t)
            else:  # IWANT: w answers from its message cache
                _on_iwant(G, P, H, S, F, W, M, X, U, RT, rs, idb, mcs, w, ew, off, cnt, t)
        elif kind == HEARTBEAT:
            F[4] = t + P[P_HB]  # the next one (moot IHAVEs arrive before it, _ihave_moot)
            if in_kernel:  # the scores the caller would compute before this heartbeat
                for i in range(n):
                    perm[i] = i
                heartbeat_scores(G[2], sub, X, Z, t, T, G[16], G[17], G[18],
                                 P[P_SCORE_PARALLEL] > 0)
            if scoring:  # broken promises: a P7 penalty each (go's applyIwantPenalties)
                for e in range(len(indices)):
                    m = prom_m[e]
                    if m < 0:
                        continue
                    asker = indices[rev[e]]
                    if arrival[slot_of[m], asker] != np.inf:
                        prom_m[e] = -1  # kept
                        _unref(M, S, m)
                    elif prom_t[e] <= t:
                        behaviour[e] += 1.0
                        X[18][e] = 1
                        prom_m[e] = -1
                        _unref(M, S, m)
            if not phased:
                for i in range(n):  # this heartbeat's order of the nodes
                    j = i + int(_uniform(rs) * (n - i))
                    tmp = perm[i]
                    perm[i] = perm[j]
                    perm[j] = tmp
                Q[Q_HB] = 0  # every node beats, in this order (the loop's top runs them)
            else:
                Q[Q_HB] = n  # no node beats here: only the run's own bookkeeping
            Q[Q_HB_NUM] = a
        else:  # NODE_HEARTBEAT: one node's own heartbeat (random phases)
            _beat(G, P, H, S, F, W, M, X, idb, mcs, rs, buf, buf2, a, T)
            _push(H, S, t + P[P_HB], NODE_HEARTBEAT, a, 0, 0)
    if S[S_PEND]:
        _flush(G, P, M, S)
    return 0


@numba.njit(cache=True)
def leave(G, X, nodes, T):
    """Nodes go offline: out of every mesh and fanout at both ends, their caches emptied."""
    indptr, indices, rev, online = G[0], G[1], G[3], G[11]
    slot_ptr, slot_topic = G[16], G[17]
    flag, mlist, mdeg, lastpub, mc_cnt = X[0], X[1], X[2], X[4], X[12]
    mp = X[19]  # the mesh lists' rows: row r at mlist[mp[r]:mp[r + 1]]
    for v in nodes:
        if not online[v]:
            continue
        online[v] = 0
        for tp in range(T):
            row = v * T + tp
            for j in range(mdeg[row]):
                flag[_slot(G, mlist[mp[row] + j], tp)] = 0
                mlist[mp[row] + j] = -1
            mdeg[row] = 0
            lastpub[row] = -np.inf
        for e in range(indptr[v], indptr[v + 1]):
            r = rev[e]  # the peer's entry toward v
            w = indices[e]
            for s in range(slot_ptr[r], slot_ptr[r + 1]):  # its slots, in topic order
                if not flag[s]:
                    continue
                flag[s] = 0
                tp = slot_topic[s]
                row = w * T + tp
                k = mdeg[row]
                for j in range(k):
                    if mlist[mp[row] + j] == r:
                        mlist[mp[row] + j] = mlist[mp[row] + k - 1]
                        mlist[mp[row] + k - 1] = -1
                        mdeg[row] = k - 1
                        break
        mc_cnt[v] = 0


def advance_churn(G, P, M, W, X, U, GR, S, F, rs, times, states, start, resume,
                  stop_at_heartbeat, perm, compact, Z):
    """:func:`advance` to each ``times[i]`` from ``i = start`` on, then the online flags set to
    ``states[i]`` (nodes that leave go as :func:`leave` has them; ``compact``: their cache
    entries let go of their slots first); returns ``(status, i, grown arrays)``, ``i`` where a
    status other than 0 stopped it (the caller calls again from there with ``resume`` set:
    ``perm`` is then not started afresh, as the caller has set it).

    As many calls of the engine's ``run_until`` and ``set_online``, the heartbeat order
    started afresh at each instant.

    Starts numba's threading layer first, as :func:`advance` does.
    """
    launch_threads()
    return _advance_churn(G, P, M, W, X, U, GR, S, F, rs, times, states, start, resume,
                          stop_at_heartbeat, perm, compact, Z)


@numba.njit(cache=True)
def _advance_churn(G, P, M, W, X, U, GR, S, F, rs, times, states, start, resume,
                   stop_at_heartbeat, perm, compact, Z):
    """:func:`advance_churn`, compiled (called through :func:`advance_churn` only)."""
    n = len(G[0]) - 1
    T = G[6].shape[1]
    online = G[11]
    left = np.empty(max(n, 1), dtype=np.int64)
    for i in range(start, len(times)):
        if not (resume and i == start):
            for v in range(n):
                perm[v] = v
        status, GR = _advance(G, P, M, W, X, U, GR, S, F, rs, times[i], stop_at_heartbeat,
                              perm, Z)
        if status != 0:
            return status, i, GR
        if times[i] > F[0]:
            F[0] = times[i]
        k = 0
        for v in range(n):
            if online[v] and not states[i, v]:
                left[k] = v
                k += 1
        if k:
            if compact:
                drop_cache_refs(M, S, GR[2], X[12], left[:k], online)
            leave(G, X, left[:k], T)
        for v in range(n):
            if states[i, v]:
                online[v] = 1
    return 0, len(times), GR
