"""Spec files: errors name the file and line, the repository's experiments validate."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hedgerow.errors import SpecError
from hedgerow.experiment import load_spec

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_load_spec_reports_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            experiment: bad
            scenario:
              protocol: ringpt
              workload:
                nodes: 60
                popularity: zipf3
            """
        )
    )
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(info.value).startswith(f"{path}:6: scenario.workload.popularity: 'zipf3'")


def test_load_spec_line_of_grid_entry_and_duplicate_keys(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(
        "experiment: g\nscenario: {protocol: ringpt}\nsweep:\n  grid:\n"
        "    scenario.workload.popularity:\n      - rss\n      - zipf3\n"
    )
    with pytest.raises(
        SpecError, match=r"grid\.yaml:7: sweep\.grid\.scenario\.workload\.popularity\[1\]"
    ):
        load_spec(path)
    dup = tmp_path / "dup.yaml"
    dup.write_text("experiment: d\nscenario: {protocol: ringpt}\nexperiment: e\n")
    with pytest.raises(SpecError, match=r"line 3: experiment: duplicate key"):
        load_spec(dup)
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("experiment: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(broken)


def test_repository_experiments_validate():
    fig12 = load_spec(EXPERIMENTS / "spidercast-fig12.yaml")
    runs = fig12.expand()
    assert len(runs) == 8 * 6 * 3
    labels = {r.label for r in runs}
    assert {
        "SpiderCast(3,0)",
        "similarity(9,1)",
        "random(10)",
        "similarity(20,0)",
        "RingPT",
    } <= labels
    assert {r.scenario["workload"]["nodes"] for r in runs} == {1000, 2000, 4000, 6000, 8000, 10000}
    assert all(r.scenario["workload"]["popularity"] == "rss" for r in runs)
    assert fig12.reference == "spidercast-fig12"
    fig6 = load_spec(EXPERIMENTS / "spidercast-fig6.yaml")
    assert len(fig6.expand()) == 3 * 6 * 3 and fig6.reference == "spidercast-fig6"
    assert {r.scenario["workload"]["popularity"] for r in fig6.expand()} == {"zipf2"}
    topiary = {
        "topiary-fig5.yaml": 6,
        "topiary-fig3-4.yaml": 10,
        "topiary-fig6.yaml": 5,
        "topiary-cities.yaml": 6,
        "topiary-attacks.yaml": 4,  # 300/500 topic, 300 eclipse, no attackers
    }
    for name, n_runs in topiary.items():
        spec = load_spec(EXPERIMENTS / name)
        runs = spec.expand()
        assert len(runs) == n_runs and {r.scenario["kind"] for r in runs} == {"run"}
        assert spec.report.epochs and all(r.scenario["run"]["epochs"] == 150 for r in runs)
    quick = load_spec(EXPERIMENTS / "quickstart.yaml")
    assert 4 <= len(quick.expand()) <= 16
