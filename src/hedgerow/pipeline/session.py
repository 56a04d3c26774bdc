"""Creating the Spark session: embedded ``local[*]`` by default, a cluster on request.

Before a JVM starts, :func:`preflight` checks what would otherwise fail tens of
seconds later with a Java stack trace: Java 17+ is installed
(:func:`check_java`), the master URL is well formed and, for ``spark://``,
reachable (:func:`check_master`).

Quiet output: with ``log_file`` set, :func:`get_spark` points the JVM's stderr
(log4j's console, the JVM's own warnings, the Python workers of a local
master) at that file and sends Python warnings there too, so the terminal
shows only Hedgerow's lines; ``hedgerow sweep --verbose`` leaves them on the
terminal.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

from hedgerow.errors import HedgerowError

__all__ = ["check_java", "check_master", "get_spark", "job_session", "preflight"]

_MASTER = re.compile(
    r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|"
    r"spark://[^/\s:]+:\d+(,[^/\s:]+:\d+)*|k8s://\S+|mesos://\S+)$"
)


def java_version(java: str) -> tuple[int, str]:
    """Major version and the version text printed by ``java -version``.

    Examples
    --------
    >>> import shutil
    >>> java_version(shutil.which("java"))[0] >= 17
    True
    """
    try:
        res = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as e:
        raise HedgerowError(
            f"Java 17+ is needed; found {java} but it does not run ({e.strerror}); "
            "install a JDK 17 or set JAVA_HOME"
        ) from None
    text = (res.stderr or res.stdout).strip()
    m = re.search(r'version "([^"]+)"', text)
    if not m:
        raise HedgerowError(
            f"Java 17+ is needed; {java} -version printed no version; install a JDK 17 "
            "or set JAVA_HOME"
        )
    ver = m.group(1)
    parts = ver.split(".")
    head = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
    major = int(re.sub(r"\D.*", "", head) or 0)
    return major, ver


def check_java() -> str:
    """The ``java`` Spark will start (``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``), checked.

    Raises
    ------
    HedgerowError
        ``Java 17+ is needed; found ...`` when it is missing or older.
    """
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH"
        raise HedgerowError(
            f"Java 17+ is needed; found none ({where}); install a JDK 17 or set JAVA_HOME"
        )
    major, ver = java_version(java)
    if major < 17:
        raise HedgerowError(
            f"Java 17+ is needed; found {ver} ({java}); install a JDK 17 or point JAVA_HOME at one"
        )
    return java


def check_master(master: str | None, *, timeout: float = 5.0) -> None:
    """Check a ``--master`` URL before the JVM starts; ``spark://`` masters must answer.

    Examples
    --------
    >>> check_master("local[2]")
    >>> check_master("lokal")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.HedgerowError: --master lokal: not a Spark master URL; use local[*], ...
    """
    if master is None:
        return
    if not _MASTER.match(master):
        raise HedgerowError(
            f"--master {master}: not a Spark master URL; use local[*], local[N], "
            "spark://HOST:PORT, yarn or k8s://https://HOST:PORT"
        )
    if master.startswith("spark://"):
        errors = []
        for hostport in master[len("spark://") :].split(","):
            host, port = hostport.rsplit(":", 1)
            try:
                with socket.create_connection((host, int(port)), timeout=timeout):
                    return
            except OSError as e:
                errors.append(f"{hostport}: {e.strerror or e}")
        raise HedgerowError(
            f"--master {master}: cannot connect ({'; '.join(errors)}); "
            "is the standalone master running there?"
        )


def preflight(master: str | None) -> None:
    """Everything checked before a JVM starts: Java 17+ and the master URL."""
    check_master(master)
    if not os.environ.get("SPARK_ENV_LOADED"):  # under spark-submit the JVM already runs
        check_java()


@contextlib.contextmanager
def _stderr_to(log_file: Path | None) -> Iterator[None]:
    """Point file descriptor 2 at ``log_file`` while a child JVM is started.

    The JVM keeps the descriptor it inherited, so its output (and that of the
    Python workers it forks) stays in the file; ours comes back to the terminal.
    """
    if log_file is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def quiet_python_warnings(log_file: Path) -> None:
    """Send Python warnings (pyspark's, pandas', numba's) to ``log_file``, not the terminal."""

    def show(message, category, filename, lineno, file=None, line=None):
        with contextlib.suppress(OSError), open(log_file, "a", encoding="utf-8") as fh:
            fh.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = show


def get_spark(
    master: str | None = None,
    app_name: str = "hedgerow",
    *,
    parallelism: int | None = None,
    log_file: str | Path | None = None,
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
    log_file : path, optional
        Quiet mode: the JVM's output and Python warnings go to this file.

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
    log = Path(log_file) if log_file is not None else None
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        quiet_python_warnings(log)
        # the JVM's hostname warning goes away when it is told which address to use
        if _is_local(master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
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
    with _stderr_to(log):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _is_local(master: str | None) -> bool:
    return (master is None and not os.environ.get("SPARK_ENV_LOADED")) or (
        master is not None and master.startswith("local")
    )


@contextlib.contextmanager
def job_session(
    master: str | None = None, app_name: str = "hedgerow", *, log_file: str | Path | None = None
) -> Iterator[object]:
    """A Spark session for one job, stopped afterwards unless it already existed.

    For commands that run one job and exit (``hedgerow ingest ...``): a session
    of the caller (a test's, or ``spark-submit``'s) is reused and left running.
    """
    from pyspark.sql import SparkSession

    existed = SparkSession.getActiveSession() is not None and master is None
    if not existed:
        preflight(master)
    spark = get_spark(master, app_name=app_name, log_file=log_file)
    try:
        yield spark
    finally:
        if not existed:
            spark.stop()
