"""The batched gossip cycle equals the per-node loop bit for bit (views, loads, draws, rows)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.engine import Simulator
from hedgerow.protocols import get_protocol
from hedgerow.protocols.omen import engine as omen_engine
from hedgerow.protocols.omen.checks import omen_violations
from hedgerow.protocols.omen.engine import OmenEngine
from hedgerow.protocols.omen.views import _bounded, _skip_doubles
from hedgerow.workloads import make_instance


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 3 << 30, (1 << 32) - 2])
def test_bounded_draws_are_numpys_integers(n):
    """The compiled peer draw reproduces ``Generator.integers(n)`` from raw words,
    including the rejection step (``n = 3 * 2**30`` rejects about 3 words in 4)."""
    a = np.random.default_rng(11)
    a.random(3)
    a.integers(5)  # leave half a 64-bit output buffered: the words must continue from it
    b = np.random.Generator(np.random.PCG64())
    b.bit_generator.state = a.bit_generator.state
    want = [int(a.integers(n)) for _ in range(200)]
    words = b.integers(0, 1 << 32, size=2000, dtype=np.uint32)
    got, ptr = [], 0
    for _ in range(200):
        x, ptr = _bounded(words, ptr, n)
        got.append(int(x))
    assert got == want
    if n == 1:
        assert ptr == 0  # numpy draws nothing for a one-value range
    c = np.random.Generator(np.random.PCG64())
    c.bit_generator.state = b.bit_generator.state
    # the words used, drawn again from the saved state, leave the generator where numpy's is
    b2 = np.random.default_rng(11)
    b2.random(3)
    b2.integers(5)
    if ptr:
        b2.integers(0, 1 << 32, size=ptr, dtype=np.uint32)
    assert b2.bit_generator.state == a.bit_generator.state


@pytest.fixture(scope="module")
def inst():
    return make_instance(nodes=140, topics=22, subs="2:6", popularity="rss", seed=5)


def _pair(inst, seed, **params):
    proto = get_protocol("omen", **{"coverage": 3, "warmup_cycles": 12, **params})
    values = proto._validate(inst)
    out = []
    for batched in (True, False):
        eng = OmenEngine(inst, proto.streams(seed), Simulator(), **{
            **proto._engine_kwargs(values), "batched_gossip": batched})
        on = np.ones(inst.n_nodes, dtype=bool)
        on[int(0.8 * inst.n_nodes):] = False
        eng.start(on)
        out.append(eng)
    return out


def _same_state(a, b):
    assert a.cycles == b.cycles and a.messages == b.messages
    assert (a.backup_load == b.backup_load).all()
    assert a.rng_gossip.bit_generator.state == b.rng_gossip.bit_generator.state
    assert a.rng_backups.bit_generator.state == b.rng_backups.bit_generator.state
    for v in range(a.n):
        assert list(a.entries[v]) == list(b.entries[v]), v
        for u, e in a.entries[v].items():
            f = b.entries[v][u]
            assert e.backups.dtype == f.backups.dtype and e.backups.tolist() == f.backups.tolist()
            assert e.neighbours.tolist() == f.neighbours.tolist()
            assert (e.ready, e.dirty) == (f.ready, f.dirty), (v, u)


@pytest.mark.parametrize(
    ("seed", "params", "share"),
    [
        (1, {}, 20),
        (1, {}, 10**9),
        (2, {"resilience": 2, "ready": "cover"}, 10**9),
        (3, {"backups": "greedy", "rnd_view": 0}, 20),
        (4, {"pd_pick": "random", "coverage": 0, "resilience": 3}, 10**9),
    ],
)
def test_batched_cycle_is_bit_identical_to_the_per_node_loop(inst, seed, params, share,
                                                             monkeypatch):
    """Same seed: the warm-up leaves identical entries (sets in the order chosen), backup
    loads, message counts and generator states; so do the steady-state cycles of 30 joins
    and leaves (batched when 1 / ``share`` of the nodes are active; ``10**9``: always),
    whose event rows are identical too, with no invariant violated."""
    monkeypatch.setattr(omen_engine, "_BATCH_SHARE", share)
    fast, ref = _pair(inst, seed, **params)
    _same_state(fast, ref)
    assert sum(len(e) for e in fast.entries) > 0
    assert (fast.backup_load.sum() > 0) == (params.get("coverage", 3) > 0)
    rng_f, rng_r = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(30):
        for eng, rng in ((fast, rng_f), (ref, rng_r)):
            if rng.random() < 0.5 and eng.online.sum() > eng.n // 3:
                eng.leave(int(rng.choice(np.flatnonzero(eng.online))))
            else:
                eng.join(int(rng.choice(np.flatnonzero(~eng.online))))
            eng.settle()
        assert omen_violations(fast) == []
        ra, rb = fast.last_event, ref.last_event
        ra.pop("omen_repair_seconds"), rb.pop("omen_repair_seconds")
        assert ra == rb
        assert (fast.deg == ref.deg).all() and (fast.adj == ref.adj).all()
    _same_state(fast, ref)
    assert fast.cycles > 12  # the steady state gossiped too


@pytest.mark.parametrize("half", [False, True])
def test_skipping_doubles_lands_where_drawing_them_does(half):
    """``advance`` when no 32-bit half is buffered, a redraw otherwise: both equal ``random(k)``."""
    a = np.random.default_rng(7)
    if half:
        a.integers(0, 1 << 32, size=1, dtype=np.uint32)  # leaves a buffered half word
    st = a.bit_generator.state
    a.random(4)  # the block the pass drew
    _skip_doubles(a, st, 1234)
    b = np.random.default_rng(7)
    if half:
        b.integers(0, 1 << 32, size=1, dtype=np.uint32)
    b.random(1234)
    assert a.bit_generator.state == b.bit_generator.state
    assert a.random() == b.random() and a.integers(1 << 20) == b.integers(1 << 20)
