"""Real workloads under the Google trace: the central repairs keep a TCO after every event.

OMen §6.5 setting: FB 1K (BFS sample of ego-Facebook) and a Twitter-like 1K follower graph
under the Google 2011 machine events of 1,000 machines, initial overlay by LowODA.  The
inputs are ingest outputs, prepared once (Spark) and cached.
"""

from __future__ import annotations

import pytest

from hedgerow.scenarios.events import CHURN_SCENARIOS, load_churn_scenario, run_events

pytestmark = pytest.mark.data


@pytest.fixture(scope="module", params=["fb1k-google", "tw1k-google"])
def scenario(request):
    from hedgerow.pipeline.inputs import ensure_inputs

    ensure_inputs(CHURN_SCENARIOS[request.param].inputs())
    return request.param, load_churn_scenario(request.param, seed=1)


@pytest.mark.parametrize(("name", "events"), [("lowoda-inc", 120), ("lowoda-re", 25)])
def test_no_violation_after_any_event(scenario, name, events):
    label, (inst, online0, ev) = scenario
    assert inst.n_nodes == 1000 and len(ev) > 1000
    res = run_events(name, inst, online0, ev, seed=1, n_events=events)
    assert len(res.rows) == events
    assert res.summary["violations"] == 0, (label, res.summary["violations_by_kind"])
    assert res.summary["start_violations"] == 0
    assert {r["type"] for r in res.rows} == {"join", "leave"}


def test_sweep_kind_churn_gives_one_row_per_event():
    """``kind: churn`` with ``churn.scenario``: the event rows of ``hedgerow sweep``."""
    import pyarrow as pa

    from hedgerow.experiment.expand import expand
    from hedgerow.experiment.load import parse_spec
    from hedgerow.experiment.run import run_one
    from hedgerow.pipeline.inputs import ensure_inputs

    ensure_inputs(CHURN_SCENARIOS["fb1k-burst"].inputs())
    spec = parse_spec({
        "experiment": "tco-events",
        "scenario": {"kind": "churn", "protocol": "lowoda-inc", "params": {"rho": 2.0},
                     "churn": {"scenario": "fb1k-burst", "events": 6}, "seed": 1},
    })
    rows = [r for run in expand(spec) for r in run_one(run)]
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r["type"] for r in rows] == ["leave"] * 3 + ["join"] * 3
    assert all(r["violations"] == 0 and r["partitioned_topics"] == 0 for r in rows)
    assert pa.Table.from_pylist(rows).num_rows == 6
