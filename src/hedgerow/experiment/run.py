"""One run of an experiment: resolved spec in, tidy rows out.

:func:`run_one` is what both an in-process run and a Spark task execute, so
the same resolved run gives the same metric values wherever it runs.  It never
starts a JVM and never raises for a failing run: the error becomes a row with
``status = "failed"``.

The kind of run (``scenario.kind``) is looked up in the one table
:data:`hedgerow.scenarios.kinds.KINDS` (``build``: one row; ``run``: one per
epoch; ``churn``: one per snapshot).
"""

from __future__ import annotations

import json
import socket
import time
import traceback
import uuid
from collections.abc import Mapping
from typing import Any

from hedgerow.experiment.rows import CORE_COLUMNS, flatten_metrics, param_text
from hedgerow.fingerprint import code_fingerprint

__all__ = ["base_row", "execute", "failed_rows", "run_one", "usage_since", "usage_start"]


def _peak_rss_mib() -> float | None:
    """The process's peak resident memory in MiB since the last reset (Linux), else ``None``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def usage_start() -> float:
    """Reset the process's peak resident memory (Linux) and return the CPU clock.

    Writing ``5`` to ``/proc/self/clear_refs`` makes the kernel's high-water
    mark ``VmHWM`` start again from the current resident size, so a worker
    process that runs many runs one after another reports each run's own peak
    (:func:`usage_since`).  Where that is not possible the peak stays the
    process's, which :func:`usage_since` then reports.

    Examples
    --------
    >>> t0 = usage_start()
    >>> cpu, peak = usage_since(t0)
    >>> cpu >= 0.0 and (peak is None or peak > 0)
    True
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return time.process_time()


def usage_since(cpu0: float) -> tuple[float, float | None]:
    """CPU seconds of this process since ``cpu0`` (every thread) and its peak MiB (or ``None``)."""
    return time.process_time() - cpu0, _peak_rss_mib()


def _payload(run: Any) -> dict[str, Any]:
    """Accept a :class:`hedgerow.experiment.spec.ResolvedRun` or its payload dict.

    Anything else is a :class:`ParameterError` naming the argument ``run``.

    Examples
    --------
    >>> _payload({"bad": 1})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: run_one: run must be a ResolvedRun ...; missing: ...
    """
    from collections.abc import Mapping

    from hedgerow.errors import ParameterError

    if hasattr(run, "payload"):
        return run.payload()
    need = ("experiment", "label", "run_id", "scenario")
    what = ("run_one: run must be a ResolvedRun or its payload (a dict with keys "
            f"{', '.join(need)})")
    if not isinstance(run, Mapping):
        raise ParameterError(f"{what}; got {type(run).__name__}", key="run")
    missing = [k for k in need if k not in run]
    if missing:
        raise ParameterError(f"{what}; missing: {', '.join(missing)}", key="run")
    if not isinstance(run["scenario"], Mapping):
        raise ParameterError(f"run_one: run['scenario'] must be a dict, got "
                             f"{type(run['scenario']).__name__}", key="run.scenario")
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
    from hedgerow.scenarios.kinds import KINDS

    kind = scenario.get("kind", "build")
    if kind not in KINDS:
        raise ValueError(f"unknown run kind {kind!r}; allowed: {', '.join(KINDS)}")
    return KINDS[kind].run(scenario)


def _finish(
    row: dict[str, Any], status: str, wall: float, attempt: str, at: float | None = None,
    usage: tuple[float, float | None] | None = None,
) -> dict[str, Any]:
    row["status"] = status
    row["wall_seconds"] = float(wall)
    if usage is not None:
        row["cpu_seconds"] = float(usage[0])
        row["peak_rss_mib"] = None if usage[1] is None else float(usage[1])
    row["finished_at"] = time.time() if at is None else at
    row["attempt_id"] = attempt
    row.setdefault("host", socket.gethostname())
    row.setdefault("code", code_fingerprint())
    return row


def failed_rows(
    run: Any, error: str, tb: str = "", wall: float = 0.0,
    usage: tuple[float, float | None] | None = None,
) -> list[dict[str, Any]]:
    """The single ``failed`` row of a run that raised (or whose task died)."""
    row = base_row(run)
    row["error"] = error
    row["traceback"] = tb
    return [_finish(row, "failed", wall, uuid.uuid4().hex, usage=usage)]


def _ran_with(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The checked parameters of the run's protocol (rows that do not carry their own)."""
    from hedgerow.protocols import get_protocol

    return get_protocol(scenario["protocol"], **dict(scenario.get("params") or {})).checked()


def run_one(run: Any) -> list[dict[str, Any]]:
    """Run one resolved run and return its tidy rows.

    Parameters
    ----------
    run : hedgerow.experiment.spec.ResolvedRun or dict
        The run or its :meth:`~hedgerow.experiment.spec.ResolvedRun.payload`.

    Returns
    -------
    list of dict
        One row for ``kind: build``, one per epoch for ``kind: run``; the
        ``param_<name>`` columns hold every parameter value the protocol ran
        with (defaults and the scenario's bound values included); on any
        exception one row with ``status = "failed"``, ``error`` (type and
        message) and ``traceback``.  Every row carries the run's
        ``wall_seconds``, ``cpu_seconds`` (the process's CPU time, all
        threads) and ``peak_rss_mib`` (the process's peak resident memory
        during the run, :func:`usage_start`; empty where the system does not
        say).

    Examples
    --------
    >>> from hedgerow.experiment import parse_spec
    >>> spec = parse_spec({"experiment": "doc", "scenario": {"protocol": "ringpt",
    ...     "diameter": False, "workload": {"nodes": 60, "topics": 8, "subs": 2}}})
    >>> [row] = run_one(spec.expand()[0])
    >>> row["status"], row["nodes"], row["partitioned_topics"]
    ('ok', 60, 0.0)
    """
    p = _payload(run)
    attempt = uuid.uuid4().hex
    cpu0 = usage_start()
    t0 = time.perf_counter()
    try:
        results = execute(p["scenario"])
    except Exception as e:  # a failing run becomes a row, the sweep goes on
        wall = time.perf_counter() - t0
        msg = f"{type(e).__name__}: {e}"
        return failed_rows(p, msg, traceback.format_exc(limit=20), wall, usage_since(cpu0))
    wall = time.perf_counter() - t0
    usage = usage_since(cpu0)
    base = base_row(p)
    ran = _ran_with(p["scenario"])
    rows = []
    at = time.time()
    epochs = len(results) > 1 or p["scenario"].get("kind") == "run"
    for i, metrics in enumerate(results):
        m = dict(metrics)
        epoch = m.pop("epoch", i if epochs else None)
        row = dict(base)
        for k, v in (m.pop("params", None) or ran).items():
            row[f"param_{k}"] = param_text(v)
        for k, v in flatten_metrics(m, reserved=CORE_COLUMNS).items():
            # a metric repeating a descriptive column with the same value adds nothing
            if k.startswith("metric_") and row.get(k[len("metric_") :]) == v:
                continue
            row[k] = v
        row["epoch"] = None if epoch is None else int(epoch)
        rows.append(_finish(row, "ok", wall, attempt, at, usage))
    if not rows:
        return failed_rows(p, "RuntimeError: the run returned no rows", "", wall, usage)
    return rows
