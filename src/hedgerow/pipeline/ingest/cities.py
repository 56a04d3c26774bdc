"""City-to-city latencies from the WonderNetwork ping capture of 2020-07-19/20 (Spark job).

The data set is the one Topiary and Goldfish used (``shared/data/MANIFEST.md`` §1):
246 WonderNetwork servers and one aggregate row per ordered (source,
destination) pair.  The job turns it into a complete, symmetric one-way latency
matrix over the 246 cities:

1. Rows of the servers table become cities, indexed ``0..245`` by ascending
   server id.  Ping rows naming an id without a server row (292-295) or a
   self-pair are dropped.
2. The per-pair ``avg`` round-trip time is used; one-way latency is
   ``avg / 2``.
3. Symmetrisation: the latency of an unordered pair is the mean of the two
   directed one-way values where both were measured, else the one measured.
4. Fill rule for pairs measured in neither direction (28 of 30,135): the best
   one-relay detour, ``min_k d(a, k) + d(k, b)`` over cities ``k`` whose pairs
   with both ``a`` and ``b`` were measured.  It is what an overlay could get by
   routing through one relay, it uses only measured values, and it keeps the
   matrix within the triangle inequality for those pairs.  The diagonal is 0.

Output (``--out DIR``): ``cities/`` (``idx, server_id, name, title, country,
continent, latitude, longitude, selected``), ``latency/`` (``src, dst, ms,
source`` with ``source`` one of ``both``, ``one``, ``relay``, ``self``; all
246 x 246 ordered pairs) and ``meta.json`` (inputs, rule, counts).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from hedgerow.data import data_path
from hedgerow.errors import DataError
from hedgerow.pipeline.ingest._common import (
    LineFormat,
    check_out,
    field_checks,
    file_info,
    first_line,
    item,
    raise_first_error,
    read_lines,
    write_outputs,
)

DATASET = "wondernetwork-pings-2020-07-19"
SERVERS_FILE = "servers-2020-07-19.csv"
PINGS_FILE = "pings-2020-07-19-2020-07-20-grouped.csv"
SERVER_COLUMNS = [
    "id", "name", "title", "location", "state", "country",
    "state_abbv", "continent", "latitude", "longitude",
]  # fmt: skip
PING_COLUMNS = ["source", "destination", "min", "avg", "max", "mdev"]
FILL_RULE = "relay: min over k of d(a,k) + d(k,b) on measured pairs; diagonal 0"


def _server_specs() -> tuple[tuple[str, str, bool], ...]:
    kind = {"id": "int", "continent": "int", "latitude": "float", "longitude": "float"}
    return tuple((c, kind.get(c, "str"), c not in kind) for c in SERVER_COLUMNS)


def _ping_avg(fields: list[str]) -> str | None:
    return "column 4 (avg) is negative" if float(fields[3]) < 0 else None


#: the lines of the servers and pings CSV files, as :func:`read_servers` and
#: :func:`read_pings` parse them (``--servers`` and ``--pings`` are checked against them
#: before Spark starts; a server row has as many cells as the header)
SERVER_LINES = LineFormat("servers", ",".join(SERVER_COLUMNS) + ",...", ",", _server_specs(),
                          0, header=tuple(SERVER_COLUMNS))
PING_LINES = LineFormat("pings", ",".join(PING_COLUMNS), ",",
                        (("source", "int", False), ("destination", "int", False),
                         ("min", "float", False), ("avg", "float", False),
                         ("max", "float", False), ("mdev", "float", False)),
                        len(PING_COLUMNS), header=tuple(PING_COLUMNS), extra=_ping_avg)


def default_inputs() -> tuple[Path, Path]:
    """The shipped servers and pings files (``data_path``; :class:`DataError` if missing)."""
    return data_path(DATASET, SERVERS_FILE), data_path(DATASET, PINGS_FILE)


def _csv_header(lines, path, what: str, expected_prefix: list[str]) -> int:
    """Check line 1 of a CSV file; returns its number of cells."""
    header = first_line(lines, path).split(",")
    if header[: len(expected_prefix)] != expected_prefix:
        raise DataError(
            f"{path}, line 1: the {what} header must start with "
            f"{','.join(expected_prefix)}, found {','.join(header)!r}"
        )
    return len(header)


def read_servers(spark, path: str | os.PathLike):
    """Parse and validate the servers CSV into a cities DataFrame.

    Every data row must have as many cells as the header (14 in the shipped
    GeoDec file, 10 in the upstream WonderNetwork one); ``id`` and
    ``continent`` are integers, ``latitude``/``longitude`` numbers.

    Returns
    -------
    pyspark.sql.DataFrame
        ``idx`` (int, 0.. by ascending ``server_id``), ``server_id``, ``name``,
        ``title``, ``country``, ``continent``, ``latitude``, ``longitude``,
        ``selected`` (bool).

    Raises
    ------
    DataError
        Naming the file and line of the first malformed row or a duplicate id.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    what = "servers"
    lines = read_lines(spark, path, what)
    n_cols = _csv_header(lines, path, what, SERVER_COLUMNS)
    body = lines.filter((F.col("_mid") > 0) & (F.trim("value") != ""))
    fields = F.split(F.col("value"), ",", -1)
    specs = list(SERVER_LINES.specs)
    parsed = body.withColumn("_f", fields).withColumn(
        "_err", field_checks(F.col("_f"), specs, n_cols)
    )
    dup = Window.partitionBy(F.trim(item("_f", 0))).orderBy("_mid")
    parsed = parsed.withColumn(
        "_err",
        F.when(
            F.col("_err").isNull() & (F.row_number().over(dup) > 1),
            F.lit("duplicate server id"),
        ).otherwise(F.col("_err")),
    ).cache()
    raise_first_error(parsed, lines, path, what)

    def cell(i: int):
        return F.trim(item("_f", i))

    cities = parsed.select(
        cell(0).cast("int").alias("server_id"),
        cell(1).alias("name"),
        cell(2).alias("title"),
        cell(5).alias("country"),
        cell(7).cast("int").alias("continent"),
        cell(8).cast("double").alias("latitude"),
        cell(9).cast("double").alias("longitude"),
        (
            F.when(F.lit(n_cols > 10), F.try_element_at(F.col("_f"), F.lit(11)))
            .otherwise(F.lit(""))
            .isin("1", "1.0")
        ).alias("selected"),
    )
    order = Window.orderBy("server_id")
    return cities.withColumn("idx", (F.row_number().over(order) - 1).cast("int")).select(
        "idx", "server_id", "name", "title", "country", "continent",
        "latitude", "longitude", "selected",
    )  # fmt: skip


