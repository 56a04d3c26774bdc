"""One run of an experiment: resolved spec in, tidy rows out.

:func:`run_one` is what both an in-process run and a Spark task execute, so
the same resolved run gives the same metric values wherever it runs.  It never
starts a JVM and never raises for a failing run: the error becomes a row with
``status = "failed"``.

Two kinds of run are dispatched on ``scenario.kind``:

``build``
    draw the workload with :func:`hedgerow.workloads.make_instance`, build the
    overlay with :func:`hedgerow.protocols.build` and measure it with
    :func:`hedgerow.metrics.overlay_summary` (the metrics of ``hedgerow
    build``); one row.
``run``
    call :func:`hedgerow.scenarios.run_scenario` (imported lazily); one row
    per epoch it returns.
``churn``
    draw the workload as for ``build`` and keep the protocol's overlay under
    churn with :func:`hedgerow.scenarios.churn.run_churn`; one row per snapshot
    (``epoch`` = snapshot index, ``time_s`` = its time).
"""

from __future__ import annotations

import json
import socket
import time
import traceback
import uuid
from collections.abc import Mapping
from typing import Any

from hedgerow.fingerprint import code_fingerprint
from hedgerow.pipeline.schema import CORE_COLUMNS, flatten_metrics, param_text

__all__ = ["base_row", "execute", "failed_rows", "run_one"]


def _payload(run: Any) -> dict[str, Any]:
    """Accept a :class:`hedgerow.specs.ResolvedRun` or its payload dict."""
    if hasattr(run, "payload"):
        return run.payload()
    return dict(run)


def base_row(run: Any) -> dict[str, Any]:
    """The descriptive columns of a run's rows (no metrics, no status).

    Examples
    --------
    >>> row = base_row({"run_id": "r1", "experiment": "e", "label": "ringpt",
    ...                 "scenario": {"kind": "build", "protocol": "ringpt", "params": {},
    ...                              "workload": {"nodes": 50, "topics": 10, "subs": 3,
    ...                                           "popularity": "rss"}, "seed": 2}})
    >>> row["nodes"], row["seed"], row["protocol"]
    (50, 2, 'ringpt')
    """
    p = _payload(run)
    scen = p["scenario"]
    wl = scen.get("workload") or {}
    opts = scen.get("run") or {}
    row: dict[str, Any] = {
        "run_id": p["run_id"],
        "experiment": p["experiment"],
        "label": p["label"],
        "kind": scen.get("kind", "build"),
        "protocol": scen["protocol"],
        "seed": int(scen.get("seed", 0)),
        "nodes": wl.get("nodes"),
        "topics": wl.get("topics"),
        "subs": param_text(wl.get("subs")),
        "popularity": wl.get("popularity"),
        "latency": scen.get("latency"),
        "scenario": opts.get("name"),
        "spec_json": json.dumps(scen, sort_keys=True, separators=(",", ":")),
        "point_json": json.dumps(p.get("point", {}), sort_keys=True, separators=(",", ":")),
    }
    for k, v in (scen.get("params") or {}).items():
        row[f"param_{k}"] = param_text(v)
    for k, v in opts.items():
        if k != "name" and v is not None:
            row[f"run_{k}"] = param_text(v)
    for k, v in (scen.get("churn") or {}).items():
        if v is not None:
            row[f"churn_{k}"] = param_text(v)
    return row


def _workload(scen: Mapping[str, Any]) -> tuple[Any, int]:
    """The run's synthetic instance and seed (kinds build and churn)."""
    from hedgerow.workloads import make_instance

    wl = scen["workload"]
    seed = int(scen.get("seed", 0))
    inst = make_instance(
        nodes=wl["nodes"],
        topics=wl["topics"],
        subs=wl["subs"],
        popularity=wl["popularity"],
        seed=seed,
    )
    return inst, seed


