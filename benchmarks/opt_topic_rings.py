"""OPT's per-topic overlays, converged: node degrees (Vitis Fig. 11) and delays of two floods.

Builds, without gossip, the state ``OPT(overlay="ring", unbounded=True)`` converges to: for every
topic, its subscribers linked in id order into a ring (successor and predecessor); a link shared
by several topics' rings is one link.  Prints the share of nodes above total degree 15 and 200
and the maximum (the paper: more than two thirds, 0.3%, 708), the same degree counted per topic
without merging shared links, and the delay of one event per topic from its owner, in hops:

* ``any link``: the event floods every link between two subscribers of its topic (OPT's
  ``topic`` forwarding, what ``hedgerow run opt`` measures);
* ``own ring``: the event travels only along its topic's own ring (exact: ring distances);
  ``hedgerow run opt -p forward=own`` measures the same reading on the gossiped overlay.

Usage::

    python benchmarks/opt_topic_rings.py --social DIR     # DIR: hedgerow ingest follower-graph
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from hedgerow.protocols.vitis import ring
from hedgerow.workloads.correlated import with_owner_subscriptions
from hedgerow.workloads.social import load_instance


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--social", required=True, help="hedgerow ingest follower-graph output")
    ap.add_argument("--seed", type=int, default=1, help="salt of the node ids")
    args = ap.parse_args()
    t0 = time.perf_counter()
    inst = with_owner_subscriptions(load_instance(args.social))
    n = inst.n_nodes
    ids = ring.node_ids(n, args.seed)
    subs = inst.n_subs
    print(f"{n} users, subscriptions mean {subs.mean():.1f} / median {np.median(subs):.0f} / "
          f"max {subs.max()}")
    edges = []
    sizes = []
    for t in range(inst.n_topics):
        m = inst.subscribers(t)
        if len(m) < 2:
            continue
        sizes.append(len(m))
        o = m[np.argsort(ids[m])]
        edges.append(np.stack([o, np.roll(o, -1)], 1))
    e = np.concatenate(edges)
    a = sp.coo_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.int8).tocsr()
    deg = np.diff(a.indptr)
    per_topic = np.bincount(e.ravel(), minlength=n)
    print(f"total degree (shared links once): mean {deg.mean():.1f}, max {deg.max()}, "
          f"above 15 {(deg > 15).mean():.3f}, above 200 {(deg > 200).mean():.4f}")
    print(f"degree counted per topic (no merging): mean {per_topic.mean():.1f}, max "
          f"{per_topic.max()}, above 15 {(per_topic > 15).mean():.3f}, above 200 "
          f"{(per_topic > 200).mean():.4f}")
    tot = cnt = 0.0
    worst = []
    for t in range(inst.n_topics):
        m = inst.subscribers(t)
        if len(m) < 2:
            continue
        src = int(np.flatnonzero(m == t)[0]) if (m == t).any() else 0
        d = shortest_path(a[m][:, m], unweighted=True, indices=src, directed=False)
        d = d[np.isfinite(d) & (d > 0)]
        tot += d.sum()
        cnt += len(d)
        worst.append(d.max() if len(d) else 0.0)
    own_sum = own_cnt = 0.0
    own_worst = []
    for k in sizes:
        d = np.minimum(np.arange(1, k), k - np.arange(1, k))
        own_sum += d.sum()
        own_cnt += k - 1
        own_worst.append(d.max())
    print(f"delay, any link between subscribers: mean {tot / cnt:.2f} hops, per-event max "
          f"{np.mean(worst):.2f}")
    print(f"delay, own ring only: mean {own_sum / own_cnt:.1f} hops, per-event max "
          f"{np.mean(own_worst):.1f}")
    print(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
