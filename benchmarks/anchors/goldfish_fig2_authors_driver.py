"""Driver for the authors' Goldfish simulator on one Fig. 2 graph: runs in the anchor's own Python.

Started by ``goldfish_fig2_authors.py`` as a subprocess, once per graph.  It imports
the anchor's ``sim/`` modules and runs their ``NetworkSim`` (``simple_model``), the
object their ``testbed.py run-simple-model`` builds; nothing of the anchor is copied
here and no Hedgerow module is imported (the anchor's environment has no numba).

Inputs (written by the harness): the topology JSON in the authors' format (read by
their ``net_init.load_network``), the start topology ``start.json`` (Hedgerow's
random start, ``{"outs": [[...], ...], "star": s}``) and the seed.

The adapter (the only things not taken from the anchor):

* ``mat_complete.mat_comp_solver`` is imported by ``simple_model`` but is not in the
  snapshot; its ``construct_table`` is the one of the anchor's ``core/mc_optimizer.py``
  (same signature and six return values), registered under that module name.
* ``testbed.py`` imports modules that are not in the snapshot either (``mat_factor``),
  so the driver does what its ``run_simple_model`` does: ``NetworkSim(topo, 4, 8,
  epochs, T=120, 3, stars, 2000, 1e-2, 1e-3, 1, 2, ...)`` with ``update_interval=2`` and
  ``churn_rate=1.0`` (the Fig. 2 command of their README), after seeding ``numpy``,
  ``random`` and ``torch`` with ``seed + 3`` as ``testbed.py`` does.
* The star is Hedgerow's adaptive node (``testbed.py`` would draw it), and the start
  topology is Hedgerow's: ``generate_random_outs_conns_with_oracle`` is replaced, in
  ``simple_model``'s namespace, by a function that returns Hedgerow's out-links and
  registers each with the anchor's oracle the way their generator does
  (``can_i_connect`` then ``update``).
* ``take_snapshot`` (the all-pairs cost files their plotting scripts read) is replaced
  by a no-op: it draws no random number and changes no state; ``eval_optimal.py`` does
  not read those files.
* After the run, the marker ``latest.png`` that their plotting step leaves in a
  finished run's folder is written (empty): ``eval_optimal.py`` skips a graph without it.
  No plot is drawn.

Outputs, in the run folder their ``run.sh`` would make
(``<context>/<prefix>-<seed>seed-1stars/``): ``adapts``, ``init.json``,
``graphs/epoch<e>.json``, the pickled distance history named like the folder, the
star's log ``log<star>.txt``; and ``summary.json`` read back from those outputs: per
epoch the star's exploit and explore peers (from ``graphs/epoch<e>.json``) and
``λ(e)`` (from the pickle, the sum over publishers of ``topo_length - line_len``, the
quantity their ``eval_optimal.py`` sums), and the CPU seconds of the run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import random
import sys
import time
import types
from collections import defaultdict
from pathlib import Path

import numpy as np


def load_core_construct_table(core: Path) -> types.ModuleType:
    """The anchor's ``core/mc_optimizer.py`` as ``mat_complete.mat_comp_solver``."""
    sys.path.append(str(core))  # its own imports: loss_functions, formatter
    spec = importlib.util.spec_from_file_location("_anchor_core_mc_optimizer",
                                                  core / "mc_optimizer.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pkg = types.ModuleType("mat_complete")
    sub = types.ModuleType("mat_complete.mat_comp_solver")
    sub.construct_table = mod.construct_table  # type: ignore[attr-defined]
    pkg.mat_comp_solver = sub  # type: ignore[attr-defined]
    sys.modules["mat_complete"] = pkg
    sys.modules["mat_complete.mat_comp_solver"] = sub
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchor", required=True, help="the goldfish checkout (has sim/ and core/)")
    ap.add_argument("--topo", required=True, help="topology JSON in the authors' format")
    ap.add_argument("--start", required=True, help="start.json: Hedgerow's out-links and star")
    ap.add_argument("--run-dir", required=True, help="the run folder (<prefix>-<s>seed-1stars)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = ap.parse_args(argv)

    root = Path(args.anchor).resolve()
    topo, start_file = Path(args.topo).resolve(), Path(args.start).resolve()
    run_dir = Path(args.run_dir).resolve()
    sim = root / "sim"
    if not (sim / "simple_model" / "simple_model.py").is_file():
        sys.exit(f"{sim}: no simple_model/simple_model.py (not a bx3/goldfish checkout)")
    # testbed.py seeds before anything else is imported
    seed_num = args.seed + 3
    np.random.seed(seed_num)  # noqa: NPY002 - the anchor draws from the global streams
    random.seed(seed_num)
    import torch

    torch.manual_seed(seed_num)
    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(sim))
    os.chdir(sim)  # their modules read config relative to sim/
    load_core_construct_table(root / "core")
    from simple_model import simple_model as sm

    start = json.loads(start_file.read_text())
    star = int(start["star"])
    start_outs = [[int(u) for u in row] for row in start["outs"]]

    def hedgerow_start(out_lim, num_node, oracle):
        outs = defaultdict(list)
        for i in range(num_node):
            for w in start_outs[i][:out_lim]:
                if oracle.can_i_connect(i, [w]):
                    sys.exit(f"start topology: node {i} -> {w} refused by the anchor's oracle")
                oracle.update(i, [], [w], [])
                outs[i].append(w)
        return outs

    sm.gen_rand_outs_with_oracle = hedgerow_start
    sm.NetworkSim.take_snapshot = lambda self, epoch, curr_outs: None

    for sub in ("graphs", "snapshots", "snapshots-exploit"):
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    plt_name = str(run_dir / run_dir.name)
    num_msg, num_topo = 40, 3
    t0 = time.process_time()
    w0 = time.perf_counter()
    m = sm.NetworkSim(str(topo), 4, 8, args.epochs, num_msg * num_topo,
                      num_topo, [star], 2000, 1e-2, 1e-3, 1, 2, plt_name, False, 1.0, 2)
    m.run()
    cpu = time.process_time() - t0
    wall = time.perf_counter() - w0
    m.worker_pools.close()
    (run_dir / "latest.png").write_bytes(b"")

    # read back from their outputs
    epochs = []
    for e in range(args.epochs):
        nodes = json.loads((run_dir / "graphs" / f"epoch{e}.json").read_text())
        nd = nodes[star]
        assert nd["node"] == star
        epochs.append({"exploits": nd["exploits"], "explores": nd["explores"]})
    with open(plt_name, "rb") as fh:
        hist = pickle.load(fh)
    lam = []
    for e, dists in hist[star]:
        lam.append(float(sum(d[1] - d[2] for d in dists.values())))
        epochs[e]["lambda_after"] = lam[-1]
    (run_dir / "summary.json").write_text(json.dumps(
        {"seed": args.seed, "star": star, "epochs": epochs, "cpu_s": cpu, "wall_s": wall,
         "torch": torch.__version__}))
    print(f"seed {args.seed}: {args.epochs} epochs in {wall:.0f} s wall, {cpu:.0f} s CPU",
          flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
