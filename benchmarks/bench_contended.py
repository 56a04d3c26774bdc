"""Time the contended dissemination kernel (``hedgerow.dissemination.disseminate_contended``).

Cases (``--only``):

``10k``
    10,000 nodes, a degree-8 overlay (4 random out-links per node, undirected
    closure: mean degree ~8), unit-square latencies, 1 ms processing, every
    node subscribed to the one topic, ``flood``; 1,000 messages of 128 KB
    published by random nodes as a Poisson process (2 per second: a home
    uplink sends a flooded 128 KB message ~7 times, ~0.3 s, so it is ~60 %
    busy); a home / data-centre
    bandwidth mix (80 % at 25 Mbit/s up / 50 down, 20 % at 1 Gbit/s both
    ways).  Acceptance: <= 30 s.
``100k``
    The same world with 100,000 nodes and 100 messages.  Acceptance: <= 60 s
    and <= 4 GiB peak RSS (run it alone under ``/usr/bin/time -v``).
``unlimited``
    The uncontended path (unlimited bandwidth, size 0) of
    ``disseminate_contended`` against today's ``disseminate`` on the same
    1,000-node, 1,000-message TTL batch as ``bench_dissemination.py`` (b),
    paired and alternating (``--repeats`` pairs); acceptance: median ratio
    within 5 %.  The forced contended kernel on the same input is timed too.

With ``--control-size BYTES`` the ``10k`` and ``100k`` cases also send control
messages (``docs/network.md``, "Control messages"): every node, every
``--control-period`` ms (phases uniform) while the batch publishes, one
heartbeat of ``BYTES + 2 x 18`` bytes to each neighbour, sharing the uplinks
with the data; the same batch without them is timed first, so the case prints
the cost of the control messages and the delay they add.

Events: a copy is one heap event (two with download queues) and every node
that gets a message one more (its READY), a control message one; the rate
printed is ``(copies + first receptions + control messages) / seconds``.
Each case runs once after a warm-up call on a small input (numba compilation
or cache load).

Usage::

    python benchmarks/bench_contended.py [--only 10k|100k|unlimited] [--rate 10] [--json out.json]
        [--control-size 64 [--control-period 10000]]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time

import numpy as np

from hedgerow.dissemination import MessageBatch, disseminate, edge_delays
from hedgerow.dissemination.contended import Network, disseminate_contended, poisson_publication
from hedgerow.latency import processing_delays, unit_square
from hedgerow.model import Instance, RngStreams
from hedgerow.model.outlinks import closure_csr
from hedgerow.protocols.control import ControlRounds, one_way

# EIP-7870 attester (25 up / 50 down) and a 1 Gbit/s data-centre port, see docs/network.md
CLASSES = {"home": (0.8, 25.0, 50.0), "datacentre": (0.2, 1000.0, 1000.0)}
SIZE = 128 * 1024


def out_neighbours(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` uniform out-links per node, none to itself (repeats merge in the closure)."""
    x = rng.integers(0, n - 1, (n, k))
    return x + (x >= np.arange(n)[:, None])


def world(n: int, seed: int, out_links: int = 4):
    streams = RngStreams(seed)
    indptr, indices = closure_csr(out_neighbours(n, out_links, streams.stream("init")), n)
    ed = edge_delays(indptr, indices, unit_square(n, streams.stream("latency")))
    pd = processing_delays(n, mean_ms=1.0)
    masks = Instance.from_lists([[0]] * n, n_topics=1).masks
    return streams, indptr, indices, ed, pd, masks


def heartbeats(indptr, indices, ed, until: float, period: float, nbytes: float, rng):
    """One heartbeat to every neighbour per round of every node (2 entries of 18 bytes)."""
    n = len(indptr) - 1
    node, at = ControlRounds(period, until, rng).starts(np.ones(n, dtype=bool))
    deg = np.diff(indptr)[node]
    entry = np.repeat(indptr[node], deg) + (
        np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg))
    src = np.repeat(node, deg)
    return one_way(src, indices[entry], np.repeat(at, deg), 2).sized(nbytes, 18.0).with_delay(
        ed[entry])


