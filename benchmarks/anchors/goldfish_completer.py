"""Goldfish completion + selection side by side with the authors' PyTorch completer (bx3/goldfish).

Identical inputs: Hedgerow runs ``goldfish-random`` (``benchmarks/goldfish_completion.py
--dump``) and keeps the window matrices of the last completion epoch (relative
times, observed and † masks, peer ids).  On each matrix

* Hedgerow classifies the cells, builds eq. 1's terms, solves them with the
  protocol's default ``mm`` solver, fills the completed matrix and ranks the
  exploit subsets (CPU time, median of ``--repeat`` runs after a warm-up that
  compiles the numba kernels);
* the anchor, through ``goldfish_completer_driver.py`` in the anchor's own
  Python, runs ``McOptimizer.run`` (its classification, KNN and Adam loop:
  lr 1e-2, at most 2000 steps, its early stop, fresh per matrix as in its
  ``core/run.py``) and ``SimpleSelector.run_selector`` (CPU time of one run);
  PyTorch on one intra-op thread (``--threads``), Hedgerow's kernels are
  serial numba.

Compared per matrix:

(a) cell classes: the anchor's masks (observed, †, ambiguous, infeasible, the
    rest estimable) translated to Hedgerow's codes, cell by cell;
(b) the loss of both solutions under one objective, Hedgerow's eq. 1
    (``complete.loss``), and under the anchor's own objective
    (``ElementLoss`` with the anchor's neighbours and weights, evaluated by
    the driver in float64).  The two objectives have the same form; they
    differ in the K nearest rows and their weights: the anchor adds
    U(0, 1e-5) noise to the float32 distances before its top-K, Hedgerow
    takes the exact float64 distances (ties by row index);
(c) CPU time of completion + selection, the anchor's over Hedgerow's;

and whether the chosen exploit subsets agree (the anchor fills missing
exploit slots at random when fewer than 3 peers win a row; then only
Hedgerow's contributors are compared).

The anchor is found through two environment variables:
``HEDGEROW_ANCHOR_GOLDFISH`` (a checkout of ``bx3/goldfish``, the folder
holding ``core/``) and ``HEDGEROW_ANCHOR_GOLDFISH_PYTHON`` (a Python with
``torch`` and ``numpy``, e.g. a throw-away venv with ``pip install
torch==2.13.0 numpy``; PyTorch is never a Hedgerow dependency).  Usage::

    HEDGEROW_ANCHOR_GOLDFISH=/path/to/goldfish HEDGEROW_ANCHOR_GOLDFISH_PYTHON=/venv/bin/python \\
        python benchmarks/anchors/goldfish_completer.py --matrices 24 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np

from hedgerow.protocols.goldfish.complete import Solution, build_problem, completed, loss, solve
from hedgerow.protocols.goldfish.matrix import (
    AMBIGUOUS,
    DAGGER,
    ESTIMABLE,
    INFEASIBLE,
    OBSERVED,
    SYMBOLS,
    WindowMatrix,
    classify,
)
from hedgerow.protocols.goldfish.select import choose_exploits, rank_subsets

ENV = "HEDGEROW_ANCHOR_GOLDFISH"
ENV_PYTHON = "HEDGEROW_ANCHOR_GOLDFISH_PYTHON"
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "goldfish_completer_driver.py"
DUMPER = HERE.parent / "goldfish_completion.py"
#: acceptance: speed ratio at least, loss ratio at most
SPEEDUP, LOSS_RATIO = 100.0, 1.01


def anchor_paths() -> tuple[Path, Path]:
    """The goldfish checkout and the anchor's Python, or exit with a clear message."""
    where, py = os.environ.get(ENV), os.environ.get(ENV_PYTHON)
    if not where or not py:
        missing = " and ".join(v for v, s in ((ENV, where), (ENV_PYTHON, py)) if not s)
        sys.exit(f"{missing} not set: point {ENV} at a bx3/goldfish checkout and {ENV_PYTHON} "
                 "at a Python with torch and numpy (see this script's docstring); nothing was run")
    root = Path(where)
    if not (root / "core" / "mc_optimizer.py").is_file():
        sys.exit(f"{ENV}={where}: no core/mc_optimizer.py there (not a bx3/goldfish checkout); "
                 "nothing was run")
    if not Path(py).is_file():
        sys.exit(f"{ENV_PYTHON}={py}: no such interpreter; nothing was run")
    return root, Path(py)


