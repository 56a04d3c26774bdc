import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.workloads import draw_subscriptions, make_instance, parse_subs, popularity


def test_nyse_top_ten_percent_mass():
    for t in (100, 200, 1000):
        p = popularity("nyse", t)
        assert p[: t // 10].sum() == pytest.approx(0.55, abs=1e-9)
        assert np.all(np.diff(p) < 0)


def test_zipf_shapes():
    rss = popularity("rss", 100)
    assert rss[0] / rss[3] == pytest.approx(2.0)  # (4/1)^0.5
    z2 = popularity("zipf2", 100)
    assert z2[0] / z2[1] == pytest.approx(4.0)
    assert popularity("uniform", 10).tolist() == [0.1] * 10
    with pytest.raises(ParameterError, match="allowed"):
        popularity("zipf3", 10)


def test_fixed_and_range_sizes():
    inst = make_instance(nodes=500, topics=50, subs=10, seed=1)
    assert set(inst.n_subs.tolist()) == {10}
    inst = make_instance(nodes=2000, topics=100, subs="10:30", seed=1)
    assert inst.n_subs.min() == 10 and inst.n_subs.max() == 30
    assert inst.n_subs.mean() == pytest.approx(20, abs=0.5)


def test_sampling_law_is_successive_sampling():
    """Inclusion frequencies match sequential draws without replacement (numpy's choice)."""
    p = popularity("zipf1", 8)
    rng = np.random.default_rng(3)
    n = 20000
    _ptr, topics = draw_subscriptions(n, p, (3, 3), rng)
    ours = np.bincount(topics, minlength=8) / n
    ref_rng = np.random.default_rng(4)
    ref = np.zeros(8)
    for _ in range(n):
        ref[ref_rng.choice(8, size=3, replace=False, p=p)] += 1
    ref /= n
    assert np.abs(ours - ref).max() < 0.02


def test_same_seed_same_instance():
    a = make_instance(nodes=300, topics=30, subs=5, seed=9)
    b = make_instance(nodes=300, topics=30, subs=5, seed=9)
    c = make_instance(nodes=300, topics=30, subs=5, seed=10)
    assert np.array_equal(a.sub_topics, b.sub_topics)
    assert not np.array_equal(a.sub_topics, c.sub_topics)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nodes": 0, "topics": 10},
        {"nodes": 10, "topics": 0},
        {"nodes": 10, "topics": 5, "subs": 6},
        {"nodes": 10, "topics": 5, "subs": "3:2"},
        {"nodes": 10, "topics": 5, "subs": "x"},
        {"nodes": 10, "topics": 5, "subs": 0},
    ],
)
def test_bad_workloads_raise(kwargs):
    kwargs.setdefault("subs", 2)
    with pytest.raises(ParameterError):
        make_instance(**kwargs)


def test_parse_subs():
    assert parse_subs("4") == (4, 4)
    assert parse_subs((2, 5)) == (2, 5)
