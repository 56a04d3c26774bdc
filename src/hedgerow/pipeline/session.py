"""Creating the Spark session: embedded ``local[*]`` by default, a cluster on request."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from hedgerow.errors import HedgerowError


def get_spark(
    master: str | None = None, app_name: str = "hedgerow", *, parallelism: int | None = None
):
    """The active Spark session, created if needed.

    Parameters
    ----------
    master : str, optional
        Spark master URL (``local[*]``, ``spark://host:7077``, ``yarn`` ...).
        ``None`` keeps the master of an existing session or of ``spark-submit``
        (``spark.master`` in the environment) and otherwise uses ``local[*]``.
    app_name : str
        Application name shown by the cluster manager.
    parallelism : int, optional
        ``spark.default.parallelism`` and shuffle partitions.

    Notes
    -----
    The embedded session runs with the UI off, few shuffle partitions and
    ``PYSPARK_PYTHON`` set to the running interpreter, so executors use the
    same environment as the driver.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:  # pragma: no cover - depends on the install
        raise HedgerowError(
            "the Spark pipeline needs pyspark: pip install 'hedgerow[spark]'"
        ) from e
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    elif "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", "") and not os.environ.get(
        "SPARK_ENV_LOADED"
    ):
        builder = builder.master("local[*]")
    parts = str(parallelism or 4)
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", parts)
        .config("spark.default.parallelism", parts)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", os.environ.get("HEDGEROW_SPARK_DRIVER_MEMORY", "2g"))
        .config("spark.python.worker.reuse", "true")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def job_session(master: str | None = None, app_name: str = "hedgerow") -> Iterator[object]:
    """A Spark session for one job, stopped afterwards unless it already existed.

    For commands that run one job and exit (``hedgerow ingest ...``): a session
    of the caller (a test's, or ``spark-submit``'s) is reused and left running.
    """
    from pyspark.sql import SparkSession

    existed = SparkSession.getActiveSession() is not None and master is None
    spark = get_spark(master, app_name=app_name)
    try:
        yield spark
    finally:
        if not existed:
            spark.stop()
