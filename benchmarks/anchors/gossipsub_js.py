"""GossipSub side by side with the JS implementation (``@libp2p/gossipsub``), same cases.

The anchor is the GossipSub that Lodestar runs, installed with npm in a folder
outside the repository and found through ``HEDGEROW_GOSSIPSUB_JS`` (the folder
holding ``node_modules``)::

    mkdir gossipsub-js && cd gossipsub-js && npm init -y
    npm install @libp2p/gossipsub @libp2p/utils @libp2p/crypto @libp2p/peer-id \\
        @libp2p/logger @libp2p/interface @multiformats/multiaddr @sinonjs/fake-timers

Usage::

    HEDGEROW_GOSSIPSUB_JS=/path/to/gossipsub-js python benchmarks/anchors/gossipsub_js.py
    ... --settings 50:1:6,100:3:6,200:1:8 --seed 1 --json out.json

A setting is ``nodes:topics:D``.  For each, :func:`make_case` draws one case from
the seed (a random connection graph of a target degree, every node subscribed
to every topic, a Poisson publication schedule per topic after the warm-up),
the Node runner ``gossipsub_js_runner.mjs`` plays it on the JS implementation,
and, when Hedgerow's GossipSub is importable
(``from hedgerow.protocols.gossipsub import simulate_case``), Hedgerow plays the
same case; :func:`measures` reduces both results the same way and the table
prints them side by side.  Without Hedgerow's side the table has the JS column
only and says so.

The case (one JSON object, the input of both sides)::

    {"nodes": N, "edges": [[a, b], ...], "topics": T, "subscriptions": [[node, topic], ...],
     "params": {"D": 6, "D_lo": 4, "D_hi": 12, "D_lazy": 6, "D_score": 4, "D_out": 2,
                "heartbeat_ms": 1000, "mcache_len": 5, "mcache_gossip": 3,
                "gossip_factor": 0.25, "fanout_ttl_ms": 60000, "seen_ttl_ms": 120000,
                "prune_backoff_ms": 60000, "gossip_retransmission": 3, "flood_publish": true,
                "idontwant_threshold": null, "variant": "v1.1", "scoring": false},
     "latency_ms": 20.0, "publications": [[t_ms, publisher, topic, size_bytes], ...],
     "duration_ms": 60000, "warmup_ms": 10000, "seed": 1}

``latency_ms`` is one value or one per edge (in the order of ``edges``).
Times count from t = 0, when every node subscribes and every edge connects.

The result (the output of both sides)::

    {"deliveries": [[msg, node, t_ms], ...],   # first arrival of each message at each node
     "duplicates": [...],                      # per message: copies received beyond the first
     "control_sent": {"ihave": [per node], "iwant": [...], "graft": [...], "prune": [...],
                      "idontwant": [...]},     # control entries sent after warm-up
     "heartbeats": H,                          # heartbeats per node after warm-up
     "mesh_degree": [[node, topic, degree], ...],  # at every heartbeat after warm-up
     "wall_seconds": s, "simulated_ms": ms}

``msg`` is the index of the message in ``publications``.  A publisher's own
message is not a delivery; a copy it receives back counts as a duplicate.  A
control *entry* is one topic's GRAFT, PRUNE or IHAVE, one IWANT or one
IDONTWANT list, as in the protobuf; several entries may share one RPC
(``control_ids`` in the JS result also counts the message ids they carry).

How the JS side runs (details in the runner's header): one Node.js process, the
package's own multi-node test setup (stub registrar and connection manager; each
edge a pair of in-memory connections with a mock stream muxer), the case's
latency added per write on the in-memory connection, and the case's clock as a
fake clock (``@sinonjs/fake-timers``), so a run is as fast as the
implementation's work allows and does not wait for real time.  Heartbeat phases
are drawn uniformly in one heartbeat interval per node (``Math.random`` seeded
from the case's seed).  Scoring is off (every score weight 0): this runner
refuses cases with ``"scoring": true``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.model import RngStreams

ENV = "HEDGEROW_GOSSIPSUB_JS"
RUNNER = Path(__file__).resolve().with_name("gossipsub_js_runner.mjs")
CONTROL_KINDS = ("ihave", "iwant", "graft", "prune", "idontwant")
DEFAULT_SETTINGS = "50:1:6,100:3:6,200:1:8"

#: The parameters of a case before :func:`params_for` sets D and its neighbours
#: (the specification's defaults, ``gossipsub-v1.0.md`` / ``-v1.1.md``).
BASE_PARAMS: dict[str, Any] = {
    "D": 6, "D_lo": 4, "D_hi": 12, "D_lazy": 6, "D_score": 4, "D_out": 2,
    "heartbeat_ms": 1000, "mcache_len": 5, "mcache_gossip": 3, "gossip_factor": 0.25,
    "fanout_ttl_ms": 60000, "seen_ttl_ms": 120000, "prune_backoff_ms": 60000,
    "gossip_retransmission": 3, "flood_publish": True, "idontwant_threshold": None,
    "variant": "v1.1", "scoring": False, "graft_on_subscribe": True,
}


class AnchorAbsent(SystemExit):
    """The JS implementation is not where ``HEDGEROW_GOSSIPSUB_JS`` says (exit status 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


def params_for(d: int, **overrides: Any) -> dict[str, Any]:
    """The case parameters for mesh degree ``d``.

    ``D_lo = d - 2``, ``D_hi = max(12, d + 4)``, ``D_score = 2 d / 3`` (rounded
    down), ``D_lazy = 6`` and ``D_out = 2`` (less where the specification's
    ``D_out < D_lo`` and ``D_out <= D / 2`` ask for it): the specification's
    defaults at ``d = 6`` and Ethereum's consensus-layer mesh (D 8, D_lo 6,
    D_hi 12) at ``d = 8``.

    Parameters
    ----------
    d : int
        The target mesh degree D (at least 3).
    **overrides
        Any key of :data:`BASE_PARAMS` to set as well.

    Returns
    -------
    dict
        The ``params`` object of a case.

    Examples
    --------
    >>> p = params_for(8)
    >>> (p["D"], p["D_lo"], p["D_hi"], p["D_score"], p["D_out"])
    (8, 6, 12, 5, 2)
    >>> params_for(6, variant="v1.2")["variant"]
    'v1.2'
    >>> [params_for(d)["D_out"] for d in (3, 4, 5, 6)]
    [0, 1, 2, 2]
    """
    if int(d) < 3:
        raise ParameterError(f"D: the mesh degree must be at least 3, got {d}")
    unknown = set(overrides) - set(BASE_PARAMS)
    if unknown:
        raise ParameterError(f"{sorted(unknown)[0]}: not a GossipSub case parameter")
    d = int(d)
    p = dict(BASE_PARAMS, D=d, D_lo=d - 2, D_hi=max(12, d + 4), D_score=2 * d // 3,
             D_out=min(2, d - 3, d // 2))
    p.update(overrides)
    return p


def random_graph(n: int, degree: int, rng: np.random.Generator) -> list[list[int]]:
    """A connected undirected graph where each node opens ``degree // 2`` links to random others.

    Mean degree about ``degree``; components left over (rare) are joined by one
    edge each to a random node of the first.  Edges are ``[a, b]`` with ``a < b``,
    sorted.

    Examples
    --------
    >>> e = random_graph(30, 8, np.random.default_rng(1))
    >>> all(a < b for a, b in e) and len(e) == len({tuple(x) for x in e})
    True
    >>> 30 * 4 - 20 <= len(e) <= 30 * 4
    True
    """
    if n < 2:
        raise ParameterError(f"nodes: at least 2, got {n}")
    if not 2 <= degree <= n - 1:
        raise ParameterError(f"degree: between 2 and nodes - 1 = {n - 1}, got {degree}")
    edges: set[tuple[int, int]] = set()
    for a in range(n):
        others = rng.choice(n - 1, size=degree // 2, replace=False)
        for other in others.tolist():
            b = other + (other >= a)
            edges.add((min(a, b), max(a, b)))
    # join the components, if any, to the one holding node 0
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    for a in range(n):
        if find(a) != find(0):
            b = int(rng.integers(n))
            while find(b) != find(0):
                b = int(rng.integers(n))
            edges.add((min(a, b), max(a, b)))
            parent[find(a)] = find(0)
    return [list(e) for e in sorted(edges)]


def edge_latencies(spec: str, m: int, rng: np.random.Generator) -> list[float]:
    """One whole-ms latency per edge from ``"uniform:LO:HI"``.

    >>> lat = edge_latencies("uniform:10:100", 5, np.random.default_rng(1))
    >>> len(lat), all(10 <= x <= 100 and x == int(x) for x in lat)
    (5, True)
    """
    parts = spec.split(":")
    try:
        lo, hi = float(parts[1]), float(parts[2])
        ok = len(parts) == 3 and parts[0] == "uniform" and 0 <= lo <= hi
    except (IndexError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"latency_ms: {spec!r} is not a number or uniform:LO:HI (ms)")
    return [float(x) for x in rng.integers(int(lo), int(hi) + 1, size=m)]


def make_case(n: int, topics: int, d: int, seed: int, *, degree: int = 20, rate: float = 1.0,
              size: int = 1024, duration_ms: int = 60000, warmup_ms: int = 10000,
              drain_ms: int = 5000, latency_ms: float | list[float] | str = 20.0,
              **params: Any) -> dict[str, Any]:
    """One case: graph, subscriptions, parameters and a publication schedule, from ``seed``.

    Every node subscribes to every topic.  Each topic publishes a Poisson
    process of ``rate`` messages per second of ``size`` bytes between the
    warm-up and ``drain_ms`` before the end (so the last messages have time to
    arrive), each from a publisher drawn uniformly among the topic's
    subscribers; times are whole milliseconds.

    Parameters
    ----------
    n, topics, d, seed : int
        Nodes, topics, mesh degree D and the seed of every random draw.
    degree : int
        Target connection degree of the graph (see :func:`random_graph`).
    rate, size : float, int
        Messages per second per topic and their size in bytes.
    duration_ms, warmup_ms, drain_ms : int
        Simulated time, warm-up (no publication, nothing counted) and the quiet
        end.
    latency_ms : float, list of float or str
        One-way latency of every edge; one per edge; or ``"uniform:LO:HI"``, one whole
        number of ms per edge drawn uniformly in [LO, HI] (stream ``"latency"``).
    **params
        Keys of :data:`BASE_PARAMS` to override (after :func:`params_for`).

    Returns
    -------
    dict
        The case (see this module's docstring).

    Examples
    --------
    >>> c = make_case(20, 2, 6, seed=3, degree=6, duration_ms=20000, warmup_ms=5000)
    >>> c["nodes"], c["topics"], len(c["subscriptions"]), c["params"]["D"]
    (20, 2, 40, 6)
    >>> ts = [p[0] for p in c["publications"]]
    >>> ts == sorted(ts) and 5000 <= min(ts) and max(ts) < 15000
    True
    >>> c == make_case(20, 2, 6, seed=3, degree=6, duration_ms=20000, warmup_ms=5000)
    True
    """
    if topics < 1:
        raise ParameterError(f"topics: at least 1, got {topics}")
    if rate <= 0 or size < 4:
        raise ParameterError(f"rate, size: rate > 0 and size >= 4 bytes, got {rate}, {size}")
    if not 0 <= warmup_ms < duration_ms - drain_ms:
        raise ParameterError(f"warmup_ms: must leave time to publish before duration_ms - "
                             f"drain_ms, got {warmup_ms}, {duration_ms}, {drain_ms}")
    streams = RngStreams(seed)
    edges = random_graph(n, degree, streams.stream("graph"))
    if isinstance(latency_ms, str):
        latency_ms = edge_latencies(latency_ms, len(edges), streams.stream("latency"))
    if isinstance(latency_ms, list) and len(latency_ms) != len(edges):
        raise ParameterError(f"latency_ms: {len(latency_ms)} values for {len(edges)} edges")
    subscriptions = [[v, t] for v in range(n) for t in range(topics)]
    subscribers = {t: [v for v, u in subscriptions if u == t] for t in range(topics)}
    rng = streams.stream("publications")
    pubs: list[list[int]] = []
    for t in range(topics):
        at = float(warmup_ms)
        while True:
            at += rng.exponential(1000.0 / rate)
            if at >= duration_ms - drain_ms:
                break
            pubs.append([int(at), int(rng.choice(subscribers[t])), t, int(size)])
    pubs.sort(key=lambda p: (p[0], p[2]))
    return {"nodes": n, "edges": edges, "topics": topics, "subscriptions": subscriptions,
            "params": params_for(d, **params), "latency_ms": latency_ms,
            "publications": pubs, "duration_ms": duration_ms, "warmup_ms": warmup_ms,
            "seed": seed}


def measures(case: dict[str, Any], result: dict[str, Any]) -> dict[str, float]:
    """The compared quantities of one result of ``case``.

    - ``delivery``: delivered (message, subscriber) pairs over expected ones
      (every subscriber of the topic but the publisher);
    - ``latency_p50_ms``, ``latency_p99_ms``: of those first arrivals;
    - ``mesh_mean``, ``mesh_p5``, ``mesh_p50``, ``mesh_p95``: the mean mesh degree of
      each (node, topic) after warm-up (the result's samples averaged, or its means), their
      mean and percentiles, and ``mesh_in_bounds`` the share of them within [D_lo, D_hi];
    - ``dup_per_delivery``: duplicates over delivered pairs;
    - ``<kind>_per_node_hb``: control entries of each kind per node per heartbeat;
    - ``wall_s`` and ``node_s_per_wall_s`` (simulated node-seconds per wall second).

    Examples
    --------
    >>> case = {"nodes": 3, "topics": 1, "subscriptions": [[0, 0], [1, 0], [2, 0]],
    ...         "publications": [[0, 0, 0, 8], [10, 1, 0, 8]],
    ...         "params": {"D_lo": 1, "D_hi": 2}}
    >>> res = {"deliveries": [[0, 1, 20], [0, 2, 40], [1, 0, 30]], "duplicates": [2, 0],
    ...        "control_sent": {"ihave": [3, 3, 0], "iwant": [0, 0, 0], "graft": [1, 0, 0],
    ...                         "prune": [0, 0, 0], "idontwant": [0, 0, 0]},
    ...        "heartbeats": 2, "mesh_degree": [[0, 0, 2], [1, 0, 2], [2, 0, 3]],
    ...        "wall_seconds": 0.5, "simulated_ms": 1000}
    >>> m = measures(case, res)
    >>> m["delivery"], m["dup_per_delivery"], m["ihave_per_node_hb"], m["mesh_in_bounds"]
    (0.75, 0.6666666666666666, 1.0, 0.6666666666666666)
    >>> m["node_s_per_wall_s"]
    6.0
    """
    n = int(case["nodes"])
    subs: dict[int, set[int]] = {}
    for v, t in case["subscriptions"]:
        subs.setdefault(int(t), set()).add(int(v))
    pubs = case["publications"]
    expected = {(k, v) for k, (_, p, t, _) in enumerate(pubs) for v in subs.get(int(t), ())
                if v != p}
    lat = [t - pubs[k][0] for k, v, t in result["deliveries"] if (k, v) in expected]
    delivered = len(lat)
    out: dict[str, float] = {
        "delivery": delivered / len(expected) if expected else float("nan"),
        "latency_p50_ms": float(np.percentile(lat, 50)) if lat else float("nan"),
        "latency_p99_ms": float(np.percentile(lat, 99)) if lat else float("nan"),
    }
    # one mean per (node, topic): a result may give samples at every heartbeat or the means
    per_pair: dict[tuple[int, int], list[float]] = {}
    for v, t, k in result["mesh_degree"]:
        per_pair.setdefault((int(v), int(t)), []).append(float(k))
    deg = np.array([np.mean(x) for x in per_pair.values()], dtype=float)
    lo, hi = case["params"]["D_lo"], case["params"]["D_hi"]
    if deg.size:
        out.update(mesh_mean=float(deg.mean()), mesh_p5=float(np.percentile(deg, 5)),
                   mesh_p50=float(np.percentile(deg, 50)),
                   mesh_p95=float(np.percentile(deg, 95)),
                   mesh_in_bounds=float(np.mean((deg >= lo) & (deg <= hi))))
    else:
        out.update(mesh_mean=float("nan"), mesh_p5=float("nan"), mesh_p50=float("nan"),
                   mesh_p95=float("nan"), mesh_in_bounds=float("nan"))
    out["dup_per_delivery"] = (float(sum(result["duplicates"])) / delivered if delivered
                               else float("nan"))
    hb = max(int(result["heartbeats"]), 1)
    for kind in CONTROL_KINDS:
        sent = result["control_sent"].get(kind, [0] * n)
        out[f"{kind}_per_node_hb"] = float(sum(sent)) / n / hb
    wall = float(result["wall_seconds"])
    out["wall_s"] = wall
    out["node_s_per_wall_s"] = n * float(result["simulated_ms"]) / 1000.0 / wall if wall else 0.0
    return out


def find_anchor() -> Path:
    """The scratch folder of the JS implementation, or :class:`AnchorAbsent` saying what lacks."""
    where = os.environ.get(ENV)
    if not where:
        raise AnchorAbsent(f"{ENV} is not set: point it at a folder where @libp2p/gossipsub is "
                           "installed with npm (see this script's docstring); nothing was run")
    root = Path(where)
    for pkg in ("@libp2p/gossipsub", "@libp2p/utils", "@sinonjs/fake-timers"):
        if not (root / "node_modules" / pkg / "package.json").is_file():
            raise AnchorAbsent(f"{ENV}={where}: no node_modules/{pkg} there; install it with npm "
                               "(see this script's docstring); nothing was run")
    if shutil.which("node") is None:
        raise AnchorAbsent("node is not on PATH: the JS implementation needs Node.js; "
                           "nothing was run")
    return root


def run_js(case: dict[str, Any], root: Path, work: Path, name: str) -> dict[str, Any]:
    """Play ``case`` on the JS implementation in one Node.js process; return its result."""
    case_path, out_path = work / f"{name}.case.json", work / f"{name}.js.json"
    case_path.write_text(json.dumps(case))
    env = {**os.environ, ENV: str(root)}
    w0 = time.perf_counter()
    res = subprocess.run(["node", str(RUNNER), str(case_path), str(out_path)], env=env,
                         capture_output=True, text=True, check=False)
    total = time.perf_counter() - w0
    if res.returncode != 0:
        raise SystemExit(f"JS runner failed on {name} (rc {res.returncode}):\n"
                         f"{res.stderr[-3000:]}")
    out = json.loads(out_path.read_text())
    out["process_wall_seconds"] = total
    return out


def hedgerow_simulate() -> Any:
    """Hedgerow's ``simulate_case``, or ``None`` while it is not there."""
    try:
        from hedgerow.protocols.gossipsub import simulate_case
    except ImportError:
        return None
    return simulate_case


def run_hedgerow(simulate: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Play ``case`` on Hedgerow's GossipSub; the wall time is measured here if it is not given."""
    w0 = time.perf_counter()
    out = dict(simulate(case))
    wall = time.perf_counter() - w0
    out.setdefault("wall_seconds", wall)
    out.setdefault("simulated_ms", case["duration_ms"])
    return out


ROWS = (
    ("delivery", "{:.4f}"), ("latency_p50_ms", "{:.0f}"), ("latency_p99_ms", "{:.0f}"),
    ("mesh_mean", "{:.2f}"), ("mesh_p5", "{:.0f}"), ("mesh_p50", "{:.0f}"),
    ("mesh_p95", "{:.0f}"), ("mesh_in_bounds", "{:.3f}"), ("dup_per_delivery", "{:.3f}"),
    ("ihave_per_node_hb", "{:.3f}"), ("iwant_per_node_hb", "{:.4f}"),
    ("graft_per_node_hb", "{:.4f}"), ("prune_per_node_hb", "{:.4f}"),
    ("idontwant_per_node_hb", "{:.4f}"), ("wall_s", "{:.2f}"), ("node_s_per_wall_s", "{:.0f}"),
)


def relative_difference(ours: float, theirs: float) -> float | None:
    """``ours / theirs - 1``, or ``None`` when it is not defined (a zero or missing anchor).

    >>> relative_difference(1.15, 1.0)
    0.1499999999999999
    >>> relative_difference(0.0, 0.0) is None
    True
    """
    if theirs == 0 or not np.isfinite(theirs) or not np.isfinite(ours):
        return None
    return ours / theirs - 1.0


def table(name: str, js: dict[str, float], ours: dict[str, float] | None) -> str:
    """The side-by-side table of one setting (JS only when ``ours`` is ``None``)."""
    head = f"{name:<24}{'JS':>12}" + (f"{'Hedgerow':>12}{'diff':>9}" if ours else "")
    lines = [head]
    for key, fmt in ROWS:
        line = f"  {key:<22}{fmt.format(js[key]):>12}"
        if ours is not None:
            diff = relative_difference(ours[key], js[key])
            line += f"{fmt.format(ours[key]):>12}" + (f"{diff:+9.1%}" if diff is not None
                                                       else f"{'-':>9}")
        lines.append(line)
    return "\n".join(lines)


def parse_settings(text: str) -> list[tuple[int, int, int]]:
    """``"50:1:6,100:3:8"`` -> ``[(50, 1, 6), (100, 3, 8)]`` (nodes, topics, D).

    >>> parse_settings("50:1:6, 200:3:8")
    [(50, 1, 6), (200, 3, 8)]
    """
    out = []
    for part in text.split(","):
        fields = part.strip().split(":")
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            raise ParameterError(f"settings: {part.strip()!r} is not nodes:topics:D")
        out.append((int(fields[0]), int(fields[1]), int(fields[2])))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default=DEFAULT_SETTINGS, help="nodes:topics:D, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--degree", type=int, default=20, help="target connection degree")
    ap.add_argument("--rate", type=float, default=1.0, help="messages per second per topic")
    ap.add_argument("--size", type=int, default=1024, help="message size in bytes")
    ap.add_argument("--duration-ms", type=int, default=60000)
    ap.add_argument("--warmup-ms", type=int, default=10000)
    ap.add_argument("--latency-ms", default="20",
                    help="one-way latency of every edge (ms), or uniform:LO:HI per edge")
    ap.add_argument("--variant", default="v1.1", choices=("v1.0", "v1.1", "v1.2"))
    ap.add_argument("--idontwant-threshold", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write cases' measures here")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the cases and both sides' results in this folder")
    args = ap.parse_args(argv)
    try:
        root = find_anchor()
    except AnchorAbsent as absent:
        print(absent.message, file=sys.stderr)
        return 2
    try:
        latency: float | str = float(args.latency_ms)
    except ValueError:
        latency = args.latency_ms
    try:
        settings = parse_settings(args.settings)
        # every case is drawn before any run, so bad input stops before the first one
        cases = {f"n{n}-t{t}-d{d}": make_case(
            n, t, d, args.seed, degree=min(args.degree, n - 1), rate=args.rate, size=args.size,
            duration_ms=args.duration_ms, warmup_ms=args.warmup_ms, latency_ms=latency,
            variant=args.variant, idontwant_threshold=args.idontwant_threshold)
            for n, t, d in settings}
    except ParameterError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    simulate = hedgerow_simulate()
    if simulate is None:
        print("Hedgerow's side is not there yet (hedgerow.protocols.gossipsub.simulate_case is "
              "not importable): the JS side only")
    else:
        # load (compile) Hedgerow's kernels on a small case, outside the timed runs
        simulate(make_case(10, 1, 3, args.seed, degree=4, duration_ms=3000, warmup_ms=1000,
                           drain_ms=1000))
    report: dict[str, Any] = {"load_before": os.getloadavg(), "settings": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for (n, topics, d), (name, case) in zip(settings, cases.items(), strict=True):
            js_result = run_js(case, root, work, name)
            js = measures(case, js_result)
            ours = None
            if simulate is not None:
                ours_result = run_hedgerow(simulate, case)
                (work / f"{name}.hedgerow.json").write_text(json.dumps(ours_result))
                ours = measures(case, ours_result)
            print(f"{name}: {len(case['edges'])} edges, {len(case['publications'])} messages, "
                  f"{case['duration_ms'] / 1000:.0f} s simulated, load {os.getloadavg()[0]:.2f}")
            print(table(name, js, ours))
            report["settings"][name] = {
                "nodes": n, "topics": topics, "D": d, "edges": len(case["edges"]),
                "messages": len(case["publications"]), "js": js, "hedgerow": ours,
                "js_setup_wall_s": js_result.get("setup_wall_seconds"),
                "js_process_wall_s": js_result.get("process_wall_seconds"),
                "js_publish_errors": len(js_result.get("publish_errors", [])),
                "implementation": js_result.get("implementation"),
            }
    report["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
