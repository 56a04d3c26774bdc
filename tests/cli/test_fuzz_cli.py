"""The command-line fuzzer's CI profile (``tests/cli/_fuzz.py``; the long run is
``benchmarks/fuzz_cli.py``): every command and option of the click definitions, invalid
values drawn by hypothesis, each answered by one ``error:`` line, exit 2, no traceback and
no file left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import _fuzz

SPACE = _fuzz.build_space()
KEYS = [(c, o) for c, opts in SPACE.cases.items() for o in opts]

#: the CI profile's bound; one invalid value of one option per case, hypothesis stops once
#: every (command, option, value) has run (1,470 cases today, about 20 s under load)
CI_EXAMPLES = 5000


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    fx = tmp_path_factory.mktemp("fx")
    _fuzz.make_fixtures(fx)
    return fx, tmp_path_factory.mktemp("case")


def test_the_space_covers_every_command_and_option():
    """Generated from the click definitions: every command with a base line, its options."""
    _, options, values = SPACE.count()
    assert set(SPACE.cases) == set(_fuzz.BASE)
    assert "--epochs" in SPACE.cases["run"] and "-p" in SPACE.cases["build"]
    assert options >= 150 and values >= 1000, SPACE.count()


#: bases that name an invalid input on purpose (a valid one would download, or read a trace)
INVALID_BASES = {"data path", "data verify", "data fetch", "replay"}


@pytest.mark.parametrize("command", sorted(set(_fuzz.BASE) - INVALID_BASES))
def test_each_base_line_is_valid(command, dirs):
    """A base that is itself refused would make every case pass for the wrong reason."""
    fx, tmp = dirs
    argv = [a.format(tmp=tmp / "base", fx=fx) for a in _fuzz.BASE[command]]
    out = _fuzz.run_case(argv, tmp / "base")
    assert out.rc == 0 or "work started" in (out.problem or ""), out


@pytest.mark.parametrize(("command", "option"), sorted(_fuzz.TEXT_INPUTS))
def test_each_text_format_fixture_passes_its_own_jobs_pre_check(command, option, dirs):
    """A text input in its own job's format reaches Spark (the tripwire), so the cases that
    give it another job's format are refused for their format, not for something else."""
    fx, tmp = dirs
    own = fx / f"format_{_fuzz.TEXT_INPUTS[(command, option)]}.txt"
    out = _fuzz.run_case(_fuzz.argv_for(command, option, str(own), tmp / "own", fx),
                         tmp / "own")
    assert "work started" in (out.problem or ""), out
    other = fx / "format_matrix.txt" if "perigee" not in command else fx / "format_edges.txt"
    out = _fuzz.run_case(_fuzz.argv_for(command, option, str(other), tmp / "own", fx),
                         tmp / "own")
    assert out.problem is None and ", line " in out.err, out


@given(data=st.data())
@settings(max_examples=CI_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
def test_invalid_values_are_one_error_line(dirs, data):
    fx, tmp = dirs
    command, option = data.draw(st.sampled_from(KEYS), label="option")
    value = data.draw(st.sampled_from(SPACE.cases[command][option]), label="value")
    argv = _fuzz.argv_for(command, option, value, tmp, fx)
    out = _fuzz.run_case(argv, tmp)
    assert out.problem is None, f"hedgerow {' '.join(argv)}: {out.problem}\n{out.err}"
