"""The one memory estimate against allocations measured with tracemalloc."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from hedgerow.cli import main
from hedgerow.dissemination.engine import MessageBatch, disseminate
from hedgerow.errors import ParameterError
from hedgerow.model import Overlay
from hedgerow.workloads import make_instance
from hedgerow.workloads.memory import CHURN_NODE_BYTES, check_sizes, memory_estimate


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_delivery_estimate_matches_the_measured_allocation():
    """A delivery of M messages among N nodes holds M x N cells of arrival, hops, parent."""
    n, m = 400, 3000
    inst = make_instance(nodes=n, topics=5, subs=2, seed=1)
    rng = np.random.default_rng(0)
    edges = {(int(u), int(v)) for u, v in rng.integers(0, n, (4 * n, 2)) if u != v}
    a = Overlay.from_edges(n, sorted(edges)).undirected_csr()
    batch = MessageBatch.create(rng.integers(0, n, m), rng.integers(0, 5, m), ttl=np.full(m, 4))
    args = (a.indptr, a.indices, np.ones(a.nnz), np.ones(n), inst.masks, batch)
    disseminate(*args)  # compiled before measuring
    measured = _peak(lambda: disseminate(*args))
    estimate = memory_estimate(nodes=n, messages=m)
    assert 0.8 * measured <= estimate <= 1.25 * measured, (estimate, measured)


def test_churn_estimate_covers_the_measured_allocation(capsys):
    argv = ["churn", "spidercast", "--topics", "20", "--subs", "3", "--lifetime", "50",
            "--duration", "1", "--snapshot-every", "1", "--json"]
    main([*argv, "--nodes", "300"])  # compiled before measuring
    small = _peak(lambda: main([*argv, "--nodes", "2000"]))
    large = _peak(lambda: main([*argv, "--nodes", "6000"]))
    capsys.readouterr()
    per_node = (large - small) / 4000
    assert 0.5 * per_node <= CHURN_NODE_BYTES <= 2.0 * per_node, per_node


def test_sizes_that_do_not_fit_are_refused_naming_the_estimate():
    with pytest.raises(ParameterError, match=r"10\^8 churn nodes needs about [\d,.]+ GiB"):
        check_sizes("10^8 churn nodes", nodes=10**8, topics=8, subs=2, churn=True)


def test_tco_matrix_estimate_matches_the_measured_allocation():
    """GM's build holds the N x N contribution matrix: the estimate is most of the peak."""
    from hedgerow.protocols.tco.engine import tco_augment
    from hedgerow.workloads.memory import tco_matrix_bytes

    n = 3000
    inst = make_instance(nodes=n, topics=20, subs=3, seed=1)
    none = np.empty((0, 2), np.int64)

    def run() -> None:
        tco_augment(inst.masks, None, none, rule="gm", rng=np.random.default_rng(0))

    run()  # compiled before measuring
    measured = _peak(run)
    estimate = tco_matrix_bytes(n, inst.n_topics)
    assert 0.8 * measured <= estimate <= measured, (estimate, measured)


def test_a_tco_build_that_does_not_fit_is_refused_before_it_allocates():
    from hedgerow.protocols import get_protocol

    inst = make_instance(nodes=1_000_000, topics=10, subs=2, seed=1)
    for name in ("gm", "lowoda", "minmaxoda"):  # four bits per pair below 127 topics
        with pytest.raises(ParameterError, match=r"1,000,000 x 1,000,000 contribution matrix\)"
                           r" needs about 466\.4 GiB"):
            get_protocol(name).build(inst, seed=1)


def test_interest_view_estimate_matches_the_measured_allocation():
    """Partial views are what a partial-view engine holds beyond a full-view one."""
    from hedgerow.protocols import get_protocol
    from hedgerow.workloads.memory import interest_view_bytes

    n = 3000
    inst = make_instance(nodes=n, topics=20, subs=3, seed=1)

    def engine(membership: float):
        proto = get_protocol("spidercast", membership=membership)
        return lambda: proto.maintenance_engine(inst, proto.streams(1))

    engine(0.5)()
    measured = _peak(engine(0.5)) - _peak(engine(1.0))
    estimate = interest_view_bytes(n, 0.5)
    assert 0.8 * measured <= estimate <= 1.25 * measured, (estimate, measured)


