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

Building later windows at 10,000 nodes costs about 1,000 CPU s (two completion epochs), so
``--save-windows F`` keeps the sampled windows (one ``.npz``: values, observed and † masks, peer
ids) and ``--windows F`` samples them again without a run, e.g. to compare two engines on the
same windows::

    python benchmarks/goldfish_scale.py --sample 24 --nodes 10000 --completion mm-fast \
        --after 6 --save-windows late10k.npz
    python benchmarks/goldfish_scale.py --windows late10k.npz --completion mm-fast --tolerance
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hedgerow.protocols.goldfish import Goldfish
from hedgerow.protocols.goldfish.complete import (
    FAST_MM,
    build_problem,
    completed,
    solve,
)
from hedgerow.protocols.goldfish.matrix import WindowMatrix, classify
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


def save_windows(path: str | Path, windows: Sequence[WindowMatrix]) -> None:
    """Write window matrices to one ``.npz`` (``values_i``, ``observed_i``, ``dagger_i``,
    ``peers_i`` for window ``i``)."""
    arrays: dict[str, np.ndarray] = {}
    for i, wm in enumerate(windows):
        arrays[f"values_{i}"] = wm.values
        arrays[f"observed_{i}"] = wm.observed
        arrays[f"dagger_{i}"] = wm.dagger
        arrays[f"peers_{i}"] = wm.peers
    np.savez_compressed(path, count=np.array(len(windows)), **arrays)


def load_windows(path: str | Path) -> list[WindowMatrix]:
    """The windows :func:`save_windows` wrote, in their order."""
    with np.load(path) as z:
        return [WindowMatrix(z[f"values_{i}"], z[f"observed_{i}"], z[f"dagger_{i}"],
                             z[f"peers_{i}"]) for i in range(int(z["count"]))]


def sample(windows: Sequence[WindowMatrix], completion: str, n_exploit: int,
           tolerance: bool = False, warm: WindowMatrix | None = None) -> dict[str, object]:
    """Time the completion pipeline step by step on each window (CPU s, summed), after one
    untimed completion of ``warm`` (default: the first window) that loads or compiles the
    kernels.

    Returns ``steps`` (step name to CPU s over the windows), ``rows`` (each window's rows),
    ``mm_steps`` (each solve's steps), and with ``tolerance`` ``above`` (each solve's loss
    above a converged one's, relative) and ``agree`` (windows whose best exploit subset is the
    converged solve's)."""
    fast = FAST_MM if completion == "mm-fast" else {}
    wm = windows[0] if warm is None else warm
    cl = classify(wm, k=2)
    rank_subsets(completed(wm, cl, solve(build_problem(wm, cl), **fast)), wm.dagger,
                 wm.peers, n_exploit)
    steps = {"classify": 0.0, "terms": 0.0, "solve": 0.0, "rank": 0.0}
    rows, above, agree, mm_steps = [], [], 0, []
    for wm in windows:
        t1 = time.process_time()
        cl = classify(wm, k=2)
        t2 = time.process_time()
        prob = build_problem(wm, cl)
        t3 = time.process_time()
        sol = solve(prob, **fast)
        t4 = time.process_time()
        mm_steps.append(sol.steps)
        ranked = rank_subsets(completed(wm, cl, sol), wm.dagger, wm.peers, n_exploit)
        t5 = time.process_time()
        if tolerance:
            ref = solve(prob, tol=1e-10, floor=1e-10, max_steps=400)
            above.append(sol.loss / ref.loss - 1)
            top = rank_subsets(completed(wm, cl, ref), wm.dagger, wm.peers, n_exploit)
            agree += ranked[0][:1] == top[0][:1]
        for key, dt in zip(steps, (t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            steps[key] += dt
        rows.append(wm.values.shape[0])
    return {"steps": steps, "rows": rows, "above": above, "agree": agree, "mm_steps": mm_steps}


def print_sample(out: dict[str, object], extra: dict[str, float]) -> float:
    """Print a sample's per-completion CPU (ms) by step; returns the CPU s of a completion."""
    steps = dict(extra, **out["steps"])  # type: ignore[arg-type]
    k = max(len(out["rows"]), 1)  # type: ignore[arg-type]
    for key, tot in steps.items():
        print(f"  {key:9s} {1e3 * tot / k:9.1f} ms per completion")
    print(f"  {float(np.mean(out['mm_steps'])):.1f} solver steps a completion")  # type: ignore[arg-type]
    above = out["above"]
    if above:
        print(f"  loss above a converged solve: max {max(above):.2e}, mean "  # type: ignore[arg-type]
              f"{float(np.mean(above)):.2e}; its top exploit subset on {out['agree']} of {k}")
    return sum(steps.values()) / k


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
    ap.add_argument("--save-windows", metavar="F", help="with --sample: write the sampled "
                    "windows to F (.npz)")
    ap.add_argument("--windows", metavar="F", help="sample the windows saved in F instead of "
                    "running a world")
    args = ap.parse_args()
    size = {"nodes": args.nodes, "messages": args.messages}
    n_exploit = Goldfish().n_exploit
    if args.windows:
        windows = load_windows(args.windows)
        out = sample(windows, args.completion, n_exploit, args.tolerance)
        print(f"{args.windows}: {len(windows)} windows of {int(np.median(out['rows']))} rows")
        print_sample(out, {})
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
        # the first node's window warms the kernels (see sample); the next S are timed
        nodes = g.nodes_[: args.sample + 1].tolist()
        t0 = time.process_time()
        windows = [g.node_matrix(int(v)) for v in nodes]
        t_matrix = (time.process_time() - t0) * args.sample / len(nodes)
        if args.save_windows:
            save_windows(args.save_windows, windows[1:])
        out = sample(windows[1:], args.completion, n_exploit, args.tolerance, warm=windows[0])
        print(f"{args.scenario}: {n} adaptive nodes, windows of {int(np.median(out['rows']))} "
              "rows" + (f"; epoch without completion {per_epoch:.2f} s CPU" if not args.after
                        else f", after {args.after} epochs"))
        per_node = print_sample(out, {"matrix": t_matrix})
        print(f"  total     {1e3 * per_node:9.1f} ms per completion, "
              f"{per_node * n:.0f} s per completion epoch ({n} completions)")
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