def read_pings(spark, path: str | os.PathLike):
    """Parse and validate the grouped pings CSV.

    Returns
    -------
    pyspark.sql.DataFrame
        ``source``, ``destination`` (server ids) and ``avg`` (RTT in ms), one
        row per data line.

    Raises
    ------
    DataError
        Naming the file and line of the first malformed row, a negative
        ``avg`` or a repeated (source, destination) pair.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    what = "pings"
    lines = read_lines(spark, path, what)
    _csv_header(lines, path, what, PING_COLUMNS)
    body = lines.filter((F.col("_mid") > 0) & (F.trim("value") != ""))
    specs = list(PING_LINES.specs)
    parsed = body.withColumn("_f", F.split(F.col("value"), ",", -1)).withColumn(
        "_err", field_checks(F.col("_f"), specs, len(PING_COLUMNS))
    )
    src = F.trim(item("_f", 0))
    dst = F.trim(item("_f", 1))
    avg = F.trim(item("_f", 3)).try_cast("double")
    dup = Window.partitionBy(src, dst).orderBy("_mid")
    parsed = parsed.withColumn(
        "_err",
        F.when(F.col("_err").isNotNull(), F.col("_err"))
        .when(avg < 0, F.lit("column 4 (avg) is negative"))
        .when(F.row_number().over(dup) > 1, F.lit("repeated (source, destination) pair")),
    ).cache()
    raise_first_error(parsed, lines, path, what)
    return parsed.select(
        src.cast("int").alias("source"),
        dst.cast("int").alias("destination"),
        avg.alias("avg"),
    )


def city_latency_frames(spark, servers: str | os.PathLike, pings: str | os.PathLike):
    """The cities table, the complete symmetric latency table and counts.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    servers, pings : str or path-like
        The servers CSV and the grouped pings CSV.

    Returns
    -------
    cities : pyspark.sql.DataFrame
        See :func:`read_servers`.
    latency : pyspark.sql.DataFrame
        ``src, dst`` (city ``idx``), ``ms`` (one-way, double) and ``source``
        (``both``/``one``/``relay``/``self``) for every ordered pair.
    counts : dict
        Row and pair counts recorded in ``meta.json``.

    Raises
    ------
    DataError
        For malformed input, or when a missing pair has no relay.
    """
    from pyspark.sql import functions as F

    cities = read_servers(spark, servers).cache()
    raw = read_pings(spark, pings).cache()
    city_rows = cities.select("idx", "server_id").collect()
    n = len(city_rows)
    if n < 2:
        raise DataError(f"{servers}: needs at least 2 server rows, found {n}")
    known_ids = {int(r["server_id"]) for r in city_rows}
    summary = raw.agg(
        F.count("*").alias("rows"),
        F.collect_set("source").alias("s"),
        F.collect_set("destination").alias("d"),
    ).first()
    unknown_ids = sorted((set(summary["s"]) | set(summary["d"])) - known_ids)
    ids = cities.select(F.col("server_id").alias("sid"), F.col("idx"))
    a = ids.withColumnRenamed("sid", "source").withColumnRenamed("idx", "i")
    b = ids.withColumnRenamed("sid", "destination").withColumnRenamed("idx", "j")
    known = raw.join(F.broadcast(a), "source").join(F.broadcast(b), "destination")
    directed = known.filter(F.col("i") != F.col("j")).select(
        "i", "j", (F.col("avg") / 2.0).alias("ow")
    )
    sym = (
        directed.groupBy(F.least("i", "j").alias("lo"), F.greatest("i", "j").alias("hi"))
        .agg(F.avg("ow").alias("ms"), F.count("*").alias("n"))
        .select("lo", "hi", "ms", F.when(F.col("n") == 2, "both").otherwise("one").alias("source"))
    )
    idx = spark.range(n).select(F.col("id").cast("int").alias("idx"))
    pairs = idx.alias("x").crossJoin(idx.alias("y")).filter(F.col("x.idx") < F.col("y.idx"))
    pairs = pairs.select(F.col("x.idx").alias("lo"), F.col("y.idx").alias("hi"))
    missing = pairs.join(sym.select("lo", "hi"), ["lo", "hi"], "left_anti")
    both_dirs = sym.select("lo", "hi", "ms").union(sym.select("hi", "lo", "ms"))
    m1 = both_dirs.toDF("lo", "k", "d1")
    m2 = both_dirs.toDF("hi", "k", "d2")
    relay = (
        missing.join(m1, "lo")
        .join(m2, ["hi", "k"])
        .groupBy("lo", "hi")
        .agg(F.min(F.col("d1") + F.col("d2")).alias("ms"))
        .select("lo", "hi", "ms", F.lit("relay").alias("source"))
    )
    upper = sym.unionByName(relay)
    full = (
        upper.select(F.col("lo").alias("src"), F.col("hi").alias("dst"), "ms", "source")
        .unionByName(
            upper.select(F.col("hi").alias("src"), F.col("lo").alias("dst"), "ms", "source")
        )
        .unionByName(
            idx.select(
                F.col("idx").alias("src"),
                F.col("idx").alias("dst"),
                F.lit(0.0).alias("ms"),
                F.lit("self").alias("source"),
            )
        )
        .select(F.col("src").cast("int"), F.col("dst").cast("int"), "ms", "source")
        .cache()
    )
    by_source = {
        r["source"]: (int(r["rows"]), int(r["cities"]))
        for r in full.groupBy("source")
        .agg(F.count("*").alias("rows"), F.countDistinct("src").alias("cities"))
        .collect()
    }
    n_both = by_source.get("both", (0, 0))[0] // 2
    n_one = by_source.get("one", (0, 0))[0] // 2
    n_relay, relay_cities = by_source.get("relay", (0, 0))
    n_relay //= 2
    n_pairs = n * (n - 1) // 2
    if n_both + n_one + n_relay != n_pairs:
        lost = missing.join(relay, ["lo", "hi"], "left_anti").first()
        raise DataError(
            f"{pings}: cities {lost['lo']} and {lost['hi']} (0-based idx) have no measured pair in "
            "common; the relay fill rule cannot fill their latency"
        )
    counts = {
        "cities": n,
        "ping_rows": int(summary["rows"]),
        "ping_rows_used": 2 * n_both + n_one,
        "dropped_server_ids": unknown_ids,
        "unordered_pairs": n_pairs,
        "pairs_both_directions": n_both,
        "pairs_one_direction": n_one,
        "pairs_filled_by_relay": n_relay,
        "cities_with_all_pairs_measured": n - relay_cities,
        "matrix_rows": n * n,
    }
    return cities, full, counts


def ingest_cities(
    spark,
    out: str | os.PathLike,
    *,
    servers: str | os.PathLike | None = None,
    pings: str | os.PathLike | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Run the city-latency job and write ``cities/``, ``latency/`` and ``meta.json``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    out : str or path-like
        Output folder; written atomically (nothing is left behind on error).
    servers, pings : str or path-like, optional
        Inputs; default to the shipped WonderNetwork files.
    force : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    dict
        The contents of ``meta.json``.

    Examples
    --------
    ``hedgerow ingest cities --out results/cities`` runs this on the shipped data;
    read the result back with ``pandas.read_parquet("results/cities/latency")``.
    """
    check_out(out, force)
    if servers is None or pings is None:
        d_servers, d_pings = default_inputs()
        servers = servers or d_servers
        pings = pings or d_pings
    t0 = time.perf_counter()
    cities, latency, counts = city_latency_frames(spark, servers, pings)
    meta = {
        "job": "cities",
        "inputs": {"servers": file_info(servers), "pings": file_info(pings)},
        "rtt_statistic": "avg",
        "one_way": "avg / 2",
        "symmetrisation": "mean of the two directed one-way values where both exist",
        "fill_rule": FILL_RULE,
        "counts": counts,
    }
    tables = {
        "cities": cities.orderBy("idx").coalesce(1),
        "latency": latency.repartition(1).sortWithinPartitions("src", "dst"),
    }
    return write_outputs(out, force, t0, meta, tables)
