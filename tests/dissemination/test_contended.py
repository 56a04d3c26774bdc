"""The contended kernel: against an independent event-by-event reference, closed forms,
and exactly today's kernel when nothing contends."""

from __future__ import annotations

import numpy as np
import pytest
from _contended_reference import as_arrays, simulate
from _dissemination_reference import random_masks

from hedgerow.dissemination import (
    EntryTopics,
    MessageBatch,
    disseminate,
    disseminate_mesh,
)
from hedgerow.dissemination.contended import (
    ContendedDelivery,
    ControlBatch,
    Network,
    disseminate_contended,
    message_sizes,
)
from hedgerow.errors import ParameterError
from hedgerow.model import Instance, Overlay

POLICIES = ("ttl", "flood", "topic", "mesh")
N_CASES = 700
FIELDS = ("arrival", "hops", "parent", "copies", "relay_copies", "duplicates", "edge_recv")


def random_graph(rng: np.random.Generator, n: int):
    adj = rng.random((n, n)) < rng.choice([0.2, 0.4, 0.7])
    if rng.random() < 0.75:
        adj = np.triu(adj, 1)
        adj = adj | adj.T
    else:
        np.fill_diagonal(adj, False)
    rows, cols = np.nonzero(adj)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    return indptr, cols.astype(np.int64)


def random_labels(rng: np.random.Generator, nnz: int, n_topics: int) -> EntryTopics:
    counts = rng.integers(0, 3, nnz)
    topics = rng.integers(-1, n_topics, int(counts.sum()))
    return EntryTopics(np.concatenate([[0], np.cumsum(counts)]), topics)


def random_case(rng: np.random.Generator):
    """A small graph, a network with bandwidth classes, sizes, loss, jitter, publication times."""
    n = int(rng.integers(1, 10))
    indptr, indices = random_graph(rng, n)
    nnz = len(indices)
    if rng.random() < 0.5:  # ties on purpose
        ed = rng.integers(0, 3, nnz).astype(float)
        pd = rng.integers(0, 2, n).astype(float)
    else:
        ed = rng.random(nnz) * 10
        pd = rng.random(n)
    n_topics = int(rng.choice([1, 3, 70]))
    masks = random_masks(rng, n, n_topics, rng.choice([0.3, 0.7]))
    m = int(rng.integers(1, 6))
    batch = MessageBatch(
        rng.integers(0, n, m), rng.integers(0, n_topics, m), rng.integers(0, 4, m)
    )
    classes = rng.choice([np.inf, 8.0, 1.0, 0.5, 3.3], size=(n, 2))  # Mbit/s
    net = Network(
        classes[:, 0],
        classes[:, 1],
        download_queues=bool(rng.random() < 0.5),
        validation_ms=float(rng.choice([0.0, 0.5, 2.0])),
        validation_ms_per_byte=float(rng.choice([0.0, 0.001])),
        loss=float(rng.choice([0.0, 0.0, 0.3])),
        jitter_ms=float(rng.choice([0.0, 0.0, 1.5])),
    )
    kind = rng.integers(0, 3)
    if kind == 0:
        size = float(rng.choice([0.0, 125.0, 1000.0]))
    elif kind == 1:
        size = {t: float(s) for t, s in enumerate(rng.integers(0, 2000, n_topics))}
    else:
        size = rng.integers(0, 3000, m).astype(float)
    pub_kind = rng.integers(0, 3)
    if pub_kind == 0:
        published = np.zeros(m)
    elif pub_kind == 1:
        published = rng.integers(0, 3, m).astype(float)
    else:
        published = rng.random(m) * 20
    labels = random_labels(rng, nnz, n_topics)
    return indptr, indices, ed, pd, masks, batch, net, size, published, labels


def random_control(rng: np.random.Generator, n: int) -> ControlBatch:
    """Up to 8 control messages: requests at their instants, some answered, ties on purpose."""
    c = int(rng.integers(0, 9))
    answers = np.full(c, -1)
    free = list(range(c))
    for i in range(1, c):
        if rng.random() < 0.4:
            options = [j for j in free if j < i]
            if options:
                r = int(rng.choice(options))
                answers[i] = r
                free.remove(r)
    sender = rng.integers(0, n, c)
    receiver = rng.integers(0, n, c)
    # an answer goes back to the sender of its request
    for i in np.flatnonzero(answers >= 0):
        sender[i], receiver[i] = receiver[answers[i]], sender[answers[i]]
    if rng.random() < 0.5:
        at = rng.integers(0, 3, c).astype(float)
        delay = rng.integers(0, 3, c).astype(float)
    else:
        at = rng.random(c) * 20
        delay = rng.random(c) * 10
    nbytes = rng.choice([0.0, 100.0, 1000.0, 3000.0], c)
    return ControlBatch.create(sender, receiver, at, answers=answers, nbytes=nbytes,
                               delay=delay)


