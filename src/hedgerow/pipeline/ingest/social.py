"""Social graphs -> subscription instances by BFS (snowball) sampling (Spark job).

OMen §6.1 (after Vitis §IV-E and its reference [30]): "We start with a random
set of a few users as seeds, traverse the social graph via breadth first
search, until reaching the target number of nodes; our returned sample
includes all edges among the nodes."  Each sampled user is a topic and its
followers are the topic's subscribers; in an undirected (friendship) graph
such as Facebook, friends subscribe to each other.

The BFS is written as iterative frontier joins on DataFrames (no GraphFrames):

1. ``seeds`` users are drawn uniformly (seeded ``xxhash64`` order of the ids).
2. Each round joins the frontier with the adjacency, anti-joins the visited
   set, and adds the new users with their BFS level.  When a level would
   overshoot the target, a seeded uniform subset of it fills the sample to
   exactly ``size`` users.  When the frontier dies out before the target (the
   seeds' components are exhausted), ``seeds`` fresh seeds are drawn among the
   unvisited users.
3. The sample keeps every edge among sampled users.

The traversal always follows edges both ways; with ``directed=True`` an edge
line ``u v`` means "u follows v" and only u subscribes to v.  ``size="all"``
samples the whole graph (what the "FB 10K-style" sample is on ego-Facebook,
which has only 4,039 users; see ``docs/ingest.md``).

Output (``--out DIR``): ``users/`` (``node`` 0.. by ascending original id,
``user`` original id, ``level`` BFS level, ``seed`` bool), ``subscriptions/``
(``node`` subscribes to ``topic``; topic ``t`` is user ``t``), ``ccdf.csv``
(follower/followee CCDFs) and ``meta.json``.  Read it back with
:func:`hedgerow.workloads.social.load_instance`.
"""

from __future__ import annotations

import os
import time
from typing import Any

from hedgerow.data import data_path
from hedgerow.errors import DataError, ParameterError
from hedgerow.pipeline.ingest._common import (
    INT_RE,
    LineFormat,
    check_out,
    file_info,
    hash_sample,
    raise_first_error,
    read_lines,
    write_outputs,
)

FACEBOOK = ("snap-ego-facebook", "facebook_combined.txt.gz")


def _edge_ids(fields: list[str]) -> str | None:
    return "a user id is negative" if any(int(f) < 0 for f in fields[:2]) else None


#: an edge list's lines, as :func:`read_edges` parses them (``hedgerow ingest social --edges``
#: is checked against it before Spark starts)
EDGE_LINES = LineFormat("edge list", "u v", "space", (("u", "int", False), ("v", "int", False)),
                        2, comments=True, extra=_edge_ids)
REED98 = ("facebook100-reed98", "socfb-Reed98.edges")


def read_edges(spark, path: str | os.PathLike):
    """Parse and validate a white-space separated edge list ``u v``.

    Blank lines and comment lines starting with ``#`` or ``%`` are skipped;
    every other line must hold exactly two non-negative integers.

    Returns
    -------
    pyspark.sql.DataFrame
        ``u``, ``v`` (long), one row per edge line.

    Raises
    ------
    DataError
        Naming the file and line of the first malformed line.
    """
    from pyspark.sql import functions as F

    what = "edge list"
    lines = read_lines(spark, path, what)
    text = F.trim("value")
    body = lines.filter((text != "") & ~text.startswith("#") & ~text.startswith("%"))
    fields = F.split(text, r"\s+")
    u = F.try_element_at(fields, F.lit(1))
    v = F.try_element_at(fields, F.lit(2))
    nf = F.size(fields)
    err = (
        F.when(nf != 2, F.concat(F.lit("expected 2 columns, found "), nf.cast("string")))
        .when(~u.rlike(INT_RE), F.concat(F.lit("column 1 (u) is not an integer: '"), u, F.lit("'")))
        .when(~v.rlike(INT_RE), F.concat(F.lit("column 2 (v) is not an integer: '"), v, F.lit("'")))
        .when(
            u.try_cast("long").isNull() | v.try_cast("long").isNull(),
            F.lit("a user id is out of range"),
        )
        .when((u.try_cast("long") < 0) | (v.try_cast("long") < 0), F.lit("a user id is negative"))
    )
    parsed = body.select("_mid", "value", u.alias("u"), v.alias("v"), err.alias("_err")).cache()
    raise_first_error(parsed, lines, path, what)
    return parsed.select(F.col("u").cast("long"), F.col("v").cast("long"))


