"""The written forms of the wire settings (``scenarios/world/wire.py``): publication processes
per topic, per publisher and periodic; lognormal, listed and file sizes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from hedgerow.dissemination import MessageBatch, Network, disseminate_contended
from hedgerow.errors import DataError, ParameterError
from hedgerow.model import Instance, Overlay
from hedgerow.protocols import get_protocol
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world, resolve_scenario
from hedgerow.scenarios.world.wire import (
    epoch_wire,
    keyed_poisson_publication,
    parse_publication,
    parse_size,
    publication_instants,
)


class _Sc:
    def __init__(self, size=None, publication=None):
        self.size, self.publication = size, publication


def _gaps_per_key(instants: np.ndarray, key: np.ndarray) -> dict[int, np.ndarray]:
    out = {}
    for k in np.unique(key):
        t = instants[key == k]
        out[int(k)] = np.diff(np.r_[0.0, t])
    return out


@pytest.mark.parametrize("kind", ["poisson-topic", "poisson-publisher"])
def test_each_key_publishes_as_its_own_poisson_process(kind):
    """Per topic (per publisher) the inter-arrival times are exponential of mean 1000/RATE ms:
    a Kolmogorov-Smirnov test with a fixed seed, and the instants of a key increase in
    message order."""
    rng = np.random.default_rng(11)
    m, rate = 6000, 4.0
    topic = rng.integers(0, 3, size=m)
    publisher = rng.integers(0, 5, size=m)
    sc = _Sc(publication=f"{kind}:{rate}")
    _, t, _ = epoch_wire(sc, 7, 0, topic, 3, publisher)
    key = topic if kind == "poisson-topic" else publisher
    gaps = _gaps_per_key(t, key)
    assert len(gaps) == (3 if kind == "poisson-topic" else 5)
    for g in gaps.values():
        assert (g > 0).all()
        assert stats.kstest(g, "expon", args=(0, 1000.0 / rate)).pvalue > 0.01
    # merged over keys, the epoch is NOT one process of RATE: it publishes keys x RATE
    merged = np.diff(np.sort(t))
    assert stats.kstest(merged, "expon", args=(0, 1000.0 / rate)).pvalue < 1e-6
    # and each key's process is itself at RATE, not the merged one's
    whole = np.diff(np.r_[0.0, t[key == key[0]]])
    assert abs(whole.mean() - 1000.0 / rate) < 0.1 * 1000.0 / rate


def test_one_process_and_periodic_keep_their_meaning():
    topic = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(0)
    p = publication_instants(("periodic", 12000.0), topic, None, rng)
    assert p.tolist() == [0.0, 12000.0, 24000.0, 36000.0]
    slots = publication_instants(("periodic-topic", 12000.0), np.array([3, 1, 3, 3, 1]), None,
                                 rng)
    assert slots.tolist() == [0.0, 0.0, 12000.0, 24000.0, 12000.0]
    assert parse_publication("periodic-topic:12000") == ("periodic-topic", 12000.0)
    one = publication_instants(("poisson", 2.0), topic, None, np.random.default_rng(3))
    keyed = publication_instants(("poisson-topic", 2.0), topic, None, np.random.default_rng(3))
    # one topic: the per-topic process is the one process, draw for draw
    assert np.array_equal(one, keyed)
    with pytest.raises(ParameterError, match="needs the messages' publishers"):
        publication_instants(("poisson-publisher", 2.0), topic, None, rng)


def test_the_instants_are_reproducible_and_per_epoch():
    topic = np.array([0, 1, 0, 2, 1, 1])
    pub = np.array([3, 3, 4, 5, 4, 3])
    for form in ("poisson-topic:5", "poisson-publisher:5"):
        sc = _Sc(publication=form)
        a = epoch_wire(sc, 2, 4, topic, 3, pub)[1]
        b = epoch_wire(sc, 2, 4, topic, 3, pub)[1]
        c = epoch_wire(sc, 2, 5, topic, 3, pub)[1]
        d = epoch_wire(sc, 3, 4, topic, 3, pub)[1]
        assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, d)


def test_keyed_process_is_a_function_of_the_keys_not_their_labels():
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    a = keyed_poisson_publication(np.array([0, 1, 0, 1]), 3.0, rng_a)
    b = keyed_poisson_publication(np.array([7, 9, 7, 9]), 3.0, rng_b)
    assert np.array_equal(a, b)
    assert keyed_poisson_publication(np.zeros(0, dtype=np.int64), 3.0, rng_a).shape == (0,)


def test_two_topics_meet_in_a_queue():
    """Node 0 publishes topic 0 and topic 1, each its own Poisson process; on the FIFO uplink
    the later-published message waits for the earlier one's transmission when they overlap,
    and the kernel's arrivals follow the closed form."""
    inst = Instance.from_lists([[0, 1], [0, 1]], n_topics=2)
    a = Overlay.from_edges(2, [(0, 1)]).undirected_csr()
    topic = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    publisher = np.zeros(len(topic), dtype=np.int64)
    rate = 50.0  # msg/s per topic: gaps of 20 ms on average, transmissions of 10 ms
    t = publication_instants(("poisson-topic", rate), topic, publisher,
                             np.random.default_rng(21))
    s, up, lat = 10_000.0, 8.0, 5.0  # 1,000 bytes/ms: 10 ms on the wire
    tx = s / (up * 125.0)
    d = disseminate_contended(a.indptr, a.indices, np.full(a.nnz, lat), np.zeros(2), inst.masks,
                              MessageBatch.create(publisher, topic), Network.uniform(2, up),
                              size=s, publish_at=t, policy="flood")
    # FIFO in publication order: each copy starts when the uplink is free
    free, expected = 0.0, np.empty(len(t))
    for i in np.argsort(t, kind="stable"):
        start = max(free, t[i])
        free = start + tx
        expected[i] = free + lat - t[i]
    assert np.allclose(d.arrival[:, 1], expected)
    waited = expected > tx + lat + 1e-9
    # with this seed messages of different topics do meet: one waits behind the other topic's
    order = np.argsort(t, kind="stable")
    meet = [i for prev, i in itertools.pairwise(order)
            if waited[i] and topic[prev] != topic[i]]
    assert meet
    assert np.allclose(d.queue_delay[:, 1], expected - tx - lat)