def test_partial_views_that_do_not_fit_are_refused_before_they_are_drawn():
    from hedgerow.protocols import get_protocol

    inst = make_instance(nodes=1_000_000, topics=10, subs=2, seed=1)
    with pytest.raises(ParameterError, match=r"interest views of 0\.05 of 1,000,000 nodes needs"
                       r" about 372\.5 GiB"):
        get_protocol("spidercast", membership=0.05).build(inst, seed=1)


def _small_machine(monkeypatch, gib: float) -> None:
    """Pretend the machine has ``gib`` GiB and the process holds nothing yet."""
    import hedgerow.params as params

    monkeypatch.setattr(params, "available_memory_bytes", lambda: int(gib * 2**30))
    monkeypatch.setattr(params, "resident_bytes", lambda: 0)


def test_the_complete_graph_is_refused_before_it_links_every_pair(monkeypatch):
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.baselines.complete import LINK_BYTES

    inst = make_instance(nodes=100_000, topics=10, subs=2, seed=1)
    with pytest.raises(ParameterError, match=r"complete on 100,000 nodes \(4,999,950,000 links\)"
                       r" needs about 1,862\.6 GiB"):
        get_protocol("complete").build(inst, seed=1)
    # the estimate per link is the measured one: 2,000 nodes peak near 1 GiB in a run
    assert 2000 * 1999 / 2 * LINK_BYTES / 2**30 == pytest.approx(0.74, abs=0.01)


def test_an_adaptive_run_is_refused_before_its_first_epoch(monkeypatch):
    """The epoch loop's n x n link tables and deliveries, counted before the protocol starts."""
    from hedgerow.protocols import get_protocol
    from hedgerow.scenarios.epochs import run_protocol
    from hedgerow.scenarios.world import make_world
    from hedgerow.workloads.memory import adaptive_bytes

    # two topics: Topiary's own observations (24 bytes per node, topic and subset, checked in
    # its start) stay below the loop's table on the small machines below
    world = make_world("unit-square", seed=1, nodes=300, messages=50, epochs=1, topics=2)
    world100 = make_world("unit-square", seed=1, nodes=300, messages=50, epochs=1)
    assert adaptive_bytes(300, 50) == 300 * 300 + 50 * 300 * 16
    assert adaptive_bytes(300, 50, pair_bytes=1) == 2 * 300 * 300 + 50 * 300 * 16
    assert adaptive_bytes(300, 50, linked=False) == 50 * 300 * 16
    # a machine on which one byte per pair fits and two do not (a run may take 0.8 of it)
    _small_machine(monkeypatch, 375_000 / 0.8 / 2**30)
    rows = run_protocol(get_protocol("random-graph"), world).rows
    assert len(rows) == 1  # a static protocol holds no link table
    # Topiary samples its exploration in chunks of rows: the loop's table is its one pair table
    assert len(run_protocol(get_protocol("topiary"), world).rows) == 1
    # ... and with the topics exploration it holds no table at all
    # on a machine on which the deliveries fit and the table does not
    topics = get_protocol("topiary", exploration="topics")
    _small_machine(monkeypatch, 300_000 / 0.8 / 2**30)
    assert len(run_protocol(topics, world).rows) == 1
    # the observations of 100 topics do not fit there: refused in Topiary's start
    with pytest.raises(ParameterError, match=r"topiary's observations \(300 nodes x 100 topics"):
        run_protocol(topics, world100)
    # there the table sampler is refused before its first epoch
    with pytest.raises(ParameterError, match=r"topiary on 300 nodes \(1 byte per pair of nodes "
                       r"and 50 messages per epoch\) needs about"):
        run_protocol(get_protocol("topiary"), world)
    # Perigee skips the loop's table; its largest array is its observations, 8 bytes per
    # (node, block, peer), checked before they are allocated
    with pytest.raises(ParameterError, match=r"perigee's observations \(300 nodes x 50 blocks"):
        run_protocol(get_protocol("perigee"), world)
