"""The Vitis reproductions: every experiments/vitis-fig*.yaml validates and names its reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from hedgerow.experiment.load import load_spec
from hedgerow.experiment.reference import REFERENCES

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
SPECS = sorted(EXPERIMENTS.glob("vitis-fig*.yaml"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_vitis_spec_validates(path):
    spec = load_spec(path)
    assert spec.reference == spec.experiment and spec.reference in REFERENCES
    runs = spec.expand()
    assert runs
    for run in runs:
        # a run names its world; the churn of Fig. 12 its named cycle churn scenario
        named = run.scenario["run"] or run.scenario["churn"]
        assert named.get("name", named.get("scenario")).startswith("vitis-")


def test_the_printed_numbers():
    assert REFERENCES["vitis-fig10"].value("hit_ratio", "OPT", 35) == 0.80
    assert REFERENCES["vitis-fig10"].value("overhead", "Vitis", 35) == 0.43
    assert REFERENCES["vitis-fig11"].value("degree_max", "OPT-unbounded", 10000) == 708
    assert REFERENCES["vitis-fig12"].value("hit_ratio_min", "RVR", 4000) == 0.87
    assert REFERENCES["vitis-fig6"].value("hit_ratio", "RVR", 25) == 1.0
