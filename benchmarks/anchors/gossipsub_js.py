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
     "duration_ms": 60000, "warmup_ms": 10000, "heartbeat_offsets_ms": [317, ...], "seed": 1}

``latency_ms`` is one value or one per edge (in the order of ``edges``).
Times count from t = 0, when every node subscribes and every edge connects.
Node ``i``'s heartbeats fall on ``heartbeat_offsets_ms[i]`` modulo the heartbeat
on both sides (whole ms, drawn uniformly in one interval).

The result (the output of both sides)::

    {"deliveries": [[msg, node, t_ms], ...],   # first arrival of each message at each node
     "duplicates": [...],                      # per message: copies received beyond the first
     "control_sent": {"ihave": [per node], "iwant": [...], "graft": [...], "prune": [...],
                      "idontwant": [...]},     # control entries sent after warm-up
     "heartbeats": H,                          # heartbeats per node after warm-up
     "mesh_degree": [[node, topic, degree], ...],  # at every heartbeat after warm-up
     "wall_seconds": s, "simulated_ms": ms,
     "iwant_log": [[t_ms, node, peer, [msg, ...]], ...],     # every IWANT sent after warm-up
     "iwant_answers": [[t_ms, node, asker, [msg, ...]], ...],  # every IWANT answered
     "copy_log": [[msg, node, sender, t_ms], ...]}           # every data copy received

The last three (the IWANT trace, :func:`iwant_classes`) come from the JS
runner always and from Hedgerow with ``simulate_case(case, trace=True)``.

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
implementation's work allows and does not wait for real time.  Each node starts
so that its heartbeats fall on the case's offsets.  Scoring is off (every score
weight 0): this runner refuses cases with ``"scoring": true``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

    Every node subscribes to every topic, and its heartbeats fall on an offset
    drawn uniformly in whole ms of one interval (stream ``"phases"``).  Each topic
    publishes a Poisson process of ``rate`` messages per second of ``size`` bytes between the
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
    hb = int(params.get("heartbeat_ms", BASE_PARAMS["heartbeat_ms"]))
    offsets = [int(x) for x in streams.stream("phases").integers(0, hb, size=n)]
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
            "heartbeat_offsets_ms": offsets, "seed": seed}


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


#: the classes of an IWANT'd id (:func:`iwant_classes`), in the order the table prints them
IWANT_CLASSES = ("seen", "tie", "in_flight", "ahead", "only_gossip")


def _edge_latency(case: dict[str, Any]) -> dict[tuple[int, int], float]:
    lat = case["latency_ms"]
    per = lat if isinstance(lat, list) else [float(lat)] * len(case["edges"])
    out: dict[tuple[int, int], float] = {}
    for (a, b), x in zip(case["edges"], per, strict=True):
        out[(a, b)] = out[(b, a)] = float(x)
    return out


