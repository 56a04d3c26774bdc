"""Goldfish completion + selection on window matrices dumped from a run: time and loss per solver.

Runs Goldfish on ``goldfish-random`` (32 adaptive nodes by default) for a few epochs, keeps the
window matrices of the completions of the last epoch, and times on each of them

* classification (cell classes, distances, K nearest rows) + building eq. 1's terms,
* the ``mm`` solve (converged) and the paper's ``adam`` solve (lr 1e-2, <= 2000 steps, the
  authors' early stop, fresh per completion),
* with ``--before``, side by side, ``mm`` as it was before the envelope factorisation: a dense
  Cholesky of the whole ``p x p`` system and the ``1e-6`` relative stopping step, and a long
  converged solve (tolerance 1e-14, dense) that both ``mm`` losses are measured against,
* the altruistic selection on the completed matrix,

and prints the median CPU milliseconds per matrix, the loss of each solver relative to the
converged one, and whether the exploit subsets agree.  ``--dump DIR`` also writes every matrix
(``values``, ``observed``, ``dagger``, ``peers``) as ``.npz`` for other solvers.  Usage::

    python benchmarks/goldfish_completion.py --matrices 32 --before
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from hedgerow.protocols.goldfish import Goldfish
from hedgerow.protocols.goldfish.complete import build_problem, completed, solve
from hedgerow.protocols.goldfish.matrix import classify
from hedgerow.protocols.goldfish.select import rank_subsets
from hedgerow.scenarios.epochs import run_protocol
from hedgerow.scenarios.world import make_world


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrices", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=9)
    ap.add_argument("--dump", default=None, help="write the matrices as .npz here")
    ap.add_argument("--before", action="store_true",
                    help="also time the dense-Cholesky, 1e-6-step mm and a converged solve")
    args = ap.parse_args()
    world = make_world("goldfish-random", seed=args.seed, adaptive=32, publishers="exp:100",
                       epochs=args.epochs)
    g = Goldfish()
    run_protocol(g, world)
    adaptive = np.flatnonzero(world.adaptive)
    mats = [g.node_matrix(int(v)) for v in adaptive[: args.matrices]]
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        for j, wm in enumerate(mats):
            np.savez(os.path.join(args.dump, f"window{j:03d}.npz"), values=wm.values,
                     observed=wm.observed, dagger=wm.dagger, peers=wm.peers)
    # warm the kernels
    cl = classify(mats[0], 2)
    solve(build_problem(mats[0], cl))
    solve(build_problem(mats[0], cl), method="adam", rng=np.random.default_rng(0))
    before = dict(envelope=False, tol=1e-6)
    converged = dict(envelope=False, tol=1e-14, floor=1e-13, shrink=0.5, max_steps=3000)
    if args.before:
        solve(build_problem(mats[0], cl), **before)
    rows, side = [], []
    for j, wm in enumerate(mats):
        t0 = time.process_time()
        cl = classify(wm, 2)
        prob = build_problem(wm, cl)
        t1 = time.process_time()
        mm = solve(prob)
        t2 = time.process_time()
        ad = solve(prob, method="adam", rng=np.random.default_rng(j))
        t3 = time.process_time()
        pick_mm = rank_subsets(completed(wm, cl, mm), wm.dagger, wm.peers, 3)[:1]
        t4 = time.process_time()
        pick_ad = rank_subsets(completed(wm, cl, ad), wm.dagger, wm.peers, 3)[:1]
        if args.before:
            u0 = time.process_time()
            old = solve(prob, **before)
            u1 = time.process_time()
            ref = solve(prob, **converged)
            side.append((t2 - t1, u1 - u0, mm.loss / ref.loss - 1, old.loss / ref.loss - 1,
                         old.steps))
        rows.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3, ad.loss / mm.loss if mm.loss else 1.0,
                     pick_mm == pick_ad, wm.values.shape, len(cl.cells), mm.steps, ad.steps))
    r = np.array([x[:5] for x in rows], dtype=float)
    med = np.median(r, axis=0) * 1000
    print(f"{len(rows)} window matrices ({args.epochs} epochs of goldfish-random, "
          f"seed {args.seed}); "
          f"shapes {sorted({x[6] for x in rows})[:3]} ...; estimable cells median "
          f"{int(np.median([x[7] for x in rows]))}")
    print(f"median CPU ms per matrix: classify+terms {med[0]:.2f}, mm {med[1]:.2f} "
          f"(median {int(np.median([x[8] for x in rows]))} steps), adam {med[2]:.2f} "
          f"(median {int(np.median([x[9] for x in rows]))} steps), selection {med[3]:.2f}")
    print(f"adam loss / mm loss: median {np.median(r[:, 4]):.3f}, max {r[:, 4].max():.3f}; "
          f"same exploit subset in {sum(x[5] for x in rows)}/{len(rows)}")
    if side:
        b = np.array(side)
        print(f"mm now {np.median(b[:, 0]) * 1000:.2f} ms (median), before (dense Cholesky, "
              f"tol 1e-6) {np.median(b[:, 1]) * 1000:.2f} ms (median {int(np.median(b[:, 4]))} "
              f"steps): {b[:, 1].sum() / b[:, 0].sum():.1f}x in total CPU; loss above the "
              f"converged one: now max {b[:, 2].max():.1e}, before max {b[:, 3].max():.1e}")


if __name__ == "__main__":
    main()