def _parse_size(size: int | str) -> int | None:
    if isinstance(size, str):
        if size.strip().lower() == "all":
            return None
        if not size.strip().isdigit():
            raise ParameterError(f"size must be a positive integer or 'all', got {size!r}")
        size = int(size)
    if int(size) < 1:
        raise ParameterError(f"size must be a positive integer or 'all', got {size!r}")
    return int(size)


def bfs_sample(spark, edges, *, size: int | str, seeds: int, seed: int):
    """Snowball-sample users by iterative frontier joins.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    edges : pyspark.sql.DataFrame
        ``u``, ``v`` edge rows (direction ignored for the traversal).
    size : int or "all"
        Target number of users; ``"all"`` takes every user.
    seeds : int
        Seeds drawn at the start and at each restart.
    seed : int
        The run's seed (via :class:`~hedgerow.model.RngStreams`).

    Returns
    -------
    sample : pyspark.sql.DataFrame
        ``user``, ``level`` (BFS level, 0 for seeds), ``seed`` (bool).
    info : dict
        ``graph_users``, ``rounds``, ``restarts``.

    Raises
    ------
    ParameterError
        When ``size`` exceeds the number of users in the graph.
    """
    from pyspark.sql import functions as F

    if int(seeds) < 1:
        raise ParameterError(f"seeds must be >= 1, got {seeds}")
    adj = (
        edges.select(F.col("u").alias("src"), F.col("v").alias("dst"))
        .union(edges.select(F.col("v").alias("src"), F.col("u").alias("dst")))
        .filter(F.col("src") != F.col("dst"))
        .distinct()
        .cache()
    )
    users = edges.select(F.col("u").alias("user")).union(edges.select(F.col("v").alias("user")))
    users = users.distinct().cache()
    n_users = users.count()
    target = _parse_size(size)
    if target is None:
        target = n_users
    if target > n_users:
        raise ParameterError(
            f"size {target} is larger than the graph ({n_users} users); use size='all' "
            "for the largest sample"
        )

    visited = hash_sample(users, "user", min(int(seeds), target), seed, "social.seeds").select(
        "user", F.lit(0).alias("level"), F.lit(True).alias("seed")
    )
    visited = visited.localCheckpoint()
    frontier = visited.select("user")
    have = visited.count()
    level, restarts, rounds = 0, 0, 0
    while have < target:
        rounds += 1
        level += 1
        nxt = (
            frontier.join(adj, frontier["user"] == adj["src"])
            .select(F.col("dst").alias("user"))
            .distinct()
            .join(visited.select("user"), "user", "left_anti")
            .localCheckpoint()
        )
        k = nxt.count()
        is_seed = False
        if k == 0:
            restarts += 1
            is_seed = True
            pool = users.join(visited.select("user"), "user", "left_anti")
            nxt = hash_sample(
                pool, "user", min(int(seeds), target - have), seed, f"social.restart.{restarts}"
            )
            nxt = nxt.localCheckpoint()
            k = nxt.count()
        need = target - have
        if k > need:
            nxt = hash_sample(nxt, "user", need, seed, f"social.level.{level}").localCheckpoint()
            k = need
        add = nxt.select("user", F.lit(level).alias("level"), F.lit(is_seed).alias("seed"))
        visited = visited.unionByName(add).localCheckpoint()
        frontier = nxt.select("user")
        have += k
    info = {"graph_users": int(n_users), "rounds": rounds, "restarts": restarts}
    return visited, info


