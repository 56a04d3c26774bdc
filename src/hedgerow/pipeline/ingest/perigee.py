"""The Perigee 1000-node one-way latency matrix as a long Parquet table (Spark job).

Input (``shared/data/MANIFEST.md`` §6): line 1 holds ``N``; lines ``2..N+1``
hold the rows of an ``N x N`` matrix of one-way latencies in ms, separated by
white space (the Perigee "weight1" iPlane-derived set, Mao et al. PODC 2020).
Every row must have exactly ``N`` numeric, non-negative cells and there must be
exactly ``N`` rows (trailing blank lines are allowed).  The matrix is kept as
is; ``meta.json`` records whether it is symmetric and its diagonal is zero.

Output (``--out DIR``): ``latency/`` (``src, dst`` int, ``ms`` double, all
``N*N`` entries) and ``meta.json``.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from hedgerow.data import data_path
from hedgerow.errors import DataError
from hedgerow.pipeline.ingest._common import (
    FLOAT_RE,
    check_out,
    file_info,
    first_line,
    head_lines,
    local_path,
    raise_first_error,
    read_lines,
    write_outputs,
)

DATASET = "perigee-latency-weight1"
MATRIX_FILE = "perigee_latencies_weight1_oneway.dat.gz"


#: a matrix file as :func:`perigee_frame` parses it, named in the pre-check's message
MATRIX_SHAPE = "N on line 1, then N rows of N non-negative latencies separated by white space"


def check_matrix_head(matrix: str | os.PathLike, rows: int = 50) -> None:
    """Check line 1 and the first ``rows`` matrix rows of a local matrix file, before Spark.

    The same rules as :func:`perigee_frame` (which checks every row again).

    Raises
    ------
    DataError
        ``FILE, line N: PROBLEM; the file is ...``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.dat"
    >>> _ = f.write_text("2\\n0 1.5\\n1.5 x\\n")
    >>> check_matrix_head(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.DataError: ...m.dat, line 3: a cell is not a number: 'x'; the file is N ...
    """
    p = local_path(matrix)
    if p is None:
        return
    from hedgerow.userfiles import reading

    def bad(no: int, what: str) -> DataError:
        return DataError(f"{p}, line {no}: {what}; the file is {MATRIX_SHAPE}")

    with reading(p, "latency matrix file"):
        n = 0
        for no, line in head_lines(p, rows + 1):
            text = line.strip(" ")
            if no == 1:
                if not text.strip().isdigit() or int(text.strip()) < 1:
                    raise bad(1, f"expected the matrix size N, found {text.strip()!r}")
                n = int(text.strip())
                continue
            if text == "":
                continue
            if no - 2 >= n:
                raise bad(no, f"more than N={n} matrix rows")
            fields = re.split(r"\s+", text)
            if len(fields) != n:
                raise bad(no, f"expected {n} columns, found {len(fields)}")
            cell = next((x for x in fields if not re.fullmatch(FLOAT_RE[1:-1], x)), None)
            if cell is not None:
                raise bad(no, f"a cell is not a number: '{cell}'")
            if any(x.startswith("-") for x in fields):
                raise bad(no, "a latency is negative")


def perigee_frame(spark, matrix: str | os.PathLike):
    """Parse and validate the matrix file into ``(src, dst, ms)``.

    Returns
    -------
    latency : pyspark.sql.DataFrame
        ``src``, ``dst`` (int, 0-based row/column) and ``ms`` (double).
    n : int
        The matrix size from line 1.

    Raises
    ------
    DataError
        Naming the file and line of the first malformed row.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    what = "latency matrix"
    lines = read_lines(spark, matrix, what)
    first = first_line(lines, matrix)
    if not first.isdigit() or int(first) < 1:
        raise DataError(f"{matrix}, line 1: expected the matrix size N, found {first!r}")
    n = int(first)
    body = lines.filter(F.col("_mid") > 0)
    fields = F.split(F.trim("value"), r"\s+")
    blank = F.trim("value") == ""
    # row index = number of earlier body lines (the file is one gzip partition
    # or a few text splits; the window runs on the line tags only)
    order = Window.orderBy("_mid")
    body = body.withColumn("row", (F.row_number().over(order) - 1).cast("int"))
    # a blank line is allowed only after the last matrix row
    later_text = F.max(F.when(~blank, F.col("row"))).over(
        order.rowsBetween(Window.currentRow, Window.unboundedFollowing)
    )
    nf = F.size(fields)
    err = (
        F.when(blank & later_text.isNotNull(), F.lit("blank line inside the matrix"))
        .when(blank, F.lit(None))
        .when(F.col("row") >= n, F.lit(f"more than N={n} matrix rows"))
        .when(nf != n, F.concat(F.lit(f"expected {n} columns, found "), nf.cast("string")))
        .when(
            ~F.forall(fields, lambda x: x.rlike(FLOAT_RE)),
            F.concat(
                F.lit("a cell is not a number: '"),
                F.try_element_at(F.filter(fields, lambda x: ~x.rlike(FLOAT_RE)), F.lit(1)),
                F.lit("'"),
            ),
        )
        .when(
            F.exists(fields, lambda x: x.startswith("-")),
            F.lit("a latency is negative"),
        )
    )
    parsed = body.withColumn("_err", err).cache()
    raise_first_error(parsed, lines, matrix, what)
    rows = parsed.filter(~blank)
    n_rows = rows.count()
    if n_rows != n:
        raise DataError(
            f"{matrix}, line {n_rows + 2}: expected N={n} matrix rows, the file ends after {n_rows}"
        )
    latency = rows.select(
        F.col("row").alias("src"), F.posexplode(fields).alias("dst", "cell")
    ).select(
        F.col("src").cast("int"),
        F.col("dst").cast("int"),
        F.col("cell").cast("double").alias("ms"),
    )
    return latency, n


def ingest_perigee(
    spark,
    out: str | os.PathLike,
    *,
    matrix: str | os.PathLike | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Run the Perigee job and write ``latency/`` and ``meta.json``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    out : str or path-like
        Output folder, written atomically.
    matrix : str or path-like, optional
        The matrix file; defaults to the shipped Perigee weight1 file.
    force : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    dict
        The contents of ``meta.json``.

    Examples
    --------
    ``hedgerow ingest perigee --out results/perigee``; then
    ``pandas.read_parquet("results/perigee/latency")`` has 1,000,000 rows.
    """
    from pyspark.sql import functions as F

    check_out(out, force)
    matrix = matrix or data_path(DATASET, MATRIX_FILE)
    t0 = time.perf_counter()
    latency, n = perigee_frame(spark, matrix)
    latency = latency.cache()
    pairs = latency.groupBy(F.least("src", "dst").alias("lo"), F.greatest("src", "dst").alias("hi"))
    pairs = pairs.agg((F.max("ms") != F.min("ms")).cast("int").alias("asym"))
    asym = pairs.agg(F.sum("asym")).first()[0]
    stats = latency.agg(
        F.count("*").alias("cells"),
        F.sum(F.when((F.col("src") == F.col("dst")) & (F.col("ms") != 0), 1).otherwise(0)).alias(
            "diag"
        ),
        F.max("ms").alias("max"),
        F.percentile_approx("ms", 0.5).alias("median"),
    ).first()
    meta = {
        "job": "perigee",
        "inputs": {"matrix": file_info(matrix)},
        "unit": "one-way ms",
        "counts": {
            "n": n,
            "cells": int(stats["cells"]),
            "asymmetric_pairs": int(asym or 0),
            "nonzero_diagonal": int(stats["diag"]),
            "max_ms": float(stats["max"]),
            "median_ms": float(stats["median"]),
        },
    }
    tables = {"latency": latency.repartition(1).sortWithinPartitions("src", "dst")}
    return write_outputs(out, force, t0, meta, tables)
