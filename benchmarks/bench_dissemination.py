"""Time the dissemination engine (``hedgerow.dissemination.disseminate``).

(a) One message flooded over a 100,000-node, 500,000-link random graph against
    ``scipy.sparse.csgraph.dijkstra`` from the same source on the same weighted
    graph (acceptance: ratio <= 2).  Flooding's first-copy arrival times are
    shortest paths with edge weight ``edge_delay[e] + proc_delay[sender]``
    (the publisher sends without processing delay), so scipy gets exactly that
    weighted graph and the two answers are checked to agree.
(b) A batch of 1,000 messages (TTL policy, TTL 1) over a 1,000-node overlay
    of degree 12 (acceptance: <= 0.2 s).
(c) The ``"mesh"`` policy: GossipSub's overlay of the ``unit-square`` world
    (1,000 nodes, d=6, 100 topics at 20 %) and that world's 1,000 messages of
    epoch 0 (about 100 topics), through ``disseminate_chunks`` as the epoch
    loop runs it, against the TTL rule on the same overlay and messages
    (acceptance: mesh well under a second, <= 0.5 s); the per-entry labels
    (``entry_topics``) are timed apart, they are built once per run.

Each timing is the median of ``--repeats`` runs after one warm-up call (which
also compiles or loads the numba cache).

Usage::

    python benchmarks/bench_dissemination.py [--repeats 5] [--seed 1] [--json out.json]
    python benchmarks/bench_dissemination.py --only mesh   # one case: flood, batch or mesh
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numba
import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from hedgerow.dissemination import (
    MessageBatch,
    disseminate,
    disseminate_chunks,
    edge_delays,
    entry_topics,
)
from hedgerow.latency import processing_delays, unit_square
from hedgerow.metrics import delivery_stats
from hedgerow.model import Instance, RngStreams, interest_matrix
from hedgerow.scenarios import make_protocol, make_world


def random_undirected_csr(n: int, m: int, rng: np.random.Generator) -> sp.csr_array:
    """``m`` distinct random links on ``n`` nodes, symmetric CSR, no self-loops."""
    u = rng.integers(0, n, int(m * 1.1) + 16)
    v = rng.integers(0, n, len(u))
    keep = u != v
    a, b = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    key = np.unique(a.astype(np.int64) * n + b)[:m]
    if len(key) < m:
        raise RuntimeError("not enough distinct links drawn")
    a, b = key // n, key % n
    g = sp.coo_array((np.ones(2 * m, dtype=np.int8), (np.r_[a, b], np.r_[b, a])), shape=(n, n))
    g = sp.csr_array(g)
    g.sort_indices()
    return g


def random_regular_ish(n: int, degree: int, rng: np.random.Generator) -> sp.csr_array:
    """Each node picks ``degree // 2`` random out-links; the closure has mean degree ~``degree``."""
    u = np.repeat(np.arange(n), degree // 2)
    v = (u + rng.integers(1, n, len(u))) % n
    g = sp.coo_array((np.ones(2 * len(u), dtype=np.int8), (np.r_[u, v], np.r_[v, u])), shape=(n, n))
    g = sp.csr_array(g)
    g.sum_duplicates()
    g.sort_indices()
    return g


def timed(fn, repeats: int) -> tuple[float, list[float], float]:
    """Median wall time, all wall times, and median CPU time (all threads) of ``fn``."""
    fn()  # warm-up (compile / load cache)
    runs, cpu = [], []
    for _ in range(repeats):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(runs), runs, statistics.median(cpu)


def bench_flood(repeats: int, seed: int, n: int = 100_000, m: int = 500_000) -> dict:
    streams = RngStreams(seed)
    g = random_undirected_csr(n, m, streams.stream("graph"))
    lat = unit_square(n, streams.stream("latency"))
    ed = edge_delays(g.indptr, g.indices, lat)
    pd = processing_delays(n, streams.stream("proc"), std_ms=5.0)
    masks = np.zeros((n, 1), dtype=np.uint64)
    src = int(streams.stream("source").integers(n))
    batch = MessageBatch.create([src], [0], 0)
    rows = np.repeat(np.arange(n), np.diff(g.indptr))
    w = ed + np.where(rows == src, 0.0, pd[rows])
    # scipy treats explicit zeros as missing links; a 1e-300 floor keeps them (no effect on sums)
    weighted = sp.csr_array((np.maximum(w, 1e-300), g.indices, g.indptr), shape=(n, n))

    def ours():
        return disseminate(g.indptr, g.indices, ed, pd, masks, batch, policy="flood")

    def theirs():
        return dijkstra(weighted, directed=True, indices=src)

    t_ours, runs_ours, cpu_ours = timed(ours, repeats)
    t_scipy, runs_scipy, cpu_scipy = timed(theirs, repeats)
    d = ours()
    ref = theirs()
    max_err = float(np.max(np.abs(np.where(np.isfinite(ref), d.arrival[0] - ref, 0.0))))
    same_reach = bool(np.array_equal(np.isfinite(ref), np.isfinite(d.arrival[0])))
    return {
        "case": "flood 1 msg, 100K nodes, 500K links",
        "nodes": n,
        "links": m,
        "csr_entries": int(g.nnz),
        "ours_s": t_ours,
        "scipy_dijkstra_s": t_scipy,
        "ratio": t_ours / t_scipy,
        "ours_cpu_s": cpu_ours,
        "scipy_cpu_s": cpu_scipy,
        "cpu_ratio": cpu_ours / cpu_scipy,
        "acceptance": "ratio <= 2",
        "pass": t_ours / t_scipy <= 2.0,
        "max_abs_diff_ms": max_err,
        "same_reach": same_reach,
        "runs_ours_s": runs_ours,
        "runs_scipy_s": runs_scipy,
    }


def bench_batch(repeats: int, seed: int, n: int = 1000, degree: int = 12, m: int = 1000) -> dict:
    streams = RngStreams(seed)
    g = random_regular_ish(n, degree, streams.stream("graph"))
    lat = unit_square(n, streams.stream("latency"))
    ed = edge_delays(g.indptr, g.indices, lat)
    pd = processing_delays(n)
    n_topics = 100
    r = streams.stream("subs")
    # Topiary's interest-rate workload: each node subscribes to each topic with probability 0.2
    inst = Instance.from_lists(
        [np.flatnonzero(r.random(n_topics) < 0.2) for _ in range(n)], n_topics
    )
    masks = inst.masks
    topics = r.integers(0, n_topics, m)
    # the publisher of a message is a uniform subscriber of its topic (section II-A)
    pubs = np.array([r.choice(inst.subscribers(t)) for t in topics])
    batch = MessageBatch.create(pubs, topics, 1)
    out = {}
    for record in (False, True):

        def run(record=record):
            return disseminate(
                g.indptr, g.indices, ed, pd, masks, batch, policy="ttl", record_edges=record
            )

        out[record] = timed(run, repeats)
    d = disseminate(g.indptr, g.indices, ed, pd, masks, batch, policy="ttl")
    # Topiary's V-A measures: per-message receive rate averaged over messages, delay over pairs
    rate, delay = delivery_stats(
        d.arrival, d.publisher, d.topic, interest_matrix(masks, inst.n_topics)
    )
    return {
        "case": "batch 1000 msgs, 1000 nodes, degree 12, TTL 1",
        "nodes": n,
        "mean_degree": float(g.nnz / n),
        "messages": m,
        "batch_s": out[False][0],
        "batch_record_edges_s": out[True][0],
        "batch_cpu_s": out[False][2],
        "acceptance": "batch_s <= 0.2",
        "pass": out[False][0] <= 0.2,
        "receive_rate": rate,
        "avg_delay_ms": delay,
        "runs_s": out[False][1],
        "runs_record_edges_s": out[True][1],
    }


def bench_mesh(repeats: int, seed: int) -> dict:
    world = make_world("unit-square", seed=seed, messages=1000)
    proto = make_protocol("gossipsub-split", world)
    ov = proto.build(world.instance, seed=seed)
    a = ov.undirected_csr()
    indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    ed = edge_delays(indptr, indices, world.latency)
    pub, top = next(world.traffic())
    inst = world.instance

    def labels():
        return entry_topics(indptr, indices, proto.link_topics_)

    lab = labels()

    def run(policy: str) -> list:
        return list(
            disseminate_chunks(
                indptr, indices, ed, world.proc, inst.masks, pub, top, world.scenario.ttl,
                record_edges=False, policy=policy, labels=lab if policy == "mesh" else None,
            )
        )

    t_lab, _, _ = timed(labels, repeats)
    t_mesh, runs_mesh, cpu_mesh = timed(lambda: run("mesh"), repeats)
    t_ttl, runs_ttl, cpu_ttl = timed(lambda: run("ttl"), repeats)
    interest = interest_matrix(inst.masks, inst.n_topics)
    rates = {}
    for policy in ("mesh", "ttl"):
        arrival = np.empty((len(pub), inst.n_nodes))
        for sel, dl, _ in run(policy):
            arrival[sel] = dl.arrival
        rates[policy] = delivery_stats(arrival, pub, top, interest)[0]
    return {
        "case": "gossipsub-split unit-square, 1000 msgs, mesh vs ttl",
        "nodes": inst.n_nodes,
        "csr_entries": len(indices),
        "label_rows": len(proto.link_topics_),
        "messages": len(pub),
        "topics_in_batch": len(np.unique(top)),
        "labels_s": t_lab,
        "mesh_s": t_mesh,
        "ttl_s": t_ttl,
        "mesh_cpu_s": cpu_mesh,
        "ttl_cpu_s": cpu_ttl,
        "acceptance": "mesh_s <= 0.5",
        "pass": t_mesh <= 0.5,
        "receive_rate_mesh": rates["mesh"],
        "receive_rate_ttl": rates["ttl"],
        "runs_mesh_s": runs_mesh,
        "runs_ttl_s": runs_ttl,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per case (median reported)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--only", choices=("flood", "batch", "mesh"), action="append",
                    help="run only these cases (repeatable)")
    args = ap.parse_args(argv)
    only = set(args.only or ("flood", "batch", "mesh"))
    env = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_avg_1min_at_start": os.getloadavg()[0],
        "machine": platform.machine(),
    }
    results: dict = {"environment": env}
    print(f"environment: {env}")
    print(f"{'case':48s} {'ours (s)':>10s} {'reference':>18s} {'ratio / limit':>16s} {'pass':>5s}")
    if "flood" in only:
        flood = results["flood"] = bench_flood(args.repeats, args.seed)
        scipy_col = f"scipy {flood['scipy_dijkstra_s']:.4f}"
        print(
            f"{flood['case']:48s} {flood['ours_s']:10.4f} {scipy_col:>18s} "
            f"{flood['ratio']:9.2f} / 2.0 {flood['pass']!s:>5s}"
        )
        print(
            f"  CPU time (all threads): ours {flood['ours_cpu_s']:.4f} s vs scipy "
            f"{flood['scipy_cpu_s']:.4f} s (ratio {flood['cpu_ratio']:.2f}); arrival == scipy "
            f"dijkstra within {flood['max_abs_diff_ms']:.2e} ms, same reach: "
            f"{flood['same_reach']}"
        )
    if "batch" in only:
        batch = results["batch"] = bench_batch(args.repeats, args.seed)
        print(
            f"{batch['case']:48s} {batch['batch_s']:10.4f} {'-':>18s} "
            f"{batch['batch_s']:9.3f} / 0.2 {batch['pass']!s:>5s}"
        )
        print(f"{'  same batch, record_edges=True':48s} {batch['batch_record_edges_s']:10.4f}")
        print(
            f"  CPU time {batch['batch_cpu_s']:.4f} s; receive rate {batch['receive_rate']:.3f}, "
            f"avg delay {batch['avg_delay_ms']:.1f} ms"
        )
    if "mesh" in only:
        mesh = results["mesh"] = bench_mesh(args.repeats, args.seed)
        ttl_col = f"ttl {mesh['ttl_s']:.4f}"
        print(
            f"{mesh['case']:48s} {mesh['mesh_s']:10.4f} {ttl_col:>18s} "
            f"{mesh['mesh_s']:9.3f} / 0.5 {mesh['pass']!s:>5s}"
        )
        print(
            f"  {mesh['messages']} messages over {mesh['topics_in_batch']} topics, "
            f"{mesh['csr_entries']} CSR entries, {mesh['label_rows']} label rows; labels "
            f"{mesh['labels_s']:.4f} s; CPU mesh {mesh['mesh_cpu_s']:.4f} s, ttl "
            f"{mesh['ttl_cpu_s']:.4f} s; receive rate mesh {mesh['receive_rate_mesh']:.3f}, "
            f"ttl {mesh['receive_rate_ttl']:.3f}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
