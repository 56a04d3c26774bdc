"""Every row of a run carries its CPU seconds and peak resident memory beside its wall time."""

from __future__ import annotations

import numpy as np

from hedgerow.experiment import parse_spec, run_one
from hedgerow.experiment.run import usage_since, usage_start

SPEC = {"experiment": "usage", "scenario": {"protocol": "ringpt", "diameter": False,
                                             "workload": {"nodes": 60, "topics": 8, "subs": 2}}}


def test_rows_carry_cpu_seconds_and_peak_memory():
    [row] = run_one(parse_spec(SPEC).expand()[0])
    assert row["status"] == "ok"
    assert 0.0 <= row["cpu_seconds"] and row["wall_seconds"] >= 0.0
    assert row["peak_rss_mib"] is None or row["peak_rss_mib"] > 10.0


def test_the_peak_is_the_runs_own_not_the_processes():
    """After a large allocation is freed, the next run's peak starts from the resident size."""
    cpu0 = usage_start()
    big = np.ones(80 * 2**20 // 8)  # 80 MiB touched, then freed
    assert big.sum() > 0
    del big
    _, with_big = usage_since(cpu0)
    if with_big is None:  # the system gives no peak: nothing more to check
        return
    cpu1 = usage_start()
    small = np.ones(1024)
    cpu, without = usage_since(cpu1)
    assert small.sum() == 1024 and cpu >= 0.0
    assert without is not None and without < with_big - 50.0
