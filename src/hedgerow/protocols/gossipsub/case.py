"""The case format: one JSON object both GossipSub implementations run (``docs/gossipsub.md``).

A *case* fixes everything a run depends on -- the connection graph, the
subscriptions, the parameters, the link latencies and the publication
schedule -- so that Hedgerow's engine and a production implementation
(``benchmarks/anchors/``) run on identical inputs::

    {"nodes": N, "edges": [[a, b], ...], "topics": T, "subscriptions": [[node, topic], ...],
     "params": {"D": 6, "D_lo": 4, ..., "variant": "v1.1", "scoring": false},
     "latency_ms": 20.0, "publications": [[t_ms, publisher, topic, size_bytes], ...],
     "duration_ms": 60000, "warmup_ms": 10000, "seed": 1}

``edges`` are undirected connections, ``a`` the dialer; ``latency_ms`` is one
value or one per edge.  Optional keys: ``upload_mbps`` (one value or one per
node; unlimited when absent), ``validation_ms`` and ``heartbeat_offsets_ms``
(one per node, in ``[0, heartbeat_ms)``: node ``i``'s heartbeats run at every
instant after t = 0 that is ``offset_i`` modulo ``heartbeat_ms``, an offset of 0
at ``heartbeat_ms``; the engine's ``heartbeat_phase="random"`` with these phases
instead of drawn ones) and ``replicate`` (an integer, 0 by default: another
draw of the run's own random choices, mesh peers and gossip targets, on the same
inputs; replicate 0 is the run of the seed alone).  The result:
``deliveries`` (first arrival of every message at every node that got it),
``duplicates`` (per message), ``control_sent`` (per kind and node, after
warm-up), ``heartbeats`` (after warm-up), ``mesh_degree`` (mean per node and
subscribed topic over the heartbeats after warm-up), ``wall_seconds`` and
``simulated_ms``.

Examples
--------
>>> case = {"nodes": 4, "edges": [[0, 1], [1, 2], [2, 3], [3, 0]], "topics": 1,
...         "subscriptions": [[v, 0] for v in range(4)],
...         "params": {"D": 2, "D_lo": 1, "D_hi": 3, "D_lazy": 1, "D_score": 1, "D_out": 0},
...         "latency_ms": 10.0, "publications": [[2000.0, 0, 0, 100]],
...         "duration_ms": 5000, "warmup_ms": 1000, "seed": 1}
>>> res = simulate_case(case)
>>> sorted(node for _, node, _ in res["deliveries"]), res["heartbeats"]
([0, 1, 2, 3], 5)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from hedgerow.dissemination.contended import Network
from hedgerow.errors import ParameterError
from hedgerow.protocols.engine_api import Publications
from hedgerow.protocols.gossipsub.engine import CASE_PARAMS, Connections, GossipSubEngine
from hedgerow.protocols.gossipsub.params import score_preset
from hedgerow.protocols.gossipsub.protocol import EngineScore

__all__ = ["CASE_PARAMS", "case_settings", "simulate_case"]

_REQUIRED = ("nodes", "edges", "topics", "subscriptions", "publications", "duration_ms")


def case_settings(params: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's settings of a case's ``params`` (unknown names refused)."""
    out = {}
    for k, v in params.items():
        if k not in CASE_PARAMS:
            raise ParameterError(f"case params: unknown {k!r}; allowed: "
                                 f"{', '.join(CASE_PARAMS)}", key=k)
        out[CASE_PARAMS[k]] = v
    return out


