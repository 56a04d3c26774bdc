"""SpiderCast headline experiments and build timings, ours beside the paper's numbers.

Runs the acceptance settings of the SpiderCast paper (Chockler et al., DEBS'07):

* ``fig12``  — (3,0)-coverage, RSS, 100 topics, 10 subscriptions, 1K-10K nodes; the
  similarity(10,0), random(10) and RingPT baselines on the same workloads (Figures 12-14);
* ``zipf2``  — Zipf(2), 10 of 100 topics: (3,0), (3,1) and the adaptive setting (Figure 6),
  over several seeds;
* ``diameter`` — maximum topic diameter for the Uniform, RSS, Zipf(1) and NYSE workloads
  (section 3.4), inside the topic subgraphs and through the overlay;
* ``partial`` — 5% interest views at 4K and 8K nodes (section 3.7, Figure 10);
* ``scale``  — build time of a (3,0) RSS overlay from 1K to ``--max-nodes``;
* ``paired`` — the (3,0) RSS build at ``--paired-sizes``, each in a fresh process, this tree
  beside the source tree given by ``--baseline`` (e.g. a checkout of an earlier commit),
  alternating, with CPU and wall ratios, peak memory and an overlay digest (edges, control
  messages by kind, events) that must agree;
* ``partial-scale`` — the (3,0) RSS build with ``--fraction`` interest views at
  ``--partial-scale-sizes`` (time, peak memory, partitioned topics); ``--view implicit``
  keeps no views (a hash decides membership), so 5% views of 1,000,000 nodes fit.

Usage::

    python benchmarks/bench_spidercast.py                 # everything, default sizes
    python benchmarks/bench_spidercast.py --only fig12 --sizes 1000,2000
    python benchmarks/bench_spidercast.py --only zipf2 --zipf-seeds 1,2,3
    python benchmarks/bench_spidercast.py --only fig12 --ties uniform   # the other tie rule
    python benchmarks/bench_spidercast.py --only scale --max-nodes 100000 --json out.json
    python benchmarks/bench_spidercast.py --only paired --paired-sizes 10000,100000 \
        --baseline ../before/src                      # before/after in one run

Timings are wall-clock seconds of ``StaticProtocol.build`` (workload generation and metrics
excluded), after a warm-up build that loads the numba kernels.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hedgerow.metrics import overlay_summary
from hedgerow.protocols import get_protocol
from hedgerow.workloads import make_instance

PAPER_FIG12 = {
    "spidercast": [10.81, 10.11, 9.53, 9.24, 9.08, 8.95],
    "similarity(10,0)": [10.08, 10.07, 10.08, 10.09, 10.08, 10.08],
    "random(10)": [10.82, 10.54, 10.34, 10.12, 10.08, 10.11],
}
PAPER_SIZES = [1000, 2000, 4000, 6000, 8000, 10000]
PAPER_ZIPF2_PARTITIONED = {1000: 0, 2000: 0, 4000: 0, 6000: 15, 8000: 14, 10000: 14}
#: section 3.4: maximum topic diameter per popularity distribution (1K-10K nodes)
PAPER_DIAMETER = {"uniform": 6, "rss": 6, "zipf1": 7, "nyse": 8}
VARIANTS = {
    "spidercast": ("spidercast", {"kg": 3, "kr": 0}),
    "similarity(10,0)": ("similarity", {"similar": 10, "random": 0}),
    "random(10)": ("random", {"links": 10}),
    "ringpt": ("ringpt", {}),
}


#: ``--ties``: the tie rule given to every SpiderCast build (the tables use sequential)
TIES: str | None = "sequential"


def run_one(protocol: str, params: dict, inst, seed: int, *, diameter: bool = True) -> dict:
    if TIES is not None and protocol == "spidercast":
        params = {**params, "ties": TIES}
    proto = get_protocol(protocol, **params)
    t0 = time.perf_counter()
    ov = proto.build(inst, seed=seed)
    seconds = time.perf_counter() - t0
    row = overlay_summary(ov, inst, diameter=diameter)
    row.update(
        build_seconds=seconds,
        control_messages=proto.stats_.get("control_messages", 0),
        quiescent=proto.stats_.get("quiescent", True),
        kr_final_mean=proto.stats_.get("kr_final_mean", 0.0),
    )
    return row


def fig12(sizes: list[int], seed: int) -> list[dict]:
    rows = []
    for n in sizes:
        inst = make_instance(nodes=n, topics=100, subs=10, popularity="rss", seed=seed)
        for label, (protocol, params) in VARIANTS.items():
            r = run_one(protocol, params, inst, seed)
            paper = PAPER_FIG12.get(label)
            r.update(experiment="fig12", label=label, nodes=n)
            if paper and n in PAPER_SIZES:
                r["paper_avg_degree"] = paper[PAPER_SIZES.index(n)]
            rows.append(r)
            print(
                f"fig12 n={n:6d} {label:17s} deg={r['avg_degree']:6.2f}"
                f" paper={r.get('paper_avg_degree', float('nan')):6.2f}"
                f" max={r['max_degree']:3d} part={r['partitioned_topics']:3d}"
                f" comps={r['topic_components']:6d} diam={r['max_topic_diameter']:3d}"
                f" overlay_diam={r['max_topic_overlay_diameter']:3d}"
                f" t={r['build_seconds']:6.1f}s",
                flush=True,
            )
    return rows


def zipf2(sizes: list[int], seeds: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        for seed in seeds:
            inst = make_instance(nodes=n, topics=100, subs=10, popularity="zipf2", seed=seed)
            for label, params in (
                ("(3,0)", {"kg": 3, "kr": 0}),
                ("(3,1)", {"kg": 3, "kr": 1}),
                ("adaptive", {"kg": 3, "kr": 0, "adaptive": True}),
            ):
                r = run_one("spidercast", params, inst, seed, diameter=False)
                r.update(experiment="zipf2", label=label, nodes=n, seed=seed)
                if label == "(3,0)" and n in PAPER_ZIPF2_PARTITIONED:
                    r["paper_partitioned_topics"] = PAPER_ZIPF2_PARTITIONED[n]
                rows.append(r)
                print(
                    f"zipf2 n={n:6d} seed={seed} {label:9s} deg={r['avg_degree']:6.2f}"
                    f" max={r['max_degree']:3d} part={r['partitioned_topics']:3d}"
                    f" paper_part={r.get('paper_partitioned_topics', '-')}"
                    f" kr_mean={r['kr_final_mean']:.3f} t={r['build_seconds']:6.1f}s",
                    flush=True,
                )
    return rows


def diameter(sizes: list[int], seed: int) -> list[dict]:
    rows = []
    for dist, paper in PAPER_DIAMETER.items():
        for n in sizes:
            inst = make_instance(nodes=n, topics=100, subs=10, popularity=dist, seed=seed)
            r = run_one("spidercast", {"kg": 3, "kr": 0}, inst, seed)
            r.update(experiment="diameter", label=dist, nodes=n, paper_max_diameter=paper)
            rows.append(r)
            print(
                f"diameter {dist:8s} n={n:6d} deg={r['avg_degree']:6.2f}"
                f" part={r['partitioned_topics']}"
                f" inside={r['max_topic_diameter']:3d} overlay={r['max_topic_overlay_diameter']:3d}"
                f" paper={paper}",
                flush=True,
            )
    return rows


def partial(sizes: list[int], seed: int, fraction: float) -> list[dict]:
    rows = []
    for n in sizes:
        inst = make_instance(nodes=n, topics=100, subs=10, popularity="rss", seed=seed)
        full = run_one("spidercast", {"kg": 3, "kr": 0}, inst, seed, diameter=False)
        part = run_one(
            "spidercast", {"kg": 3, "kr": 0, "membership": fraction}, inst, seed, diameter=False
        )
        ratio = part["avg_degree"] / full["avg_degree"]
        for label, r in (("full", full), (f"{fraction:.0%}", part)):
            r.update(experiment="partial", label=label, nodes=n)
            rows.append(r)
        print(
            f"partial n={n:6d} full deg={full['avg_degree']:6.2f}"
            f" {fraction:.0%} deg={part['avg_degree']:6.2f} ratio={ratio:.3f}"
            f" part_topics={part['partitioned_topics']} t={part['build_seconds']:6.1f}s",
            flush=True,
        )
    return rows


def scale(max_nodes: int, seed: int) -> list[dict]:
    rows = []
    n = 1000
    sizes = []
    while n <= max_nodes:
        sizes.append(n)
        n = n * 2 if n < 10000 else n + 10000 if n < 20000 else n * 2
    for n in sorted(set(sizes + [s for s in (10000,) if s <= max_nodes])):
        inst = make_instance(nodes=n, topics=100, subs=10, popularity="rss", seed=seed)
        r = run_one("spidercast", {"kg": 3, "kr": 0}, inst, seed, diameter=n <= 20000)
        r.update(experiment="scale", label="spidercast", nodes=n)
        rows.append(r)
        print(
            f"scale n={n:7d} build={r['build_seconds']:7.1f}s deg={r['avg_degree']:6.2f}"
            f" part={r['partitioned_topics']} msgs={r['control_messages']}",
            flush=True,
        )
    return rows


def overlay_digest(ov, stats: dict) -> str:
    """Edges (sorted), control messages by kind and events: equal digests, equal builds."""
    e = np.asarray(ov.edges(), dtype=np.int64)
    if len(e):
        e = e[np.lexsort((e[:, 1], e[:, 0]))]
    h = hashlib.sha256(e.tobytes())
    h.update(json.dumps([stats["control_messages"], stats["events"], stats["messages"]],
                        sort_keys=True).encode())
    return h.hexdigest()[:16]


def child_build(n: int, seed: int, membership: float, view: str = "stored") -> dict:
    """One timed (3,0) RSS build after a warm-up, as a fresh process runs it."""
    warm = make_instance(nodes=200, topics=20, subs=4, seed=0)
    get_protocol("spidercast", kg=3, kr=0, ties="sequential").build(warm, seed=0)
    inst = make_instance(nodes=n, topics=100, subs=10, popularity="rss", seed=seed)
    params = {"kg": 3, "kr": 0, "ties": "sequential", "membership": membership}
    if membership < 1.0:
        params["view"] = view
    proto = get_protocol("spidercast", **params)
    c0, t0 = time.process_time(), time.perf_counter()
    ov = proto.build(inst, seed=seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    from hedgerow.metrics import partitioned_topics

    return {
        "nodes": n,
        "membership": membership,
        "view": view,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "digest": overlay_digest(ov, proto.stats_),
        "control_messages": proto.stats_["control_messages"],
        "events": proto.stats_["events"],
        "partitioned_topics": int(partitioned_topics(ov, inst)),
        "load": os.getloadavg()[0],
    }


def _spawn(src: str, n: int, seed: int, membership: float = 1.0, view: str = "stored") -> dict:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, __file__, "--child-build", str(n), str(seed), str(membership), view],
        env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def paired(sizes: list[int], seed: int, baseline: str, reps: int) -> list[dict]:
    """This tree and ``baseline`` alternately, each build in a fresh process."""
    ours = str(Path(__file__).resolve().parents[1] / "src")
    rows = []
    for n in sizes:
        for rep in range(reps):
            new = _spawn(ours, n, seed)
            old = _spawn(baseline, n, seed)
            row = {
                "experiment": "paired", "nodes": n, "rep": rep,
                "new": new, "baseline": old,
                "cpu_ratio": old["cpu_s"] / new["cpu_s"],
                "wall_ratio": old["wall_s"] / new["wall_s"],
                "same_overlay": new["digest"] == old["digest"],
            }
            rows.append(row)
            print(
                f"paired n={n:7d} new cpu={new['cpu_s']:7.1f}s wall={new['wall_s']:7.1f}s"
                f" peak={new['peak_mib']:6.0f}MiB | baseline cpu={old['cpu_s']:7.1f}s"
                f" wall={old['wall_s']:7.1f}s peak={old['peak_mib']:6.0f}MiB |"
                f" cpu x{row['cpu_ratio']:.2f} wall x{row['wall_ratio']:.2f}"
                f" digest {new['digest']} {'same' if row['same_overlay'] else 'DIFFERENT'}"
                f" load {new['load']:.1f}/{old['load']:.1f}",
                flush=True,
            )
    return rows


def partial_scale(sizes: list[int], seed: int, fraction: float,
                  view: str = "stored") -> list[dict]:
    ours = str(Path(__file__).resolve().parents[1] / "src")
    rows = []
    for n in sizes:
        try:
            r = _spawn(ours, n, seed, fraction, view)
        except subprocess.CalledProcessError as err:  # e.g. refused: the views cannot fit
            reason = (err.stderr.strip().splitlines() or ["?"])[-1]
            rows.append({"experiment": "partial-scale", "nodes": n, "refused": reason})
            print(f"partial-scale n={n:8d} views={fraction:.0%} not run: {reason}", flush=True)
            continue
        r.update(experiment="partial-scale")
        rows.append(r)
        print(
            f"partial-scale n={n:8d} views={fraction:.0%} ({view}) cpu={r['cpu_s']:.1f}s"
            f" wall={r['wall_s']:.1f}s peak={r['peak_mib']:.0f}MiB"
            f" partitioned_topics={r['partitioned_topics']} load={r['load']:.1f}",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child-build":
        print(json.dumps(child_build(int(argv[1]), int(argv[2]), float(argv[3]), *argv[4:5])),
              flush=True)
        return 0
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--only",
        choices=["fig12", "zipf2", "diameter", "partial", "scale", "paired", "partial-scale"],
        action="append",
    )
    ap.add_argument("--paired-sizes", default="10000,100000")
    ap.add_argument("--baseline", metavar="SRC", help="the source tree to pair with (paired)")
    ap.add_argument("--reps", type=int, default=1, help="pairs per size (paired)")
    ap.add_argument("--partial-scale-sizes", default="100000,1000000")
    ap.add_argument("--sizes", default="1000,2000,4000,6000,8000,10000")
    ap.add_argument("--zipf-sizes", default="1000,2000,4000,6000,8000,10000")
    ap.add_argument("--zipf-seeds", default="1,2,3")
    ap.add_argument("--diameter-sizes", default="1000,10000")
    ap.add_argument("--partial-sizes", default="4000,8000")
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--view", choices=["stored", "implicit"], default="stored",
                    help="how partial-scale keeps the partial views (SpiderCast's view)")
    ap.add_argument("--max-nodes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--ties",
        choices=["sequential", "uniform"],
        default="sequential",
        help="SpiderCast's tie rule (default: sequential, the rule of the tables)",
    )
    ap.add_argument("--json", metavar="FILE", help="also write all rows as JSON")
    args = ap.parse_args(argv)
    global TIES
    TIES = args.ties
    todo = args.only or ["fig12", "zipf2", "diameter", "partial", "scale"]
    if set(todo) <= {"paired", "partial-scale"}:  # every build in its own process
        todo = [*todo, "no-warm-up"]
    ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    if "no-warm-up" not in todo:
        warm = make_instance(nodes=200, topics=20, subs=4, seed=0)
        run_one("spidercast", {"kg": 3, "kr": 0}, warm, 0)  # warm-up
    rows: list[dict] = []
    if "fig12" in todo:
        rows += fig12(ints(args.sizes), args.seed)
    if "zipf2" in todo:
        rows += zipf2(ints(args.zipf_sizes), ints(args.zipf_seeds))
    if "diameter" in todo:
        rows += diameter(ints(args.diameter_sizes), args.seed)
    if "partial" in todo:
        rows += partial(ints(args.partial_sizes), args.seed, args.fraction)
    if "scale" in todo:
        rows += scale(args.max_nodes, args.seed)
    if "paired" in todo:
        if not args.baseline:
            ap.error("--only paired needs --baseline SRC")
        rows += paired(ints(args.paired_sizes), args.seed, args.baseline, args.reps)
    if "partial-scale" in todo:
        rows += partial_scale(ints(args.partial_scale_sizes), args.seed, args.fraction,
                              args.view)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
