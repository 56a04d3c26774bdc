"""Time GossipSub's engine at scale (issue 29's scale target).

10,000 nodes, 10 topics, one message per second per topic of 100 KB, 10
simulated minutes (6,000 messages) after a warm-up, on the contended network:
every node keeps about ``--peers`` connections (it dials half; and dials more
subscribers of a topic it has fewer than ``D`` = 8 of), subscribes to
``--subs`` uniform topics, and sits in a bandwidth class of the ``eth-blocks``
world (80 % home nodes at 25/50 Mbit/s, 20 % data-centre nodes at 1 Gbit/s),
on uniform random points of the unit square (latency ``200 ms x`` distance).
Publishers are uniform subscribers of the topic; messages are published at
``warm-up + k s`` (one per topic per second, topics offset by 100 ms).

Reported: wall and CPU time of the run (engine construction apart, after one
small warm-up run that loads the compiled kernel) and the load average,
simulated node-seconds per wall-clock (and per CPU) second, messages (data
copies and control messages) sent per second, receive rate, delay
percentiles, duplicates per delivery, control messages per node per
heartbeat by kind, the peak resident memory, and the most messages held at once.
Target: <= 2 min.

The engine keeps a message's per-node arrival row only while the message can
still matter (``keep_arrivals=False``: a slot per message in flight or in a
message cache, folded into sums and a delay histogram when released), so
memory does not grow with the run's length; ``--keep-arrivals`` keeps every
row for the whole run (the same run, the exact percentiles, O(messages x
nodes) memory).

Usage::

    python benchmarks/bench_gossipsub.py [--nodes 10000] [--minutes 10] \
        [--variant v1.2]
    python benchmarks/bench_gossipsub.py --nodes 1000 --minutes 1   # a quick look
    python benchmarks/bench_gossipsub.py --nodes 100000 --minutes 10 --heartbeat-phase random
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time

import numba
import numpy as np

from hedgerow.dissemination.contended import Network
from hedgerow.protocols.gossipsub import GossipSubEngine, Publications, random_connections
from hedgerow.protocols.gossipsub.params import preset, score_preset
from hedgerow.protocols.gossipsub.protocol import EngineScore, GossipSub


def build(args: argparse.Namespace) -> tuple[GossipSubEngine, np.ndarray, float]:
    rng = np.random.default_rng(args.seed)
    n, T = args.nodes, args.topics
    subs = np.zeros((n, T), dtype=bool)
    for v in range(n):
        subs[v, rng.choice(T, size=args.subs, replace=False)] = True
    conn = random_connections(n, args.peers, np.random.default_rng(args.seed + 1), subs,
                              topic_peers=8)
    xy = rng.random((n, 2))
    row = conn.row_of
    delay = 200.0 * np.linalg.norm(xy[row] - xy[conn.indices], axis=1)
    net = Network.from_classes(n, {"home": (0.8, 25.0, 50.0), "dc": (0.2, 1000.0, 1000.0)},
                               np.random.default_rng(args.seed + 2))
    warm = args.warmup_s * 1000.0
    seconds = int(args.minutes * 60)
    t = np.repeat(np.arange(seconds) * 1000.0, T) + np.tile(np.arange(T) * 100.0, seconds)
    topic = np.tile(np.arange(T), seconds)
    pub_rng = np.random.default_rng(args.seed + 3)
    members = [np.flatnonzero(subs[:, k]) for k in range(T)]
    publisher = np.array([members[k][pub_rng.integers(len(members[k]))] for k in topic])
    pubs = Publications.create(publisher, topic, warm + t, args.size)
    score_fn = None
    if args.preset:
        # the preset's declared values, checked and turned into engine settings by the
        # protocol itself (scoring with the preset's score parameters when it scores)
        declared = GossipSub().get_params()
        chosen = {k: v for k, v in preset(args.preset).items() if k in declared}
        proto = GossipSub(**{**chosen, "warmup_ms": warm, "heartbeat_phase": args.heartbeat_phase})
        values = proto.checked()
        params = proto._settings(values)
        if params["scoring"]:
            sp, th = score_preset("ethereum" if args.preset == "ethereum" else params["variant"],
                                  T)
            params["gossip_threshold"], params["publish_threshold"] = th.gossip, th.publish
            params["opportunistic_graft_threshold"] = th.opportunistic_graft
            params["accept_px_threshold"] = th.accept_px
            score_fn = EngineScore(sp, native=not args.score_in_python)
    else:
        params = {"variant": args.variant, "d": 8, "d_lo": 6, "d_hi": 12, "d_lazy": 6,
                  "d_score": 4, "d_out": 2, "warmup_ms": warm,
                  "idontwant_threshold": 1000.0 if args.variant == "v1.2" else None,
                  "heartbeat_phase": args.heartbeat_phase}
    eng = GossipSubEngine(subs, conn, delay, np.zeros(n), net, pubs, params,
                          np.random.default_rng(args.seed + 4), score_fn=score_fn,
                          keep_arrivals=args.keep_arrivals,
                          parallel_scores=args.parallel_scores)
    return eng, subs, warm + seconds * 1000.0 + args.drain_s * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--subs", type=int, default=2, help="topics per node")
    ap.add_argument("--peers", type=int, default=None,
                    help="connections per node (default 50, or the preset's)")
    ap.add_argument("--size", type=float, default=100_000.0, help="payload bytes")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--warmup-s", type=float, default=10.0)
    ap.add_argument("--drain-s", type=float, default=10.0)
    ap.add_argument("--variant", default="v1.2", choices=["v1.0", "v1.1", "v1.2"])
    ap.add_argument("--preset", default=None, choices=["v1.0", "v1.1", "v1.2", "ethereum"],
                    help="run a preset's values (D, heartbeat, caches, scoring, ...) instead of "
                    "--variant with D 8")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heartbeat-phase", default="sync", choices=["sync", "random"])
    ap.add_argument("--progress-s", type=float, default=0.0,
                    help="print wall, CPU and memory every this many simulated seconds "
                         "(stderr; each piece starts the heartbeats' order of the nodes "
                         "afresh, so the run is another draw of the same model)")
    ap.add_argument("--score-in-python", action="store_true",
                    help="with scoring: the reference path (the kernel stops before every "
                         "heartbeat and EngineScore scores every slot in numpy) instead of the "
                         "kernel's own scores; the same run, for a before/after ratio")
    ap.add_argument("--parallel-scores", action="store_true",
                    help="with the scores in the kernel: their pass over the connections on "
                         "numba's threads (the same scores bit for bit)")
    ap.add_argument("--keep-arrivals", action="store_true",
                    help="keep every message's arrival row for the whole run")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.peers is None:
        args.peers = preset(args.preset)["connections"] if args.preset else 50

    small = argparse.Namespace(**{**vars(args), "nodes": 200, "minutes": 0.1})
    eng, _, end = build(small)  # loads (or compiles) the kernel
    eng.run_until(end)

    t0 = time.perf_counter()
    eng, _, end = build(args)
    t_build = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    step = args.progress_s * 1000.0
    at = step if step > 0 else end
    while at < end:  # in pieces: the kernel resumes where it stopped
        eng.run_until(at)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"simulated {at / 1000:.0f} s: wall {time.perf_counter() - t0:.1f} s, CPU "
              f"{time.process_time() - c0:.1f} s, peak RSS {rss:.2f} GiB, messages held "
              f"peak {eng.slots_peak}, load {os.getloadavg()[0]:.1f}", file=sys.stderr,
              flush=True)
        at += step
    eng.run_until(end)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    pubs = eng.publications
    m = eng.delivery_summary()
    sent = eng.control_sent()
    hb = max(eng.heartbeats_after_warmup, 1)
    delivered = int(m["reached"] - len(pubs))
    events = int(eng.copies.sum() + sum(int(v.sum()) for v in sent.values()))
    sim_s = end / 1000.0
    out = {
        "case": f"gossipsub {args.preset or args.variant}"
                f"{' preset' if args.preset else ''}: {args.nodes} nodes, {args.topics} topics, "
                f"{args.peers} connections, "
                f"heartbeats {args.heartbeat_phase}, "
                f"{'scores in Python, ' if args.score_in_python else ''}"
                f"{args.subs} per node, 1 msg/s/topic of {args.size:.0f} B, "
                f"{args.minutes} simulated min",
        "build_s": round(t_build, 2),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "simulated_s": sim_s,
        "node_seconds_per_s": round(args.nodes * sim_s / wall, 1),
        "node_seconds_per_cpu_s": round(args.nodes * sim_s / cpu, 1),
        "messages_sent_per_s": round(events / wall, 1),
        "receive_rate": m["receive_rate"],
        "delay_p50_ms": m["delay_p50_ms"],
        "delay_p99_ms": m["delay_p99_ms"],
        "duplicates_per_delivery": float(eng.duplicates.sum() / max(delivered, 1)),
        "control_per_node_heartbeat": {k: float(v.sum() / (args.nodes * hb))
                                       for k, v in sent.items()},
        "mesh_degree_mean": float(np.nanmean(eng.mean_mesh_degree())),
        "arrival_rows": eng.slot_rows,
        "memory_gib": {k: round(v / 2**30, 3) for k, v in eng.memory_bytes().items()},
        "messages_held_peak": eng.slots_peak,
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "threads": numba.get_num_threads(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
