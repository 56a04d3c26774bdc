"""File formats of world inputs: the Goldfish topology JSON (:func:`read_topology_json`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.errors import DataError
from hedgerow.latency import from_matrix
from hedgerow.userfiles import read_json

__all__ = ["read_topology_json"]


def read_topology_json(path: str) -> dict[str, Any]:
    """Read a Goldfish-format topology JSON (the authors' generators' output).

    The file is ``{"summary": {...}, "nodes": [{"id", "adj", "proc_delay",
    "pub_prob", ...}, ...]}``: ``adj`` the row of link delays in ms as the
    authors' simulator uses them (integer ceil distances on the plane, round
    trips on the city network), ``proc_delay`` the node delay in ms and
    ``pub_prob`` the publishing probability (absent in older files: then every
    node with ``role == "PUB"`` publishes with equal probability).

    Returns
    -------
    dict
        ``latency`` (a matrix :class:`~hedgerow.latency.LatencyModel` named
        ``file:PATH``), ``proc`` ``(n,)`` and ``pub_prob`` ``(n,)``.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"topology file missing: {p}")
    data = read_json(p, what="topology file")
    try:
        nodes = sorted(data["nodes"], key=lambda x: int(x["id"]))
        adj = np.array([nd["adj"] for nd in nodes], dtype=np.float64)
        proc = np.array([float(nd["proc_delay"]) for nd in nodes])
        if all("pub_prob" in nd for nd in nodes):
            probs = np.array([float(nd["pub_prob"]) for nd in nodes])
        else:
            probs = np.array([1.0 if nd.get("role") == "PUB" else 0.0 for nd in nodes])
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{p}: not a Goldfish topology file ({exc})") from exc
    n = len(nodes)
    if [int(nd["id"]) for nd in nodes] != list(range(n)) or adj.shape != (n, n):
        raise DataError(f"{p}: node ids must be 0..{n - 1}, each with {n} adj delays")
    if probs.sum() <= 0:
        raise DataError(f"{p}: no node publishes (pub_prob all zero)")
    lat = from_matrix(adj, name=f"file:{p}", info={"source": str(p), "format": "goldfish"})
    return {"latency": lat, "proc": proc, "pub_prob": probs / probs.sum()}