def check_case(case, policy: str, seed: int, control: ControlBatch | None = None) -> None:
    indptr, indices, ed, pd, masks, batch, net, size, published, labels = case
    got = disseminate_contended(
        indptr, indices, ed, pd, masks, batch, net, size=size, publish_at=published,
        policy=policy, labels=labels, rng=np.random.default_rng(seed), record_edges=True,
        force_contended=True, control=control,
    )
    keys = np.random.default_rng(seed)
    loss_key = int(keys.integers(0, 2**64, dtype=np.uint64)) if net.loss > 0 else 0
    jit_key = int(keys.integers(0, 2**64, dtype=np.uint64)) if net.jitter_ms > 0 else 0
    lab = [
        labels.topics[labels.indptr[e] : labels.indptr[e + 1]].tolist()
        for e in range(len(indices))
    ]
    want = as_arrays(
        simulate(
            indptr, indices, ed, pd, masks, batch.publisher, batch.topic, batch.ttl, published,
            message_sizes(batch, size), net.upload, net.download,
            down_queues=net.download_queues, val_ms=net.validation_ms,
            val_per_byte=net.validation_ms_per_byte, loss=net.loss, loss_key=loss_key,
            jitter=net.jitter_ms, jitter_key=jit_key, policy=policy, labels=lab,
            control=None if control is None else (
                control.sender.tolist(), control.receiver.tolist(), control.at.tolist(),
                control.nbytes.tolist(), control.delay.tolist(), control.answers.tolist()),
        )
    )
    np.testing.assert_array_equal(got.arrival, want["arrival"])
    np.testing.assert_array_equal(got.hops, want["hops"])
    np.testing.assert_array_equal(got.parent, want["parent"])
    np.testing.assert_array_equal(got.edge_recv, want["edge_recv"].reshape(got.edge_recv.shape))
    for mine, theirs in (
        ("copies", "copies"), ("relay_copies", "relay"), ("duplicates", "dups"),
        ("lost", "lost"), ("sent_bytes", "sent"), ("received_bytes", "recv"),
        ("duplicate_bytes", "dupb"),
    ):
        np.testing.assert_array_equal(getattr(got, mine), want[theirs], err_msg=mine)
    np.testing.assert_allclose(got.uplink_busy, want["busy"], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(got.queue_wait, want["qwait"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.queue_delay, want["qdelay"], rtol=1e-9, atol=1e-8)
    np.testing.assert_array_equal(got.control_sent_bytes, want["csent"])
    np.testing.assert_array_equal(got.control_received_bytes, want["crecv"])
    assert got.span[1] == want["last"]


def test_kernel_matches_the_event_by_event_reference():
    """>= 500 random cases x 4 policies: bandwidth classes, sizes, queues, loss, jitter, times."""
    rng = np.random.default_rng(20261126)
    seen = {"loss": 0, "jitter": 0, "down": 0, "published": 0, "limited": 0}
    for i in range(N_CASES):
        case = random_case(rng)
        net, published = case[6], case[8]
        seen["loss"] += net.loss > 0
        seen["jitter"] += net.jitter_ms > 0
        seen["down"] += net.download_queues
        seen["published"] += bool(published.any())
        seen["limited"] += bool(np.isfinite(net.upload).any())
        for policy in POLICIES:
            check_case(case, policy, seed=i)
    assert min(seen.values()) >= 100, seen


def test_kernel_with_control_messages_matches_the_event_by_event_reference():
    """>= 200 random cases x 4 policies with control messages (requests, answers, ties)
    sharing the uplinks and downlinks with the data."""
    rng = np.random.default_rng(20261127)
    seen = {"control": 0, "answers": 0, "down": 0, "limited": 0, "delayed": 0}
    for i in range(260):
        case = random_case(rng)
        n = len(case[0]) - 1
        control = random_control(rng, n)
        net = case[6]
        seen["control"] += len(control) > 0
        seen["answers"] += bool((control.answers >= 0).any())
        seen["down"] += net.download_queues and len(control) > 0
        seen["limited"] += bool(np.isfinite(net.upload).any()) and len(control) > 0
        without = disseminate_contended(
            *case[:7], size=case[7], publish_at=case[8], policy="flood",
            rng=np.random.default_rng(i), force_contended=True)
        with_ctl = disseminate_contended(
            *case[:7], size=case[7], publish_at=case[8], policy="flood",
            rng=np.random.default_rng(i), force_contended=True, control=control)
        seen["delayed"] += bool((with_ctl.arrival > without.arrival).any())
        for policy in POLICIES:
            check_case(case, policy, seed=i, control=control)
    assert min(seen.values()) >= 50, seen


def uncontended_case(rng: np.random.Generator):
    case = random_case(rng)
    indptr, indices, ed, pd, masks, batch = case[:6]
    return indptr, indices, ed, pd, masks, batch, case[9]


@pytest.mark.parametrize("policy", POLICIES)
def test_forced_kernel_equals_todays_kernel_when_nothing_contends(policy):
    rng = np.random.default_rng(11)
    for _ in range(150):
        indptr, indices, ed, pd, masks, batch, labels = uncontended_case(rng)
        n = len(indptr) - 1
        if policy == "mesh":
            today = disseminate_mesh(indptr, indices, ed, pd, masks, batch, labels,
                                     record_edges=True)
        else:
            today = disseminate(indptr, indices, ed, pd, masks, batch, policy=policy,
                                record_edges=True)
        for force in (True, False):
            got = disseminate_contended(
                indptr, indices, ed, pd, masks, batch, Network.uniform(n), policy=policy,
                labels=labels, record_edges=True, force_contended=force,
            )
            assert isinstance(got, ContendedDelivery)
            for f in FIELDS:
                np.testing.assert_array_equal(getattr(got, f), getattr(today, f), err_msg=f)
            assert not got.sent_bytes.any() and not got.lost.any()


def test_unlimited_bandwidth_with_sizes_keeps_todays_times():
    """Bytes are counted, but with unlimited bandwidth they cost no time."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        indptr, indices, ed, pd, masks, batch, _ = uncontended_case(rng)
        n = len(indptr) - 1
        today = disseminate(indptr, indices, ed, pd, masks, batch, policy="flood")
        got = disseminate_contended(indptr, indices, ed, pd, masks, batch, Network.uniform(n),
                                    size=100.0, policy="flood")
        np.testing.assert_array_equal(got.arrival, today.arrival)
        assert got.sent_bytes.sum() == 100.0 * today.copies.sum()
        assert got.received_bytes.sum() == got.sent_bytes.sum()
        assert got.duplicate_bytes.sum() == 100.0 * today.duplicates.sum()


# --------------------------------------------------------------------- closed forms
S, MBPS, LAT = 1000.0, 8.0, 10.0  # 1,000 bytes at 8 Mbit/s = 1 ms on the wire
TX = S / (MBPS * 125.0)


def path(k: int):
    return Overlay.from_edges(k + 1, [(i, i + 1) for i in range(k)]).undirected_csr()


def everyone(n: int) -> np.ndarray:
    return Instance.from_lists([[0]] * n, n_topics=1).masks


@pytest.mark.parametrize("k", [1, 2, 5, 17])
@pytest.mark.parametrize("validation", [0.0, 0.25])
def test_store_and_forward_on_a_path(k, validation):
    a = path(k)
    d = disseminate_contended(
        a.indptr, a.indices, np.full(a.nnz, LAT), np.zeros(k + 1), everyone(k + 1),
        MessageBatch.create([0], [0]), Network.uniform(k + 1, MBPS, validation_ms=validation),
        size=S, policy="flood",
    )
    want = [i * (TX + LAT) + max(i - 1, 0) * validation for i in range(k + 1)]
    assert d.arrival[0].tolist() == want
    assert d.arrival[0, k] == k * (TX + LAT) + (k - 1) * validation
    assert d.queue_delay.max() == 0.0


@pytest.mark.parametrize("m", [1, 2, 3, 8, 20])
def test_fifo_uplink_to_m_neighbours(m):
    star = Overlay.from_edges(m + 1, [(0, i) for i in range(1, m + 1)]).undirected_csr()
    d = disseminate_contended(
        star.indptr, star.indices, np.full(star.nnz, LAT), np.zeros(m + 1), everyone(m + 1),
        MessageBatch.create([0], [0]), Network.uniform(m + 1, MBPS), size=S, policy="flood",
    )
    assert d.arrival[0, 1:].tolist() == [i * TX + LAT for i in range(1, m + 1)]
    assert d.uplink_busy[0] == m * TX
    assert d.queue_wait[0] == sum(i * TX for i in range(m))


def test_two_messages_published_at_once_share_the_uplink():
    a = path(1)
    d = disseminate_contended(
        a.indptr, a.indices, np.full(a.nnz, LAT), np.zeros(2), everyone(2),
        MessageBatch.create([0, 0], [0, 0]), Network.uniform(2, MBPS), size=S, policy="flood",
    )
    assert d.arrival[:, 1].tolist() == [TX + LAT, 2 * TX + LAT]
    assert d.arrival[1, 1] - d.arrival[0, 1] == TX
    assert d.queue_wait.tolist() == [0.0, TX]
    assert d.queue_delay[:, 1].tolist() == [0.0, TX]


def test_download_queue_serialises_two_senders():
    """Nodes 1 and 2 each publish to node 0 at once; node 0's downlink takes them in turn."""
    star = Overlay.from_edges(3, [(0, 1), (0, 2)]).undirected_csr()
    net = Network(np.full(3, np.inf), np.full(3, MBPS), download_queues=True)
    d = disseminate_contended(
        star.indptr, star.indices, np.full(star.nnz, LAT), np.zeros(3), everyone(3),
        MessageBatch.create([1, 2], [0, 0]), net, size=S, policy="topic",
    )
    assert d.arrival[:, 0].tolist() == [LAT + TX, LAT + 2 * TX]


def test_lost_copy_holds_the_uplink_and_never_arrives():
    star = Overlay.from_edges(5, [(0, i) for i in range(1, 5)]).undirected_csr()
    for seed in range(20):
        d = disseminate_contended(
            star.indptr, star.indices, np.full(star.nnz, LAT), np.zeros(5), everyone(5),
            MessageBatch.create([0], [0]), Network.uniform(5, MBPS, loss=0.5), size=S,
            policy="topic", rng=np.random.default_rng(seed),
        )
        got = np.isfinite(d.arrival[0, 1:])
        # the i-th copy still arrives at i * TX + LAT: lost copies before it held the uplink
        assert d.arrival[0, 1:][got].tolist() == [
            (i + 1) * TX + LAT for i in np.flatnonzero(got)
        ]
        assert d.lost[0] == (~got).sum() and d.sent_bytes[0] == 4 * S


def test_same_generator_same_result_and_draws_only_when_needed():
    rng = np.random.default_rng(3)
    case = random_case(rng)
    indptr, indices, ed, pd, masks, batch = case[:6]
    n = len(indptr) - 1
    net = Network.uniform(n, 1.0, loss=0.2, jitter_ms=3.0)
    a, b = (
        disseminate_contended(indptr, indices, ed, pd, masks, batch, net, size=500.0,
                              policy="flood", rng=np.random.default_rng(9))
        for _ in range(2)
    )
    np.testing.assert_array_equal(a.arrival, b.arrival)
    g = np.random.default_rng(4)
    disseminate_contended(indptr, indices, ed, pd, masks, batch, Network.uniform(n, 1.0),
                          size=500.0, policy="flood", rng=g)
    assert g.random() == np.random.default_rng(4).random()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"network": Network.uniform(3, 1.0, loss=0.1)}, "rng"),
        ({"size": -1.0}, "size"),
        ({"publish_at": [0.0]}, "publish_at"),
        ({"network": Network.uniform(4)}, "network has 4 nodes"),
        ({"policy": "mesh"}, "labels"),
        ({"policy": "gossip"}, "unknown policy"),
    ],
)
def test_bad_input_is_one_line_naming_the_key(kwargs, match):
    a = path(2)
    args = {"network": Network.uniform(3, 1.0), "size": 10.0, "publish_at": [0.0, 1.0]}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match) as err:
        disseminate_contended(
            a.indptr, a.indices, np.ones(a.nnz), np.zeros(3), everyone(3),
            MessageBatch.create([0, 1], [0, 0]), args.pop("network"), **args,
        )
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"upload": [1.0, 0.0]}, "upload"),
        ({"download": [1.0, np.nan]}, "download"),
        ({"loss": 1.0}, "loss"),
        ({"jitter_ms": -1.0}, "jitter_ms"),
        ({"validation_ms": np.inf}, "validation_ms"),
        ({"upload": 1.0, "download": 1.0}, "upload"),
        ({"upload": [1.0, 1.0, 1.0]}, "download"),
    ],
)
def test_bad_network_names_the_key(kwargs, match):
    args = {"upload": [1.0, 1.0], "download": [1.0, 1.0], **kwargs}
    with pytest.raises(ParameterError, match=match):
        Network(**args)