def simulate_case(case: Mapping[str, Any], *, trace: bool = False) -> dict[str, Any]:
    """Run one case (module docstring) and return its result object.

    Parameters
    ----------
    case : mapping
        The case (module docstring).
    trace : bool, default False
        Also return the IWANT trace of the run after warm-up, in the JS
        runner's format (``benchmarks/anchors/gossipsub_js_runner.mjs``):
        ``iwant_log``, every IWANT sent as ``[t_ms, node, peer, [msg, ...]]``;
        ``iwant_answers``, every copy sent in answer to one as
        ``[t_ms, node, asker, [msg]]``; and ``copy_log``, every data copy
        that arrived as ``[msg, node, sender, t_ms]``.  The run is the same.

    Returns
    -------
    dict
        The result object (module docstring), with the trace's keys when asked.

    Examples
    --------
    >>> case = {"nodes": 3, "edges": [[0, 1], [1, 2], [0, 2]], "topics": 1,
    ...         "subscriptions": [[v, 0] for v in range(3)], "latency_ms": 10.0,
    ...         "params": {"D": 2, "D_lo": 1, "D_hi": 2, "D_lazy": 1, "D_score": 1, "D_out": 0},
    ...         "publications": [[1500.0, 0, 0, 100]], "duration_ms": 3000, "warmup_ms": 1000}
    >>> res = simulate_case(case, trace=True)
    >>> sorted(res["copy_log"])  # flood publishing, then each relays to the other
    [[0, 1, 0, 1510.0], [0, 1, 2, 1520.0], [0, 2, 0, 1510.0], [0, 2, 1, 1520.0]]
    >>> res["iwant_log"], res["iwant_answers"]
    ([], [])
    """
    if not isinstance(case, Mapping):
        raise ParameterError("case: a JSON object", key="case")
    missing = [k for k in _REQUIRED if k not in case]
    if missing:
        raise ParameterError(f"case: missing {missing[0]!r}", key=missing[0])
    n = int(case["nodes"])
    T = int(case["topics"])
    if n < 1 or T < 1:
        raise ParameterError("case: nodes and topics must be positive", key="nodes")
    conn = Connections.from_edges(n, case["edges"])
    subs = np.zeros((n, T), dtype=bool)
    s = np.asarray(case["subscriptions"], dtype=np.int64).reshape(-1, 2)
    if len(s) and (s[:, 0].min() < 0 or s[:, 0].max() >= n or s[:, 1].min() < 0
                   or s[:, 1].max() >= T):
        raise ParameterError("case: a subscription names an unknown node or topic",
                             key="subscriptions")
    subs[s[:, 0], s[:, 1]] = True
    edges = np.asarray(case["edges"], dtype=np.int64).reshape(-1, 2)
    lat = np.asarray(case.get("latency_ms", 0.0), dtype=np.float64)
    if lat.ndim == 0:
        delay = np.full(conn.nnz, float(lat))
    else:
        if lat.shape != (len(edges),):
            raise ParameterError("case: latency_ms is one value or one per edge",
                                 key="latency_ms")
        lookup = {}
        for (a, b), x in zip(edges.tolist(), lat.tolist(), strict=True):
            lookup[(a, b)] = x
            lookup[(b, a)] = x
        row = conn.row_of
        delay = np.array([lookup[(int(u), int(w))] for u, w in zip(row, conn.indices,
                                                                   strict=True)])
    pubs_raw = np.asarray(case["publications"], dtype=np.float64).reshape(-1, 4)
    pubs = Publications.create(pubs_raw[:, 1].astype(np.int64), pubs_raw[:, 2].astype(np.int64),
                               pubs_raw[:, 0], pubs_raw[:, 3])
    up = case.get("upload_mbps", np.inf)
    network = Network(np.broadcast_to(np.asarray(up, dtype=np.float64), (n,)).copy(),
                      np.full(n, np.inf), validation_ms=float(case.get("validation_ms", 0.0)))
    settings = case_settings(case.get("params", {}))
    settings["warmup_ms"] = float(case.get("warmup_ms", 0.0))
    replicate = int(case.get("replicate", 0))
    if replicate < 0:
        raise ParameterError("case: replicate must be a non-negative integer", key="replicate")
    seed = int(case.get("seed", 0))
    rng = np.random.default_rng([seed, replicate] if replicate else seed)
    score = None
    if settings.get("scoring"):
        params, thresholds = score_preset(str(settings.get("variant", "v1.1")), T)
        settings["gossip_threshold"] = thresholds.gossip
        settings["publish_threshold"] = thresholds.publish
        settings["accept_px_threshold"] = thresholds.accept_px
        settings["opportunistic_graft_threshold"] = thresholds.opportunistic_graft
        score = EngineScore(params)
    t0 = time.perf_counter()
    phases = None
    if "heartbeat_offsets_ms" in case:
        hb = float(settings.get("heartbeat_ms", 1000.0))
        off = np.asarray(case["heartbeat_offsets_ms"], dtype=np.float64)
        if off.shape != (n,) or not (np.all(off >= 0) and np.all(off < hb)):
            raise ParameterError("case: heartbeat_offsets_ms must be one per node, each in "
                                 "[0, heartbeat_ms)", key="heartbeat_offsets_ms")
        phases = np.where(off == 0, hb, off)
        settings["heartbeat_phase"] = "random"
    log = 0
    if trace:  # room for every message sent: heartbeats' gossip and every copy, with a margin
        copies = len(pubs_raw) * (2 * conn.nnz + n)
        gossip = conn.nnz * T * (int(float(case["duration_ms"]) // settings.get(
            "heartbeat_ms", 1000.0)) + 2)
        log = copies + gossip + 4 * n * T + 1024
    eng = GossipSubEngine(subs, conn, delay, np.zeros(n), network, pubs, settings, rng,
                          score_fn=score, log=log, phases=phases)
    duration = float(case["duration_ms"])
    eng.run_until(duration)
    wall = time.perf_counter() - t0
    m_idx, node = np.nonzero(np.isfinite(eng.arrival))
    deliveries = [[int(a), int(b), float(eng.arrival[a, b])] for a, b in zip(m_idx, node,
                                                                             strict=True)]
    mean = eng.mean_mesh_degree()
    vv, tt = np.nonzero(np.isfinite(mean))
    out = {
        "deliveries": deliveries,
        "duplicates": eng.duplicates.tolist(),
        "control_sent": {k: v.tolist() for k, v in eng.control_sent().items()},
        "heartbeats": eng.heartbeats_after_warmup,
        "mesh_degree": [[int(a), int(b), float(mean[a, b])] for a, b in zip(vv, tt,
                                                                            strict=True)],
        "wall_seconds": wall,
        "simulated_ms": duration,
    }
    if trace:
        out.update(_trace(eng.sent_log(), settings["warmup_ms"]))
    return out


def _trace(log: Mapping[str, Any], warmup_ms: float) -> dict[str, list[Any]]:
    """The IWANT trace (:func:`simulate_case`) from the engine's log of messages sent."""
    if log["full"]:
        raise ParameterError("case: the trace's log ran out of room", key="trace")
    iwants, answers, copies = [], [], []
    for t, ta, kind, v, w, what, ids in zip(
            log["t_send"].tolist(), log["t_arrive"].tolist(), log["kind"],
            log["sender"].tolist(), log["receiver"].tolist(), log["what"].tolist(),
            log["ids"], strict=True):
        if kind in ("data", "iwant-answer"):
            if ta >= 0 and ta >= warmup_ms:
                copies.append([int(what), int(w), int(v), float(ta)])
            if kind == "iwant-answer" and t >= warmup_ms:
                answers.append([float(t), int(v), int(w), [int(what)]])
        elif kind == "iwant" and t >= warmup_ms:
            iwants.append([float(t), int(v), int(w), [int(x) for x in ids.tolist()]])
    return {"iwant_log": iwants, "iwant_answers": answers, "copy_log": copies}
