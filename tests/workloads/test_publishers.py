"""Publishing laws of broadcast worlds (Goldfish section V-A, V-C)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.workloads.publishers import (
    draw_publishers,
    parse_publishers,
    publisher_probabilities,
)


def test_exp_law_is_the_authors_decay_of_ten_publishers():
    p = publisher_probabilities("exp:100", 100, np.random.default_rng(4))
    s = np.sort(p)[::-1]
    assert s.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(s[1:] / s[:-1], np.exp(-0.1))
    # "80% on 20 nodes" in the paper; the code's law gives 86.5%
    assert s[:20].sum() == pytest.approx((1 - np.exp(-2)) / (1 - np.exp(-10)))


def test_unif_law_and_explicit():
    p = publisher_probabilities("unif:32", 100, np.random.default_rng(0))
    assert (p > 0).sum() == 32 and np.allclose(p[p > 0], 1 / 32)
    q = publisher_probabilities([0, 2, 2, 0], 4, np.random.default_rng(0))
    assert q.tolist() == [0.0, 0.5, 0.5, 0.0]


@pytest.mark.parametrize("spec", ["exp", "zipf:3", "unif:0", "unif:x", "unif:200"])
def test_bad_specs_are_refused(spec):
    with pytest.raises(ParameterError, match="publishers"):
        publisher_probabilities(spec, 100, np.random.default_rng(0))


def test_draws_follow_the_probabilities():
    p = publisher_probabilities("exp:10", 10, np.random.default_rng(2))
    draws = draw_publishers(p, 200_000, np.random.default_rng(5))
    freq = np.bincount(draws, minlength=10) / len(draws)
    np.testing.assert_allclose(freq, p, atol=0.005)
    assert parse_publishers("exp:7") == ("exp", 7)
