"""Vitis at the paper's setting S0 (IPDPS 2011 §IV-A): build, relay paths and one event per topic.

S0: 10,000 nodes, 5,000 topics, 50 subscriptions per node (random, low or high correlation as
§IV-A: 50 of 5,000 uniformly; 10 topics from each of 5 of 100 buckets; 25 from each of 2),
RT 15, k = 3, d = 5, uniform rates, 100 cycles.  Prints wall and CPU seconds per phase (one
T-Man cycle, Algorithm 5 round, relay paths, measurement; CPU seconds of every cycle) beside
the machine's load, the ring correctness curve (and the cycle at which 99% is reached),
gateways, clusters, relays, lookup hops, and the measures of one event per topic published by
a random subscriber and flooded by §III-C's rule (subscribers and relays forward; hit ratio,
node-based overhead, delay in hops).

Usage::

    python benchmarks/bench_vitis.py                                  # S0, random workload
    python benchmarks/bench_vitis.py --workload high --rt 35
    python benchmarks/bench_vitis.py --nodes 100000 --cycles 100      # the 100K target
    python benchmarks/bench_vitis.py --nodes 100000 --cycles 4 --no-measure --progress
    python benchmarks/bench_vitis.py -p sampler=uniform -p hop_limit=text --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

from hedgerow.dissemination import MessageBatch, disseminate
from hedgerow.dissemination.mesh import disseminate_mesh, entry_topics
from hedgerow.model import Instance, RngStreams
from hedgerow.protocols import get_protocol

PAPER = {"hit_ratio": 1.0}


def workload(kind: str, nodes: int, topics: int, subs: int, seed: int) -> Instance:
    """§IV-A's subscription patterns (100 buckets for the correlated ones)."""
    rng = RngStreams(seed).stream("workload")
    if kind == "random":  # 50 of 5,000 uniformly, in row blocks to bound memory
        # each block's first `subs` columns are copied out at once (int32): a slice would keep
        # the block's whole int64 argpartition alive (4 GiB at 100,000 nodes)
        chosen = np.concatenate([
            np.argpartition(rng.random((min(4096, nodes - lo), topics), dtype=np.float32),
                            subs - 1, axis=1)[:, :subs].astype(np.int32)
            for lo in range(0, nodes, 4096)])
    else:
        n_buckets = 100
        per_bucket = topics // n_buckets
        k = 2 if kind == "high" else 5
        take = min(subs // k, per_bucket)
        buckets = np.argpartition(rng.random((nodes, n_buckets)), k - 1, axis=1)[:, :k]
        inner = np.argpartition(rng.random((nodes, k, per_bucket)), take - 1, axis=2)[:, :, :take]
        chosen = (buckets[:, :, None] * per_bucket + inner).reshape(nodes, -1)
    chosen = np.sort(chosen, axis=1).astype(np.int32)
    return Instance(n_nodes=nodes, n_topics=topics,
                    sub_indptr=np.arange(0, nodes * chosen.shape[1] + 1, chosen.shape[1]),
                    sub_topics=chosen.ravel())


def measure(inst: Instance, proto, seed: int, chunk: int = 256) -> dict:
    """One event per topic from a random subscriber, flooded by the build's forwarding rule.

    ``relay_links="induced"``: §III-C's rule, the ``topic`` policy over ``forward_masks_``;
    ``"paths"``: the ``mesh`` policy over ``link_topics_`` (cluster links and lookup paths).
    """
    ov = proto.overlay_
    a = ov.undirected_csr()
    rng = RngStreams(seed).stream("events")
    sizes = inst.topic_sizes
    topics = np.flatnonzero(sizes > 0)
    ip, tn = inst.topic_indptr, inst.topic_nodes
    pub = tn[ip[topics] + (rng.random(topics.size) * sizes[topics]).astype(np.int64)]
    ed, pd = np.ones(a.nnz), np.zeros(inst.n_nodes)
    masks = inst.masks
    labels = (entry_topics(a.indptr, a.indices, proto.link_topics_)
              if proto.get_params()["relay_links"] == "paths" else None)
    want = got = recv = relay = 0
    hop_sum = 0.0
    for lo in range(0, topics.size, chunk):
        t, p = topics[lo:lo + chunk], pub[lo:lo + chunk]
        if labels is None:
            d = disseminate(a.indptr, a.indices, ed, pd, proto.forward_masks_,
                            MessageBatch.create(p, t), policy="topic")
        else:
            d = disseminate_mesh(a.indptr, a.indices, ed, pd, masks, MessageBatch.create(p, t),
                                 labels)
        interested = ((masks[:, t >> 6] >> (t & 63).astype(np.uint64)) & np.uint64(1)).T == 1
        reached = d.hops >= 0
        reached[np.arange(len(t)), p] = False
        interested[np.arange(len(t)), p] = False
        want += int(interested.sum())
        got += int((reached & interested).sum())
        recv += int(reached.sum())
        relay += int((reached & ~interested).sum())
        hop_sum += float(d.hops[reached & interested].sum())
    return {"hit_ratio": got / want, "overhead": relay / recv, "delay_hops": hop_sum / got,
            "events": int(topics.size)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--topics", type=int, default=5_000)
    ap.add_argument("--subs", type=int, default=50)
    ap.add_argument("--workload", choices=("random", "low", "high"), default="random")
    ap.add_argument("--rt", type=int, default=15)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-measure", action="store_true", help="skip the event measurement")
    ap.add_argument("-p", action="append", default=[], help="protocol parameter NAME=VALUE")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--progress", action="store_true", help="CPU seconds after every cycle")
    args = ap.parse_args()
    params = {"rt": args.rt, "cycles": args.cycles}
    for kv in args.p:
        k, _, v = kv.partition("=")
        params[k] = int(v) if v.lstrip("-").isdigit() else {"true": True, "false": False}.get(v, v)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    inst = workload(args.workload, args.nodes, args.topics, args.subs, args.seed)
    t_work = time.perf_counter() - t
    proto = get_protocol("vitis", **params)
    marks: list[float] = []

    def progress(done: int, total: int) -> None:  # CPU seconds at the end of every cycle
        marks.append(time.process_time())
        if args.progress:
            print(f"cycle {done}/{total}: {marks[-1] - c0:.1f} s CPU, load "
                  f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)

    c0, t0 = time.process_time(), time.perf_counter()
    proto.build(inst, seed=args.seed, progress=progress)
    c1, t1 = time.process_time(), time.perf_counter()
    per_cycle = np.diff([c0, *marks])
    res = {"setting": {**vars(args), "params": params}, "seconds_workload": t_work,
           "seconds_build": t1 - t0, "cpu_build": c1 - c0,
           "cpu_cycles": marks[-1] - c0, "cpu_per_cycle_mean": float(per_cycle.mean()),
           "cpu_per_cycle_every_10": per_cycle[9::10].tolist(),
           "cpu_relays_and_stats": c1 - marks[-1]}
    st = proto.stats_
    res.update({k: v for k, v in st.items() if not k.endswith("curve")})
    res["ring_curve_every_10"] = st["ring_curve"][9::10]
    if not args.no_measure:
        res.update(measure(inst, proto, args.seed))
        res["seconds_measure"] = time.perf_counter() - t1
    res["seconds_total"] = time.perf_counter() - t0
    res["cpu_total"] = time.process_time() - c0
    res["max_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    res["load_before"] = load0
    res["load_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1, default=float))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=float)


if __name__ == "__main__":
    main()