def test_bandwidth_classes_follow_shares_and_seed():
    classes = {"home": (0.75, 25.0, 100.0), "dc": (0.25, 1000.0, 1000.0)}
    a = Network.from_classes(1001, classes, np.random.default_rng(1))
    b = Network.from_classes(1001, classes, np.random.default_rng(1))
    np.testing.assert_array_equal(a.upload, b.upload)
    assert int((a.upload == 25.0).sum()) == 751 and int((a.download == 1000.0).sum()) == 250
    with pytest.raises(ParameterError, match=r"classes\.dc"):
        Network.from_classes(10, {"home": (1.0, 1.0, 1.0), "dc": (-1.0, 1.0, 1.0)},
                             np.random.default_rng(1))


# --------------------------------------------------------------------- control messages
C_BYTES = 500.0
C_TX = C_BYTES / (MBPS * 125.0)


def one_link_with_control(control: ControlBatch, net: Network | None = None, publish=0.0):
    a = path(1)
    return disseminate_contended(
        a.indptr, a.indices, np.full(a.nnz, LAT), np.zeros(2), everyone(2),
        MessageBatch.create([0], [0]), net or Network.uniform(2, MBPS), size=S,
        publish_at=publish, policy="flood", control=control,
    )


def test_control_message_ahead_of_a_data_copy_delays_it_by_its_transmission():
    """C bytes of control at t=0 ahead of S bytes of data on one uplink of B: the data copy
    leaves at (C+S)/B (control before data at one instant)."""
    d = one_link_with_control(ControlBatch.create([0], [1], [0.0], nbytes=C_BYTES, delay=LAT))
    assert d.arrival[0, 1] == (C_BYTES + S) / (MBPS * 125.0) + LAT
    assert d.arrival[0, 1] == C_TX + TX + LAT
    assert d.queue_delay[0, 1] == C_TX
    assert d.control_sent_bytes.tolist() == [C_BYTES, 0.0]
    assert d.control_received_bytes.tolist() == [0.0, C_BYTES]
    assert d.uplink_busy[0] == C_TX + TX
    assert d.sent_bytes.tolist() == [S, 0.0]  # payload apart
    # sent after the data was queued: it waits, the data does not
    d = one_link_with_control(ControlBatch.create([0], [1], [0.0], nbytes=C_BYTES), publish=0.0)
    late = one_link_with_control(ControlBatch.create([0], [1], [TX / 2], nbytes=C_BYTES))
    assert late.arrival[0, 1] == TX + LAT and d.arrival[0, 1] == C_TX + TX + LAT
    assert late.uplink_busy[0] == TX + C_TX and late.control_received_bytes[1] == C_BYTES


