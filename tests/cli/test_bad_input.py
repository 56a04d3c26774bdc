"""Issue 33's cases, one named test each: every bad input is one ``error:`` line, exit 2, no
traceback and no file left behind, found before any expensive work starts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hedgerow as hr
from hedgerow import metrics
from hedgerow.cli import main
from hedgerow.errors import ParameterError
from hedgerow.experiment.run import run_one
from hedgerow.pipeline.store import write_rows


def refused(capsys, argv: list[str], *words: str) -> str:
    """Run ``hedgerow ARGV``: exit 2, exactly one ``error:`` line holding ``words``, no
    traceback."""
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert rc == 2, err
    assert len(errors) == 1, err
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def files_under(d: Path) -> set[Path]:
    return {p for p in d.rglob("*")}


@pytest.fixture
def afile(tmp_path) -> Path:
    """A plain file: a path below it cannot be written (whoever runs the tests)."""
    f = tmp_path / "afile"
    f.write_text("x")
    return f


def _social(d: Path) -> Path:
    (d / "users").mkdir(parents=True)
    (d / "subscriptions").mkdir()
    pd.DataFrame({"node": np.arange(4)}).to_parquet(d / "users" / "p.parquet")
    pd.DataFrame({"node": [0, 1, 2, 3], "topic": [1, 0, 3, 2]}).to_parquet(
        d / "subscriptions" / "p.parquet")
    return d


@pytest.fixture
def social_bad_parquet(tmp_path) -> Path:
    d = _social(tmp_path / "soc")
    (d / "subscriptions" / "p.parquet").write_bytes(b"not a parquet file")
    return d


@pytest.fixture
def social_bad_meta(tmp_path) -> Path:
    d = _social(tmp_path / "soc")
    (d / "meta.json").write_text("{not json")
    return d


# --- 1. a user's broken file or folder ------------------------------------------------------


def test_build_social_with_a_corrupt_parquet_file(capsys, social_bad_parquet):
    refused(capsys, ["build", "lowoda", "--social", social_bad_parquet],
            "subscriptions", "not a readable Parquet table")


def test_build_social_with_a_corrupt_meta_json(capsys, social_bad_meta):
    refused(capsys, ["build", "lowoda", "--social", social_bad_meta],
            "meta.json", "not valid JSON", "line 1 column 2")


def test_compare_social_with_a_corrupt_parquet_file(capsys, social_bad_parquet):
    refused(capsys, ["compare", "--protocols", "random", "-s", "vitis-twitter",
                     "--social", social_bad_parquet], "not a readable Parquet table")


def test_compare_social_with_a_corrupt_meta_json(capsys, social_bad_meta):
    refused(capsys, ["compare", "--protocols", "random", "-s", "vitis-twitter",
                     "--social", social_bad_meta], "meta.json", "not valid JSON")


def test_churn_trace_with_corrupt_events(capsys, tmp_path):
    d = tmp_path / "trace"
    (d / "events").mkdir(parents=True)
    (d / "events" / "p.parquet").write_bytes(b"junk")
    refused(capsys, ["churn", "spidercast", "--nodes", "50", "--topics", "5", "--subs", "2",
                     "--trace", d], "events", "not a readable Parquet table")


def test_topology_file_that_is_not_json(capsys, tmp_path):
    f = tmp_path / "topo.json"
    f.write_text("[1, 2")
    refused(capsys, ["run", "goldfish", "-s", "goldfish-real", "--topology", f, "--epochs", "1"],
            str(f), "not valid JSON")


@pytest.mark.parametrize("flag", ["--out", "--graphml"])
def test_draw_into_a_path_that_cannot_be_written(capsys, afile, monkeypatch, flag):
    import hedgerow.figures.draw as draw

    monkeypatch.setattr(draw, "make_overlay", _no_work)
    name = "x.png" if flag == "--out" else "x.graphml"
    refused(capsys, ["draw", "spidercast", "-s", "cities", flag, afile / name],
            "cannot write here", "is a file, not a folder")


def _no_work(*a, **k):
    raise AssertionError("the overlay was built before the output path was checked")


def test_draw_to_an_unknown_image_format_before_the_build(capsys, tmp_path, monkeypatch):
    import hedgerow.figures.draw as draw

    monkeypatch.setattr(draw, "make_overlay", _no_work)
    refused(capsys, ["draw", "spidercast", "-s", "cities", "--out", tmp_path / "x.jpeg2"],
            "unknown image format 'jpeg2'", "png")
    assert files_under(tmp_path) == set()


def _rows(out: Path, experiment: str = "quickstart") -> None:
    row = {
        "run_id": "r1", "attempt_id": "a1", "experiment": experiment, "label": "L",
        "kind": "build", "protocol": "spidercast", "seed": 0, "nodes": 50, "topics": 10,
        "subs": "3", "popularity": "rss", "status": "ok", "finished_at": time.time(),
        "code": "c", "param_kg": "3", "spec_json": "{}", "point_json": "{}",
        "avg_degree": 4.0,
    }  # fmt: skip
    write_rows(out, "r1", [row])


def test_report_html_into_a_path_that_cannot_be_written(capsys, tmp_path, afile):
    _rows(tmp_path / "res")
    refused(capsys, ["report", tmp_path / "res", "-e", "quickstart", "--engine", "local",
                     "--html", afile / "r.html"], "cannot write here")


def test_report_unknown_experiment_on_the_local_engine(capsys, tmp_path):
    out = tmp_path / "res"
    _rows(out)
    other = {"run_id": "r2", "attempt_id": "a2", "experiment": "other", "label": "M",
             "kind": "build", "protocol": "random", "seed": 0, "nodes": 50, "topics": 10,
             "status": "ok", "finished_at": time.time(), "code": "c", "param_random": "1",
             "param_similar": "2", "spec_json": "{}", "point_json": "{}", "avg_degree": 2.0}
    write_rows(out, "r2", [other])
    refused(capsys, ["report", out, "--experiment", "nosuch", "--engine", "local"],
            "no rows of experiment 'nosuch'", "found: other, quickstart")


@pytest.mark.parametrize("job", [["churn"], ["follower-graph", "--users", "1000"]])
def test_ingest_into_a_folder_that_cannot_be_written_before_spark(capsys, afile, monkeypatch,
                                                                  job):
    import hedgerow.pipeline.session as session

    monkeypatch.setattr(session, "job_session", _no_work)
    before = files_under(afile.parent)
    refused(capsys, ["ingest", *job, "--out", afile / "o"], "cannot write here")
    assert files_under(afile.parent) == before  # no _logs/ beside --out


# a text input in another format than the job's: (job, option, content, words of the error)
WRONG_FORMAT = [
    (["churn"], "--trace", "0 1 1 0 1\n",
     ["line 1", "expected 6 columns, found 1", "machine events",
      "each line is 'timestamp,machine_id,event_type,platform_id,cpus,memory'"]),
    (["churn"], "--trace", "0,5,0,p,0.5,0.5\n10,5,1,,,\n20,6,x,,,\n",
     ["line 3", "column 3 (event_type) is not an integer: 'x'"]),
    (["churn", "--source", "smartphone"], "--trace", "0,5,0,p,0.5,0.5\n",
     ["line 1", "expected at least 5 columns", "session trace"]),
    (["social", "--size", "10"], "--edges", "# SNAP\n0 1\n1 2 7\n",
     ["line 3", "expected 2 columns, found 3", "each line is 'u v'"]),
    (["social", "--size", "10"], "--edges", "source,destination\n",
     ["line 1", "expected 2 columns, found 1"]),
    (["cities"], "--pings", "source,destination,min,avg,max,mdev\n1,2,3,-4,5,6\n",
     ["line 2", "column 4 (avg) is negative"]),
    (["cities"], "--servers", "0 1\n", ["line 1", "the servers header must start with id,"]),
    (["perigee"], "--matrix", "2\n0 1\n1 0 3\n",
     ["line 3", "expected 2 columns, found 3", "the file is N on line 1"]),
    (["perigee"], "--matrix", "0,5,0\n", ["line 1", "expected the matrix size N"]),
]


@pytest.mark.parametrize(("job", "flag", "text", "words"), WRONG_FORMAT,
                         ids=[f"{j[0]}{f}-{i}" for i, (j, f, _, _) in enumerate(WRONG_FORMAT)])
def test_ingest_a_text_input_in_the_wrong_format_before_spark(capsys, tmp_path, monkeypatch,
                                                               job, flag, text, words):
    import hedgerow.pipeline.session as session

    monkeypatch.setattr(session, "job_session", _no_work)
    inp = tmp_path / "input.txt"
    inp.write_text(text)
    t0 = time.perf_counter()
    line = refused(capsys, ["ingest", *job, flag, inp, "--out", tmp_path / "o"], *words)
    assert line.startswith(f"error: {inp}, line ")  # the file and line, as the job names them
    assert time.perf_counter() - t0 < 10.0  # a second or two; a Spark start takes longer
    assert files_under(tmp_path) == {inp}  # no output, no _logs/


def test_the_format_pre_check_accepts_every_shipped_input():
    """The pre-check reads the first lines with the job's declared format; the real inputs
    the jobs ingest pass it (a refusal of a good file would be worse than a late one)."""
    from hedgerow.data import data_path
    from hedgerow.pipeline.ingest import churn, cities, perigee, social
    from hedgerow.pipeline.ingest._common import check_head

    check_head(data_path(*churn.GOOGLE), churn.TRACE_LINES["google"])
    check_head(data_path(*churn.SMARTPHONE), churn.TRACE_LINES["smartphone"])
    check_head(data_path(*social.FACEBOOK), social.EDGE_LINES)
    check_head(data_path(*social.REED98), social.EDGE_LINES)
    servers, pings = cities.default_inputs()
    check_head(servers, cities.SERVER_LINES)
    check_head(pings, cities.PING_LINES)
    perigee.check_matrix_head(data_path(perigee.DATASET, perigee.MATRIX_FILE))


@pytest.mark.parametrize(
    ("source", "line", "match"),
    [  # the Spark jobs' own bad-row cases (tests/pipeline/test_ingest_churn.py): same line,
        # same words
        ("google", "5,6,0,abc,0.5\n", r"line 9: expected 6 columns, found 5"),
        ("google", "5,6,0,abc,0.5,zz\n", r"line 9: column 6 \(memory\) is not a number: 'zz'"),
        ("google", "5,6,7,abc,0.5,0.5\n", r"line 9: column 3 \(event_type\) must be 0, 1 or 2"),
        ("smartphone", "u 1 1402358400000\n", r"line 9: expected at least 5 columns, found 3"),
        ("smartphone", "u 1 14023584x0000 2 5 6\n", r"line 9: column 3 \(start_epoch_ms\)"),
        ("smartphone", "u 1 1402358400000 2 5 -6\n",
         r"line 9: a session length is negative or out of range"),
    ],
)
def test_the_pre_check_finds_what_the_spark_parse_finds(tmp_path, source, line, match):
    import gzip

    from hedgerow.data import data_path
    from hedgerow.errors import DataError
    from hedgerow.pipeline.ingest import churn
    from hedgerow.pipeline.ingest._common import check_head

    with gzip.open(data_path(*(churn.GOOGLE if source == "google" else churn.SMARTPHONE)),
                   "rt") as fh:
        lines = [next(fh) for _ in range(30)]
    lines[8] = line
    f = tmp_path / "t.txt"
    f.write_text("".join(lines))
    with pytest.raises(DataError, match=r"t\.txt, " + match):
        check_head(f, churn.TRACE_LINES[source])


def test_reproduce_into_a_folder_that_cannot_be_written(capsys, afile):
    before = files_under(afile.parent)
    refused(capsys, ["reproduce", "spidercast", "--quick", "--out", afile / "rep"],
            "cannot write here")
    assert files_under(afile.parent) == before


def test_reproduce_checks_the_master_url_before_the_jvm(capsys, tmp_path):
    refused(capsys, ["reproduce", "spidercast", "--quick", "--master", "nosuch",
                     "--out", tmp_path / "rep"], "--master nosuch", "not a Spark master URL")
    assert files_under(tmp_path) == set()


# --- 4. reports that read as complete when they are not -----------------------------------


def test_reproduce_report_only_on_an_empty_folder(capsys, tmp_path):
    refused(capsys, ["reproduce", "spidercast", "--quick", "--report-only",
                     "--out", tmp_path / "empty"], "holds none of the", "runs of spidercast")
    assert files_under(tmp_path) == set()


def test_missing_runs_are_counted_and_stated_in_the_report_header(tmp_path):
    from hedgerow.figures.html import paper_report
    from hedgerow.figures.papers import Results, get_paper
    from hedgerow.pipeline.reproduce import missing_runs, spec_for

    paper = get_paper("spidercast")
    first = spec_for(paper.experiments[0], True).expand()[0]
    _rows(tmp_path)  # a row of another experiment does not count
    missing, expected = missing_runs(paper, tmp_path, quick=True)
    assert missing == expected > 1
    row = {"run_id": first.run_id, "attempt_id": "a", "experiment": first.experiment,
           "label": first.label, "kind": "build", "protocol": "spidercast", "seed": 0,
           "status": "ok", "finished_at": time.time(), "code": "c", "spec_json": "{}",
           "point_json": "{}", "avg_degree": 4.0}
    write_rows(tmp_path, first.run_id, [row])
    assert missing_runs(paper, tmp_path, quick=True) == (expected - 1, expected)
    s = paper_report(paper, Results(tmp_path, quick=True), tmp_path / "report",
                     runs=(expected - 1, expected))
    assert f"Incomplete: {expected - 1} of {expected} runs missing" in s["path"].read_text()


# --- 7. silently accepted ------------------------------------------------------------------


def test_hedgerow_data_pointing_at_a_missing_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HEDGEROW_DATA", str(tmp_path / "nope"))
    refused(capsys, ["compare", "--protocols", "spidercast", "-s", "cities"],
            "HEDGEROW_DATA", "is not a folder")


def test_compare_a_protocol_listed_twice(capsys):
    refused(capsys, ["compare", "--protocols", "spidercast,spidercast", "-s", "cities"],
            "'spidercast' twice")


def test_api_compare_with_one_string_names_the_argument():
    with pytest.raises(ParameterError, match="protocols must be a list of names") as e:
        hr.compare("spidercast", "cities")
    assert e.value.key == "protocols"


def test_api_simulate_with_params_as_text_names_the_argument():
    with pytest.raises(ParameterError, match="params must be a mapping") as e:
        hr.simulate("topiary", "cities", params="eta=2", epochs=1)
    assert e.value.key == "params"


@pytest.mark.parametrize("fn", [metrics.overlay_summary, metrics.topic_diameters,
                                metrics.topic_overlay_diameters, metrics.topic_components])
def test_api_metrics_with_a_wrong_overlay_names_the_argument(fn):
    inst = hr.make_instance(nodes=10, topics=3, subs=1)
    with pytest.raises(ParameterError, match="overlay must be a Overlay, got str") as e:
        fn("x", inst)
    assert e.value.key == "overlay"


def test_api_metrics_with_a_wrong_instance_names_the_argument():
    with pytest.raises(ParameterError, match="instance must be a Instance") as e:
        metrics.tdi([1, 2], 3)
    assert e.value.key == "instance"


@pytest.mark.parametrize("run", [{"bad": 1}, "run", {"run_id": "r", "experiment": "e",
                                                     "label": "l", "scenario": 3}])
def test_api_run_one_with_a_wrong_run_names_the_argument(run):
    with pytest.raises(ParameterError, match=r"run_one: run") as e:
        run_one(run)
    assert e.value.key.startswith("run")


def test_reading_errors_name_the_file(tmp_path):
    from hedgerow.errors import DataError
    from hedgerow.workloads.social import load_instance

    d = _social(tmp_path / "soc")
    (d / "users" / "p.parquet").unlink()
    pd.DataFrame({"user": [1]}).to_parquet(d / "users" / "p.parquet")
    with pytest.raises(DataError, match="users/ table has no 'node' column"):
        load_instance(d)
    assert json.loads(json.dumps({"ok": 1}))  # the boundary leaves valid JSON alone


# --- 6. spec checks done at load (sweep --dry-run catches them) ---------------------------


def _spec(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    return f


BUILD = ("experiment: e\nscenario:\n  protocol: ringpt\n"
         "  workload: {nodes: %s, topics: 10, subs: 2}\n")


def test_dry_run_refuses_a_pivot_not_among_by(capsys, tmp_path):
    spec = _spec(tmp_path, BUILD % 50 + "report: {by: [label], pivot: nodes}\n")
    refused(capsys, ["sweep", spec, "--dry-run", "--out", tmp_path / "o"],
            "report", "pivot 'nodes' is not among by (label)")


def test_dry_run_refuses_an_unknown_report_metric_naming_its_place_and_the_nearest(
        capsys, tmp_path):
    spec = _spec(tmp_path, BUILD % 50 + "report: {metrics: [avg_degree, max_degree, avg_degre]}\n")
    line = refused(capsys, ["sweep", spec, "--dry-run", "--out", tmp_path / "o"],
                   "report.metrics[2]", "unknown metric 'avg_degre'", "nearest: avg_degree")
    assert f"{spec}:5:" in line  # the file and line of the key, as every spec error
    assert not (tmp_path / "o").exists()


def test_dry_run_refuses_a_report_metric_of_another_kind_of_run(capsys, tmp_path):
    spec = _spec(tmp_path, BUILD % 50 + "report:\n  metrics:\n    - avg_degree\n"
                 "    - hit_ratio\n")
    line = refused(capsys, ["sweep", spec, "--dry-run", "--out", tmp_path / "o"],
                   "report.metrics[1]", "'hit_ratio' comes from rows of kind run, churn",
                   "not from this spec's kind 'build'")
    assert f"{spec}:8:" in line


def test_report_metric_typo_names_the_nearest_declared_metrics(capsys, tmp_path):
    write_rows(tmp_path, "r0", run_one({"run_id": "r0", "experiment": "e", "label": "ringpt",
                                        "scenario": {"kind": "build", "protocol": "ringpt",
                                                     "diameter": False, "seed": 0,
                                                     "workload": {"nodes": 40, "topics": 5,
                                                                  "subs": 2,
                                                                  "popularity": "rss"}}}))
    refused(capsys, ["report", tmp_path, "-e", "e", "--metric", "partitoned_topics"],
            "--metric partitoned_topics: unknown metric", "nearest: partitioned_topics")


def test_dry_run_refuses_a_workload_that_does_not_fit_in_memory(capsys, tmp_path):
    spec = _spec(tmp_path, BUILD % 10**12)
    refused(capsys, ["sweep", spec, "--dry-run", "--out", tmp_path / "o"],
            "workload", "GiB of memory")


def test_dry_run_refuses_a_social_folder_that_does_not_exist(capsys, tmp_path):
    spec = _spec(tmp_path, "experiment: e\nscenario:\n  kind: run\n  protocol: vitis\n"
                 f"  run: {{name: vitis-twitter, social: {tmp_path / 'nope'}}}\n")
    refused(capsys, ["sweep", spec, "--dry-run", "--out", tmp_path / "o"],
            "run.social", "neither a named social input nor an existing folder")
    assert not (tmp_path / "o").exists()


# --- 3. sizes refused by the one memory estimate, before allocating or starting Spark -------


def test_run_with_a_billion_messages_is_refused(capsys):
    refused(capsys, ["run", "goldfish", "-s", "goldfish-random", "--messages", "1000000000"],
            "1,000,000,000 messages per epoch", "GiB of memory")


def test_ingest_follower_graph_with_a_billion_users_before_spark(capsys, tmp_path, monkeypatch):
    import hedgerow.pipeline.session as session

    monkeypatch.setattr(session, "job_session", _no_work)
    refused(capsys, ["ingest", "follower-graph", "--users", "1000000000", "--out",
                     tmp_path / "fg"], "1,000,000,000 users", "GiB of memory")
    assert files_under(tmp_path) == set()


# --- churn: checked first, byte-reproducible ----------------------------------------------

CHURN = ["churn", "spidercast", "--nodes", "60", "--topics", "8", "--subs", "2", "--seed", "3"]


def test_churn_duration_inf_without_json(capsys):
    refused(capsys, [*CHURN, "--lifetime", "20", "--duration", "inf"],
            "--duration must be a finite time")


def test_churn_with_a_hundred_million_nodes_is_refused_before_allocating(capsys):
    refused(capsys, ["churn", "spidercast", "--nodes", "100000000", "--topics", "8", "--subs",
                     "2", "--lifetime", "20"], "100,000,000 nodes", "GiB of memory")


def test_churn_bad_protocol_parameter_before_the_run(capsys):
    refused(capsys, [*CHURN, "--lifetime", "20", "-p", "membership=abc"],
            "membership must be a number")


def test_churn_json_no_timings_is_the_same_bytes_twice(capsys):
    argv = [*CHURN, "--lifetime", "20", "--duration", "50", "--snapshot-every", "10", "--json",
            "--no-timings"]
    outs = []
    for _ in range(2):
        assert main(argv) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "wall_seconds" not in outs[0]
    assert len(outs[0].splitlines()) == 6  # five snapshots and the summary
    assert main(argv[:-1]) == 0 and "wall_seconds" in capsys.readouterr().out


# --- 5. advice in messages, tested by following it ------------------------------------------


def _sparse_trace(d: Path) -> Path:
    (d / "events").mkdir(parents=True)
    pd.DataFrame({"seq": np.arange(4), "time_s": [0.0, 0.0, 3.0, 8.0], "node": [0, 9, 4, 9],
                  "event": [1, 1, 1, -1]}).to_parquet(d / "events" / "p.parquet")
    return d


def test_the_churn_warnings_nodes_advice_is_accepted(capsys, tmp_path):
    trace = _sparse_trace(tmp_path / "tr")
    base = ["churn", "spidercast", "--topics", "4", "--subs", "1", "--trace", trace,
            "--duration", "10", "--snapshot-every", "5", "--json"]
    assert main([str(a) for a in [*base, "--nodes", "30"]]) == 0
    err = capsys.readouterr().err
    [advice] = [w for w in err.splitlines() if "use --nodes" in w]
    n = advice.rsplit("use --nodes ", 1)[1].rstrip(")")
    assert n == "10"  # the largest node id is 9
    assert main([str(a) for a in [*base, "--nodes", n]]) == 0  # followed: accepted
    err = capsys.readouterr().err
    assert "use --nodes" not in err and "node ids leave gaps" in err  # no advice twice


def test_the_trace_errors_nodes_advice_is_accepted(capsys, tmp_path):
    trace = _sparse_trace(tmp_path / "tr")
    base = ["churn", "spidercast", "--topics", "4", "--subs", "1", "--trace", trace,
            "--duration", "10", "--json"]
    line = refused(capsys, [*base, "--nodes", "5"], "use at least")
    n = line.rsplit("use at least ", 1)[1].split()[0]
    assert main([str(a) for a in [*base, "--nodes", n]]) == 0


def test_a_scenarios_every_node_publishers_follow_nodes(capsys):
    """perigee-matrix's publishers are every node: --nodes 300 runs, no --publishers asked."""
    from hedgerow.scenarios.world import resolve_scenario

    assert resolve_scenario("perigee-matrix", nodes=300).publishers == "unif:300"
    assert resolve_scenario("goldfish-fig2", nodes=50).publishers == "unif:3"  # not every node
    assert main(["run", "perigee", "-s", "perigee-matrix", "--nodes", "120", "--epochs", "1",
                 "--messages", "3", "--json"]) == 0
    capsys.readouterr()


