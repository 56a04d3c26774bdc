"""``hedgerow run``: any protocol on a named scenario; bad input is one error line."""

from __future__ import annotations

import json
import time

from hedgerow.cli import main


def test_run_prints_one_json_row_per_epoch(capsys):
    args = ["run", "topiary", "--scenario", "cities", "--topics", "10", "--messages", "50"]
    assert main([*args, "--epochs", "2", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["epoch"] for r in rows] == [0, 1]
    assert all(0 <= r["receive_rate"] <= 1 and "delay_mean_ms" in r for r in rows)


def test_a_world_that_cannot_fit_is_refused_before_allocating(capsys):
    t0 = time.perf_counter()
    rc = main(["run", "topiary", "--scenario", "unit-square", "--topics", "100000000"])
    seconds = time.perf_counter() - t0
    [line] = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and line.startswith("error: scenario 'unit-square'") and "GiB" in line
    assert seconds < 10


def test_bad_settings_are_one_error_line(capsys):
    for args in (
        ["run", "topiary", "--scenario", "moon"],
        ["run", "topiary", "--scenario", "unit-square", "--epochs", "0"],
        ["run", "topiary", "--scenario", "unit-square", "-p", "eta=1"],
        ["run", "topiary", "--scenario", "cities", "--attackers", "3"],
    ):
        rc = main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), args
