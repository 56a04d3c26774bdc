"""The Lean Gossip anchor script's own logic: its table reader and the absent-anchor message.

The script (``benchmarks/anchors/lean_gossip.py``) is loaded from its path; nothing
here needs Lean Gossip itself.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "anchors" / "lean_gossip.py"


@pytest.fixture(scope="module")
def script(load_script):
    return load_script(SCRIPT)


def test_absent_anchor_says_so(script, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(script.ENV, raising=False)
    with pytest.raises(SystemExit, match="HEDGEROW_LEAN_GOSSIP is not set") as info:
        script.find_anchor()
    assert info.value.code == 2
    assert script.main([]) == 2
    assert "HEDGEROW_LEAN_GOSSIP is not set" in capsys.readouterr().err
    monkeypatch.setenv(script.ENV, str(tmp_path))
    with pytest.raises(SystemExit, match=r"no meshsub\.py there"):
        script.find_anchor()


def test_table_rows_keyed_by_setting(script, tmp_path):
    path = tmp_path / "pareto_results.csv"
    path.write_text("D,D_lazy,churny_fraction,num_seeds,delivery_rate_mean\n"
                    "2,1,0,3,0.9989\n2,1,0.2,3,0.9687\n60,0,0.2,3,0.97\n")
    columns, rows = script.read_table(path)
    assert columns[:3] == ["D", "D_lazy", "churny_fraction"]
    assert rows[(2, 1, 0.2)]["delivery_rate_mean"] == pytest.approx(0.9687)
    assert set(rows) == {(2, 1, 0.0), (2, 1, 0.2), (60, 0, 0.2)}
    assert len(script.TARGET_ROWS) >= 8


def test_script_doctests(script):
    res = doctest.testmod(script)
    assert res.attempted >= 1 and res.failed == 0


def test_wall_rows_named_or_refused(script, capsys):
    assert script.parse_rows("8:7:0,2:1:0.3") == ((8, 7, 0.0), (2, 1, 0.3))
    assert script.parse_rows("targets") == script.TARGET_ROWS
    with pytest.raises(SystemExit) as info:
        script.main(["--wall-rows", "8:7"])
    assert info.value.code == 2
    assert "'8:7' is not D:D_lazy:churn" in capsys.readouterr().err
