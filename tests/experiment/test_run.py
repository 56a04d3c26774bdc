"""One run of a resolved spec: an ok row with the build metrics, or a failed row."""

from __future__ import annotations

from _spec_helpers import spec_with

from hedgerow.experiment import parse_spec, run_one


def test_run_one_gives_an_ok_row_with_the_build_metrics():
    [run] = parse_spec(spec_with()).expand()
    [row] = run_one(run)
    assert (
        row["status"] == "ok" and row["error"] is None if "error" in row else row["status"] == "ok"
    )
    assert row["run_id"] == run.run_id and row["nodes"] == 60 and row["seed"] == 0
    for key in (
        "avg_degree",
        "max_degree",
        "partitioned_topics",
        "topic_components",
        "control_messages",
        "build_seconds",
        "degree_ci95_lo",
        "degree_ci95_hi",
    ):
        assert key in row
    assert row["partitioned_topics"] == 0.0  # a ring per topic connects every topic
    assert row["topic_components"] == 10.0
    # deterministic: the same run gives the same metrics
    [again] = run_one(run.payload())
    assert again["avg_degree"] == row["avg_degree"] and again["max_degree"] == row["max_degree"]


def test_run_one_turns_an_exception_into_a_failed_row():
    # parameters are checked at load, the instance only when the run builds it:
    # 100 links per node need more than the workload's 60 nodes
    data = spec_with(scenario__protocol="similarity", scenario__params={"similar": 100})
    [run] = parse_spec(data).expand()
    [row] = run_one(run)
    assert row["status"] == "failed"
    assert row["error"].startswith("ParameterError: similarity: 100 links per node")
    assert "Traceback" in row["traceback"]
    assert row["param_similar"] == "100" and "avg_degree" not in row
