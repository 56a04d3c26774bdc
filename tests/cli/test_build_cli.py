import json
import time

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


def _run(args, capsys):
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_bad_protocol_parameter_is_one_error_line_naming_it(capsys):
    args = ["build", "spidercast", "--nodes", "100", "--topics", "10", "--subs", "3"]
    rc, out, err = _run([*args, "-p", "kg=true"], capsys)
    assert rc == 2 and out == ""
    [line] = err.strip().splitlines()
    assert line == "error: spidercast: parameter kg must be a whole number, got True"


def test_zero_links_blames_links(capsys):
    args = ["build", "random", "--nodes", "100", "--topics", "10", "--subs", "3", "-p", "links=0"]
    rc, _, err = _run(args, capsys)
    [line] = err.strip().splitlines()
    assert rc == 2 and line.startswith("error: random: parameter links")
    assert "similar" not in line


def test_zipf_nan_blames_popularity(capsys):
    args = ["build", "ringpt", "--nodes", "100", "--topics", "10", "--subs", "3"]
    rc, _, err = _run([*args, "--popularity", "zipf:nan"], capsys)
    [line] = err.strip().splitlines()
    assert rc == 2 and line.startswith("error: popularity 'zipf:nan'") and "subs" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["build", "spidercast", "--nodes", "1000000000", "--topics", "100", "--subs", "10"],
        ["build", "spidercast", "--nodes", "100", "--topics", "2000000000", "--subs", "10"],
    ],
    ids=["nodes", "topics"],
)
def test_sizes_that_cannot_fit_are_refused_before_allocating(args, capsys):
    t0 = time.perf_counter()
    rc, _, err = _run(args, capsys)
    seconds = time.perf_counter() - t0
    [line] = err.strip().splitlines()
    assert rc == 2 and line.startswith("error: ") and "GiB" in line
    assert seconds < 10


def test_max_rounds_stop_warns_on_stderr_and_in_json(capsys):
    args = ["build", "spidercast", "--nodes", "300", "--topics", "20", "--subs", "3"]
    rc, out, err = _run([*args, "-p", "max_rounds=2", "--json", "--no-diameter"], capsys)
    rec = json.loads(out)
    assert rc == 0 and rec["quiescent"] is False
    assert any("stopped at max_rounds" in w for w in rec["warnings"])
    warned = [x for x in err.splitlines() if x.startswith("warning: ")]
    assert any("stopped at max_rounds" in x for x in warned)
    assert len(warned) == len(rec["warnings"])


def test_partitioned_topics_warn_once_naming_the_setting_that_helps(capsys):
    args = ["build", "spidercast", "--nodes", "500", "--topics", "20", "--subs", "3"]
    paper = ["-p", "kg=3", "-p", "kr=0", "-p", "ties=sequential"]
    rc, out, err = _run([*args, *paper, "--json", "--no-diameter"], capsys)
    rec = json.loads(out)
    assert rc == 0 and rec["partitioned_topics"] > 0
    [warning] = rec["warnings"]
    assert "kr=1" in warning
    assert [x for x in err.splitlines() if x.startswith("warning: ")] == [f"warning: {warning}"]
    # the defaults keep the promise: nothing partitioned, nothing to warn about
    rc, out, err = _run([*args, "--json", "--no-diameter"], capsys)
    rec = json.loads(out)
    assert rc == 0 and rec["partitioned_topics"] == 0 and rec["warnings"] == []
    assert "warning" not in err


def test_json_is_byte_identical_for_one_seed(capsys):
    args = ["build", "spidercast", "--nodes", "300", "--topics", "20", "--subs", "4", "--seed", "3"]
    outs = []
    for _ in range(2):
        rc, out, _ = _run([*args, "--json", "--no-timings"], capsys)
        assert rc == 0
        outs.append(out)
    assert outs[0] == outs[1] and "timings" not in json.loads(outs[0])


def test_help_lists_every_protocol_and_spidercast_parameter(capsys):
    from hedgerow.protocols import REGISTRY

    assert main(["build", "--help"]) == 0
    words = set(capsys.readouterr().out.replace(",", " ").split())
    assert set(REGISTRY) <= words
    names = "kg kr margin adaptive membership view heartbeat ties raise_target max_rounds".split()
    assert list(REGISTRY["spidercast"].params) == names
    assert set(names) <= words