def iwant_classes(case: dict[str, Any], result: dict[str, Any],
                  tol_ms: float = 0.5) -> dict[str, float]:
    """Every message id asked for with IWANT, classified by where the message's other copies were.

    ``result`` carries the IWANT trace (``iwant_log``, ``iwant_answers``,
    ``copy_log``: the JS runner's, or :func:`simulate_case` with ``trace=True``).
    A *path copy* of message ``k`` at node ``w`` is any copy that is not the
    answer to an IWANT (an answer arrives one link's latency after it is
    sent).  An id that ``w`` asks for at instant ``t`` is

    - ``seen``: a path copy had arrived before ``t`` (the node should not have asked);
    - ``tie``: the first path copy arrives at ``t`` itself (within ``tol_ms``),
      handled after the IHAVE;
    - ``in_flight``: a path copy was sent at or before ``t`` and arrives after it
      (the IHAVE overtook a copy on its way);
    - ``ahead``: the first path copy is sent after ``t``;
    - ``only_gossip``: no path copy ever arrives.

    Returns the count of each class, ``ids`` (their sum), ``iwants`` (IWANT entries),
    ``answered`` (ids answered), ``answer_first`` (answers that arrived before
    every path copy) and ``ihave_lead_ms`` (mean, over ``in_flight`` and ``tie``
    ids, of how long before the path copy's arrival the IWANT was sent).

    Examples
    --------
    >>> case = {"edges": [[0, 1], [1, 2], [0, 2]], "latency_ms": 20.0}
    >>> res = {"iwant_log": [[1040, 2, 1, [0]], [1060, 1, 0, [1]]],
    ...        "iwant_answers": [[1060, 1, 2, [0]]],
    ...        "copy_log": [[0, 2, 0, 1050], [0, 2, 1, 1080], [1, 1, 2, 1060]]}
    >>> c = iwant_classes(case, res)
    >>> c["in_flight"], c["tie"], c["ids"], c["answered"], c["answer_first"]
    (1.0, 1.0, 2.0, 1.0, 0.0)
    """
    lat = _edge_latency(case)
    answers = set()
    for t, node, asker, ks in result.get("iwant_answers", []):
        for k in ks:
            answers.add((int(k), int(asker), int(node), round(float(t) + lat[(node, asker)], 1)))
    path: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for k, w, x, t in result.get("copy_log", []):
        if (int(k), int(w), int(x), round(float(t), 1)) in answers:
            continue
        sent = float(t) - lat[(int(x), int(w))] if x >= 0 else float(t)
        path.setdefault((int(k), int(w)), []).append((float(t), sent))
    out = dict.fromkeys(IWANT_CLASSES, 0.0)
    lead: list[float] = []
    answered = first = 0
    for t, w, u, ks in result.get("iwant_log", []):
        for k in ks:
            copies = path.get((int(k), int(w)), [])
            arrive = min((a for a, _ in copies), default=np.inf)
            sent = min((s for _, s in copies), default=np.inf)
            if arrive < t - tol_ms:
                cls = "seen"
            elif abs(arrive - t) <= tol_ms:
                cls = "tie"
            elif sent <= t + tol_ms:
                cls = "in_flight"
            elif np.isfinite(arrive):
                cls = "ahead"
            else:
                cls = "only_gossip"
            out[cls] += 1
            if cls in ("tie", "in_flight"):
                lead.append(arrive - t)
            key = (int(k), int(w), int(u), round(float(t) + 2 * lat[(int(w), int(u))], 1))
            if key in answers:
                answered += 1
                first += key[3] < arrive - tol_ms
    out["ids"] = float(sum(out[c] for c in IWANT_CLASSES))
    out["iwants"] = float(len(result.get("iwant_log", [])))
    out["answered"] = float(answered)
    out["answer_first"] = float(first)
    out["ihave_lead_ms"] = float(np.mean(lead)) if lead else float("nan")
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
    """Play ``case`` on the JS implementation in one Node.js process; return its result.

    Adds ``process_wall_seconds`` and ``process_cpu_seconds`` (user and system CPU
    of the Node.js process, set-up included).
    """
    case_path, out_path = work / f"{name}.case.json", work / f"{name}.js.json"
    case_path.write_text(json.dumps(case))
    env = {**os.environ, ENV: str(root)}
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    res = subprocess.run(["node", str(RUNNER), str(case_path), str(out_path)], env=env,
                         capture_output=True, text=True, check=False)
    total = time.perf_counter() - w0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"JS runner failed on {name} (rc {res.returncode}):\n"
                         f"{res.stderr[-3000:]}")
    out = json.loads(out_path.read_text())
    out["process_wall_seconds"] = total
    out["process_cpu_seconds"] = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    return out


def hedgerow_simulate() -> Any:
    """Hedgerow's ``simulate_case``, or ``None`` while it is not there."""
    try:
        from hedgerow.protocols.gossipsub import simulate_case
    except ImportError:
        return None
    return simulate_case