def test_request_and_answer_round_trip():
    """A request of C bytes from 0 to 1 at t=0 and its answer of 2C bytes: the answer is
    sent when the request is received and arrives at C/B + L + 2C/B + L."""
    cb = ControlBatch.create([0, 1], [1, 0], [0.0, 0.0], answers=[-1, 0],
                             nbytes=[C_BYTES, 2 * C_BYTES], delay=LAT)
    d = one_link_with_control(cb, publish=100.0)
    assert d.span[1] == 100.0 + TX + LAT  # the data, last
    assert d.control_received_bytes.tolist() == [2 * C_BYTES, C_BYTES]
    assert d.uplink_busy.tolist() == [C_TX + TX, 2 * C_TX]
    # the answer's transmission on node 1's uplink ends at C/B + L + 2C/B; node 1 forwards
    # nothing, so only the span shows it: publish the data before the answer arrives
    d = one_link_with_control(cb, publish=0.0)
    assert d.span[1] == C_TX + LAT + 2 * C_TX + LAT
    # an answer sent 3 ms after the request is received
    cb3 = ControlBatch.create([0, 1], [1, 0], [0.0, 3.0], answers=[-1, 0],
                              nbytes=[C_BYTES, 2 * C_BYTES], delay=LAT)
    assert one_link_with_control(cb3).span[1] == C_TX + LAT + 3.0 + 2 * C_TX + LAT


