"""SpiderCast under a real churn trace: smartphone sessions ingested on Spark, replayed."""

from __future__ import annotations

import pytest

from hedgerow.pipeline.ingest.churn import ingest_churn
from hedgerow.scenarios.churn import run_churn
from hedgerow.scenarios.traces import JOIN, load_events, trace_churn
from hedgerow.workloads import make_instance

pytestmark = [pytest.mark.spark, pytest.mark.data]


@pytest.fixture(scope="module")
def phones(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("phones") / "p300"
    ingest_churn(spark, out, source="smartphone", nodes=300, seed=2)
    return load_events(out)


def test_spidercast_follows_a_smartphone_trace(phones):
    inst = make_instance(nodes=300, topics=30, subs=5, seed=2)
    # one simulated second = one trace minute: 200 s replay the first 3 h 20 min of the trace
    online0, events = trace_churn(phones, 300, speedup=60.0, duration=200.0)
    assert len(events) > 100  # the trace really churns within the replayed window
    res = run_churn(
        "spidercast", inst, trace=(online0, events), duration=200.0, snapshot_every=40.0, seed=2
    )
    # online counts follow the trace exactly: replay the events up to each snapshot
    for row in res.rows:
        on = online0.copy()
        for _t, p, kind in events[events["time_s"] <= row["time_s"]].tolist():
            on[p] = kind == JOIN
        # delayed or ignored events can shift a node only within 0.2 s of a snapshot
        assert abs(row["online"] - int(on.sum())) <= res.summary["delayed_joins"]
    s = res.summary
    after = int((events["time_s"] > 10.0).sum())  # operations are counted after the warm-up
    assert s["joins"] + s["leaves"] + s["ignored_events"] == after
    assert s["connected_snapshots"] == s["snapshots"]
