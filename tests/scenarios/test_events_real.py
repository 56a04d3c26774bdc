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