def run_hedgerow(simulate: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Play ``case`` on Hedgerow's GossipSub with the IWANT trace; the wall time is measured
    here if it is not given, and ``process_cpu_seconds`` is the CPU time of the call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = dict(simulate(case, trace=True))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    out.setdefault("wall_seconds", wall)
    out.setdefault("simulated_ms", case["duration_ms"])
    out["process_cpu_seconds"] = cpu
    return out


def all_measures(case: dict[str, Any], result: dict[str, Any]) -> dict[str, float]:
    """:func:`measures`, the IWANT classes (``iwant_`` + class) and the CPU speed of one run.

    ``node_s_per_cpu_s`` is simulated node-seconds per CPU second of the whole
    process (JS: Node.js, set-up included; Hedgerow: the call, engine set-up included).
    """
    out = measures(case, result)
    if "iwant_log" in result:
        for key, value in iwant_classes(case, result).items():
            out[f"iwant_{key}"] = value
    cpu = float(result.get("process_cpu_seconds", 0.0))
    out["cpu_s"] = cpu
    out["node_s_per_cpu_s"] = (int(case["nodes"]) * float(result["simulated_ms"]) / 1000.0 / cpu
                               if cpu > 0 else float("nan"))
    return out


def summarize(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Mean, standard deviation and 95 % half-width of the mean of every measure over runs.

    The half-width is ``t(0.975, k - 1) x sd / sqrt(k)`` (Student's t; NaN for one run).

    >>> s = summarize([{"x": 1.0}, {"x": 3.0}, {"x": 2.0}])
    >>> s["x"]["mean"], s["x"]["sd"], round(s["x"]["ci95"], 3), s["x"]["k"]
    (2.0, 1.0, 2.484, 3.0)
    """
    from scipy import stats

    out: dict[str, dict[str, float]] = {}
    for key in runs[0]:
        x = np.array([r[key] for r in runs], dtype=float)
        x = x[np.isfinite(x)]
        k = len(x)
        sd = float(x.std(ddof=1)) if k > 1 else float("nan")
        ci = float(stats.t.ppf(0.975, k - 1) * sd / np.sqrt(k)) if k > 1 else float("nan")
        out[key] = {"mean": float(x.mean()) if k else float("nan"), "sd": sd, "ci95": ci,
                    "k": float(k)}
    return out


ROWS = (
    ("delivery", "{:.4f}"), ("latency_p50_ms", "{:.0f}"), ("latency_p99_ms", "{:.0f}"),
    ("mesh_mean", "{:.2f}"), ("mesh_p5", "{:.0f}"), ("mesh_p50", "{:.0f}"),
    ("mesh_p95", "{:.0f}"), ("mesh_in_bounds", "{:.3f}"), ("dup_per_delivery", "{:.3f}"),
    ("ihave_per_node_hb", "{:.3f}"), ("iwant_per_node_hb", "{:.4f}"),
    ("graft_per_node_hb", "{:.4f}"), ("prune_per_node_hb", "{:.4f}"),
    ("idontwant_per_node_hb", "{:.4f}"), ("wall_s", "{:.2f}"), ("node_s_per_wall_s", "{:.0f}"),
)
#: rows printed beyond :data:`ROWS` when they are there: the IWANT trace and the CPU speed
TRACE_ROWS = (
    ("iwant_iwants", "{:.1f}"), ("iwant_ids", "{:.1f}"),
    *((f"iwant_{c}", "{:.1f}") for c in IWANT_CLASSES),
    ("iwant_answer_first", "{:.1f}"), ("iwant_ihave_lead_ms", "{:.1f}"),
    ("cpu_s", "{:.2f}"), ("node_s_per_cpu_s", "{:.0f}"),
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
    for key, fmt in (*ROWS, *TRACE_ROWS):
        if key not in js or (ours is not None and key not in ours):
            continue
        line = f"  {key:<22}{fmt.format(js[key]):>12}"
        if ours is not None:
            diff = relative_difference(ours[key], js[key])
            line += f"{fmt.format(ours[key]):>12}" + (f"{diff:+9.1%}" if diff is not None
                                                       else f"{'-':>9}")
        lines.append(line)
    return "\n".join(lines)


def summary_table(name: str, js: dict[str, dict[str, float]],
                  ours: dict[str, dict[str, float]] | None) -> str:
    """The side-by-side table of one setting over several runs: mean +- 95 % half-width."""
    k = int(js["delivery"]["k"])
    head = f"{name} ({k} runs a side)".ljust(28) + f"{'JS':>22}"
    head += f"{'Hedgerow':>22}{'diff':>9}" if ours else ""
    lines = [head]

    def cell(x: dict[str, float], fmt: str) -> str:
        ci = fmt.format(x["ci95"]) if np.isfinite(x["ci95"]) else "-"
        return f"{fmt.format(x['mean'])} +- {ci}"

    for key, fmt in (*ROWS, *TRACE_ROWS):
        if key not in js or (ours is not None and key not in ours):
            continue
        line = f"  {key:<26}{cell(js[key], fmt):>22}"
        if ours is not None:
            diff = relative_difference(ours[key]["mean"], js[key]["mean"])
            line += f"{cell(ours[key], fmt):>22}" + (f"{diff:+9.1%}" if diff is not None
                                                      else f"{'-':>9}")
        lines.append(line)
    return "\n".join(lines)


def parse_seeds(text: str) -> list[int]:
    """``"1,2,5-7"`` -> ``[1, 2, 5, 6, 7]``.

    >>> parse_seeds("1,2,5-7")
    [1, 2, 5, 6, 7]
    """
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ParameterError(f"seeds: {part.strip()!r} is not a seed or a range A-B")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


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
    ap.add_argument("--seeds", default=None,
                    help="several cases, e.g. 1-5 or 1,3 (overrides --seed); the table gives "
                         "mean +- 95%% half-width over seeds and replicates")
    ap.add_argument("--replicates", type=int, default=1,
                    help="runs of each case a side, each with other draws of the "
                         "implementation's own random choices (the case's replicate)")
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
        seeds = parse_seeds(args.seeds) if args.seeds else [args.seed]
        if args.replicates < 1:
            raise ParameterError(f"replicates: at least 1, got {args.replicates}")
        # every case is drawn before any run, so bad input stops before the first one
        cases = {(n, t, d, seed): make_case(
            n, t, d, seed, degree=min(args.degree, n - 1), rate=args.rate, size=args.size,
            duration_ms=args.duration_ms, warmup_ms=args.warmup_ms, latency_ms=latency,
            variant=args.variant, idontwant_threshold=args.idontwant_threshold)
            for n, t, d in settings for seed in seeds}
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
                           drain_ms=1000), trace=True)
    report: dict[str, Any] = {"load_before": os.getloadavg(), "settings": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for n, topics, d in settings:
            name = f"n{n}-t{topics}-d{d}"
            runs: list[dict[str, Any]] = []
            for seed in seeds:
                for rep in range(args.replicates):
                    case = dict(cases[(n, topics, d, seed)], replicate=rep)
                    run = f"{name}-s{seed}-r{rep}" if len(seeds) > 1 or args.replicates > 1 \
                        else name
                    js_result = run_js(case, root, work, run)
                    js = all_measures(case, js_result)
                    ours = None
                    if simulate is not None:
                        ours_result = run_hedgerow(simulate, case)
                        (work / f"{run}.hedgerow.json").write_text(json.dumps(ours_result))
                        ours = all_measures(case, ours_result)
                    print(f"{run}: {len(case['edges'])} edges, {len(case['publications'])} "
                          f"messages, {case['duration_ms'] / 1000:.0f} s simulated, load "
                          f"{os.getloadavg()[0]:.2f}", flush=True)
                    print(table(run, js, ours), flush=True)
                    runs.append({
                        "seed": seed, "replicate": rep, "edges": len(case["edges"]),
                        "messages": len(case["publications"]), "js": js, "hedgerow": ours,
                        "js_setup_wall_s": js_result.get("setup_wall_seconds"),
                        "js_process_wall_s": js_result.get("process_wall_seconds"),
                        "js_publish_errors": len(js_result.get("publish_errors", [])),
                        "implementation": js_result.get("implementation"),
                        "load": os.getloadavg()[0]})
            entry: dict[str, Any] = {"nodes": n, "topics": topics, "D": d, "runs": runs}
            if len(runs) > 1:
                entry["js"] = summarize([r["js"] for r in runs])
                entry["hedgerow"] = (summarize([r["hedgerow"] for r in runs])
                                     if simulate is not None else None)
                print(summary_table(name, entry["js"], entry["hedgerow"]), flush=True)
            report["settings"][name] = entry
    report["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