# --- issue 27's cases, kept as regression tests -------------------------------------------


def test_churn_scenario_refuses_the_workload_options_it_would_drop(capsys):
    for extra in (["--lifetime", "5"], ["--nodes", "50"]):
        refused(capsys, ["churn", "lowoda-inc", "--scenario", "fb1k-google", *extra],
                "cannot be used with --scenario fb1k-google")


# --- found by the fuzzer --------------------------------------------------------------------


def test_run_trace_with_an_empty_name(capsys):
    refused(capsys, ["run", "ringpt", "-s", "cities", "--epochs", "1", "--trace="],
            "--trace ''", "name a file")


def test_run_trace_to_a_file_whose_name_holds_a_colon(capsys, tmp_path, monkeypatch):
    """pyarrow reads ``unif:0`` as a URI; a local file name is a local file name."""
    from hedgerow.trace import read_trace

    monkeypatch.chdir(tmp_path)
    assert main(["run", "ringpt", "-s", "cities", "--epochs", "1", "--messages", "3",
                 "--json", "--trace", "unif:0"]) == 0
    capsys.readouterr()
    df, _ = read_trace("unif:0")
    assert len(df) > 0 and sorted(p.name for p in tmp_path.iterdir()) == ["unif:0"]


def test_a_usage_error_is_one_error_line(capsys):
    refused(capsys, ["build", "ringpt", "--nodes", "abc"], "'abc' is not a valid integer",
            "hedgerow build -h")


