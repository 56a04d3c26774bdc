"""Churn traces -> sorted join/leave event sequences (Spark job).

Two sources (``shared/data/MANIFEST.md`` §4-5):

``google``
    The Google 2011 cluster ``machine_events`` table (Reiss, Wilkes,
    Hellerstein 2011), as in OMen §6.1: "We randomly sampled 1K and 10K unique
    machine IDs from the start of the Google cluster trace and then generated
    *Join* churn events via ADD and *Leave* ones via REMOVE."  Reading chosen:
    "from the start of the trace" = among the machines present at trace start
    (an ADD at timestamp 0; 12,477 machines), sampled uniformly by a seeded
    hash order; ``population="all"`` samples among every machine instead.  ADD
    -> join, REMOVE -> leave, UPDATE ignored; ``time_s = timestamp_us / 1e6``
    (0 = present at trace start).  Nodes are ``0..k-1`` by ascending machine id.
``smartphone``
    The STUNner smartphone session trace (Berta, Bilicki, Jelasity, P2P 2014)
    as shipped by GoLF: ``user_id first_online start_epoch_ms tz_offset_hours
    len_1 len_2 ...``, lengths in ms alternating between states starting with
    ``first_online``.  As in GoLF, each line (one user-week) is one node and
    all lines are aligned to start at time 0.  An online interval of positive
    length gives a join at its start and a leave at its end, except that the
    last interval of a line ends with the trace (no leave).  ``nodes=k``
    samples ``k`` lines uniformly (seeded); nodes are numbered in file order.

Events are sorted by time, then by their order in the source (file order for
Google, interval order within a line for the smartphone trace), and numbered
by ``seq``.  Output (``--out DIR``): ``events/`` (``seq`` long, ``time_s``
double, ``node`` int, ``event`` byte: 1 join, -1 leave), ``nodes/`` (``node``
and ``machine_id`` or ``user_id``) and ``meta.json`` (counts).  Read
it back with :func:`hedgerow.scenarios.traces.load_events`.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from hedgerow.data import data_path
from hedgerow.errors import ParameterError
from hedgerow.pipeline.ingest._common import (
    INT_RE,
    LineFormat,
    check_out,
    field_checks,
    file_info,
    hash_sample,
    item,
    raise_first_error,
    read_lines,
    write_outputs,
)

GOOGLE = ("google-clusterdata-2011-machine-events", "part-00000-of-00001.csv.gz")
SMARTPHONE = ("stunner-smartphone-churn-golf", "peersim_session_100.txt.gz")
JOIN, LEAVE = 1, -1
SOURCES = ("google", "smartphone")


def _google_rule(fields: list[str]) -> str | None:
    if fields[2].strip(" ") not in ("0", "1", "2"):
        return "column 3 (event_type) must be 0, 1 or 2"
    return "column 1 (timestamp) is negative" if int(fields[0]) < 0 else None


def _smartphone_rule(fields: list[str]) -> str | None:
    if fields[1].strip(" ") not in ("0", "1"):
        return "column 2 (first_online) must be 0 or 1"
    for x in fields[4:]:
        if not re.fullmatch(r"[+-]?[0-9]+", x):
            return f"a session length is not an integer: '{x}'"
        if x.startswith("-") or int(x) >= 2**63:
            return "a session length is negative or out of range"
    return None


#: the lines of each source's trace, as :func:`read_google` and :func:`read_smartphone` parse
#: them (``hedgerow ingest churn --trace`` is checked against it before Spark starts)
TRACE_LINES = {
    "google": LineFormat(
        "machine events", "timestamp,machine_id,event_type,platform_id,cpus,memory", ",",
        (("timestamp", "int", False), ("machine_id", "int", False), ("event_type", "int", False),
         ("platform_id", "str", True), ("cpus", "float", True), ("memory", "float", True)),
        6, extra=_google_rule),
    "smartphone": LineFormat(
        "session trace", "user_id first_online start_epoch_ms tz_offset_hours len_1 [len_2 ...]",
        "space",
        (("user_id", "str", False), ("first_online", "int", False),
         ("start_epoch_ms", "int", False), ("tz_offset_hours", "int", False),
         ("len_1", "int", False)),
        None, extra=_smartphone_rule),
}


def read_google(spark, path: str | os.PathLike):
    """Parse and validate ``machine_events`` (6 columns, no header).

    Returns
    -------
    pyspark.sql.DataFrame
        ``_mid`` (file order), ``ts`` (µs), ``machine_id``, ``etype``.
    """
    from pyspark.sql import functions as F

    what = "machine events"
    lines = read_lines(spark, path, what)
    body = lines.filter(F.trim("value") != "")
    specs = list(TRACE_LINES["google"].specs)
    et = F.trim(item("_f", 2))
    ts = F.trim(item("_f", 0))
    parsed = body.withColumn("_f", F.split("value", ",", -1))
    err = field_checks(F.col("_f"), specs, 6)
    err = (
        F.when(err.isNotNull(), err)
        .when(~et.isin("0", "1", "2"), F.lit("column 3 (event_type) must be 0, 1 or 2"))
        .when(ts.try_cast("long") < 0, F.lit("column 1 (timestamp) is negative"))
    )
    parsed = parsed.withColumn("_err", err).cache()
    raise_first_error(parsed, lines, path, what)
    return parsed.select(
        "_mid",
        ts.cast("long").alias("ts"),
        F.trim(item("_f", 1)).cast("long").alias("machine_id"),
        et.cast("int").alias("etype"),
    )


def google_events(
    spark, path: str | os.PathLike, *, nodes: int | None, seed: int, population: str = "start"
):
    """Sampled Google machines' join/leave events.

    Returns
    -------
    events : pyspark.sql.DataFrame
        ``seq, time_s, node, event`` sorted by ``seq``.
    node_table : pyspark.sql.DataFrame
        ``node, machine_id``.
    info : dict
        Population and sample sizes.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if population not in ("start", "all"):
        raise ParameterError(f"population must be 'start' or 'all', got {population!r}")
    ev = read_google(spark, path).cache()
    if population == "start":
        pool = ev.filter((F.col("ts") == 0) & (F.col("etype") == 0))
    else:
        pool = ev
    pool = pool.select("machine_id").distinct().cache()
    n_pool = pool.count()
    if nodes is None:
        chosen = pool
    else:
        if nodes < 1 or nodes > n_pool:
            raise ParameterError(
                f"nodes must be in 1..{n_pool} (machines in population {population!r}), got {nodes}"
            )
        chosen = hash_sample(pool, "machine_id", nodes, seed, "churn.google.machines")
    node_table = chosen.select(
        (F.row_number().over(Window.orderBy("machine_id")) - 1).cast("int").alias("node"),
        "machine_id",
    ).localCheckpoint()
    picked = ev.filter(F.col("etype").isin(0, 1)).join(F.broadcast(node_table), "machine_id")
    events = picked.select(
        (F.row_number().over(Window.orderBy("ts", "_mid")) - 1).cast("long").alias("seq"),
        (F.col("ts") / F.lit(1e6)).alias("time_s"),
        "node",
        F.when(F.col("etype") == 0, F.lit(JOIN))
        .otherwise(F.lit(LEAVE))
        .cast("byte")
        .alias("event"),
    )
    info = {"population": population, "population_machines": int(n_pool)}
    return events, node_table, info


