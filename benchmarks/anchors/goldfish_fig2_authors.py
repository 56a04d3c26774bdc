"""Goldfish Fig. 2 on the authors' simulator (bx3/goldfish ``sim/``) beside Hedgerow, same graphs.

For every seed (the seeds of ``benchmarks/goldfish_fig2.py``: ``goldfish-random`` with
one non-publisher adaptive node and 3 publishers at 1/3):

1. Hedgerow builds the graph and runs Goldfish (``hedgerow.scenarios.optimum.fig2_graph``
   for the row, and the same run with every epoch's out-links kept);
2. the graph is written in the authors' input format: the topology JSON (``adj`` =
   Hedgerow's latency matrix in ms, ``proc_delay`` = its node delays, ``pub_prob``,
   ``role``, ``x``/``y`` the plane positions in ms), checked to read back identical through
   Hedgerow's topology loader (:func:`hedgerow.scenarios.world.read_topology_json`), and
   ``start.json`` with Hedgerow's random start topology and adaptive node;
3. ``goldfish_fig2_authors_driver.py``, in the anchor's own Python, runs the authors'
   ``NetworkSim`` on it (their simulator: flooding, their PyTorch completer, selector and
   depleting pool, their λ bookkeeping) for ``--epochs`` epochs, into the folder layout of
   their ``run.sh run-simple-model``;
4. when every graph is done, the authors' ``sim/script/eval_optimal.py`` runs on those
   folders with the paper's 0.05 (``eval_optimal.py FIRST N EPOCHS 0.05 CONTEXT PREFIX``)
   and its two printed fractions are parsed.

Per publisher and side: the first epoch it holds the star's exploration slot ("explored")
and the first epoch it holds one of the 3 exploitation slots ("exploited"), read from the
out-links in use in each epoch (Hedgerow: the run's out-link tables; the authors: their
``graphs/epoch<e>.json``, which their simulator writes at the start of each epoch), and per
graph the epoch when all 3 are explored / exploited at once.

Fig. 2(b) on both sides, ``λ(e)/λ(0) > 0.05`` = far, success at most 48 far epochs:

* the authors' (b) by their script (which prints the share of graphs with more than 48 far
  epochs among the graphs that have at least one close epoch: its counts are a
  ``defaultdict``; success = 1 minus that), and the same counts over all graphs;
* Hedgerow's ``fig2b_success`` from its row (λ on the links in use in each epoch), over
  all graphs and over the graphs with at least one close epoch.

Their λ is recorded after each epoch's selection (the links of the next epoch), Hedgerow's
on the links in use: both start from the same λ(0) (epoch 0 changes no exploitation link)
and a graph's far count can differ by the one-epoch shift, at most 1.

Found through ``HEDGEROW_ANCHOR_GOLDFISH`` (a ``bx3/goldfish`` checkout, the folder holding
``sim/`` and ``core/``) and ``HEDGEROW_ANCHOR_GOLDFISH_PYTHON`` (a Python with ``torch``,
``numpy<2`` (their log formatter calls ``int()`` on one-element arrays), ``networkx`` and
``matplotlib``: a throw-away venv outside the project; PyTorch is never a Hedgerow
dependency).  Resumable: a graph whose ``summary.json`` exists in ``--keep``
is not run again.  Usage::

    HEDGEROW_ANCHOR_GOLDFISH=/path/to/goldfish HEDGEROW_ANCHOR_GOLDFISH_PYTHON=/venv/bin/python \\
        python benchmarks/anchors/goldfish_fig2_authors.py --graphs 10 --epochs 100 \\
        --keep gf-fig2-authors --json gf-fig2-authors.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ENV = "HEDGEROW_ANCHOR_GOLDFISH"
ENV_PYTHON = "HEDGEROW_ANCHOR_GOLDFISH_PYTHON"
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "goldfish_fig2_authors_driver.py"
#: the topology file prefix their eval_optimal.py is given (README's Fig. 2 command)
PREFIX = "rand-100node-3pub-20_0proc"
#: Fig. 2: far when λ(e)/λ(0) exceeds this; (a) and (b) limits (the paper's, on 300 epochs)
FAR, LIMIT_A, LIMIT_B = 0.05, 96, 48


def anchor_paths() -> tuple[Path, Path]:
    """The goldfish checkout and the anchor's Python, or exit (status 2) saying what is missing."""
    where, py = os.environ.get(ENV), os.environ.get(ENV_PYTHON)
    if not where or not py:
        missing = " and ".join(v for v, s in ((ENV, where), (ENV_PYTHON, py)) if not s)
        print(f"{missing} not set: point {ENV} at a bx3/goldfish checkout and {ENV_PYTHON} at a "
              "Python with torch, numpy<2, networkx and matplotlib (see this script's docstring); "
              "nothing was run", file=sys.stderr)
        sys.exit(2)
    root = Path(where)
    if not (root / "sim" / "simple_model" / "simple_model.py").is_file():
        print(f"{ENV}={where}: no sim/simple_model/simple_model.py there (not a bx3/goldfish "
              "checkout); nothing was run", file=sys.stderr)
        sys.exit(2)
    if not Path(py).is_file():
        print(f"{ENV_PYTHON}={py}: no such interpreter; nothing was run", file=sys.stderr)
        sys.exit(2)
    return root, Path(py)


