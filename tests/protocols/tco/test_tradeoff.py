"""LowODA's ρ trade-off (OMen Table 1 / Lemma 1): as ρ grows the average degree does not fall,
the maximum degree D falls from ρ = 1 to 2 to 4 and stays within a degree of MinMaxODA's (means
over seeds); ρ ≥ W behaves as MinMaxODA.

The paper states only asymptotic bounds, so "D never rises as ρ grows" is not pinned: beyond
ρ ≈ 3 a greedy's D moves in steps of about one degree either way (docs/tco.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hedgerow.protocols import get_protocol
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.workloads.powerlaw import powerlaw_instance

RHOS = (1.0, 1.5, 2.0, 4.0)
#: the MinMaxODA end; between ρ = 4 and it the maximum degree is within noise (one degree) on
#: instances this small, so only the strong end of the trade-off is pinned there
FAR = 1000.0


@pytest.fixture(scope="module")
def instances():
    return [powerlaw_instance(nodes=300, topics=60, popularity="zipf2", lo=4, hi=30, seed=s)
            for s in (1, 2, 3)]


def _degrees(inst, rule, rho, seed):
    e = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule=rule, rho=rho,
                    rng=np.random.default_rng(seed))
    d = np.bincount(e.ravel(), minlength=inst.n_nodes)
    return float(d.mean()), int(d.max())


def test_average_up_maximum_down_as_rho_grows(instances):
    avg = {r: np.mean([_degrees(i, "lowoda", r, k)[0] for k, i in enumerate(instances)])
           for r in RHOS}
    mx = {r: np.mean([_degrees(i, "lowoda", r, k)[1] for k, i in enumerate(instances)])
          for r in RHOS}
    for a, b in itertools.pairwise(RHOS):
        assert avg[b] >= avg[a], (a, b, avg)
    # the trend the reproduction reports: D(1) > D(2) > D(4), each within a degree of MinMaxODA
    assert mx[1.0] > mx[2.0] > mx[4.0], mx
    mm = np.mean([_degrees(i, "minmaxoda", 1.0, k)[1] for k, i in enumerate(instances)])
    assert min(mx.values()) >= mm - 1.0, (mx, mm)
    far_avg = np.mean([_degrees(i, "lowoda", FAR, k)[0] for k, i in enumerate(instances)])
    far_max = np.mean([_degrees(i, "lowoda", FAR, k)[1] for k, i in enumerate(instances)])
    # the two ends are far apart: GM-like low average, MinMaxODA-like low maximum
    assert far_avg >= avg[4.0] and far_max <= mx[4.0] + 1.0
    assert mx[1.0] >= 1.4 * far_max and far_avg > avg[1.0]


def test_large_rho_is_minmaxoda(instances):
    inst = instances[0]
    a = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule="lowoda", rho=1e6,
                    rng=np.random.default_rng(4))
    b = tco_augment(inst.masks, None, np.zeros((0, 2), np.int64), rule="minmaxoda",
                    rng=np.random.default_rng(4))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name", ["gm", "minmaxoda", "lowoda"])
def test_builders_give_a_tco(name, instances):
    from hedgerow.metrics import topic_components

    ov = get_protocol(name).build(instances[1], seed=3)
    assert int((topic_components(ov, instances[1]) > 1).sum()) == 0
    assert ov.n_edges > 0