def read_smartphone(spark, path: str | os.PathLike):
    """Parse and validate the smartphone session trace.

    Returns
    -------
    pyspark.sql.DataFrame
        ``_mid``, ``user_id``, ``online`` (0/1), ``lens`` (array of long, ms).
    """
    from pyspark.sql import functions as F

    what = "session trace"
    lines = read_lines(spark, path, what)
    body = lines.filter(F.trim("value") != "")
    specs = list(TRACE_LINES["smartphone"].specs)
    parsed = body.withColumn("_f", F.split(F.trim("value"), r"\s+"))
    lens = F.slice(F.col("_f"), 5, F.size(F.col("_f")))
    err = field_checks(F.col("_f"), specs, None)
    bad_len = F.try_element_at(F.filter(lens, lambda x: ~x.rlike(INT_RE)), F.lit(1))
    err = (
        F.when(err.isNotNull(), err)
        .when(
            ~F.trim(item("_f", 1)).isin("0", "1"), F.lit("column 2 (first_online) must be 0 or 1")
        )
        .when(
            bad_len.isNotNull(),
            F.concat(F.lit("a session length is not an integer: '"), bad_len, F.lit("'")),
        )
        .when(
            F.exists(lens, lambda x: x.startswith("-") | x.try_cast("long").isNull()),
            F.lit("a session length is negative or out of range"),
        )
    )
    parsed = parsed.withColumn("_err", err).cache()
    raise_first_error(parsed, lines, path, what)
    return parsed.select(
        "_mid",
        item("_f", 0).alias("user_id"),
        item("_f", 1).cast("int").alias("online"),
        F.transform(lens, lambda x: x.cast("long")).alias("lens"),
    )


