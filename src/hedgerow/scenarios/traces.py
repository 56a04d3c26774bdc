"""Churn traces: reading the join/leave sequences of ``hedgerow ingest churn``, replaying them.

JVM-free (pandas/pyarrow only).  The events of an ingest output folder come
back as one numpy structured array sorted by ``seq`` (time, then source order):
fields ``time_s`` (float64, seconds from trace start), ``node`` (int32, ``0..n-1``)
and ``event`` (int8, :data:`JOIN` = 1 or :data:`LEAVE` = -1).  See
:mod:`hedgerow.pipeline.ingest.churn` and ``docs/ingest.md``.
:func:`trace_churn` turns such a sequence into the *control* of a churn run
(:func:`hedgerow.scenarios.churn.run_churn`, ``trace=``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hedgerow.errors import DataError, ParameterError
from hedgerow.userfiles import read_json, read_parquet

JOIN = 1
LEAVE = -1
EVENT_DTYPE = np.dtype([("time_s", np.float64), ("node", np.int32), ("event", np.int8)])

__all__ = ["EVENT_DTYPE", "JOIN", "LEAVE", "load_events", "load_meta", "load_nodes", "trace_churn"]


def load_events(path: str | os.PathLike) -> np.ndarray:
    """Load a churn event sequence.

    Parameters
    ----------
    path : str or path-like
        An output folder of ``hedgerow ingest churn``.

    Returns
    -------
    numpy.ndarray
        Structured array of :data:`EVENT_DTYPE`, in event order.

    Raises
    ------
    DataError
        When the folder is not a churn output or holds an unknown event code.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "events").mkdir()
    >>> pd.DataFrame({"seq": [1, 0], "time_s": [5.0, 0.0], "node": [0, 0],
    ...               "event": [-1, 1]}).to_parquet(d / "events" / "p.parquet")
    >>> ev = load_events(d)
    >>> ev["event"].tolist(), ev["time_s"].tolist()
    ([1, -1], [0.0, 5.0])
    """
    p = Path(path)
    if not (p / "events").exists():
        raise DataError(f"{p}: not a churn ingest output (missing events/)")
    df = read_parquet(p / "events", what="events/ table",
                      columns=["seq", "time_s", "node", "event"])
    df = df.sort_values("seq", kind="stable")
    bad = ~df["event"].isin([JOIN, LEAVE])
    if bad.any():
        raise DataError(f"{p}: events/ holds an unknown event code {df['event'][bad].iloc[0]}")
    out = np.empty(len(df), dtype=EVENT_DTYPE)
    out["time_s"] = df["time_s"].to_numpy(dtype=np.float64)
    out["node"] = df["node"].to_numpy(dtype=np.int32)
    out["event"] = df["event"].to_numpy(dtype=np.int8)
    return out


def load_nodes(path: str | os.PathLike) -> pd.DataFrame:
    """The ``nodes/`` table (``node`` and ``machine_id`` or ``user_id``), sorted by node."""
    p = Path(path)
    if not (p / "nodes").exists():
        raise DataError(f"{p}: not a churn ingest output (missing nodes/)")
    return read_parquet(p / "nodes", what="nodes/ table").sort_values("node").reset_index(drop=True)


def load_meta(path: str | os.PathLike) -> dict:
    """The ``meta.json`` of a churn output folder ({} when absent)."""
    m = Path(path) / "meta.json"
    return read_json(m, what="meta.json") if m.exists() else {}


def trace_churn(
    events: np.ndarray, n_nodes: int, *, speedup: float = 1.0, duration: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Turn a replayed join/leave trace into ``(online0, events)``.

    Parameters
    ----------
    events : numpy.ndarray
        :data:`EVENT_DTYPE` events in order, e.g. from :func:`load_events`
        (an output of ``hedgerow ingest churn``).
    n_nodes : int
        Nodes of the instance; every trace node must be below it.
    speedup : float, default 1.0
        Trace seconds per simulated second.
    duration : float, optional
        Keep events up to this simulated time.

    Returns
    -------
    online0, events
        Nodes that join at time 0 (they start online) and the later events, in
        simulated seconds.

    Examples
    --------
    >>> ev = np.array([(0.0, 0, 1), (0.0, 1, 1), (50.0, 1, -1), (80.0, 2, 1)], dtype=EVENT_DTYPE)
    >>> on, later = trace_churn(ev, 3, speedup=10.0)
    >>> on.tolist(), later["time_s"].tolist()
    ([True, True, False], [5.0, 8.0])
    """
    if not speedup > 0:
        raise ParameterError(f"speedup must be positive, got {speedup}")
    ev = np.asarray(events, dtype=EVENT_DTYPE)
    if len(ev) and int(ev["node"].max()) >= n_nodes:
        raise ParameterError(
            f"the trace has node {int(ev['node'].max())}, but the workload has {n_nodes} nodes;"
            f" use at least {int(ev['node'].max()) + 1} nodes"
        )
    at0 = (ev["time_s"] <= 0.0) & (ev["event"] == JOIN)
    online0 = np.zeros(n_nodes, dtype=bool)
    online0[ev["node"][at0]] = True
    later = ev[~(ev["time_s"] <= 0.0)].copy()
    later["time_s"] = later["time_s"] / speedup
    if duration is not None:
        later = later[later["time_s"] <= duration]
    return online0, later
