"""The side-by-side benchmark's own logic: its summary, its trials and a failing command.

The script (``benchmarks/parallel_efficiency.py``) is loaded from its path and run on short
Python commands.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "parallel_efficiency.py"


@pytest.fixture(scope="module")
def script(load_script):
    return load_script(SCRIPT)


def test_summary_worked_example(script):
    # alone: 10 s wall, 9.5 s CPU at best; two at once: 12.5 s wall, 11.0 and 10.0 s CPU
    alone = [script.Trial(1, 10.0, [9.5]), script.Trial(1, 10.4, [9.8])]
    together = [script.Trial(2, 12.5, [11.0, 10.0]), script.Trial(2, 13.0, [11.5, 11.5])]
    out = script.summary(alone, together)
    assert out["wall_alone_s"] == 10.0
    assert out["cpu_alone_s"] == 9.5
    assert out["cpu_per_copy_together_s"] == 10.5
    assert out["cpu_growth"] == pytest.approx(10.5 / 9.5)
    assert out["throughput"] == pytest.approx(2 * 10.0 / 12.5)


def test_copies_run_at_once_and_report_their_own_cpu(script):
    busy = [sys.executable, "-c", "s = sum(i * i for i in range(2 * 10**6))"]
    trial = script.run_copies(busy, 2)
    assert trial.copies == 2 and len(trial.cpu_s) == 2
    assert all(c > 0.0 for c in trial.cpu_s)
    # each copy's CPU is its own: neither can exceed the trial's wall time on one thread
    assert max(trial.cpu_s) <= trial.wall_s * 1.05 + 0.05


def test_failing_command_names_its_exit_and_error(script):
    bad = [sys.executable, "-c", "import sys; sys.stderr.write('no such world'); sys.exit(3)"]
    with pytest.raises(SystemExit, match=r"exit 3\).*no such world"):
        script.run_copies(bad, 2)