def smartphone_events(spark, path: str | os.PathLike, *, nodes: int | None, seed: int):
    """Join/leave events of the smartphone trace, one node per line, aligned at 0."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    tr = read_smartphone(spark, path).cache()
    n_lines = tr.count()
    if nodes is not None:
        if nodes < 1 or nodes > n_lines:
            raise ParameterError(f"nodes must be in 1..{n_lines} (trace lines), got {nodes}")
        tr = hash_sample(tr, "_mid", nodes, seed, "churn.smartphone.lines")
    node_table = tr.select(
        (F.row_number().over(Window.orderBy("_mid")) - 1).cast("int").alias("node"),
        "user_id",
        "_mid",
        "online",
        "lens",
    ).localCheckpoint()
    iv = node_table.select(
        "node", "_mid", "online", F.size("lens").alias("m"), F.posexplode("lens").alias("i", "len")
    )
    start = F.coalesce(
        F.sum("len").over(
            Window.partitionBy("node").orderBy("i").rowsBetween(Window.unboundedPreceding, -1)
        ),
        F.lit(0),
    )
    iv = iv.withColumn("start", start)
    on = iv.filter(((F.col("online") + F.col("i")) % 2 == 1) & (F.col("len") > 0))
    joins = on.select(
        "node", F.col("start").alias("t"), (2 * F.col("i")).alias("o"), F.lit(JOIN).alias("event")
    )
    leaves = on.filter(F.col("i") < F.col("m") - 1).select(
        "node",
        (F.col("start") + F.col("len")).alias("t"),
        (2 * F.col("i") + 1).alias("o"),
        F.lit(LEAVE).alias("event"),
    )
    both = joins.unionByName(leaves)
    events = both.select(
        (F.row_number().over(Window.orderBy("t", "node", "o")) - 1).cast("long").alias("seq"),
        (F.col("t") / F.lit(1000.0)).alias("time_s"),
        "node",
        F.col("event").cast("byte"),
    )
    nt = node_table.select("node", "user_id")
    info = {"trace_lines": int(n_lines), "alignment": "each line starts at time 0"}
    return events, nt, info


def ingest_churn(
    spark,
    out: str | os.PathLike,
    *,
    source: str = "google",
    trace: str | os.PathLike | None = None,
    nodes: int | None = 1000,
    seed: int = 0,
    population: str = "start",
    force: bool = False,
) -> dict[str, Any]:
    """Run the churn job and write ``events/``, ``nodes/`` and ``meta.json``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    out : str or path-like
        Output folder, written atomically.
    source : {"google", "smartphone"}
        Which trace format.
    trace : str or path-like, optional
        Input file; defaults to the shipped trace of ``source``.
    nodes : int or None
        Machines (Google) or lines (smartphone) to sample; ``None`` keeps all.
    seed : int
        The run's seed; same seed, same sample.
    population : {"start", "all"}
        Google only: sample among machines present at trace start, or all.
    force : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    dict
        The contents of ``meta.json``.

    Examples
    --------
    ``hedgerow ingest churn --source google --nodes 1000 --seed 1 --out results/g1k``,
    then ``hedgerow.scenarios.traces.load_events("results/g1k")``.
    """
    from pyspark.sql import functions as F

    if source not in SOURCES:
        raise ParameterError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    check_out(out, force)
    t0 = time.perf_counter()
    if source == "google":
        trace = trace or data_path(*GOOGLE)
        events, node_table, info = google_events(
            spark, trace, nodes=nodes, seed=seed, population=population
        )
    else:
        trace = trace or data_path(*SMARTPHONE)
        events, node_table, info = smartphone_events(spark, trace, nodes=nodes, seed=seed)
    events = events.localCheckpoint()
    c = events.agg(
        F.count("*").alias("events"),
        F.sum(F.when(F.col("event") == JOIN, 1).otherwise(0)).alias("joins"),
        F.sum(F.when(F.col("event") == LEAVE, 1).otherwise(0)).alias("leaves"),
        F.max("time_s").alias("last"),
        F.countDistinct("node").alias("active"),
    ).first()
    n_nodes = node_table.count()
    meta = {
        "job": "churn",
        "source": source,
        "inputs": {"trace": file_info(trace)},
        "params": {"nodes": nodes, "seed": int(seed), "population": population},
        "event_codes": {"join": JOIN, "leave": LEAVE},
        "counts": {
            **info,
            "nodes": int(n_nodes),
            "nodes_with_events": int(c["active"] or 0),
            "events": int(c["events"]),
            "joins": int(c["joins"] or 0),
            "leaves": int(c["leaves"] or 0),
            "last_event_s": float(c["last"] or 0.0),
        },
    }
    tables = {
        "events": events.repartition(1).sortWithinPartitions("seq"),
        "nodes": node_table.orderBy("node").coalesce(1),
    }
    return write_outputs(out, force, t0, meta, tables)
