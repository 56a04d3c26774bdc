"""The event kernel's per-heartbeat gossip counters (``_kernel._count``, ``_set_count``).

go-libp2p-pubsub counts the IHAVEs a peer sent (``peerhave``) and the ids asked of it
(``iasked``) per heartbeat and clears both maps at each heartbeat.  The kernel does not clear
them: each count carries its owner's heartbeat number, and a count of an earlier heartbeat reads
0.  The runs that depend on these limits are pinned bit for bit in ``test_identity.py``.
"""

from __future__ import annotations

import numpy as np

from hedgerow.protocols.gossipsub import _kernel as K


def test_a_count_reads_back_in_its_heartbeat() -> None:
    a = np.zeros(4, dtype=np.int64)
    K._set_count(a, 2, 7, 5)
    assert K._count(a, 2, 7) == 5
    K._set_count(a, 2, 7, K._count(a, 2, 7) + 1)
    assert K._count(a, 2, 7) == 6


def test_a_count_of_an_earlier_heartbeat_reads_zero() -> None:
    a = np.zeros(4, dtype=np.int64)
    K._set_count(a, 1, 3, 9)
    assert K._count(a, 1, 4) == 0  # the owner has run its next heartbeat
    K._set_count(a, 1, 4, K._count(a, 1, 4) + 1)  # the new heartbeat counts from 0
    assert K._count(a, 1, 4) == 1
    assert K._count(a, 1, 3) == 0  # and the old count is gone


def test_fresh_counters_are_zero_at_the_first_heartbeat() -> None:
    a = np.zeros(3, dtype=np.int64)  # as the engine allocates them; X[16] starts at 0
    assert [K._count(a, e, 0) for e in range(3)] == [0, 0, 0]


def test_counts_up_to_the_mask_are_kept_apart_from_the_heartbeat_number() -> None:
    a = np.zeros(1, dtype=np.int64)
    big = int(K._COUNT_MASK)
    K._set_count(a, 0, 123_456, big)
    assert K._count(a, 0, 123_456) == big
    assert K._count(a, 0, 123_457) == 0