def topology_json(lat: np.ndarray, proc: np.ndarray, probs: np.ndarray,
                  xy: np.ndarray | None) -> dict[str, Any]:
    """A graph in the authors' topology format (what their ``gen-rand-topo.py`` writes).

    ``adj`` is the latency row in ms, ``proc_delay`` the node delay, ``pub_prob`` the
    publishing probability and ``role`` ``PUB`` for a publisher (``LURK`` otherwise);
    ``x``, ``y`` are the positions (only drawn by their plots; 0 when unknown).

    Examples
    --------
    >>> import numpy as np
    >>> lat = np.array([[0.0, 7.5], [7.5, 0.0]])
    >>> t = topology_json(lat, np.array([20.0, 20.0]), np.array([1.0, 0.0]), None)
    >>> t["summary"], t["nodes"][0]["role"], t["nodes"][1]["adj"]
    ({'num_node': 2, 'num_pub': 1}, 'PUB', [7.5, 0.0])
    """
    n = len(proc)
    nodes = []
    for i in range(n):
        x, y = (float(xy[i, 0]), float(xy[i, 1])) if xy is not None else (0.0, 0.0)
        nodes.append({"id": i, "x": x, "y": y, "role": "PUB" if probs[i] > 0 else "LURK",
                      "pub_prob": float(probs[i]), "proc_delay": float(proc[i]),
                      "adj": [float(v) for v in lat[i]]})
    return {"summary": {"num_node": n, "num_pub": int((probs > 0).sum())}, "nodes": nodes}


def first_epochs(slots: list[list[int]], pubs: list[int]) -> dict[int, int]:
    """Per publisher, the first epoch whose slots hold it (``-1`` when never).

    ``slots[e]`` are the star's peers in those slots in epoch ``e``.

    >>> first_epochs([[5], [7], [5, 9]], [9, 7, 4])
    {9: 2, 7: 1, 4: -1}
    """
    out = {}
    for p in pubs:
        hit = [e for e, s in enumerate(slots) if p in s]
        out[p] = hit[0] if hit else -1
    return out


def all_by(first: dict[int, int]) -> int:
    """The epoch by which every publisher was reached (``-1`` when one never was).

    >>> all_by({1: 4, 2: 9}), all_by({1: 4, 2: -1})
    (9, -1)
    """
    v = list(first.values())
    return -1 if min(v) < 0 else max(v)


def far_count(lam: np.ndarray, limit: float = FAR) -> int:
    """Epochs with ``λ(e)/λ(0) >= limit`` as their script counts (``0`` if ``λ(0) <= 0``).

    Their ``eval_optimal.py`` counts an epoch *close* when the ratio is below the limit
    and far otherwise.

    >>> far_count(np.array([10.0, 5.0, 0.4, 0.0]))
    2
    """
    if lam[0] <= 0:
        return 0
    return int((lam / lam[0] >= limit).sum())


