"""``hedgerow compare``: one world, one JSON row per protocol, byte-identical for one seed."""

from __future__ import annotations

import json

from hedgerow.cli import main
from hedgerow.scenarios.run import COMPARE_KEYS

TINY = ["--scenario", "cities", "--topics", "10", "--messages", "50", "--epochs", "2"]
PROTOCOLS = "spidercast,topiary,random-graph,scribe-topic,complete"


def test_json_is_byte_identical_for_one_seed(capsys):
    outs = []
    for _ in range(2):
        rc = main(["compare", "--protocols", PROTOCOLS, *TINY, "--json", "--no-timings"])
        assert rc == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    rows = [json.loads(x) for x in outs[0].splitlines()]
    assert [r["protocol"] for r in rows] == PROTOCOLS.split(",")
    assert len({r["world"] for r in rows}) == 1
    for r in rows:  # no "seconds"; what the protocol ran with after the metrics
        assert list(r)[: len(COMPARE_KEYS)] == list(COMPARE_KEYS)
        assert set(list(r)[len(COMPARE_KEYS):]) <= {"params", "out_degree", "in_limit"}
        assert "params" in r


def test_parameters_go_to_the_protocols_that_declare_them(capsys):
    args = ["compare", "--protocols", "topiary,random-graph", *TINY, "--json"]
    assert main([*args, "-p", "d=3", "-p", "topiary.eta=2"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["protocol"] for r in rows} == {"topiary", "random-graph"}
    assert all(r["seconds"] >= 0 for r in rows)
    for bad, says in (
        (["-p", "kg=3"], "no compared protocol has a parameter 'kg'"),
        (["-p", "spidercast.kg=3"], "'spidercast' is not among the compared protocols"),
        (["-p", "topiary.eta=1"], "topiary: parameter eta must be in (1,"),
    ):
        assert main([*args, *bad]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("error: ") and says in line, line
