"""The Fig. 2 anchor harness's own logic: the authors' input format, the epoch counts, the
parse of their evaluation script and the absent-anchor exit.

The harness (``benchmarks/anchors/goldfish_fig2_authors.py``) is a script, not a package
module, so it is loaded from its path.  Nothing here needs PyTorch or the authors' code.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

from hedgerow.scenarios.world import make_world, read_topology_json

HARNESS = (Path(__file__).resolve().parents[2] / "benchmarks" / "anchors"
           / "goldfish_fig2_authors.py")


@pytest.fixture(scope="module")
def harness(load_script):
    return load_script(HARNESS)


def test_fig2_graph_reads_back_identical_through_the_topology_loader(harness, tmp_path):
    w = make_world("goldfish-random", seed=3, adaptive=1, publishers="unif:3",
                   adaptive_pool="non-publishers", epochs=2, wasted=False)
    lat = w.latency.matrix()
    probs = np.asarray(w.publisher_probs)
    topo = harness.topology_json(lat, np.asarray(w.proc, float), probs, None)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(topo))
    back = read_topology_json(str(path))
    assert np.array_equal(back["latency"].matrix(), lat)
    assert np.array_equal(back["proc"], w.proc)
    assert np.array_equal(back["pub_prob"], probs)
    pubs = [nd["id"] for nd in topo["nodes"] if nd["role"] == "PUB"]
    assert pubs == np.flatnonzero(probs > 0).tolist() and topo["summary"]["num_pub"] == 3
    # a world made from the file is the same network
    w2 = make_world("goldfish-random", seed=3, topology=str(path), adaptive=1)
    assert np.array_equal(w2.latency.matrix(), lat)
    assert np.array_equal(w2.publisher_probs, probs)


def test_first_epochs_and_all_by(harness):
    slots = [[1, 2, 3], [4], [5, 6], [4, 7]]
    first = harness.first_epochs(slots, [4, 6, 9])
    assert first == {4: 1, 6: 2, 9: -1}
    assert harness.all_by(first) == -1
    assert harness.all_by(harness.first_epochs(slots, [3, 7])) == 3


def test_far_count_follows_the_authors_close_rule(harness):
    lam = np.array([100.0, 5.0, 4.999, 50.0, 0.0])  # 5.0 / 100 = 0.05 is not "< 0.05": far
    assert harness.far_count(lam) == 3
    assert harness.far_count(np.array([0.0, 3.0])) == 0


def test_parse_eval_needs_both_fractions(harness):
    text = "[100]\ncdf less than 100 epoch 0.1\n[]\napprox cdf less than 100 epoch 0.75\n"
    assert harness.parse_eval(text) == {"fail_a": 0.1, "fail_b": 0.75}
    with pytest.raises(ValueError, match="without its two fractions"):
        harness.parse_eval("seed 3 not finish run\n")


def test_absent_anchor_exits_2(harness, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(harness.ENV, raising=False)
    monkeypatch.delenv(harness.ENV_PYTHON, raising=False)
    with pytest.raises(SystemExit) as exc:
        harness.anchor_paths()
    assert exc.value.code == 2
    assert "HEDGEROW_ANCHOR_GOLDFISH and HEDGEROW_ANCHOR_GOLDFISH_PYTHON not set" in (
        capsys.readouterr().err)
    monkeypatch.setenv(harness.ENV, str(tmp_path))
    monkeypatch.setenv(harness.ENV_PYTHON, str(tmp_path / "python"))
    with pytest.raises(SystemExit) as exc:
        harness.anchor_paths()
    assert exc.value.code == 2
    assert "no sim/simple_model/simple_model.py" in capsys.readouterr().err


def test_harness_doctests(harness):
    res = doctest.testmod(harness)
    assert res.attempted >= 5 and res.failed == 0