def test_control_message_queues_on_the_downlink():
    """With download queues, a control message that reaches the receiver's downlink first
    holds it: the data copy arriving while it is received waits for the rest of it; at one
    instant the data copy goes first (CSR entries before control messages)."""
    net = Network(np.full(2, np.inf), np.full(2, MBPS), download_queues=True)
    early = LAT - C_TX / 2
    ctl = ControlBatch.create([0], [1], [0.0], nbytes=C_BYTES, delay=early)
    d = one_link_with_control(ctl, net)
    assert d.arrival[0, 1] == early + C_TX + TX
    assert d.control_received_bytes[1] == C_BYTES
    assert d.span[1] == early + C_TX + TX
    tie = one_link_with_control(ctl.with_delay(LAT), net)
    assert tie.arrival[0, 1] == LAT + TX and tie.span[1] == LAT + TX + C_TX


def test_no_or_empty_control_batch_changes_nothing_and_unlimited_control_costs_no_time():
    rng = np.random.default_rng(8)
    empty = ControlBatch.create(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    for i in range(40):
        case = random_case(rng)
        indptr, indices, ed, pd, masks, batch, _, size, published, _ = case
        n = len(indptr) - 1
        args = dict(size=size, publish_at=published, policy="ttl", record_edges=True)
        a = disseminate_contended(*case[:7], **args, rng=np.random.default_rng(i))
        b = disseminate_contended(*case[:7], **args, rng=np.random.default_rng(i), control=empty)
        for f in (*FIELDS, "sent_bytes", "uplink_busy", "queue_delay"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
        assert a.span == b.span and not b.control_sent_bytes.any()
        # unlimited bandwidth: control bytes are counted, data times do not move, on both paths
        ctl = random_control(rng, n)
        for force in (False, True):
            free = disseminate_contended(indptr, indices, ed, pd, masks, batch,
                                         Network.uniform(n), policy="flood", control=ctl,
                                         force_contended=force)
            today = disseminate(indptr, indices, ed, pd, masks, batch, policy="flood")
            np.testing.assert_array_equal(free.arrival, today.arrival)
            assert free.control_sent_bytes.sum() == ctl.nbytes.sum()
            np.testing.assert_array_equal(
                free.control_received_bytes,
                np.bincount(ctl.receiver, weights=ctl.nbytes, minlength=n))


def test_control_batch_sizes_concat_and_bad_input():
    cb = ControlBatch.create([0, 1, 2], [1, 0, 0], answers=[-1, 0, -1], entries=[3, 2, 0])
    assert cb.sized(40, 24).nbytes.tolist() == [112.0, 88.0, 40.0]
    assert cb.with_delay([1.0, 2.0, 3.0]).delay.tolist() == [1.0, 2.0, 3.0]
    both = ControlBatch.concat([cb, cb])
    assert both.answers.tolist() == [-1, 0, -1, -1, 3, -1] and len(both) == 6
    for kwargs, match in (
        ({"answers": [1, -1, -1]}, "answers"),
        ({"answers": [-1, 0, 0]}, "at most one answer"),
        ({"entries": [-1, 0, 0]}, "entries"),
        ({"at": [0.0, -1.0, 0.0]}, "at"),
        ({"nbytes": [np.inf, 0.0, 0.0]}, "nbytes"),
        ({"delay": [0.0, 0.0]}, "delay"),
    ):
        with pytest.raises(ParameterError, match=match) as err:
            ControlBatch.create([0, 1, 2], [1, 0, 0], **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="control_size"):
        cb.sized(-1.0)
    a = path(2)
    with pytest.raises(ParameterError, match="control: sender"):
        disseminate_contended(
            a.indptr, a.indices, np.ones(a.nnz), np.zeros(3), everyone(3),
            MessageBatch.create([0], [0]), Network.uniform(3, 1.0), size=10.0,
            control=ControlBatch.create([0], [3]))
