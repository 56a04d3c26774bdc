"""Reduced-size reproductions of the paper's direction (sections V-B and V-D)."""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.dissemination import MessageBatch, disseminate, edge_delays
from hedgerow.latency import processing_delays, unit_square
from hedgerow.metrics import delivery_stats
from hedgerow.model import RngStreams, interest_matrix
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.protocols.topiary import Topiary
from hedgerow.scenarios.attackers import eclipse_attack, topic_attack
from hedgerow.workloads.interest import interest_instance
from hedgerow.workloads.traffic import draw_messages


@pytest.fixture(scope="module")
def sparse_net():
    """250 nodes, 40 topics at 10% interest: a random d=4 overlay misses many messages."""
    streams = RngStreams(5)
    inst = interest_instance(250, 40, 0.1, streams.stream("workload"))
    lat = unit_square(250, streams.stream("latency"))
    return inst, lat, processing_delays(250)


def test_receive_rate_rises_delay_falls_and_beats_random(sparse_net):
    inst, lat, proc = sparse_net
    interest = interest_matrix(inst.masks, inst.n_topics)
    rates, delays, scores = [], [], []
    proto = Topiary(d=4, epochs=20, messages=400)
    for rep in proto.iterate(inst, lat, proc, RngStreams(1)):
        r, d = delivery_stats(rep.arrival, rep.publisher, rep.topic, interest)
        rates.append(r)
        delays.append(d)
        scores.append(float(np.nanmean(rep.scores)))
    assert rates[0] < 0.8  # the random start misses many messages
    assert rates[-1] >= 0.95 and min(rates[5:]) >= 0.95
    assert delays[-1] < 0.8 * delays[0]
    assert scores[-1] < 0.5 * scores[0]  # the mean kept-subset score falls (lower is better)
    # an independent random overlay with the same degree, same network and message model
    ov = RandomGraph(d=4).build(inst, seed=11)
    a = ov.undirected_csr()
    pub, top = draw_messages(inst, 400, np.random.default_rng(2))
    dl = disseminate(
        a.indptr,
        a.indices,
        edge_delays(a.indptr, a.indices, lat),
        proc,
        inst.masks,
        MessageBatch.create(pub, top, 1),
    )
    r_rand, d_rand = delivery_stats(dl.arrival, pub, top, interest)
    assert delays[-1] < 0.8 * d_rand
    assert rates[-1] > r_rand


def test_topic_attackers_are_dropped(sparse_net):
    """V-D1 at reduced size: 125 of 250 nodes never forward the victim topic (cf. 500 of 1000)."""
    _, lat, proc = sparse_net
    streams = RngStreams(8)
    base = interest_instance(250, 20, 0.2, streams.stream("workload"))
    atk = topic_attack(base, 125, streams.stream("attackers"))
    interest = interest_matrix(atk.instance.masks, atk.instance.n_topics)
    victim = []
    proto = Topiary(d=4, epochs=25, messages=400)
    for rep in proto.iterate(
        atk.instance,
        lat,
        proc,
        RngStreams(2),
        publishers=atk.publishers,
        silent=atk.silent,
        silent_topic=atk.victim_topic,
    ):
        vic = rep.topic == atk.victim_topic
        r, _ = delivery_stats(
            rep.arrival[vic], rep.publisher[vic], rep.topic[vic], interest, receivers=atk.honest
        )
        victim.append(r)
        if rep.epoch == 0:
            first_out = rep.out
    assert victim[0] < 0.5  # at random, attackers cut most honest victim subscribers off
    assert np.mean(victim[-5:]) >= 0.95
    # honest victim subscribers hold fewer attacker out-links than at the random start
    vs = np.zeros(250, dtype=bool)
    vs[atk.publishers.subscribers(atk.victim_topic)] = True

    def attacker_share(out):
        o = out[vs]
        return float((~atk.honest[o[o >= 0]]).mean())

    assert attacker_share(proto.out_) < attacker_share(first_out)


def test_eclipse_attackers_do_not_isolate_honest_nodes(sparse_net):
    """V-D2 at reduced size: 75 of 250 nodes are clique attackers (d = 6 as in V-A)."""
    _, lat, proc = sparse_net
    streams = RngStreams(9)
    base = interest_instance(250, 20, 0.3, streams.stream("workload"))
    atk = eclipse_attack(base, 75, streams.stream("attackers"))
    proto = Topiary(d=6, epochs=12, messages=300)
    last = None
    for rep in proto.iterate(
        atk.instance, lat, proc, RngStreams(3), update=atk.update, fixed_edges=atk.fixed_edges
    ):
        last = rep.out
    assert last is not None
    assert (last[~atk.honest] < 0).all()  # attackers hold only their clique
    hon = last[atk.honest]
    honest_nbr = ((hon >= 0) & atk.honest[np.maximum(hon, 0)]).any(axis=1)
    assert honest_nbr.mean() >= 0.99