def test_lognormal_sizes_are_per_message_and_clipped():
    sc = _Sc(size="lognormal:128k:0.8")
    s, _, _ = epoch_wire(sc, 1, 0, np.zeros(20000, dtype=np.int64), 1)
    assert parse_size(sc.size)[:3] == ("lognormal", 131072.0, 0.8)
    lo, hi = parse_size(sc.size)[3:]
    assert lo == pytest.approx(131072 * np.exp(-3.2))
    assert hi == pytest.approx(131072 * np.exp(3.2))
    assert (s >= np.floor(lo)).all() and (s <= hi).all() and np.array_equal(s, np.floor(s))
    assert abs(np.median(s) / 131072 - 1) < 0.05
    assert np.std(np.log(s)) == pytest.approx(0.8, rel=0.05)
    clipped, _, _ = epoch_wire(_Sc(size="lognormal:128k:2:64k:256k"), 1, 0,
                               np.zeros(2000, dtype=np.int64), 1)
    assert clipped.min() == 65536 and clipped.max() == 262144
    # the same seed and epoch: the same sizes; another epoch: others
    again, _, _ = epoch_wire(sc, 1, 0, np.zeros(20000, dtype=np.int64), 1)
    other, _, _ = epoch_wire(sc, 1, 1, np.zeros(20000, dtype=np.int64), 1)
    assert np.array_equal(s, again) and not np.array_equal(s, other)