@pytest.mark.parametrize("argv", [
    ["report", "{rows}", "-e", "quickstart", "--engine", "local", "--master", "nosuch"],
    ["report", "{rows}", "-e", "quickstart", "--by", ""],
    ["sweep", "{spec}", "--out", "{afile}/o"],
    ["ingest", "follower-graph", "--users", "1000", "--mean", "nan", "--out", "{tmp}/o"],
    ["ingest", "social", "--size", "abc", "--out", "{tmp}/o"],
    ["ingest", "churn", "--trace", "", "--out", "{tmp}/o"],
    ["ingest", "churn", "--nodes", "10000000000000", "--out", "{tmp}/o"],
    ["pictures", "vitis", "--nodes", "40", "--topics", "5", "--subs", "2", "--topic", "9"],
])
def test_fuzzer_findings(capsys, tmp_path, afile, monkeypatch, argv):
    import hedgerow.pipeline.session as session

    monkeypatch.setattr(session, "job_session", _no_work)
    monkeypatch.chdir(tmp_path)
    _rows(tmp_path / "rows")
    spec = _spec(tmp_path, BUILD % 30)
    before = files_under(tmp_path)
    refused(capsys, [a.format(rows=tmp_path / "rows", spec=spec, afile=afile, tmp=tmp_path)
                     for a in argv])
    assert files_under(tmp_path) == before


