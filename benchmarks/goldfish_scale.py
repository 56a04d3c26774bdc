"""Goldfish on a 1,000-node world: CPU per completion and per epoch, and the 50-epoch projection.

Two measurements on ``unit-square`` (1,000 nodes, 1,000 messages an epoch, every node adaptive):

* ``--sample S``: the first ``window`` epochs are run without completions, then the completion
  pipeline (window matrix, cell classes and K nearest rows, eq. 1's terms, the MM solve, the
  altruistic ranking) is timed on the windows of ``S`` nodes, step by step;
* ``--epochs E``: a whole run of ``E`` epochs (completions every ``interval`` epochs once the
  window is full, 1,000 of them per completion epoch), wall and CPU time per epoch.

Both print the projection to ``--project`` epochs (default 50): the measured CPU of the epochs
without completion plus that of the completion epochs.  The sample mode runs on the engine as it
was before the sparse factor too, which makes it the before/after measurement::

    python benchmarks/goldfish_scale.py --sample 20
    python benchmarks/goldfish_scale.py --epochs 3
    python benchmarks/goldfish_scale.py --epochs 50 --completion mm-fast

``--completion mm-fast`` times the completion the 1,000-node head-to-head runs (a looser MM
stop, the numba minimum-degree order, reused factors).  ``--after E`` samples the windows after
``E`` epochs with completions (dearer than the first one), ``--tolerance`` measures the loss of
each sampled solve above a converged one::

    python benchmarks/goldfish_scale.py --sample 20 --completion mm-fast --after 8 --tolerance
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hedgerow.protocols.goldfish import Goldfish
from hedgerow.protocols.goldfish.complete import (
    FAST_MM,
    build_problem,
    completed,
    solve,
)
from hedgerow.protocols.goldfish.matrix import classify
from hedgerow.protocols.goldfish.select import rank_subsets
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world


def completion_epochs(window: int, interval: int, epochs: int) -> int:
    """How many of ``epochs`` epochs run completions (the rule of ``Goldfish.mode``)."""
    last, runs = None, 0
    for e in range(window - 1, epochs):
        if last is None or e - last >= interval:
            last, runs = e, runs + 1
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="unit-square")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=0, help="time the completions of S nodes")
    ap.add_argument("--epochs", type=int, default=0, help="time a whole run of E epochs")
    ap.add_argument("--project", type=int, default=50, help="epochs of the projection")
    ap.add_argument("--nodes", type=int, default=None, help="a smaller world (default: the "
                    "scenario's)")
    ap.add_argument("--messages", type=int, default=None, help="messages per epoch (default: "
                    "the scenario's)")
    ap.add_argument("--completion", default="mm", choices=("mm", "mm-fast"),
                    help="Goldfish's completion (mm-fast: the head-to-head's)")
    ap.add_argument("--after", type=int, default=0, help="sample the windows after E epochs "
                    "run with completions (default: the first window, filled without)")
    ap.add_argument("--tolerance", action="store_true", help="also solve every sampled window "
                    "to convergence: the loss above it and the top exploit subset's agreement")
    args = ap.parse_args()
    size = {"nodes": args.nodes, "messages": args.messages}
    if args.sample:
        g = Goldfish(completion=args.completion)
        world = make_world(args.scenario, seed=args.seed, epochs=max(g.window, args.after),
                           **size)
        if not args.after:
            g.mode = lambda epoch: "acc"  # type: ignore[method-assign]  # fill the window only
        c0 = time.process_time()
        run_protocol(g, world)
        per_epoch = (time.process_time() - c0) / g.window
        if args.after:  # that time held completions: the rate of an epoch without is unknown
            per_epoch = float("nan")
        n = len(g.nodes_)
        # warm the kernels on one window (the ranking's too: compiled in the first timed window
        # otherwise, after a change to the numba cache)
        fast = FAST_MM if args.completion == "mm-fast" else {}
        wm = g.node_matrix(int(g.nodes_[0]))
        cl = classify(wm, k=2)
        rank_subsets(completed(wm, cl, solve(build_problem(wm, cl), **fast)), wm.dagger,
                     wm.peers, g.n_exploit)
        steps = {"matrix": 0.0, "classify": 0.0, "terms": 0.0, "solve": 0.0, "rank": 0.0}
        rows = []
        above, agree = [], 0
        for v in g.nodes_[1 : args.sample + 1].tolist():
            t0 = time.process_time()
            wm = g.node_matrix(v)
            t1 = time.process_time()
            cl = classify(wm, k=2)
            t2 = time.process_time()
            prob = build_problem(wm, cl)
            t3 = time.process_time()
            sol = solve(prob, **fast)
            t4 = time.process_time()
            ranked = rank_subsets(completed(wm, cl, sol), wm.dagger, wm.peers, g.n_exploit)
            t5 = time.process_time()
            if args.tolerance:
                ref = solve(prob, tol=1e-10, floor=1e-10, max_steps=400)
                above.append(sol.loss / ref.loss - 1)
                top = rank_subsets(completed(wm, cl, ref), wm.dagger, wm.peers, g.n_exploit)
                agree += ranked[0][:1] == top[0][:1]
            for key, dt in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
                steps[key] += dt
            rows.append(wm.values.shape[0])
        k = max(len(rows), 1)
        per_node = sum(steps.values()) / k
        print(f"{args.scenario}: {n} adaptive nodes, windows of {int(np.median(rows))} rows"
              + (f"; epoch without completion {per_epoch:.2f} s CPU" if not args.after else
                 f", after {args.after} epochs"))
        for key, tot in steps.items():
            print(f"  {key:9s} {1e3 * tot / k:9.1f} ms per completion")
        print(f"  total     {1e3 * per_node:9.1f} ms per completion, "
              f"{per_node * n:.0f} s per completion epoch ({n} completions)")
        if above:
            print(f"  loss above a converged solve: max {max(above):.2e}, mean "
                  f"{float(np.mean(above)):.2e}; its top exploit subset on {agree} of {k}")
    if args.epochs:
        g = Goldfish(completion=args.completion)
        world = make_world(args.scenario, seed=args.seed, epochs=args.epochs, **size)
        c0, w0 = time.process_time(), time.perf_counter()
        run_protocol(g, world)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        runs = completion_epochs(g.window, g.interval, args.epochs)
        print(f"{args.scenario} ({world.n_nodes} nodes): {args.epochs} epochs, {runs} with "
              f"completions "
              f"({g.completions_} completions): {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"{args.epochs / wall:.3f} epochs per wall second")
    if args.sample and not args.after:
        g = Goldfish()
        runs = completion_epochs(g.window, g.interval, args.project)
        total = runs * per_node * n + args.project * per_epoch
        print(f"projection, {args.project} epochs ({runs} with completions): {total:.0f} s CPU "
              f"= {runs} x {per_node * n:.0f} s + {args.project} x {per_epoch:.2f} s")


if __name__ == "__main__":
    main()
