import json

import pytest

from hedgerow.cli import main

KEYS = {
    "protocol",
    "nodes",
    "topics",
    "avg_degree",
    "max_degree",
    "degree_ci95",
    "partitioned_topics",
    "topic_components",
    "max_topic_diameter",
    "avg_topic_diameter",
    "max_topic_overlay_diameter",
    "avg_topic_overlay_diameter",
    "control_messages",
    "warnings",
    "world",
    "timings",
}


def test_build_json(capsys):
    rc = main(
        [
            "build",
            "spidercast",
            "--nodes",
            "300",
            "--topics",
            "30",
            "--subs",
            "5",
            "--seed",
            "2",
            "--json",
            "-p",
            "kr=1",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    rec = json.loads(out)
    assert KEYS <= set(rec)
    assert rec["params"]["kr"] == 1 and rec["partitioned_topics"] == 0
    assert rec["control_messages"] > 0
    assert rec["max_topic_overlay_diameter"] <= rec["max_topic_diameter"]
    assert rec["warnings"] == [] and rec["timings"]["build_seconds"] > 0


def test_build_table(capsys):
    rc = main(["build", "ringpt", "--nodes", "100", "--topics", "10", "--subs", "2:4"])
    assert rc == 0
    assert "avg_degree" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["build", "spidercast", "--nodes", "-5", "--topics", "10", "--subs", "2"],
        ["build", "spidercast", "--nodes", "10", "--topics", "5", "--subs", "7"],
        ["build", "nope", "--nodes", "10", "--topics", "5", "--subs", "2"],
        ["build", "spidercast", "--nodes", "10", "--topics", "5", "--subs", "2", "-p", "foo=1"],
        [
            "build",
            "spidercast",
            "--nodes",
            "10",
            "--topics",
            "5",
            "--subs",
            "2",
            "-p",
            "kg=0",
            "-p",
            "kr=0",
        ],
        [
            "build",
            "spidercast",
            "--nodes",
            "10",
            "--topics",
            "5",
            "--subs",
            "2",
            "--popularity",
            "zipf9x",
        ],
        ["build", "spidercast", "--nodes", "10", "--topics", "5", "--subs", "2", "-p", "kg"],
    ],
)
def test_bad_input_one_line_exit_2(args, capsys):
    rc = main(args)
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert "Traceback" not in err
    assert err.splitlines()[-1].lower().startswith("error")