def sample_instance(
    spark,
    edges_path: str | os.PathLike,
    *,
    size: int | str,
    seeds: int = 3,
    seed: int = 0,
    directed: bool = False,
):
    """BFS-sample a social graph and build its subscription tables.

    Returns
    -------
    users : pyspark.sql.DataFrame
        ``node, user, level, seed``.
    subs : pyspark.sql.DataFrame
        ``node, topic`` (``node`` follows / is a friend of ``topic``).
    info : dict
        Graph and sample counts.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    edges = read_edges(spark, edges_path).cache()
    n_edge_lines = edges.count()
    sample, info = bfs_sample(spark, edges, size=size, seeds=seeds, seed=seed)
    users = sample.withColumn(
        "node", (F.row_number().over(Window.orderBy("user")) - 1).cast("int")
    ).select("node", "user", "level", "seed")
    users = users.localCheckpoint()
    ids = users.select("user", "node")
    rel = edges.select(F.col("u").alias("a"), F.col("v").alias("b")).filter(
        F.col("a") != F.col("b")
    )
    if not directed:
        rel = rel.union(rel.select(F.col("b").alias("a"), F.col("a").alias("b")))
    subs = (
        rel.distinct()
        .join(F.broadcast(ids.toDF("a", "node")), "a")
        .join(F.broadcast(ids.toDF("b", "topic")), "b")
        .select("node", "topic")
    )
    info["edge_lines"] = int(n_edge_lines)
    return users, subs, info


def degree_ccdf_frame(subs, n_nodes: int):
    """Follower (topic size) and followee (subscription count) CCDFs as a pandas frame.

    ``ccdf(k)`` is the fraction of users with degree ``>= k``, for every
    degree ``k`` present (users with degree 0 included in the denominators).

    Returns
    -------
    pandas.DataFrame
        ``kind`` (``followers``/``followees``), ``degree``, ``users``, ``ccdf``.
    """
    import pandas as pd
    from pyspark.sql import functions as F

    frames = []
    for kind, col in (("followers", "topic"), ("followees", "node")):
        deg = subs.groupBy(col).count().groupBy(F.col("count").alias("degree")).count()
        h = deg.toPandas().rename(columns={"count": "users"})
        zero = n_nodes - int(h["users"].sum())
        if zero > 0:
            h = pd.concat([h, pd.DataFrame({"degree": [0], "users": [zero]})])
        h = h.sort_values("degree").reset_index(drop=True)
        h["ccdf"] = h["users"][::-1].cumsum()[::-1] / n_nodes
        h.insert(0, "kind", kind)
        frames.append(h)
    out = pd.concat(frames, ignore_index=True)
    out["degree"] = out["degree"].astype("int64")
    out["users"] = out["users"].astype("int64")
    return out


def ingest_social(
    spark,
    out: str | os.PathLike,
    *,
    size: int | str,
    edges: str | os.PathLike | None = None,
    seeds: int = 3,
    seed: int = 0,
    directed: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Run the social-graph sampling job and write the instance tables.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    out : str or path-like
        Output folder, written atomically.
    size : int or "all"
        Target number of sampled users (1000 for "FB 1K"; ``"all"`` for the
        largest sample).
    edges : str or path-like, optional
        Edge list; defaults to SNAP ego-Facebook.
    seeds : int
        Number of BFS seeds (and of fresh seeds per restart).
    seed : int
        The run's seed; same seed, same sample.
    directed : bool
        ``u v`` means "u follows v" (else friendship, both subscribe).
    force : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    dict
        The contents of ``meta.json``.

    Examples
    --------
    ``hedgerow ingest social --size 1000 --seed 1 --out results/fb1k``, then
    ``hedgerow.workloads.social.load_instance("results/fb1k")``.
    """
    check_out(out, force)
    edges = edges or data_path(*FACEBOOK)
    t0 = time.perf_counter()
    users, subs, info = sample_instance(
        spark, edges, size=size, seeds=seeds, seed=seed, directed=directed
    )
    subs = subs.localCheckpoint()
    n = users.count()
    n_subs = subs.count()
    if n == 0:
        raise DataError(f"{edges}: the edge list has no edges")
    ccdf = degree_ccdf_frame(subs, n)
    tables = {
        "users": users.orderBy("node").coalesce(1),
        "subscriptions": subs.repartition(1).sortWithinPartitions("node", "topic"),
    }
    meta = {
        "job": "social",
        "inputs": {"edges": file_info(edges)},
        "method": "BFS snowball by frontier joins; all edges among sampled users kept",
        "params": {
            "size": str(size),
            "seeds": int(seeds),
            "seed": int(seed),
            "directed": bool(directed),
        },
        "counts": {
            **info,
            "users": int(n),
            "topics": int(n),
            "subscriptions": int(n_subs),
            "mean_subscriptions": n_subs / n,
        },
    }
    return write_outputs(out, force, t0, meta, tables, {"ccdf.csv": ccdf})