def parse_eval(text: str) -> dict[str, float]:
    """The two fractions their ``eval_optimal.py`` prints (share of graphs *failing* a, b).

    >>> out = "[120]\\ncdf less than 100 epoch 0.25\\n[60]\\napprox cdf less than 100 epoch 0.5"
    >>> parse_eval(out)
    {'fail_a': 0.25, 'fail_b': 0.5}
    """
    a = re.search(r"^cdf less than 100 epoch ([0-9.eE+-]+)", text, re.M)
    b = re.search(r"^approx cdf less than 100 epoch ([0-9.eE+-]+)", text, re.M)
    if not a or not b:
        raise ValueError("eval_optimal.py output without its two fractions:\n" + text[-800:])
    return {"fail_a": float(a.group(1)), "fail_b": float(b.group(1))}


def hedgerow_side(seed: int, epochs: int) -> dict[str, Any]:
    """Hedgerow's row for the graph, its per-epoch star slots and the graph itself."""
    from hedgerow.protocols.goldfish import Goldfish
    from hedgerow.scenarios.epochs import run_protocol
    from hedgerow.scenarios.optimum import fig2_graph
    from hedgerow.scenarios.star_lambda import star_lambda
    from hedgerow.scenarios.world import make_world

    row = fig2_graph(seed, epochs=epochs)
    world = make_world("goldfish-random", seed=seed, adaptive=1, publishers="unif:3",
                       adaptive_pool="non-publishers", epochs=epochs, wasted=False)
    proto = Goldfish()
    res = run_protocol(proto, world, keep_outs=True)
    star = int(np.flatnonzero(world.adaptive)[0])
    k = proto.n_exploit
    pubs = [int(p) for p in np.flatnonzero(world.publisher_probs > 0)]
    opt = sum(set(pubs) <= set(o[star, :k].tolist()) for o in res.outs)
    if epochs - opt != row["non_optimal_epochs"] or star != row["star"]:
        raise RuntimeError(f"seed {seed}: the kept run differs from fig2_graph's row")
    lat = world.latency
    xy = None if lat.positions is None else lat.positions * float(lat.info.get("scale_ms", 1.0))
    # λ(e) on the links in use in each epoch, as the row's far count
    lam_ms = [star_lambda(o, star, k, lat.matrix(), np.asarray(world.proc, float),
                          np.array(pubs)) for o in res.outs]
    exploits = [[int(u) for u in o[star, :k] if u >= 0] for o in res.outs]
    explores = [[int(u) for u in o[star, k:] if u >= 0] for o in res.outs]
    return {"row": row, "star": star, "pubs": pubs, "lat": lat.matrix(),
            "proc": np.asarray(world.proc, float), "probs": np.asarray(world.publisher_probs),
            "xy": xy, "start": res.outs[0], "exploits": exploits, "explores": explores,
            "lam": lam_ms}


def write_inputs(h: dict[str, Any], seed: int, work: Path) -> tuple[Path, Path]:
    """Topology JSON (checked through Hedgerow's loader) and ``start.json`` for one graph."""
    from hedgerow.scenarios.world import read_topology_json

    topo = work / "topo" / f"{PREFIX}-{seed}seed.json"
    topo.parent.mkdir(parents=True, exist_ok=True)
    topo.write_text(json.dumps(topology_json(h["lat"], h["proc"], h["probs"], h["xy"])))
    back = read_topology_json(str(topo))
    if not (np.array_equal(back["latency"].matrix(), h["lat"])
            and np.array_equal(back["proc"], h["proc"])
            and np.allclose(back["pub_prob"], h["probs"] / h["probs"].sum(), rtol=0, atol=0)):
        raise RuntimeError(f"{topo}: does not read back identical through the topology loader")
    start = work / "start" / f"{seed}.json"
    start.parent.mkdir(parents=True, exist_ok=True)
    start.write_text(json.dumps({"star": h["star"], "outs": h["start"].tolist()}))
    return topo, start


def run_dir(work: Path, seed: int) -> Path:
    return work / "context" / f"{PREFIX}-{seed}seed-1stars"