def their_classes(observed: np.ndarray, dagger: np.ndarray, ambiguous: np.ndarray,
                  infeasible: np.ndarray) -> np.ndarray:
    """Hedgerow's class codes from the anchor's masks.

    The anchor keeps four ``(p, q)`` masks: ``mask`` (observed), ``none_mask``
    (†, its "plus"), ``unkn_plus_mask`` (a missing cell with a † among its
    nearest rows: ambiguous ‡) and ``unkn_unab_mask`` (unable: infeasible ×).
    Every other cell is a variable of its loss (estimable).  The masks must
    be disjoint, and the last two only on missing cells.

    Examples
    --------
    >>> import numpy as np
    >>> o = np.array([[1, 0, 0, 0]], bool); d = np.array([[0, 1, 0, 0]], bool)
    >>> amb = np.array([[0, 0, 1, 0]], bool); inf = np.zeros((1, 4), bool)
    >>> their_classes(o, d, amb, inf).tolist()
    [[0, 1, 4, 3]]
    """
    masks = [np.asarray(m, dtype=bool) for m in (observed, dagger, ambiguous, infeasible)]
    if len({m.shape for m in masks}) != 1:
        raise ValueError(f"anchor masks differ in shape: {[m.shape for m in masks]}")
    overlap = np.sum(masks, axis=0) > 1
    if overlap.any():
        r, u = np.argwhere(overlap)[0]
        raise ValueError(f"anchor masks overlap at cell ({r}, {u}) and {overlap.sum() - 1} more")
    out = np.full(masks[0].shape, ESTIMABLE, dtype=np.int8)
    for code, m in zip((OBSERVED, DAGGER, AMBIGUOUS, INFEASIBLE), masks, strict=True):
        out[m] = code
    return out


def class_differences(ours: np.ndarray, theirs: np.ndarray) -> dict[str, int]:
    """Counts of differing cells by ``ours->theirs`` symbols (e.g. ``{"a->‡": 3}``).

    >>> import numpy as np
    >>> class_differences(np.array([[3, 3, 0]]), np.array([[4, 3, 0]]))
    {'a->‡': 1}
    """
    diff: dict[str, int] = {}
    for r, u in np.argwhere(ours != theirs):
        key = f"{SYMBOLS[int(ours[r, u])]}->{SYMBOLS[int(theirs[r, u])]}"
        diff[key] = diff.get(key, 0) + 1
    return dict(sorted(diff.items()))


def load_window(path: Path) -> WindowMatrix:
    d = np.load(path)
    return WindowMatrix(d["values"], d["observed"].astype(bool), d["dagger"].astype(bool),
                        d["peers"])


def ours_once(wm: WindowMatrix) -> tuple[Any, Any, Any, list[int]]:
    """Classification, terms, ``mm`` solve, completed matrix and exploit choice."""
    cl = classify(wm, 2)
    prob = build_problem(wm, cl)
    sol = solve(prob)
    ranked = rank_subsets(completed(wm, cl, sol), wm.dagger, wm.peers, 3)
    pick = choose_exploits(ranked, 3, set(), lambda u: True)
    return cl, prob, sol, [int(u) for u in pick]


def run_ours(files: list[Path], repeat: int) -> list[dict[str, Any]]:
    """Hedgerow on every matrix; writes ``oursNNN.npz`` (dense ``a``, ``c``) beside each."""
    ours_once(load_window(files[0]))  # warm-up: numba compiles or loads its kernels
    rows = []
    for f in files:
        wm = load_window(f)
        cpu = []
        for _ in range(max(repeat, 1)):
            t0 = time.process_time()
            cl, prob, sol, pick = ours_once(wm)
            cpu.append(time.process_time() - t0)
        a = np.full(wm.values.shape, np.nan)
        if len(cl.cells):
            a[cl.cells[:, 0], cl.cells[:, 1]] = sol.a
        np.savez(f.with_name(f.name.replace("window", "ours")), a=a, c=sol.c)
        rows.append({"file": f.name, "shape": list(wm.values.shape), "wm": wm, "cl": cl,
                     "prob": prob, "sol": sol, "pick": pick, "cpu": float(np.median(cpu)),
                     "steps": int(sol.steps)})
    return rows