def test_listed_and_file_sizes_are_one_per_topic(tmp_path):
    topic = np.array([2, 0, 1, 2])
    s, _, _ = epoch_wire(_Sc(size="topic:1k,2k,128k"), 1, 0, topic, 3)
    assert s.tolist() == [131072.0, 1024.0, 2048.0, 131072.0]
    f = tmp_path / "sizes.txt"
    f.write_text("# blocks, blobs, attestations\n1m\n\n128k  # a blob\n300\n")
    s, _, _ = epoch_wire(_Sc(size=f"file:{f}"), 1, 0, topic, 3)
    assert s.tolist() == [300.0, 1048576.0, 131072.0, 300.0]
    with pytest.raises(ParameterError, match="2 sizes given for 3 topics") as err:
        epoch_wire(_Sc(size="topic:1k,2k"), 1, 0, topic, 3)
    assert err.value.key == "size"


def test_a_bad_size_file_names_the_file_and_the_line(tmp_path):
    f = tmp_path / "sizes.txt"
    f.write_text("1k\n# fine\nlarge\n")
    with pytest.raises(DataError, match=rf"size file {f}:3: 'large' is not a number of bytes"):
        parse_size(f"file:{f}")
    with pytest.raises(DataError, match="not found"):
        parse_size(f"file:{tmp_path / 'missing.txt'}")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(DataError, match="no sizes"):
        parse_size(f"file:{empty}")
    # a scenario refuses the file when it is resolved, before any work
    with pytest.raises(DataError, match=":3:"):
        resolve_scenario("unit-square", size=f"file:{f}")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("lognormal:128k", "lognormal:MEDIAN:SIGMA"),
        ("lognormal:0:1", "positive MEDIAN"),
        ("lognormal:1k:-1", "SIGMA >= 0"),
        ("lognormal:1k:1:2k:1k", "LO must not exceed HI"),
        ("topic:", "one size per topic"),
        ("topic:1k,x", "'x' is not a number"),
    ],
)
def test_a_bad_size_form_is_one_line(value, match):
    with pytest.raises(ParameterError, match=match) as err:
        resolve_scenario("unit-square", size=value)
    assert err.value.key == "size" and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("value", "match"),
    [("poisson-topic:0", "RATE must be a positive"), ("periodic:-5", "INTERVAL_MS must be"),
     ("periodic", "periodic:INTERVAL_MS"), ("poisson-node:3", "poisson-publisher:RATE")],
)
def test_a_bad_publication_form_is_one_line(value, match):
    with pytest.raises(ParameterError, match=match) as err:
        resolve_scenario("unit-square", publication=value)
    assert err.value.key == "publication"
    assert parse_publication("poisson-publisher:2") == ("poisson-publisher", 2.0)


def test_a_world_publishes_per_topic_and_per_publisher():
    """In a world the epoch's instants follow the form, the fingerprint sees it, and a run on
    it is reproducible."""
    kw = {"seed": 3, "nodes": 60, "messages": 40, "bandwidth": "20", "size": "16k"}
    worlds = {f: make_world("unit-square", publication=f, **kw)
              for f in ("poisson:5", "poisson-topic:5", "poisson-publisher:5", "periodic:100")}
    fps = {w.fingerprint() for w in worlds.values()}
    assert len(fps) == 4
    w = worlds["poisson-topic:5"]
    pub, top = next(w.traffic())
    _, t, _ = w.wire(0, top, pub)
    for k in np.unique(top):
        assert (np.diff(t[top == k]) > 0).all()
    assert np.array_equal(worlds["periodic:100"].wire(0, top, pub)[1], np.arange(40) * 100.0)
    # the epoch loop hands the publishers over: a run publishes per publisher, reproducibly
    w = worlds["poisson-publisher:5"]
    rows = run_protocol(get_protocol("ringpt"), w).rows
    assert rows == run_protocol(get_protocol("ringpt"),
                                make_world("unit-square", publication="poisson-publisher:5",
                                           **kw)).rows
    assert rows[0]["sent_payload_mean"] > 0