def run_anchor(py: Path, root: Path, topo: Path, start: Path, seed: int, work: Path,
               epochs: int, nice: int) -> dict[str, Any]:
    """The driver on one graph (skipped when its ``summary.json`` exists)."""
    rd = run_dir(work, seed)
    summary = rd / "summary.json"
    if not summary.is_file():
        rd.mkdir(parents=True, exist_ok=True)
        cmd = [str(py), str(DRIVER), "--anchor", str(root), "--topo", str(topo),
               "--start", str(start), "--run-dir", str(rd), "--seed", str(seed),
               "--epochs", str(epochs)]
        bump = nice - os.nice(0)  # ``--nice`` is the niceness the runs get, not an increment
        if bump > 0:
            cmd = ["nice", "-n", str(bump), *cmd]
        with open(work / f"driver-{seed}.log", "w") as log:
            subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    return json.loads(summary.read_text())


def side_stats(exploits: list[list[int]], explores: list[list[int]], pubs: list[int],
               lam: np.ndarray) -> dict[str, Any]:
    """The per-graph statistics both sides report."""
    fx = first_epochs(explores, pubs)
    fe = first_epochs(exploits, pubs)
    fl = first_epochs([a + b for a, b in zip(exploits, explores, strict=True)], pubs)
    opt = [set(pubs) <= set(s) for s in exploits]
    far = far_count(lam)
    return {"first_explored": fx, "first_exploited": fe, "first_linked": fl,
            "all_explored_by": all_by(fx), "all_exploited_by": all_by(fe),
            "all_linked_by": all_by(fl), "non_optimal_epochs": int(len(opt) - sum(opt)),
            "optimal_epochs": int(sum(opt)), "far_epochs": far,
            "close_epochs": int(len(lam) - far), "lambda0": float(lam[0])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=10)
    ap.add_argument("--first", type=int, default=0, help="first seed (goldfish_fig2.py's: 0)")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2, help="anchor runs at once")
    ap.add_argument("--nice", type=int, default=10, help="niceness of the anchor's runs (absolute)")
    ap.add_argument("--keep", default="gf-fig2-authors",
                    help="work folder (inputs, the anchor's run folders, logs); resumable")
    ap.add_argument("--json", default=None, help="also write every number here")
    ap.add_argument("--partial", action="store_true",
                    help="run nothing: compare the epochs the anchor's runs in --keep have "
                         "reached so far (exploration and exploitation only)")
    args = ap.parse_args(argv)
    if args.partial:
        return partial(args)
    root, py = anchor_paths()
    work = Path(args.keep).resolve()
    work.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.first, args.first + args.graphs))
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    ours: dict[int, dict[str, Any]] = {}
    t_ours = 0.0
    with ThreadPoolExecutor(max(args.workers, 1)) as ex:
        futs = {}
        for s in seeds:  # each graph's anchor run starts as soon as its inputs are written
            t1 = time.perf_counter()
            ours[s] = hedgerow_side(s, args.epochs)
            inputs = write_inputs(ours[s], s, work)
            t_ours += time.perf_counter() - t1
            futs[s] = ex.submit(run_anchor, py, root, *inputs, s, work, args.epochs, args.nice)
        theirs = {s: f.result() for s, f in futs.items()}
    t_all = time.perf_counter() - t0
    ev = subprocess.run([str(py), str(root / "sim" / "script" / "eval_optimal.py"),
                         str(args.first), str(args.graphs), str(args.epochs), str(FAR),
                         str(work / "context"), PREFIX], cwd=work, capture_output=True,
                        text=True, check=False)
    (work / "eval_optimal.out").write_text(ev.stdout + ev.stderr)
    # their script divides by the graphs that have an optimal (close) epoch: none -> it fails
    fractions = (parse_eval(ev.stdout) if ev.returncode == 0 else
                 {"error": (ev.stderr.strip().splitlines() or ["no output"])[-1]})
    load1 = os.getloadavg()

    rows = []
    for s in seeds:
        h, t = ours[s], theirs[s]
        if t["star"] != h["star"]:
            raise RuntimeError(f"seed {s}: the anchor ran star {t['star']}, not {h['star']}")
        lam_h = np.asarray(h["lam"])
        lam_t = np.array([e["lambda_after"] for e in t["epochs"]])
        rows.append({
            "seed": s, "star": h["star"], "publishers": h["pubs"],
            "publisher_full": h["row"]["publisher_full"],
            "ours": {**side_stats(h["exploits"], h["explores"], h["pubs"], lam_h),
                     "far_epochs_row": h["row"]["far_epochs"]},
            "theirs": {**side_stats([e["exploits"] for e in t["epochs"]],
                                    [e["explores"] for e in t["epochs"]], h["pubs"], lam_t),
                       "cpu_s": t["cpu_s"], "wall_s": t["wall_s"]},
        })
    _print(rows, fractions, args, load0, load1, t_ours, t_all)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"epochs": args.epochs, "seeds": seeds, "load": [load0, load1],
             "wall_s": t_all, "hedgerow_s": t_ours, "eval_optimal": fractions,
             "rows": rows}, indent=1, default=int))
    return 0


