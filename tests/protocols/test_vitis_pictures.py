"""Pictures and GraphML export of a built Vitis overlay (Python API and ``hedgerow draw``)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.errors import ParameterError
from hedgerow.protocols.vitis import Vitis
from hedgerow.protocols.vitis.pictures import (
    draw_convergence,
    draw_overlay,
    draw_topic,
    write_graphml,
)
from hedgerow.workloads import make_instance


@pytest.fixture(scope="module")
def built():
    inst = make_instance(nodes=120, topics=12, subs="2:4", seed=2)
    v = Vitis(rt=6, cycles=25)
    v.build(inst, seed=2)
    return inst, v


def test_overlay_picture_styles_link_kinds_apart(built):
    _, v = built
    ax = draw_overlay(v)
    labels = [c.get_label() for c in ax.collections if c.get_label().split(" ")[0]
              in ("ring", "sw", "friend")]
    n = v.run_.n
    assert labels == [f"ring ({2 * n})", f"sw ({n})", f"friend ({3 * n})"]
    styles = {c.get_label().split(" ")[0]: c.get_linestyle() for c in ax.collections
              if c.get_label().startswith(("ring", "sw"))}
    assert styles["ring"] != styles["sw"]
    matplotlib.pyplot.close(ax.figure)


def test_topic_picture_marks_gateways_relays_and_rendezvous(built):
    inst, v = built
    t = int(np.argmax(inst.topic_sizes))
    ax = draw_topic(v, t)
    text = " ".join(c.get_label() for c in ax.collections)
    gws = v.relays_["gateways"]
    n_gw = int((inst.sub_topics[gws] == t).sum())
    assert f"gateways ({n_gw})" in text and "rendezvous" in text and "relay paths" in text
    matplotlib.pyplot.close(ax.figure)
    with pytest.raises(ParameterError, match="topic"):
        draw_topic(v, inst.n_topics)
    ax = draw_convergence(v)
    assert len(ax.lines[0].get_ydata()) == 25
    matplotlib.pyplot.close(ax.figure)


def test_graphml_carries_link_kinds(built, tmp_path):
    _, v = built
    path = tmp_path / "v.graphml"
    write_graphml(v, str(path))
    g = nx.read_graphml(path)
    run = v.run_
    assert g.number_of_nodes() == run.n
    kinds = [d["kind"] for _, _, d in g.edges(data=True)]
    assert kinds.count("succ") == run.n and kinds.count("sw") == run.n
    assert kinds.count("friend") == 3 * run.n


def test_draw_command_writes_every_file(tmp_path):
    res = CliRunner().invoke(cli, ["draw", "vitis", "--nodes", "80", "--topics", "10",
                                   "--subs", "2:3", "-p", "rt=5", "-p", "cycles=15",
                                   "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "overlay.png" in names and "convergence.png" in names
    assert "overlay.graphml" in names and any(n.startswith("topic-") for n in names)
