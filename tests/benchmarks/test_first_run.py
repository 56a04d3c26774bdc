"""The first-run benchmark: its command, and a cold run that compiles before a warm one that loads.

The script (``benchmarks/first_run.py``) is loaded from its path and run on one cheap protocol
on a tiny world.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "first_run.py"


@pytest.fixture(scope="module")
def script(load_script):
    return load_script(SCRIPT)


def test_command_is_one_protocols_compare_rows(script):
    cmd = script.command("ringpt", "cities", 50, 2)
    assert Path(cmd[0]).name == "hedgerow"
    assert cmd[1:] == ["compare", "--scenario", "cities", "--nodes", "50", "--epochs", "2",
                       "--protocols", "ringpt", "--json", "--no-diameter"]


def test_compile_cost_is_the_cold_run_beyond_the_warm_one(script):
    r = script.FirstRun("x", 9.0, 8.5, 2.0, 1.5)
    assert r.compile_cpu_s == pytest.approx(7.0)


def test_a_cold_run_compiles_and_the_warm_run_loads(script, monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "the-users-cache"))
    r = script.first_run("ringpt", "unit-square", 40, 1)
    # the empty cache makes the first run compile what the second loads
    assert r.cold_cpu_s > r.warm_cpu_s > 0.0
    assert r.compile_cpu_s > 1.0
    # the user's cache setting is back, and neither run wrote into it
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "the-users-cache")
    assert not (tmp_path / "the-users-cache").exists()