def compare(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Per-matrix comparison of classes, losses, times and exploit choices."""
    wm, cl, prob, sol = ours["wm"], ours["cl"], ours["prob"], ours["sol"]
    tc = their_classes(wm.observed, wm.dagger, theirs["ambiguous"], theirs["infeasible"])
    diff = class_differences(cl.classes, tc)
    row: dict[str, Any] = {
        "file": ours["file"], "shape": ours["shape"],
        "estimable_ours": int((cl.classes == ESTIMABLE).sum()),
        "estimable_theirs": int((tc == ESTIMABLE).sum()),
        "class_diff": diff,
        "cpu_ours_s": ours["cpu"],
        "cpu_theirs_s": float(theirs["cpu_complete"] + theirs["cpu_select"]),
        "cpu_theirs_complete_s": float(theirs["cpu_complete"]),
        "steps_ours": ours["steps"], "steps_theirs": int(theirs["steps"]),
        "exploits_ours": ours["pick"], "exploits_theirs": [int(u) for u in theirs["exploits"]],
    }
    row["speedup"] = row["cpu_theirs_s"] / max(row["cpu_ours_s"], 1e-9)
    # (b) under Hedgerow's objective: their a on our variables (same cells when classes agree)
    loss_ours = float(sol.loss)
    if len(cl.cells) == 0:
        lt = loss(prob, np.zeros(0), theirs["c"])
    else:
        a_t = theirs["a"][cl.cells[:, 0], cl.cells[:, 1]]
        lt = loss(prob, a_t, theirs["c"]) if np.isfinite(a_t).all() else float("nan")
    row["loss_ours_obj"] = [loss_ours, lt]
    row["loss_ratio_ours_obj"] = loss_ours / lt if lt > 0 else float("nan")
    # under the anchor's objective (evaluated by the driver with its own terms)
    a_, b_ = float(theirs["loss_ours"]), float(theirs["loss_theirs"])
    row["loss_theirs_obj"] = [a_, b_]
    row["loss_ratio_theirs_obj"] = a_ / b_ if b_ > 0 else float("nan")
    pt = set(row["exploits_theirs"])

    def agrees(pick: list[int]) -> bool:
        return set(pick) == pt if len(pick) == 3 else set(pick) <= pt

    row["same_exploits"] = agrees(row["exploits_ours"])
    # Hedgerow's selector on the anchor's completed matrix: isolates the selectors
    if np.isfinite(lt):
        a_t = theirs["a"][cl.cells[:, 0], cl.cells[:, 1]] if len(cl.cells) else np.zeros(0)
        t_hat = completed(wm, cl, Solution(a_t, np.asarray(theirs["c"], float), lt, 0))
        ranked = rank_subsets(t_hat, wm.dagger, wm.peers, 3)
        row["same_selector"] = agrees([int(u) for u in choose_exploits(ranked, 3, set(),
                                                                       lambda u: True)])
    else:
        row["same_selector"] = False
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrices", type=int, default=24, help="window matrices to compare")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=9, help="epochs of the Hedgerow run")
    ap.add_argument("--reuse", default=None,
                    help="a folder of windowNNN.npz from an earlier dump (skips the run)")
    ap.add_argument("--repeat", type=int, default=5, help="Hedgerow runs per matrix (median)")
    ap.add_argument("--threads", type=int, default=1, help="PyTorch intra-op threads")
    ap.add_argument("--json", default=None, help="also write every number here")
    ap.add_argument("--keep", default=None,
                    help="keep the matrices, both solutions and the anchor's logs in this folder")
    args = ap.parse_args(argv)
    root, py = anchor_paths()
    numba.set_num_threads(1)
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.reuse:
            src = sorted(Path(args.reuse).glob("window*.npz"))[: args.matrices]
            if len(src) < args.matrices:
                sys.exit(f"{args.reuse}: {len(src)} window matrices, {args.matrices} asked")
            for f in src:
                (work / f.name).write_bytes(f.read_bytes())
        else:
            subprocess.run([sys.executable, str(DUMPER), "--matrices", str(args.matrices),
                            "--seed", str(args.seed), "--epochs", str(args.epochs),
                            "--dump", str(work)], check=True, stdout=subprocess.DEVNULL)
        files = sorted(work.glob("window*.npz"))[: args.matrices]
        ours = run_ours(files, args.repeat)
        t0 = time.perf_counter()
        subprocess.run([str(py), str(DRIVER), "--anchor", str(root), "--matrices", str(work),
                        "--out", str(work / "theirs"), "--threads", str(args.threads)],
                       check=True)
        wall_theirs = time.perf_counter() - t0
        rows = [compare(o, dict(np.load(work / "theirs" / o["file"].replace("window", "theirs"))))
                for o in ours]
    load1 = os.getloadavg()

    print()
    print("| matrix | p x q | estimable ours/theirs | classes | their steps | anchor CPU s | "
          "Hedgerow CPU ms | speed-up | loss ratio (our obj) | loss ratio (their obj) | "
          "same exploits |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cls = "identical" if not r["class_diff"] else ", ".join(
            f"{k} {v}" for k, v in r["class_diff"].items())
        print(f"| {r['file']} | {r['shape'][0]}x{r['shape'][1]} | {r['estimable_ours']}/"
              f"{r['estimable_theirs']} | {cls} | {r['steps_theirs']} | {r['cpu_theirs_s']:.2f} | "
              f"{r['cpu_ours_s'] * 1000:.2f} | {r['speedup']:.0f}x | "
              f"{r['loss_ratio_ours_obj']:.4f} | {r['loss_ratio_theirs_obj']:.4f} | "
              f"{'yes' if r['same_exploits'] else 'no'} |")
    speed = np.array([r["speedup"] for r in rows])
    lo = np.array([r["loss_ratio_ours_obj"] for r in rows])
    lt = np.array([r["loss_ratio_theirs_obj"] for r in rows])
    same_cls = sum(not r["class_diff"] for r in rows)
    tot_t = sum(r["cpu_theirs_s"] for r in rows)
    tot_o = sum(r["cpu_ours_s"] for r in rows)
    print()
    print(f"{len(rows)} matrices; load average {load0[0]:.1f} before, {load1[0]:.1f} after; "
          f"anchor wall {wall_theirs:.0f} s for {tot_t:.0f} s CPU")
    print(f"(a) identical cell classes on {same_cls}/{len(rows)} matrices")
    print(f"(b) loss ours/theirs, Hedgerow's objective: max {np.nanmax(lo):.4f}, median "
          f"{np.nanmedian(lo):.4f}; the anchor's objective: max {np.nanmax(lt):.4f}, median "
          f"{np.nanmedian(lt):.4f} (<= {LOSS_RATIO} on {int(np.sum(lo <= LOSS_RATIO))} / "
          f"{int(np.sum(lt <= LOSS_RATIO))} of {len(rows)})")
    print(f"(c) CPU speed-up, completion + selection: min {speed.min():.0f}x, median "
          f"{np.median(speed):.0f}x, total {tot_t:.1f} s / {tot_o * 1000:.1f} ms = "
          f"{tot_t / tot_o:.0f}x (>= {SPEEDUP:.0f}x on {int(np.sum(speed >= SPEEDUP))} of "
          f"{len(rows)})")
    print(f"same exploit subset on {sum(r['same_exploits'] for r in rows)}/{len(rows)}; "
          f"Hedgerow's selector on the anchor's completed matrix picks the anchor's subset on "
          f"{sum(r['same_selector'] for r in rows)}/{len(rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"load": [load0, load1], "wall_anchor_s": wall_theirs, "threads": args.threads,
             "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
