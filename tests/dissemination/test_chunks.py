"""Memory-bounded chunks and silent nodes (``hedgerow.dissemination.chunks``)."""

from __future__ import annotations

import numpy as np

from hedgerow.dissemination import MessageBatch, disseminate, disseminate_chunks, edge_delays
from hedgerow.dissemination import chunks as chunks_mod
from hedgerow.latency import unit_square
from hedgerow.model import RngStreams
from hedgerow.model.outlinks import closure_csr, random_out_neighbours
from hedgerow.workloads import draw_messages, interest_instance


def _net(n=40, d=3, seed=2):
    streams = RngStreams(seed)
    inst = interest_instance(n, 6, 0.3, streams.stream("workload"))
    indptr, indices = closure_csr(random_out_neighbours(n, d, streams.stream("init")), n)
    ed = edge_delays(indptr, indices, unit_square(n, streams.stream("latency")))
    pub, top = draw_messages(inst, 50, streams.stream("messages"))
    return inst, indptr, indices, ed, np.full(n, 5.0), pub, top


def test_chunks_cover_every_message_once_and_match_one_call(monkeypatch):
    inst, indptr, indices, ed, proc, pub, top = _net()
    whole = disseminate(
        indptr, indices, ed, proc, inst.masks, MessageBatch.create(pub, top, 1), record_edges=True
    )
    # a budget of 7 messages' edge times per chunk
    monkeypatch.setattr(chunks_mod, "EDGE_BUDGET_BYTES", 7 * 8 * len(indices))
    seen = []
    for sel, dl, emap in disseminate_chunks(
        indptr, indices, ed, proc, inst.masks, pub, top, 1, record_edges=True
    ):
        assert len(sel) <= 7
        np.testing.assert_array_equal(emap, np.arange(len(indices)))
        np.testing.assert_array_equal(dl.arrival, whole.arrival[sel])
        np.testing.assert_array_equal(dl.edge_recv, whole.edge_recv[sel])
        np.testing.assert_array_equal(dl.copies, whole.copies[sel])
        seen.extend(sel.tolist())
    assert sorted(seen) == list(range(len(pub)))


def test_without_edges_one_call_per_group():
    inst, indptr, indices, ed, proc, pub, top = _net()
    out = list(
        disseminate_chunks(indptr, indices, ed, proc, inst.masks, pub, top, 1, record_edges=False)
    )
    assert len(out) == 1 and out[0][0].tolist() == list(range(len(pub)))
    assert out[0][1].edge_recv is None


def test_silent_nodes_never_forward_their_topic():
    inst, indptr, indices, ed, proc, pub, top = _net()
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
