"""Driver for the authors' Goldfish completer: runs in the anchor's own Python (with PyTorch).

Started by ``goldfish_completer.py`` as a subprocess; it imports the anchor's
``core/`` modules and calls their functions, nothing of the anchor is copied
here.  It imports no Hedgerow module (the anchor's environment has no numba).

For every ``windowNNN.npz`` of ``--matrices`` (``values``, ``observed``,
``dagger``, ``peers``), it

1. builds the anchor's inputs exactly as its ``construct_table`` leaves them
   (``X`` with the relative times at observed cells and 9999 at † cells,
   ``mask`` = observed, ``none_mask`` = †, ``max_time`` = the largest observed
   value), the same call sequence as the anchor's ``core/run.py``;
2. times (CPU, ``time.process_time``) ``McOptimizer.run`` (classification,
   KNN, the Adam loop; a fresh optimiser per matrix, as ``core/run.py`` makes
   one per invocation) and then ``SimpleSelector.run_selector``;
3. evaluates the anchor's own objective (``loss_functions.ElementLoss``, in
   float64) at its solution and, if ``oursNNN.npz`` holds Hedgerow's
   solution on the same cells, at Hedgerow's solution too.

The adapter (the only things not taken from the anchor):

* ``McOptimizer.optim_loop`` is wrapped on the instance to record its
  arguments (the loss terms: neighbours, weights, masks) and its raw result
  (``A``, ``C`` on max-normalised values); the wrapper calls the original.
* The selector needs a node id, the known peers and a connection oracle: the
  node gets id ``n`` (not a column), every ``0..n-1`` is a known peer, the
  oracle accepts everything (``SimpleOracle(1000, 1000, n + 1)``, as
  ``core/run.py`` does) and no peer counts as a current out-peer.
* Seeds: ``torch.manual_seed(j)`` and ``numpy.random.seed(j)`` for matrix
  ``j`` (the anchor's Adam starts from ``torch.rand``; its explorer uses the
  global numpy stream).

Writes ``theirsNNN.npz`` per matrix: the ambiguous and infeasible masks,
``a`` (dense, ``nan`` where not a variable), ``c``, the exploit and explore
ids, the CPU seconds of completion and selection, the Adam steps and the
losses.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchor", required=True, help="the goldfish checkout (has core/)")
    ap.add_argument("--matrices", required=True, help="folder of windowNNN.npz (+ oursNNN.npz)")
    ap.add_argument("--out", required=True, help="folder for theirsNNN.npz")
    ap.add_argument("--nodes", type=int, default=100, help="node ids 0..n-1 are known peers")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--epochs", type=int, default=2000, help="Adam step budget (core/run.py)")
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--exit-diff", type=float, default=1e-3)
    ap.add_argument("--k", type=int, default=2, help="nearest rows (top_n_peer)")
    args = ap.parse_args(argv)

    core = Path(args.anchor) / "core"
    if not (core / "mc_optimizer.py").is_file():
        sys.exit(f"{core}: no mc_optimizer.py (not a bx3/goldfish checkout)")
    sys.path.insert(0, str(core))
    import torch
    from loss_functions import ElementLoss
    from mc_optimizer import McOptimizer
    from oracle import SimpleOracle
    from selector import SimpleSelector

    torch.set_num_threads(args.threads)
    with contextlib.suppress(RuntimeError):  # only settable before the first parallel op
        torch.set_num_interop_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(Path(args.matrices).glob("window*.npz"))
    crit = ElementLoss()
    for j, f in enumerate(files):
        tag = f.stem.removeprefix("window")
        d = np.load(f)
        obs = d["observed"].astype(bool)
        dag = d["dagger"].astype(bool)
        ids = [int(u) for u in d["peers"]]
        x = np.where(obs, d["values"], 0.0)
        x[dag] = 9999.0
        mask = obs.astype(np.float64)
        none_mask = dag.astype(np.float64)
        max_time = float(d["values"][obs].max()) if obs.any() else 0.0
        log = str(out / f"theirs{tag}.log")
        if os.path.exists(log):
            os.remove(log)

        mco = McOptimizer(j, args.epochs, args.lr, args.exit_diff, args.k, log)
        seen: dict[str, object] = {}
        loop = mco.optim_loop

        def recording_loop(*a, _loop=loop, _seen=seen):
            _seen["args"] = a
            res = _loop(*a)
            _seen["res"] = res
            return res

        mco.optim_loop = recording_loop
        me = args.nodes
        selector = SimpleSelector(me, list(range(args.nodes)), 4, 8, None, 1, log)
        oracle = SimpleOracle(1000, 1000, args.nodes + 1)
        torch.manual_seed(j)
        np.random.seed(j)  # noqa: NPY002 - the anchor's explorer draws from it
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            t0 = time.process_time()
            table, _c, amb, unab = mco.run(x, mask, 1 - none_mask, max_time)
            t1 = time.process_time()
            exploits, explores = selector.run_selector(table, ids, amb, none_mask, unab, oracle, [])
            t2 = time.process_time()

        p, q = x.shape
        a_dense = np.full((p, q), np.nan)
        c = np.zeros(p)
        loss_theirs = loss_ours = np.nan
        if "args" in seen:
            xt, easy_by_row, known_by_row, peer_scores, ind_map, t_rows, _nv = seen["args"]
            a_raw, c_raw = seen["res"]
            c = np.asarray(c_raw, dtype=np.float64).reshape(-1)
            a_raw = np.asarray(a_raw, dtype=np.float64)
            for (r, u), t in ind_map.items():
                a_dense[r, u] = a_raw[t]

            terms = (xt.double(), easy_by_row, known_by_row, peer_scores, ind_map, t_rows)

            def objective(a_vec, c_vec, _terms=terms):
                x64, e, k, sc, m, t = _terms
                with torch.no_grad():
                    return float(crit(x64, torch.tensor(a_vec, dtype=torch.float64),
                                      torch.tensor(c_vec, dtype=torch.float64), e, k, sc, m, t))

            loss_theirs = objective(a_raw, c)
            ours = Path(args.matrices) / f"ours{tag}.npz"
            if ours.is_file():
                o = np.load(ours)
                a_ours = np.array([o["a"][r, u] for (r, u), _t in
                                   sorted(ind_map.items(), key=lambda kv: kv[1])])
                if np.isfinite(a_ours).all():
                    loss_ours = objective(a_ours, o["c"])
        np.savez(out / f"theirs{tag}.npz", ambiguous=np.asarray(amb) > 0,
                 infeasible=np.asarray(unab) > 0, a=a_dense, c=c,
                 exploits=np.array([int(u) for u in exploits], dtype=np.int64),
                 explores=np.array([int(u) for u in explores], dtype=np.int64),
                 cpu_complete=t1 - t0, cpu_select=t2 - t1,
                 steps=len(mco.stopper.loss_hist), loss_theirs=loss_theirs,
                 loss_ours=loss_ours, max_time=max_time)
        print(f"{f.name}: {p}x{q}, complete {t1 - t0:.2f} s CPU, select {t2 - t1:.3f} s, "
              f"{len(mco.stopper.loss_hist)} Adam steps", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