def test_reproduce_into_a_folder_another_sweep_holds(capsys, tmp_path, monkeypatch):
    import hedgerow.pipeline.session as session
    from hedgerow.pipeline.store import sweep_lock

    monkeypatch.setattr(session, "preflight", lambda master: None)
    monkeypatch.setattr(session, "get_spark", _no_work)
    with sweep_lock(tmp_path / "rep"):
        refused(capsys, ["reproduce", "spidercast", "--quick", "--out", tmp_path / "rep"],
                "is in use by hedgerow sweep pid")


def test_reproduce_report_only_on_a_partial_folder_says_what_is_missing(capsys, tmp_path):
    from hedgerow.figures.papers import get_paper
    from hedgerow.pipeline.reproduce import spec_for

    paper = get_paper("spidercast")
    first = spec_for(paper.experiments[0], True).expand()[0]
    write_rows(tmp_path, first.run_id, [{
        "run_id": first.run_id, "attempt_id": "a", "experiment": first.experiment,
        "label": first.label, "kind": "build", "protocol": "spidercast", "seed": 0,
        "status": "ok", "finished_at": time.time(), "code": "c", "spec_json": "{}",
        "point_json": "{}", "avg_degree": 4.0}])
    assert main(["reproduce", "spidercast", "--quick", "--report-only",
                 "--out", str(tmp_path)]) == 0
    from hedgerow.pipeline.reproduce import missing_runs

    missing, expected = missing_runs(paper, tmp_path, quick=True)
    line = capsys.readouterr().out
    assert f": {missing} of {expected} runs missing; " in line and "figures drawn" in line, line
    html = (tmp_path / "report" / "spidercast-quick.html").read_text()
    assert f"Incomplete: {expected - 1} of {expected} runs missing" in html


def test_every_shipped_spec_passes_the_load_checks():
    """The checks at load refuse no spec of the reproductions (pivot metric, dotted keys)."""
    from hedgerow.experiment import load_spec

    root = Path(__file__).resolve().parents[2] / "experiments"
    specs = sorted(root.glob("*.yaml"))
    assert len(specs) > 20
    for f in specs:
        load_spec(f)


@pytest.mark.parametrize("argv", [
    ["run", "vitis", "-s", "vitis-random", "--rt", "30", "-p", "rt=10"],
    ["compare", "--protocols", "vitis", "-s", "vitis-random", "--cycles", "5",
     "-p", "vitis.cycles=10"],
])
def test_a_world_setting_and_a_parameter_given_together(capsys, argv):
    """Issue 27's precedence case, kept: never a silent choice between --rt and -p rt."""
    refused(capsys, argv, "is given twice", "give one")
