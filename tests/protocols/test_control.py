"""Control traffic of the protocols that maintain their overlay (``protocols/control.py`` and
the ``control_traffic`` of Vitis, RVR and SpiderCast): rounds, exchanges, what each sends."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.errors import ParameterError
from hedgerow.protocols import get_protocol
from hedgerow.protocols.control import ControlRounds, exchange, gossip_rounds, one_way
from hedgerow.workloads import make_instance


def rounds(until: float = 0.0, period: float = 1000.0, seed: int = 0) -> ControlRounds:
    return ControlRounds(period, until, np.random.default_rng(seed))


@pytest.mark.parametrize("until", [0.0, 999.0, 5000.0, 12345.6])
def test_rounds_every_period_while_the_epoch_publishes(until):
    node, at = rounds(until).starts(np.ones(50, bool))
    for v in range(50):
        mine = at[node == v]
        assert len(mine) >= 1 and mine[0] < 1000.0
        np.testing.assert_allclose(np.diff(mine), 1000.0)
        assert mine[-1] < max(until, mine[0] + 1e-9) or len(mine) == 1
        # no round left out: the next one would start at or after the last publication
        assert mine[-1] + 1000.0 >= until


def test_offline_nodes_have_no_rounds_and_do_not_move_the_others_phases():
    online = np.ones(20, bool)
    online[::3] = False
    node, at = rounds(4000.0, seed=3).starts(online)
    every_node, every_at = rounds(4000.0, seed=3).starts(np.ones(20, bool))
    assert not set(node.tolist()) & set(np.flatnonzero(~online).tolist())
    keep = online[every_node]
    np.testing.assert_array_equal(at, every_at[keep])


def test_a_bad_period_names_the_setting():
    with pytest.raises(ParameterError, match="control_period_ms") as err:
        ControlRounds(0.0, 10.0, np.random.default_rng(0))
    assert err.value.key == "control_period_ms"


def test_exchange_answers_every_request_back_to_its_sender():
    cb = exchange(np.array([3, 1, 4]), np.array([1, 5, 9]), np.array([0.0, 1.0, 2.0]),
                  np.array([7, 8, 9]), 2)
    req, ans = np.flatnonzero(cb.answers < 0), np.flatnonzero(cb.answers >= 0)
    assert len(req) == len(ans) == 3
    np.testing.assert_array_equal(cb.sender[ans], cb.receiver[cb.answers[ans]])
    np.testing.assert_array_equal(cb.receiver[ans], cb.sender[cb.answers[ans]])
    assert cb.entries.tolist() == [7, 8, 9, 2, 2, 2] and (cb.at[ans] == 0).all()
    assert one_way(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 2.0]), 2).answers.tolist() \
        == [-1, -1]


def _vitis(nodes: int = 60):
    inst = make_instance(nodes=nodes, topics=12, subs=3, seed=2)
    proto = get_protocol("vitis", rt=6, cycles=8, cache=5)
    proto.build(inst, seed=2)
    return proto, inst


def test_vitis_sends_sampling_tman_and_profile_exchanges_per_round():
    proto, inst = _vitis()
    run = proto.run_
    r = rounds(2500.0, seed=1)
    cb = proto.control_traffic(r)
    node, _ = rounds(2500.0, seed=1).starts(run.alive)
    links = ((run.view >= 0) & (run.view != np.arange(inst.n_nodes)[:, None])).sum(axis=1)
    # per round of p: 2 peer-sampling + 2 T-Man messages + 2 per routing-table entry
    assert len(cb) == 4 * len(node) + 2 * int(links[node].sum())
    assert (cb.sender != cb.receiver).all()
    # the profile messages carry one proposal per subscribed topic of their sender
    prof = cb.entries == inst.n_subs[cb.sender]
    assert prof.sum() >= 2 * int(links[node].sum())
    # T-Man requests carry the view, the sample and the descriptor (reading A1)
    tman = (run.view >= 0).sum(axis=1) + (run.sampling.cache >= 0).sum(axis=1) + 1
    assert (cb.entries == tman[cb.sender]).sum() >= 2 * len(node)
    # the same stream gives the same traffic; the built state is not changed
    view = run.view.copy()
    again = proto.control_traffic(rounds(2500.0, seed=1))
    np.testing.assert_array_equal(again.receiver, cb.receiver)
    np.testing.assert_array_equal(run.view, view)


def test_rvr_sends_sampling_and_tman_exchanges_only():
    inst = make_instance(nodes=40, topics=8, subs=2, seed=1)
    proto = get_protocol("rvr", rt=5, cycles=6, cache=4)
    proto.build(inst, seed=1)
    cb = proto.control_traffic(rounds(3000.0))
    node, _ = rounds(3000.0).starts(np.ones(40, bool))
    assert len(cb) == 4 * len(node)
    assert int((cb.answers >= 0).sum()) == 2 * len(node)


def test_spidercast_heartbeats_every_task_neighbour_every_round():
    inst = make_instance(nodes=80, topics=10, subs=3, popularity="rss", seed=4)
    proto = get_protocol("spidercast")
    overlay = proto.build(inst, seed=4)
    cb = proto.control_traffic(rounds(1500.0, seed=2))
    node, _ = rounds(1500.0, seed=2).starts(np.ones(80, bool))
    per_node = np.bincount(proto.task_links_[:, 0], minlength=80)
    assert len(cb) == int(per_node[node].sum())
    assert set(cb.entries.tolist()) == {2} and (cb.answers == -1).all()
    # every heartbeat goes along a link of the overlay
    und = overlay.undirected_csr()
    linked = {(int(u), int(v)) for u in range(80)
              for v in und.indices[und.indptr[u]:und.indptr[u + 1]]}
    assert {(int(u), int(v)) for u, v in zip(cb.sender, cb.receiver, strict=True)} <= linked


@pytest.mark.parametrize("name", ["vitis", "rvr", "spidercast"])
def test_control_traffic_before_a_build_is_one_line(name):
    with pytest.raises(ParameterError, match="build first") as err:
        get_protocol(name).control_traffic(rounds())
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["perigee", "goldfish", "topiary", "random-graph", "omen"])
def test_protocols_that_send_nothing_beyond_data_say_so(name):
    assert get_protocol(name).control_traffic(rounds()) is None


def test_gossip_rounds_skip_offline_nodes_and_entries():
    proto, inst = _vitis(40)
    run = proto.run_
    alive = np.ones(40, bool)
    alive[:10] = False
    cb = gossip_rounds(rounds(0.0), alive, run.sampling, run.tman, run.view,
                       profile_entries=inst.n_subs)
    assert not np.isin(cb.sender, np.arange(10)).any()  # offline nodes neither ask nor answer
    assert np.isin(cb.receiver, np.arange(10)).any()  # requests to them still leave


@pytest.mark.parametrize(("sampler", "per_round"), [("newscast", 4), ("cyclon", 4), ("uniform", 2)])
def test_the_peer_sampling_exchange_follows_the_sampler(sampler, per_round):
    inst = make_instance(nodes=40, topics=8, subs=2, seed=1)
    proto = get_protocol("rvr", rt=5, cycles=6, cache=6, sampler=sampler)
    proto.build(inst, seed=1)
    cb = proto.control_traffic(rounds(0.0))
    assert len(cb) == per_round * 40
    ps = proto.gossip_[0]
    if sampler == "cyclon":
        assert ps.shuffle in set(cb.entries.tolist())
