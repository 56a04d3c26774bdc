"""The replay page: traces of one world, side by side, self-contained."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.dissemination import edge_delays
from hedgerow.dissemination.chunks import disseminate_chunks
from hedgerow.errors import ParameterError
from hedgerow.figures.replay import replay_data, write_replay
from hedgerow.protocols import get_protocol
from hedgerow.scenarios import make_world
from hedgerow.scenarios.tracing import Tracer
from hedgerow.trace import TraceWriter


def _trace(world, protocol, path, n_messages=6, sample=None):
    ov = get_protocol(protocol).build(world.instance, seed=world.seed)
    a = ov.undirected_csr()
    ip, ix = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    ed = np.asarray(edge_delays(ip, ix, world.latency), dtype=np.float64)
    pub, top = next(world.traffic())
    pub, top = pub[:n_messages], top[:n_messages]
    tracer = Tracer(TraceWriter(path), sample=sample)

    def disseminate(ids, on_chunk):
        for sel, dl, emap in disseminate_chunks(
            ip, ix, ed, world.proc, world.instance.masks, pub[ids], top[ids], 1,
            record_edges=True, policy="topic",
        ):
            on_chunk(sel, dl, emap)

    tracer.record(protocol, world, 0, disseminate, pub, top, ip, ix, ed)
    tracer.describe(protocol, ov, {"seed": world.seed})
    return tracer.close(world)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("tr")
    world = make_world("unit-square", seed=2, nodes=60)
    return [_trace(world, p, d / f"{p}.parquet") for p in ("spidercast", "ringpt")], d


def test_replay_data_puts_protocols_side_by_side(traces):
    paths, _ = traces
    data = replay_data(paths)
    assert [p["protocol"] for p in data["panels"]] == ["spidercast", "ringpt"]
    assert len(data["messages"]) == 6
    # the same message of the same world in both panels; ringpt on a circle, spidercast on the plane
    assert data["panels"][0]["layout"] == "plane" and data["panels"][1]["layout"] == "ring"
    for panel in data["panels"]:
        c = panel["messages"]["0"]
        assert len(c["s"]) == len(c["r"]) == len(c["t0"]) == len(c["t1"]) == len(c["f"])
        assert all(a <= b for a, b in zip(c["t0"], c["t1"], strict=True))
        assert sum(panel["copies"]) == sum(len(m["s"]) for m in panel["messages"].values())


def test_a_sampled_trace_keeps_the_sample(tmp_path):
    world = make_world("unit-square", seed=2, nodes=60)
    data = replay_data([_trace(world, "spidercast", tmp_path / "s.parquet", 20, sample=4)])
    assert len(data["messages"]) == 4


def test_the_page_is_self_contained(traces, tmp_path):
    paths, _ = traces
    out = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["replay", *map(str, paths), "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "http://" not in page and "https://" not in page and "<script src" not in page
    blob = re.search(r"const D = (\{.*?\});\n", page).group(1)
    assert json.loads(blob)["world"]["n_nodes"] == 60


def test_traces_of_different_worlds_are_refused(traces, tmp_path):
    paths, _ = traces
    other = _trace(make_world("unit-square", seed=9, nodes=60), "spidercast",
                   tmp_path / "o.parquet")
    with pytest.raises(ParameterError, match="a replay shows protocols of one world"):
        write_replay([paths[0], other], tmp_path / "x.html")
