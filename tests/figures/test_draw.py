"""``hedgerow draw`` for every registered protocol on the three head-to-head worlds."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from hedgerow.figures.draw import (
    draw_overlay,
    make_overlay,
    node_layout,
    topic_components,
    write_graphml,
)
from hedgerow.protocols import REGISTRY

SCENARIOS = ("unit-square", "cities", "rss-unit-square")


def _quick(scenario: str) -> dict:
    kw = {"epochs": 2, "messages": 30}
    if scenario != "cities":  # the cities fix their 246 nodes
        kw["nodes"] = 40
    return kw


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("protocol", sorted(REGISTRY))
def test_draw_and_graphml_round_trip(tmp_path, protocol, scenario):
    import matplotlib.pyplot as plt

    overlay, world = make_overlay(protocol, scenario, seed=1, **_quick(scenario))
    fig = draw_overlay(overlay, world, protocol=protocol, topic=0)
    png = tmp_path / "o.png"
    fig.savefig(png, dpi=30)
    plt.close(fig)
    assert png.stat().st_size > 1000
    path = write_graphml(overlay, world, tmp_path / "o.graphml", protocol=protocol, topic=0)
    g = nx.read_graphml(path, node_type=int)
    ours = {tuple(sorted(map(int, e))) for e in overlay.edges()}
    assert {tuple(sorted(e)) for e in g.edges()} == ours
    assert g.number_of_nodes() == world.n_nodes
    comp = topic_components(overlay, world, 0)
    for u in (0, world.n_nodes - 1):
        assert g.nodes[u]["component"] == comp[u]
        assert g.nodes[u]["subscribes"] == bool(comp[u] >= 0)
    _, kind = node_layout(world, protocol)
    expected = ("ring" if protocol in ("ringpt", "scribe-random", "scribe-topic")
                else "geo" if scenario == "cities" else "plane")
    assert kind == expected


def test_components_are_coloured_when_partitioned():
    # random(10) on a small RSS world leaves topic subgraphs split
    overlay, world = make_overlay("random", "rss-unit-square", seed=1, nodes=40)
    counts = [topic_components(overlay, world, t).max() + 1
              for t in range(world.instance.n_topics)]
    t = int(np.argmax(counts))
    assert counts[t] > 1
    comp = topic_components(overlay, world, t)
    sizes = np.bincount(comp[comp >= 0])
    assert list(sizes) == sorted(sizes, reverse=True)  # numbered by size, largest first
    fig = draw_overlay(overlay, world, protocol="random", topic=t)
    assert "partitioned" in fig.texts[0].get_text()


def test_geo_layout_uses_longitude_and_latitude():
    _, world = make_overlay("random-graph", "cities", seed=1, epochs=1, messages=20)
    xy, kind = node_layout(world, "random-graph")
    assert kind == "geo"
    np.testing.assert_allclose(xy[:, 0], world.latency.coords[:, 1])
    assert (np.abs(xy[:, 1]) <= 90).all()
