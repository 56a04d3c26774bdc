"""Reading join/leave event sequences written by ``hedgerow ingest churn``.

JVM-free (pandas/pyarrow only).  The events of an ingest output folder come
back as one numpy structured array sorted by ``seq`` (time, then source order):
fields ``time_s`` (float64, seconds from trace start), ``node`` (int32, ``0..n-1``)
and ``event`` (int8, :data:`JOIN` = 1 or :data:`LEAVE` = -1).  See
:mod:`hedgerow.pipeline.ingest.churn` and ``docs/ingest.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from hedgerow.errors import DataError

JOIN = 1
LEAVE = -1
EVENT_DTYPE = np.dtype([("time_s", np.float64), ("node", np.int32), ("event", np.int8)])


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
    df = pd.read_parquet(p / "events", columns=["seq", "time_s", "node", "event"])
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
    return pd.read_parquet(p / "nodes").sort_values("node").reset_index(drop=True)


def load_meta(path: str | os.PathLike) -> dict:
    """The ``meta.json`` of a churn output folder ({} when absent)."""
    m = Path(path) / "meta.json"
    return json.loads(m.read_text()) if m.exists() else {}
