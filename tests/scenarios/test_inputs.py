"""Named inputs: what a run reads, where it lives, and the message when it is not prepared."""

from __future__ import annotations

import pytest

from hedgerow.errors import DataError
from hedgerow.pipeline import sweep
from hedgerow.pipeline.inputs import inputs_of
from hedgerow.scenarios.inputs import INPUTS, input_folder, social_folder


def test_a_named_social_input_must_be_prepared(monkeypatch, tmp_path):
    monkeypatch.setenv("HEDGEROW_INPUTS", str(tmp_path))
    with pytest.raises(DataError,
                       match=r"input 'vitis-tw10k' is not prepared.*--users 10000 --mean 80"):
        social_folder("vitis-tw10k")
    folder = input_folder("vitis-tw10k")
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    assert social_folder("vitis-tw10k") == str(folder)
    assert social_folder("some/folder") == "some/folder"  # a folder of one's own: as given


def test_the_vitis_graph_is_the_one_the_docs_measured():
    assert INPUTS["vitis-tw10k"] == ("follower-graph", {"users": 10000, "mean": 80.0, "seed": 0})


def test_runs_name_their_inputs():
    assert inputs_of({"kind": "churn", "churn": {"scenario": "tw10k-google"}}) == [
        "tw10k", "google10k"]
    assert inputs_of({"kind": "run", "run": {"name": "vitis-twitter", "social": "fb1k"}}) == [
        "fb1k"]
    assert inputs_of({"kind": "run", "run": {"name": "unit-square"}}) == []


def test_a_sweep_prepares_the_inputs_of_its_runs_once(monkeypatch):
    calls = []
    monkeypatch.setattr("hedgerow.pipeline.inputs.ensure_inputs",
                        lambda names, **kw: calls.append((list(names), kw["spark"])))

    class Run:
        def __init__(self, scenario):
            self.scenario = scenario

    todo = [Run({"run": {"name": "vitis-twitter", "social": "vitis-tw10k", "rt": rt}})
            for rt in (15, 35)] + [Run({"churn": {"scenario": "fb1k-google"}})]
    sweep._prepare_inputs(todo, spark="session")
    assert calls == [(["vitis-tw10k", "fb1k", "google1k"], "session")]
    calls.clear()
    sweep._prepare_inputs([Run({"run": {"name": "unit-square"}})], spark="session")
    assert calls == []