def contended_case(n: int, m: int, seed: int, rate: float, control_size: float = 0.0,
                   control_period: float = 10_000.0) -> dict:
    streams, indptr, indices, ed, pd, masks = world(n, seed)
    rng = streams.stream("traffic")
    batch = MessageBatch.create(rng.integers(0, n, m), np.zeros(m, dtype=np.int64))
    published = poisson_publication(m, rate, rng)
    net = Network.from_classes(n, CLASSES, streams.stream("bandwidth"))
    control, extra = None, {}
    if control_size > 0:
        t = time.process_time()
        control = heartbeats(indptr, indices, ed, float(published.max()), control_period,
                             control_size, streams.stream("control"))
        extra["control_messages"] = len(control)
        extra["control_build_cpu_seconds"] = round(time.process_time() - t, 3)
        c = time.process_time()
        plain = disseminate_contended(indptr, indices, ed, pd, masks, batch, net, size=SIZE,
                                      publish_at=published, policy="flood")
        extra["cpu_seconds_without_control"] = round(time.process_time() - c, 3)
        ok = np.isfinite(plain.arrival) & (plain.arrival > 0)
        extra["delay_p90_ms_without_control"] = float(np.percentile(plain.arrival[ok], 90))
        del plain
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, c = time.perf_counter(), time.process_time()
    d = disseminate_contended(indptr, indices, ed, pd, masks, batch, net, size=SIZE,
                              publish_at=published, policy="flood", control=control)
    secs, cpu = time.perf_counter() - t, time.process_time() - c
    events = int(d.copies.sum() + np.isfinite(d.arrival).sum()) + extra.get(
        "control_messages", 0)
    delay = d.arrival[np.isfinite(d.arrival) & (d.arrival > 0)]
    if control is not None:
        extra["control_byte_share"] = float(
            d.control_sent_bytes.sum() / (d.control_sent_bytes.sum() + d.sent_bytes.sum()))
    return {**extra,
        "nodes": n, "messages": m, "nnz": len(indices), "size_bytes": SIZE,
        "rate_per_s": rate, "seconds": round(secs, 3), "cpu_seconds": round(cpu, 3),
        "events": events, "events_per_s": round(events / secs),
        "events_per_cpu_s": round(events / cpu), "copies": int(d.copies.sum()),
        "receive_rate": float(np.isfinite(d.arrival).mean()),
        "delay_p50_ms": float(np.percentile(delay, 50)),
        "delay_p90_ms": float(np.percentile(delay, 90)),
        "queue_share": float(d.queue_delay.sum() / d.arrival[np.isfinite(d.arrival)].sum()),
        "peak_rss_before_kernel_mib": round(rss_before),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def unlimited_case(seed: int, repeats: int) -> dict:
    n, m = 1000, 1000
    streams, _, _, _, pd, _ = world(n, seed)
    from hedgerow.workloads import interest_instance

    inst = interest_instance(n, 100, 0.2, streams.stream("workload"))
    indptr, indices = closure_csr(out_neighbours(n, 6, streams.stream("links")), n)
    ed = edge_delays(indptr, indices, unit_square(n, streams.stream("latency2")))
    rng = streams.stream("messages")
    batch = MessageBatch.create(rng.integers(0, n, m), rng.integers(0, 100, m), ttl=1)
    net = Network.uniform(n)
    args = (indptr, indices, ed, pd, inst.masks, batch)
    disseminate(*args)
    disseminate_contended(*args, net)
    ratios, today, ours = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        disseminate(*args)
        a = time.perf_counter() - t
        t = time.perf_counter()
        disseminate_contended(*args, net)
        b = time.perf_counter() - t
        today.append(a)
        ours.append(b)
        ratios.append(b / a)
    disseminate_contended(*args, net, force_contended=True)
    t = time.perf_counter()
    disseminate_contended(*args, net, force_contended=True)
    forced = time.perf_counter() - t
    return {
        "today_median_s": round(statistics.median(today), 5),
        "unlimited_median_s": round(statistics.median(ours), 5),
        "median_ratio": round(statistics.median(ratios), 4),
        "forced_contended_s": round(forced, 4),
        "pairs": repeats,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["10k", "100k", "unlimited"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=float, default=2.0, help="publications per second")
    ap.add_argument("--repeats", type=int, default=21, help="pairs for 'unlimited'")
    ap.add_argument("--json")
    ap.add_argument("--control-size", type=float, default=0.0,
                    help="bytes of a heartbeat header (0: no control messages)")
    ap.add_argument("--control-period", type=float, default=10_000.0,
                    help="ms between two heartbeat rounds of a node")
    args = ap.parse_args()
    contended_case(200, 5, args.seed, args.rate, args.control_size)  # compile / load the cache
    out = {
        "load": os.getloadavg(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    if args.only in (None, "10k"):
        out["10k"] = contended_case(10_000, 1000, args.seed, args.rate, args.control_size,
                                    args.control_period)
        print("10k x 1000:", out["10k"])
    if args.only in (None, "100k"):
        out["100k"] = contended_case(100_000, 100, args.seed, args.rate, args.control_size,
                                     args.control_period)
        print("100k x 100:", out["100k"])
    if args.only in (None, "unlimited"):
        out["unlimited"] = unlimited_case(args.seed, args.repeats)
        print("unlimited:", out["unlimited"])
    print("load average:", out["load"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
