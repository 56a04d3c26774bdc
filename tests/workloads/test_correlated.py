"""Vitis section IV-A workloads (random / low / high correlation) and IV-D publication rates."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.model import Instance
from hedgerow.workloads.correlated import (
    correlated_instance,
    power_law_rates,
    with_owner_subscriptions,
)


@pytest.fixture(scope="module")
def levels():
    return {c: correlated_instance(2000, correlation=c, seed=4) for c in ("random", "low", "high")}


def _bucket_counts(inst: Instance, node: int) -> np.ndarray:
    return np.bincount(inst.topics_of(node) // 50, minlength=100)


def test_every_node_has_50_distinct_topics_of_5000(levels):
    for inst in levels.values():
        assert inst.n_topics == 5000
        assert (inst.n_subs == 50).all()
        assert inst.topic_rates is not None and np.allclose(inst.topic_rates, 1.0)


@pytest.mark.parametrize(("level", "buckets", "per_bucket"), [("low", 5, 10), ("high", 2, 25)])
def test_bucket_structure(levels, level, buckets, per_bucket):
    inst = levels[level]
    for node in range(0, 2000, 97):
        counts = _bucket_counts(inst, node)
        assert (counts > 0).sum() == buckets
        assert set(counts[counts > 0].tolist()) == {per_bucket}


def test_random_spreads_over_buckets(levels):
    used = [(_bucket_counts(levels["random"], v) > 0).sum() for v in range(200)]
    # 50 uniform topics of 5,000 fall in about 39 of the 100 buckets
    assert 30 < np.mean(used) < 45


def test_topic_popularity_is_uniform_on_average(levels):
    for inst in levels.values():
        sizes = inst.topic_sizes
        assert sizes.mean() == pytest.approx(20.0)  # 2,000 x 50 / 5,000
        # no bucket is favoured: bucket totals are within a few percent of each other
        per_bucket = sizes.reshape(100, 50).sum(axis=1)
        assert per_bucket.std() / per_bucket.mean() < 0.2


def test_correlation_levels_order_the_best_friend_similarity(levels):
    """Eq. (1) with uniform rates (Jaccard): a node's best match is closer as correlation rises."""

    def best(inst: Instance) -> float:
        m = inst.matrix.astype(np.int32)
        inter = (m[:100] @ m.T).toarray()
        inter[np.arange(100), np.arange(100)] = 0
        return float((inter.max(axis=1) / (100 - inter.max(axis=1))).mean())

    r, lo, hi = best(levels["random"]), best(levels["low"]), best(levels["high"])
    assert r < lo < hi
    assert r < 0.05 and hi > 0.15


def test_same_seed_same_instance_other_seed_other():
    a = correlated_instance(100, correlation="low", seed=1)
    b = correlated_instance(100, correlation="low", seed=1)
    c = correlated_instance(100, correlation="low", seed=2)
    assert np.array_equal(a.sub_topics, b.sub_topics)
    assert not np.array_equal(a.sub_topics, c.sub_topics)


def test_bad_settings_are_one_line_errors():
    with pytest.raises(ParameterError, match="subs must be a multiple of 5"):
        correlated_instance(10, correlation="low", subs=12)
    with pytest.raises(ParameterError, match="correlation"):
        correlated_instance(10, correlation="medium")
    with pytest.raises(ParameterError, match="buckets"):
        correlated_instance(10, topics=5000, buckets=7)


def test_power_law_rates():
    rng = np.random.default_rng(0)
    assert np.allclose(power_law_rates(100, 0.0, rng), 1.0)
    r = power_law_rates(5000, 3.0, np.random.default_rng(1))
    assert r.sum() == pytest.approx(5000)
    # alpha = 3: "almost all the events are published on a single topic" (IV-D)
    assert r.max() / r.sum() > 0.8
    r03 = power_law_rates(5000, 0.3, np.random.default_rng(1))
    assert r03.max() / r03.sum() < 0.01
    # the hottest topic is a random one, not always topic 0
    hot = {int(np.argmax(power_law_rates(5000, 1.0, np.random.default_rng(s)))) for s in range(5)}
    assert len(hot) > 1


def test_alpha_sets_the_instance_rates():
    inst = correlated_instance(50, correlation="high", alpha=1.0, seed=2)
    assert inst.topic_rates.max() / inst.topic_rates.min() == pytest.approx(5000.0)


def test_owner_subscriptions():
    inst = Instance.from_lists([[1, 2], [2], []], n_topics=3)
    own = with_owner_subscriptions(inst)
    assert [own.topics_of(i).tolist() for i in range(3)] == [[0, 1, 2], [1, 2], [2]]
    with pytest.raises(ParameterError, match="one topic per user"):
        with_owner_subscriptions(Instance.from_lists([[0]], n_topics=2))