def reached_epochs(rd: Path, star: int) -> list[dict[str, list[int]]]:
    """The star's exploit and explore peers of every epoch a (running) anchor run has written.

    Reads ``graphs/epoch<e>.json`` for ``e = 0, 1, ...`` and stops at the first missing or
    unreadable one (the file being written).
    """
    out: list[dict[str, list[int]]] = []
    while True:
        f = rd / "graphs" / f"epoch{len(out)}.json"
        try:
            nd = json.loads(f.read_text())[star]
        except (OSError, ValueError, IndexError):
            return out
        if nd.get("node") != star:
            raise RuntimeError(f"{f}: entry {star} is node {nd.get('node')}")
        out.append({"exploits": nd["exploits"], "explores": nd["explores"]})


def explored_by(rows: list[dict[str, Any]], side: str, epoch: int,
                key: str = "first_explored") -> int:
    """Publishers (over all rows) first reached (``key``) at or before ``epoch``.

    >>> explored_by([{"x": {"first_explored": {1: 3, 2: -1, 3: 9}}}], "x", 5)
    1
    """
    return sum(0 <= v <= epoch for r in rows for v in r[side][key].values())


def partial(args: argparse.Namespace) -> int:
    """Both sides on the epochs every anchor run of ``--keep`` has reached (nothing is run)."""
    work = Path(args.keep).resolve()
    seeds = list(range(args.first, args.first + args.graphs))
    rows = []
    for s in seeds:
        start = work / "start" / f"{s}.json"
        if not start.is_file():
            sys.exit(f"{start}: no such graph in {work}")
        star = int(json.loads(start.read_text())["star"])
        t = reached_epochs(run_dir(work, s), star)
        h = hedgerow_side(s, args.epochs)
        e = min(len(t), args.epochs)
        pubs = h["pubs"]

        def stats(ex: list[list[int]], xp: list[list[int]], _p: list[int] = pubs) -> dict:
            fx, fe = first_epochs(xp, _p), first_epochs(ex, _p)
            fl = first_epochs([a + b for a, b in zip(ex, xp, strict=True)], _p)
            return {"first_explored": fx, "first_exploited": fe, "first_linked": fl,
                    "all_explored_by": all_by(fx), "all_exploited_by": all_by(fe),
                    "all_linked_by": all_by(fl)}

        rows.append({"seed": s, "star": star, "publishers": pubs, "epochs_reached": e,
                     "publisher_full": h["row"]["publisher_full"],
                     "ours": stats(h["exploits"][:e], h["explores"][:e]),
                     "theirs": stats([x["exploits"] for x in t[:e]],
                                     [x["explores"] for x in t[:e]])})
    common = min(r["epochs_reached"] for r in rows)
    print("| seed | star | publishers | epochs | Hedgerow explored | authors explored | "
          "Hedgerow exploited | authors exploited |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [" ".join(str(r[sd][k][p]) for p in r["publishers"])
                 for k in ("first_explored",) for sd in ("ours", "theirs")]
        cells += [" ".join(str(r[sd]["first_exploited"][p]) for p in r["publishers"])
                  for sd in ("ours", "theirs")]
        print(f"| {r['seed']} | {r['star']} | {' '.join(map(str, r['publishers']))} | "
              f"{r['epochs_reached']} | " + " | ".join(cells) + " |")
    n_pub = sum(len(r["publishers"]) for r in rows)
    print(f"\nepochs reached by every run: {common} (-1 = not within a run's epochs)")
    for e in sorted({min(common - 1, x) for x in (9, 19, 29, 39, 47, common - 1) if x >= 0}):
        print(f"publishers explored by epoch {e}: Hedgerow {explored_by(rows, 'ours', e)}/{n_pub},"
              f" authors {explored_by(rows, 'theirs', e)}/{n_pub}; linked (any out-link): "
              f"Hedgerow {explored_by(rows, 'ours', e, 'first_linked')}/{n_pub}, authors "
              f"{explored_by(rows, 'theirs', e, 'first_linked')}/{n_pub}; exploited: Hedgerow "
              f"{explored_by(rows, 'ours', e, 'first_exploited')}/{n_pub}, authors "
              f"{explored_by(rows, 'theirs', e, 'first_exploited')}/{n_pub}")
    if args.json:
        Path(args.json).write_text(json.dumps({"partial": True, "epochs_reached": common,
                                               "rows": rows}, indent=1, default=int))
    return 0


