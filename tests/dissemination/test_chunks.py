"""Memory-bounded chunks and silent nodes (``hedgerow.dissemination.chunks``)."""

from __future__ import annotations

import numpy as np
from _dissemination_reference import assert_chunks_agree, random_net

from hedgerow.dissemination import MessageBatch, disseminate, disseminate_chunks
from hedgerow.dissemination import chunks as chunks_mod


def test_chunks_cover_every_message_once_and_match_one_call(monkeypatch):
    inst, indptr, indices, ed, proc, pub, top = random_net()
    whole = disseminate(
        indptr, indices, ed, proc, inst.masks, MessageBatch.create(pub, top, 1), record_edges=True
    )
    # a budget of 7 messages' edge times per chunk
    monkeypatch.setattr(chunks_mod, "EDGE_BUDGET_BYTES", 7 * 8 * len(indices))
    chunks = disseminate_chunks(
        indptr, indices, ed, proc, inst.masks, pub, top, 1, record_edges=True
    )
    sels = assert_chunks_agree(chunks, whole, len(pub), len(indices))
    assert max(len(sel) for sel in sels) <= 7


def test_without_edges_one_call_per_group():
    inst, indptr, indices, ed, proc, pub, top = random_net()
    out = list(
        disseminate_chunks(indptr, indices, ed, proc, inst.masks, pub, top, 1, record_edges=False)
    )
    assert len(out) == 1 and out[0][0].tolist() == list(range(len(pub)))
    assert out[0][1].edge_recv is None


def test_silent_nodes_never_forward_their_topic():
    inst, indptr, indices, ed, proc, pub, top = random_net()
    silent = np.zeros(inst.n_nodes, dtype=bool)
    silent[::3] = True
    victim = int(top[0])
    groups = list(
        disseminate_chunks(
            indptr,
            indices,
            ed,
            proc,
            inst.masks,
            pub,
            top,
            1,
            record_edges=True,
            silent=silent,
            silent_topic=victim,
        )
    )
    rows = np.repeat(np.arange(inst.n_nodes), np.diff(indptr))
    seen = []
    for sel, dl, emap in groups:
        seen.extend(sel.tolist())
        if (top[sel] == victim).all():
            # the entry map drops exactly the silent nodes' outgoing links
            np.testing.assert_array_equal(emap < 0, silent[rows])
            parents = dl.parent[dl.parent >= 0]
            assert not silent[parents].any()
        else:
            assert (top[sel] != victim).all()
            np.testing.assert_array_equal(emap, np.arange(len(indices)))
    assert sorted(seen) == list(range(len(pub)))
