"""The Goldfish anchor harness's own logic: class translation and the absent-anchor message.

The harness (``benchmarks/anchors/goldfish_completer.py``) is a script, not a
package module, so it is loaded from its path.  Nothing here needs PyTorch.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

from hedgerow.protocols.goldfish.matrix import (
    AMBIGUOUS,
    DAGGER,
    ESTIMABLE,
    INFEASIBLE,
    OBSERVED,
    classify,
    window_matrix,
)

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "anchors" / "goldfish_completer.py"


@pytest.fixture(scope="module")
def harness(load_script):
    return load_script(HARNESS)


@pytest.fixture
def table1():
    """Table I(a) of the paper: two epochs of four blocks over peers n1..n4."""
    e1 = np.array([[0, 5, 9], [np.inf, 0, np.inf], [0, 6, 8], [3, 7, 0]], dtype=float)
    e2 = np.array([[np.inf, 0, np.inf], [0, 4, 2], [0, 4, 5], [np.inf, 0, 1]], dtype=float)
    return window_matrix([np.array([1, 2, 4]), np.array([1, 2, 3])], [e1, e2])


def test_translation_round_trips_every_class(harness, table1):
    """Masks in the anchor's encoding built from Hedgerow's classes translate back to them."""
    classes = classify(table1, k=2).classes
    assert set(np.unique(classes)) == {OBSERVED, DAGGER, INFEASIBLE, ESTIMABLE}
    classes = classes.copy()
    classes[0, 2] = AMBIGUOUS  # cover the fifth class too
    got = harness.their_classes(classes == OBSERVED, classes == DAGGER, classes == AMBIGUOUS,
                                classes == INFEASIBLE)
    np.testing.assert_array_equal(got, classes)
    assert got.dtype == classes.dtype


def test_translation_rejects_overlapping_masks(harness):
    """A cell both † and ambiguous is not a valid anchor output."""
    o = np.zeros((2, 2), bool)
    d = np.array([[True, False], [False, False]])
    with pytest.raises(ValueError, match=r"overlap at cell \(0, 0\)"):
        harness.their_classes(o, d, d, o)
    with pytest.raises(ValueError, match="shape"):
        harness.their_classes(o, d, d, np.zeros((3, 2), bool))


def test_class_differences_count_by_kind(harness):
    ours = np.array([[ESTIMABLE, ESTIMABLE, OBSERVED], [ESTIMABLE, INFEASIBLE, DAGGER]])
    theirs = np.array([[AMBIGUOUS, ESTIMABLE, OBSERVED], [AMBIGUOUS, ESTIMABLE, DAGGER]])
    assert harness.class_differences(ours, theirs) == {"a->‡": 2, "×->a": 1}
    assert harness.class_differences(ours, ours) == {}


def test_absent_anchor_says_so(harness, monkeypatch, tmp_path):
    monkeypatch.delenv(harness.ENV, raising=False)
    monkeypatch.delenv(harness.ENV_PYTHON, raising=False)
    with pytest.raises(SystemExit, match="HEDGEROW_ANCHOR_GOLDFISH and "
                                         "HEDGEROW_ANCHOR_GOLDFISH_PYTHON not set"):
        harness.anchor_paths()
    monkeypatch.setenv(harness.ENV, str(tmp_path))
    monkeypatch.setenv(harness.ENV_PYTHON, str(tmp_path / "python"))
    with pytest.raises(SystemExit, match=r"no core/mc_optimizer\.py"):
        harness.anchor_paths()


def test_harness_doctests(harness):
    res = doctest.testmod(harness)
    assert res.attempted >= 2 and res.failed == 0