def _print(rows: list[dict[str, Any]], fractions: dict[str, Any], args: argparse.Namespace,
           load0: tuple[float, ...], load1: tuple[float, ...], t_ours: float,
           t_all: float) -> None:
    print()
    print("| seed | star | publishers | side | first explored | first exploited | all explored "
          "by | all exploited by | non-optimal | far | (b) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for side in ("ours", "theirs"):
            d = r[side]
            fx = " ".join(str(d["first_explored"][p]) for p in r["publishers"])
            fe = " ".join(str(d["first_exploited"][p]) for p in r["publishers"])
            b = "yes" if d["far_epochs"] <= LIMIT_B else "no"
            print(f"| {r['seed']} | {r['star']} | {' '.join(map(str, r['publishers']))} | "
                  f"{'Hedgerow' if side == 'ours' else 'authors'} | {fx} | {fe} | "
                  f"{d['all_explored_by']} | {d['all_exploited_by']} | "
                  f"{d['non_optimal_epochs']} | {d['far_epochs']} | {b} |")
    print()
    n = len(rows)
    for side, name in (("ours", "Hedgerow"), ("theirs", "authors")):
        fx = [v for r in rows for v in r[side]["first_explored"].values()]
        last = [r[side]["all_explored_by"] for r in rows]
        found = [v for v in fx if v >= 0]
        lastx = [v for v in last if v >= 0]
        succ = [r[side]["far_epochs"] <= LIMIT_B for r in rows]
        close = [r for r in rows if r[side]["close_epochs"] > 0]
        succ_c = [r[side]["far_epochs"] <= LIMIT_B for r in close]
        print(f"{name}: publishers explored {len(found)}/{len(fx)}, median first-explored epoch "
              f"{np.median(found) if found else float('nan'):.1f}; all 3 explored in "
              f"{len(lastx)}/{n} graphs, median epoch {np.median(lastx) if lastx else -1:.1f}, "
              f"by epoch 48 in {sum(0 <= v <= 48 for v in last)}/{n}; (b) {sum(succ)}/{n} over "
              f"all graphs, {sum(succ_c)}/{len(close)} over graphs with a close epoch")
    if "error" in fractions:
        print(f"authors' eval_optimal.py {args.first} {args.graphs} {args.epochs} {FAR} failed: "
              f"{fractions['error']}")
    else:
        print(f"authors' eval_optimal.py {args.first} {args.graphs} {args.epochs} {FAR}: prints "
              f"{fractions['fail_a']:.4f} (a) and {fractions['fail_b']:.4f} (b) failing, so (b) ="
              f" {1 - fractions['fail_b']:.4f} under its denominator")
    print(f"{n} graphs x {args.epochs} epochs; wall {t_all:.0f} s (Hedgerow {t_ours:.0f} s); "
          f"load average {load0[0]:.1f} before, {load1[0]:.1f} after; anchor CPU "
          f"{sum(r['theirs']['cpu_s'] for r in rows):.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
