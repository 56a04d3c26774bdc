"""Reading social-graph instances written by ``hedgerow ingest social`` / ``follower-graph``.

JVM-free (pandas/pyarrow only): single runs load the Parquet tables of an ingest
output folder into an :class:`~hedgerow.model.Instance` where every user is both
a node and a topic and ``node`` subscribes to ``topic`` when it follows (or is a
friend of) that user.  See :mod:`hedgerow.pipeline.ingest.social` and
``docs/ingest.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hedgerow.errors import DataError
from hedgerow.model import Instance
from hedgerow.userfiles import read_json, read_parquet


def _folder(path: str | os.PathLike) -> Path:
    p = Path(path)
    for part in ("subscriptions", "users"):
        if not (p / part).exists():
            raise DataError(f"{p}: not a social ingest output (missing {part}/)")
    return p


def load_meta(path: str | os.PathLike) -> dict:
    """The ``meta.json`` of an ingest output folder ({} when absent)."""
    m = Path(path) / "meta.json"
    return read_json(m, what="meta.json") if m.exists() else {}


def load_instance(path: str | os.PathLike) -> Instance:
    """Load a sampled or synthetic social instance.

    Parameters
    ----------
    path : str or path-like
        An output folder of ``hedgerow ingest social`` or ``follower-graph``.

    Returns
    -------
    Instance
        ``n_nodes == n_topics`` = number of users; ``meta`` holds the job's
        ``meta.json`` and, for BFS samples, the original user ids
        (``meta["user_ids"]``).

    Raises
    ------
    DataError
        When the folder is not an ingest output or its tables disagree.

    Examples
    --------
    >>> import tempfile, pandas as pd, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "users").mkdir(); (d / "subscriptions").mkdir()
    >>> pd.DataFrame({"node": [0, 1, 2]}).to_parquet(d / "users" / "p.parquet")
    >>> pd.DataFrame({"node": [0, 1, 2], "topic": [1, 0, 0]}).to_parquet(
    ...     d / "subscriptions" / "p.parquet")
    >>> inst = load_instance(d)
    >>> inst.n_nodes, inst.subscribers(0).tolist()
    (3, [1, 2])
    """
    p = _folder(path)
    users = read_parquet(p / "users", what="users/ table")
    subs = read_parquet(p / "subscriptions", what="subscriptions/ table",
                        columns=["node", "topic"])
    if "node" not in users.columns:
        raise DataError(f"{p}: users/ table has no 'node' column")
    n = len(users)
    if n == 0:
        raise DataError(f"{p}: users/ is empty")
    if not np.array_equal(np.sort(users["node"].to_numpy()), np.arange(n)):
        raise DataError(f"{p}: users/ node ids are not 0..{n - 1}")
    node = subs["node"].to_numpy(dtype=np.int64)
    topic = subs["topic"].to_numpy(dtype=np.int32)
    if len(node) and (node.min() < 0 or node.max() >= n or topic.min() < 0 or topic.max() >= n):
        raise DataError(f"{p}: subscriptions/ names a user outside 0..{n - 1}")
    order = np.lexsort((topic, node))
    node, topic = node[order], topic[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node, minlength=n), out=indptr[1:])
    meta = load_meta(p)
    if "user" in users.columns:
        meta["user_ids"] = users.sort_values("node")["user"].to_numpy()
    return Instance(n, n, indptr, topic, meta=meta)


def degree_ccdf(inst: Instance) -> pd.DataFrame:
    """Follower / followee CCDFs of an instance.

    ``followers`` of a user = subscribers of its topic; ``followees`` = its
    subscriptions.  ``ccdf`` is the fraction of users with degree ``>= k``.

    Returns
    -------
    pandas.DataFrame
        ``kind``, ``degree``, ``users``, ``ccdf`` (one row per degree present).

    Examples
    --------
    >>> inst = Instance.from_lists([[1], [0], [0]], n_topics=3)
    >>> degree_ccdf(inst).query("kind == 'followers'")["ccdf"].round(3).tolist()
    [1.0, 0.667, 0.333]
    """
    frames = []
    for kind, deg in (("followers", inst.topic_sizes), ("followees", inst.n_subs)):
        k, c = np.unique(np.asarray(deg, dtype=np.int64), return_counts=True)
        ccdf = c[::-1].cumsum()[::-1] / len(deg)
        frames.append(pd.DataFrame({"kind": kind, "degree": k, "users": c, "ccdf": ccdf}))
    return pd.concat(frames, ignore_index=True)


def plot_ccdfs(curves: dict[str, pd.DataFrame], png: str | os.PathLike) -> None:
    """Plot follower and followee CCDFs of several instances (log-log, Agg backend).

    Parameters
    ----------
    curves : dict of str to DataFrame
        Label -> :func:`degree_ccdf` frame.
    png : str or path-like
        Output image.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, kind in zip(axes, ("followers", "followees"), strict=True):
        for label, df in curves.items():
            d = df[(df["kind"] == kind) & (df["degree"] > 0)]
            ax.loglog(d["degree"], d["ccdf"], marker=".", markersize=3, linewidth=1, label=label)
        ax.set_xlabel(f"number of {kind}")
        ax.set_title(f"CCDF of {kind}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("fraction of users with >= k")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
