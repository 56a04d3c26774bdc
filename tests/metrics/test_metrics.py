import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from hedgerow.errors import ParameterError
from hedgerow.metrics import (
    degree_ci95,
    degree_histogram,
    degree_stats,
    overlay_summary,
    partitioned_topics,
    tdi,
    topic_components,
    topic_diameters,
    topic_overlay_diameters,
)
from hedgerow.model import Instance, Overlay
from hedgerow.protocols import get_protocol
from hedgerow.workloads import make_instance


def _reference(ov, inst):
    a = ov.undirected_csr()
    comps, diams = [], []
    for t in range(inst.n_topics):
        s = inst.subscribers(t)
        if len(s) == 0:
            comps.append(0)
            diams.append(0)
            continue
        sub = a[s][:, s]
        comps.append(connected_components(sub, directed=False)[0])
        d = shortest_path(sub, unweighted=True, directed=False)
        d = d[np.isfinite(d)]
        diams.append(int(d.max()))
    return comps, diams


@pytest.mark.parametrize("seed", range(30))
def test_components_and_diameter_match_scipy(seed):
    rng = np.random.default_rng(seed)
    inst = make_instance(nodes=120, topics=12, subs="1:4", popularity="zipf1", seed=seed)
    m = rng.integers(30, 400)
    edges = rng.integers(0, 120, size=(m, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    ov = Overlay.from_edges(120, edges)
    comps, diams = _reference(ov, inst)
    assert topic_components(ov, inst).tolist() == comps
    assert topic_diameters(ov, inst).tolist() == diams


@pytest.mark.parametrize("seed", range(20))
def test_measured_components_match_the_scipy_recount(seed):
    # the churn snapshot's count: per topic, components of G_t (all subscribers) that hold a
    # measured subscriber; written as the scipy loop the churn observer used before the kernel
    rng = np.random.default_rng(seed)
    inst = make_instance(nodes=120, topics=12, subs="1:4", popularity="zipf1", seed=seed)
    edges = rng.integers(0, 120, size=(rng.integers(30, 300), 2))
    ov = Overlay.from_edges(120, edges[edges[:, 0] != edges[:, 1]])
    measured = rng.random(120) < rng.uniform(0.0, 1.0)
    a = ov.undirected_csr()
    expected = []
    for t in range(inst.n_topics):
        s = inst.subscribers(t)
        if not measured[s].any():
            expected.append(0)
            continue
        _, labels = connected_components(a[s][:, s], directed=False)
        expected.append(len(np.unique(labels[measured[s]])))
    assert topic_components(ov, inst, measured=measured).tolist() == expected
    every = topic_components(ov, inst, measured=np.ones(120, dtype=bool))
    assert every.tolist() == topic_components(ov, inst).tolist()
    with pytest.raises(ValueError, match="bool mask of 120 nodes"):
        topic_components(ov, inst, measured=measured[:5])


def _reference_overlay(ov, inst):
    d = shortest_path(ov.undirected_csr(), unweighted=True, directed=False)
    out = []
    for t in range(inst.n_topics):
        s = inst.subscribers(t)
        sub = d[np.ix_(s, s)]
        sub = sub[np.isfinite(sub)]
        out.append(int(sub.max()) if len(sub) else 0)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_overlay_diameter_matches_scipy(seed):
    """Largest overlay distance between co-subscribers, on sparse (split) and dense graphs."""
    rng = np.random.default_rng(100 + seed)
    inst = make_instance(nodes=150, topics=10, subs="1:3", popularity="zipf1", seed=seed)
    m = rng.integers(60, 500)
    edges = rng.integers(0, 150, size=(m, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    ov = Overlay.from_edges(150, edges)
    assert topic_overlay_diameters(ov, inst).tolist() == _reference_overlay(ov, inst)


def test_overlay_diameter_is_at_most_the_subgraph_diameter_when_connected():
    inst = make_instance(nodes=300, topics=20, subs=5, popularity="rss", seed=3)
    ov = get_protocol("spidercast", kg=3, kr=0, ties="sequential").build(inst, seed=3)
    inside, through = topic_diameters(ov, inst), topic_overlay_diameters(ov, inst)
    assert (through <= inside).all() and (through < inside).any()


def test_worked_example_partition():
    # topic 0: nodes 0,1,2,3 with 0-1 and 2-3 linked only through node 4 (not subscribed)
    inst = Instance.from_lists([[0], [0], [0], [0], [1]], n_topics=2)
    ov = Overlay.from_edges(5, [(0, 1), (1, 4), (4, 2), (2, 3)])
    assert topic_components(ov, inst).tolist() == [2, 1]
    assert partitioned_topics(ov, inst) == 1
    assert topic_diameters(ov, inst).tolist() == [1, 0]
    # through the overlay, node 0 reaches node 3 over 1, 4 and 2
    assert topic_overlay_diameters(ov, inst).tolist() == [4, 0]


def test_directed_overlays_read_as_undirected():
    inst = Instance.from_lists([[0], [0], [0]], n_topics=1)
    ov = Overlay.from_edges(3, [(0, 1), (2, 1)], directed=True)
    assert topic_components(ov, inst).tolist() == [1]
    assert topic_diameters(ov, inst).tolist() == [2]


def test_degree_metrics():
    ov = Overlay.from_edges(4, [(0, 1), (0, 2), (0, 3)])
    s = degree_stats(ov)
    assert s["avg_degree"] == 1.5 and s["max_degree"] == 3 and s["min_degree"] == 1
    assert degree_histogram(ov).tolist() == [0, 3, 0, 1]
    lo, hi = degree_ci95(ov.degree())
    half = 1.959963984540054 * np.std([3, 1, 1, 1], ddof=1) / 2
    assert (lo, hi) == pytest.approx((1.5 - half, 1.5 + half))


def test_tdi_worked_example():
    # node 0 {0,1}: best partner 1 (100%); node 1 same; node 2 {2,3}: best 3 (50%);
    # node 3 {0,2}: best of 0,1,2 is 50%.  tdi(1) = (100+100+50+50)/4 = 75
    inst = Instance.from_lists([[0, 1], [0, 1], [2, 3], [0, 2]], n_topics=4)
    assert tdi(inst, 1) == 75.0
    # tdi(3): node0: (100+50+0)/3, node1 same, node2: (50+0+0)/3, node3: (50+50+50)/3
    assert tdi(inst, 3) == pytest.approx((50 + 50 + 50 / 3 + 50) / 4)
    with pytest.raises(ParameterError):
        tdi(inst, 0)


def test_tdi_orders_distributions_like_the_paper():
    """Section 3.4: NYSE is more correlated (higher tdi(20)) than uniform."""
    kw = {"nodes": 1000, "topics": 100, "subs": 10, "seed": 2}
    nyse = tdi(make_instance(popularity="nyse", **kw), 20)
    uni = tdi(make_instance(popularity="uniform", **kw), 20)
    rss = tdi(make_instance(popularity="rss", **kw), 20)
    assert nyse > rss > uni


def test_summary_keys_and_inputs_untouched():
    inst = make_instance(nodes=50, topics=5, subs=2, seed=1)
    ov = Overlay.from_edges(50, [(i, i + 1) for i in range(49)])
    before = ov.edges().copy()
    s = overlay_summary(ov, inst)
    assert set(s) >= {"avg_degree", "partitioned_topics", "topic_components", "max_topic_diameter"}
    assert np.array_equal(before, ov.edges())
    assert sp.issparse(ov.csr())