def _build_metrics(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    from hedgerow.metrics import overlay_summary
    from hedgerow.protocols import build

    inst, seed = _workload(scen)
    t0 = time.perf_counter()
    overlay, stats = build(scen["protocol"], inst, seed=seed, params=dict(scen.get("params") or {}))
    build_seconds = time.perf_counter() - t0
    metrics: dict[str, Any] = dict(
        overlay_summary(overlay, inst, diameter=bool(scen.get("diameter", True)))
    )
    metrics["control_messages"] = stats.get("control_messages")
    metrics["build_seconds"] = build_seconds
    for k, v in stats.items():
        if k != "control_messages":
            metrics[f"stat_{k}"] = v
    return [metrics]


def _scenario_metrics(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    from hedgerow.scenarios import run_scenario

    opts = dict(scen["run"])
    kwargs: dict[str, Any] = {
        "seed": int(scen.get("seed", 0)),
        "params": dict(scen.get("params") or {}),
        "progress": False,
    }
    for k in ("epochs", "topics", "interest", "attackers"):
        kwargs[k] = opts.get(k)
    if scen.get("latency") is not None:
        kwargs["latency"] = scen["latency"]
    rows = run_scenario(scen["protocol"], opts["name"], **kwargs)
    return [dict(r) for r in rows]


def _churn_metrics(scen: Mapping[str, Any]) -> list[dict[str, Any]]:
    from hedgerow.scenarios.churn import run_churn

    inst, seed = _workload(scen)
    opts = dict(scen["churn"])
    res = run_churn(
        scen["protocol"],
        inst,
        lifetime=float(opts["lifetime"]),
        duration=float(opts.get("duration", 1000.0)),
        snapshot_every=float(opts.get("snapshot_every", 200.0)),
        off_ratio=float(opts.get("off_ratio", 0.25)),
        timeout=float(opts.get("timeout", 0.1)),
        seed=seed,
        params=dict(scen.get("params") or {}),
        diameter=bool(scen.get("diameter", True)),
    )
    rows = []
    for i, row in enumerate(res.rows):
        out = {"epoch": i, **row}
        for k in ("join_seconds_median", "join_seconds_p99", "connected_snapshots"):
            out[k] = res.summary[k]
        rows.append(out)
    return rows


def execute(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run a resolved scenario and return its raw metric dicts (raises on error).

    Examples
    --------
    >>> out = execute({"kind": "build", "protocol": "ringpt", "params": {}, "seed": 0,
    ...                "diameter": False,
    ...                "workload": {"nodes": 60, "topics": 8, "subs": 2, "popularity": "rss"}})
    >>> len(out), out[0]["partitioned_topics"]
    (1, 0)
    """
    kind = scenario.get("kind", "build")
    if kind == "build":
        return _build_metrics(scenario)
    if kind == "run":
        return _scenario_metrics(scenario)
    if kind == "churn":
        return _churn_metrics(scenario)
    raise ValueError(f"unknown run kind {kind!r}")


def _finish(
    row: dict[str, Any], status: str, wall: float, attempt: str, at: float | None = None
) -> dict[str, Any]:
    row["status"] = status
    row["wall_seconds"] = float(wall)
    row["finished_at"] = time.time() if at is None else at
    row["attempt_id"] = attempt
    row.setdefault("host", socket.gethostname())
    row.setdefault("code", code_fingerprint())
    return row


def failed_rows(run: Any, error: str, tb: str = "", wall: float = 0.0) -> list[dict[str, Any]]:
    """The single ``failed`` row of a run that raised (or whose task died)."""
    row = base_row(run)
    row["error"] = error
    row["traceback"] = tb
    return [_finish(row, "failed", wall, uuid.uuid4().hex)]


def run_one(run: Any) -> list[dict[str, Any]]:
    """Run one resolved run and return its tidy rows.

    Parameters
    ----------
    run : hedgerow.specs.ResolvedRun or dict
        The run or its :meth:`~hedgerow.specs.ResolvedRun.payload`.

    Returns
    -------
    list of dict
        One row for ``kind: build``, one per epoch for ``kind: run``; on any
        exception one row with ``status = "failed"``, ``error`` (type and
        message) and ``traceback``.

    Examples
    --------
    >>> from hedgerow.specs import parse_spec
    >>> spec = parse_spec({"experiment": "doc", "scenario": {"protocol": "ringpt",
    ...     "diameter": False, "workload": {"nodes": 60, "topics": 8, "subs": 2}}})
    >>> [row] = run_one(spec.expand()[0])
    >>> row["status"], row["nodes"], row["partitioned_topics"]
    ('ok', 60, 0.0)
    """
    p = _payload(run)
    attempt = uuid.uuid4().hex
    t0 = time.perf_counter()
    try:
        results = execute(p["scenario"])
    except Exception as e:  # a failing run becomes a row, the sweep goes on
        wall = time.perf_counter() - t0
        msg = f"{type(e).__name__}: {e}"
        return failed_rows(p, msg, traceback.format_exc(limit=20), wall)
    wall = time.perf_counter() - t0
    base = base_row(p)
    rows = []
    at = time.time()
    epochs = len(results) > 1 or p["scenario"].get("kind") == "run"
    for i, metrics in enumerate(results):
        m = dict(metrics)
        epoch = m.pop("epoch", i if epochs else None)
        row = dict(base)
        for k, v in flatten_metrics(m, reserved=CORE_COLUMNS).items():
            # a metric repeating a descriptive column with the same value adds nothing
            if k.startswith("metric_") and row.get(k[len("metric_") :]) == v:
                continue
            row[k] = v
        row["epoch"] = None if epoch is None else int(epoch)
        rows.append(_finish(row, "ok", wall, attempt, at))
    if not rows:
        return failed_rows(p, "RuntimeError: the run returned no rows", "", wall)
    return rows
